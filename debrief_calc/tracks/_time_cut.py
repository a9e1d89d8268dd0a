"""A track cut to a time window, with a fix interpolated exactly at each edge. Private to
:mod:`debrief_calc.tracks.times`, which re-exports it: import from there.

The fixes inside ``[start, end]`` are kept (a fix within :data:`TOLERANCE` of a bound is inside:
an instant printed to the millisecond and passed back loses no fix), and where a bound falls
between two fixes a fix is made exactly at it: its position along the geodesic at constant
speed, every per-fix array (``timestamps``, ``speeds``, ``courses``, ``depths``,
``positions[]`` …) filled alike (numbers linearly, angles the short way round, times as the
bound's instant). A MultiLineString is cut part by part (no fix is made across the gap between
two parts). ``properties.window_edges`` records the original fixes just beyond the cut and which
ends were interpolated (:class:`~debrief_calc.tracks._track_data.WindowEdges`).

A sensor (its cuts: bearings observed at instants) keeps the cuts inside the window; none is made
at an edge, a cut being an observation, not a position between two.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from debrief_calc.errors import ValidationFailed
from debrief_calc.tracks._feature_parts import geometry_of, properties_of, raw_id
from debrief_calc.tracks._time_text import TOLERANCE, iso, parse_iso

if TYPE_CHECKING:  # numpy comes with the first window, not with the server's start
    from debrief_calc.tracks._track_data import TrackData, WindowEdges

__all__ = ["cut_sensor", "cut_track", "whole_inside"]


def _angle_between(a: float, b: float, f: float) -> float:
    """The angle ``f`` of the way from ``a`` to ``b`` (degrees) the short way round, in [0, 360)."""
    turn = (b - a + 540.0) % 360.0 - 180.0
    return (a + f * turn) % 360.0


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _angular(key: str) -> bool:
    return any(word in key.lower() for word in ("course", "heading", "bearing"))


class _Edge:
    """One interpolated fix: at time ``t``, ``f`` of the way from fix ``i`` to fix ``i + 1``."""

    def __init__(self, t: float, i: int, f: float, lon: float, lat: float):
        self.t, self.i, self.f, self.lon, self.lat = t, i, f, lon, lat

    def value(self, key: str, a: Any, b: Any) -> Any:
        """The per-fix value of ``key`` at this edge, from its two neighbours ``a`` and ``b``."""
        nearer = a if self.f < 0.5 else b
        if _is_number(a) and _is_number(b):
            return _angle_between(a, b, self.f) if _angular(key) else a + self.f * (b - a)
        if isinstance(a, str) and isinstance(b, str):
            try:
                parse_iso(a), parse_iso(b)
            except ValidationFailed:
                return nearer
            return iso(self.t)
        if isinstance(a, Mapping) and isinstance(b, Mapping):  # a positions[] entry
            out = dict(nearer)
            for k in a.keys() & b.keys():
                out[k] = self.row(a[k], b[k]) if k == "coordinates" else self.value(k, a[k], b[k])
            return out
        return nearer

    def row(self, a: Any, b: Any) -> Any:
        """A coordinate ``[lon, lat, z?, t?]`` at this edge (a 4th value is epoch milliseconds)."""
        if not (isinstance(a, list) and isinstance(b, list)):
            return a
        out: list[Any] = [self.lon, self.lat]
        for j in range(2, min(len(a), len(b), 4)):
            if j == 3:
                out.append(self.t * 1000.0)
            elif _is_number(a[j]) and _is_number(b[j]):
                out.append(a[j] + self.f * (b[j] - a[j]))
        return out


#: One fix of the cut track: a fix kept (its index) or one made at an edge.
_Row = int | _Edge


def _edge(track: TrackData, t: float, i: int) -> _Edge:
    from debrief_calc.geo.geodesy import interpolate_track

    span = float(track.t[i + 1] - track.t[i])
    f = (t - float(track.t[i])) / span if span > 0 else 1.0
    lat, lon = interpolate_track(track.t, track.lat, track.lon, [t])
    return _Edge(t, i, f, float(lon[0]), float(lat[0]))


def _part_rows(track: TrackData, p0: int, p1: int, start: float | None, end: float | None) -> list[_Row]:
    """The rows of the fixes ``p0`` to ``p1 - 1`` (one line of the track) in the window."""
    import numpy as np

    t = track.t[p0:p1]
    a = p0 + (int(np.searchsorted(t, start - TOLERANCE, side="left")) if start is not None else 0)
    b = p0 + (int(np.searchsorted(t, end + TOLERANCE, side="right")) if end is not None else p1 - p0)
    head = _edge(track, start, a - 1) if start is not None and p0 < a < p1 and track.t[a] > start + TOLERANCE else None
    tail = _edge(track, end, b - 1) if end is not None and p0 < b < p1 and track.t[b - 1] < end - TOLERANCE else None
    if head is not None and tail is not None and head.t == tail.t:
        tail = None  # an empty window between two fixes: one fix at that instant
    rows: list[_Row] = [head] if head is not None else []
    rows += range(a, b)
    return rows + ([tail] if tail is not None else [])


def _parts(feature: Mapping[str, Any], n: int) -> list[int] | None:
    """The fix counts of a MultiLineString's lines (None for one line, or lines that do not add up)."""
    geom = geometry_of(feature)
    if geom is None or geom.get("type") != "MultiLineString":
        return None
    lines = geom.get("coordinates")
    if not isinstance(lines, list) or not all(isinstance(line, list) for line in lines):
        return None
    sizes = [len(line) for line in lines]
    return sizes if sum(sizes) == n else None


def cut_track(feature: Mapping[str, Any], start: float | None, end: float | None) -> dict[str, Any] | None:
    """The track within ``[start, end]`` (epoch seconds, None: open) as the module docstring says;
    the feature itself (a shallow copy) when the window holds all of it; None when it has no fix
    and no stretch in the window. A track without times or positions is kept whole."""
    from debrief_calc.tracks._track_data import read_track

    if whole_inside(feature, start, end):
        return dict(feature)
    piece = _fixes_round(feature, start, end)
    if piece is None:
        return None
    feature = piece
    try:
        track = read_track(feature, None, raw_id(feature) or "")
    except ValidationFailed as exc:
        if exc.details.get("rule") == "required":
            return dict(feature)
        raise
    n = len(track)
    sizes = _parts(feature, n)
    bounds = [0]
    for size in sizes or [n]:
        bounds.append(bounds[-1] + size)
    per_part = [_part_rows(track, p0, p1, start, end) for p0, p1 in itertools.pairwise(bounds)]
    rows = [row for part in per_part for row in part]
    if not rows:
        return None
    if len(rows) == n and not any(isinstance(r, _Edge) for r in rows):
        return dict(feature)

    def cut(key: str, values: list[Any], rows: list[_Row]) -> list[Any]:
        return [values[r] if isinstance(r, int) else r.value(key, values[r.i], values[r.i + 1]) for r in rows]

    def cut_coords(coords: list[Any], rows: list[_Row]) -> list[Any]:
        return [coords[r] if isinstance(r, int) else r.row(coords[r.i], coords[r.i + 1]) for r in rows]

    out = dict(feature)
    geom = geometry_of(feature)
    coords = geom.get("coordinates") if geom is not None else None
    if geom is not None and sizes is not None and isinstance(coords, list):
        flat = [p for line in coords for p in line]
        out["geometry"] = {**geom, "coordinates": [cut_coords(flat, part) for part in per_part if part]}
    elif geom is not None and isinstance(coords, list) and len(coords) == n:
        out["geometry"] = {**geom, "coordinates": cut_coords(coords, rows)}
    props = properties_of(feature)
    if props:
        out["properties"] = {k: cut(k, v, rows) if isinstance(v, list) and len(v) == n else v for k, v in props.items()}
        edges = _edges_beyond(track, rows[0], rows[-1])
        if edges is not None:
            out["properties"]["window_edges"] = edges.as_json()
        else:
            out["properties"].pop("window_edges", None)
    return out


def _edges_beyond(track: TrackData, first: _Row, last: _Row) -> WindowEdges | None:
    """The original fixes just beyond the cut, so that the motion at the window's first and last
    fixes is the original track's (:class:`Legs` reads them): a cut track's last fix would
    otherwise take the leg before, where the whole track takes the leg after. A track cut before
    keeps the hints of the ends it still has."""
    from debrief_calc.tracks._track_data import WindowEdges

    def fix(i: int) -> tuple[float, float, float]:
        return (float(track.lon[i]), float(track.lat[i]), float(track.t[i]))

    n, old = len(track), track.edges
    a = first.i + 1 if isinstance(first, _Edge) else first  # the first original fix kept, or after the edge
    b = last.i + 1 if isinstance(last, _Edge) else last + 1  # one past the last original fix kept
    head, tail = isinstance(first, _Edge), isinstance(last, _Edge)
    before: tuple[float, float, float] | None
    after: tuple[float, float, float] | None
    if a > 0:
        before, interpolated_first = fix(a - 1), head
    else:
        before, interpolated_first = (old.before, old.interpolated[0]) if old else (None, False)
    if b < n:
        after, interpolated_last = fix(b), tail
    else:
        after, interpolated_last = (old.after, old.interpolated[1]) if old else (None, False)
    if before is None and after is None:
        return None
    return WindowEdges(before, after, (interpolated_first, interpolated_last))


def _fixes_round(feature: Mapping[str, Any], start: float | None, end: float | None) -> Mapping[str, Any] | None:
    """The track's fixes in the window and one either side (for the edge fixes), found by
    bisecting its list of times, so that a window on a long track reads the window, not the track;
    None when the track ends before the window or starts after it; a track of another shape is
    left whole (read whole by the cut)."""
    from debrief_calc.tracks._track_data import listed_times

    listed = listed_times(feature)
    if listed is None:
        return feature
    n = len(listed)
    if (start is not None and listed.at(n - 1) < start - TOLERANCE) or (
        end is not None and listed.at(0) > end + TOLERANCE
    ):
        return None
    lo = max(listed.first_at_or_after(start - TOLERANCE) - 1, 0) if start is not None else 0
    hi = min(listed.first_after(end + TOLERANCE) + 1, n) if end is not None else n
    return feature if (lo, hi) == (0, n) else listed.piece(lo, hi)


def whole_inside(feature: Mapping[str, Any], start: float | None, end: float | None) -> bool:
    """Whether every fix of a track with a list of times is in the window, read from its first and
    last time alone (False for a track of another shape: the cut reads it)."""
    from debrief_calc.tracks._track_data import listed_times

    listed = listed_times(feature)
    if listed is None:
        return False
    return (start is None or listed.at(0) >= start - TOLERANCE) and (
        end is None or listed.at(len(listed) - 1) <= end + TOLERANCE
    )


def cut_sensor(feature: Mapping[str, Any], start: float | None, end: float | None) -> dict[str, Any] | None:
    """A sensor's cuts within ``[start, end]`` (its ``timestamps`` ascend, one per point), its per-cut
    lists sliced with its points; the feature itself (a shallow copy) when all are inside, None when
    none is. ValidationFailed when it has not one time per cut."""
    import numpy as np

    from debrief_calc.tracks._time_arrays import parse_times
    from debrief_calc.tracks.paging import point_count, slice_points

    times = properties_of(feature).get("timestamps")
    n = point_count(feature)
    if not isinstance(times, list) or len(times) != n:
        raise ValidationFailed(
            f"sensor {raw_id(feature)!r}: properties.timestamps must hold one time per cut ({n}), "
            f"has {len(times) if isinstance(times, list) else 'none'}",
            details={"feature_id": raw_id(feature), "field": "properties.timestamps", "rule": "one per point"},
        )
    t = parse_times(times, field="properties.timestamps", label="sensor", fid=raw_id(feature))
    a = int(np.searchsorted(t, start - TOLERANCE, side="left")) if start is not None else 0
    b = int(np.searchsorted(t, end + TOLERANCE, side="right")) if end is not None else n
    if a >= b:
        return None
    return dict(feature) if (a, b) == (0, n) else slice_points(feature, a, b)
