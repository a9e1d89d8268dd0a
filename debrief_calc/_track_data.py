"""Track features as validated arrays: positions, times (never decreasing) and depths."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc._arrays import FloatArray
from debrief_calc._coordinates import check_lonlat, line_rows, position_rows
from debrief_calc._feature_parts import (
    feature_id,
    feature_label,
    feature_name,
    field_failure,
    geometry_of,
    properties_of,
)
from debrief_calc._times import iso, parse_times

__all__ = ["TrackData", "read_track", "track_data"]


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
    return read_track(feature, index, feature_id(feature, index))


def read_track(feature: Mapping[str, Any], index: int | None, fid: str) -> TrackData:
    name = feature_name(feature)
    label = feature_label(feature, index, "track")
    props = properties_of(feature)
    geom = geometry_of(feature)

    positions = props.get("positions")
    if _present(positions) and not (isinstance(positions, list) and all(isinstance(p, Mapping) for p in positions)):
        raise field_failure(label, fid, "properties.positions", "type", "positions must be a list of objects")
    pos_list: list[Mapping[str, Any]] = positions if isinstance(positions, list) else []

    rows: list[Any] = line_rows(geom, label, fid) if geom is not None else []
    coord_field = "geometry.coordinates"
    if not rows and pos_list and all("coordinates" in p for p in pos_list):
        rows = [p["coordinates"] for p in pos_list]
        coord_field = "properties.positions[].coordinates"
    if not rows:
        raise field_failure(
            label,
            fid,
            "geometry.coordinates",
            "required",
            "has no coordinates: give a LineString geometry or properties.positions[].coordinates",
        )
    xyzt = position_rows(rows, label, fid, coord_field)
    lon = np.ascontiguousarray(xyzt[:, 0])
    lat = np.ascontiguousarray(xyzt[:, 1])
    check_lonlat(lon, lat, label, fid, coord_field)
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
        raise field_failure(
            label,
            fid,
            "properties.timestamps",
            "required",
            "has no times: give properties.timestamps (ISO-8601, one per coordinate), "
            "properties.positions[].time, properties.times, or epoch milliseconds as a 4th "
            "coordinate value",
        )
    if t.size != n:
        raise field_failure(
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
        raise field_failure(label, fid, time_field, "finite", f"{time_field}[{i}] is not a finite time", index=i)
    if n > 1:
        back = np.flatnonzero(np.diff(t) < 0)
        if back.size:
            i = int(back[0]) + 1
            raise field_failure(
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
