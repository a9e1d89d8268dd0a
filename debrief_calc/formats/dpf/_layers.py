"""The shapes and labels of a ``.dpf``'s ``<layer>`` and ``<dynamicShapeLayer>`` elements as
zones, lines and labels (the same properties REP shapes get: :mod:`debrief_calc.formats.rep._shapes`).

``textlabel`` → a label; ``line``, ``vector``, an open ``polygon`` → lines; ``rectangle``,
``circle``, ``ellipse`` (semi-axes ``Maxima``/``Minima`` along ``Orient``), a closed ``polygon``,
``Arc`` (a sector of ``ArcWidth`` about ``CentreBearing``), ``wheel`` (a ring) → zones. A
``timeRange`` gives ``time``/``timeEnd``; a dynamic layer's shapes take the periods legacy Debrief
shows them in (as ``;DYNAMIC_*:`` lines do). Grids, scales, charts and coastlines are views, not
data: they are listed as not converted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from xml.etree.ElementTree import Element

from debrief_calc.formats.dpf._values import (
    DpfError,
    attr_bool,
    attr_number,
    child,
    colour_of,
    distance_m,
    location_of,
    tag,
    when,
)
from debrief_calc.formats.rep._annotations import ccw_ring
from debrief_calc.formats.rep._shapes import DynamicShape, time_dynamic_shapes
from debrief_calc.formats.rep._tokens import DateTimeReader
from debrief_calc.geo.geodesy import direct
from debrief_calc.tracks._circles import circle_ring, ellipse_ring, sector_rings

__all__ = ["VIEW_ELEMENTS", "read_layer"]

#: elements of a layer that are views of the chart, not data
VIEW_ELEMENTS: Final[dict[str, str]] = {
    "grid": "a grid drawn over the chart",
    "LocalGrid": "a grid drawn over the chart",
    "Grid4W": "a grid drawn over the chart",
    "scale": "a scale bar",
    "coastline": "a coastline layer of legacy Debrief's own",
    "vpf_coastline": "a VPF chart layer",
    "vpf_database": "a VPF chart database",
    "ChartReference": "a reference to a chart image file",
    "LightweightTrack": "a lightweight track (no times kept per fix)",
}
_KYD_M = 914.4


def _pos(element: Element, name: str) -> tuple[float, float]:
    found = location_of(child(element, name))
    if found is None:
        raise DpfError(f"<{tag(element)}> has no <{name}> location")
    return found[0], found[1]


def _times(element: Element, clock: DateTimeReader) -> list[str]:
    span = child(element, "timeRange")
    if span is None:
        return []
    out = [when(span, "Start", clock)[1]] if span.get("Start") else []
    if span.get("End"):
        out.append(when(span, "End", clock)[1])
    return out


def _props(element: Element, kind: str, times: list[str], shape: str, layer: str) -> dict[str, Any]:
    label = element.get("Label") or ""
    props: dict[str, Any] = {
        "dataType": "annotation",
        "kind": kind,
        "name": label or shape,
        "text": label,
        "layer": layer,
    }
    colour = colour_of(element)
    if colour is not None:
        key = ("marker_color", "color") if kind == "annotation" and shape == "label" else ("stroke",)
        for k in key:
            props[k] = colour
        if kind == "annotation" and shape != "label":
            props["color"] = colour
        if kind == "zone":
            props["fill"] = colour
    if not attr_bool(element, "Visible"):
        props["visible"] = False
    if times:
        props["time"] = times[0]
        if len(times) > 1:
            props["timeEnd"] = times[1]
    return props


def _radius(element: Element, name: str, legacy_units_m: float) -> float:
    metres = distance_m(child(element, name))
    if metres is None and (value := attr_number(element, name)) is not None:
        metres = value * legacy_units_m
    if metres is None or metres <= 0:
        raise DpfError(f"<{tag(element)}> needs a positive <{name}>")
    return metres


def _shape(element: Element, clock: DateTimeReader, layer: str) -> tuple[str, dict[str, Any]]:
    name = tag(element)
    times = _times(element, clock)
    if name == "textlabel":
        lon, lat = _pos(element, "centre")
        props = _props(element, "annotation", times, "label", layer)
        props["annotationType"] = "label"
        if element.get("Symbol"):
            props["symbolType"] = element.get("Symbol")
        return "label", {"geometry": {"type": "Point", "coordinates": [lon, lat]}, "properties": props}
    if name in ("line", "vector"):
        start = _pos(element, "tl")
        if name == "line":
            end = _pos(element, "br")
            specifics: dict[str, Any] = {"shapeType": "line"}
        else:
            bearing = attr_number(element, "Bearing") or 0.0
            length = _radius(element, "Distance", 0.9144)
            y, x, _ = direct(start[1], start[0], bearing, length)
            end = (float(x), float(y))
            specifics = {"shapeType": "vector", "bearingDeg": bearing % 360.0, "lengthYd": length / 0.9144}
        props = _props(element, "annotation", times, name, layer)
        props.update(annotationType="measurement", specifics=specifics)
        return name, {"geometry": {"type": "LineString", "coordinates": [list(start), list(end)]}, "properties": props}
    rings: list[Any]
    if name == "rectangle":
        (x1, y1), (x2, y2) = _pos(element, "tl"), _pos(element, "br")
        w, e, s, n = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
        rings = [[[w, s], [e, s], [e, n], [w, n], [w, s]]]
        specifics = {"shapeType": "rectangle", "topLeft": [w, n], "bottomRight": [e, s]}
    elif name in ("circle", "Arc"):
        lon, lat = _pos(element, "centre")
        radius = _radius(element, "Radius", _KYD_M)
        if name == "circle":
            rings = [circle_ring(lon, lat, radius, 72).tolist()]
            specifics = {"shapeType": "circle", "origin": [lon, lat], "radiusM": radius}
        else:
            centre, width = attr_number(element, "CentreBearing") or 0.0, attr_number(element, "ArcWidth") or 360.0
            rings = [r.tolist() for r in sector_rings(lon, lat, centre - width / 2, centre + width / 2, 0.0, radius)]
            specifics = {
                "shapeType": "arc",
                "origin": [lon, lat],
                "radiusM": radius,
                "centreBearingDeg": centre,
                "widthDeg": width,
            }
    elif name == "ellipse":
        lon, lat = _pos(element, "centre")
        major, minor = _radius(element, "Maxima", _KYD_M), _radius(element, "Minima", _KYD_M)
        orient = float(element.get("Orient") or 0.0)
        rings = [ellipse_ring(lon, lat, orient, major, minor).tolist()]
        specifics = {
            "shapeType": "ellipse",
            "origin": [lon, lat],
            "orientationDeg": orient % 360.0,
            "semiMajorYd": major / 0.9144,
            "semiMinorYd": minor / 0.9144,
        }
    elif name == "wheel":
        lon, lat = _pos(element, "centre")
        inner, outer = _radius(element, "Inner", 0.9144), _radius(element, "Outer", 0.9144)
        rings = [r.tolist() for r in sector_rings(lon, lat, 0.0, 0.0, inner, outer)]
        specifics = {"shapeType": "wheel", "origin": [lon, lat], "innerRadiusM": inner, "outerRadiusM": outer}
    elif name == "polygon":
        path = child(element, "WorldPath")
        points = [loc[:2] for p in (path if path is not None else []) if (loc := location_of(p)) is not None]
        if attr_bool(element, "Closed") and len({tuple(p) for p in points}) >= 3:
            rings = [ccw_ring([list(p) for p in points])]
            specifics = {"shapeType": "polygon"}
        elif len(points) >= 2:
            props = _props(element, "annotation", times, "polyline", layer)
            props.update(annotationType="boundary", specifics={"shapeType": "polyline"})
            coords = [list(p) for p in points]
            return "polyline", {"geometry": {"type": "LineString", "coordinates": coords}, "properties": props}
        else:
            raise DpfError(f"<polygon> {element.get('Label')!r} has {len(points)} point(s): nothing to draw")
    else:
        raise DpfError(f"<{name}> is not a shape this reader knows")
    props = _props(element, "zone", times, name, layer)
    props.update(annotationType="area", specifics=specifics)
    return name.lower(), {"geometry": {"type": "Polygon", "coordinates": rings}, "properties": props}


def read_layer(
    element: Element,
    clock: DateTimeReader,
    add: Callable[[str, dict[str, Any]], None],
    not_converted: Callable[[str, str, str], None],
    error: Callable[[str, str], None],
) -> None:
    """Every shape of a ``<layer>`` or ``<dynamicShapeLayer>`` through ``add(prefix, feature)``."""
    layer = element.get("Name") or tag(element)
    dynamic: list[DynamicShape] = []
    for item in element:
        name = tag(item)
        if name in VIEW_ELEMENTS:
            not_converted(name, item.get("Name") or item.get("Label") or layer, VIEW_ELEMENTS[name])
            continue
        try:
            prefix, feature = _shape(item, clock, layer)
        except DpfError as exc:
            error(f"{layer}/{name}", str(exc))
            continue
        if not attr_bool(element, "Visible"):
            feature["properties"]["visible"] = False
        if tag(element) == "dynamicShapeLayer" and "time" in feature["properties"]:
            t = feature["properties"]["time"]
            feature["properties"]["dynamicGroup"] = layer
            dynamic.append(DynamicShape(feature, layer, int(clock_key(t)), t))
        add(prefix, {"type": "Feature", **feature})
    time_dynamic_shapes(dynamic)


def clock_key(iso_time: str) -> float:
    from debrief_calc.tracks.times import parse_iso

    return parse_iso(iso_time) * 1e6
