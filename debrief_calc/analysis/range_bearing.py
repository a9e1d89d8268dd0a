"""``range-bearing``: range, bearings and bearing rate from a primary track to each other
track over the time they share, as legacy Debrief's tote shows them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    lonlat_list,
    motion_at,
    num,
    num_list,
    overlap,
    range_rate_mps,
    read_tracks,
    require,
    result_feature,
    source_ref,
    turn_rate_at,
    velocity,
    wrap180,
)
from debrief_calc.analysis.crossings import CROSSINGS_TEXT, crossings
from debrief_calc.analysis.passes import (
    PASS_PARAMS,
    PassRule,
    least_summary,
    pass_entries,
    range_shape,
    rule_from,
    trend_fields,
)
from debrief_calc.analysis.range_profile import Profile, coarse_pieces, least_range_times
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo import geodesy
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso, iso_many
from debrief_calc.tracks.naming import resolve_track

FloatArray = np.ndarray[Any, np.dtype[np.float64]]

DEFAULT_INTERVAL_S = 60.0


def bearing_rate_deg_min(
    bearing: FloatArray,
    range_m: FloatArray,
    own: tuple[FloatArray, FloatArray],
    target: tuple[FloatArray, FloatArray],
) -> FloatArray:
    """Rate of change of the true bearing from ownship to target, degrees per minute,
    positive drawing right: ``((Vt sin Ct - Vo sin Co) cos B - (Vt cos Ct - Vo cos Co) sin B) / R``
    with speeds in m/s, courses and B in degrees, R in metres."""
    oe, on = velocity(*own)
    te, tn = velocity(*target)
    b = np.radians(bearing)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = ((te - oe) * np.cos(b) - (tn - on) * np.sin(b)) / np.where(range_m > 0, range_m, np.nan)
    out: FloatArray = np.degrees(rate) * 60.0
    return out


def _thin(total: int, cap: int) -> NDArray[np.int64]:
    """``cap`` indices spread evenly over ``range(total)``, first and last included."""
    return np.unique(np.round(np.linspace(0, total - 1, cap)).astype(np.int64))


#: seconds within which a time counts as on a multiple of the interval (float rounding)
_ALIGN_SLACK_S = 1e-6


def sample_times(
    primary: TrackData, span: tuple[float, float], mode: str, interval: float, cap: int
) -> tuple[FloatArray, int]:
    """The sample times (at most ``cap``, thinned evenly) and how many there were in all.

    ``interval`` samples fall on round multiples of the interval in UTC (600 s: 09:00, 09:10 …;
    3600 s: on the hour), not on the span's start: an analyst asks for "every 10 minutes", and
    two runs over different spans sample the same instants. None may fall inside a span
    shorter than the interval."""
    start, end = span
    if mode == "endpoints":
        times: FloatArray = np.unique(np.array([start, end]))
    elif mode == "interval":
        first = math.ceil((start - _ALIGN_SLACK_S) / interval)  # in intervals since the epoch
        total = max(0, math.floor((end + _ALIGN_SLACK_S) / interval) - first + 1)
        index = _thin(total, cap) if total > cap else np.arange(total)
        return (first + index.astype(np.float64)) * interval, total
    else:
        t = primary.t
        times = np.unique(t[(t >= start) & (t <= end)])
    total = int(times.size)
    return (times[_thin(total, cap)] if total > cap else times), total


#: how the course (and speed) at a fix time is chosen; both range-bearing and tote say it
COURSE_AT_FIX: Final = "leg after (at a track's last fix: the leg before)"
#: seconds within which a time counts as on a fix (ISO text keeps milliseconds)
FIX_SLACK_S: Final = 1e-3
#: a leg before a fix differs from the leg after when its course or speed differs by more than these
COURSE_CHANGE_DEG: Final = 2.0
SPEED_CHANGE_KN: Final = 0.5
SPEED_UNIT: Final = "kn"

PRIMARY_PARAM: Final = Parameter(
    "primary", "string", "The primary (ownship) track: its id or its name; default: the first feature."
)

#: the columns of range-bearing's series, and the fields of a tote row, by the same names
COLUMNS: Final = (
    "time",
    "range",
    "bearing",
    "relative_bearing",
    "relative_bearing_side",
    "atb",
    "atb_side",
    "bearing_rate",
    "bearing_rate_side",
    "range_rate",
    "primary_course",
    "primary_speed",
    "primary_rate_of_turn",
    "secondary_course",
    "secondary_speed",
    "secondary_rate_of_turn",
    "secondary_depth",
)


@dataclass(frozen=True)
class Sight:
    """The two platforms at some times: positions, the line of sight from the primary and both
    motions (speeds m/s, courses and bearings degrees; NaN where there is none)."""

    times: FloatArray
    p_lat: FloatArray
    p_lon: FloatArray
    s_lat: FloatArray
    s_lon: FloatArray
    range_m: FloatArray
    bearing: FloatArray
    back: FloatArray  # true bearing of the primary from the secondary
    p_speed: FloatArray
    p_course: FloatArray
    s_speed: FloatArray
    s_course: FloatArray
    s_depth: FloatArray  # metres, between fixes linearly; NaN where the track gives none
    p_turn: FloatArray  # rates of turn, degrees per minute, positive to starboard
    s_turn: FloatArray

    @property
    def rate(self) -> FloatArray:
        return bearing_rate_deg_min(
            self.bearing, self.range_m, (self.p_speed, self.p_course), (self.s_speed, self.s_course)
        )

    @property
    def range_rate(self) -> FloatArray:
        """m/s, positive opening."""
        return range_rate_mps(self.bearing, (self.p_speed, self.p_course), (self.s_speed, self.s_course))


def sight(
    primary: TrackData,
    p_legs: Legs,
    secondary: TrackData,
    s_legs: Legs,
    times: FloatArray,
    motion_times: FloatArray | None = None,
) -> Sight:
    """The platforms at ``times`` (positions along the geodesic between fixes), each moving as on
    the leg it is on at ``motion_times`` (default ``times``: at a fix, the leg after it)."""
    p_lat, p_lon = geodesy.interpolate_track(primary.t, primary.lat, primary.lon, times)
    s_lat, s_lon = geodesy.interpolate_track(secondary.t, secondary.lat, secondary.lon, times)
    rng, bearing, az_at_s = geodesy.inverse(p_lat, p_lon, s_lat, s_lon)
    together = rng == 0  # no line of sight, so no bearing
    bearing = np.where(together, np.nan, bearing)
    back = np.where(together, np.nan, (az_at_s + 180.0) % 360.0)
    at = times if motion_times is None else motion_times
    p_speed, p_course = motion_at(p_legs, at)
    s_speed, s_course = motion_at(s_legs, at)
    s_depth = np.full(times.shape, np.nan)
    if secondary.depth is not None and len(secondary):
        inside = (times >= secondary.t[0]) & (times <= secondary.t[-1])
        s_depth[inside] = np.interp(times[inside], secondary.t, secondary.depth)
    p_turn, s_turn = turn_rate_at(p_legs, at), turn_rate_at(s_legs, at)
    return Sight(
        times,
        p_lat,
        p_lon,
        s_lat,
        s_lon,
        rng,
        bearing,
        back,
        p_speed,
        p_course,
        s_speed,
        s_course,
        s_depth,
        p_turn,
        s_turn,
    )


def sides(values: list[float | None], negative: str, positive: str, *, astern: bool = False) -> list[str | None]:
    """The side each (rounded) value is on: ``negative`` below 0, ``positive`` above; None at 0,
    for None, and (``astern``) at 180, which is on neither side."""
    return [
        None if v is None or v == 0 or (astern and abs(v) == 180) else (negative if v < 0 else positive) for v in values
    ]


#: the decimals each numeric column keeps in an answer (the range's hang on its unit)
COLUMN_DECIMALS: Final = {
    "bearing": 4,
    "relative_bearing": 4,
    "atb": 4,
    "bearing_rate": 5,
    "range_rate": 4,
    "primary_course": 4,
    "primary_speed": 4,
    "primary_rate_of_turn": 3,
    "secondary_course": 4,
    "secondary_speed": 4,
    "secondary_rate_of_turn": 3,
    "secondary_depth": 2,
}


def column_values(s: Sight, unit: str) -> dict[str, FloatArray]:
    """The numeric columns of :data:`COLUMNS` as arrays (NaN where there is none), unrounded:
    distances in ``unit``, speeds in knots, relative bearing and ATB +-180 (negative to port),
    bearing rate in degrees per minute (negative drawing left), range rate in knots (positive
    opening), rates of turn in degrees per minute (positive to starboard), depth in metres."""
    return {
        "range": s.range_m / METRES_PER_UNIT[unit],
        "bearing": s.bearing,
        "relative_bearing": wrap180(s.bearing - s.p_course),
        "atb": wrap180(s.back - s.s_course),
        "bearing_rate": s.rate,
        "range_rate": s.range_rate / KNOT_MPS,
        "primary_course": s.p_course,
        "primary_speed": s.p_speed / KNOT_MPS,
        "primary_rate_of_turn": s.p_turn,
        "secondary_course": s.s_course,
        "secondary_speed": s.s_speed / KNOT_MPS,
        "secondary_rate_of_turn": s.s_turn,
        "secondary_depth": s.s_depth,
    }


def columns(s: Sight, unit: str) -> dict[str, list[Any]]:
    """The values of :data:`COLUMNS`, JSON-ready (:func:`column_values` rounded, None for NaN), with
    the sides: relative bearing and ATB R (red, to port) or G (green, to starboard), bearing rate L
    (drawing left) or R (drawing right)."""
    values = column_values(s, unit)
    rounded = {name: num_list(v, COLUMN_DECIMALS.get(name, distance_decimals(unit))) for name, v in values.items()}
    out: dict[str, list[Any]] = {"time": iso_many(s.times)}
    for name in COLUMNS[1:]:
        if name.endswith("_side"):
            base = name.removesuffix("_side")
            negative, positive = ("L", "R") if base == "bearing_rate" else ("R", "G")
            out[name] = sides(rounded[base], negative, positive, astern=base != "bearing_rate")
        else:
            out[name] = rounded[name]
    assert tuple(out) == COLUMNS
    return out


#: pieces whose estimated peak bearing rate is within this fraction of the best are solved exactly
_PEAK_MARGIN: Final = 0.05
_MIN_PEAK_PIECES: Final = 8
_MAX_PEAK_PIECES: Final = 32


def peak_bearing_rate(
    primary: TrackData, p_legs: Legs, secondary: TrackData, s_legs: Legs, span: tuple[float, float]
) -> tuple[float, float] | None:
    """``(time, rate)`` of the bearing rate of largest magnitude within ``span``, or None when
    there is none (the platforms together or both still throughout).

    Between consecutive fix times of either track each platform keeps to one leg, so the relative
    motion is steady and the bearing rate, ``|r x v| / r^2``, is largest in magnitude where the
    range is least: at that piece's own closest approach (clipped to the piece) or at its ends.
    A planar pass estimates every piece's peak; the most promising pieces are then solved on the
    geodesic, each candidate evaluated with the motion of its own piece (at a piece's end, the
    limit from inside it)."""
    start, end = span
    a, b = primary.t, secondary.t
    inner = np.union1d(a[(a > start) & (a < end)], b[(b > start) & (b < end)])
    times = np.union1d(inner, [start, end])
    if times.size == 1:
        candidates = motion = times
    else:
        least, cross = coarse_pieces(primary, secondary, times)
        with np.errstate(divide="ignore", invalid="ignore"):
            est = np.nan_to_num(cross / (np.diff(times) * least * least), nan=0.0, posinf=np.inf)
        order = np.argsort(-est, kind="stable")
        near = int(np.count_nonzero(est >= est[order[0]] * (1.0 - _PEAK_MARGIN)))
        chosen = order[: min(max(near, _MIN_PEAK_PIECES), _MAX_PEAK_PIECES)]
        lo, hi = times[chosen], times[chosen + 1]
        mid = (lo + hi) * 0.5
        candidates = np.concatenate((lo, least_range_times(primary, secondary, lo, hi), hi))
        motion = np.concatenate((mid, mid, mid))
    rate = sight(primary, p_legs, secondary, s_legs, candidates, motion).rate
    if not np.isfinite(rate).any():
        return None
    k = int(np.nanargmax(np.abs(rate)))
    return float(candidates[k]), float(rate[k])


def motion_changes(row: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """Which platforms ("primary", "secondary") move otherwise on the legs before a fix than on
    the legs after it, from two rows of :func:`columns` (``before``: with the legs before)."""
    changed = []
    for who in ("primary", "secondary"):
        c0, c1 = before[f"{who}_course"], row[f"{who}_course"]
        v0, v1 = before[f"{who}_speed"], row[f"{who}_speed"]
        turned = c0 is not None and c1 is not None and abs(((c1 - c0 + 180.0) % 360.0) - 180.0) > COURSE_CHANGE_DEG
        if (
            turned
            or (v0 is not None and v1 is not None and abs(v1 - v0) > SPEED_CHANGE_KN)
            or (c0 is None) != (c1 is None)
        ):
            changed.append(who)
    return changed


def on_fixes(legs: Legs, times: FloatArray) -> NDArray[np.bool_]:
    """Whether each time is on a fix of the track (within :data:`FIX_SLACK_S`); the fixes of the
    original track, for one cut to a window (an edge interpolated at the cut is no fix)."""
    fixes = legs.motion.track.t
    i = np.clip(np.searchsorted(fixes, times), 1, max(fixes.size - 1, 1))
    gap = np.minimum(np.abs(fixes[i - 1] - times), np.abs(fixes[np.minimum(i, fixes.size - 1)] - times))
    out: NDArray[np.bool_] = gap <= FIX_SLACK_S
    return out


def _turn_rows(
    pair: tuple[TrackData, Legs, TrackData, Legs],
    times: FloatArray,
    at_fix: NDArray[np.bool_],
    series: dict[str, Any],
    unit: str,
) -> int:
    """How many rows on a fix have legs before it that move otherwise than the legs after (the row's)."""
    rows = np.flatnonzero(at_fix)
    if not rows.size:
        return 0
    primary, p_legs, secondary, s_legs = pair
    s = sight(primary, p_legs, secondary, s_legs, times[rows], times[rows] - FIX_SLACK_S)
    before = columns(s, unit)
    count = 0
    for k, r in enumerate(rows.tolist()):
        if motion_changes({c: series[c][r] for c in COLUMNS}, {c: before[c][k] for c in COLUMNS}):
            count += 1
    return count


def _passes(
    primary: TrackData, secondary: TrackData, span: tuple[float, float], unit: str, rule: PassRule
) -> dict[str, Any]:
    """The true CPA over the series' span, every pass in it and how the range ran (closest-approach's figures)."""
    profile = Profile(primary, secondary, span)
    cpa = profile.least()
    shape = range_shape(profile, rule)
    passes, cpa_pass = pass_entries(shape, cpa, unit, roles=("primary", "secondary"))
    shared = overlap(primary, secondary)
    inside = shared is not None and (span[0] > shared[0] or span[1] < shared[1])
    least = least_summary(shape, cpa, cpa_pass, unit, spans="series' span" if inside else None)
    out: dict[str, Any] = {
        "cpa_range": num(cpa[1] / METRES_PER_UNIT[unit], distance_decimals(unit)),
        "cpa_time": iso(cpa[0]),
        "cpa_at_edge": least["at_edge"],
        "cpa_is_pass": least["is_pass"],
    }
    if "note" in least and span[0] != span[1]:
        out["cpa_note"] = least["note"] + (" (closest-approach over the whole shared time)" if inside else "")
    out.update(pass_count=len(passes), passes=passes, pass_rule=rule.text())
    out["crossings"] = crossings(primary, secondary, span, unit)
    out.update(trend_fields(shape, passes, cpa, least, unit))
    return out


def _series(
    primary: TrackData, p_legs: Legs, secondary: TrackData, times: FloatArray, unit: str, rule: PassRule
) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    s_legs = Legs(secondary)
    s = sight(primary, p_legs, secondary, s_legs, times)
    series = columns(s, unit)
    at_fix = on_fixes(p_legs, times) | on_fixes(s_legs, times)
    series["at_fix"] = at_fix.tolist()
    dd = distance_decimals(unit)
    span = (float(times[0]), float(times[-1]))
    closest = int(np.argmin(s.range_m))
    summary = _passes(primary, secondary, span, unit, rule)
    summary.update(
        min_sampled_range=num(s.range_m[closest] / METRES_PER_UNIT[unit], dd),
        min_sampled_range_time=iso(float(times[closest])),
    )
    turns = _turn_rows((primary, p_legs, secondary, s_legs), times, at_fix, series, unit)
    summary["turn_fix_rows"] = turns
    if turns:
        summary["turn_fix_note"] = (
            f"{turns} row(s) fall on a fix where a ship changed course or speed: their motion, bearing rate and "
            "ATB are the legs after it; the tote at that time gives the values before too"
        )
    peak = peak_bearing_rate(primary, p_legs, secondary, s_legs, span)
    rate = num(peak[1], 5) if peak is not None else None
    summary.update(
        peak_bearing_rate=rate,
        peak_bearing_rate_time=iso(peak[0]) if peak is not None else None,
        peak_bearing_rate_side=sides([rate], "L", "R")[0],
    )
    geometry = {
        "type": "LineString",
        "coordinates": lonlat_list(np.array([s.p_lon[0], s.s_lon[0]]), np.array([s.p_lat[0], s.s_lat[0]])),
    }
    return series, geometry, summary


def pick_primary(tracks: list[TrackData], name: str | None) -> int:
    """The index of the track ``name`` names (its id, or its unique name ignoring case), or 0
    (the first) when None."""
    if name is None:
        return 0
    return resolve_track(name, [(t.id, t.name) for t in tracks], "primary")


def sampling(sample: str | None, interval_s: float | None) -> tuple[str, float]:
    """The sampling mode and interval: interval_s alone means sample='interval'; with another
    mode named it is a mistake, said so."""
    if sample is None:
        sample = "all" if interval_s is None else "interval"
    require(
        interval_s is None or sample == "interval",
        f"interval_s applies only to sample='interval', and sample is {sample!r}: drop interval_s, "
        "or drop sample (interval_s alone samples every interval_s seconds)",
        "interval_s",
        "applies-to",
        sample=sample,
    )
    return sample, DEFAULT_INTERVAL_S if interval_s is None else float(interval_s)


def handle(inp: ToolInput) -> ToolOutput:
    params = inp.parameters
    tracks = read_tracks(inp.features)
    primary_index = pick_primary(tracks, params["primary"])
    mode, interval = sampling(params["sample"], params["interval_s"])
    unit = params["distance_unit"]
    cap = params["max_samples"]
    primary = tracks[primary_index]
    p_legs = Legs(primary)

    spans = {i: overlap(primary, t) for i, t in enumerate(tracks) if i != primary_index}
    require(
        any(s is not None for s in spans.values()),
        f"no time overlap: primary {primary.id!r} ({iso(float(primary.t[0]))} to {iso(float(primary.t[-1]))}) "
        "shares no time with any other track",
        "features",
        "overlap",
    )
    features, sources, warnings = [], [], []
    for i, span in spans.items():
        secondary = tracks[i]
        props: dict[str, Any] = {
            "primary_id": primary.id,
            "secondary_id": secondary.id,
            "primary_name": primary.name or primary.id,
            "secondary_name": secondary.name or secondary.id,
            "distance_unit": unit,
            "bearing_rate_unit": "deg/min",
            "speed_unit": SPEED_UNIT,
            "course_at_fix": COURSE_AT_FIX,
            "sample": mode,
        }
        geometry = None
        if span is None:
            props.update(sample_count=0, note="no time overlap with the primary")
            warnings.append(f"track {secondary.id!r} shares no time with primary {primary.id!r}")
        else:
            times, total = sample_times(primary, span, mode, interval, cap)
            if total > cap:
                warnings.append(f"{secondary.id!r}: {total} samples thinned evenly to max_samples={cap}")
            props.update(
                overlap_start=iso(span[0]),
                overlap_end=iso(span[1]),
                sample_count=int(times.size),
                samples_total=total,
                samples_capped=total > cap,
            )
            if mode == "interval":
                props["interval_s"] = interval
            if times.size:
                series, geometry, summary = _series(primary, p_legs, secondary, times, unit, rule_from(params))
                props.update(summary)
                props["series"] = series
            elif mode == "interval":
                props["note"] = (
                    f"no multiple of interval_s={interval:g} s falls inside the overlap: use a shorter interval_s"
                )
            else:
                props["note"] = "the primary has no fix inside the overlap: use sample='interval'"
        title = f"Range and bearing {primary.name or primary.id} to {secondary.name or secondary.id}"
        features.append(result_feature(title, geometry, props))
        sources.append([source_ref(inp.features[primary_index], primary_index), source_ref(inp.features[i], i)])
    return ToolOutput(features=features, feature_sources=sources, warnings=warnings)


SPEC = ToolSpec(
    name="range-bearing",
    description=(
        "Range, true bearing, relative bearing (+-180 from the primary's course, negative to port; "
        "relative_bearing_side R red/port, G green/starboard), angle on the bow (atb: the primary's "
        "relative bearing from the secondary, atb_side R/G), bearing rate (deg/min, positive drawing "
        "right; bearing_rate_side L/R) and range_rate (kn, positive opening) from a primary track (the first, or "
        "'primary') to each other track (named: primary_name, secondary_name), with both platforms' courses, speeds (kn) and rates of turn "
        "(*_rate_of_turn, deg/min, + starboard) derived from their positions; at a fix time the course "
        "and speed are the leg after's (at a track's last fix: the leg before), course_at_fix says so; a sample on a "
        "fix of either ship where it turns or changes speed is thus one-sided (the tote at that time gives both "
        "sides: at_fix, before), and a sample between fixes is not affected; the series' at_fix column says which rows "
        "are on a fix, the summary's turn_fix_rows how many of those are on a fix in a turn (turn_fix_note then points to "
        "the tote). Over a time window the motion at the window's ends is the whole track's (the cut keeps the fixes "
        "beyond it as window_edges), so a row does not depend on the window. secondary_depth (m) is the secondary's depth. "
        "Positions are interpolated along the geodesic at the primary's fix times, at round multiples of an "
        "interval or at the ends of the shared time span. One result per secondary, with the values as "
        "columns in properties.series (the same names as the tote's fields); its summary gives the least range "
        "between fixes over the series' span (cpa_range, cpa_time: a CPA only when cpa_is_pass; cpa_at_edge, "
        "cpa_note), its passes as closest-approach gives them (passes with each ship's course and speed, relative_speed_kn "
        "and peak_closing_kn; pass_count, pass_rule, lesser_dips, range_trend), the least sampled "
        "range (min_sampled_range, min_sampled_range_time: not the CPA) and the peak bearing rate between "
        "fixes (peak_bearing_rate, peak_bearing_rate_time, peak_bearing_rate_side), and "
        + CROSSINGS_TEXT.replace("the second", "the secondary").replace("the first", "the primary")
        + ". The geometry is the "
        "line of sight at the first sample."
    ),
    version="2.3.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(
        PRIMARY_PARAM,
        Parameter(
            "sample",
            "string",
            "When to sample: 'all' (the primary's fix times), 'interval' (every interval_s seconds) "
            "or 'endpoints' (start and end of the shared time span). Default: 'interval' when interval_s "
            "is given, else 'all'.",
            choices=("all", "interval", "endpoints"),
        ),
        Parameter(
            "interval_s",
            "number",
            "Sampling interval in seconds (60 when sample='interval' and it is not given); samples fall on round "
            "multiples of it in UTC (600: 09:00, 09:10 …), not on the overlap's start. Given alone it means "
            "sample='interval'; with sample 'all' or 'endpoints' it is refused.",
            unit="s",
            minimum=0,
            exclusive_minimum=True,
            maximum=86_400,
        ),
        Parameter(
            "max_samples",
            "integer",
            "Most samples per secondary; more are thinned evenly (first and last kept) and samples_capped says so.",
            default=5000,
            minimum=2,
            maximum=1_000_000,
        ),
        DISTANCE_UNIT_PARAM,
        *PASS_PARAMS,
    ),
    handler=handle,
)
