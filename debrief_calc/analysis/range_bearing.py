"""``range-bearing``: range, bearings and bearing rate from a primary track to each other
track over the time they share, as legacy Debrief's tote shows them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from debrief_calc import geodesy
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
    read_tracks,
    require,
    result_feature,
    source_ref,
    wrap180,
)
from debrief_calc.features import TrackData, iso, iso_many
from debrief_calc.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.units import METRES_PER_UNIT

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
    with speeds in m/s, courses and B in degrees, R in metres. A platform that does not move
    (zero speed, no course) contributes no velocity."""

    def velocity(speed: FloatArray, course: FloatArray) -> tuple[FloatArray, FloatArray]:
        c = np.radians(course)
        still = speed == 0
        return np.where(still, 0.0, speed * np.sin(c)), np.where(still, 0.0, speed * np.cos(c))

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


def _series(
    primary: TrackData, p_legs: Legs, secondary: TrackData, times: FloatArray, unit: str
) -> tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any]]:
    p_lat, p_lon = geodesy.interpolate_track(primary.t, primary.lat, primary.lon, times)
    s_lat, s_lon = geodesy.interpolate_track(secondary.t, secondary.lat, secondary.lon, times)
    rng, bearing, az_at_s = geodesy.inverse(p_lat, p_lon, s_lat, s_lon)
    back = (az_at_s + 180.0) % 360.0  # true bearing of the primary from the secondary
    together = rng == 0  # no line of sight, so no bearing
    bearing = np.where(together, np.nan, bearing)
    back = np.where(together, np.nan, back)
    p_speed, p_course = motion_at(p_legs, times)
    s_speed, s_course = motion_at(Legs(secondary), times)
    rate = bearing_rate_deg_min(bearing, rng, (p_speed, p_course), (s_speed, s_course))
    dd = distance_decimals(unit)
    series = {
        "time": iso_many(times),
        "range": num_list(rng / METRES_PER_UNIT[unit], dd),
        "bearing": num_list(bearing, 4),
        "relative_bearing": num_list(wrap180(bearing - p_course), 4),
        "angle_on_bow": num_list(wrap180(back - s_course), 4),
        "bearing_rate": num_list(rate, 5),
        "primary_course": num_list(p_course, 4),
        "primary_speed_kn": num_list(p_speed / KNOT_MPS, 4),
        "secondary_course": num_list(s_course, 4),
        "secondary_speed_kn": num_list(s_speed / KNOT_MPS, 4),
    }
    closest = int(np.argmin(rng))
    summary = {
        "min_range": num(rng[closest] / METRES_PER_UNIT[unit], dd),
        "min_range_time": iso(float(times[closest])),
    }
    geometry = {
        "type": "LineString",
        "coordinates": lonlat_list(np.array([p_lon[0], s_lon[0]]), np.array([p_lat[0], s_lat[0]])),
    }
    return series, geometry, summary


def handle(inp: ToolInput) -> ToolOutput:
    params = inp.parameters
    tracks = read_tracks(inp.features)
    ids = [t.id for t in tracks]
    primary_index = 0
    if params["primary"] is not None:
        require(
            params["primary"] in ids,
            f"primary {params['primary']!r} is not one of the given tracks: {', '.join(ids)}",
            "primary",
            "exists",
            value=params["primary"],
            ids=ids,
        )
        primary_index = ids.index(params["primary"])
    mode = params["sample"]
    interval = params["interval_s"]
    require(
        interval is None or mode == "interval",
        f"interval_s applies only to sample='interval' (sample is {mode!r}): drop it or set sample to 'interval'",
        "interval_s",
        "applies-to",
    )
    interval = DEFAULT_INTERVAL_S if interval is None else float(interval)
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
            "distance_unit": unit,
            "bearing_rate_unit": "deg/min",
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
                series, geometry, summary = _series(primary, p_legs, secondary, times, unit)
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
        "Range, true bearing, relative bearing (+-180, negative to port), angle on the bow and "
        "bearing rate (deg/min, positive drawing right) from a primary track (the first, or "
        "'primary') to each other track, with both platforms' courses and speeds derived from "
        "their positions. The secondary is interpolated along the geodesic at the primary's "
        "times, at round multiples of an interval or at the ends of the shared time span. One result per "
        "secondary, with the values as columns in properties.series; its geometry is the line "
        "of sight at the first sample."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(
        Parameter("primary", "string", "Id of the primary (ownship) track; default: the first feature."),
        Parameter(
            "sample",
            "string",
            "When to sample: 'all' (the primary's fix times), 'interval' (every interval_s seconds) "
            "or 'endpoints' (start and end of the shared time span).",
            default="all",
            choices=("all", "interval", "endpoints"),
        ),
        Parameter(
            "interval_s",
            "number",
            "Sampling interval in seconds for sample='interval' (60 when not given); samples fall on round "
            "multiples of it in UTC (600: 09:00, 09:10 …), not on the overlap's start. Only with that mode.",
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
    ),
    handler=handle,
)
