"""The live view's data for sensors, target solutions' ellipses and hidden features.

A sensor goes as its cuts (at most its share of the view's point budget, a cut weighing what it
sends: those drawn at the plot's time, and of the rest every n-th by number and the newest,
:func:`debrief_calc.plots.render._cuts.thin`), each with its time and the lines the picture draws
(:func:`~debrief_calc.plots.render._cuts.cut_lines`: to its range, else to the plot's no-range
length); the page decides which are active at its time (from their time for
``recent`` seconds, the narrative entries' rule) and thins those to ``limit``, as the picture does.
A feature with ``visible: false`` goes as its id, name, colour and kind only, for the legend to
offer it again."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.plots.render._common import Item, css_colour, hex_colour
from debrief_calc.plots.render._cuts import (
    MAX_CUTS,
    SensorCuts,
    active_cuts,
    cut_lines,
    drawable,
    line_points,
    solution_ellipses,
    thin,
)
from debrief_calc.plots.render._items import RECENT
from debrief_calc.tracks.features import feature_kind

__all__ = ["cuts_weight", "ellipses_data", "hidden_data", "sensor_data"]

#: numbers sent for a track point (lon, lat, t): the unit of the view's point budget
_POINT_VALUES = 3
#: numbers sent for a cut besides its lines' points (n, t, b, ab, r)
_CUT_VALUES = 5

_YARD_M = METRES_PER_UNIT["yd"]


def _flat(line: Any) -> list[float] | None:
    """``[lon0, lat0, lon1, lat1, …]`` to 6 decimals (about 0.1 m), None for no line."""
    if not line.size:
        return None
    return [round(v, 6) for v in line.ravel().tolist()]


def cuts_weight(cuts: SensorCuts, numbers: Any, no_range_m: float) -> float:
    """What the cuts ``numbers`` weigh in the view's point budget: the numbers sent for them (two
    a line point, :func:`~debrief_calc.plots.render._cuts.line_points`) in track points' worth,
    so that a budget keeps the answer's size whether it goes to tracks or to cuts."""
    sent = _CUT_VALUES * int(numbers.size) + 2 * int(line_points(cuts, numbers, no_range_m).sum())
    return sent / _POINT_VALUES


def sensor_data(cuts: SensorCuts, budget: float, no_range_m: float, current: float | None) -> dict[str, Any]:
    """A sensor as the view draws it, cuts of at most ``budget`` track points' weight
    (:func:`cuts_weight`, on average): those the picture draws at the plot's
    time ``current`` (:func:`~debrief_calc.plots.render._cuts.active_cuts` thinned), so that the view
    is the picture there, and of the others every n-th and the newest (``every``). Per cut: ``n``
    (its number), ``t`` (epoch s, null when unreadable), ``line``/``amb`` (flat lon/lat polylines
    from its origin, null where that bearing is missing), ``b``/``ab`` (bearings), ``r`` (range, yd,
    null for none) and, when some differ from the sensor's, ``colors``. Also ``cuts_total``,
    ``cuts_usable`` (with a line to draw), ``cuts_shown`` (sent), ``now`` ({t, active, every}: the
    cuts active at ``current``, before thinning), ``recent`` and ``limit`` (the page's rule) and
    ``no_range_yd``."""
    usable = drawable(cuts)
    weight = cuts_weight(cuts, usable, no_range_m)
    fit = int(usable.size) if weight <= budget else math.floor(budget * usable.size / weight)
    now: dict[str, Any] | None = None
    rest = usable
    drawn_now = usable[:0]
    if current is not None:
        active = active_cuts(cuts, current)
        drawn_now, every_now = thin(active)
        now = {"t": current, "active": int(active.size), "every": every_now}
        rest = np.setdiff1d(usable, active, assume_unique=True)
    others, every = thin(rest, max(2, fit - int(drawn_now.size)))
    numbers = np.union1d(drawn_now, others).astype(np.int64)
    lines = cut_lines(cuts, numbers, no_range_m)
    mirrored = cut_lines(cuts, numbers, no_range_m, ambiguous=True)
    props = cuts.item.feature.get("properties") or {}

    def values(array: Any, digits: int, scale: float = 1.0) -> list[float | None]:
        return [round(v * scale, digits) if math.isfinite(v) else None for v in array[numbers].tolist()]

    out: dict[str, Any] = {
        "kind": "sensor",
        "host": props.get("host") if isinstance(props.get("host"), str) else None,
        "hostName": props.get("hostName") if isinstance(props.get("hostName"), str) else None,
        "n": numbers.tolist(),
        "t": values(cuts.t, 3),
        "line": [_flat(x) for x in lines],
        "amb": [_flat(x) for x in mirrored],
        "b": values(cuts.bearing, 1),
        "ab": values(cuts.ambiguous, 1),
        "r": values(cuts.range_m, 0, 1 / _YARD_M),
        "cuts_total": len(cuts),
        "cuts_usable": int(usable.size),
        "cuts_shown": int(numbers.size),
        "every": every,
        "now": now,
        "recent": RECENT,
        "limit": MAX_CUTS,
        "no_range_yd": round(no_range_m / _YARD_M),
    }
    colours = [cuts.colour(i) for i in numbers.tolist()]
    if any(c != cuts.item.colour for c in colours):
        out["colors"] = [hex_colour(c) for c in colours]
    return out


def ellipses_data(item: Item) -> list[dict[str, Any]] | None:
    """A target solution's ellipses (:func:`~debrief_calc.plots.render._cuts.solution_ellipses`):
    ``[{t, ring: [[lon, lat], …]}]``, None for a track with none."""
    ellipses, _ = solution_ellipses(item)
    if not ellipses:
        return None
    return [
        {
            "t": round(e.t, 3) if math.isfinite(e.t) else None,
            "ring": [[round(x, 6), round(y, 6)] for x, y in e.ring.tolist()],
        }
        for e in ellipses
    ]


def hidden_data(features: Iterable[Any]) -> list[dict[str, Any]]:
    """The features hidden by ``visible: false`` (not backdrops or metadata): id, name, colour and
    the kind they would be drawn as (``of``), under ``kind`` ``hidden``."""
    out: list[dict[str, Any]] = []
    for n, f in enumerate(features):
        props = f.get("properties") if isinstance(f, dict) else None
        if not isinstance(props, dict) or props.get("visible") is not False:
            continue
        kind = feature_kind(f)
        if kind in ("backdrop", "metadata"):
            continue
        name = props.get("shortName") or props.get("name") or props.get("text")
        colour = next((c for c in (css_colour(props.get(k)) for k in ("stroke", "marker_color", "color")) if c), None)
        out.append(
            {
                "id": str(f.get("id")) if f.get("id") is not None else f"#{n}",
                "name": name if isinstance(name, str) else None,
                "color": hex_colour(colour) if colour else "#808080",
                "kind": "hidden",
                "of": kind,
            }
        )
    return out
