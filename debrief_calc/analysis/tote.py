"""``tote``: legacy Debrief's tote, the primary track against each secondary at one time: range,
bearing, relative bearing, angle on the bow, bearing rate, and the course and speed of each."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    lonlat_list,
    motion_at,
    num,
    result_feature,
    source_ref,
    turn_rate_at,
)
from debrief_calc.analysis.range_bearing import (
    COLUMN_DECIMALS,
    COLUMNS,
    COURSE_AT_FIX,
    FIX_SLACK_S,
    PRIMARY_PARAM,
    SPEED_UNIT,
    columns,
    motion_changes,
    pick_primary,
    sight,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo.dm import position_dm
from debrief_calc.tracks.features import TrackData, iso, parse_iso, track_near
from debrief_calc.tracks.times import Window

#: the tote's range unit, as in legacy Debrief (the other tools default to nm)
DEFAULT_UNIT: Final = "yd"
#: the fields that hang on the platforms' motion, which at a fix differ with the leg taken
_MOTION_FIELDS: Final = tuple(c for c in COLUMNS if c not in ("time", "range", "bearing", "secondary_depth"))


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
    """Whether the track has data at ``when`` (a time printed to the millisecond means that instant)."""
    return Window(near.start, near.end).contains(when)


def _holds(track: TrackData, when: float) -> bool:
    """Whether the fixes read (a piece of the track round the tote's time) span ``when``."""
    return float(track.t[0]) <= when <= float(track.t[-1])


def _fix_near(track: TrackData, when: float) -> float | None:
    """The time of the track's fix within :data:`FIX_SLACK_S` of ``when``, if any."""
    i = int(np.searchsorted(track.t, when))
    near = [float(track.t[j]) for j in (i - 1, i) if 0 <= j < track.t.size]
    best = min(near, key=lambda f: abs(f - when), default=None)
    return best if best is not None and abs(best - when) <= FIX_SLACK_S else None


def _fixes(primary: TrackData, secondary: TrackData, when: float) -> dict[str, float]:
    """The platforms with a fix at ``when`` (within :data:`FIX_SLACK_S`), by id, and its time."""
    return {t.id: f for t in (primary, secondary) if (f := _fix_near(t, when)) is not None}


def _at_fix(
    pair: tuple[TrackData, Legs, TrackData, Legs], when: float, fixes: dict[str, float], row: dict[str, Any], unit: str
) -> tuple[dict[str, Any], str | None]:
    """Whether ``when`` is on a fix of either platform (``row`` holds the legs' after it), and
    there, when the legs before it move otherwise, the values from those legs (``before``) and a
    note saying so: a rate or a course at a fix in a turn is one-sided."""
    primary, p_legs, secondary, s_legs = pair
    out: dict[str, Any] = {"at_fix": bool(fixes)}
    if not fixes:
        return out, None
    out["at_fix_of"] = list(fixes)
    behind = min(when, *fixes.values()) - FIX_SLACK_S
    if not _holds(p_legs.motion.track, behind) or not _holds(s_legs.motion.track, behind):
        return out, None  # a track starts here: there is no leg before
    s = sight(primary, p_legs, secondary, s_legs, np.array([when]), np.array([behind]))
    before = {k: v[0] for k, v in columns(s, unit).items()}
    changed = motion_changes(row, before)
    if not changed:
        return out, None
    out["before"] = {k: before[k] for k in _MOTION_FIELDS}
    who = " and ".join(
        (primary.name or primary.id) if w == "primary" else (secondary.name or secondary.id) for w in changed
    )

    def rate(values: dict[str, Any]) -> str:
        value = values["bearing_rate"]
        return "-" if value is None else f"{value:+.2f}°/min {values['bearing_rate_side'] or ''}".rstrip()

    out["note"] = (
        f"on a fix where {who} changed course or speed: the row is the legs after it, before the legs before "
        f"(bearing rate {rate(before)} before, {rate(row)} after); ask between fixes for one value"
    )
    return out, out["note"]


def _motion(legs: Legs, when: float) -> dict[str, Any]:
    """A ship's course (°T), speed (kn) and rate of turn (°/min, + starboard) on the leg it sails at ``when``."""
    at = np.array([when])
    speed, course = motion_at(legs, at)
    return {
        "course": num(course[0], COLUMN_DECIMALS["primary_course"]),
        "speed": num(speed[0] / KNOT_MPS, COLUMN_DECIMALS["primary_speed"]),
        "rate_of_turn": num(turn_rate_at(legs, at)[0], COLUMN_DECIMALS["primary_rate_of_turn"]),
    }


def _own_ship(inp: ToolInput, near: _Near, when: float, source: str) -> ToolOutput:
    """One track: the ship's own state at ``when``: position (with degrees and minutes), course,
    speed and rate of turn; on a fix, those of the leg after it, and the leg before's beside them."""
    track = near.track
    legs = Legs(track)
    lat, lon = geodesy.interpolate_track(track.t, track.lat, track.lon, np.array([when]))
    position = [float(lon[0]), float(lat[0])]
    fix = _fix_near(legs.motion.track, when)
    props: dict[str, Any] = {
        "track_id": track.id,
        "track_name": track.name or track.id,
        "time": iso(when),
        "time_source": source,
        "position": position,
        "position_dm": position_dm(position),
        **_motion(legs, when if fix is None else max(when, fix)),
        "speed_unit": SPEED_UNIT,
        "rate_of_turn_unit": "deg/min",
        "at_fix": fix is not None,
    }
    if fix is not None:
        behind = fix - FIX_SLACK_S
        if _holds(legs.motion.track, behind):
            props["before"] = _motion(legs, behind)
            props["note"] = (
                "on a fix: course, speed and rate of turn are the leg after it; before gives the leg before "
                "(ask between fixes for one value)"
            )
        else:
            props["note"] = "on the track's first fix: course and speed are the leg after it"
    title = f"{track.name or track.id} at {iso(when)}"
    feature = result_feature(title, {"type": "Point", "coordinates": position}, props)
    return ToolOutput(features=[feature], feature_sources=[[source_ref(inp.features[0], 0)]], warnings=[])


def handle(inp: ToolInput) -> ToolOutput:
    params = inp.parameters
    when, source = _when(inp)
    tracks = _read(inp, when)
    p_index = pick_primary([t.track for t in tracks], params["primary"])
    primary = tracks[p_index].track
    if not _covers(tracks[p_index], when):
        raise _outside(when, source, tracks, f"the primary {primary.name or primary.id}'s track")
    when = Window(tracks[p_index].start, tracks[p_index].end).clamp(when)  # a printed end: that very fix
    if len(tracks) == 1:
        return _own_ship(inp, tracks[0], when, source)
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
            s_legs = Legs(secondary)
            fixes = _fixes(p_legs.motion.track, s_legs.motion.track, when)  # a window's cut is no fix
            moving = np.array([max(when, *fixes.values())]) if fixes else None  # on a fix: the legs after it
            s = sight(primary, p_legs, secondary, s_legs, at, moving)
            row = {name: values[0] for name, values in columns(s, unit).items()}
            props.update(row)
            props.update(
                distance_unit=unit, bearing_rate_unit="deg/min", speed_unit=SPEED_UNIT, course_at_fix=COURSE_AT_FIX
            )
            fix, note = _at_fix((primary, p_legs, secondary, s_legs), when, fixes, row, unit)
            props.update(fix)
            if note is not None:
                warnings.append(f"{secondary.id}: the time is on a fix in a turn; the row's note and before say more")
            line = lonlat_list(np.array([s.p_lon[0], s.s_lon[0]]), np.array([s.p_lat[0], s.s_lat[0]]))
            props.update(primary_position_dm=position_dm(line[0]), secondary_position_dm=position_dm(line[1]))
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
        "One track: that ship's own state at the time: position (position_dm in degrees and minutes), course, "
        "speed (kn), rate_of_turn (deg/min, + starboard); on a fix (at_fix) the leg after it, with before "
        "{course, speed, rate_of_turn} the leg before. "
        "Legacy Debrief's tote: a primary track (the first, or 'primary') against each other track at one time "
        "(parameters.time, ISO-8601; default the current time of the plot the features came from). One small "
        "result per secondary: range (yd unless distance_unit says otherwise), true bearing, relative_bearing "
        "(+-180 from the primary's course, negative to port) with relative_bearing_side R (red, port) or G "
        "(green, starboard), atb (angle on the bow: the primary's relative bearing from the secondary) with "
        "atb_side R/G, bearing_rate (deg/min, positive drawing right) with bearing_rate_side L/R, range_rate (kn, "
        "positive opening), primary_course, primary_speed, secondary_course, secondary_speed (kn), "
        "primary_rate_of_turn, secondary_rate_of_turn (deg/min, positive to starboard), secondary_depth (m), and "
        "both positions in degrees and minutes (primary_position_dm, secondary_position_dm). Positions are interpolated "
        "along the geodesic between fixes; at a fix time the course and speed are the leg after's (at a "
        "track's last fix: the leg before), course_at_fix says so. at_fix says whether the time is on a fix "
        "(within 1 ms) of either ship (at_fix_of: whose), i.e. whether that convention applied; where the "
        "legs before the fix move otherwise (course by more than 2 deg or speed by more than 0.5 kn) the "
        "row also gives before {relative_bearing, atb, bearing_rate, primary_course, ... with their sides}: "
        "the values from the legs before, and a note (a rate at a fix in a turn is one-sided: ask between "
        "fixes for one value). A secondary with no data then gets a note instead. The fields are range-bearing's series columns by the same names; the geometry is the line "
        "of sight."
    ),
    version="1.2.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    context_type="multi",
    also_accepts=("single",),
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
