"""Every pass of two tracks: each local minimum of the range worth the name, found between fixes.

The rule (:class:`PassRule`): a local minimum of the range is a *pass* when, on each side of it,
the range rises by at least ``pass_rise`` times the minimum's own range, and by at least
``pass_rise_m`` metres, before it falls lower again or the data (or the window) ends. A wobble of
noisy fixes rises by a few metres and is no pass; a minimum at the very start or end of the data
or window is never a pass (nor a CPA): it is "closest at the start (range opening)" or "at the
end (range closing)".

The minima are read from :class:`~debrief_calc.analysis.range_profile.Profile` (the planar shape of
the range at every fix time of either track and inside each piece between them) and pruned in
vectorised rounds: a minimum whose neighbouring minimum on one side is lower, with the range between
them rising by less than the margin, cannot be a pass; it goes, with the lower of the two maxima
beside it (the range between its neighbours then peaks at the higher). Removing one changes no other
minimum's verdict (the margin grows with the range), so the rounds may remove many at once; what is
left are the passes, each then solved on the geodesic. Beside each pass the answer gives the range
it closed from and opened to (the highest range since the pass or edge before it, and up to the
next): each exceeds the pass's range by at least the margin; how both ships moved at it (the
tote's course and speed, :func:`~debrief_calc.analysis.common.motion_at`), the speed of their
relative motion there (the range rate at a pass is nought by definition) and the peak closing rate
on its run-in.

The same pruning with a lower bar (a rise of ``dip_rise_m`` either side, no fraction) finds the
*lesser dips*: minima that are no pass but that the range rose from and fell back to; the
``range_trend`` text is told from those minima and the highs between them, so it never calls the
range monotonic across a dip deeper than ``dip_rise_m``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    KNOT_MPS,
    Legs,
    cut_by_window,
    distance_decimals,
    motion_at,
    num,
    range_rate_mps,
    velocity,
)
from debrief_calc.analysis.range_profile import FloatArray, IntArray, Profile
from debrief_calc.analysis.registry import Parameter
from debrief_calc.geo import geodesy
from debrief_calc.geo.dm import position_dm
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso

__all__ = [
    "PASS_PARAMS",
    "PassRule",
    "Shape",
    "edge_name",
    "least_summary",
    "lesser_dips",
    "moments",
    "pass_entries",
    "range_shape",
    "range_trend",
    "rule_from",
    "trend_fields",
]

DEFAULT_RISE: Final = 0.5
DEFAULT_RISE_M: Final = 100.0
DEFAULT_DIP_RISE_M: Final = 10.0
#: at most this many lesser dips (the lowest) are solved and told; the answer says how many there were
MAX_DIPS: Final = 20
#: a range that varies by no more than this (m) over the span did not change
_FLAT_M: Final = 1e-3

PASS_PARAMS: Final = (
    Parameter(
        "pass_rise",
        "number",
        "A pass: a range minimum from which the range rises by at least this fraction of it (and pass_rise_m) on "
        "both sides before falling lower.",
        default=DEFAULT_RISE,
        minimum=0,
        maximum=100,
    ),
    Parameter(
        "pass_rise_m",
        "number",
        "Least rise, in metres, either side of a pass (a wobble of noisy fixes is no pass).",
        default=DEFAULT_RISE_M,
        unit="m",
        minimum=0,
    ),
    Parameter(
        "dip_rise_m",
        "number",
        "Least rise, in metres, either side of a lesser dip: a range minimum that is no pass, listed in lesser_dips "
        "and told in range_trend.",
        default=DEFAULT_DIP_RISE_M,
        unit="m",
        minimum=0,
    ),
)


@dataclass(frozen=True)
class PassRule:
    """How far the range must rise either side of a minimum for it to be a pass."""

    fraction: float = DEFAULT_RISE
    floor_m: float = DEFAULT_RISE_M
    dip_floor_m: float = DEFAULT_DIP_RISE_M

    def margin(self, r: FloatArray) -> FloatArray:
        out: FloatArray = np.maximum(r * self.fraction, self.floor_m)
        return out

    def text(self) -> str:
        return (
            f"a pass is a local minimum of range, between fixes, from which the range rises by at least "
            f"{self.fraction:g} x its own range and at least {self.floor_m:g} m on both sides before it falls lower "
            "again or the data end; a minimum at the start or end of the data or window is never a pass; a minimum "
            f"that is no pass but rises at least {self.dip_floor_m:g} m on both sides is a lesser dip"
        )


def rule_from(parameters: Any) -> PassRule:
    return PassRule(float(parameters["pass_rise"]), float(parameters["pass_rise_m"]), float(parameters["dip_rise_m"]))


@dataclass(frozen=True)
class Shape:
    """The passes of a profile: their points, and the points of the highest range before and after
    each (since the pass or the start before it, and up to the next pass or the end); and by the
    lower bar of ``dip_rise_m`` every minimum worth telling (``minima``: the passes and the lesser
    dips) with the highest range before, between and after them (``highs``, one more)."""

    profile: Profile
    passes: IntArray
    highs_before: IntArray
    highs_after: IntArray
    minima: IntArray
    highs: IntArray


def _extrema(v: FloatArray) -> tuple[IntArray, bool]:
    """The indices of the alternating extrema of ``v`` (both ends included; a flat run counts once,
    at its first point) and whether the first is a minimum."""
    idx = np.flatnonzero(np.concatenate(([True], np.diff(v) != 0)))
    w = v[idx]
    if w.size == 1:
        return idx, False
    mid = w[1:-1]
    turn = ((mid < w[:-2]) & (mid < w[2:])) | ((mid > w[:-2]) & (mid > w[2:]))
    return idx[np.concatenate(([True], turn, [True]))], bool(w[0] < w[1])


def _prune(m: FloatArray, mi: IntArray, big: FloatArray, bi: IntArray, rule: PassRule) -> tuple[IntArray, IntArray]:
    """Alternating minima ``m`` (first and last -inf: the ends) and maxima ``big`` between them, with
    their point indices; the minima that are passes, and the maxima left between them."""
    while m.size > 2:
        inner = m[1:-1]
        low, high = big[:-1], big[1:]
        margin = rule.margin(inner)
        # ties: of two equal minima the later is the one that goes
        gone = ((m[:-2] <= inner) & (low - inner < margin)) | ((m[2:] < inner) & (high - inner < margin))
        if not gone.any():
            break
        # of a run of neighbours that go, every other one this round: no two share a maximum
        starts = gone & ~np.concatenate(([False], gone[:-1]))
        run_start = np.flatnonzero(starts)[np.cumsum(starts) - 1]
        pick = np.flatnonzero(gone & ((np.arange(gone.size) - run_start) % 2 == 0))
        drop_big = np.where(low[pick] <= high[pick], pick, pick + 1)
        m, mi = np.delete(m, pick + 1), np.delete(mi, pick + 1)
        big, bi = np.delete(big, drop_big), np.delete(bi, drop_big)
    return mi[1:-1], bi


def range_shape(profile: Profile, rule: PassRule) -> Shape:
    """The passes of ``profile`` by ``rule``, and how the range runs at its ends."""
    none = np.zeros(0, dtype=np.intp)
    if len(profile) < 2:
        return Shape(profile, none, none, none, none, none)
    points, first_is_min = _extrema(profile.r)
    if points.size < 2:  # the range never changes
        return Shape(profile, none, none, none, none, none)
    start_min = first_is_min
    end_min = (points.size % 2 == 1) == first_is_min  # extrema alternate
    # the ends as minima of -inf: a minimum next to an end is judged by the rise up to that end
    values = profile.r[points]
    pad_front = [] if start_min else [-np.inf]
    pad_back = [] if end_min else [-np.inf]
    values = np.concatenate((pad_front, values, pad_back))
    points = np.concatenate(([-1] * len(pad_front), points, [-1] * len(pad_back))).astype(np.intp)
    values[0] = values[-1] = -np.inf
    passes, highs = _prune(values[0::2], points[0::2], values[1::2], points[1::2], rule)
    minima, dip_highs = _prune(values[0::2], points[0::2], values[1::2], points[1::2], PassRule(0.0, rule.dip_floor_m))
    return Shape(profile, passes, highs[:-1], highs[1:], minima, dip_highs)


def _solved(profile: Profile, points: IntArray, cpa: tuple[float, float]) -> tuple[FloatArray, FloatArray, int | None]:
    """The times and geodesic ranges of minima ``points``, and which of them is the least range (its
    figures then exactly the CPA's, so that the two never differ in the last digit)."""
    t, r = profile.refine(points) if points.size else (np.zeros(0), np.zeros(0))
    if not t.size:
        return t, r, None
    k = int(np.argmin(r))
    if r[k] - cpa[1] <= 0.01 and abs(t[k] - cpa[0]) <= max(1.0, float(np.max(np.diff(profile.times)))):
        t[k], r[k] = cpa
        return t, r, k
    return t, r, None


def moments(a: TrackData, b: TrackData, t: FloatArray, roles: Sequence[str]) -> list[dict[str, Any]]:
    """At each of times ``t``: the true bearing of ``b`` from ``a`` (None when together) and both
    positions, ``[lon, lat]`` and in degrees and minutes, keyed by ``roles`` ("first", "second")."""
    lat_a, lon_a = geodesy.interpolate_track(a.t, a.lat, a.lon, t)
    lat_b, lon_b = geodesy.interpolate_track(b.t, b.lat, b.lon, t)
    dist, bearing, _ = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)
    first, second = roles
    out = []
    for k in range(t.size):
        pa, pb = [float(lon_a[k]), float(lat_a[k])], [float(lon_b[k]), float(lat_b[k])]
        out.append(
            {
                "bearing": num(bearing[k] if dist[k] > 0 else np.nan, 4),
                f"{first}_position": pa,
                f"{first}_position_dm": position_dm(pa),
                f"{second}_position": pb,
                f"{second}_position_dm": position_dm(pb),
            }
        )
    return out


def _run_in_peaks(profile: Profile, ends: FloatArray, starts: FloatArray) -> FloatArray:
    """The profile vertex of the fastest closing between each ``starts[k]`` and ``ends[k]`` (NaN when
    the range never closes there). Between vertices each ship holds one leg, so the relative
    velocity is steady and the range rate only rises (``d/dt (v.r/|r|) = (|v|^2 - (v.r/|r|)^2)/|r|``):
    the fastest closing in a piece is at its start, with the legs after that vertex, as the tote has
    it. A planar pass picks the vertex; the caller solves the rate there on the geodesic."""
    times = profile.times
    lo = np.searchsorted(times, starts, side="left")
    hi = np.maximum(np.searchsorted(times, ends, side="left"), lo)
    # only the vertices on some run-in (each starts a piece: a run-in ends at its pass, inside or after it)
    at = np.concatenate([np.arange(a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)] or [np.zeros(0, int)])
    at = at[at < times.size - 1]
    east, north = profile.east[at], profile.north[at]
    # the piece's relative velocity, planar: its relative displacement over its duration
    de, dn, dt = profile.east_end[at + 1] - east, profile.north_end[at + 1] - north, times[at + 1] - times[at]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = (de * east + dn * north) / (dt * np.hypot(east, north))
    lo, hi = np.searchsorted(at, lo), np.searchsorted(at, hi)
    out = np.full(ends.shape, np.nan)
    for k in range(ends.size):
        piece = rate[lo[k] : hi[k]]
        if piece.size and np.isfinite(piece).any() and np.nanmin(piece) < 0:
            out[k] = times[at[lo[k] + int(np.nanargmin(piece))]]
    return out


def _motion_fields(
    profile: Profile, t: FloatArray, run_in_from: FloatArray, roles: Sequence[str]
) -> list[dict[str, Any]]:
    """At each pass (times ``t``): both ships' course and speed (the tote's: the leg they are on, at a
    fix the leg after), the speed of their relative motion, and the peak closing rate (knots, the
    tote's range rate negated) and its time on the run-in from ``run_in_from``."""
    legs = (Legs(profile.a), Legs(profile.b))
    speed_a, course_a = motion_at(legs[0], t)
    speed_b, course_b = motion_at(legs[1], t)
    (ae, an), (be, bn) = velocity(speed_a, course_a), velocity(speed_b, course_b)
    relative = np.hypot(be - ae, bn - an)
    peak_t = _run_in_peaks(profile, t, run_in_from)
    peak = np.full(t.shape, np.nan)
    has = np.flatnonzero(np.isfinite(peak_t))
    if has.size:
        at = peak_t[has]
        lat_a, lon_a = geodesy.interpolate_track(profile.a.t, profile.a.lat, profile.a.lon, at)
        lat_b, lon_b = geodesy.interpolate_track(profile.b.t, profile.b.lat, profile.b.lon, at)
        bearing = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)[1]
        peak[has] = -range_rate_mps(bearing, motion_at(legs[0], at), motion_at(legs[1], at))
    first, second = roles
    return [
        {
            f"{first}_course": num(course_a[k], 4),
            f"{first}_speed_kn": num(speed_a[k] / KNOT_MPS, 4),
            f"{second}_course": num(course_b[k], 4),
            f"{second}_speed_kn": num(speed_b[k] / KNOT_MPS, 4),
            "relative_speed_kn": num(relative[k] / KNOT_MPS, 4),
            "peak_closing_kn": num(peak[k] / KNOT_MPS, 4),
            "peak_closing_time": iso(float(peak_t[k])) if np.isfinite(peak_t[k]) else None,
        }
        for k in range(t.size)
    ]


def pass_entries(
    shape: Shape, cpa: tuple[float, float], unit: str, roles: Sequence[str] = ("first", "second")
) -> tuple[list[dict[str, Any]], int | None]:
    """One JSON-ready entry per pass, in time order: time, range (in ``unit``), bearing of the
    second from the first, both positions (and in degrees and minutes), whether it is between fixes,
    the range it closed from and opened to, how both ships moved (:func:`_motion_fields`); and the
    index of the one that is the CPA, if any."""
    profile = shape.profile
    a, b = profile.a, profile.b
    t, r, cpa_index = _solved(profile, shape.passes, cpa)
    if not t.size:
        return [], None
    at = moments(a, b, t, roles)
    highs = np.concatenate((shape.highs_before, shape.highs_after))
    high_r = profile.exact(highs)
    high_t = profile.t[highs]
    n = t.size
    motion = _motion_fields(profile, t, high_t[:n], roles)
    per, dd = METRES_PER_UNIT[unit], distance_decimals(unit)
    out = []
    for k in range(n):
        out.append(
            {
                "pass": k + 1,
                "time": iso(float(t[k])),
                "range": num(r[k] / per, dd),
                **at[k],
                "between_fixes": bool(t[k] not in a.t and t[k] not in b.t),
                "closing_from": {"range": num(high_r[k] / per, dd), "time": iso(float(high_t[k]))},
                "opening_to": {"range": num(high_r[n + k] / per, dd), "time": iso(float(high_t[n + k]))},
                **motion[k],
                "is_cpa": k == cpa_index,
            }
        )
    return out, cpa_index


@dataclass(frozen=True)
class Dips:
    """The lesser dips told: JSON-ready entries (time, range, is_least) in time order, their profile
    points, and how many there were in all (the lowest :data:`MAX_DIPS` are told)."""

    entries: list[dict[str, Any]]
    points: IntArray
    total: int


def lesser_dips(shape: Shape, cpa: tuple[float, float], unit: str) -> Dips:
    """The minima that rise ``dip_rise_m`` either side but are no pass, each solved on the geodesic;
    the one that is the least range (when that is no pass) has the CPA's figures."""
    profile = shape.profile
    points = np.setdiff1d(shape.minima, shape.passes)
    total = int(points.size)
    if total > MAX_DIPS:
        points = np.sort(points[np.argsort(profile.r[points], kind="stable")[:MAX_DIPS]])
    t, r, least = _solved(profile, points, cpa)
    per, dd = METRES_PER_UNIT[unit], distance_decimals(unit)
    entries = [{"time": iso(float(t[k])), "range": num(r[k] / per, dd), "is_least": k == least} for k in range(t.size)]
    return Dips(entries, points, total)


def _amount(metres: float, unit: str) -> str:
    value = metres / METRES_PER_UNIT[unit]
    return f"{value:.0f} {unit}" if abs(value) >= 1000 else f"{value:.4g} {unit}"


def range_trend(
    shape: Shape,
    entries: list[dict[str, Any]],
    dips: Dips,
    cpa: tuple[float, float],
    least: dict[str, Any],
    unit: str,
) -> str:
    """How the range ran, each turning point once and in order: '7595 yd at the start (…), closing to
    pass 1: 2412 yd at …, opening to 4155 yd at …, closing to pass 2: 119.5 yd at …, opening to 341.3 yd
    at …, closing to a lesser dip 270.3 yd at …, …, opening to 285.3 yd at the end (…)': the ends, every
    pass and lesser dip told, the highest range between each two, and the least range when it is
    neither. Between two turning points the range runs one way but for wobbles under ``dip_rise_m``."""
    profile = shape.profile
    per = METRES_PER_UNIT[unit]
    last = len(profile) - 1
    r_ends = profile.exact(np.array([0, last], dtype=np.intp))
    nodes: list[tuple[float, float, str, str]] = []  # (time, metres, what it is, time as told)
    told: list[int] = []
    for k, e in enumerate(entries):  # a pass at its time solved on the geodesic
        point = int(shape.passes[k])
        told.append(point)
        nodes.append((float(profile.t[point]), float(e["range"]) * per, f"pass {e['pass']}: ", e["time"]))
    for k, d in enumerate(dips.entries):
        point = int(dips.points[k])
        told.append(point)
        what = "the least range (not a pass) " if d["is_least"] else "a lesser dip "
        nodes.append((float(profile.t[point]), float(d["range"]) * per, what, d["time"]))
    if not least["is_pass"] and least["at_edge"] is None and not any(d["is_least"] for d in dips.entries):
        nodes.append((cpa[0], cpa[1], "the least range (not a pass) ", iso(cpa[0])))
    # between two minima told (and before the first, after the last): the highest range there
    bounds = [-1, *sorted(told), last + 1]
    highs = shape.highs
    peaks = []
    for lo, hi in itertools.pairwise(bounds):
        inside = highs[(highs > lo) & (highs < hi)]
        if inside.size:
            top = int(inside[int(np.argmax(profile.r[inside]))])
            if 0 < top < last:
                peaks.append(top)
    if peaks:
        at = np.array(peaks, dtype=np.intp)
        for point, metres in zip(peaks, profile.exact(at).tolist(), strict=True):
            t = float(profile.t[point])
            nodes.append((t, metres, "", iso(t)))
    nodes.sort(key=lambda node: node[0])
    parts = [f"{_amount(float(r_ends[0]), unit)} at the start ({iso(float(profile.t[0]))})"]
    before = float(r_ends[0])
    for node in nodes:
        way = "closing" if node[1] < before else "opening"
        parts.append(f"{way} to {node[2]}{_amount(node[1], unit)} at {node[3]}")
        before = node[1]
    way = "closing" if float(r_ends[1]) < before else "opening"
    parts.append(f"{way} to {_amount(float(r_ends[1]), unit)} at the end ({iso(float(profile.t[-1]))})")
    text = ", ".join(parts)
    if dips.total > len(dips.entries):
        text += f" ({dips.total - len(dips.entries)} higher lesser dips not told: raise dip_rise_m to drop them)"
    return text


def trend_fields(
    shape: Shape, entries: list[dict[str, Any]], cpa: tuple[float, float], least: dict[str, Any], unit: str
) -> dict[str, Any]:
    """The lesser dips and the range trend told from them, as closest-approach and range-bearing give them."""
    dips = lesser_dips(shape, cpa, unit)
    return {
        "lesser_dip_count": dips.total,
        "lesser_dips": dips.entries,
        "range_trend": range_trend(shape, entries, dips, cpa, least, unit),
    }


def edge_name(a: TrackData, b: TrackData, span: tuple[float, float], side: str) -> str:
    """``"window"`` when the span's ``side`` ("start"/"end") is where a time window cut a track, else
    ``"data"`` (a track's own first or last fix)."""
    at = span[0] if side == "start" else span[1]
    for track in (a, b):
        own = float(track.t[0] if side == "start" else track.t[-1])
        if own == at and cut_by_window(track, side):
            return "window"
    return "data"


def least_summary(
    shape: Shape, cpa: tuple[float, float], cpa_pass: int | None, unit: str, *, spans: str | None = None
) -> dict[str, Any]:
    """What the least range over the span is: ``at_edge`` ("start"/"end"/None), ``is_pass``, and
    when it is not a pass a ``note`` saying what it is instead: closest at the start (range opening)
    or end (range closing) of the data or window (or of ``spans``, what the span is when it is
    neither), or a minimum the range rose too little from."""
    profile = shape.profile
    a, b, span = profile.a, profile.b, profile.span

    def name_of(side: str) -> str:
        return spans if spans is not None else edge_name(a, b, span, side)

    t, r = cpa
    flat = len(profile) > 1 and float(np.ptp(profile.r)) <= _FLAT_M
    at_edge = None if flat else "start" if t == span[0] else "end" if t == span[1] else None
    out: dict[str, Any] = {"at_edge": at_edge, "is_pass": cpa_pass is not None}
    if span[0] == span[1]:
        out["note"] = "the tracks share one instant only: the range there is all there is to compare"
    elif flat:
        out["note"] = f"the range did not change: {_amount(r, unit)} throughout, so no pass and no CPA"
    elif at_edge == "start":
        out["note"] = (
            f"closest at the start of the {name_of('start')} (range opening): not a CPA; the range may "
            "have been less before it"
        )
    elif at_edge == "end":
        out["note"] = (
            f"closest at the end of the {name_of('end')} (range closing): not a CPA; the range may "
            "have closed further after it"
        )
    elif cpa_pass is None:
        k = int(np.searchsorted(profile.t, t))
        rise = {"before": float(np.max(profile.r[:k])) - r, "after": float(np.max(profile.r[k:])) - r}
        side = min(rise, key=lambda key: rise[key])
        edge_side = "start" if side == "before" else "end"
        out["note"] = (
            f"the least range, between fixes, but not a pass: the range rose only about {_amount(rise[side], unit)} "
            f"{side} it, up to the "
            f"{edge_side} of the {name_of(edge_side)}; it may have been less "
            f"{'before' if side == 'before' else 'after'} that"
        )
    return out
