"""Parser for legacy Debrief REP ("replay") files.

Pure domain code: text in, GeoJSON Feature dicts and per-line issues out. Nothing here knows
about MCP, files or the plot store.

A REP file is line based:

* a *fix*, one position of one platform::

      YYMMDD HHMMSS.SSS NAME SYMBOL  DD MM SS.SS H  DDD MM SS.SS H  COURSE SPEED DEPTH [label]
      951212 050000.000 NELSON   @C   22 11 10.63 N 21 41 52.37 W 269.7   2.0      0

  Dates are ``YYMMDD`` (two-digit years >= 50 are 19xx, else 20xx) or ``YYYYMMDD``; times
  ``HHMMSS`` with optional decimal seconds; the name may be double-quoted to hold spaces; the
  symbol (``@C``, ``@A@00``, ``aA`` ...) may carry a ``[LAYER=...]`` block, attached or
  separated by whitespace. A position is degrees, minutes, seconds and hemisphere, or degrees,
  decimal minutes and hemisphere (``DD MM.MMM H``), or decimal degrees and hemisphere; the
  latitude hemisphere may be glued to the longitude degrees (``N021``), as legacy Debrief
  allows. Course in degrees, speed in knots, depth in metres (``NaN`` or missing -> ``None``).
* an annotation, a line starting with ``;TYPE:``. ``;NARRATIVE:``/``;NARRATIVE2:`` become
  comment annotations, ``;TEXT:`` a label at a point, ``;CIRCLE:``/``;RECT:``/``;POLY:`` zone
  annotations with a Polygon; every other type is reported in :attr:`RepResult.skipped`.
* a comment: ``;;`` anything, or ``;`` followed by free text (``; Invalid coordinate values``).

Every line that cannot be read is reported in :attr:`RepResult.errors` with its 1-based line
number and a reason naming what was wrong; the other lines are still imported.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

__all__ = ["MAX_ISSUE_TEXT", "LineIssue", "RepResult", "parse_rep"]

#: Longest raw line text kept in a :class:`LineIssue`.
MAX_ISSUE_TEXT = 200

_YARD_M = 0.9144
_EARTH_RADIUS_M = 6_371_008.8  # mean radius, for drawing circles
_CIRCLE_VERTICES = 72
_US_PER_DAY = 86_400_000_000
_MIN_FIX_FIELDS = 14  # date time name symbol, 4 + 4 position fields, course speed (depth optional)

_TYPE_RE = re.compile(r";([A-Za-z][A-Za-z0-9_]*):")
_LAYER_RE = re.compile(r"LAYER=([^,\]]*)")
_QUOTED_NAME_RE = re.compile(r'(\S+)\s+(\S+)\s+"([^"]*)"(.*)\Z', re.S)
# ;NARRATIVE: date time track text   /   ;NARRATIVE2: date time track type text
_NARRATIVE_RE = re.compile(r'\s*(\S+)\s+(\S+)\s+(?:"([^"]*)"|(\S+))(?:\s+(.*))?\Z', re.S)
_NARRATIVE2_RE = re.compile(r'\s*(\S+)\s+(\S+)\s+(?:"([^"]*)"|(\S+))\s+(?:"([^"]*)"|(\S+))(?:\s+(.*))?\Z', re.S)
_DATE_TOKEN_RE = re.compile(r"\d{6}(?:\d{2})?\Z")
_TIME_TOKEN_RE = re.compile(r"\d{6}(?:\.\d*)?\Z")

_NS = frozenset("NS")
_EW = frozenset("EW")
_INF = math.inf
_INF_NEG = -math.inf
_TWO_DIGITS = {f"{value:02d}": value for value in range(100)}
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_COLONLESS_TYPES = frozenset({"TRACKSPLIT"})


@dataclass(frozen=True)
class LineIssue:
    """A line that was not imported: where it is, what it says and why."""

    line: int  # 1-based line number
    text: str  # the raw line, capped at MAX_ISSUE_TEXT characters
    reason: str


@dataclass
class RepResult:
    """What :func:`parse_rep` found."""

    features: list[dict[str, Any]] = field(default_factory=list)
    errors: list[LineIssue] = field(default_factory=list)
    skipped: list[LineIssue] = field(default_factory=list)
    line_count: int = 0
    fix_count: int = 0
    narrative_count: int = 0


class _LineError(Exception):
    """A line that cannot be read; the message is the reason."""


class _Truncated(_LineError):
    """A fix line ran out of fields; the message says what was missing."""


class _NotImported(Exception):
    """A well-formed annotation this importer does not turn into a feature; the message says what."""


# --------------------------------------------------------------------------------------------
# dates, times, numbers
# --------------------------------------------------------------------------------------------


def _days_in_month(year: int, month: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _MONTH_DAYS[month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 (proleptic Gregorian); cheap and allocation free."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _read_date(token: str) -> tuple[int, str]:
    """``YYMMDD`` or ``YYYYMMDD`` -> (days since epoch, ``YYYY-MM-DD``)."""
    if _DATE_TOKEN_RE.match(token) is None:
        raise _LineError(f"bad date '{token}': expected YYMMDD or YYYYMMDD")
    if len(token) == 6:
        year = int(token[0:2])
        year += 1900 if year >= 50 else 2000
        month, day = int(token[2:4]), int(token[4:6])
    else:
        year, month, day = int(token[0:4]), int(token[4:6]), int(token[6:8])
    if not 1 <= month <= 12:
        raise _LineError(f"bad date '{token}': month {month} out of range 1–12")
    last = _days_in_month(year, month)
    if not 1 <= day <= last:
        raise _LineError(f"bad date '{token}': day {day} out of range 1–{last} for {year}-{month:02d}")
    return _days_from_civil(year, month, day), f"{year:04d}-{month:02d}-{day:02d}"


def _read_time(token: str) -> tuple[int, str]:
    """``HHMMSS[.SSS]`` -> (microseconds into the day, ``HH:MM:SS[.fff]``)."""
    if _TIME_TOKEN_RE.match(token) is None:
        raise _LineError(f"bad time '{token}': expected HHMMSS or HHMMSS.SSS")
    hour, minute, second = int(token[0:2]), int(token[2:4]), int(token[4:6])
    if hour > 23:
        raise _LineError(f"bad time '{token}': hour {hour} out of range 0–23")
    if minute > 59:
        raise _LineError(f"bad time '{token}': minutes {minute} out of range 0–59")
    if second > 59:
        raise _LineError(f"bad time '{token}': seconds {second} out of range 0–59")
    frac = token[7:13]
    micros = int(frac.ljust(6, "0")) if frac else 0
    text = f"{token[0:2]}:{token[2:4]}:{token[4:6]}"
    if micros:
        text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return ((hour * 60 + minute) * 60 + second) * 1_000_000 + micros, text


class _Floats(dict[str, float]):
    """``float`` of a token, cached: in a REP file the same few thousand number tokens recur."""

    def __missing__(self, token: str) -> float:
        value = _to_float(token)
        self[token] = value
        return value


class _DateTimeReader:
    """Dates repeat on almost every line of a file, so they are parsed once and cached."""

    __slots__ = ("_dates", "numbers")

    def __init__(self) -> None:
        self.numbers = _Floats()
        # date token -> (microseconds from the epoch to its midnight, "YYYY-MM-DD") or the reason
        self._dates: dict[str, tuple[int, str] | str] = {}

    def _lookup(self, date_token: str) -> tuple[int, str] | str:
        cached = self._dates.get(date_token)
        if cached is None:
            try:
                days, text = _read_date(date_token)
                cached = (days * _US_PER_DAY, text)
            except _LineError as exc:
                cached = str(exc)
            self._dates[date_token] = cached
        return cached

    def day(self, date_token: str) -> tuple[int, str] | None:
        cached = self._lookup(date_token)
        return None if isinstance(cached, str) else cached

    def read(self, date_token: str, time_token: str, problems: list[str]) -> tuple[int, str] | None:
        """(sort key in microseconds since the epoch, ISO-8601 UTC) or None with problems noted."""
        cached = self._lookup(date_token)
        if isinstance(cached, str):
            problems.append(cached)
        try:
            micros, time_text = _read_time(time_token)
        except _LineError as exc:
            problems.append(str(exc))
            return None
        if isinstance(cached, str):
            return None
        return cached[0] + micros, f"{cached[1]}T{time_text}Z"


def _to_float(token: str) -> float:
    """``float`` without its Python-literal extras (``1_000``); ValueError when not a number."""
    if "_" in token:
        raise ValueError(token)
    return float(token)


def _number(token: str) -> float | None:
    """A finite float, or None (``float`` alone would accept ``nan`` and ``inf``)."""
    try:
        value = _to_float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# positions and symbols
# --------------------------------------------------------------------------------------------

_AXES = {
    "latitude": ("NS", 90.0, "S"),
    "longitude": ("EW", 180.0, "W"),
}
_PART_NAMES = ("degrees", "minutes", "seconds")


def _is_hemisphere(token: str, hemispheres: str) -> bool:
    if token[0] not in hemispheres:
        return False
    # legacy files may glue the latitude hemisphere to the longitude degrees: "N021"
    return len(token) == 1 or (hemispheres == "NS" and _number(token[1:]) is not None)


def _read_coordinate(tokens: list[str], start: int, axis: str, problems: list[str]) -> tuple[float | None, int]:
    """Read one latitude or longitude starting at ``tokens[start]``.

    Returns (decimal degrees or None when a value is out of range, index after the
    hemisphere). A glued ``N021`` is split in place so the longitude can be read next.
    Structural problems (missing hemisphere, line too short) raise.
    """
    hemispheres, limit, negative = _AXES[axis]
    count = len(tokens)
    parts: list[str] = []
    index = start
    while index < count and len(parts) < 3 and not _is_hemisphere(tokens[index], hemispheres):
        parts.append(tokens[index])
        index += 1
    if index >= count:
        shown = " ".join(parts)
        raise _Truncated(f"{axis} incomplete" + (f" after '{shown}'" if shown else ""))
    hem_token = tokens[index]
    if not _is_hemisphere(hem_token, hemispheres):
        expected = " or ".join(hemispheres)
        raise _LineError(f"expected {axis} hemisphere {expected} after '{' '.join(parts)}', got '{hem_token}'")
    if not parts:
        raise _LineError(f"{axis} has no degrees before hemisphere '{hem_token[0]}'")
    if len(hem_token) > 1:
        tokens[index : index + 1] = [hem_token[0], hem_token[1:]]
    values: list[float] = []
    ok = True
    for name, text in zip(_PART_NAMES, parts, strict=False):
        value = _number(text)
        if value is None:
            problems.append(f"bad {axis} {name} '{text}'")
            ok = False
        elif value < 0:
            problems.append(f"{axis} {name} {text} must not be negative (the hemisphere gives the sign)")
            ok = False
        elif name == "degrees" and value > limit:
            problems.append(f"{axis} degrees {text} out of range [0, {limit:g}]")
            ok = False
        elif name != "degrees" and value >= 60:
            problems.append(f"{axis} {name} {text} out of range [0, 60)")
            ok = False
        values.append(value if value is not None else 0.0)
    if not ok:
        return None, index + 1
    total = values[0]
    if len(values) > 1:
        total += values[1] / 60.0
    if len(values) > 2:
        total += values[2] / 3600.0
    if total > limit:
        problems.append(f"{axis} {' '.join(parts)} {hem_token[0]} is beyond {limit:g}°")
        return None, index + 1
    return (-total if hem_token[0] == negative else total), index + 1


def _read_position(tokens: list[str], start: int, problems: list[str]) -> tuple[tuple[float, float] | None, int]:
    """(lon, lat) or None, and the index after the longitude hemisphere."""
    lat, index = _read_coordinate(tokens, start, "latitude", problems)
    lon, index = _read_coordinate(tokens, index, "longitude", problems)
    if lat is None or lon is None:
        return None, index
    return (lon, lat), index


def _read_symbol(tokens: list[str], start: int) -> tuple[str, str | None, int]:
    """The symbol code, its ``[LAYER=...]`` value if any, and the index after them."""
    count = len(tokens)
    symbol = tokens[start]
    index = start + 1
    block = ""
    if "[" in symbol:
        symbol, block = symbol.split("[", 1)
        block = "[" + block
    elif index < count and tokens[index].startswith("["):
        block = tokens[index]
        index += 1
    while block and "]" not in block and index < count:
        block += " " + tokens[index]
        index += 1
    if block and "]" not in block:
        raise _LineError(f"unterminated symbol attributes '{block}'")
    if not symbol or _number(symbol) is not None:
        raise _LineError(f"expected a symbol such as @A, got '{symbol or block}'")
    layer = None
    if block:
        found = _LAYER_RE.search(block)
        if found is not None:
            layer = found.group(1).strip()
    return symbol, layer, index


# --------------------------------------------------------------------------------------------
# fixes
# --------------------------------------------------------------------------------------------


# One fix: (sort key in microseconds since the epoch, ISO time, lon, lat, course, speed, depth, label)
_Fix = tuple[int, str, float, float, float, float, float | None, str | None]


class _Track:
    """The fixes of one platform, stored by column (floats and strings are not tracked by the
    garbage collector, so 100,000 fixes cost no collector passes)."""

    __slots__ = (
        "courses",
        "depths",
        "keys",
        "labels",
        "lats",
        "layer",
        "lons",
        "name",
        "speeds",
        "symbol",
        "times",
    )

    def __init__(self, name: str, symbol: str, layer: str | None) -> None:
        self.name = name
        self.symbol = symbol
        self.layer = layer
        self.keys: list[int] = []
        self.times: list[str] = []
        self.lons: list[float] = []
        self.lats: list[float] = []
        self.courses: list[float] = []
        self.speeds: list[float] = []
        self.depths: list[float | None] = []
        self.labels: list[str | None] = []

    def add(self, fix: _Fix) -> None:
        key, time, lon, lat, course, speed, depth, label = fix
        self.keys.append(key)
        self.times.append(time)
        self.lons.append(lon)
        self.lats.append(lat)
        self.courses.append(course)
        self.speeds.append(speed)
        self.depths.append(depth)
        self.labels.append(label)

    def sort(self) -> None:
        """Order the fixes by time; a stable sort keeps file order for equal times."""
        keys = self.keys
        if all(a <= b for a, b in pairwise(keys)):
            return
        order = sorted(range(len(keys)), key=keys.__getitem__)
        self.keys = [keys[i] for i in order]
        self.times = [self.times[i] for i in order]
        self.lons = [self.lons[i] for i in order]
        self.lats = [self.lats[i] for i in order]
        self.courses = [self.courses[i] for i in order]
        self.speeds = [self.speeds[i] for i in order]
        self.depths = [self.depths[i] for i in order]
        self.labels = [self.labels[i] for i in order]


def _split_fix_tokens(line: str) -> list[str]:
    tokens = line.split()
    if len(tokens) > 2 and tokens[2].startswith('"'):
        found = _QUOTED_NAME_RE.match(line)
        if found is None:
            raise _LineError(f"unterminated quoted platform name starting {tokens[2]}")
        name = found.group(3).strip()
        if not name:
            raise _LineError("empty platform name")
        tokens = [found.group(1), found.group(2), name, *found.group(4).split()]
    return tokens


def _fast_fix(line: str, clock: _DateTimeReader, tracks: dict[str, _Track]) -> bool:
    """Read a canonical fix line and store it; False sends the line to the careful path.

    Canonical: unquoted name, symbol without attributes, ``D M S H`` positions. Every check
    here has a detailed twin in :func:`_parse_fix`, which produces the reason.
    """
    tokens = line.split()
    count = len(tokens)
    if count < 14 or tokens[2][0] == '"':
        return False
    date, time, name, symbol, lat_d, lat_m, lat_s, lat_h, lon_d, lon_m, lon_s, lon_h = tokens[:12]
    if lat_h not in _NS or lon_h not in _EW or "[" in symbol:
        return False
    if symbol[0] != "@" and _number(symbol) is not None:
        return False  # a number where the symbol should be: let the careful path explain
    day = clock.day(date)
    two = _TWO_DIGITS
    hour, minute, second = two.get(time[0:2], 99), two.get(time[2:4], 99), two.get(time[4:6], 99)
    if day is None or hour > 23 or minute > 59 or second > 59:
        return False
    num = clock.numbers
    try:
        lat_deg, lat_min, lat_sec = num[lat_d], num[lat_m], num[lat_s]
        lon_deg, lon_min, lon_sec = num[lon_d], num[lon_m], num[lon_s]
        course, speed = num[tokens[12]], num[tokens[13]]
        depth = num[tokens[14]] if count > 14 else None
        micros = int(time[7:].ljust(6, "0")[:6]) if len(time) > 7 else 0
    except ValueError:
        return False
    if not (
        0 <= lat_min < 60
        and 0 <= lat_sec < 60
        and 0 <= lon_min < 60
        and 0 <= lon_sec < 60
        and 0 <= lat_deg <= 90
        and 0 <= lon_deg <= 180
        and _INF_NEG < course < _INF
        and _INF_NEG < speed < _INF
        and (len(time) == 6 or (time[6] == "." and (len(time) == 7 or time[7:].isdigit())))
    ):
        return False
    if depth is not None and math.isnan(depth):
        depth = None
    lat = lat_deg + lat_min / 60.0 + lat_sec / 3600.0
    lon = lon_deg + lon_min / 60.0 + lon_sec / 3600.0
    if lat > 90.0 or lon > 180.0 or (depth is not None and not _INF_NEG < depth < _INF):
        return False
    iso = f"{day[1]}T{time[0:2]}:{time[2:4]}:{time[4:6]}"
    key = day[0] + ((hour * 60 + minute) * 60 + second) * 1_000_000
    if micros:
        key += micros
        iso += f".{micros // 1000:03d}Z" if micros % 1000 == 0 else f".{micros:06d}Z"
    else:
        iso += "Z"
    track = tracks.get(name)
    if track is None:
        track = tracks[name] = _Track(name, symbol, None)
    track.keys.append(key)
    track.times.append(iso)
    track.lons.append(-lon if lon_h == "W" else lon)
    track.lats.append(-lat if lat_h == "S" else lat)
    track.courses.append(course)
    track.speeds.append(speed)
    track.depths.append(depth)
    track.labels.append(" ".join(tokens[15:]) if count > 15 else None)
    return True


def _parse_fix(line: str, clock: _DateTimeReader) -> tuple[str, str, str | None, _Fix]:
    """(platform name, symbol, layer, fix) for one fix line, or raise with the reason."""
    tokens = _split_fix_tokens(line)
    count = len(tokens)
    if _DATE_TOKEN_RE.match(tokens[0]) is None and not any(c.isdigit() for c in tokens[0]):
        raise _LineError(f"not a fix or annotation line: expected a date (YYMMDD or YYYYMMDD), got '{tokens[0][:40]}'")
    problems: list[str] = []
    if count < 4:
        missing = ("time", "platform name", "symbol")[count - 1]
        raise _Truncated(f"{missing} missing")
    when = clock.read(tokens[0], tokens[1], problems)
    name = tokens[2]
    symbol, layer, index = _read_symbol(tokens, 3)
    try:
        position, index = _read_position(tokens, index, problems)
        count = len(tokens)  # a glued "N021" hemisphere was split in two
        if index + 2 > count:
            raise _Truncated(("course", "speed")[count - index] + " missing")
    except _Truncated as exc:
        raise _Truncated("; ".join([str(exc), *problems])) from None
    course = _number(tokens[index])
    if course is None:
        problems.append(f"bad course '{tokens[index]}'")
    speed = _number(tokens[index + 1])
    if speed is None:
        problems.append(f"bad speed '{tokens[index + 1]}'")
    index += 2
    depth: float | None = None
    if index < count:
        depth_token = tokens[index]
        index += 1
        try:
            depth = _to_float(depth_token)
        except ValueError:
            depth = math.inf
        if math.isnan(depth):
            depth = None  # NaN: depth unknown
        elif math.isinf(depth):
            depth = None
            problems.append(f"bad depth '{depth_token}'")
    label = " ".join(tokens[index:]) or None
    if problems or when is None or position is None or course is None or speed is None:
        raise _LineError("; ".join(problems))
    key, iso = when
    return name, symbol, layer, (key, iso, position[0], position[1], course, speed, depth, label)


def _field_counts(line: str) -> tuple[int, int]:
    """(fields present, fields a complete version of this truncated fix line has at least)."""
    tokens = _split_fix_tokens(line)
    extra = 0
    if len(tokens) > 4 and tokens[4].startswith("["):
        extra = 1
    # latitude form decides the position width: 4 (D M S H) or 3 (D M.M H) or 2 (D.D H)
    lat_width = 4
    for offset in range(1, 4):
        probe = 4 + extra + offset
        if probe < len(tokens) and tokens[probe][:1] in ("N", "S"):
            lat_width = offset + 1
            break
    return len(tokens), _MIN_FIX_FIELDS - 8 + extra + 2 * lat_width


# --------------------------------------------------------------------------------------------
# annotations
# --------------------------------------------------------------------------------------------


def _take_dates(tokens: list[str], start: int, clock: _DateTimeReader) -> tuple[list[str], int]:
    """Optional ``date time`` pairs before the position of a shape (later Debrief files)."""
    times: list[str] = []
    index = start
    while (
        len(times) < 2
        and index + 1 < len(tokens)
        and _DATE_TOKEN_RE.match(tokens[index]) is not None
        and _TIME_TOKEN_RE.match(tokens[index + 1]) is not None
    ):
        problems: list[str] = []
        when = clock.read(tokens[index], tokens[index + 1], problems)
        if when is None:
            raise _LineError("; ".join(problems))
        times.append(when[1])
        index += 2
    return times, index


def _ring_area2(ring: list[list[float]]) -> float:
    return sum(a[0] * b[1] - b[0] * a[1] for a, b in pairwise(ring))


def _ccw_ring(points: list[list[float]]) -> list[list[float]]:
    """A closed, counter-clockwise ring (RFC 7946 exterior ring orientation)."""
    ring = list(points)
    if ring[0] != ring[-1]:
        ring.append(list(ring[0]))
    if _ring_area2(ring) < 0:
        ring.reverse()
    return ring


def _circle_ring(lon: float, lat: float, radius_m: float) -> list[list[float]]:
    """A circle of ``radius_m`` around (lon, lat) on the sphere, counter-clockwise, closed."""
    phi1 = math.radians(lat)
    lam1 = math.radians(lon)
    delta = radius_m / _EARTH_RADIUS_M
    sin_phi1, cos_phi1 = math.sin(phi1), math.cos(phi1)
    sin_d, cos_d = math.sin(delta), math.cos(delta)
    ring: list[list[float]] = []
    for step in range(_CIRCLE_VERTICES, -1, -1):  # bearings decreasing: counter-clockwise
        theta = 2 * math.pi * step / _CIRCLE_VERTICES
        sin_phi2 = sin_phi1 * cos_d + cos_phi1 * sin_d * math.cos(theta)
        phi2 = math.asin(max(-1.0, min(1.0, sin_phi2)))
        lam2 = lam1 + math.atan2(math.sin(theta) * sin_d * cos_phi1, cos_d - sin_phi1 * sin_phi2)
        lon2 = (math.degrees(lam2) + 540.0) % 360.0 - 180.0
        ring.append([lon2, math.degrees(phi2)])
    ring[-1] = list(ring[0])
    return ring


def _shape_tokens(rest: str, kind: str) -> tuple[list[str], str, str | None, int]:
    tokens = rest.split()
    if not tokens:
        raise _LineError(f"{kind}: symbol missing")
    symbol, layer, index = _read_symbol(tokens, 0)
    return tokens, symbol, layer, index


def _position_or_raise(tokens: list[str], index: int, kind: str) -> tuple[tuple[float, float], int]:
    problems: list[str] = []
    try:
        position, index = _read_position(tokens, index, problems)
    except _LineError as exc:
        raise _LineError(f"{kind}: {exc}") from None
    if position is None:
        raise _LineError(f"{kind}: " + "; ".join(problems))
    return position, index


def _zone(
    *,
    kind: str,
    symbol: str,
    layer: str | None,
    times: list[str],
    label: str,
    ring: list[list[float]],
    specifics: dict[str, Any],
) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "zone",
        "annotationType": "area",
        "name": label or kind.lower(),
        "text": label,
        "symbol": symbol,
        "specifics": specifics,
    }
    if layer:
        properties["layer"] = layer
    if times:
        properties["time"] = times[0]
        if len(times) > 1:
            properties["timeEnd"] = times[1]
    return {
        "type": "Feature",
        "geometry": {"type": "Polygon", "coordinates": [ring]},
        "properties": properties,
    }


def _parse_circle(rest: str, clock: _DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "CIRCLE")
    times, index = _take_dates(tokens, index, clock)
    (lon, lat), index = _position_or_raise(tokens, index, "CIRCLE")
    if index >= len(tokens):
        raise _LineError("CIRCLE: radius missing")
    radius_yd = _number(tokens[index])
    if radius_yd is None or radius_yd <= 0:
        raise _LineError(f"CIRCLE: bad radius '{tokens[index]}' (expected a positive number of yards)")
    radius_m = radius_yd * _YARD_M
    label = " ".join(tokens[index + 1 :])
    specifics = {"shapeType": "circle", "origin": [lon, lat], "radiusM": radius_m}
    ring = _circle_ring(lon, lat, radius_m)
    return _zone(kind="CIRCLE", symbol=symbol, layer=layer, times=times, label=label, ring=ring, specifics=specifics)


def _parse_rect(rest: str, clock: _DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "RECT")
    times, index = _take_dates(tokens, index, clock)
    (lon1, lat1), index = _position_or_raise(tokens, index, "RECT")
    (lon2, lat2), index = _position_or_raise(tokens, index, "RECT")
    if lon1 == lon2 or lat1 == lat2:
        raise _LineError("RECT: the two corners do not span an area")
    west, east = min(lon1, lon2), max(lon1, lon2)
    south, north = min(lat1, lat2), max(lat1, lat2)
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    specifics = {"shapeType": "rectangle", "topLeft": [west, north], "bottomRight": [east, south]}
    label = " ".join(tokens[index:])
    return _zone(kind="RECT", symbol=symbol, layer=layer, times=times, label=label, ring=ring, specifics=specifics)


def _parse_poly(rest: str, clock: _DateTimeReader) -> dict[str, Any]:
    tokens, symbol, layer, index = _shape_tokens(rest, "POLY")
    times, index = _take_dates(tokens, index, clock)
    points: list[list[float]] = []
    while index < len(tokens) and tokens[index][:1].isdigit():
        (lon, lat), index = _position_or_raise(tokens, index, "POLY")
        points.append([lon, lat])
    distinct = {(p[0], p[1]) for p in points}
    if len(distinct) < 3:
        raise _NotImported(f"POLY (a polygon needs at least 3 distinct points, got {len(distinct)})")
    ring = _ccw_ring(points)
    specifics = {"shapeType": "polygon"}
    label = " ".join(tokens[index:])
    return _zone(kind="POLY", symbol=symbol, layer=layer, times=times, label=label, ring=ring, specifics=specifics)


def _parse_text(rest: str) -> dict[str, Any]:
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
    if layer:
        properties["layer"] = layer
    return {
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [lon, lat]},
        "properties": properties,
    }


@dataclass(slots=True)
class _Narrative:
    key: int
    time: str
    track: str
    text: str
    narrative_type: str | None


def _parse_narrative(rest: str, typed: bool, clock: _DateTimeReader) -> _Narrative:
    kind = "NARRATIVE2" if typed else "NARRATIVE"
    found = (_NARRATIVE2_RE if typed else _NARRATIVE_RE).match(rest)
    if found is None:
        fields = "date, time, track name, type and text" if typed else "date, time, track name and text"
        raise _LineError(f"{kind}: expected {fields}, got '{rest.strip()[:60]}'")
    groups = found.groups()
    problems: list[str] = []
    when = clock.read(groups[0], groups[1], problems)
    if when is None:
        raise _LineError(f"{kind}: " + "; ".join(problems))
    track = (groups[2] if groups[2] is not None else groups[3]).strip()
    if typed:
        narrative_type: str | None = groups[4] if groups[4] is not None else groups[5]
        text = groups[6] or ""
    else:
        narrative_type = None
        text = groups[4] or ""
    return _Narrative(when[0], when[1], track, text.strip(), narrative_type)


# --------------------------------------------------------------------------------------------
# assembling features
# --------------------------------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


class _Ids:
    """Deterministic, unique feature ids."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, wanted: str) -> str:
        candidate = wanted
        suffix = 2
        while candidate in self._used:
            candidate = f"{wanted}-{suffix}"
            suffix += 1
        self._used.add(candidate)
        return candidate


def _track_feature(track: _Track, feature_id: str, source: str | None) -> dict[str, Any]:
    track.sort()
    coordinates = [[lon, lat] for lon, lat in zip(track.lons, track.lats, strict=True)]
    geometry: dict[str, Any]
    if len(coordinates) == 1:
        geometry = {"type": "Point", "coordinates": coordinates[0]}
    else:
        geometry = {"type": "LineString", "coordinates": coordinates}
    properties: dict[str, Any] = {
        "dataType": "track",
        "kind": "track",
        "name": track.name,
        "symbol": track.symbol,
        "timestamps": track.times,
        "courses": track.courses,
        "speeds": track.speeds,
        "depths": track.depths,
    }
    if any(label is not None for label in track.labels):
        properties["labels"] = track.labels
    if track.layer:
        properties["layer"] = track.layer
    if source is not None:
        properties["source"] = source
    return {"type": "Feature", "id": feature_id, "geometry": geometry, "properties": properties}


def _nearest_fix(track: _Track, key: int) -> int:
    """Index of the fix of ``track`` nearest in time to ``key`` (the earlier one on a tie)."""
    keys = track.keys
    index = bisect_left(keys, key)
    if index == 0:
        return 0
    if index >= len(keys):
        return len(keys) - 1
    return index - 1 if key - keys[index - 1] <= keys[index] - key else index


def _narrative_feature(narrative: _Narrative, feature_id: str, track: _Track | None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "comment",
        "text": narrative.text,
        "time": narrative.time,
        "track": narrative.track,
    }
    if narrative.narrative_type is not None:
        properties["narrativeType"] = narrative.narrative_type
    geometry: dict[str, Any] | None = None
    if track is not None and track.keys:
        index = _nearest_fix(track, narrative.key)
        geometry = {"type": "Point", "coordinates": [track.lons[index], track.lats[index]]}
        properties["positionTime"] = track.times[index]
    return {"type": "Feature", "id": feature_id, "geometry": geometry, "properties": properties}


def _split_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _issue(number: int, raw: str, reason: str) -> LineIssue:
    return LineIssue(number, raw[:MAX_ISSUE_TEXT], reason)


def parse_rep(text: str, *, source_name: str | None = None) -> RepResult:
    """Parse the text of a REP file.

    Returns one track feature per platform (in order of first appearance, fixes sorted by time,
    equal times in file order), then the annotations in file order: narratives (positioned at
    the nearest fix in time of their platform when that platform has fixes in the file),
    ``;TEXT:`` labels and ``;CIRCLE:``/``;RECT:``/``;POLY:`` zones. Lines that cannot be read are
    in ``errors``; recognised annotation types that are not imported are in ``skipped``.
    """
    result = RepResult()
    lines = _split_lines(text)
    result.line_count = len(lines)
    clock = _DateTimeReader()
    tracks: dict[str, _Track] = {}
    # annotations in file order: a narrative, or a finished feature without an id
    annotations: list[_Narrative | tuple[str, dict[str, Any]]] = []
    errors = result.errors
    fix_count = 0

    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line[0] != ";":
            if _fast_fix(line, clock, tracks):
                fix_count += 1
                continue
            try:
                name, symbol, layer, fix = _parse_fix(line, clock)
            except _Truncated as exc:
                count, needed = _field_counts(line)
                reason = f"expected at least {needed} fields, got {count} (truncated line?): {exc}"
                errors.append(_issue(number, raw, reason))
                continue
            except _LineError as exc:
                errors.append(_issue(number, raw, str(exc)))
                continue
            track = tracks.get(name)
            if track is None:
                track = tracks[name] = _Track(name, symbol, layer)
            track.add(fix)
            fix_count += 1
            continue

        if line.startswith(";;"):
            continue  # comment
        found = _TYPE_RE.match(line)
        if found is None:
            word = line[1:].split(maxsplit=1)[0] if len(line) > 1 else ""
            if word in _COLONLESS_TYPES:
                result.skipped.append(_issue(number, raw, f"not imported: {word}"))
            continue  # "; free text" is a comment
        kind = found.group(1).upper()
        rest = line[found.end() :]
        try:
            if kind in ("NARRATIVE", "NARRATIVE2"):
                annotations.append(_parse_narrative(rest, kind == "NARRATIVE2", clock))
            elif kind == "TEXT":
                annotations.append(("text", _parse_text(rest)))
            elif kind == "CIRCLE":
                annotations.append(("circle", _parse_circle(rest, clock)))
            elif kind == "RECT":
                annotations.append(("rect", _parse_rect(rest, clock)))
            elif kind == "POLY":
                annotations.append(("poly", _parse_poly(rest, clock)))
            else:
                result.skipped.append(_issue(number, raw, f"not imported: {kind}"))
        except _NotImported as exc:
            result.skipped.append(_issue(number, raw, f"not imported: {exc}"))
        except _LineError as exc:
            reason = str(exc)
            if not reason.startswith(kind):
                reason = f"{kind}: {reason}"
            errors.append(_issue(number, raw, reason))

    ids = _Ids()
    features = result.features
    for name, track in tracks.items():
        slug = _slug(name)
        feature_id = ids.take(f"rep-{slug}" if slug else "rep-track")
        features.append(_track_feature(track, feature_id, source_name))

    counters: dict[str, int] = {}
    for item in annotations:
        if isinstance(item, _Narrative):
            counters["narrative"] = counters.get("narrative", 0) + 1
            feature_id = ids.take(f"rep-narrative-{counters['narrative']}")
            feature = _narrative_feature(item, feature_id, tracks.get(item.track))
        else:
            prefix, feature = item
            counters[prefix] = counters.get(prefix, 0) + 1
            feature = {"type": "Feature", "id": ids.take(f"rep-{prefix}-{counters[prefix]}"), **feature}
        if source_name is not None:
            feature["properties"]["source"] = source_name
        features.append(feature)

    result.fix_count = fix_count
    result.narrative_count = counters.get("narrative", 0)
    return result
