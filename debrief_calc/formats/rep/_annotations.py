"""``;TYPE:`` annotation lines: narratives, ``;TEXT:`` labels and ``;CIRCLE:``/``;RECT:``/``;POLY:`` zones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from debrief_calc.formats.rep._colours import replay_colour
from debrief_calc.formats.rep._positions import read_position, read_symbol
from debrief_calc.formats.rep._results import LineError, NotImported
from debrief_calc.formats.rep._tokens import DATE_TOKEN_RE, TIME_TOKEN_RE, DateTimeReader, finite_number
from debrief_calc.tracks._circles import circle_ring

__all__ = [
    "Narrative",
    "ccw_ring",
    "degenerate_polygon",
    "parse_circle",
    "parse_narrative",
    "parse_poly",
    "parse_rect",
    "parse_text",
    "zone",
]

_YARD_M = 0.9144
_CIRCLE_VERTICES = 72
# ;NARRATIVE: date time track text   /   ;NARRATIVE2: date time track type text
_NARRATIVE_RE = re.compile(r'\s*(\S+)\s+(\S+)\s+(?:"([^"]*)"|(\S+))(?:\s+(.*))?\Z', re.S)
_NARRATIVE2_RE = re.compile(r'\s*(\S+)\s+(\S+)\s+(?:"([^"]*)"|(\S+))\s+(?:"([^"]*)"|(\S+))(?:\s+(.*))?\Z', re.S)


def _take_dates(tokens: list[str], start: int, clock: DateTimeReader) -> tuple[list[str], int]:
    """Optional ``date time`` pairs before the position of a shape (later Debrief files)."""
    times: list[str] = []
    index = start
    while (
        len(times) < 2
        and index + 1 < len(tokens)
        and DATE_TOKEN_RE.match(tokens[index]) is not None
        and TIME_TOKEN_RE.match(tokens[index + 1]) is not None
    ):
        problems: list[str] = []
        when = clock.read(tokens[index], tokens[index + 1], problems)
        if when is None:
            raise LineError("; ".join(problems))
        times.append(when[1])
        index += 2
    return times, index


def _ring_area2(ring: list[list[float]]) -> float:
    return sum(a[0] * b[1] - b[0] * a[1] for a, b in pairwise(ring))


def ccw_ring(points: list[list[float]]) -> list[list[float]]:
    """A closed, counter-clockwise ring (RFC 7946 exterior ring orientation)."""
    ring = list(points)
    if ring[0] != ring[-1]:
        ring.append(list(ring[0]))
    if _ring_area2(ring) < 0:
        ring.reverse()
    return ring


def _shape_tokens(rest: str, kind: str) -> tuple[list[str], str, str | None, int]:
    tokens = rest.split()
    if not tokens:
        raise LineError(f"{kind}: symbol missing")
    symbol, layer, index = read_symbol(tokens, 0)
    return tokens, symbol, layer, index


def _position_or_raise(tokens: list[str], index: int, kind: str) -> tuple[tuple[float, float], int]:
    problems: list[str] = []
    try:
        position, index = read_position(tokens, index, problems)
    except LineError as exc:
        raise LineError(f"{kind}: {exc}") from None
    if position is None:
        raise LineError(f"{kind}: " + "; ".join(problems))
    return position, index


def zone(
    *,
    kind: str,
    symbol: str,
    layer: str | None,
    times: list[str],
    label: str,
    rings: list[list[list[float]]],
    specifics: dict[str, Any],
) -> dict[str, Any]:
    """A zone annotation (a Polygon of ``rings``: the outline, then any holes) with the symbol's colour."""
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "zone",
        "annotationType": "area",
        "name": label or kind.lower(),
        "text": label,
        "symbol": symbol,
        "specifics": specifics,
    }
    colour = replay_colour(symbol)
    if colour is not None:  # legacy Debrief outlines a shape in its colour (and fills it in it)
        properties["stroke"] = properties["fill"] = colour
    if layer:
        properties["layer"] = layer
    if times:
        properties["time"] = times[0]
        if len(times) > 1:
            properties["timeEnd"] = times[1]
    return {
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": rings},
        "properties": properties,
    }


def parse_circle(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "CIRCLE")
    times, index = _take_dates(tokens, index, clock)
    (lon, lat), index = _position_or_raise(tokens, index, "CIRCLE")
    if index >= len(tokens):
        raise LineError("CIRCLE: radius missing")
    radius_yd = finite_number(tokens[index])
    if radius_yd is None or radius_yd <= 0:
        raise LineError(f"CIRCLE: bad radius '{tokens[index]}' (expected a positive number of yards)")
    radius_m = radius_yd * _YARD_M
    label = " ".join(tokens[index + 1 :])
    specifics = {"shapeType": "circle", "origin": [lon, lat], "radiusM": radius_m}
    ring = circle_ring(lon, lat, radius_m, _CIRCLE_VERTICES).tolist()
    return zone(kind="CIRCLE", symbol=symbol, layer=layer, times=times, label=label, rings=[ring], specifics=specifics)


def parse_rect(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "RECT")
    times, index = _take_dates(tokens, index, clock)
    (lon1, lat1), index = _position_or_raise(tokens, index, "RECT")
    (lon2, lat2), index = _position_or_raise(tokens, index, "RECT")
    if lon1 == lon2 or lat1 == lat2:
        raise LineError("RECT: the two corners do not span an area")
    west, east = min(lon1, lon2), max(lon1, lon2)
    south, north = min(lat1, lat2), max(lat1, lat2)
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    specifics = {"shapeType": "rectangle", "topLeft": [west, north], "bottomRight": [east, south]}
    label = " ".join(tokens[index:])
    return zone(kind="RECT", symbol=symbol, layer=layer, times=times, label=label, rings=[ring], specifics=specifics)


def parse_poly(rest: str, clock: DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "POLY")
    times, index = _take_dates(tokens, index, clock)
    points: list[list[float]] = []
    while index < len(tokens) and tokens[index][:1].isdigit():
        (lon, lat), index = _position_or_raise(tokens, index, "POLY")
        points.append([lon, lat])
    distinct = {(p[0], p[1]) for p in points}
    label = " ".join(tokens[index:])
    if len(distinct) < 2:
        raise NotImported(f"POLY (a polygon of {len(distinct)} distinct point(s) encloses and draws nothing)")
    if len(distinct) == 2:  # legacy Debrief draws a two-node polygon: a closed line, no area
        return degenerate_polygon(symbol, layer, times, label, points)
    ring = ccw_ring(points)
    specifics = {"shapeType": "polygon"}
    return zone(kind="POLY", symbol=symbol, layer=layer, times=times, label=label, rings=[ring], specifics=specifics)


def degenerate_polygon(
    symbol: str, layer: str | None, times: list[str], label: str, points: list[list[float]]
) -> dict[str, Any]:
    """A polygon of two distinct points as legacy Debrief draws it: there and back, a line."""
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "boundary",
        "name": label or "poly",
        "text": label,
        "symbol": symbol,
        "specifics": {"shapeType": "polygon", "note": "two distinct points: drawn as a line, it encloses no area"},
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
    coords = [list(p) for p in points]
    if coords[0] != coords[-1]:
        coords.append(list(coords[0]))
    return {"type": "Feature", "geometry": {"type": "LineString", "coordinates": coords}, "properties": properties}


def parse_text(rest: str) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "TEXT")
    (lon, lat), index = _position_or_raise(tokens, index, "TEXT")
    text = " ".join(tokens[index:])
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "label",
        "name": text,
        "text": text,
        "symbol": symbol,
    }
    colour = replay_colour(symbol)
    if colour is not None:  # marker_color as points have it; color, an annotation's colour, for renderers
        properties["marker_color"] = properties["color"] = colour
    if layer:
        properties["layer"] = layer
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [lon, lat]},
        "properties": properties,
    }


@dataclass(slots=True)
class Narrative:
    key: int
    time: str
    track: str
    text: str
    narrative_type: str | None


def parse_narrative(rest: str, typed: bool, clock: DateTimeReader) -> Narrative:
    kind = "NARRATIVE2" if typed else "NARRATIVE"
    found = (_NARRATIVE2_RE if typed else _NARRATIVE_RE).match(rest)
    if found is None:
        fields = "date, time, track name, type and text" if typed else "date, time, track name and text"
        raise LineError(f"{kind}: expected {fields}, got '{rest.strip()[:60]}'")
    groups = found.groups()
    problems: list[str] = []
    when = clock.read(groups[0], groups[1], problems)
    if when is None:
        raise LineError(f"{kind}: " + "; ".join(problems))
    track = (groups[2] if groups[2] is not None else groups[3]).strip()
    if typed:
        narrative_type: str | None = groups[4] if groups[4] is not None else groups[5]
        text = groups[6] or ""
    else:
        narrative_type = None
        text = groups[4] or ""
    return Narrative(when[0], when[1], track, text.strip(), narrative_type)
