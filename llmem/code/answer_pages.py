"""Pages of an answer made of ordered items: what ``find_references`` and ``check_references`` share.

A page holds at most ``limit`` items and stops before the answer would pass its character cap
(the first item always goes in). The cursor names the last item answered by its place in the
order (not by a count), so a file changed between pages shifts nothing before it; it is tied to
the question by a tag, and a cursor of another question is refused naming the field.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from llmem.core.errors import InvalidArgument

__all__ = ["cursor_after", "fill_page", "question_tag", "start_after"]

Order = tuple[Any, ...]


def question_tag(*parts: object) -> str:
    return hashlib.blake2b("\0".join(str(p) for p in parts).encode(), digest_size=6).hexdigest()


def cursor_after(tag: str, after: Order) -> str:
    return base64.urlsafe_b64encode(json.dumps({"q": tag, "after": list(after)}).encode()).decode()


def start_after(cursor: str, tag: str, orders: Sequence[Order], same: str) -> int:
    """Where the page after ``cursor`` starts in ``orders`` (the items' places, sorted); ``same``
    says what the next call must repeat (``"symbol, path, kind and tests"``)."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        after = tuple(value["after"])
        ok = value["q"] == tag and (not orders or len(after) == len(orders[0]))
        if ok and orders:
            after = tuple(type(o)(a) for o, a in zip(orders[0], after, strict=True))
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise InvalidArgument(
            f"cursor is not one this question issued; pass next_cursor unchanged with the same {same}",
            details={"field": "cursor", "rule": "opaque cursor of the same question"},
        )
    return bisect.bisect_right(list(orders), after)


def fill_page(
    total: int, start: int, limit: int, room: int, item_at: Callable[[int], dict[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    """The items from ``start`` while ``limit`` and ``room`` (characters of JSON) allow; and where
    the next page starts."""
    results: list[dict[str, Any]] = []
    pos = start
    while pos < total and len(results) < limit:
        item = item_at(pos)
        size = len(json.dumps(item, ensure_ascii=False)) + 2
        if results and size > room:
            break
        room -= size
        results.append(item)
        pos += 1
    return results, pos
