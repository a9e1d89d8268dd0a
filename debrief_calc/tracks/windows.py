"""A time window on the features an analysis reads, whatever they came from.

``run_tool(…, time_start, time_end)`` (and a plot reference's own ``time_start``/``time_end``)
cut every input alike: a track keeps its fixes inside the window and gains a fix interpolated
exactly at each edge the window cuts between two of its fixes (along the geodesic, at constant
speed), so that a 10:00–11:00 window gives analyses over exactly 10:00–11:00; every per-fix
array (``timestamps``, ``speeds``, ``courses``, ``depths``, ``positions[]`` …) is cut and
filled alike. Other features are kept whole while active in the window and left out when not
(:func:`debrief_calc.tracks.paging.clip_to_time`), a feature with no time at all is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.tracks._feature_parts import feature_kind, raw_id

if TYPE_CHECKING:  # numpy comes with the first window, not with the server's start
    from debrief_calc.tracks._track_data import TrackData, WindowEdges

__all__ = ["Window", "cut_to_window", "left_out_text", "parse_window", "window_track"]


@dataclass(frozen=True)
class Window:
    """``[start, end]`` in epoch seconds; None leaves that side open."""

    start: float | None
    end: float | None

    @property
    def shown(self) -> list[str | None]:
        """As ``provenance.window`` states it: ``[time_start, time_end]``, ISO-8601 or null."""
        from debrief_calc.tracks.features import iso

        return [iso(t) if t is not None else None for t in (self.start, self.end)]

    @property
    def text(self) -> str:
        return " to ".join(t or "open" for t in self.shown)


def parse_window(time_start: object, time_end: object, *, prefix: str = "") -> Window | None:
    """The window of two ISO-8601 times (either may be None), or None when both are.
    ValidationFailed naming ``<prefix>time_start`` / ``<prefix>time_end`` and the rule."""
    ends: list[float | None] = []
    for key, value in (("time_start", time_start), ("time_end", time_end)):
        if value is None:
            ends.append(None)
            continue
        field = prefix + key
        if isinstance(value, str):
            from debrief_calc.tracks.features import parse_iso  # numpy: only when a window is asked for

            try:
                ends.append(parse_iso(value))
                continue
            except ValidationFailed:
                pass
        raise ValidationFailed(
            f"{field} {str(value)[:60]!r} is not an ISO-8601 time (e.g. 1995-12-12T09:00:00Z)",
            details={"field": field, "rule": "iso-time"},
        )
    start, end = ends
    if start is None and end is None:
        return None
    if start is not None and end is not None and start > end:
        raise ValidationFailed(
            f"{prefix}time_end ({time_end}) is before {prefix}time_start ({time_start})",
            details={"field": prefix + "time_end", "rule": "order"},
        )
    return Window(start, end)


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
            from debrief_calc.tracks.features import iso, parse_iso

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


def _edge(track: TrackData, t: float, i: int) -> _Edge:
    from debrief_calc.geo.geodesy import interpolate_track

    span = float(track.t[i + 1] - track.t[i])
    f = (t - float(track.t[i])) / span if span > 0 else 1.0
    lat, lon = interpolate_track(track.t, track.lat, track.lon, [t])
    return _Edge(t, i, f, float(lon[0]), float(lat[0]))


def window_track(feature: Mapping[str, Any], start: float | None, end: float | None) -> dict[str, Any] | None:
    """A track within ``[start, end]`` with a fix interpolated at each edge that falls between
    two fixes, per-fix arrays cut and filled alike; None when the track has no time in the
    window. A MultiLineString (parts would need splitting) is cut to its fixes inside, without
    edge fixes; a track without times is kept whole (:func:`debrief_calc.tracks.paging.clip_to_time`)."""
    from debrief_calc.tracks._track_data import read_track
    from debrief_calc.tracks.paging import clip_to_time

    geom = feature.get("geometry")
    if isinstance(geom, Mapping) and geom.get("type") != "LineString":
        return clip_to_time(feature, start, end)
    feature = _fixes_round(feature, start, end)
    geom = feature.get("geometry")
    try:
        track = read_track(feature, None, raw_id(feature) or "")
    except ValidationFailed as exc:
        if exc.details.get("rule") == "required":
            return dict(feature)
        raise
    import numpy as np

    t, n = track.t, len(track)
    a = int(np.searchsorted(t, start, side="left")) if start is not None else 0
    b = int(np.searchsorted(t, end, side="right")) if end is not None else n
    head = _edge(track, start, a - 1) if start is not None and 0 < a < n and t[a] > start else None
    tail = _edge(track, end, b - 1) if end is not None and 0 < b < n and t[b - 1] < end else None
    if head is not None and tail is not None and head.t == tail.t:
        tail = None  # an empty window between two fixes: one fix at that instant
    if a >= b and head is None:
        return None
    if (a, b) == (0, n) and head is None and tail is None:
        return dict(feature)
    edges_before = [head] if head is not None else []
    edges_after = [tail] if tail is not None else []

    def cut(key: str, values: list[Any], fill: Any = None) -> list[Any]:
        make = fill or (lambda e: e.value(key, values[e.i], values[e.i + 1]))
        return [make(e) for e in edges_before] + values[a:b] + [make(e) for e in edges_after]

    out = dict(feature)
    if isinstance(geom, Mapping) and isinstance(coords := geom.get("coordinates"), list) and len(coords) == n:
        out["geometry"] = {
            **geom,
            "coordinates": cut("coordinates", coords, lambda e: e.row(coords[e.i], coords[e.i + 1])),
        }
    props = feature.get("properties")
    if isinstance(props, Mapping):
        out["properties"] = {k: cut(k, v) if isinstance(v, list) and len(v) == n else v for k, v in props.items()}
        edges = _edges_beyond(track, a, b, head is not None, tail is not None)
        if edges is not None:
            out["properties"]["window_edges"] = edges.as_json()
    return out


def _edges_beyond(track: TrackData, a: int, b: int, head: bool, tail: bool) -> WindowEdges | None:
    """The original fixes just beyond the cut (fixes ``a`` to ``b - 1`` kept), so that the motion
    at the window's first and last fixes is the original track's (:class:`Legs` reads them): a cut
    track's last fix would otherwise take the leg before, where the whole track takes the leg after.
    A track cut before keeps the hints of the ends it still has."""
    from debrief_calc.tracks._track_data import WindowEdges

    def fix(i: int) -> tuple[float, float, float]:
        return (float(track.lon[i]), float(track.lat[i]), float(track.t[i]))

    n, old = len(track), track.edges
    before, first = (fix(a - 1), head) if a > 0 else (old.before, old.interpolated[0]) if old else (None, False)
    after, last = (fix(b), tail) if b < n else (old.after, old.interpolated[1]) if old else (None, False)
    if before is None and after is None:
        return None
    return WindowEdges(before, after, (first, last))


def _fixes_round(feature: Mapping[str, Any], start: float | None, end: float | None) -> Mapping[str, Any]:
    """The track's fixes in ``[start, end]`` and one either side (for the edge fixes), found by
    bisecting its list of times, so that a window on a long track reads the window, not the track;
    a track of another shape is left whole."""
    from debrief_calc.tracks._track_data import listed_times

    listed = listed_times(feature)
    if listed is None:
        return feature
    n = len(listed)
    lo = max(listed.first_at_or_after(start) - 1, 0) if start is not None else 0
    hi = min(listed.first_after(end) + 1, n) if end is not None else n
    return feature if (lo, hi) == (0, n) else listed.piece(lo, hi)


def _cut_one(feature: Mapping[str, Any], window: Window) -> dict[str, Any] | None:
    from debrief_calc.tracks.paging import clip_to_time

    if feature_kind(feature) == "track":
        return window_track(feature, window.start, window.end)
    return clip_to_time(feature, window.start, window.end)


def cut_to_window(
    features: Sequence[Any], window: Window | None, *, where: str, field: str = "time_start"
) -> tuple[list[Any], list[str]]:
    """The features cut to ``window`` and the ids of those it left out entirely (nothing of
    them inside); none left at all is an InvalidContext naming ``field`` and ``where`` the
    features came from. Items that are not features pass untouched (the run says what they are)."""
    if window is None:
        return list(features), []
    kept: list[Any] = []
    left_out: list[str] = []
    for n, feature in enumerate(features):
        if not isinstance(feature, Mapping):
            kept.append(feature)
            continue
        cut = _cut_one(feature, window)
        if cut is None:
            left_out.append(str(feature.get("id", f"#{n}")))
        else:
            kept.append(cut)
    if features and not kept:
        raise InvalidContext(
            f"none of the {len(features)} feature(s) {where} has data in the window {window.text}: "
            f"widen {field.rsplit('time_', 1)[0]}time_start/time_end or leave them out",
            details={"field": field, "received_count": 0, "window": window.shown, "left_out": left_out[:100]},
        )
    return kept, left_out


def left_out_text(window: Window, left_out: list[str]) -> str:
    shown = ", ".join(left_out[:20]) + (f" and {len(left_out) - 20} more" if len(left_out) > 20 else "")
    return f"{len(left_out)} feature(s) with nothing in the window {window.text} left out: {shown}"
