"""Sensor cuts and target solutions as the picture and the live view draw them, legacy Debrief's way.

A sensor feature (``kind`` ``sensor``: the cuts of one sensor on one host track, read leniently
here, since a picture never loses a feature over a typo) draws each **active** cut as its bearing
line from its origin: to its range (``rangesYd``) when it has one, else to :func:`no_range_length`;
its ambiguous bearing (``ambiguousBearings``) as a second line, which the drawings dash.

A cut is active as a narrative entry is, by the same rule (:func:`debrief_calc.tracks.times.active_at`):
at the current time, from its time until :data:`._items.RECENT` (30 minutes) after it; always
without a time (a picture of a time window has its sensors cut to it, :mod:`._window`). A cut whose
``cutsVisible`` is false is never drawn. Many active cuts are thinned (:func:`thin`): every n-th
cut by its number in the sensor, so that the same cuts stay drawn while the time moves, and the
newest active cut always, :data:`MAX_CUTS` of a sensor at most.

A line is the geodesic from the origin along the bearing (:func:`debrief_calc.geo.geodesy.direct`,
WGS84), drawn as straight pieces of at most ``_PIECE_M`` so that a long one follows the geodesic.

A target solution (a track with ``ellipses``, as ``;TMA_POS:``/``;TMA_RB:`` and ``tma-solve`` make
them) has its uncertainty ellipse at each fix that gives one (semi-axes in yards, the major axis on
a true bearing): :func:`solution_ellipses`, thinned as cuts are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.plots.render._common import Item, css_colour
from debrief_calc.plots.render._items import RECENT
from debrief_calc.tracks._circles import ellipse_ring
from debrief_calc.tracks.times import active_at, parse_iso, parse_times

__all__ = [
    "MAX_CUTS",
    "MAX_ELLIPSES",
    "NO_RANGE_LIMITS_M",
    "SensorCuts",
    "active_cuts",
    "cut_lines",
    "drawable",
    "line_points",
    "no_range_length",
    "sensor_cuts",
    "solution_ellipses",
    "thin",
]

#: cut lines of one sensor drawn at once, at most: a fan of more is a smear on a picture's scale
MAX_CUTS: Final = 60
#: ellipses of one target solution drawn, at most
MAX_ELLIPSES: Final = 30
#: the length of a cut with no range: the diagonal of the plot's data, kept within these (metres).
#: Legacy Debrief draws such a cut to twice its view's larger side, at most 5° (about 300 nm).
NO_RANGE_LIMITS_M: Final = (1852.0, 300 * 1852.0)
_YARD_M: Final = METRES_PER_UNIT["yd"]
_PIECE_M: Final = 20_000.0  # longest straight piece of a drawn geodesic
_MAX_PIECES: Final = 16
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class SensorCuts:
    """A sensor's cuts, one item per cut in the feature's order: time (epoch s), origin, true
    bearing and ambiguous bearing (degrees), range (metres); NaN where the cut has none or it
    cannot be read. ``visible``: its ``cutsVisible`` (True when not given)."""

    item: Item
    t: FloatArray
    lon: FloatArray
    lat: FloatArray
    bearing: FloatArray
    ambiguous: FloatArray
    range_m: FloatArray
    visible: NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.t.size)

    def colour(self, i: int) -> tuple[int, int, int]:
        """The cut's own colour (``colours``, from its line's symbology), else the sensor's."""
        colours = (self.item.feature.get("properties") or {}).get("colours")
        own = css_colour(colours[i]) if isinstance(colours, list) and i < len(colours) else None
        return own or self.item.colour


def _numbers(values: object, n: int, scale: float = 1.0) -> FloatArray:
    """A per-cut list of numbers (null, a missing item or a non-number: NaN), ``n`` long."""
    out = np.full(n, np.nan)
    if isinstance(values, list):
        for i, v in enumerate(values[:n]):
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
                out[i] = float(v) * scale
    return out


def _times(values: object, n: int) -> FloatArray:
    if isinstance(values, list) and len(values) == n:
        try:
            return parse_times(values)
        except ValidationFailed:
            pass
    out = np.full(n, np.nan)
    for i, v in enumerate(values[:n] if isinstance(values, list) else []):
        try:
            out[i] = parse_iso(v) if isinstance(v, str) else math.nan
        except ValidationFailed:
            continue
    return out


def _positions(feature: Mapping[str, Any]) -> tuple[FloatArray, FloatArray]:
    geom = feature.get("geometry")
    coords = geom.get("coordinates") if isinstance(geom, Mapping) else None
    if isinstance(geom, Mapping) and geom.get("type") == "Point":
        coords = [coords]
    pairs = coords if isinstance(coords, list) else []
    lon, lat = np.full(len(pairs), np.nan), np.full(len(pairs), np.nan)
    for i, p in enumerate(pairs):
        if isinstance(p, list | tuple) and len(p) >= 2 and all(isinstance(v, int | float) for v in p[:2]):
            lon[i], lat[i] = float(p[0]), float(p[1])
    return lon, lat


def sensor_cuts(item: Item) -> SensorCuts:
    """The cuts of a sensor item, one per point of its geometry (each cut's origin)."""
    props = item.feature.get("properties") or {}
    lon, lat = _positions(item.feature)
    n = lon.size
    shown_flags = props.get("cutsVisible")
    visible = np.ones(n, dtype=bool)
    if isinstance(shown_flags, list):
        for i, v in enumerate(shown_flags[:n]):
            visible[i] = v is not False
    return SensorCuts(
        item,
        _times(props.get("timestamps"), n),
        lon,
        lat,
        _numbers(props.get("bearings"), n) % 360.0,
        _numbers(props.get("ambiguousBearings"), n) % 360.0,
        _numbers(props.get("rangesYd"), n, _YARD_M),
        visible,
    )


def drawable(cuts: SensorCuts) -> IntArray:
    """The numbers of the cuts that have a line to draw: visible, with an origin and a bearing
    (or an ambiguous one). A frequency-only cut has none."""
    ok = cuts.visible & np.isfinite(cuts.lon) & np.isfinite(cuts.lat)
    ok &= np.isfinite(cuts.bearing) | np.isfinite(cuts.ambiguous)
    return np.flatnonzero(ok).astype(np.int64)


def active_cuts(cuts: SensorCuts, q: float | None) -> IntArray:
    """The numbers (0-based, ascending) of the cuts drawn at ``q``: those :func:`drawable` and
    active then by the one rule of what is shown at a time (:func:`~debrief_calc.tracks.times.active_at`)
    for an event shown from its time for ``RECENT`` after it, as a narrative entry is; all of them
    without a time. (A picture of a window has the sensor cut to it first.)"""
    candidates = drawable(cuts)
    if q is None:
        return candidates
    t = cuts.t
    if bool(np.all(np.isfinite(t))) and bool(np.all(np.diff(t) >= 0)):
        # only the cuts near the time can be active: a bisection narrows the rule's work to them
        a, b = np.searchsorted(t, [q - RECENT - 2.0, q + 2.0], side="left")
        candidates = candidates[(candidates >= a) & (candidates < b)]
    kept = [i for i in candidates.tolist() if active_at((float(t[i]), float(t[i]) + RECENT), q)]
    return np.asarray(kept, dtype=np.int64)


def thin(active: IntArray, limit: int = MAX_CUTS) -> tuple[IntArray, int]:
    """At most ``limit`` of the ``active`` cut numbers (ascending) and the step taken: all of them
    when they fit, else every n-th by number (n the least step that fits) and the last (the
    newest) always. The view's script does the same (``thinCuts``)."""
    m = int(active.size)
    if m <= limit:
        return active, 1
    every = math.ceil(m / max(limit - 1, 1))
    keep = active[active % every == 0]
    if not keep.size or keep[-1] != active[-1]:
        keep = np.append(keep, active[-1])
    return keep, every


def _extent(items: Sequence[Item]) -> tuple[float, float, float, float] | None:
    """South, west, north, east of everything the items place (tracks' fixes, lines, rings, points)."""
    lons: list[FloatArray] = []
    lats: list[FloatArray] = []
    for it in items:
        if it.track is not None and len(it.track):
            lons.append(it.track.lon)
            lats.append(it.track.lat)
        pts = [p for part in (*it.lines, *it.rings, it.points) for p in part]
        if pts:
            arr = np.asarray(pts, dtype=float)
            lons.append(arr[:, 0])
            lats.append(arr[:, 1])
    if not lons:
        return None
    lon, lat = np.concatenate(lons), np.concatenate(lats)
    ok = np.isfinite(lon) & np.isfinite(lat)
    if not ok.any():
        return None
    return float(lat[ok].min()), float(lon[ok].min()), float(lat[ok].max()), float(lon[ok].max())


def no_range_length(items: Sequence[Item]) -> float:
    """Metres to draw a cut that has no range: the diagonal of the area the plot's features cover
    (the tracks, zones, points and the cuts' origins), within :data:`NO_RANGE_LIMITS_M`. From any
    origin among them such a line reaches past everything plotted, as legacy Debrief draws it past
    the edge of its view, and it is the same at every zoom and in both drawings (the picture, the
    view); the area a picture fits counts the origins only, so cuts never zoom it out."""
    low, high = NO_RANGE_LIMITS_M
    extent = _extent(items)
    if extent is None:
        return low
    south, west, north, east = extent
    metres = float(geodesy.inverse(south, west, north, east)[0])
    return min(max(metres, low), high)


def _lengths(cuts: SensorCuts, numbers: IntArray, no_range_m: float) -> tuple[FloatArray, IntArray]:
    """The drawn length (metres) of each cut of ``numbers`` and the straight pieces it is drawn in."""
    ranges = cuts.range_m[numbers]
    lengths = np.where(np.isfinite(ranges) & (ranges > 0), ranges, no_range_m)
    return lengths, np.clip(np.ceil(lengths / _PIECE_M), 1, _MAX_PIECES).astype(np.int64)


def line_points(cuts: SensorCuts, numbers: IntArray, no_range_m: float) -> IntArray:
    """How many points :func:`cut_lines` gives each cut of ``numbers``, its bearing's and its
    ambiguous bearing's lines together."""
    _, pieces = _lengths(cuts, numbers, no_range_m)
    lines = np.isfinite(cuts.bearing[numbers]).astype(np.int64) + np.isfinite(cuts.ambiguous[numbers])
    return (pieces + 1) * lines


def cut_lines(cuts: SensorCuts, numbers: IntArray, no_range_m: float, *, ambiguous: bool = False) -> list[FloatArray]:
    """For each cut of ``numbers``, its line as ``(k, 2)`` lon/lat points along the geodesic from
    its origin, on its bearing (or its ambiguous bearing), to its range or ``no_range_m``; an
    empty array for a cut without that bearing."""
    bearings = (cuts.ambiguous if ambiguous else cuts.bearing)[numbers]
    lengths, pieces = _lengths(cuts, numbers, no_range_m)
    ok = np.isfinite(bearings)
    pieces[~ok] = 0
    counts = np.where(ok, pieces + 1, 0)
    if not counts.sum():
        return [np.empty((0, 2)) for _ in range(numbers.size)]
    owner = np.repeat(np.arange(numbers.size), counts)
    step = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    fraction = step / np.maximum(pieces[owner], 1)
    lat, lon, _ = geodesy.direct(
        cuts.lat[numbers][owner], cuts.lon[numbers][owner], bearings[owner], lengths[owner] * fraction
    )
    points = np.column_stack((lon, lat))
    return np.split(points, np.cumsum(counts)[:-1])


@dataclass(frozen=True)
class Ellipse:
    """A target solution's uncertainty ellipse at one of its fixes: the fix's number and time
    (epoch s, NaN when unreadable) and the ring, lon/lat, closed."""

    fix: int
    t: float
    ring: FloatArray


def solution_ellipses(item: Item, limit: int = MAX_ELLIPSES) -> tuple[list[Ellipse], int]:
    """The ellipses at a track's fixes (``properties.ellipses``: ``{orientation_deg, semiMajorYd,
    semiMinorYd}`` or null per fix, centred on the fix), thinned as cuts are (:func:`thin`), and how
    many fixes have one; of a track cut to a time window, those of its fixes inside it."""
    props = item.feature.get("properties") or {}
    values = props.get("ellipses")
    lon, lat = _positions(item.feature)
    if not isinstance(values, list) or len(values) != lon.size or lon.size == 0:
        return [], 0
    t = _times(props.get("timestamps"), lon.size)
    span = (float(item.track.t[0]), float(item.track.t[-1])) if item.track is not None and len(item.track) else None
    given: list[tuple[int, float, float, float]] = []
    for i, e in enumerate(values):
        if not isinstance(e, Mapping) or not (math.isfinite(lon[i]) and math.isfinite(lat[i])):
            continue
        if span is not None and not span[0] <= t[i] <= span[1]:
            continue
        parts = [e.get(k) for k in ("orientation_deg", "semiMajorYd", "semiMinorYd")]
        if all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in parts):
            orientation, major, minor = (float(v) for v in parts)  # type: ignore[arg-type]
            if major > 0 and minor >= 0:
                given.append((i, orientation, major * _YARD_M, minor * _YARD_M))
    numbers, _ = thin(np.asarray([g[0] for g in given], dtype=np.int64), limit)
    chosen = set(numbers.tolist())
    out = [
        Ellipse(i, float(t[i]), ellipse_ring(float(lon[i]), float(lat[i]), o, a, b, 48))
        for i, o, a, b in given
        if i in chosen
    ]
    return out, len(given)
