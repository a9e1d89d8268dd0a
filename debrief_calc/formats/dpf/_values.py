"""The values a ``.dpf`` element carries, read as legacy Debrief's XML handlers read them:
locations (``shortLocation``, ``longLocation``), colours (``colour``), distances (``WorldDistance``
type: ``Value`` and ``Units``), times (``yyMMdd HHmmss[.SSS]``), booleans and numbers."""

from __future__ import annotations

import math
from typing import Final
from xml.etree.ElementTree import Element

from debrief_calc.formats.rep._colours import REPLAY_COLOURS
from debrief_calc.formats.rep._tokens import DateTimeReader

__all__ = [
    "DpfError",
    "attr_bool",
    "attr_number",
    "child",
    "children",
    "colour_of",
    "distance_m",
    "location_of",
    "tag",
    "when",
]

#: ColourHandler's named colours (java.awt's and legacy Debrief's own shades)
_NAMED: Final[dict[str, str]] = {
    "RED": "#ff0000",
    "BLUE": "#0000ff",
    "GREEN": "#00ff00",
    "YELLOW": "#ffff00",
    "MAGENTA": "#ff00ff",
    "PURPLE": "#a90184",
    "ORANGE": "#ffc800",
    "BROWN": "#bc5d06",
    "CYAN": "#00ffff",
    "LIGHT_GREEN": "#64f064",
    "GOLD": "#e6c814",
    "PINK": "#ffafaf",
    "LIGHT_GREY": "#c0c0c0",
    "GREY": "#808080",
    "DARK_GREY": "#404040",
    "WHITE": "#ffffff",
    "BLACK": "#000000",
    "DARK_BLUE": REPLAY_COLOURS["S"],
    "MEDIUM_BLUE": REPLAY_COLOURS["R"],
}
#: WorldDistance units, in metres
_UNITS: Final[dict[str, float]] = {
    "yds": 0.9144,
    "yd": 0.9144,
    "kyds": 914.4,
    "kyd": 914.4,
    "m": 1.0,
    "metres": 1.0,
    "km": 1000.0,
    "nm": 1852.0,
    "ft": 0.3048,
    "degs": 1852.0 * 60,  # legacy Debrief's degrees of arc (60 nm)
}


class DpfError(Exception):
    """An element that cannot be read; the message says which and why."""


def tag(element: Element) -> str:
    """The element's name without its namespace (``{http://www.debrief.info/plot}track`` → ``track``)."""
    name = element.tag if isinstance(element.tag, str) else ""
    return name.rsplit("}", 1)[-1]


def children(element: Element, name: str) -> list[Element]:
    return [c for c in element if tag(c) == name]


def child(element: Element, name: str) -> Element | None:
    return next((c for c in element if tag(c) == name), None)


def attr_number(element: Element, name: str) -> float | None:
    value = element.get(name)
    if value is None or not value.strip():
        return None
    try:
        number = float(value)
    except ValueError:
        raise DpfError(f"<{tag(element)}> {name}={value[:40]!r} is not a number") from None
    if not math.isfinite(number):
        raise DpfError(f"<{tag(element)}> {name}={value[:40]!r} is not a finite number")
    return number


def attr_bool(element: Element, name: str, default: bool = True) -> bool:
    value = element.get(name)
    return default if value is None else value.strip().lower() == "true"


def when(element: Element, name: str, clock: DateTimeReader) -> tuple[int, str]:
    value = element.get(name)
    if value is None:
        raise DpfError(f"<{tag(element)}> has no {name}")
    parts = value.split()
    problems: list[str] = []
    found = clock.read(parts[0], parts[1], problems) if len(parts) == 2 else None
    if found is None:
        reason = "; ".join(problems) or "expected yyMMdd HHmmss"
        raise DpfError(f"<{tag(element)}> {name}={value[:40]!r}: {reason}")
    return found


def location_of(element: Element | None) -> tuple[float, float, float | None] | None:
    """(lon, lat, depth m) of the location inside ``element`` (``<centre>``, ``<tl>``…), or None."""
    if element is None:
        return None
    short = child(element, "shortLocation")
    if short is not None:
        lat, lon = attr_number(short, "Lat"), attr_number(short, "Long")
        if lat is None or lon is None:
            raise DpfError("<shortLocation> needs Lat and Long")
        out = (lon, lat, attr_number(short, "Depth"))
    else:
        long = child(element, "longLocation")
        if long is None:
            return None
        out = (_dms(long, "Long"), _dms(long, "Lat"), attr_number(long, "Depth"))
    if not (-90 <= out[1] <= 90 and -180 <= out[0] <= 180):
        raise DpfError(f"<{tag(element)}> position lat {out[1]}, long {out[0]} is out of range")
    return out


def _dms(element: Element, axis: str) -> float:
    deg = attr_number(element, f"{axis}Deg") or 0.0
    minutes = attr_number(element, f"{axis}Min") or 0.0
    seconds = attr_number(element, f"{axis}Sec") or 0.0
    if seconds == 0:  # legacy: fractional minutes stand for the seconds when none are given
        minutes, seconds = math.floor(minutes), (minutes - math.floor(minutes)) * 60
    hemisphere = (element.get(f"{axis}Hem") or "").strip()[:1].upper()
    value = deg + minutes / 60 + seconds / 3600
    return -value if hemisphere in ("S", "W") else value


def colour_of(element: Element, name: str = "colour") -> str | None:
    found = child(element, name)
    if found is None:
        return None
    value = (found.get("Value") or "").strip()
    if value.upper() in _NAMED and value.lower() != "custom":
        return _NAMED[value.upper()]
    rgb = [int(attr_number(found, f"Custom{c}") or 0) for c in ("Red", "Green", "Blue")]
    return "#" + "".join(f"{max(0, min(255, v)):02x}" for v in rgb)


def distance_m(element: Element | None) -> float | None:
    """A WorldDistance-type element's length in metres, or None when absent."""
    if element is None:
        return None
    value = attr_number(element, "Value")
    units = (element.get("Units") or "").strip().lower()
    if value is None:
        return None
    if units not in _UNITS:
        raise DpfError(f"<{tag(element)}> Units={units!r} is not a distance unit ({', '.join(_UNITS)})")
    return value * _UNITS[units]
