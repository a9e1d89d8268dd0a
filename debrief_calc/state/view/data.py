"""The live view's data: a plot's drawable features, tracks thinned to a point budget. The tracks
come cut to the view's window (the plot's saved one, or the window a picture drew) by the service,
as :mod:`debrief_calc.tracks.times` cuts them for every path."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Final

from debrief_calc.plots.render._common import Item, hex_colour
from debrief_calc.plots.render._cuts import drawable, no_range_length, sensor_cuts
from debrief_calc.plots.render._items import read_items
from debrief_calc.state.view import DEFAULT_POINTS
from debrief_calc.state.view._cuts import cuts_weight, ellipses_data, hidden_data, sensor_data

__all__ = ["view_data"]

_MIN_PER_TRACK: Final = 200


def _round(values: Iterable[float], decimals: int) -> list[float]:
    return [round(v, decimals) for v in values]


def _thin(n: int, keep: int) -> list[int]:
    """``keep`` indices spread evenly over ``range(n)``, first and last included."""
    if n <= keep:
        return list(range(n))
    step = (n - 1) / (keep - 1)
    return sorted({round(i * step) for i in range(keep)})


def _budgets(sizes: Sequence[int], total: int) -> list[int]:
    whole = sum(sizes)
    if whole <= total:
        return list(sizes)
    return [min(n, max(_MIN_PER_TRACK, math.floor(total * n / whole))) for n in sizes]


def _bounds(features: list[dict[str, Any]]) -> list[float] | None:
    lons: list[float] = []
    lats: list[float] = []
    for f in features:
        lons += (
            f.get("lon", []) + [p[0] for ring in f.get("rings", []) for p in ring] + [p[0] for p in f.get("points", [])]
        )
        lats += (
            f.get("lat", []) + [p[1] for ring in f.get("rings", []) for p in ring] + [p[1] for p in f.get("points", [])]
        )
    if not lons:
        return None
    return [min(lons), min(lats), max(lons), max(lats)]


def _current(time_state: dict[str, Any] | None) -> float | None:
    """The plot's current time (epoch s), None when it has none or it cannot be read."""
    from debrief_calc.errors import ValidationFailed
    from debrief_calc.tracks.times import parse_iso

    current = (time_state or {}).get("current")
    try:
        return parse_iso(current) if isinstance(current, str) else None
    except ValidationFailed:
        return None


def _active(item: Item) -> list[float | None] | None:
    if item.active is None:
        return None
    start, end = item.active
    return [start if math.isfinite(start) else None, end if math.isfinite(end) else None]


def _track(item: Item, budget: int) -> dict[str, Any]:
    if item.track is not None and len(item.track) > 0:
        track = item.track
        keep = _thin(len(track), budget)
        lon, lat = track.lon[keep].tolist(), track.lat[keep].tolist()
        times: list[float] | None = _round(track.t[keep].tolist(), 3)
        total = len(track)
    else:  # no usable times: a plain line
        line = [p for part in item.lines for p in part]
        keep = _thin(len(line), budget)
        lon, lat = [line[i][0] for i in keep], [line[i][1] for i in keep]
        times, total = None, len(line)
    extent = math.hypot(max(lon) - min(lon), max(lat) - min(lat)) if lon else 0.0
    return {
        "lon": _round(lon, 6),
        "lat": _round(lat, 6),
        "t": times,
        "points_total": total,
        "points_shown": len(lon),
        "extent": round(extent, 6),
    }


def view_data(
    features: Sequence[Any],
    *,
    filename: str,
    revision: str,
    title: str,
    time_state: dict[str, Any] | None,
    viewport: Sequence[float] | None,
    selection: Sequence[str],
    max_points: int = DEFAULT_POINTS,
) -> dict[str, Any]:
    """What the view draws: each drawable feature with its kind (track, zone, point, narrative,
    sensor), name, colour and geometry, tracks thinned to ``max_points`` in all (each says
    ``points_total`` and ``points_shown``), zones and points with the period they are shown in
    (``active``: epoch seconds, ``null`` for open), narrative entries with their ship and time;
    sensors' cuts sharing the budget with the tracks and target solutions' ellipses
    (:mod:`._cuts`); then the features hidden by ``visible: false`` (kind ``hidden``)."""
    items = read_items(features, set(map(str, selection)), track_lines=False)
    tracks = [i for i in items if i.kind == "track"]
    sizes = [len(i.track) if i.track is not None else sum(len(p) for p in i.lines) for i in tracks]
    # sensors share the budget with the tracks, their cuts weighing what they send
    sensors = {id(i): sensor_cuts(i) for i in items if i.kind == "sensor"}
    no_range_m = no_range_length(items) if sensors else 0.0
    sizes += [math.ceil(cuts_weight(c, drawable(c), no_range_m)) for c in sensors.values()]
    shares = _budgets(sizes, max_points)
    budgets = dict(zip([id(i) for i in tracks] + list(sensors), shares, strict=True))
    current = _current(time_state)
    out: list[dict[str, Any]] = []
    for item in items:
        base: dict[str, Any] = {"id": item.id, "name": item.short or item.name, "color": hex_colour(item.colour)}
        if item.kind == "sensor":
            out.append({**base, **sensor_data(sensors[id(item)], budgets[id(item)], no_range_m, current)})
        elif item.kind == "track":
            drawn = {**base, "kind": "track", **_track(item, max(2, budgets[id(item)]))}
            if (ellipses := ellipses_data(item)) is not None:
                drawn["ellipses"] = ellipses
            out.append(drawn)
        elif item.ship is not None and item.at is not None:
            text = str((item.feature.get("properties") or {}).get("text") or item.name)
            out.append(
                {**base, "kind": "narrative", "ship": item.ship, "at": item.at, "text": text, "active": _active(item)}
            )
        elif item.rings:
            rings = [[[round(x, 6), round(y, 6)] for x, y in ring] for ring in item.rings]
            ring = item.rings[0]
            label = [round(min(p[0] for p in ring), 6), round(max(p[1] for p in ring), 6)] if ring else None
            out.append({**base, "kind": "zone", "rings": rings, "label": label, "active": _active(item)})
        elif item.points:
            points = [[round(x, 6), round(y, 6)] for x, y in item.points]
            out.append({**base, "kind": "point", "points": points, "active": _active(item)})
        elif item.lines:  # an annotation line: drawn as a track without times
            line = [p for part in item.lines for p in part]
            out.append(
                {
                    **base,
                    "kind": "track",
                    "lon": [round(p[0], 6) for p in line],
                    "lat": [round(p[1], 6) for p in line],
                    "t": None,
                    "points_total": len(line),
                    "points_shown": len(line),
                    "extent": 0.0,
                }
            )
    out += hidden_data(features)
    return {
        "filename": filename,
        "revision": revision,
        "title": title,
        "time": time_state,
        "viewport": list(viewport) if viewport is not None else None,
        "bounds": _bounds(out),
        "selection": [str(s) for s in selection],
        "features": out,
        "max_points": max_points,
    }
