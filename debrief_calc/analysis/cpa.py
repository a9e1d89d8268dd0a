"""``closest-approach``: the closest point of approach (CPA) of each pair of tracks, found
between fixes, not only at fix times.

Both tracks go on a common timeline (every fix time of either, inside the time they share),
so within each interval each platform moves along one leg. A coarse pass, vectorised over
every interval, treats the relative motion as linear in a local plane and finds each
interval's minimum analytically; the most promising intervals are then refined by
golden-section search on the exact geodesic range (positions interpolated along the geodesic
legs) and the winner is confirmed with :func:`debrief_calc.geo.geodesy.inverse`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    motion_at,
    num,
    overlap,
    read_tracks,
    require,
    result_feature,
    source_ref,
)
from debrief_calc.analysis.registry import ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo import geodesy
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso

FloatArray = np.ndarray[Any, np.dtype[np.float64]]

_E2: Final = geodesy.WGS84_F * (2 - geodesy.WGS84_F)
_GOLDEN: Final = (math.sqrt(5.0) - 1.0) / 2.0
_TIME_TOL_S: Final = 1e-3
_MIN_CANDIDATES: Final = 8
_MAX_CANDIDATES: Final = 32
# Intervals whose planar estimate is within this of the best are refined exactly: the planar
# range errs by well under 1% at the ranges where a CPA matters.
_REL_MARGIN: Final = 0.02
_ABS_MARGIN_M: Final = 50.0


def _range_m(a: TrackData, b: TrackData, t: FloatArray) -> FloatArray:
    lat_a, lon_a = geodesy.interpolate_track(a.t, a.lat, a.lon, t)
    lat_b, lon_b = geodesy.interpolate_track(b.t, b.lat, b.lon, t)
    dist: FloatArray = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)[0]
    return dist


def _planar(track: TrackData, t: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Latitude and (unwrapped) longitude at ``t``, linear between fixes: coarse positions."""
    lon = np.unwrap(track.lon, period=360.0)
    return np.interp(t, track.t, track.lat), np.interp(t, track.t, lon)


def coarse_pieces(a: TrackData, b: TrackData, times: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Estimated least range (m) within each interval of ``times``, and ``|r x d|`` there (m^2:
    the relative position at its start crossed with the relative displacement over it, which
    divided by the interval's duration and the least range squared is the largest bearing rate
    in it, rad/s), treating the relative motion as linear in a local plane."""
    lat_a, lon_a = _planar(a, times)
    lat_b, lon_b = _planar(b, times)
    mid = np.radians((lat_a + lat_b) * 0.5)
    s = np.sin(mid)
    w2 = 1.0 - _E2 * s * s
    w = np.sqrt(w2)
    dlon = (lon_b - lon_a + 180.0) % 360.0 - 180.0
    east = (geodesy.WGS84_A / w) * np.cos(mid) * np.radians(dlon)
    north = (geodesy.WGS84_A * (1.0 - _E2) / (w2 * w)) * np.radians(lat_b - lat_a)
    e0, n0 = east[:-1], north[:-1]
    de, dn = np.diff(east), np.diff(north)
    speed2 = de * de + dn * dn
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip(np.where(speed2 > 0, -(e0 * de + n0 * dn) / speed2, 0.0), 0.0, 1.0)
    est: FloatArray = np.hypot(e0 + frac * de, n0 + frac * dn)
    cross: FloatArray = np.abs(e0 * dn - n0 * de)
    return est, cross


def least_range_times(a: TrackData, b: TrackData, lo: FloatArray, hi: FloatArray) -> FloatArray:
    """Time of least geodesic range in each ``[lo, hi]`` (no fix of either track inside, so the
    range is unimodal there), by golden-section search to a millisecond, vectorised."""
    lo, hi = lo.copy(), hi.copy()
    c = hi - _GOLDEN * (hi - lo)
    d = lo + _GOLDEN * (hi - lo)
    fc, fd = _range_m(a, b, c), _range_m(a, b, d)
    longest = float(np.max(hi - lo)) if lo.size else 0.0
    rounds = min(80, max(0, math.ceil(math.log(max(longest, _TIME_TOL_S) / _TIME_TOL_S) / -math.log(_GOLDEN))))
    for _ in range(rounds):
        left = fc < fd
        hi = np.where(left, d, hi)
        lo = np.where(left, lo, c)
        new_c = hi - _GOLDEN * (hi - lo)
        new_d = lo + _GOLDEN * (hi - lo)
        probe = np.where(left, new_c, new_d)
        fp = _range_m(a, b, probe)
        c, d, fc, fd = (
            np.where(left, new_c, d),
            np.where(left, c, new_d),
            np.where(left, fp, fd),
            np.where(left, fc, fp),
        )
    out: FloatArray = (lo + hi) * 0.5
    return out


def closest_approach(a: TrackData, b: TrackData, span: tuple[float, float]) -> tuple[float, float]:
    """``(time, range_m)`` of the least geodesic range between ``a`` and ``b`` within ``span``."""
    start, end = span
    times = np.union1d(a.t[(a.t >= start) & (a.t <= end)], b.t[(b.t >= start) & (b.t <= end)])
    times = np.union1d(times, [start, end])
    if times.size == 1:
        return start, float(_range_m(a, b, times)[0])
    est = coarse_pieces(a, b, times)[0]
    order = np.argsort(est, kind="stable")
    near = int(np.searchsorted(est[order], est[order[0]] * (1 + _REL_MARGIN) + _ABS_MARGIN_M, side="right"))
    chosen = order[: min(max(near, _MIN_CANDIDATES), _MAX_CANDIDATES)]
    lo, hi = times[chosen], times[chosen + 1]
    best = least_range_times(a, b, lo, hi)
    candidates = np.concatenate((best, lo, hi))
    ranges = _range_m(a, b, candidates)
    k = int(np.argmin(ranges))
    return float(candidates[k]), float(ranges[k])


def _pair_result(a: TrackData, b: TrackData, span: tuple[float, float], unit: str) -> dict[str, Any]:
    t_cpa, _ = closest_approach(a, b, span)
    at = np.array([t_cpa])
    lat_a, lon_a = geodesy.interpolate_track(a.t, a.lat, a.lon, at)
    lat_b, lon_b = geodesy.interpolate_track(b.t, b.lat, b.lon, at)
    rng, bearing, _ = geodesy.inverse(lat_a, lon_a, lat_b, lon_b)
    speed_a, course_a = motion_at(Legs(a), at)
    speed_b, course_b = motion_at(Legs(b), at)
    pos_a = [float(lon_a[0]), float(lat_a[0])]
    pos_b = [float(lon_b[0]), float(lat_b[0])]
    first, second = a.name or a.id, b.name or b.id
    at_start, at_end = t_cpa == span[0], t_cpa == span[1]
    props = {
        "first_id": a.id,
        "second_id": b.id,
        "time": iso(t_cpa),
        "range": num(rng[0] / METRES_PER_UNIT[unit], distance_decimals(unit)),
        "distance_unit": unit,
        "bearing": num(bearing[0] if rng[0] > 0 else math.nan, 4),
        "bearing_of": f"{second} from {first}",
        "first_position": pos_a,
        "second_position": pos_b,
        "first_speed_kn": num(speed_a[0] / KNOT_MPS, 4),
        "first_course": num(course_a[0], 4),
        "second_speed_kn": num(speed_b[0] / KNOT_MPS, 4),
        "second_course": num(course_b[0], 4),
        "overlap_start": iso(span[0]),
        "overlap_end": iso(span[1]),
        "between_fixes": bool(t_cpa not in a.t and t_cpa not in b.t),
        # at an end of the shared span the platforms may still be closing: not a true CPA
        "at_overlap_edge": bool(at_start or at_end),
        "range_trend": _trend(at_start, at_end),
    }
    if at_start and at_end:
        props["note"] = "the tracks share one instant only: the range there is all there is to compare"
    elif at_start:
        props["note"] = (
            "closest at the start of the common period: the range was opening from then on "
            "(before it, when only one track has fixes, they may have been closer)"
        )
    elif at_end:
        props["note"] = (
            "closest at the end of the common period: the range was still closing then "
            "(after it, when only one track has fixes, they may have come closer)"
        )
    return result_feature(f"CPA {first} / {second}", {"type": "LineString", "coordinates": [pos_a, pos_b]}, props)


def _trend(at_start: bool, at_end: bool) -> str:
    """How the range runs at the CPA: opening after it (a CPA at the start of the common
    period), closing up to it (at the end), or both."""
    if at_start and at_end:
        return "one instant"
    if at_start:
        return "opening"
    if at_end:
        return "closing"
    return "closing, then opening"


def handle(inp: ToolInput) -> ToolOutput:
    tracks = read_tracks(inp.features)
    unit = inp.parameters["distance_unit"]
    pairs = list(itertools.combinations(range(len(tracks)), 2))
    spans = {(i, j): overlap(tracks[i], tracks[j]) for i, j in pairs}
    require(
        any(s is not None for s in spans.values()),
        "no time overlap: no two of the tracks "
        + ", ".join(f"{t.id!r} ({iso(float(t.t[0]))} to {iso(float(t.t[-1]))})" for t in tracks)
        + " share any time",
        "features",
        "overlap",
    )
    features, sources, warnings = [], [], []
    for (i, j), span in spans.items():
        a, b = tracks[i], tracks[j]
        if span is None:
            warnings.append(f"tracks {a.id!r} and {b.id!r} share no time: no CPA")
            props = {"first_id": a.id, "second_id": b.id, "time": None, "note": "no time overlap"}
            features.append(result_feature(f"CPA {a.name or a.id} / {b.name or b.id}", None, props))
        else:
            features.append(_pair_result(a, b, span, unit))
        sources.append([source_ref(inp.features[i], i), source_ref(inp.features[j], j)])
    return ToolOutput(features=features, feature_sources=sources, warnings=warnings)


SPEC = ToolSpec(
    name="closest-approach",
    description=(
        "Closest point of approach of each pair of tracks over the time they share, found "
        "between fixes (geodesic interpolation, refined to a millisecond): time, range, true "
        "bearing of the second from the first (bearing_of names them), both positions, speeds "
        "and courses at that moment. range_trend is 'closing, then opening' for a true CPA; "
        "at_overlap_edge marks a CPA at the start of the shared time (the range was opening from "
        "then on) or at its end (still closing), and a note says which. The geometry is the line "
        "between the two positions."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(DISTANCE_UNIT_PARAM,),
    handler=handle,
)
