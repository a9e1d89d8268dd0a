"""Reading Debrief features as they really are.

Features stay plain GeoJSON dicts, so nothing a tool does not know about is ever dropped and a
plot round-trips unchanged; the functions here only read them. They understand every shape the
real files use (see ``shared/spec/domain.md``):

* the kind of a feature from ``properties.kind`` (``TRACK`` / ``track``, ``POINT``, ``zone``)
  or, in ``.plot.json`` files, ``properties.dataType`` (``reference-point`` is a point, an
  ``annotation`` with a polygon is a zone);
* track times from ``properties.timestamps[]``, ``properties.positions[].time``,
  ``properties.times[]`` or a 4th coordinate in epoch milliseconds, in that order;
* ids that are strings or numbers (compared as strings), geometries with no coordinates.

Times are float seconds since the Unix epoch, UTC. A track that cannot be analysed honestly
(no times, times that go backwards, a time per coordinate missing) is a
:class:`~debrief_calc.errors.ValidationFailed` that names the feature, the field and the rule.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from debrief_calc.errors import ValidationFailed

__all__ = [
    "KINDS",
    "Kind",
    "TrackData",
    "feature_bounds",
    "feature_id",
    "feature_kind",
    "feature_name",
    "feature_summary",
    "iso",
    "iso_many",
    "parse_iso",
    "parse_times",
    "point_lonlat",
    "track_data",
    "zone_rings",
]

FloatArray = NDArray[np.float64]

Kind = Literal[
    "track", "zone", "point", "annotation", "buoyfield", "backdrop", "metadata", "analysis-result", "unknown"
]
KINDS: Final[tuple[str, ...]] = get_args(Kind)

_POLYGONS: Final = ("Polygon", "MultiPolygon")
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
# A bare number in a times list at or above this is read as epoch milliseconds (1973 onwards);
# below it, as epoch seconds (up to the year 5138).
_EPOCH_MS_THRESHOLD: Final = 1e11


# --- identity ------------------------------------------------------------------------------


def _properties(feature: object) -> Mapping[str, Any]:
    props = feature.get("properties") if isinstance(feature, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _geometry(feature: object) -> Mapping[str, Any] | None:
    geom = feature.get("geometry") if isinstance(feature, Mapping) else None
    return geom if isinstance(geom, Mapping) else None


def _geometry_type(feature: object) -> str | None:
    geom = _geometry(feature)
    gtype = geom.get("type") if geom is not None else None
    return gtype if isinstance(gtype, str) else None


def feature_kind(feature: Mapping[str, Any]) -> str:
    """The feature's kind, one of :data:`KINDS` for every known spelling; never raises.

    ``properties.kind`` wins over ``properties.dataType``. An unknown value comes back
    lower-cased; a feature with neither is ``"unknown"``.
    """
    props = _properties(feature)
    for key in ("kind", "dataType"):
        value = props.get(key)
        if isinstance(value, str) and value.strip():
            kind = value.strip().lower()
            if kind == "reference-point":
                return "point"
            if kind == "annotation" and _geometry_type(feature) in _POLYGONS:
                return "zone"
            return kind
    return "unknown"


def _raw_id(feature: object) -> str | None:
    fid = feature.get("id") if isinstance(feature, Mapping) else None
    if isinstance(fid, bool) or not isinstance(fid, str | int | float) or fid == "":
        return None
    return str(fid)


def feature_id(feature: Mapping[str, Any], index: int | None = None) -> str:
    """The feature's id as a string (ids may be numbers); ValidationFailed when it has none."""
    fid = _raw_id(feature)
    if fid is None:
        where = f"feature #{index}" if index is not None else "a feature"
        name = feature_name(feature)
        named = f" ({name!r})" if name else ""
        raise ValidationFailed(
            f"{where}{named} has no id: give each feature a string or number 'id'",
            details={"feature_id": None, "field": "id", "rule": "required", "index": index},
        )
    return fid


def feature_name(feature: Mapping[str, Any]) -> str | None:
    """``properties.name`` when it is a non-empty string, else None."""
    name = _properties(feature).get("name")
    return name if isinstance(name, str) and name else None


def _label(feature: object, index: int | None, noun: str = "feature") -> str:
    fid = _raw_id(feature)
    name = _properties(feature).get("name")
    parts = [noun]
    if isinstance(name, str) and name:
        parts.append(repr(name))
    if fid is not None:
        parts.append(f"(id {fid!r})")
    elif index is not None:
        parts.append(f"(#{index})")
    return " ".join(parts)


def _fail(label: str, fid: str | None, field: str, rule: str, message: str, **extra: Any) -> ValidationFailed:
    details: dict[str, Any] = {"feature_id": fid, "field": field, "rule": rule}
    details.update(extra)
    return ValidationFailed(f"{label}: {message}", details=details)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float_or_nan(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.nan


# --- times ---------------------------------------------------------------------------------


# ISO-8601 extended format: date, optionally a time (to the hour, minute, second or a
# fraction) and a zone. datetime.fromisoformat alone would also take any separator character.
_ISO_EXTENDED: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[Tt ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
    r"(?:[Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d+)?)?)?)?)?",
    re.ASCII,
)


def parse_iso(s: str) -> float:
    """An ISO-8601 date-time as epoch seconds; ``Z``, offsets, any fraction, naive = UTC."""
    if not isinstance(s, str):
        raise ValidationFailed(f"time {s!r} is not an ISO-8601 string", details={"field": "time", "rule": "iso-8601"})
    text = s.strip()
    try:
        if not _ISO_EXTENDED.fullmatch(text):
            raise ValueError(text)
        if text[-1:] in ("z", "Z"):
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(
            f"time {s!r} is not ISO-8601 (like 2024-11-14T21:16:53.661Z)",
            details={"field": "time", "rule": "iso-8601", "value": s},
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH).total_seconds()


def iso(t: float) -> str:
    """Epoch seconds as ISO-8601 UTC: ``2024-11-14T21:16:53Z``, or ``…53.662Z`` when the time
    is not a whole second (rounded to the millisecond)."""
    if not math.isfinite(t):
        raise ValidationFailed(f"time {t!r} is not finite", details={"field": "time", "rule": "finite"})
    ms = round(t * 1000)
    dt = (_EPOCH + timedelta(milliseconds=ms)).replace(tzinfo=None)
    if ms % 1000 == 0:
        return dt.isoformat(timespec="seconds") + "Z"
    return dt.isoformat(timespec="milliseconds") + "Z"


def iso_many(t: FloatArray) -> list[str]:
    """:func:`iso` for a whole array at once (NaN gives an empty string)."""
    values = np.asarray(t, dtype=np.float64)
    finite = np.isfinite(values)
    ms = np.zeros(values.shape, dtype=np.int64)
    ms[finite] = np.round(values[finite] * 1000).astype(np.int64)
    text = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms")
    whole = np.strings.endswith(text, ".000")
    text = np.where(whole, np.strings.slice(text, 0, -4), text)
    out: list[str] = np.strings.add(text, "Z").tolist()
    for i in np.flatnonzero(~finite):
        out[i] = ""
    return out


_DAYS_IN_MONTH: Final = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)
# The byte columns of "YYYY-MM-DDTHH:MM:SS" that hold digits, in pairs.
_DIGITS: Final = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_SEPARATORS: Final = ((4, b"-"), (7, b"-"), (13, b":"), (16, b":"))
_ROWS_PER_BLOCK: Final = 1 << 16


def _parse_fixed(block: NDArray[np.uint8], zulu: bool) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Parse rows of ASCII bytes ``YYYY-MM-DDTHH:MM:SS[.f…][Z]``, all of one width; the mask
    says which rows are well formed (the others are left to :func:`parse_iso`)."""
    m, w = block.shape
    body = w - 1 if zulu else w
    frac_digits = body - 20
    out = np.full(m, np.nan)
    ok = np.zeros(m, dtype=bool)
    if body < 19 or frac_digits == 0:
        return out, ok
    for lo in range(0, m, _ROWS_PER_BLOCK):
        rows = block[lo : lo + _ROWS_PER_BLOCK]
        # uint8 arithmetic wraps, so one comparison checks '0' <= byte <= '9'
        digits = rows[:, :body] - np.uint8(48)
        date_digits = digits[:, _DIGITS]
        good = np.all(date_digits < 10, axis=1)
        for col, char in _SEPARATORS:
            good &= rows[:, col] == char[0]
        good &= (rows[:, 10] == ord("T")) | (rows[:, 10] == ord(" "))
        pairs = date_digits[:, 0::2].astype(np.int64) * 10 + date_digits[:, 1::2]
        century, year, month, day, hour, minute, second = pairs.T
        year = century * 100 + year
        micros = np.zeros(len(rows), dtype=np.int64)
        if frac_digits > 0:
            good &= (rows[:, 19] == ord(".")) & np.all(digits[:, 20:body] < 10, axis=1)
            for j in range(min(frac_digits, 6)):  # beyond microseconds: truncated, as datetime does
                micros += digits[:, 20 + j].astype(np.int64) * 10 ** (5 - j)
        good &= (month >= 1) & (month <= 12) & (hour < 24) & (minute < 60) & (second < 60) & (year >= 1)
        month = np.clip(month, 1, 12)
        leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
        good &= (day >= 1) & (day <= _DAYS_IN_MONTH[month - 1] + ((month == 2) & leap))
        # days from the civil date (H. Hinnant's algorithm), proleptic Gregorian like datetime
        y = year - (month <= 2)
        era = y // 400
        yoe = y - era * 400
        doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
        days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
        seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
        out[lo : lo + len(rows)] = seconds + micros / 1e6
        ok[lo : lo + len(rows)] = good
    return out, ok


def _parse_iso_strings(values: Sequence[str]) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Vectorised parse of the common forms; the strings it cannot read are marked not ok."""
    n = len(values)
    out = np.full(n, np.nan)
    ok = np.zeros(n, dtype=bool)
    try:
        data = np.frombuffer("".join(values).encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        return out, ok
    lens = np.fromiter(map(len, values), dtype=np.int64, count=n)
    ends = np.cumsum(lens)
    zulu = data[ends - 1] == ord("Z")
    for w in np.unique(lens).tolist():
        if w < 19:
            continue
        for flag in (True, False):
            sel = (lens == w) & (zulu if flag else ~zulu)
            m = int(np.count_nonzero(sel))
            if m == n:
                return _parse_fixed(data.reshape(n, w), flag)
            if m == 0:
                continue
            rows = np.flatnonzero(sel)
            block = np.empty((m, w), dtype=np.uint8)
            for j, start in enumerate(range(-w, 0)):
                block[:, j] = data[ends[rows] + start]
            out[rows], ok[rows] = _parse_fixed(block, flag)
    return out, ok


def parse_times(values: object, *, field: str = "times", label: str = "track", fid: str | None = None) -> FloatArray:
    """A list of times (ISO-8601 strings, or epoch numbers: milliseconds from 1e11 up, seconds
    below) as epoch seconds. ValidationFailed names the first bad index and its value."""
    if not isinstance(values, list | tuple):
        raise _fail(label, fid, field, "type", f"{field} must be a list of times, got {type(values).__name__}")
    n = len(values)
    if n and all(isinstance(v, str) for v in values):
        out, ok = _parse_iso_strings(values)
    else:
        out, ok = np.full(n, np.nan), np.zeros(n, dtype=bool)
        numbers = [i for i, v in enumerate(values) if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers:
            try:
                num = np.array([values[i] for i in numbers], dtype=np.float64)
            except OverflowError:  # an integer beyond any float: reported below
                num = np.array([_float_or_nan(values[i]) for i in numbers])
            finite = np.isfinite(num)
            if finite.any() and float(np.max(np.abs(num[finite]))) >= _EPOCH_MS_THRESHOLD:
                num = num / 1000.0
            out[numbers] = num
            ok[numbers] = finite
    for i in np.flatnonzero(~ok).tolist():
        value = values[i]
        if isinstance(value, str):
            try:
                out[i] = parse_iso(value)
                continue
            except ValidationFailed:
                pass
        raise _fail(
            label,
            fid,
            field,
            "time-format",
            f"{field}[{i}] = {value!r} is not a time: use ISO-8601 like 2024-11-14T21:16:53.661Z",
            index=i,
            value=repr(value)[:100],
        )
    return out


# --- coordinates ---------------------------------------------------------------------------


def _uniform_rows(rows: Sequence[Any]) -> FloatArray | None:
    """Rows that all have the same 2 to 4 values, as an (n, k) float array read at C speed
    (each value as ``float()`` reads it, so a stray numeric string or boolean is read as its
    number); None when the rows are not like that, for a careful look row by row."""
    n = len(rows)
    if n == 0 or not isinstance(rows[0], list | tuple):
        return None
    try:
        lens = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        k = int(lens[0])
        if not (2 <= k <= 4 and np.all(lens == k)):
            return None
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.float64, count=n * k)
    except (TypeError, ValueError, OverflowError):
        return None
    return flat.reshape(n, k)


def _position_rows(rows: Sequence[Any], label: str, fid: str | None, field: str) -> FloatArray:
    """Positions ``[lon, lat, z?, t?]`` as an (n, 4) float array, NaN where a row is shorter."""
    out = np.full((len(rows), 4), np.nan)
    block = _uniform_rows(rows)
    if block is not None:
        out[:, : block.shape[1]] = block
        return out
    for i, row in enumerate(rows):
        good = isinstance(row, list | tuple) and len(row) >= 2
        if good:
            for j, value in enumerate(row[:4]):
                if not _is_number(value):
                    good = False
                    break
                try:
                    out[i, j] = value
                except OverflowError:
                    good = False
                    break
        if not good:
            raise _fail(
                label,
                fid,
                field,
                "position",
                f"{field}[{i}] = {str(row)[:80]} is not a position [lon, lat] or [lon, lat, z, time_ms]",
                index=i,
            )
    return out


def _check_lonlat(lon: FloatArray, lat: FloatArray, label: str, fid: str | None, field: str) -> None:
    finite = np.isfinite(lon) & np.isfinite(lat)
    bad = ~(finite & (np.abs(lat) <= 90) & (np.abs(lon) <= 180))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        if not finite[i]:
            rule, why = "finite", "longitude and latitude must be finite numbers"
        else:
            rule, why = "range", "longitude must lie in [-180, 180] and latitude in [-90, 90] degrees"
        raise _fail(
            label, fid, field, rule, f"{field}[{i}] = [{lon[i]!r}, {lat[i]!r}] is not a position: {why}", index=i
        )


def _line_rows(geom: Mapping[str, Any], label: str, fid: str | None) -> list[Any]:
    gtype = geom.get("type")
    coords = geom.get("coordinates")
    if gtype == "LineString":
        if not isinstance(coords, list):
            raise _fail(label, fid, "geometry.coordinates", "type", "LineString coordinates must be a list")
        return coords
    if gtype == "MultiLineString":
        if not isinstance(coords, list) or not all(isinstance(part, list) for part in coords):
            raise _fail(
                label,
                fid,
                "geometry.coordinates",
                "type",
                "MultiLineString coordinates must be a list of lines",
            )
        return [row for part in coords for row in part]
    raise _fail(
        label,
        fid,
        "geometry.type",
        "geometry-type",
        f"a track needs a LineString or MultiLineString geometry, not {gtype!r}",
    )


@dataclass(frozen=True, eq=False)
class TrackData:
    """A track's fixes as read-only arrays: positions in degrees, times in epoch seconds (UTC,
    never decreasing), depth in metres (positive down) when the data gives one."""

    id: str
    name: str | None
    lon: FloatArray
    lat: FloatArray
    t: FloatArray
    depth: FloatArray | None
    time_field: str  # where the times came from, e.g. "properties.timestamps"

    def __len__(self) -> int:
        return int(self.t.size)


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, list | tuple) and len(value) == 0)


def track_data(feature: Mapping[str, Any], *, index: int | None = None) -> TrackData:
    """Positions, times and depths of a track feature, validated.

    Coordinates come from a LineString or MultiLineString (parts joined in order) or, when the
    geometry has none, from ``properties.positions[].coordinates``. Times come from the first
    of ``properties.timestamps``, ``properties.positions[].time``, ``properties.times`` and a
    4th coordinate (epoch ms). Depth comes from ``properties.positions[].depth`` or else from
    the 3rd coordinate (an elevation, so depth is its negation).
    """
    return _read_track(feature, index, feature_id(feature, index))


def _read_track(feature: Mapping[str, Any], index: int | None, fid: str) -> TrackData:
    name = feature_name(feature)
    label = _label(feature, index, "track")
    props = _properties(feature)
    geom = _geometry(feature)

    positions = props.get("positions")
    if _present(positions) and not (isinstance(positions, list) and all(isinstance(p, Mapping) for p in positions)):
        raise _fail(label, fid, "properties.positions", "type", "positions must be a list of objects")
    pos_list: list[Mapping[str, Any]] = positions if isinstance(positions, list) else []

    rows: list[Any] = _line_rows(geom, label, fid) if geom is not None else []
    coord_field = "geometry.coordinates"
    if not rows and pos_list and all("coordinates" in p for p in pos_list):
        rows = [p["coordinates"] for p in pos_list]
        coord_field = "properties.positions[].coordinates"
    if not rows:
        raise _fail(
            label,
            fid,
            "geometry.coordinates",
            "required",
            "has no coordinates: give a LineString geometry or properties.positions[].coordinates",
        )
    xyzt = _position_rows(rows, label, fid, coord_field)
    lon = np.ascontiguousarray(xyzt[:, 0])
    lat = np.ascontiguousarray(xyzt[:, 1])
    _check_lonlat(lon, lat, label, fid, coord_field)
    n = lon.size

    timestamps = props.get("timestamps")
    times_prop = props.get("times")
    if _present(timestamps):
        time_field = "properties.timestamps"
        t = parse_times(timestamps, field=time_field, label=label, fid=fid)
    elif pos_list and any("time" in p for p in pos_list):
        time_field = "properties.positions[].time"
        t = parse_times([p.get("time") for p in pos_list], field=time_field, label=label, fid=fid)
    elif _present(times_prop):
        time_field = "properties.times"
        t = parse_times(times_prop, field=time_field, label=label, fid=fid)
    elif not np.isnan(xyzt[:, 3]).any():
        time_field = f"{coord_field}[][3]"
        t = xyzt[:, 3] / 1000.0
    else:
        raise _fail(
            label,
            fid,
            "properties.timestamps",
            "required",
            "has no times: give properties.timestamps (ISO-8601, one per coordinate), "
            "properties.positions[].time, properties.times, or epoch milliseconds as a 4th "
            "coordinate value",
        )
    if t.size != n:
        raise _fail(
            label,
            fid,
            time_field,
            "count",
            f"has {t.size} times in {time_field} for {n} positions: give exactly one time per position",
            times=int(t.size),
            positions=n,
        )
    if not np.isfinite(t).all():
        i = int(np.flatnonzero(~np.isfinite(t))[0])
        raise _fail(label, fid, time_field, "finite", f"{time_field}[{i}] is not a finite time", index=i)
    if n > 1:
        back = np.flatnonzero(np.diff(t) < 0)
        if back.size:
            i = int(back[0]) + 1
            raise _fail(
                label,
                fid,
                time_field,
                "monotonic",
                f"time goes backwards at {time_field}[{i}]: {iso(float(t[i]))} comes after "
                f"{iso(float(t[i - 1]))}; fixes must be in time order",
                index=i,
            )

    depth: FloatArray | None = None
    pos_depths = [p.get("depth") for p in pos_list] if len(pos_list) == n else []
    if pos_depths and all(isinstance(d, int | float) and not isinstance(d, bool) for d in pos_depths):
        depth = np.array(pos_depths, dtype=np.float64)
    elif not np.isnan(xyzt[:, 2]).any():
        depth = 0.0 - xyzt[:, 2]  # 0.0 - z keeps a surface fix at +0.0, not -0.0

    t = np.ascontiguousarray(t, dtype=np.float64)
    for arr in (lon, lat, t, depth):
        if arr is not None:
            arr.flags.writeable = False
    return TrackData(id=fid, name=name, lon=lon, lat=lat, t=t, depth=depth, time_field=time_field)


def zone_rings(feature: Mapping[str, Any]) -> list[FloatArray]:
    """The outer ring of each polygon of a Polygon or MultiPolygon, as (n, 2) ``[lon, lat]``."""
    label = _label(feature, None, "zone")
    fid = _raw_id(feature)
    geom = _geometry(feature)
    gtype = geom.get("type") if geom is not None else None
    coords = geom.get("coordinates") if geom is not None else None
    if gtype not in _POLYGONS or not isinstance(coords, list):
        raise _fail(
            label,
            fid,
            "geometry.type",
            "geometry-type",
            f"a zone needs a Polygon or MultiPolygon geometry, not {gtype!r}",
        )
    polygons = [coords] if gtype == "Polygon" else coords
    rings: list[FloatArray] = []
    for p, polygon in enumerate(polygons):
        field = "geometry.coordinates" + ("[0]" if gtype == "Polygon" else f"[{p}][0]")
        if not isinstance(polygon, list) or not polygon or not isinstance(polygon[0], list):
            raise _fail(label, fid, field, "required", "a polygon needs an outer ring")
        ring = _position_rows(polygon[0], label, fid, field)[:, :2]
        _check_lonlat(ring[:, 0], ring[:, 1], label, fid, field)
        distinct = ring[:-1] if len(ring) > 1 and np.array_equal(ring[0], ring[-1]) else ring
        if len(distinct) < 3:
            raise _fail(label, fid, field, "min-vertices", f"a ring needs at least 3 vertices, has {len(distinct)}")
        rings.append(np.ascontiguousarray(ring))
    return rings


def point_lonlat(feature: Mapping[str, Any]) -> tuple[float, float]:
    """``(lon, lat)`` of a Point feature."""
    label = _label(feature, None, "point")
    fid = _raw_id(feature)
    geom = _geometry(feature)
    gtype = geom.get("type") if geom is not None else None
    if gtype != "Point" or geom is None:
        raise _fail(label, fid, "geometry.type", "geometry-type", f"a point needs a Point geometry, not {gtype!r}")
    coords = geom.get("coordinates")
    if not isinstance(coords, list | tuple):
        raise _fail(label, fid, "geometry.coordinates", "position", "Point coordinates must be [lon, lat]")
    xy = _position_rows([coords], label, fid, "geometry.coordinates")
    _check_lonlat(xy[:, 0], xy[:, 1], label, fid, "geometry.coordinates")
    return float(xy[0, 0]), float(xy[0, 1])


# --- bounds and summary --------------------------------------------------------------------


def _collect_positions(coords: object, out: list[FloatArray]) -> None:
    if not isinstance(coords, list | tuple) or not coords:
        return
    first = coords[0]
    if _is_number(first):
        if len(coords) >= 2 and _is_number(coords[1]):
            out.append(np.array([[_float_or_nan(coords[0]), _float_or_nan(coords[1])]]))
        return
    block = _uniform_rows(coords)
    if block is not None:
        out.append(block[:, :2])
        return
    for item in coords:
        _collect_positions(item, out)


def _collect_geometry(geom: object, out: list[FloatArray], depth: int = 0) -> None:
    if not isinstance(geom, Mapping) or depth > 16:
        return
    if geom.get("type") == "GeometryCollection":
        subs = geom.get("geometries")
        for sub in subs if isinstance(subs, list) else []:
            _collect_geometry(sub, out, depth + 1)
    else:
        _collect_positions(geom.get("coordinates"), out)


def _positions(feature: object) -> FloatArray:
    out: list[FloatArray] = []
    _collect_geometry(_geometry(feature), out)
    return np.concatenate(out) if out else np.zeros((0, 2))


def feature_bounds(feature: Mapping[str, Any]) -> tuple[float, float, float, float] | None:
    """``(west, south, east, north)`` over every position of any geometry type, or None when
    there are none. Positions that are not finite numbers are skipped; never raises."""
    return _bounds(_positions(feature))


def _bounds(xy: FloatArray) -> tuple[float, float, float, float] | None:
    xy = xy[np.isfinite(xy).all(axis=1)]
    if xy.size == 0:
        return None
    return (float(xy[:, 0].min()), float(xy[:, 1].min()), float(xy[:, 0].max()), float(xy[:, 1].max()))


def _iso_or_none(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return iso(parse_iso(value))
    except ValidationFailed:
        return None


def feature_summary(feature: Mapping[str, Any]) -> dict[str, Any]:
    """``{id, kind, name, point_count, time_start, time_end, bounds}`` without coordinates.

    Never raises: a track whose times cannot be read has ``time_start`` and ``time_end`` None.
    Other features report ``properties.time`` and ``properties.timeEnd`` when present.
    """
    kind = feature_kind(feature)
    summary: dict[str, Any] = {
        "id": _raw_id(feature),
        "kind": kind,
        "name": feature_name(feature),
        "point_count": 0,
        "time_start": None,
        "time_end": None,
        "bounds": None,
    }
    if kind == "track":
        try:
            track = _read_track(feature, None, _raw_id(feature) or "")
        except ValidationFailed:
            pass
        else:
            bounds = _bounds(np.column_stack([track.lon, track.lat]))
            summary["point_count"] = len(track)
            summary["bounds"] = list(bounds) if bounds is not None else None
            summary["time_start"] = iso(float(track.t[0]))
            summary["time_end"] = iso(float(track.t[-1]))
            return summary
    else:
        props = _properties(feature)
        summary["time_start"] = _iso_or_none(props.get("time"))
        summary["time_end"] = _iso_or_none(props.get("timeEnd"))
    xy = _positions(feature)
    bounds = _bounds(xy)
    summary["point_count"] = len(xy)
    summary["bounds"] = list(bounds) if bounds is not None else None
    return summary
