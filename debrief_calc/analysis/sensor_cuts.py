"""A sensor's cuts as arrays, and which of a run's features are the sensor, its host and the target.

A sensor feature (``properties.dataType`` ``sensor``, as ``import-rep`` makes them) holds one cut
per point of its MultiPoint geometry (the cut's origin, ``[lon, lat]``) and per item of each per-cut
list: ``timestamps`` (ascending), ``bearings`` (true degrees or null), ``ambiguousBearings``,
``frequencies`` (Hz), ``rangesYd``, ``bearingAccuracies`` (degrees), ``frequencyAccuracies``; its
``host`` is the id of the track that carried it and ``baseFrequency`` its f0 when known. Lists
other than the times and bearings may be absent (no cut has one).

Cuts are numbered from 1 in time order, as the answers give them (``cut``); the ``cuts`` parameter
picks some by those numbers (``7``, ``"5-10"``) or by their times (ISO-8601).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.registry import Parameter
from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks._feature_parts import feature_kind, field_failure, geometry_of, properties_of, raw_id
from debrief_calc.tracks.features import TrackData, iso, parse_times, track_data

__all__ = [
    "CUTS_PARAM",
    "OWNSHIP_PARAM",
    "SENSOR_PARAM",
    "Cuts",
    "Roles",
    "read_cuts",
    "roles_of",
    "select_cuts",
]

#: the per-cut lists read as numbers (null: none for that cut), and the name each has here
_NUMBER_LISTS: Final = (
    ("bearings", "bearing"),
    ("ambiguousBearings", "ambiguous"),
    ("frequencies", "frequency"),
    ("rangesYd", "range_yd"),
    ("bearingAccuracies", "bearing_sd"),
    ("frequencyAccuracies", "frequency_sd"),
)
_RANGE_ITEM: Final = re.compile(r"^\s*(\d+)\s*[-–]\s*(\d+)\s*$")

CUTS_PARAM: Final = Parameter(
    "cuts",
    "array",
    "Which cuts to use: cut numbers (1 = the first cut given; a time window counts from its first), ranges "
    "'5-10', or cut times (ISO-8601); default all.",
)
SENSOR_PARAM: Final = Parameter("sensor", "string", "Id of the sensor to use when the features hold several sensors.")
OWNSHIP_PARAM: Final = Parameter(
    "ownship",
    "string",
    "Id of the track that carried the sensor (default the sensor's host, properties.host).",
)


@dataclass(frozen=True, eq=False)
class Cuts:
    """A sensor's cuts: numbers (from 1), times (epoch s), origins (degrees) and each measured value
    (NaN where the cut has none); bearings true, in [0, 360)."""

    sensor_id: str
    name: str
    host: str | None
    host_name: str | None
    base_frequency: float | None
    number: np.ndarray[Any, np.dtype[np.int64]]
    t: FloatArray
    lat: FloatArray
    lon: FloatArray
    bearing: FloatArray
    ambiguous: FloatArray
    frequency: FloatArray
    range_yd: FloatArray
    bearing_sd: FloatArray
    frequency_sd: FloatArray

    def __len__(self) -> int:
        return int(self.t.size)

    def take(self, index: Any) -> Cuts:
        """These cuts at ``index`` (a boolean mask or positions), numbers kept."""
        arrays = {
            f.name: getattr(self, f.name)[index] for f in fields(self) if isinstance(getattr(self, f.name), np.ndarray)
        }
        return replace(self, **arrays)

    @property
    def label(self) -> str:
        return f"sensor {self.sensor_id!r} ({self.name})"


def _number_list(props: Mapping[str, Any], key: str, n: int, fid: str | None) -> FloatArray:
    values = props.get(key)
    if values is None:
        return np.full(n, np.nan)
    if not isinstance(values, list) or len(values) != n:
        got = f"{len(values)} items" if isinstance(values, list) else type(values).__name__
        raise field_failure(
            f"sensor {fid!r}",
            fid,
            f"properties.{key}",
            "one per cut",
            f"properties.{key} must list one value per cut ({n}), has {got}",
        )
    out = np.full(n, np.nan)
    for i, v in enumerate(values):
        if v is None:
            continue
        if not isinstance(v, int | float) or isinstance(v, bool) or not np.isfinite(v):
            raise field_failure(
                f"sensor {fid!r}",
                fid,
                f"properties.{key}[{i}]",
                "number or null",
                f"properties.{key}[{i}] is {str(v)[:40]!r}: a number, or null for none",
            )
        out[i] = float(v)
    return out


def read_cuts(feature: Mapping[str, Any], *, index: int | None = None) -> Cuts:
    """The cuts of a sensor feature, validated: a ValidationFailed names the field and the rule."""
    fid = raw_id(feature) or (f"features[{index}]" if index is not None else "sensor")
    props = properties_of(feature)
    geom = geometry_of(feature) or {}
    coords = geom.get("coordinates")
    if geom.get("type") not in ("MultiPoint", "Point") or not isinstance(coords, list):
        raise field_failure(
            f"sensor {fid!r}", fid, "geometry", "multipoint", "a sensor's geometry is a MultiPoint of its cuts' origins"
        )
    if geom.get("type") == "Point":
        coords = [coords]
    rows = [c for c in coords if isinstance(c, list | tuple) and len(c) >= 2]
    if len(rows) != len(coords) or not all(
        isinstance(c[0], int | float) and isinstance(c[1], int | float) for c in rows
    ):
        raise field_failure(
            f"sensor {fid!r}", fid, "geometry.coordinates", "positions", "each cut's origin must be [lon, lat]"
        )
    n = len(rows)
    if n == 0:
        raise field_failure(f"sensor {fid!r}", fid, "geometry.coordinates", "min items", "the sensor has no cuts")
    times = props.get("timestamps")
    if not isinstance(times, list) or len(times) != n:
        got = f"{len(times)}" if isinstance(times, list) else "none"
        raise field_failure(
            f"sensor {fid!r}",
            fid,
            "properties.timestamps",
            "one per cut",
            f"properties.timestamps must hold one time per cut ({n}), has {got}",
        )
    t = parse_times(times, field="properties.timestamps", label="sensor", fid=fid)
    if n > 1 and np.any(np.diff(t) < 0):
        k = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise field_failure(
            f"sensor {fid!r}",
            fid,
            f"properties.timestamps[{k}]",
            "ascending",
            f"cut {k + 1} ({times[k]}) is earlier than cut {k} ({times[k - 1]}): a sensor's cuts must be in time order",
        )
    xy = np.asarray([[float(c[0]), float(c[1])] for c in rows], dtype=np.float64)
    if not np.all(np.isfinite(xy)) or np.any(np.abs(xy[:, 1]) > 90):
        raise field_failure(
            f"sensor {fid!r}",
            fid,
            "geometry.coordinates",
            "range",
            "origins need finite longitudes and latitudes within ±90°",
        )
    lists = {name: _number_list(props, key, n, fid) for key, name in _NUMBER_LISTS}
    for name in ("bearing", "ambiguous"):
        lists[name] = lists[name] % 360.0
    base = props.get("baseFrequency")
    host, host_name = props.get("host"), props.get("hostName")
    return Cuts(
        sensor_id=str(fid),
        name=str(props.get("name") or fid),
        host=str(host) if isinstance(host, str | int) and host != "" else None,
        host_name=host_name if isinstance(host_name, str) else None,
        base_frequency=float(base)
        if isinstance(base, int | float) and not isinstance(base, bool) and base > 0
        else None,
        number=np.arange(1, n + 1, dtype=np.int64),
        t=t,
        lat=xy[:, 1].copy(),
        lon=xy[:, 0].copy(),
        **lists,
    )


def _selection_error(item: object, message: str) -> ValidationFailed:
    return ValidationFailed(
        f"parameter 'cuts': {message}",
        details={"field": "cuts", "rule": "cut numbers or times", "value": str(item)[:60]},
    )


def select_cuts(cuts: Cuts, wanted: Sequence[Any] | None) -> Cuts:
    """The cuts the ``cuts`` parameter names (None: all), in time order, each once."""
    if wanted is None:
        return cuts
    if not wanted:
        raise _selection_error(wanted, "an empty list selects nothing: leave it out for all cuts")
    first, last = int(cuts.number[0]), int(cuts.number[-1])
    keep = np.zeros(len(cuts), dtype=bool)
    for item in wanted:
        if isinstance(item, int) and not isinstance(item, bool):
            lo = hi = item
        elif isinstance(item, float) and item.is_integer():
            lo = hi = int(item)
        elif isinstance(item, str) and (m := _RANGE_ITEM.match(item)):
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise _selection_error(item, f"{item!r} runs backwards: write '{hi}-{lo}'")
        elif isinstance(item, str):
            try:
                when = float(parse_times([item], field="cuts", label="parameter")[0])
            except ValidationFailed:
                raise _selection_error(
                    item, f"{item!r} is neither a cut number, a range 'a-b' nor an ISO-8601 time"
                ) from None
            hit = np.flatnonzero(np.abs(cuts.t - when) < 5e-4)
            if not hit.size:
                near = int(np.argmin(np.abs(cuts.t - when)))
                raise _selection_error(
                    item,
                    f"no cut at {iso(when)}; the nearest is cut {int(cuts.number[near])} at {iso(float(cuts.t[near]))}",
                )
            keep[hit] = True
            continue
        else:
            raise _selection_error(
                item, f"{str(item)[:40]!r} is neither a cut number, a range 'a-b' nor an ISO-8601 time"
            )
        if lo < first or hi > last:
            raise _selection_error(item, f"{item!r} is outside the cuts given, numbered {first} to {last}")
        keep |= (cuts.number >= lo) & (cuts.number <= hi)
    return cuts.take(keep)


@dataclass(frozen=True)
class Roles:
    """What each feature of a run is: the sensor (its cuts), the host track (ownship) when given,
    the other tracks (by id), and the ids of what was passed over."""

    cuts: Cuts
    sensor: Mapping[str, Any]
    sensor_index: int
    ownship: TrackData | None
    ownship_feature: Mapping[str, Any] | None
    ownship_index: int
    others: list[tuple[TrackData, Mapping[str, Any], int]]


def roles_of(features: Sequence[Mapping[str, Any]], sensor_id: str | None, ownship_id: str | None) -> Roles:
    """The sensor (the one given, or ``sensor_id``), its host (``ownship_id``, else the sensor's
    ``host``) and the other tracks. InvalidContext when no sensor or several without ``sensor_id``."""
    sensors = [(i, f) for i, f in enumerate(features) if feature_kind(f) == "sensor"]
    if sensor_id is not None:
        chosen = [(i, f) for i, f in sensors if raw_id(f) == sensor_id]
        if not chosen:
            raise ValidationFailed(
                f"parameter 'sensor': {sensor_id!r} is not among the sensors given ("
                + (", ".join(repr(raw_id(f)) for _, f in sensors) or "none")
                + ")",
                details={"field": "sensor", "rule": "exists", "sensors": [raw_id(f) for _, f in sensors]},
            )
        sensors = chosen
    if len(sensors) != 1:
        names = [raw_id(f) for _, f in sensors]
        raise InvalidContext(
            "no sensor among the features: give a sensor feature (import-rep makes one per sensor from ;SENSOR: lines)"
            if not sensors
            else f"{len(sensors)} sensors given ({', '.join(map(repr, names))}): name one with parameters.sensor (one "
            "sensor at a time: solve the one whose cuts span an ownship turn; check the other against that solution "
            "with bearing-residuals, which names an ambiguous array's side; then solve the array with "
            "parameters.side)",
            details={"field": "features", "rule": "one sensor", "sensors": names},
            next_action="pass one sensor and its tracks, or set parameters.sensor",
        )
    index, sensor = sensors[0]
    cuts = read_cuts(sensor, index=index)
    host = ownship_id if ownship_id is not None else cuts.host
    tracks = [(track_data(f, index=i), f, i) for i, f in enumerate(features) if feature_kind(f) == "track"]
    if ownship_id is not None and not any(t.id == ownship_id for t, _, _ in tracks):
        raise ValidationFailed(
            f"parameter 'ownship': {ownship_id!r} is not among the tracks given ("
            + (", ".join(repr(t.id) for t, _, _ in tracks) or "none")
            + ")",
            details={"field": "ownship", "rule": "exists", "tracks": [t.id for t, _, _ in tracks]},
        )
    own = next((item for item in tracks if host is not None and item[0].id == host), None)
    others = [item for item in tracks if own is None or item is not own]
    if own is None:
        return Roles(cuts, sensor, index, None, None, -1, others)
    return Roles(cuts, sensor, index, own[0], own[1], own[2], others)


def with_array_offset(
    cuts: Cuts, sensor: Mapping[str, Any], host: TrackData, offset_m: float, mode: str | None
) -> tuple[Cuts, int]:
    """``cuts`` with the origins the sensor's lines did not give (``originGiven`` false: the host's
    position) placed again ``offset_m`` from the host (ahead positive, astern negative; ``mode``
    ``worm-in-hole``: back along the host's own path), as the importers place them; and how many
    moved. Origins the lines gave are kept."""
    from debrief_calc.formats.hosted.hosts import Host
    from debrief_calc.formats.hosted.sensors import SensorSettings, computed_origins

    given = properties_of(sensor).get("originGiven")
    flags = np.array(
        [bool(given[k - 1]) if isinstance(given, list) and k - 1 < len(given) else True for k in cuts.number.tolist()]
    )
    move = ~flags
    if not move.any():
        return cuts, 0
    lat, lon = computed_origins(
        Host(host.id, host.name or host.id, host), cuts.t[move], SensorSettings(offset_m=offset_m, array_mode=mode)
    )
    new_lat, new_lon = cuts.lat.copy(), cuts.lon.copy()
    ok = np.isfinite(lat)
    new_lat[np.flatnonzero(move)[ok]] = lat[ok]
    new_lon[np.flatnonzero(move)[ok]] = lon[ok]
    return replace(cuts, lat=new_lat, lon=new_lon), int(ok.sum())
