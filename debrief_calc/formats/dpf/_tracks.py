"""A ``.dpf``'s ``<track>`` and ``<composite_track>`` elements: fixes (bare, in ``TrackSegment``,
``RelativeTMASegment``, ``AbsoluteTMASegment``, ``DynamicInfillSegment``, or a ``SegmentList`` of
them; a composite track's planning legs worked out from its origin and start time), and the
records of its ``<sensor>`` contacts, ``<tma>`` solutions and ``<DynamicShapeSet>`` coverage,
which hang off the track (:mod:`debrief_calc.formats.hosted`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from xml.etree.ElementTree import Element

from debrief_calc.formats.dpf._values import (
    DpfError,
    attr_bool,
    attr_number,
    child,
    children,
    colour_of,
    distance_m,
    location_of,
    tag,
    when,
)
from debrief_calc.formats.hosted.records import ArcLine, Cut, SolutionFix, Where
from debrief_calc.formats.hosted.sensors import SensorSettings
from debrief_calc.formats.rep._tokens import DateTimeReader
from debrief_calc.geo.geodesy import direct

__all__ = ["TrackRead", "read_track"]

_SEGMENTS: Final = ("TrackSegment", "RelativeTMASegment", "AbsoluteTMASegment", "DynamicInfillSegment")
_TMA_SEGMENTS: Final = frozenset(_SEGMENTS[1:])
_KN_MPS: Final = 1852.0 / 3600.0
_SPEED_UNITS: Final[dict[str, float]] = {"kts": 1.0, "kt": 1.0, "knots": 1.0, "m/s": 3600 / 1852, "mps": 3600 / 1852}
_DURATION_S: Final[dict[str, float]] = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0, "days": 86400.0}


@dataclass
class TrackRead:
    """One track of a plot: its feature (without an id) and its hosted records."""

    name: str
    feature: dict[str, Any] | None
    cuts: list[Cut] = field(default_factory=list)
    solutions: list[SolutionFix] = field(default_factory=list)
    arcs: list[ArcLine] = field(default_factory=list)
    settings: dict[tuple[str, str], SensorSettings] = field(default_factory=dict)


@dataclass
class _Fix:
    key: int
    time: str
    lon: float
    lat: float
    depth: float | None
    course: float | None
    speed: float | None
    label: str | None
    comment: str | None
    visible: bool


def _fix(element: Element, clock: DateTimeReader) -> _Fix:
    key, time = when(element, "Dtg", clock)
    where = location_of(child(element, "centre"))
    if where is None:
        raise DpfError(f"<fix Dtg={element.get('Dtg')!r}> has no <centre>")
    course = attr_number(element, "Course")
    return _Fix(
        key,
        time,
        where[0],
        where[1],
        where[2],
        None if course is None else course % 360.0,
        attr_number(element, "Speed"),
        element.get("Label"),
        element.get("Comment"),
        attr_bool(element, "Visible"),
    )


def _planned(element: Element, clock: DateTimeReader) -> list[_Fix]:
    """A composite track's fixes: its origin at its start time, then the end of each planning leg."""
    origin = location_of(child(element, "Origin"))
    if origin is None or not element.get("StartTime"):
        return []
    key, time = when(element, "StartTime", clock)
    lon, lat, t = origin[0], origin[1], key / 1e6
    from debrief_calc.tracks.times import iso

    out = [_Fix(key, time, lon, lat, origin[2], None, None, None, None, True)]
    for leg in children(element, "planning_segment"):
        course = attr_number(leg, "course") or 0.0
        distance = distance_m(child(leg, "WorldDistance"))
        speed_el, duration_el = child(leg, "Speed"), child(leg, "Duration")
        speed = (
            (attr_number(speed_el, "Value") or 0.0) * _SPEED_UNITS.get((speed_el.get("Units") or "kts").lower(), 1.0)
            if speed_el is not None
            else None
        )
        duration = (
            (attr_number(duration_el, "Value") or 0.0)
            * _DURATION_S.get((duration_el.get("Units") or "minutes").lower(), 60.0)
            if duration_el is not None
            else None
        )
        model = (leg.get("calcModel") or "Speed/Time").lower()
        if model == "range/time" and distance is not None and duration:
            seconds, metres = duration, distance
        elif model == "range/speed" and distance is not None and speed:
            seconds, metres = distance / (speed * _KN_MPS), distance
        elif speed is not None and duration is not None:
            seconds, metres = duration, speed * _KN_MPS * duration
        else:
            raise DpfError(f"<planning_segment Name={leg.get('Name')!r}> lacks the figures its calcModel needs")
        y, x, _ = direct(lat, lon, course, metres)
        lat, lon, t = float(y), float(x), t + seconds
        speed_kn = metres / seconds / _KN_MPS if seconds > 0 else None
        out[-1].course, out[-1].speed = course % 360.0, speed_kn
        out.append(
            _Fix(
                round(t * 1e6),
                iso(t),
                lon,
                lat,
                origin[2],
                course % 360.0,
                speed_kn,
                leg.get("Name"),
                None,
                attr_bool(leg, "Visible"),
            )
        )
    return out


def _segments(element: Element) -> list[Element]:
    found: list[Element] = []
    for item in element:
        if tag(item) in _SEGMENTS:
            found.append(item)
        elif tag(item) == "SegmentList":
            found += [s for s in item if tag(s) in _SEGMENTS]
    return found


def _sensor(
    element: Element,
    track: str,
    clock: DateTimeReader,
    source: str | None,
    read: TrackRead,
    error: Callable[[str, str], None],
) -> None:
    name = element.get("Name") or "sensor"
    offset = distance_m(child(element, "Offset"))
    mode = element.get("ArrayMode") or ("Worm in hole" if attr_bool(element, "WormInHole", False) else None)
    array_mode = {"worm in hole": "worm-in-hole", "plain": "plain"}.get((mode or "").lower(), mode)
    base = attr_number(element, "BaseFrequency")
    read.settings[(track, name)] = SensorSettings(
        offset_m=offset or None,
        array_mode=array_mode,
        base_frequency=base or None,
        colour=colour_of(element),
        visible=attr_bool(element, "Visible"),
    )
    for n, contact in enumerate(children(element, "sensor_contact"), start=1):
        path = f"{track}/sensor {name}/sensor_contact {n}"
        try:
            key, time = when(contact, "Dtg", clock)
            origin = location_of(child(contact, "centre"))
            rng = distance_m(child(contact, "Range"))
            if rng is None and (legacy := attr_number(contact, "Range")) is not None:
                rng = legacy * 0.9144
            ambiguous = (
                attr_number(contact, "AmbiguousBearing") if attr_bool(contact, "HasAmbiguousBearing", False) else None
            )
            frequency = attr_number(contact, "Frequency") if attr_bool(contact, "HasFrequency", False) else None
        except DpfError as exc:
            error(path, str(exc))
            continue
        read.cuts.append(
            Cut(
                where=Where(source, None, path),
                line_type="SENSOR2" if ambiguous is not None or frequency is not None else "SENSOR",
                key=key,
                time=time,
                host_name=track,
                sensor=name,
                symbol=None,
                origin=(origin[0], origin[1]) if origin else None,
                bearing=attr_number(contact, "Bearing"),
                ambiguous=ambiguous,
                frequency=frequency,
                range_yd=(rng / 0.9144) if rng else None,
                label=contact.get("Label"),
                comment=contact.get("Comment"),
                colour=colour_of(contact),
                visible=attr_bool(contact, "Visible"),
            )
        )


def _tma(
    element: Element,
    track: str,
    clock: DateTimeReader,
    source: str | None,
    read: TrackRead,
    error: Callable[[str, str], None],
) -> None:
    name = element.get("Name") or "solution"
    colour = colour_of(element)
    for n, item in enumerate(children(element, "tma_solution"), start=1):
        path = f"{track}/tma {name}/tma_solution {n}"
        try:
            key, time = when(item, "Dtg", clock)
            centre = location_of(child(item, "centre"))
            rng = distance_m(child(item, "Range"))
            if rng is None and (legacy := attr_number(item, "Range")) is not None:
                rng = legacy * 0.9144
            major = distance_m(child(item, "Maxima")) or ((attr_number(item, "Maxima") or 0.0) * 0.9144)
            minor = distance_m(child(item, "Minima")) or ((attr_number(item, "Minima") or 0.0) * 0.9144)
            if centre is None and rng is None:
                raise DpfError("gives neither a <centre> nor a Range from the host")
        except DpfError as exc:
            error(path, str(exc))
            continue
        ellipse = (
            {
                "orientation_deg": attr_number(item, "Orientation") or 0.0,
                "semiMajorYd": major / 0.9144,
                "semiMinorYd": minor / 0.9144,
            }
            if major > 0.0001 and minor > 0.0001
            else None
        )
        read.solutions.append(
            SolutionFix(
                where=Where(source, None, path),
                line_type="DPF",
                key=key,
                time=time,
                host_name=track,
                solution=name,
                symbol=None,
                position=(centre[0], centre[1]) if centre else None,
                bearing=None if centre else (attr_number(item, "Bearing") or 0.0),
                range_yd=None if centre or rng is None else rng / 0.9144,
                ellipse=ellipse,
                course=attr_number(item, "Course"),
                speed=attr_number(item, "Speed"),
                depth=attr_number(item, "Depth"),
                label=item.get("Label"),
                colour=colour_of(item) or colour,
            )
        )


def _coverage(
    element: Element,
    track: str,
    clock: DateTimeReader,
    source: str | None,
    read: TrackRead,
    error: Callable[[str, str], None],
) -> None:
    for n, item in enumerate(children(element, "DynamicCoverage"), start=1):
        path = f"{track}/DynamicShapeSet {element.get('Name')}/DynamicCoverage {n}"
        try:
            start = when(item, "StartDtg", clock) if item.get("StartDtg") else None
            end = when(item, "EndDtg", clock) if item.get("EndDtg") else None
            values = [float(v) for v in (item.get("arcs") or "").split()]
            if not values or len(values) % 4:
                raise DpfError(f"arcs={item.get('arcs')!r}: expected groups of start end inner outer")
        except (DpfError, ValueError) as exc:
            error(path, str(exc))
            continue
        arcs = [(values[i], values[i + 1], values[i + 2], values[i + 3]) for i in range(0, len(values), 4)]
        read.arcs.append(
            ArcLine(
                where=Where(source, n, path),
                start=start,
                end=end,
                host_name=track,
                symbol=None,
                arcs=arcs,
                name=item.get("Label") or element.get("Name") or "coverage",
            )
        )


def read_track(
    element: Element, clock: DateTimeReader, source: str | None, error: Callable[[str, str], None]
) -> TrackRead:
    name = element.get("Name") or "track"
    read = TrackRead(name, None)
    fixes: list[_Fix] = []
    segments: list[dict[str, Any]] = []
    for item in [element, *_segments(element)]:
        found = []
        for fix in children(item, "fix"):
            try:
                found.append(_fix(fix, clock))
            except DpfError as exc:
                error(f"{name}/{tag(item)}/fix", str(exc))
        if item is not element:
            info: dict[str, Any] = {"type": tag(item), "name": item.get("Name"), "fixCount": len(found)}
            if found:
                info["start"], info["end"] = min(f.time for f in found), max(f.time for f in found)
            for key, attr in (("courseDeg", "CourseDegs"), ("baseFrequency", "BaseFrequency")):
                if (value := attr_number(item, attr)) is not None:
                    info[key] = value
            if (speed := child(item, "Speed")) is not None:
                info["speedKn"] = attr_number(speed, "Value")
            if item.get("HostTrack"):
                info["hostTrack"] = item.get("HostTrack")
            if (offset := child(item, "Offset")) is not None:
                info["offset"] = {
                    "bearingDeg": attr_number(offset, "BearingDegs"),
                    "rangeM": distance_m(child(offset, "Range")),
                }
            segments.append(info)
        fixes += found
    if tag(element) == "composite_track":
        try:
            fixes += _planned(element, clock)
        except DpfError as exc:
            error(f"{name}/planning_segment", str(exc))
    for item in element:
        handler = {"sensor": _sensor, "tma": _tma, "DynamicShapeSet": _coverage}.get(tag(item))
        if handler is not None:
            handler(item, name, clock, source, read, error)
    if fixes:
        fixes.sort(key=lambda f: f.key)
        read.feature = _feature(element, name, fixes, segments)
    return read


def _feature(element: Element, name: str, fixes: list[_Fix], segments: list[dict[str, Any]]) -> dict[str, Any]:
    coords = [[f.lon, f.lat] for f in fixes]
    props: dict[str, Any] = {
        "dataType": "track",
        "kind": "track",
        "name": name,
        "timestamps": [f.time for f in fixes],
        "courses": [f.course for f in fixes],
        "speeds": [f.speed for f in fixes],
        "depths": [f.depth for f in fixes],
        "labels": [f.label for f in fixes],
    }
    if any(f.comment for f in fixes):
        props["comments"] = [f.comment for f in fixes]
    if not all(f.visible for f in fixes):
        props["fixesVisible"] = [f.visible for f in fixes]
    colour = colour_of(element)
    if colour is not None:
        props["stroke"] = colour
    if element.get("Symbol"):
        props["symbolType"] = element.get("Symbol")
    if not attr_bool(element, "Visible"):
        props["visible"] = False
    if segments:
        props["segments"] = segments
        tma = [s for s in segments if s["type"] in _TMA_SEGMENTS]
        if tma:
            props["trackType"] = "tma-solution"
            hosts = sorted({s["hostTrack"] for s in tma if s.get("hostTrack")})
            if hosts:
                props["hostName"] = hosts[0]
    if tag(element) == "composite_track":
        props["trackType"] = "planned"
    for value in props.values():
        if isinstance(value, float) and not math.isfinite(value):
            raise DpfError(f"track {name!r}: a non-finite number")
    geometry = (
        {"type": "Point", "coordinates": coords[0]}
        if len(coords) == 1
        else {"type": "LineString", "coordinates": coords}
    )
    return {"type": "Feature", "geometry": geometry, "properties": props}
