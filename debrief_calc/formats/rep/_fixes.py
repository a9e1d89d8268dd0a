"""Fix lines: one position of one platform, read fast when canonical and carefully otherwise,
and the column store of one platform's fixes."""

from __future__ import annotations

import math
import re
from itertools import pairwise

from debrief_calc.formats.rep._positions import read_position, read_symbol
from debrief_calc.formats.rep._results import LineError, Truncated
from debrief_calc.formats.rep._tokens import DATE_TOKEN_RE, DateTimeReader, finite_number, to_float

__all__ = ["Track", "fast_fix", "field_counts", "parse_fix"]

_MIN_FIX_FIELDS = 14  # date time name symbol, 4 + 4 position fields, course speed (depth optional)
_QUOTED_NAME_RE = re.compile(r'(\S+)\s+(\S+)\s+"([^"]*)"(.*)\Z', re.S)

_NS = frozenset("NS")
_EW = frozenset("EW")
_INF = math.inf
_INF_NEG = -math.inf
_TWO_DIGITS = {f"{value:02d}": value for value in range(100)}

# One fix: (sort key in microseconds since the epoch, ISO time, lon, lat, course, speed, depth, label)
_Fix = tuple[int, str, float, float, float, float, float | None, str | None]


class Track:
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
            raise LineError(f"unterminated quoted platform name starting {tokens[2]}")
        name = found.group(3).strip()
        if not name:
            raise LineError("empty platform name")
        tokens = [found.group(1), found.group(2), name, *found.group(4).split()]
    return tokens


def fast_fix(line: str, clock: DateTimeReader, tracks: dict[str, Track]) -> bool:
    """Read a canonical fix line and store it; False sends the line to the careful path.

    Canonical: unquoted name, symbol without attributes, ``D M S H`` positions. Every check
    here has a detailed twin in :func:`parse_fix`, which produces the reason.
    """
    tokens = line.split()
    count = len(tokens)
    if count < 14 or tokens[2][0] == '"':
        return False
    date, time, name, symbol, lat_d, lat_m, lat_s, lat_h, lon_d, lon_m, lon_s, lon_h = tokens[:12]
    if lat_h not in _NS or lon_h not in _EW or "[" in symbol:
        return False
    if symbol[0] != "@" and finite_number(symbol) is not None:
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
        track = tracks[name] = Track(name, symbol, None)
    track.keys.append(key)
    track.times.append(iso)
    track.lons.append(-lon if lon_h == "W" else lon)
    track.lats.append(-lat if lat_h == "S" else lat)
    track.courses.append(course)
    track.speeds.append(speed)
    track.depths.append(depth)
    track.labels.append(" ".join(tokens[15:]) if count > 15 else None)
    return True


def parse_fix(line: str, clock: DateTimeReader) -> tuple[str, str, str | None, _Fix]:
    """(platform name, symbol, layer, fix) for one fix line, or raise with the reason."""
    tokens = _split_fix_tokens(line)
    count = len(tokens)
    if DATE_TOKEN_RE.match(tokens[0]) is None and not any(c.isdigit() for c in tokens[0]):
        raise LineError(f"not a fix or annotation line: expected a date (YYMMDD or YYYYMMDD), got '{tokens[0][:40]}'")
    problems: list[str] = []
    if count < 4:
        missing = ("time", "platform name", "symbol")[count - 1]
        raise Truncated(f"{missing} missing")
    when = clock.read(tokens[0], tokens[1], problems)
    name = tokens[2]
    symbol, layer, index = read_symbol(tokens, 3)
    try:
        position, index = read_position(tokens, index, problems)
        count = len(tokens)  # a glued "N021" hemisphere was split in two
        if index + 2 > count:
            raise Truncated(("course", "speed")[count - index] + " missing")
    except Truncated as exc:
        raise Truncated("; ".join([str(exc), *problems])) from None
    course = finite_number(tokens[index])
    if course is None:
        problems.append(f"bad course '{tokens[index]}'")
    speed = finite_number(tokens[index + 1])
    if speed is None:
        problems.append(f"bad speed '{tokens[index + 1]}'")
    index += 2
    depth: float | None = None
    if index < count:
        depth_token = tokens[index]
        index += 1
        try:
            depth = to_float(depth_token)
        except ValueError:
            depth = math.inf
        if math.isnan(depth):
            depth = None  # NaN: depth unknown
        elif math.isinf(depth):
            depth = None
            problems.append(f"bad depth '{depth_token}'")
    label = " ".join(tokens[index:]) or None
    if problems or when is None or position is None or course is None or speed is None:
        raise LineError("; ".join(problems))
    key, iso = when
    return name, symbol, layer, (key, iso, position[0], position[1], course, speed, depth, label)


def field_counts(line: str) -> tuple[int, int]:
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
