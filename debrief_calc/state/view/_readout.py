"""The live view's readout: range and bearing from the primary to each selected track at the view's
time, as the tote gives them.

One computation: the rows are the ``tote`` analysis tool's own (:mod:`debrief_calc.analysis.tote`,
run through the executor as ``run_tool`` runs it: positions interpolated along the geodesic between
fixes, range on the ellipsoid), so the view shows the numbers a model reads from ``run_tool(tool=
"tote")`` at the same instant, not a second geodesy in JavaScript. The primary is the one asked
(the view lets the person choose) or the plot's first track, as the tote takes it from a plot.
Each row carries the tote's line (primary to secondary) to draw, and the pair's passes are
``closest-approach``'s own (every pass, the CPA among them), labelled here once, kept per revision.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from debrief_calc.tracks._feature_parts import feature_kind, properties_of

__all__ = ["readout"]

#: selected tracks read out at most (the view lists them under each other)
MAX_ROWS: Final = 6
#: the tote's fields the view shows (and their sides)
_FIELDS: Final = (
    "range",
    "bearing",
    "relative_bearing",
    "relative_bearing_side",
    "bearing_rate",
    "bearing_rate_side",
    "range_rate",
)


#: the passes of the pairs last read out: (revision, primary id, secondary id) -> marks
_PASSES: OrderedDict[tuple[str, str, str], list[dict[str, Any]]] = OrderedDict()
_PASSES_KEPT: Final = 32
_PASSES_LOCK = threading.Lock()


def _passes(revision: str, own: Mapping[str, Any], other: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every pass of ``other`` by ``own`` as ``closest-approach`` finds it: ``{time, range,
    position (the secondary's), is_cpa, label}``, e.g. label ``"CPA COLLINGWOOD 120 yd 121045Z"``."""
    from debrief_calc.analysis import default_registry, executor
    from debrief_calc.tracks.times import dtg, parse_iso

    key = (revision, str(own.get("id")), str(other.get("id")))
    with _PASSES_LOCK:
        if key in _PASSES:
            _PASSES.move_to_end(key)
            return _PASSES[key]
    run = executor.run(default_registry(), "closest-approach", [own, other], {"distance_unit": "yd"})
    marks = []
    if run.success and run.error is None and run.features:
        for p in run.features[0]["properties"].get("passes") or []:
            kind = "CPA" if p.get("is_cpa") else "pass"
            marks.append(
                {
                    "time": p["time"],
                    "range": p["range"],
                    "position": p["second_position"],
                    "is_cpa": bool(p.get("is_cpa")),
                    "label": f"{kind} {_name(other)} {p['range']:,.0f} yd {dtg(parse_iso(p['time']))}",
                }
            )
    with _PASSES_LOCK:
        _PASSES[key] = marks
        while len(_PASSES) > _PASSES_KEPT:
            _PASSES.popitem(last=False)
    return marks


def _name(feature: Mapping[str, Any]) -> str:
    props = properties_of(feature)
    return str(props.get("shortName") or props.get("name") or feature.get("id"))


def readout(
    features: Sequence[Any], selection: Sequence[str], at: float, primary: str | None = None, revision: str = ""
) -> dict[str, Any]:
    """The tote from the primary (``primary``'s id, else the plot's first track) to each selected
    track at ``at`` (epoch seconds): ``{time, primary: {id, name}, unit, rows: [{id, name, range,
    bearing, ..., line} | {id, name, note}], passes}``, a ``note`` when there is nothing to read out
    (no other track selected) and ``error`` when the tote cannot be read then (the primary has no
    data at it). ``passes``: every pass of each selected track by the primary (``revision`` keys
    them, so that a slider's readouts compute them once)."""
    from debrief_calc.analysis import default_registry, executor
    from debrief_calc.tracks.times import iso, parse_iso

    tracks = [f for f in features if isinstance(f, Mapping) and feature_kind(f) == "track"]
    out: dict[str, Any] = {"time": iso(at), "unit": "yd"}
    if not tracks:
        return {**out, "note": "the plot has no track"}
    by_id = {str(f.get("id")): f for f in tracks}
    if primary is not None and primary not in by_id:
        return {**out, "error": f"tote_primary {primary!r} is not a track of the plot: {', '.join(list(by_id)[:20])}"}
    own = by_id[primary] if primary is not None else tracks[0]
    out["primary"] = {"id": str(own.get("id")), "name": _name(own)}
    chosen = [by_id[i] for i in dict.fromkeys(map(str, selection)) if i in by_id and by_id[i] is not own]
    if not chosen:
        return {
            **out,
            "rows": [],
            "note": f"no track chosen: click one to read its range and bearing from {_name(own)}",
        }
    passes = [mark for f in chosen[:MAX_ROWS] for mark in _passes(revision, own, f)]
    run = executor.run(
        default_registry(), "tote", [own, *chosen[:MAX_ROWS]], {"time": iso(at), "primary": str(own.get("id"))}
    )
    if not run.success or run.error is not None:
        error = run.error or {}
        spans = (error.get("details") or {}).get("spans") or {}
        own_span = spans.get(str(own.get("id")))
        if (
            isinstance(own_span, list)
            and len(own_span) == 2
            and not parse_iso(own_span[0]) <= at <= parse_iso(own_span[1])
        ):
            return {
                **out,
                "rows": [],
                "passes": passes,
                "error": f"{_name(own)} has data from {own_span[0]} to {own_span[1]} only",
            }
        if spans:  # inside the primary's track, outside every other's
            return {**out, "rows": [], "passes": passes, "error": f"no track chosen has data at {iso(at)}"}
        return {**out, "rows": [], "passes": passes, "error": str(error.get("message"))}
    rows = []
    for f, result in zip(chosen, run.features, strict=False):
        props = result["properties"]
        row: dict[str, Any] = {"id": str(f.get("id")), "name": _name(f)}
        if "range" in props:
            row.update({k: props.get(k) for k in _FIELDS})
            row["line"] = (result.get("geometry") or {}).get("coordinates")
        else:
            row["note"] = props.get("note")
        rows.append(row)
    out["rows"] = rows
    out["passes"] = passes
    if len(chosen) > MAX_ROWS:
        out["more"] = len(chosen) - MAX_ROWS
    return out
