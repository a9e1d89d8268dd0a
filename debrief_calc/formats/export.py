"""Range-bearing results as the table legacy Debrief copied to the clipboard for a report: one row
per sample of a secondary against the primary, columns Time, Depth, Speed, Course (the
secondary's), Range (yd), Bearing and Brg Rate, as CSV, TSV or Markdown text."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks._feature_parts import properties_of

__all__ = ["FORMATS", "HEADERS", "UNITS", "series_table"]

FORMATS: Final = ("csv", "tsv", "markdown")
HEADERS: Final = ("Time", "Depth", "Speed", "Course", "Range (yd)", "Bearing", "Brg Rate")
UNITS: Final = (
    "Depth m, Speed kn and Course deg T are the secondary's; Range yd and Bearing deg T from the primary; "
    "Brg Rate deg/min, positive drawing right; a blank cell has no value"
)


def _cell(decimals: int, scale: float = 1.0) -> Callable[[object], str]:
    def show(value: object) -> str:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return ""
        return f"{value * scale:.{decimals}f}"

    return show


def _rows(props: Mapping[str, Any]) -> list[list[str]]:
    series = props["series"]
    yards = METRES_PER_UNIT[str(props.get("distance_unit") or "nm")] / METRES_PER_UNIT["yd"]
    columns = (
        ("secondary_depth", _cell(1)),
        ("secondary_speed", _cell(2)),
        ("secondary_course", _cell(1)),
        ("range", _cell(1, yards)),
        ("bearing", _cell(1)),
        ("bearing_rate", _cell(2)),
    )
    n = len(series["time"])
    cells = [[show(v) for v in (series.get(name) or [None] * n)] for name, show in columns]
    return [[str(series["time"][i]), *(c[i] for c in cells)] for i in range(n)]


def _is_table(feature: object) -> bool:
    series = properties_of(feature).get("series") if isinstance(feature, Mapping) else None
    return isinstance(series, Mapping) and all(k in series for k in ("time", "range", "bearing", "bearing_rate"))


def series_table(features: Sequence[Any], fmt: str, where: str) -> str:
    """The table of the range-bearing results among ``features`` (read from ``where``) as text in
    ``fmt``; CSV and TSV take one result (a Markdown text heads each with its name).
    ValidationFailed naming ``format`` when there is none, or several for CSV/TSV."""
    if fmt not in FORMATS:
        raise ValidationFailed(
            f"format {str(fmt)[:30]!r} is not one of {', '.join(FORMATS)}",
            details={"field": "format", "rule": "choices", "allowed": list(FORMATS)},
        )
    found = [f for f in features if _is_table(f)]
    if not found:
        raise ValidationFailed(
            f"format applies to range-bearing results (a series of range, bearing and bearing rate); {where} holds "
            "none: run range-bearing and pass its ref",
            details={"field": "format", "rule": "applies-to"},
        )
    if fmt != "markdown" and len(found) > 1:
        refs = [f"debrief-calc:results/{f.get('id')}" for f in found[:10]]
        raise ValidationFailed(
            f"format {fmt!r} makes one table: {where} holds {len(found)} range-bearing results (one per "
            f"secondary); pass one of their refs ({', '.join(refs)}) or format 'markdown' for all",
            details={"field": "format", "rule": "one-result", "refs": refs},
        )
    if fmt == "markdown":
        parts = []
        for f in found:
            lines = [f"**{properties_of(f).get('name') or f.get('id')}**", "", "| " + " | ".join(HEADERS) + " |"]
            lines.append("|" + "---|" * len(HEADERS))
            lines += ["| " + " | ".join(row) + " |" for row in _rows(properties_of(f))]
            parts.append("\n".join(lines) + "\n")
        return "\n".join(parts)
    out = io.StringIO()
    writer = csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow(HEADERS)
    writer.writerows(_rows(properties_of(found[0])))
    return out.getvalue()
