"""``tote``: legacy Debrief's tote, the primary track against each secondary at one time: range,
bearing, relative bearing, angle on the bow, bearing rate, and the course and speed of each."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    Legs,
    lonlat_list,
    result_feature,
    source_ref,
)
from debrief_calc.analysis.range_bearing import (
    COURSE_AT_FIX,
    PRIMARY_PARAM,
    SPEED_UNIT,
    columns,
    pick_primary,
    sight,
)
from debrief_calc.errors import ValidationFailed
from debrief_calc.features import TrackData, iso, parse_iso, track_near
from debrief_calc.registry import Parameter, ToolInput, ToolOutput, ToolSpec

#: the tote's range unit, as in legacy Debrief (the other tools default to nm)
DEFAULT_UNIT: Final = "yd"


@dataclasses.dataclass(frozen=True)
class _Near:
    """A track as the tote reads it: the fixes around its time, and the track's first and last times."""

    track: TrackData
    start: float
    end: float


def _read(inp: ToolInput, when: float) -> list[_Near]:
    """Each track's fixes around ``when``: a few fixes read, not the whole track (one time asked)."""
    return [_Near(*track_near(f, when, index=i)) for i, f in enumerate(inp.features)]


def _span_text(near: _Near) -> str:
    t = near.track
    return f"{t.name or t.id} ({t.id}) has data from {iso(near.start)} to {iso(near.end)}"


def _shared(tracks: list[_Near]) -> tuple[float, float] | None:
    start = max(t.start for t in tracks)
    end = min(t.end for t in tracks)
    return (start, end) if start <= end else None


def _spans(tracks: list[_Near]) -> dict[str, list[str]]:
    return {t.track.id: [iso(t.start), iso(t.end)] for t in tracks}


def _when(inp: ToolInput) -> tuple[float, str]:
    """The time of the tote and where it came from: parameters.time, else the current time of the
    plot the features were read from; neither is a ValidationFailed giving the tracks' shared span."""
    given = inp.parameters["time"]
    if given is not None:
        try:
            return parse_iso(given), "parameters.time"
        except ValidationFailed:
            raise ValidationFailed(
                f"parameters.time {given[:60]!r} is not an ISO-8601 time (e.g. 1995-12-12T10:30:00Z)",
                details={"field": "time", "parameter": "time", "rule": "iso-8601", "value": given[:60]},
            ) from None
    if inp.current_time is not None:
        return inp.current_time, "the plot's current time"
    tracks = _read(inp, -math.inf)
    shared = _shared(tracks)
    where = (
        f"the tracks share {iso(shared[0])} to {iso(shared[1])}"
        if shared is not None
        else "the tracks share no time: " + "; ".join(_span_text(t) for t in tracks)
    )
    raise ValidationFailed(
        "give parameters.time (ISO-8601): the features did not come from a plot, whose current time the tote "
        f"would take; {where}",
        details={
            "field": "time",
            "parameter": "time",
            "rule": "required",
            "shared_span": [iso(shared[0]), iso(shared[1])] if shared is not None else None,
            "spans": _spans(tracks),
        },
    )


def _outside(when: float, source: str, tracks: list[_Near], who: str) -> ValidationFailed:
    shared = _shared(tracks)
    pick = (
        f"give parameters.time from {iso(shared[0])} to {iso(shared[1])}, the time all the tracks share"
        if shared
        else "give parameters.time inside the primary's track and a secondary's"
    )
    return ValidationFailed(
        f"{source} {iso(when)} is outside {who}: " + "; ".join(_span_text(t) for t in tracks) + f". {pick}",
        details={
            "field": "time",
            "parameter": "time",
            "rule": "within-tracks",
            "time": iso(when),
            "time_source": source,
            "shared_span": [iso(shared[0]), iso(shared[1])] if shared else None,
            "spans": _spans(tracks),
        },
    )


def _covers(near: _Near, when: float) -> bool:
    return near.start <= when <= near.end


def handle(inp: ToolInput) -> ToolOutput:
    params = inp.parameters
    when, source = _when(inp)
    tracks = _read(inp, when)
    p_index = pick_primary([t.track for t in tracks], params["primary"])
    primary = tracks[p_index].track
    if not _covers(tracks[p_index], when):
        raise _outside(when, source, tracks, f"the primary {primary.name or primary.id}'s track")
    others = [i for i in range(len(tracks)) if i != p_index]
    if not any(_covers(tracks[i], when) for i in others):
        raise _outside(when, source, tracks, "every secondary's track")
    unit = params["distance_unit"]
    at = np.array([when])
    p_legs = Legs(primary)
    features, sources, warnings = [], [], []
    for i in others:
        secondary = tracks[i].track
        title = f"Tote {primary.name or primary.id} / {secondary.name or secondary.id} at {iso(when)}"
        props: dict[str, Any] = {"primary_id": primary.id, "secondary_id": secondary.id, "time_source": source}
        if _covers(tracks[i], when):
            s = sight(primary, p_legs, secondary, Legs(secondary), at, None)
            row = {name: values[0] for name, values in columns(s, unit).items()}
            props.update(row)
            props.update(
                distance_unit=unit, bearing_rate_unit="deg/min", speed_unit=SPEED_UNIT, course_at_fix=COURSE_AT_FIX
            )
            line = lonlat_list(np.array([s.p_lon[0], s.s_lon[0]]), np.array([s.p_lat[0], s.s_lat[0]]))
            geometry: dict[str, Any] | None = {"type": "LineString", "coordinates": line}
        else:
            props.update(
                time=iso(when),
                note=f"no data at {iso(when)}: {_span_text(tracks[i])}",
                secondary_start=iso(tracks[i].start),
                secondary_end=iso(tracks[i].end),
            )
            geometry = None
            warnings.append(f"track {secondary.id!r} has no data at {iso(when)}: no tote row for it")
        features.append(result_feature(title, geometry, props))
        sources.append([source_ref(inp.features[p_index], p_index), source_ref(inp.features[i], i)])
    return ToolOutput(features=features, feature_sources=sources, warnings=warnings)


SPEC = ToolSpec(
    name="tote",
    description=(
        "Legacy Debrief's tote: a primary track (the first, or 'primary') against each other track at one time "
        "(parameters.time, ISO-8601; default the current time of the plot the features came from). One small "
        "result per secondary: range (yd unless distance_unit says otherwise), true bearing, relative_bearing "
        "(+-180 from the primary's course, negative to port) with relative_bearing_side R (red, port) or G "
        "(green, starboard), atb (angle on the bow: the primary's relative bearing from the secondary) with "
        "atb_side R/G, bearing_rate (deg/min, positive drawing right) with bearing_rate_side L/R, and "
        "primary_course, primary_speed, secondary_course, secondary_speed (kn). Positions are interpolated "
        "along the geodesic between fixes; at a fix time the course and speed are the leg after's (at a "
        "track's last fix: the leg before), course_at_fix says so. A secondary with no data then gets a note "
        "instead. The fields are range-bearing's series columns by the same names; the geometry is the line "
        "of sight."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    parameters=(
        PRIMARY_PARAM,
        Parameter(
            "time",
            "string",
            "The time of the tote, ISO-8601 (e.g. 1995-12-12T10:30:00Z). Default: the current time of the plot "
            "the features were read from (run_tool plot=...); required with inline or referenced features.",
        ),
        dataclasses.replace(
            DISTANCE_UNIT_PARAM,
            description=DISTANCE_UNIT_PARAM.description.replace("Unit of the distances", "Unit of the range")
            + " Default yd, as in legacy Debrief's tote.",
            default=DEFAULT_UNIT,
        ),
    ),
    handler=handle,
)
