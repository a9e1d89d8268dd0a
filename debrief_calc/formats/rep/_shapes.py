"""The shape and label lines legacy Debrief writes besides ``;TEXT:``/``;CIRCLE:``/``;RECT:``/``;POLY:``
(:mod:`._annotations`), as zones, lines and labels with their times::

    ;LINE:       symb position position [label]                      a line
    ;VECTOR:     symb position range_yd bearing [label]              a line from a point
    ;BRG:        symb date time position orientation length_yd [label] a bearing line, from its time
    ;ELLIPSE:    symb date time position orientation major_yd minor_yd label   a zone, from its time
    ;WHEEL:      symb date time position inner_yd outer_yd label     a zone (a ring), from its time
    ;POLYLINE:   symb [date time [date time]] position position … [label]       an open line
    ;TIMETEXT:   symb date time position text                        a label, from its time
    ;PERIODTEXT: symb date time date time position [depth] text      a label over a period
    ;DYNAMIC_RECT: / ;DYNAMIC_CIRCLE: / ;DYNAMIC_POLY:  symb "NAME" date time shape… [label]

Lines (``LineString`` annotations) carry ``stroke`` and ``color``; zones ``stroke`` and ``fill``;
labels ``marker_color`` and ``color``, all from the symbol's colour letter. Each keeps what it was
in ``properties.specifics`` (``shapeType`` and its figures: ``bearingDeg``, ``lengthYd``,
``semiMajorYd``…). An ellipse's major and minor are **semi**-axes, centre to edge, along the
orientation (true degrees) and across it, as legacy Debrief's ``EllipseShape`` draws them.

Dynamic shapes of one name are one shape moving in steps: legacy Debrief shows, at time t, the
first of them whose time is at or after t. Each is given that period here: from the time of the
one before it (the first: its own time only) to its own time (``time``/``timeEnd``), with
``dynamicGroup`` the name."""

from __future__ import annotations

from typing import Any

from debrief_calc.formats.rep._annotations import ccw_ring, zone
from debrief_calc.formats.rep._colours import replay_colour
from debrief_calc.formats.rep._fields import Fields
from debrief_calc.formats.rep._results import NotImported
from debrief_calc.formats.rep._tokens import DATE_TOKEN_RE, TIME_TOKEN_RE, DateTimeReader, finite_number
from debrief_calc.geo.geodesy import direct
from debrief_calc.tracks._circles import circle_ring, ellipse_ring, sector_rings

__all__ = [
    "DynamicShape",
    "parse_brg",
    "parse_dynamic",
    "parse_ellipse",
    "parse_line",
    "parse_periodtext",
    "parse_polyline",
    "parse_timetext",
    "parse_vector",
    "parse_wheel",
    "points_and_label",
    "time_dynamic_shapes",
]

_YARD_M = 0.9144


def _line(
    kind: str,
    symbol: str,
    layer: str | None,
    coords: list[list[float]],
    label: str,
    specifics: dict[str, Any],
    times: list[str],
) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "boundary" if kind == "POLYLINE" else "measurement",
        "name": label or kind.lower(),
        "text": label,
        "symbol": symbol,
        "specifics": specifics,
    }
    colour = replay_colour(symbol)
    if colour is not None:
        properties["stroke"] = properties["color"] = colour
    if layer:
        properties["layer"] = layer
    if times:
        properties["time"] = times[0]
        if len(times) > 1:
            properties["timeEnd"] = times[1]
    return {"type": "Feature", "geometry": {"type": "LineString", "coordinates": coords}, "properties": properties}


def _label(
    symbol: str,
    layer: str | None,
    lon: float,
    lat: float,
    text: str,
    times: list[str],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "label",
        "name": text,
        "text": text,
        "symbol": symbol,
    }
    colour = replay_colour(symbol)
    if colour is not None:
        properties["marker_color"] = properties["color"] = colour
    if layer:
        properties["layer"] = layer
    properties["time"] = times[0]
    if len(times) > 1:
        properties["timeEnd"] = times[1]
    properties.update(extra or {})
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]}, "properties": properties}


def _ahead(lon: float, lat: float, bearing: float, metres: float) -> list[float]:
    y, x, _ = direct(lat, lon, bearing, metres)
    return [float(x), float(y)]


def parse_line(rest: str) -> dict[str, Any]:
    f = Fields(rest, "LINE")
    symbol, layer = f.symbol()
    a = f.position("start")
    b = f.position("end")
    return _line("LINE", symbol, layer, [list(a), list(b)], f.rest(), {"shapeType": "line"}, [])


def parse_vector(rest: str) -> dict[str, Any]:
    f = Fields(rest, "VECTOR")
    symbol, layer = f.symbol()
    lon, lat = f.position("start")
    length = f.number("range")
    bearing = f.number("bearing")
    if length < 0:
        raise f.error(f"range {length:g} yd is negative")
    specifics = {"shapeType": "vector", "bearingDeg": bearing % 360.0, "lengthYd": length}
    end = _ahead(lon, lat, bearing, length * _YARD_M)
    return _line("VECTOR", symbol, layer, [[lon, lat], end], f.rest(), specifics, [])


def parse_brg(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "BRG")
    symbol, layer = f.symbol()
    _key, when = f.date_time(clock)
    lon, lat = f.position()
    bearing = f.number("orientation")
    length = f.number("length")
    if length < 0:
        raise f.error(f"length {length:g} yd is negative")
    specifics = {"shapeType": "bearing", "bearingDeg": bearing % 360.0, "lengthYd": length}
    end = _ahead(lon, lat, bearing, length * _YARD_M)
    return _line("BRG", symbol, layer, [[lon, lat], end], f.rest(), specifics, [when])


def parse_ellipse(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "ELLIPSE")
    symbol, layer = f.symbol()
    _key, when = f.date_time(clock)
    lon, lat = f.position("centre")
    orientation = f.number("orientation")
    major = f.number("maxima")
    minor = f.number("minima")
    if major <= 0 or minor <= 0:
        raise f.error("maxima and minima must be positive yards (centre to edge)")
    ring = ellipse_ring(lon, lat, orientation, major * _YARD_M, minor * _YARD_M).tolist()
    specifics = {
        "shapeType": "ellipse",
        "origin": [lon, lat],
        "orientationDeg": orientation % 360.0,
        "semiMajorYd": major,
        "semiMinorYd": minor,
    }
    return zone(
        kind="ELLIPSE", symbol=symbol, layer=layer, times=[when], label=f.rest(), rings=[ring], specifics=specifics
    )


def parse_wheel(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "WHEEL")
    symbol, layer = f.symbol()
    _key, when = f.date_time(clock)
    lon, lat = f.position("centre")
    inner = f.number("inner radius")
    outer = f.number("outer radius")
    if inner < 0 or outer <= inner:
        raise f.error(f"radii {inner:g}..{outer:g} yd: need 0 <= inner < outer")
    rings = [r.tolist() for r in sector_rings(lon, lat, 0.0, 0.0, inner * _YARD_M, outer * _YARD_M)]
    specifics = {
        "shapeType": "wheel",
        "origin": [lon, lat],
        "innerRadiusM": inner * _YARD_M,
        "outerRadiusM": outer * _YARD_M,
        "spokeDeg": 60,
    }
    return zone(
        kind="WHEEL", symbol=symbol, layer=layer, times=[when], label=f.rest(), rings=rings, specifics=specifics
    )


def _dates(f: Fields, clock: DateTimeReader) -> list[str]:
    """Up to two optional ``date time`` pairs before a shape's positions."""
    times: list[str] = []
    while (
        len(times) < 2
        and f.i + 1 < len(f.tokens)
        and DATE_TOKEN_RE.match(f.tokens[f.i]) is not None
        and TIME_TOKEN_RE.match(f.tokens[f.i + 1]) is not None
    ):
        times.append(f.date_time(clock)[1])
    return times


def points_and_label(f: Fields) -> tuple[list[list[float]], str]:
    """Positions while the next field starts with a digit, then the label (legacy ``ImportPolygon``)."""
    points: list[list[float]] = []
    while f.more() and (f.peek() or "")[:1].isdigit():
        points.append(list(f.position(f"point {len(points) + 1}")))
    return points, f.rest()


def parse_polyline(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "POLYLINE")
    symbol, layer = f.symbol()
    times = _dates(f, clock)
    points, label = points_and_label(f)
    if len(points) < 2:
        raise NotImported(f"POLYLINE (a line needs at least 2 points, got {len(points)})")
    return _line("POLYLINE", symbol, layer, points, label, {"shapeType": "polyline"}, times)


def parse_timetext(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "TIMETEXT")
    symbol, layer = f.symbol()
    _key, when = f.date_time(clock)
    lon, lat = f.position()
    return _label(symbol, layer, lon, lat, f.rest(), [when])


def parse_periodtext(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    f = Fields(rest, "PERIODTEXT")
    symbol, layer = f.symbol()
    start_key, start = f.date_time(clock, "start date and time")
    end_key, end = f.date_time(clock, "end date and time")
    if end_key < start_key:
        raise f.error(f"the period ends ({end}) before it starts ({start})")
    lon, lat = f.position()
    extra: dict[str, Any] = {}
    depth = None
    if f.more():  # an optional depth, as legacy reads it: a number, else the text's first word
        depth = finite_number(f.peek() or "")
        if depth is not None:
            f.take("depth")
            extra["depth"] = depth
    return _label(symbol, layer, lon, lat, f.rest(), [start, end], extra)


class DynamicShape:
    """A dynamic shape read from its line, waiting for the others of its name (its period)."""

    def __init__(self, feature: dict[str, Any], group: str, key: int, when: str) -> None:
        self.feature, self.group, self.key, self.when = feature, group, key, when


def parse_dynamic(kind: str, rest: str, clock: DateTimeReader) -> DynamicShape:
    f = Fields(rest, kind)
    symbol, layer = f.symbol()
    group = f.name("shape name")
    key, when = f.date_time(clock)
    rings: list[list[list[float]]]
    if kind == "DYNAMIC_RECT":
        (x1, y1), (x2, y2) = f.position("corner 1"), f.position("corner 2")
        if x1 == x2 or y1 == y2:
            raise f.error("the two corners do not span an area")
        west, east, south, north = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
        rings = [[[west, south], [east, south], [east, north], [west, north], [west, south]]]
        specifics: dict[str, Any] = {"shapeType": "rectangle", "topLeft": [west, north], "bottomRight": [east, south]}
        label = f.rest()
    elif kind == "DYNAMIC_CIRCLE":
        lon, lat = f.position("centre")
        radius = f.number("radius")
        if radius <= 0:
            raise f.error(f"radius {radius:g} yd must be positive")
        rings = [circle_ring(lon, lat, radius * _YARD_M, 72).tolist()]
        specifics = {"shapeType": "circle", "origin": [lon, lat], "radiusM": radius * _YARD_M}
        label = f.rest()
    else:
        points, label = points_and_label(f)
        if len({(p[0], p[1]) for p in points}) < 3:
            raise NotImported(f"{kind} (a polygon needs at least 3 distinct points, got {len(points)})")
        rings = [ccw_ring(points)]
        specifics = {"shapeType": "polygon"}
    feature = zone(kind=kind, symbol=symbol, layer=layer, times=[when], label=label, rings=rings, specifics=specifics)
    feature["properties"]["dynamicGroup"] = group
    return DynamicShape(feature, group, key, when)


def time_dynamic_shapes(shapes: list[DynamicShape]) -> None:
    """Give each dynamic shape the period legacy Debrief shows it in (see the module's doc)."""
    by_group: dict[str, list[DynamicShape]] = {}
    for shape in shapes:
        by_group.setdefault(shape.group, []).append(shape)
    for members in by_group.values():
        order = sorted(range(len(members)), key=lambda i: members[i].key)
        previous: DynamicShape | None = None
        for i in order:
            shape = members[i]
            props = shape.feature["properties"]
            props["time"] = (previous or shape).when
            props["timeEnd"] = shape.when
            props["shapeTime"] = shape.when
            previous = shape
