"""A tiny inventory package used by the llmem walkthrough."""

from inventory.models import Item, Stock

__all__ = ["Item", "Stock"]
