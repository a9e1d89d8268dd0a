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

import math

from debrief_calc.formats.hosted.records import ArcLine, Cut, SolutionFix, Where
from debrief_calc.formats.rep._fields import Fields, label_and_comment
from debrief_calc.formats.rep._tokens import DateTimeReader, finite_number

__all__ = ["fast_sensor", "parse_arc", "parse_sensor", "parse_solution"]

#: the fields of each sensor line between the origin and the sensor's name
_SENSOR_FIELDS = {
    "SENSOR": ("bearing", "range"),
    "SENSOR2": ("bearing", "ambiguous bearing", "frequency", "range"),
    "SENSOR3": ("bearing", "bearing accuracy", "frequency", "frequency accuracy", "range"),
}


_NS = frozenset("NS")
_EW = frozenset("EW")


def _angle(num: dict[str, float], d: str, m: str, sec: str, hem: str, limit: float) -> float | None:
    deg, minutes, seconds = num[d], num[m], num[sec]
    if not (0 <= deg <= limit and 0 <= minutes <= 60 and 0 <= seconds <= 60):
        return None
    value = deg + minutes / 60.0 + seconds / 3600.0
    if value > limit:
        return None
    return -value if hem in "SW" else value


def fast_sensor(kind: str, line: str, clock: DateTimeReader, where: Where) -> Cut | None:
    """A canonical sensor line read at speed (no quotes, no symbol attributes, ``D M S H``
    positions or NULL, numbers or NULL); None sends the line to :func:`parse_sensor`, which
    reads every other form and gives the reason when a line cannot be read."""
    if '"' in line or "[" in line:
        return None
    tokens = line.split()
    names = _SENSOR_FIELDS[kind]
    count = len(tokens)
    if count < 6:
        return None
    day = clock.day(tokens[1])
    time = tokens[2]
    if day is None or len(time) < 6 or not time[:6].isdigit():
        return None
    hour, minute, second = int(time[0:2]), int(time[2:4]), int(time[4:6])
    if hour > 23 or minute > 59 or second > 59 or (len(time) > 6 and (time[6] != "." or not time[7:].isdigit())):
        return None
    num = clock.numbers
    symbol = tokens[4]
    if symbol[0] != "@" and finite_number(symbol) is not None:
        return None  # a number where the symbol should be: the careful path says what is wrong
    try:
        if tokens[5][0] == "N":
            origin = None
            index = 6
        else:
            if count < 14 or tokens[8] not in _NS or tokens[12] not in _EW:
                return None
            lat = _angle(num, tokens[5], tokens[6], tokens[7], tokens[8], 90.0)
            lon = _angle(num, tokens[9], tokens[10], tokens[11], tokens[12], 180.0)
            if lat is None or lon is None:
                return None
            origin = (lon, lat)
            index = 13
        if count < index + len(names) + 1:
            return None
        values: list[float | None] = []
        for token in tokens[index : index + len(names)]:
            if token[0] == "N":
                values.append(None)
                continue
            value = num[token]
            if not math.isfinite(value):
                return None
            values.append(value)
    except ValueError:
        return None
    index += len(names)
    got = dict(zip(names, values, strict=True))
    rng = got["range"]
    if (rng is not None and rng < 0) or any(
        (v := got.get(n)) is not None and v < 0 for n in ("frequency", "bearing accuracy", "frequency accuracy")
    ):
        return None  # the careful path says why
    sensor = tokens[index]
    text = " ".join(tokens[index + 1 :])
    label, comment = (text or None, None) if kind == "SENSOR" else label_and_comment(text)
    micros = int(time[7:].ljust(6, "0")[:6]) if len(time) > 7 else 0
    key = day[0] + ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros
    iso = f"{day[1]}T{time[0:2]}:{time[2:4]}:{time[4:6]}"
    if micros:
        iso += f".{micros // 1000:03d}Z" if micros % 1000 == 0 else f".{micros:06d}Z"
    else:
        iso += "Z"
    return Cut(
        where=where,
        line_type=kind,
        key=key,
        time=iso,
        host_name=tokens[3],
        sensor=sensor,
        symbol=symbol,
        origin=origin,
        bearing=got["bearing"],
        ambiguous=got.get("ambiguous bearing"),
        frequency=got.get("frequency"),
        range_yd=rng or None,
        bearing_accuracy=got.get("bearing accuracy"),
        frequency_accuracy=got.get("frequency accuracy"),
        label=label,
        comment=comment,
    )


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
