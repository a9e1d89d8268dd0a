"""The range between two tracks as a function of time: what the closest approach, the passes and
the periods of close quarters are all read from.

Both tracks go on a common timeline, every fix time of either inside the span plus its ends (the
*vertices*); between two vertices (a *piece*) each platform moves along one geodesic leg, so the
relative motion is nearly steady and the range has at most one minimum inside a piece, its
largest values at the piece's ends. A planar pass (local east/north metres, positions linear in
time) gives the range at every vertex and every piece's inside minimum, vectorised over all of
them: the shape of the range. The figures an answer states are then solved on the geodesic
(golden-section search and bisection on :func:`debrief_calc.geo.geodesy.inverse` of positions
interpolated along the legs), to a millisecond.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from debrief_calc.geo import geodesy
from debrief_calc.tracks.features import TrackData

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.intp]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

__all__ = ["Profile", "closest_approach", "coarse_pieces", "least_range_times", "range_m"]

_E2: Final = geodesy.WGS84_F * (2 - geodesy.WGS84_F)
_GOLDEN: Final = (math.sqrt(5.0) - 1.0) / 2.0
TIME_TOL_S: Final = 1e-3
_MIN_CANDIDATES: Final = 8
_MAX_CANDIDATES: Final = 32
# Pieces whose planar estimate is within this of the best are refined exactly: the planar range
# errs by well under 1% at the ranges where a CPA matters.
_REL_MARGIN: Final = 0.02
_ABS_MARGIN_M: Final = 50.0
#: a piece's inside minimum this close to one of its ends (as a fraction of it) is that end
_INSIDE: Final = 1e-9
#: a track jumps at a vertex (two fixes at one time) when the relative position there moves this far
_JUMP_M: Final = 1e-6
#: where the range was just before a jump is read this long before it
_BEFORE_JUMP_S: Final = 1e-6


def range_m(a: TrackData, b: TrackData, t: FloatArray) -> FloatArray:
    """The geodesic range (m) between the two tracks at times ``t``, each interpolated along its legs."""
    lat_a, lon_a = geodesy.interpolate_track(a.t, a.lat, a.lon, t)
    lat_b, lon_b = geodesy.interpolate_track(b.t, b.lat, b.lon, t)
    dist: FloatArray = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)[0]
    return dist


def _jumps(track: TrackData) -> bool:
    """Whether two fixes of the track share a time."""
    return bool(len(track) > 1 and np.any(track.t[1:] == track.t[:-1]))


def _planar(track: TrackData, t: FloatArray, *, left: bool = False) -> tuple[FloatArray, FloatArray]:
    """Latitude and (unwrapped) longitude at ``t``, linear between fixes: coarse positions. At a time
    two fixes share (the track jumps), the later fix, as :func:`~debrief_calc.geo.geodesy.interpolate_track`
    has it, or with ``left`` the earlier: where the track was until then."""
    n = len(track)
    lon = np.unwrap(track.lon, period=360.0)
    if n == 1:
        return np.full(t.shape, track.lat[0]), np.full(t.shape, lon[0])
    if not _jumps(track):  # no two fixes at one time: numpy's interpolation, the quicker
        return np.interp(t, track.t, track.lat), np.interp(t, track.t, lon)
    k = np.searchsorted(track.t, t, side="left" if left else "right")
    j = np.clip(k - 1, 0, n - 2)
    dt = track.t[j + 1] - track.t[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(np.where(dt > 0, (t - track.t[j]) / dt, 1.0), 0.0, 1.0)
    lat: FloatArray = track.lat[j] + frac * (track.lat[j + 1] - track.lat[j])
    lon_t: FloatArray = lon[j] + frac * (lon[j + 1] - lon[j])
    return lat, lon_t


def relative_en(a: TrackData, b: TrackData, times: FloatArray, *, left: bool = False) -> tuple[FloatArray, FloatArray]:
    """East and north metres of ``b`` from ``a`` at ``times``, in the plane of their mid-latitude
    (``left``: where each was until then, at a time a track jumps)."""
    lat_a, lon_a = _planar(a, times, left=left)
    lat_b, lon_b = _planar(b, times, left=left)
    mid = np.radians((lat_a + lat_b) * 0.5)
    s = np.sin(mid)
    w2 = 1.0 - _E2 * s * s
    w = np.sqrt(w2)
    dlon = (lon_b - lon_a + 180.0) % 360.0 - 180.0
    east: FloatArray = (geodesy.WGS84_A / w) * np.cos(mid) * np.radians(dlon)
    north: FloatArray = (geodesy.WGS84_A * (1.0 - _E2) / (w2 * w)) * np.radians(lat_b - lat_a)
    return east, north


def _piece_minima(
    start: tuple[FloatArray, FloatArray], end: tuple[FloatArray, FloatArray]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per piece, from the relative position (east, north) at its start to that at its end: the
    fraction of the way along it at which the planar range is least (0 or 1 at an end), that least
    range, and ``|r x d|`` (m^2: the relative position at its start crossed with the relative
    displacement over it)."""
    e0, n0 = start
    de, dn = end[0] - e0, end[1] - n0
    speed2 = de * de + dn * dn
    with np.errstate(divide="ignore", invalid="ignore"):
        frac: FloatArray = np.clip(np.where(speed2 > 0, -(e0 * de + n0 * dn) / speed2, 0.0), 0.0, 1.0)
    least: FloatArray = np.hypot(e0 + frac * de, n0 + frac * dn)
    cross: FloatArray = np.abs(e0 * dn - n0 * de)
    return frac, least, cross


def _ends(a: TrackData, b: TrackData, times: FloatArray) -> tuple[tuple[FloatArray, FloatArray], ...]:
    """The relative position at each of ``times`` as the pieces starting there see it, and as the
    pieces ending there do (they differ only where a track jumps: two fixes at one time)."""
    right = relative_en(a, b, times)
    left = relative_en(a, b, times, left=True) if _jumps(a) or _jumps(b) else right
    return right, left


def coarse_pieces(a: TrackData, b: TrackData, times: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Estimated least range (m) within each interval of ``times``, and ``|r x d|`` there (m^2,
    which divided by the interval's duration and the least range squared is the largest bearing
    rate in it, rad/s), treating the relative motion as linear in a local plane."""
    right, left = _ends(a, b, times)
    _, least, cross = _piece_minima((right[0][:-1], right[1][:-1]), (left[0][1:], left[1][1:]))
    return least, cross


def least_range_times(a: TrackData, b: TrackData, lo: FloatArray, hi: FloatArray) -> FloatArray:
    """Time of least geodesic range in each ``[lo, hi]`` (no fix of either track inside, so the
    range is unimodal there), by golden-section search to a millisecond, vectorised."""
    lo, hi = lo.copy(), hi.copy()
    c = hi - _GOLDEN * (hi - lo)
    d = lo + _GOLDEN * (hi - lo)
    fc, fd = range_m(a, b, c), range_m(a, b, d)
    longest = float(np.max(hi - lo)) if lo.size else 0.0
    rounds = min(80, max(0, math.ceil(math.log(max(longest, TIME_TOL_S) / TIME_TOL_S) / -math.log(_GOLDEN))))
    for _ in range(rounds):
        left = fc < fd
        hi = np.where(left, d, hi)
        lo = np.where(left, lo, c)
        new_c = hi - _GOLDEN * (hi - lo)
        new_d = lo + _GOLDEN * (hi - lo)
        probe = np.where(left, new_c, new_d)
        fp = range_m(a, b, probe)
        c, d, fc, fd = (
            np.where(left, new_c, d),
            np.where(left, c, new_d),
            np.where(left, fp, fd),
            np.where(left, fc, fp),
        )
    out: FloatArray = (lo + hi) * 0.5
    return out


def vertices(a: TrackData, b: TrackData, span: tuple[float, float]) -> FloatArray:
    """Every fix time of either track inside ``span``, and its ends."""
    start, end = span
    inner = np.union1d(a.t[(a.t > start) & (a.t < end)], b.t[(b.t > start) & (b.t < end)])
    out: FloatArray = np.union1d(inner, [start, end])
    return out


def _least(a: TrackData, b: TrackData, times: FloatArray, est: FloatArray) -> tuple[float, float]:
    """``(time, range_m)`` of the least geodesic range over ``times`` (two or more), ``est`` the planar
    estimate of each piece's least range: the most promising pieces refined on the geodesic."""
    order = np.argsort(est, kind="stable")
    near = int(np.searchsorted(est[order], est[order[0]] * (1 + _REL_MARGIN) + _ABS_MARGIN_M, side="right"))
    chosen = order[: min(max(near, _MIN_CANDIDATES), _MAX_CANDIDATES)]
    lo, hi = times[chosen], times[chosen + 1]
    best = least_range_times(a, b, lo, hi)
    candidates = np.concatenate((best, lo, hi))
    ranges = range_m(a, b, candidates)
    k = int(np.argmin(ranges))
    return float(candidates[k]), float(ranges[k])


def closest_approach(a: TrackData, b: TrackData, span: tuple[float, float]) -> tuple[float, float]:
    """``(time, range_m)`` of the least geodesic range between ``a`` and ``b`` within ``span``."""
    times = vertices(a, b, span)
    if times.size == 1:
        return span[0], float(range_m(a, b, times)[0])
    return _least(a, b, times, coarse_pieces(a, b, times)[0])


class Profile:
    """The range between ``a`` and ``b`` over ``span`` as a sequence of *points* in time order:
    every vertex, and after each piece's first vertex that piece's inside minimum when it has one;
    where a track jumps (two fixes at one time), a point for where the range was until then comes
    just before the vertex (``before_jump``). ``t`` and ``r`` (planar metres) are the points' times
    and ranges; ``piece`` the piece a point starts or lies in (a point before a jump: the piece it
    ends); ``vertex`` whether it is a vertex."""

    def __init__(self, a: TrackData, b: TrackData, span: tuple[float, float]) -> None:
        self.a, self.b, self.span = a, b, span
        self.times = vertices(a, b, span)
        n = self.times.size
        (east, north), (east_l, north_l) = _ends(a, b, self.times)
        if n == 1:
            inside = np.zeros(0, dtype=bool)
            frac = least = np.zeros(0)
            jump = np.zeros(1, dtype=bool)
        else:
            frac, least, _ = _piece_minima((east[:-1], north[:-1]), (east_l[1:], north_l[1:]))
            inside = (frac > _INSIDE) & (frac < 1.0 - _INSIDE)
            jump = np.concatenate(([False], np.hypot(east_l - east, north_l - north)[1:] > _JUMP_M))
        self._piece_least = least
        #: the relative position (m east and north of ``a``) at each vertex, as the pieces starting there
        #: see it, and as the pieces ending there do (they differ only where a track jumps)
        self.east, self.north = east, north
        self.east_end, self.north_end = east_l, north_l
        has_inside = np.concatenate((inside, [False]))
        # per vertex i: the point before a jump at it, the vertex, the inside minimum of piece i
        count = jump.astype(np.intp) + 1 + has_inside
        offset = np.concatenate(([0], np.cumsum(count)[:-1]))
        at = offset + jump
        total = int(count.sum())
        self.t: FloatArray = np.empty(total)
        self.r: FloatArray = np.empty(total)
        self.piece: IntArray = np.empty(total, dtype=np.intp)
        self.vertex: BoolArray = np.zeros(total, dtype=bool)
        self.before_jump: BoolArray = np.zeros(total, dtype=bool)
        self.t[at], self.r[at], self.piece[at], self.vertex[at] = self.times, np.hypot(east, north), np.arange(n), True
        ends = np.flatnonzero(jump)
        self.t[offset[ends]] = self.times[ends]
        self.r[offset[ends]] = np.hypot(east_l[ends], north_l[ends])
        self.piece[offset[ends]], self.before_jump[offset[ends]] = ends - 1, True
        pieces = np.flatnonzero(inside)
        mid = at[pieces] + 1
        dt = np.diff(self.times)[pieces] if pieces.size else np.zeros(0)
        self.t[mid] = self.times[pieces] + frac[pieces] * dt
        self.r[mid], self.piece[mid] = least[pieces], pieces

    def __len__(self) -> int:
        return int(self.t.size)

    def least(self) -> tuple[float, float]:
        """``(time, range_m)`` of the least geodesic range over the span: :func:`closest_approach`'s
        answer, from the planar pass already made."""
        if self.times.size == 1:
            return self.span[0], float(range_m(self.a, self.b, self.times)[0])
        return _least(self.a, self.b, self.times, self._piece_least)

    def exact(self, points: IntArray) -> FloatArray:
        """The geodesic range (m) at ``points`` (just before the jump for a point before one)."""
        return range_m(self.a, self.b, self.t[points] - np.where(self.before_jump[points], _BEFORE_JUMP_S, 0.0))

    def refine(self, points: IntArray) -> tuple[FloatArray, FloatArray]:
        """The time and geodesic range (m) of the least range at or round each of ``points`` (each a
        local minimum of the planar ranges): searched in the piece it lies in, or for a vertex in
        the pieces either side of it, the vertex itself a candidate."""
        owner_parts, lo_parts, hi_parts = [], [], []
        last_piece = self.times.size - 2
        for side in (-1, 0):  # the piece before a vertex, and the piece a point starts or lies in
            piece = self.piece[points] + (np.where(self.vertex[points], side, 0) if side else 0)
            use = (piece >= 0) & (piece <= last_piece) & (self.vertex[points] | (side == 0))
            owner_parts.append(np.flatnonzero(use))
            lo_parts.append(self.times[piece[use]])
            hi_parts.append(self.times[piece[use] + 1])
        owner = np.concatenate(owner_parts)
        lo, hi = np.concatenate(lo_parts), np.concatenate(hi_parts)
        found = least_range_times(self.a, self.b, lo, hi)
        vertex_points = np.flatnonzero(self.vertex[points])
        owner = np.concatenate((owner, vertex_points))
        cand_t = np.concatenate((found, self.t[points[vertex_points]]))
        cand_r = range_m(self.a, self.b, cand_t)
        order = np.lexsort((cand_r, owner))  # by point, least range first
        first = order[np.concatenate(([True], owner[order][1:] != owner[order][:-1]))]
        return cand_t[first], cand_r[first]

    def crossings(self, lo_points: IntArray, threshold_m: float, leaving: BoolArray) -> FloatArray:
        """The time at which the geodesic range passes ``threshold_m`` between each point of
        ``lo_points`` and the next point (the range is monotonic between consecutive points), by
        bisection to a millisecond; ``leaving``: whether the range rises through it there."""
        lo, hi = self.t[lo_points].copy(), self.t[lo_points + 1].copy()
        longest = float(np.max(hi - lo)) if lo.size else 0.0
        rounds = min(80, max(1, math.ceil(math.log2(max(longest, TIME_TOL_S) / TIME_TOL_S))))
        for _ in range(rounds):
            mid = (lo + hi) * 0.5
            within = range_m(self.a, self.b, mid) <= threshold_m
            # leaving: the crossing lies after the last instant still within; entering: before the first
            later = within == leaving
            lo, hi = np.where(later, mid, lo), np.where(later, hi, mid)
        out: FloatArray = (lo + hi) * 0.5
        return out
