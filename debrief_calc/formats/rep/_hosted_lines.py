"""REP lines that hang off a host track: ``;SENSOR:``, ``;SENSOR2:``, ``;SENSOR3:``,
``;TMA_POS:``, ``;TMA_RB:`` and ``;SENSORARC:`` (``;SENSOR_ARC:``), read into the records of
:mod:`debrief_calc.formats.hosted.records`, field by field as legacy Debrief's
``ImportSensor*``, ``ImportTMA_*`` and ``ImportSensorArc`` read them::

    ;SENSOR:  date time HOST symb (origin | NULL) bearing range_yd SENSOR label…
    ;SENSOR2: date time HOST symb (origin | NULL) bearing ambiguous freq_Hz range_yd SENSOR label [// comment]
    ;SENSOR3: date time HOST symb (origin | NULL) bearing bearing_acc freq freq_acc range_yd SENSOR label [// comment]
    ;TMA_POS: date time HOST symb position SOLUTION (orientation major_yd minor_yd | NULL) course speed depth label
    ;TMA_RB:  date time HOST symb bearing range_yd SOLUTION (orientation major minor | NULL) course speed depth label
    ;SENSORARC: (date time | NULL) (date time | NULL) HOST symb (left right inner_yd outer_yd)… NAME

NULL is any token starting with ``N``; in ``;SENSOR2:``/``;SENSOR3:`` each of the bearing,
ambiguous bearing (or accuracy), frequency and range may be NULL (a ``;SENSOR:`` bearing too: this
reader is no stricter than it need be); a range of 0 is no range. Legacy Debrief reads
``;SENSOR3:`` but keeps no accuracies: they are kept here."""

from __future__ import annotations

from debrief_calc.formats.hosted.records import ArcLine, Cut, SolutionFix, Where
from debrief_calc.formats.rep._fields import Fields, label_and_comment
from debrief_calc.formats.rep._tokens import DateTimeReader

__all__ = ["parse_arc", "parse_sensor", "parse_solution"]

#: the fields of each sensor line between the origin and the sensor's name
_SENSOR_FIELDS = {
    "SENSOR": ("bearing", "range"),
    "SENSOR2": ("bearing", "ambiguous bearing", "frequency", "range"),
    "SENSOR3": ("bearing", "bearing accuracy", "frequency", "frequency accuracy", "range"),
}


def _range(fields: Fields, value: float | None) -> float | None:
    if value is not None and value < 0:
        raise fields.error(f"range {value:g} yd is negative")
    return value if value else None  # 0 is no range, as NULL is


def parse_sensor(kind: str, rest: str, clock: DateTimeReader, where: Where) -> Cut:
    f = Fields(rest, kind)
    key, time = f.date_time(clock)
    host = f.name("host (ownship) name")
    symbol, _layer = f.symbol()
    origin = None
    if f.is_null():
        f.take("origin")
    else:
        origin = f.position("origin")
    values = {name: f.number_or_null(name) for name in _SENSOR_FIELDS[kind]}
    sensor = f.name("sensor name")
    text = f.rest()
    label, comment = (text or None, None) if kind == "SENSOR" else label_and_comment(text)
    frequency = values.get("frequency")
    if frequency is not None and frequency < 0:
        raise f.error(f"frequency {frequency:g} Hz is negative")
    for name in ("bearing accuracy", "frequency accuracy"):
        if (value := values.get(name)) is not None and value < 0:
            raise f.error(f"{name} {value:g} is negative")
    return Cut(
        where=where,
        line_type=kind,
        key=key,
        time=time,
        host_name=host,
        sensor=sensor,
        symbol=symbol,
        origin=origin,
        bearing=values["bearing"],
        ambiguous=values.get("ambiguous bearing"),
        frequency=frequency,
        range_yd=_range(f, values["range"]),
        bearing_accuracy=values.get("bearing accuracy"),
        frequency_accuracy=values.get("frequency accuracy"),
        label=label,
        comment=comment,
    )


def _ellipse(f: Fields) -> dict[str, float] | None:
    if f.is_null():
        f.take("ellipse")
        return None
    orientation = f.number("ellipse orientation")
    major = f.number("ellipse maxima")
    minor = f.number("ellipse minima")
    if major < 0 or minor < 0:
        raise f.error("ellipse maxima and minima must not be negative (yards, centre to edge)")
    return {"orientation_deg": orientation, "semiMajorYd": major, "semiMinorYd": minor}


def parse_solution(kind: str, rest: str, clock: DateTimeReader, where: Where) -> SolutionFix:
    f = Fields(rest, kind)
    key, time = f.date_time(clock)
    host = f.name("vessel (host) name")
    symbol, _layer = f.symbol()
    position = bearing = range_yd = None
    if kind == "TMA_POS":
        position = f.position()
    else:  # bearing first, whatever the importer's header comment says
        bearing = f.number("bearing")
        range_yd = f.number("range")
        if range_yd < 0:
            raise f.error(f"range {range_yd:g} yd is negative")
    solution = f.take("solution name")
    ellipse = _ellipse(f)
    course = f.number("course")
    speed = f.number("speed")
    depth = f.number("depth")
    label = f.rest() or None
    return SolutionFix(
        where=where,
        line_type=kind,
        key=key,
        time=time,
        host_name=host,
        solution=solution,
        symbol=symbol,
        position=position,
        bearing=bearing,
        range_yd=range_yd,
        ellipse=ellipse,
        course=course,
        speed=speed,
        depth=depth,
        label=label,
    )


def parse_arc(kind: str, rest: str, clock: DateTimeReader, where: Where) -> ArcLine:
    f = Fields(rest, kind)
    ends: list[tuple[int, str] | None] = []
    for which in ("start", "end"):
        if f.is_null():
            f.take(which)
            ends.append(None)
        else:
            ends.append(f.date_time(clock, f"{which} date and time"))
    host = f.name("host name")
    symbol, _layer = f.symbol()
    left = len(f.tokens) - f.i
    if left < 5 or (left - 1) % 4:
        raise f.error(f"expected groups of left right inner outer and a name after the symbol, got {left} fields")
    arcs: list[tuple[float, float, float, float]] = []
    while len(f.tokens) - f.i > 1:
        a, b, c, d = (f.number(n) for n in ("left angle", "right angle", "inner radius", "outer radius"))
        if c < 0 or d <= c:
            raise f.error(f"radii {c:g}..{d:g} yd: need 0 <= inner < outer")
        arcs.append((a, b, c, d))
    name = f.name("arc name")
    if ends[0] and ends[1] and ends[1][0] < ends[0][0]:
        raise f.error(f"the period ends ({ends[1][1]}) before it starts ({ends[0][1]})")
    return ArcLine(where=where, start=ends[0], end=ends[1], host_name=host, symbol=symbol, arcs=arcs, name=name)
