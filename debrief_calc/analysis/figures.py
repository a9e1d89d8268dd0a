"""A result feature as a bounded text of its figures, for the narration prompts.

A narrating model needs the figures of a result (distance, speeds, CPA range and time …), not
its raw arrays: a resampled track or per-leg segments would fill the prompt with numbers and
be cut off mid-array. So properties are summarised recursively: scalars as they are (long
strings shortened); a list of numbers as its count, min, max and mean (and first and last
when it is ordered); a list of times as its count and span; a list of positions as its count
and extent; a list of objects (CPA pairs, transits, speed periods, legs) as its first few
entries, each summarised the same way, and "… and N more". A series (an object of columns of
equal length, such as range-bearing's ``series``) is a table of every row while it is short;
a long one is summarised column by column, and the text says so and how many rows it left
out. Scalars come before nested figures, so when the text must be shortened to its budget it
is the detail that goes, whole lines at a time, never the key figures and never half an array.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from debrief_calc.errors import ValidationFailed
from debrief_calc.tracks.features import feature_bounds, parse_times
from debrief_calc.tracks.paging import point_count
from debrief_calc.tracks.times import Window

__all__ = ["elided", "result_text", "rows_in_window", "summarise"]

_SHORT_LIST: Final = 8  # lists of numbers up to this long are shown as they are
#: (entries of a list of objects, characters of a string, rows of a series table) at each level of detail
_DETAIL: Final = ((3, 200, 120), (2, 100, 60), (1, 60, 24))


def _num(x: float) -> str:
    if isinstance(x, int) or not math.isfinite(x):
        return str(x)
    return f"{x:.6g}" if abs(x) >= 1e-4 or x == 0 else f"{x:.3g}"


def _scalar(value: Any, strlen: int) -> str:
    if isinstance(value, str):
        return json.dumps(value if len(value) <= strlen else value[:strlen] + "…", ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return json.dumps(value)  # a figure as the tool gave it, to its last decimal
    return json.dumps(value, ensure_ascii=False, default=str)[:strlen]


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _numbers(values: Sequence[Any]) -> str:
    nums = [float(v) for v in values if _is_number(v) and math.isfinite(v)]
    nulls = len(values) - len(nums)
    if not nums:
        return f"{len(values)} values, none a finite number"
    text = f"{len(values)} numbers: min {_num(min(nums))}, max {_num(max(nums))}, mean {_num(sum(nums) / len(nums))}"
    pairs = list(itertools.pairwise(nums))
    if all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs):
        text += f", first {_num(nums[0])}, last {_num(nums[-1])}"
    return text + (f", {nulls} missing" if nulls else "")


def _strings(values: Sequence[str], entries: int, strlen: int) -> str:
    try:
        times = parse_times(list(values))
    except ValidationFailed:
        times = None
    if times is not None and len(values) > 2:
        return f"{len(values)} times from {values[0]} to {values[-1]}"
    shown = ", ".join(_scalar(v, strlen) for v in values[: max(entries, 2)])
    more = len(values) - max(entries, 2)
    return f"[{shown}{f', … and {more} more' if more > 0 else ''}]"


def _positions(values: Sequence[Sequence[Any]]) -> str:
    lon = [float(p[0]) for p in values]
    lat = [float(p[1]) for p in values]
    return (
        f"{len(values)} positions: lon {_num(min(lon))} to {_num(max(lon))}, lat {_num(min(lat))} to {_num(max(lat))}"
    )


def _list_line(values: list[Any], entries: int, strlen: int) -> str | None:
    """A one-line summary of a list, or None for a list of objects (summarised entry by entry)."""
    if not values:
        return "[]"
    if all(_is_number(v) or v is None for v in values):
        if len(values) <= _SHORT_LIST:
            return "[" + ", ".join(_scalar(v, strlen) for v in values) + "]"
        return _numbers(values)
    if all(isinstance(v, str) for v in values):
        return _strings(values, entries, strlen)
    if all(isinstance(v, list) and len(v) >= 2 and all(_is_number(x) for x in v[:4]) for v in values):
        if len(values) <= 2:
            return "[" + ", ".join(_list_line(v, entries, strlen) or "" for v in values) + "]"
        return _positions(values)
    if all(isinstance(v, Mapping) for v in values):
        return None
    first = _list_line(values[0], entries, strlen) if isinstance(values[0], list) else _scalar(values[0], strlen)
    return f"{len(values)} items, the first {first}"


def _series_rows(value: Mapping[str, Any]) -> int | None:
    """The row count of a series (two or more columns, lists of one length), else None."""
    if len(value) < 2 or not all(isinstance(v, list) for v in value.values()):
        return None
    lengths = {len(v) for v in value.values()}
    return lengths.pop() if len(lengths) == 1 and 0 not in lengths else None


def _cell(v: Any) -> str:
    if _is_number(v):
        return json.dumps(v)  # a figure as the tool gave it
    return "" if v is None else str(v) if isinstance(v, str) else json.dumps(v, default=str)[:40]


def _table(value: Mapping[str, Any], key: str, pad: str, n: int) -> list[str]:
    names = list(value)
    lines = [f"{pad}{key}: a table of all {n} rows", f"{pad}  | " + " | ".join(names) + " |"]
    lines.append(f"{pad}  |" + "---|" * len(names))
    columns = [value[k] for k in names]
    lines += [f"{pad}  | " + " | ".join(_cell(c[i]) for c in columns) + " |" for i in range(n)]
    return lines


def summarise(
    value: Any, key: str, indent: int = 0, *, entries: int = 3, strlen: int = 200, rows: int = 120
) -> list[str]:
    """Lines ``key: summary`` for ``value`` and, for objects, its members below it, indented; a
    series of at most ``rows`` rows is a table of them all."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        if not value:
            return [f"{pad}{key}: {{}}"]
        n = _series_rows(value)
        if n is not None and n <= rows:
            return _table(value, key, pad, n)
        if n is not None:
            head = (
                f"{pad}{key}: a series of {n} rows, too long to list here: each column summarised below "
                f"(all {n} rows left out: get_result with this result's id reads every row)"
            )
            return [
                head,
                *(f"{pad}  {k}: {_list_line(v, entries, strlen) or f'{n} objects'}" for k, v in value.items()),
            ]
        lines = [f"{pad}{key}:"] if key else []
        inner = indent + 1 if key else indent
        flat = [(k, v) for k, v in value.items() if not isinstance(v, Mapping | list)]
        nested = [(k, v) for k, v in value.items() if isinstance(v, Mapping | list)]
        for k, v in flat:
            lines.append(f"{'  ' * inner}{k}: {_scalar(v, strlen)}")
        for k, v in nested:
            lines += summarise(v, str(k), inner, entries=entries, strlen=strlen, rows=rows)
        return lines
    if isinstance(value, list):
        line = _list_line(value, entries, strlen)
        if line is not None:
            return [f"{pad}{key}: {line}"]
        shown = min(entries, len(value))
        lines = [f"{pad}{key}: {len(value)} entries" + (f", the first {shown}:" if shown < len(value) else ":")]
        for i, item in enumerate(value[:shown]):
            lines += summarise(item, f"[{i}]", indent + 1, entries=entries, strlen=strlen, rows=rows)
        if len(value) > shown:
            lines.append(f"{pad}  … and {len(value) - shown} more")
        return lines
    return [f"{pad}{key}: {_scalar(value, strlen)}"]


def _geometry(feature: Mapping[str, Any]) -> str:
    geom = feature.get("geometry")
    if not isinstance(geom, Mapping):
        return "none"
    gtype = geom.get("type")
    if gtype == "Point":
        return f"Point {_list_line(list(geom.get('coordinates') or []), 1, 60)}"
    n = point_count(feature)
    bounds = feature_bounds(feature)
    extent = f", bounds [{', '.join(_num(b) for b in bounds)}] (w, s, e, n)" if bounds else ""
    return f"{gtype} of {n} position{'s' if n != 1 else ''}{extent}"


def _render(feature: Mapping[str, Any], entries: int, strlen: int, rows: int) -> list[str]:
    props = dict(feature.get("properties") or {})
    prov = props.pop("provenance", None)
    prov = prov if isinstance(prov, Mapping) else {}
    sources = ", ".join(f"{s.get('kind')} {s.get('id')}" for s in prov.get("sources", []) if isinstance(s, Mapping))
    params = prov.get("parameters")
    param_text = ", ".join(f"{k}={_scalar(v, 60)}" for k, v in (params.items() if isinstance(params, Mapping) else []))
    lines = [
        f"### Result {feature.get('id')} — tool {prov.get('tool')} v{prov.get('version')} at {prov.get('timestamp')}",
        f"Sources: {sources or 'none'}",
        f"Parameters: {param_text or 'none'}",
    ]
    window = prov.get("window")
    if isinstance(window, Mapping) and window.get("source") in ("asked", "plot"):
        shown = " to ".join(str(window.get(k) or "open") for k in ("start", "end"))
        whose = "the plot's saved window" if window["source"] == "plot" else "the window"
        lines.append(f"Computed over {whose} {shown} (its inputs were cut to it)")
    elif isinstance(window, Mapping) and window.get("source") == "data":
        shown = " to ".join(str(window.get(k) or "open") for k in ("start", "end"))
        lines.append(f"Computed over the whole data ({shown})")
    lines += [f"Geometry: {_geometry(feature)}", "Figures:"]
    return lines + summarise(props, "", 1, entries=entries, strlen=strlen, rows=rows)


def result_text(feature: Mapping[str, Any], limit: int) -> str:
    """The result's provenance and figures in at most ``limit`` characters."""
    lines: list[str] = []
    for entries, strlen, rows in _DETAIL:
        lines = _render(feature, entries, strlen, rows)
        text = "\n".join(lines)
        if len(text) <= limit:
            return text
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > limit - 60:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join([*kept, f"… ({len(lines) - len(kept)} more lines of figures left out)"])


def elided(value: Any, *, longest: int = _SHORT_LIST) -> Any:
    """``value`` with every list longer than ``longest`` replaced by a note of its length (and
    long strings shortened): the scalar figures of a result, small enough for an answer."""
    if isinstance(value, Mapping):
        return {k: elided(v, longest=longest) for k, v in value.items() if k != "provenance"}
    if isinstance(value, list):
        if len(value) > longest:
            return f"{len(value)} items: read them with get_result"
        return [elided(v, longest=longest) for v in value]
    if isinstance(value, str) and len(value) > 200:
        return value[:200] + "…"
    return value


def rows_in_window(value: Any, window: Window) -> tuple[Any, int]:
    """``value`` with the rows of every series that has a ``time`` column (ISO-8601) kept only
    within the window (:meth:`Window.mask`), and how many rows that left out; other figures as they are."""
    if isinstance(value, Mapping):
        n = _series_rows(value)
        times = value.get("time")
        if n is not None and isinstance(times, list) and all(isinstance(t, str) for t in times):
            try:
                t = parse_times(times)
            except ValidationFailed:
                return value, 0
            keep = window.mask(t).nonzero()[0].tolist()
            return {k: [v[i] for i in keep] for k, v in value.items()}, n - len(keep)
        out: dict[str, Any] = {}
        left = 0
        for k, v in value.items():
            out[k], cut = rows_in_window(v, window)
            left += cut
        return out, left
    return value, 0
