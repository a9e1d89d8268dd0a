"""Items and the stock that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

MAX_QUANTITY = 10_000


class Category(Enum):
    """What kind of thing an item is."""

    TOOL = "tool"
    PART = "part"


@dataclass(frozen=True)
class Item:
    """A thing that can be stocked."""

    sku: str
    name: str
    category: Category = Category.PART

    def label(self) -> str:
        """The text printed on the shelf label."""
        return f"{self.sku} {self.name}"


@dataclass
class Stock:
    """Quantities of items held in one place."""

    quantities: dict[str, int] = field(default_factory=dict)

    def add(self, item: Item, count: int = 1) -> int:
        """Add ``count`` of ``item``; return the new quantity."""
        if count <= 0:
            raise ValueError("count must be positive")
        new = min(self.quantities.get(item.sku, 0) + count, MAX_QUANTITY)
        self.quantities[item.sku] = new
        return new

    def remove(self, item: Item, count: int = 1) -> int:
        """Remove ``count`` of ``item``; refuse to go below zero."""
        have = self.quantities.get(item.sku, 0)
        if count > have:
            raise ValueError(f"only {have} of {item.sku} in stock")
        self.quantities[item.sku] = have - count
        return have - count
