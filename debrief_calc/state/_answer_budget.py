"""Answers that fit a character budget: compact JSON, the longest prefix of a list that fits, and
display items with their images split off."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["Answer", "compact_json", "fit_prefix", "split_display"]

Answer = dict[str, Any]
_SEP = (",", ":")


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_SEP)


def fit_prefix(items: list[Any], budget: int) -> tuple[list[Any], bool]:
    """The longest prefix of ``items`` whose JSON fits in ``budget`` characters."""
    used = 0
    for i, item in enumerate(items):
        used += len(compact_json(item)) + 1
        if used > budget:
            return items[:i], True
    return items, False


def split_display(display: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Display items for the answer, within ``budget``; images go out as image content."""
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    used = 0
    for given in display:
        item = given
        if item.get("type") == "image":
            images.append({"mediaType": item["mediaType"], "data": item["data"]})
            item = {k: v for k, v in item.items() if k != "data"} | {"image": len(images) - 1}
        text = compact_json(item)
        if used + len(text) > budget:
            item = {"type": item.get("type"), "truncated": True, "chars": len(text), "preview": text[:300]}
            text = compact_json(item)
        out.append(item)
        used += len(text)
    return out, images
