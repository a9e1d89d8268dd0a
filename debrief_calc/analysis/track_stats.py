"""``track-stats``: the statistics of each track given, from its positions and times."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    num,
    num_list,
    result_feature,
    source_ref,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso, iso_many, track_data

#: below this course steadiness (resultant / distance) a track turns too much for its mean
#: course to say much (NELSON's search pattern: 0.056)
STEADY_MIN: Final = 0.3
MEAN_COURSE_NOTE: Final = "the track turns a lot: its mean course says little"


def _bbox(lon: np.ndarray[Any, Any], lat: np.ndarray[Any, Any]) -> list[float]:
    west, east = float(lon.min()), float(lon.max())
    if lon.size > 1 and np.any(np.abs(np.diff(lon)) > 180.0):
        # the track crosses the antimeridian: west > east, as GeoJSON bboxes do
        shifted = np.where(lon < 0, lon + 360.0, lon)
        west, east = float(shifted.min()), float(shifted.max()) - 360.0
    return [west, float(lat.min()), east, float(lat.max())]


def _segments(legs: Legs, unit: str, limit: int) -> list[dict[str, Any]]:
    k = min(limit, len(legs))
    t = legs.track.t
    starts = iso_many(t[:k])
    ends = iso_many(t[1 : k + 1])
    dist = num_list(legs.dist[:k] / METRES_PER_UNIT[unit], distance_decimals(unit))
    speed = num_list(legs.speed[:k] / KNOT_MPS, 4)
    course = num_list(legs.course[:k], 4)
    return [
        {"from": a, "to": b, "distance": d, "speed_kn": v, "course": c}
        for a, b, d, v, c in zip(starts, ends, dist, speed, course, strict=True)
    ]


def statistics(
    track: TrackData, unit: str, *, include_segments: bool = False, max_segments: int = 1000
) -> tuple[dict[str, Any], list[str]]:
    """The statistics of a track already read, and warnings about what could not be computed."""
    legs = Legs(track)
    n = len(track)
    total_m = float(legs.dist.sum())
    duration = float(track.t[-1] - track.t[0])
    timed = legs.dt > 0
    zero_dt = int(legs.dt.size - np.count_nonzero(timed))
    max_speed = float(np.max(legs.speed[timed])) if timed.any() else None
    mean_speed = total_m / duration if duration > 0 else None

    # circular mean of the leg courses, each weighted by the leg's length: the direction of
    # the sum of the legs' (east, north) vectors
    east, north = float(legs.east.sum()), float(legs.north.sum())
    resultant = float(np.hypot(east, north))
    mean_course = float(np.degrees(np.arctan2(east, north))) % 360.0 if resultant > 0 else None

    dd = distance_decimals(unit)
    stats: dict[str, Any] = {
        "point_count": n,
        "start": iso(float(track.t[0])),
        "end": iso(float(track.t[-1])),
        "duration_s": num(duration, 3),
        "duration_hours": num(duration / 3600.0, 6),
        "distance": num(total_m / METRES_PER_UNIT[unit], dd),
        "distance_unit": unit,
        "distance_nm": num(total_m / 1852.0, 7),
        "mean_speed_kn": num(mean_speed / KNOT_MPS, 4) if mean_speed is not None else None,
        "max_speed_kn": num(max_speed / KNOT_MPS, 4) if max_speed is not None else None,
        "zero_time_legs_ignored": zero_dt,
        "mean_course": num(mean_course, 4),
        "course_steadiness": num(resultant / total_m, 6) if resultant > 0 else None,
        "bbox": _bbox(track.lon, track.lat),
        "time_source": track.time_field,
    }
    warnings = []
    steadiness = resultant / total_m if resultant > 0 else None
    if steadiness is not None and steadiness < STEADY_MIN:
        at = list(stats).index("course_steadiness") + 1  # next to the figures it is about
        items = list(stats.items())
        stats = dict([*items[:at], ("mean_course_note", MEAN_COURSE_NOTE), *items[at:]])
        warnings.append(
            f"track {track.id!r} turns a lot (course_steadiness {steadiness:.2f}, under {STEADY_MIN}): "
            "its mean course says little"
        )
    if duration == 0:
        warnings.append(f"track {track.id!r} spans no time: mean speed is undefined (null)")
    if zero_dt:
        warnings.append(f"{zero_dt} leg(s) of track {track.id!r} take no time; ignored for max speed")
    if include_segments:
        stats["segments"] = _segments(legs, unit, max_segments)
        stats["segments_truncated"] = len(legs) > max_segments
        stats["segment_count"] = len(legs)
    return stats, warnings


def handle(inp: ToolInput) -> ToolOutput:
    """One result per track given, each naming its own track as its source."""
    params = inp.parameters
    features, sources, warnings = [], [], []
    for i, feature in enumerate(inp.features):
        track = track_data(feature, index=i)
        stats, notes = statistics(
            track,
            params["distance_unit"],
            include_segments=params["include_segments"],
            max_segments=params["max_segments"],
        )
        name = track.name or track.id
        geometry = {"type": "Point", "coordinates": [float(track.lon[-1]), float(track.lat[-1])]}
        props = {"track_id": track.id, "track_name": track.name, "statistics": stats}
        features.append(result_feature(f"Statistics of {name}", geometry, props))
        sources.append([source_ref(feature, i)])
        warnings += notes
    return ToolOutput(features=features, feature_sources=sources, warnings=warnings)


SPEC = ToolSpec(
    name="track-stats",
    description=(
        "One track or several (one result per track): statistics from positions and times (stored "
        "speeds and courses are ignored): point count, start, end, duration, geodesic distance, mean speed "
        "(distance / duration), max leg speed (legs taking no time are ignored and counted), "
        "length-weighted circular mean course, course_steadiness (resultant / distance: 1 is a "
        f"straight line; under {STEADY_MIN} the track turns a lot, a warning and mean_course_note say its "
        "mean course says little), bounding box [w, s, e, n]; optional per-leg "
        "segments. Each result is a Point at its track's last fix."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="single",
    also_accepts=("multi",),
    parameters=(
        DISTANCE_UNIT_PARAM,
        Parameter(
            "include_segments",
            "boolean",
            "Include per-leg figures (from, to, distance, speed_kn, course) in statistics.segments.",
            default=False,
        ),
        Parameter(
            "max_segments",
            "integer",
            "Most legs listed when include_segments is true; segments_truncated says when more exist.",
            default=1000,
            minimum=1,
            maximum=1_000_000,
        ),
    ),
    handler=handle,
)
