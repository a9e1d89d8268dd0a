"""Stored results read back in pages: what ``get_result`` answers, without MCP.

Any reference the calc server hands out (:mod:`debrief_calc.plots.plotstate` lists the forms) or a
bare result id is read here. Features come in pages within the answer budget, a feature too
big for one answer in parts of its points (:mod:`debrief_calc.tracks.paging`); a narrative or summary
comes as text, and a stored command payload that is not features as its JSON text, in slices
when it is long. Cursors are opaque to the caller: URL-safe base64
of ``{"r": ref, "f": feature, "p": point}`` (or ``"c"``: a character offset of a text), tied to
the reference they were made for.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any, Final

from debrief_calc.analysis.registry import normalise_kind
from debrief_calc.errors import ValidationFailed
from debrief_calc.plots import plotstate
from debrief_calc.tracks import paging
from debrief_calc.tracks._feature_parts import KINDS, feature_kind
from llmem.core.store import ArtifactStore

__all__ = ["PAGE_LIMIT", "decode_cursor", "encode_cursor", "read_stored"]

#: most items (features or parts) one page holds
PAGE_LIMIT: Final = 500

_PARTS_NOTE: Final = (
    "A feature too big for one answer comes in parts, each with part: {points: [a, b], of: N}: "
    "concatenate the parts' coordinates and the properties named in part.arrays, in order, to get it whole."
)
_NESTED_NOTE: Final = " In a nested geometry, part.first is the line or ring ([polygon, ring]) point a lies in."
_ITEMS_NOTE: Final = (
    "A feature too big for one answer comes in parts, each with part: {items: [a, b], of: N, at: path}: "
    "concatenate the lists at part.at, in order, to get it whole (with part.arrays: each list so named in "
    "the object at part.at)."
)


def encode_cursor(ref: str, position: dict[str, int]) -> str:
    raw = json.dumps({"r": ref, **position}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, ref: str, keys: tuple[str, ...]) -> dict[str, int]:
    """The position a cursor of ``ref`` holds; ValidationFailed when it is not one we made."""

    def bad(why: str) -> ValidationFailed:
        return ValidationFailed(
            f"cursor {cursor[:60]!r} {why}: pass next_cursor from the previous get_result answer unchanged, "
            "with the same ref, or leave cursor out to start from the first page",
            details={"field": "cursor", "rule": "format"},
        )

    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, ValueError, UnicodeError):
        raise bad("is not a get_result cursor") from None
    if not isinstance(value, dict) or not isinstance(value.get("r"), str):
        raise bad("is not a get_result cursor")
    if value["r"] != ref:
        raise bad(f"belongs to {value['r'][:100]!r}, not {ref!r}")
    position = {k: value.get(k) for k in keys}
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in position.values()):
        raise bad("is not a get_result cursor")
    return position  # type: ignore[return-value]


def _wanted_kinds(kinds: Sequence[object] | None) -> list[str] | None:
    """The kinds a ``kinds`` filter names (spelt as :func:`feature_kind` spells them), or None
    for no filter; ValidationFailed naming the kinds there are."""
    if not kinds:
        return None
    wanted: list[str] = []
    for value in kinds:
        kind = normalise_kind(value) if isinstance(value, str) else None
        if kind not in KINDS:
            raise ValidationFailed(
                f"kinds: {value!r} is not a feature kind; kinds are {', '.join(KINDS)} "
                "(narratives and labels are annotation)",
                details={"field": "kinds", "rule": "choices", "allowed": list(KINDS)},
            )
        if kind not in wanted:
            wanted.append(kind)
    return wanted


def read_stored(
    store: ArtifactStore,
    ref: str,
    cursor: str | None,
    *,
    budget: int,
    kinds: Sequence[object] | None = None,
    fmt: str | None = None,
) -> dict[str, Any]:
    """One page of what ``ref`` names: ``{success, ref, kind, total, features | text, next_cursor}``.

    ``kinds`` keeps only the features of those kinds (``total`` counts those); a cursor made
    with a filter goes on with the same filter only. A text is not filtered (a note says so).
    ``fmt`` (csv, tsv, markdown): the range-bearing results as legacy Debrief's table, in text
    pages cut between rows (:mod:`debrief_calc.formats.export`)."""
    parsed = plotstate.parse_ref(ref, field="ref")
    wanted = _wanted_kinds(kinds)
    if fmt is not None:
        return _table_page(store, parsed, cursor, budget, fmt)
    ignored = f"kinds ignored: {parsed.text} holds text, not features"
    if parsed.holds_text:
        page = _text_page(parsed, plotstate.load_ref(store, parsed, shared=True), cursor, budget)
        return page | ({"note": ignored} if wanted else {})
    if parsed.kind == "payload":  # a stored command payload: features, or any JSON a command takes
        content = plotstate.load_ref(store, parsed, shared=True)
        found = plotstate.features_in(content)
        if found is None:
            page = _text_page(parsed, content, cursor, budget)
            return page | ({"note": ignored} if wanted else {})
    features = plotstate.stored_features(store, parsed, shared=True)
    tied = parsed.text  # what the cursors are tied to: the reference, and the filter if any
    found_kinds: dict[str, int] = {}
    if wanted is not None:
        tied += "?kinds=" + ",".join(wanted)
        for f in features:
            found_kinds[feature_kind(f)] = found_kinds.get(feature_kind(f), 0) + 1
        features = [f for f in features if feature_kind(f) in wanted]
    start = (0, 0)
    if cursor:
        pos = decode_cursor(cursor, tied, ("f", "p"))
        start = (pos["f"], pos["p"])
        if start[0] >= len(features):
            raise ValidationFailed(
                f"cursor points past the {len(features)} feature(s) of {parsed.text!r}: "
                "leave cursor out to start again from the first page",
                details={"field": "cursor", "rule": "range"},
            )
    items, following = paging.page_features(features, start, budget=budget, limit=PAGE_LIMIT)
    answer: dict[str, Any] = {
        "success": True,
        "ref": parsed.text,
        "kind": "features",
        "total": len(features),
        "features": items,
        "next_cursor": encode_cursor(tied, {"f": following[0], "p": following[1]}) if following else None,
    }
    if wanted is not None:
        answer["kinds"] = wanted
        if not features:
            there = ", ".join(f"{k} ({n})" for k, n in found_kinds.items()) or "none"
            answer["note"] = f"no feature of {parsed.text} is of kinds {', '.join(wanted)}; its kinds: {there}"
    markers = [f["part"] for f in items if isinstance(f.get("part"), dict)]
    if markers:
        nested = any("first" in m for m in markers)
        answer["note"] = _ITEMS_NOTE if "items" in markers[0] else _PARTS_NOTE + (_NESTED_NOTE if nested else "")
    if parsed.kind == "result":
        narrative = plotstate.text_ref(parsed.key, "narrative")
        if store.artifact_file(plotstate.CALC_NS, parsed.key, "narrative").is_file():
            answer["narrative"] = {"ref": narrative}
    return answer


def _table_page(store: ArtifactStore, ref: plotstate.Ref, cursor: str | None, budget: int, fmt: str) -> dict[str, Any]:
    from debrief_calc.formats.export import UNITS, series_table

    if ref.holds_text:
        raise ValidationFailed(
            f"format applies to stored results; {ref.text} holds text: leave format out to read it",
            details={"field": "format", "rule": "applies-to"},
        )
    text = series_table(plotstate.stored_features(store, ref, shared=True), fmt, ref.text)
    tied = f"{ref.text}?format={fmt}"
    start = decode_cursor(cursor, tied, ("c",))["c"] if cursor else 0
    if start > len(text):
        raise ValidationFailed(
            f"cursor points past the end of {ref.text!r}", details={"field": "cursor", "rule": "range"}
        )
    end = min(len(text), start + budget)
    while end > start and paging.compact_size(text[start:end]) > budget:
        end = start + (end - start) * 9 // 10
    if end < len(text) and (row_end := text.rfind("\n", start, end)) > start:
        end = row_end + 1  # a page ends at a row's end
    rows = text.count("\n", start, end)
    note = f"{UNITS}. This page: {rows} line(s) of {text.count(chr(10))}"
    if end < len(text):
        note += "; get_result with next_cursor (and the same format) gives the next lines: append them"
    return {
        "success": True,
        "ref": ref.text,
        "kind": "table",
        "format": fmt,
        "chars": len(text),
        "text": text[start:end],
        "note": note,
        "next_cursor": encode_cursor(tied, {"c": end}) if end < len(text) else None,
    }


def _text_page(ref: plotstate.Ref, content: Any, cursor: str | None, budget: int) -> dict[str, Any]:
    """A narrative, a summary, or a stored payload as compact JSON text, in slices."""
    is_text = isinstance(content, str)
    text = content if is_text else json.dumps(content, separators=(",", ":"), ensure_ascii=False)
    start = decode_cursor(cursor, ref.text, ("c",))["c"] if cursor else 0
    if start > len(text):
        raise ValidationFailed(
            f"cursor points past the end of {ref.text!r}", details={"field": "cursor", "rule": "range"}
        )
    end = min(len(text), start + budget)
    while end > start and paging.compact_size(text[start:end]) > budget:  # escapes take room
        end = start + (end - start) * 9 // 10
    following = end if end < len(text) else None
    return {
        "success": True,
        "ref": ref.text,
        "kind": ref.kind,
        "format": "markdown" if is_text else "json",
        "chars": len(text),
        "text": text[start:end],
        "next_cursor": encode_cursor(ref.text, {"c": following}) if following is not None else None,
    }
