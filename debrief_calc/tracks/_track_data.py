"""Track features as validated arrays: positions, times (never decreasing) and depths."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks._coordinates import check_lonlat, line_rows, position_rows
from debrief_calc.tracks._feature_parts import (
    feature_id,
    feature_label,
    feature_name,
    field_failure,
    geometry_of,
    properties_of,
)
from debrief_calc.tracks._time_arrays import parse_times
from debrief_calc.tracks._time_text import iso, parse_iso

__all__ = ["ListedTimes", "TrackData", "WindowEdges", "listed_times", "read_track", "track_data", "track_near"]


@dataclass(frozen=True)
class WindowEdges:
    """Where a track cut to a time window (:mod:`debrief_calc.tracks.times`) went on: the original fix
    just before its first fix and just after its last, ``(lon, lat, t)`` or None where the track
    itself began or ended, and whether each end is a fix interpolated at the cut. Only the motion
    at and next to the ends reads them, so that an instant's course does not hang on the window."""

    before: tuple[float, float, float] | None
    after: tuple[float, float, float] | None
    interpolated: tuple[bool, bool] = (False, False)

    def as_json(self) -> dict[str, Any]:
        return {
            "before": list(self.before) if self.before else None,
            "after": list(self.after) if self.after else None,
            "interpolated": list(self.interpolated),
        }

    @classmethod
    def read(cls, value: object) -> WindowEdges | None:
        """From ``properties.window_edges``; None when absent or not of that shape (a hint only)."""
        if not isinstance(value, Mapping):
            return None

        def fix(v: object) -> tuple[float, float, float] | None:
            if not (isinstance(v, list | tuple) and len(v) == 3):
                return None
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in v):
                return None
            return (float(v[0]), float(v[1]), float(v[2]))

        flags = value.get("interpolated")
        first, last = (
            (bool(flags[0]), bool(flags[1])) if isinstance(flags, list) and len(flags) == 2 else (False, False)
        )
        before, after = fix(value.get("before")), fix(value.get("after"))
        if before is None and after is None:
            return None
        return cls(before, after, (first and before is not None, last and after is not None))

    def trimmed(self, *, head: bool, tail: bool) -> WindowEdges | None:
        """These edges for a piece of the track: ``head``/``tail`` say whether it keeps the first/last fix."""
        before, after = (self.before if head else None), (self.after if tail else None)
        if before is None and after is None:
            return None
        return WindowEdges(before, after, (self.interpolated[0] and head, self.interpolated[1] and tail))


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
    edges: WindowEdges | None = None  # for a track cut to a window: the original fixes beyond its ends

    def __len__(self) -> int:
        return int(self.t.size)


def _numbers(value: object, n: int) -> bool:
    """Whether ``value`` is a list of ``n`` numbers."""
    return (
        isinstance(value, list)
        and len(value) == n
        and all(isinstance(d, int | float) and not isinstance(d, bool) for d in value)
    )


def _present(value: object) -> bool:
    return value is not None and not (isinstance(value, list | tuple) and len(value) == 0)


def track_data(feature: Mapping[str, Any], *, index: int | None = None) -> TrackData:
    """Positions, times and depths of a track feature, validated.

    Coordinates come from a LineString or MultiLineString (parts joined in order) or, when the
    geometry has none, from ``properties.positions[].coordinates``. Times come from the first
    of ``properties.timestamps``, ``properties.positions[].time``, ``properties.times`` and a
    4th coordinate (epoch ms). Depth comes from ``properties.positions[].depth`` or else from
    the 3rd coordinate (an elevation, so depth is its negation), or else from ``properties.depths``.
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
    if pos_depths and _numbers(pos_depths, n):
        depth = np.array(pos_depths, dtype=np.float64)
    elif not np.isnan(xyzt[:, 2]).any():
        depth = 0.0 - xyzt[:, 2]  # 0.0 - z keeps a surface fix at +0.0, not -0.0
    elif _numbers(listed := props.get("depths"), n):  # import-rep's per-fix depths (m)
        depth = np.array(listed, dtype=np.float64)

    t = np.ascontiguousarray(t, dtype=np.float64)
    for arr in (lon, lat, t, depth):
        if arr is not None:
            arr.flags.writeable = False
    edges = WindowEdges.read(props.get("window_edges"))
    return TrackData(id=fid, name=name, lon=lon, lat=lat, t=t, depth=depth, time_field=time_field, edges=edges)


@dataclass(frozen=True)
class ListedTimes:
    """A LineString track with a list of times, one per coordinate (``properties.timestamps``,
    else ``times``): the shape whose times can be bisected, parsing only the few looked at. The
    times are taken to be in order, as every reader of a whole track checks."""

    feature: Mapping[str, Any]
    coords: list[Any]
    times: list[Any]
    field: str  # "properties.timestamps" or "properties.times"
    label: str
    fid: str

    def __len__(self) -> int:
        return len(self.times)

    def at(self, i: int) -> float:
        """The time of fix ``i`` in epoch seconds (ValidationFailed naming ``field[i]``)."""
        value = self.times[i]
        if isinstance(value, str):  # one string: the scalar parser is ~50x faster than the array one
            try:
                return parse_iso(value)
            except ValidationFailed:
                pass  # parse_times names the field and index
        return float(parse_times([value], field=f"{self.field}[{i}]", label=self.label, fid=self.fid)[0])

    def first_at_or_after(self, when: float) -> int:
        return bisect.bisect_left(range(len(self.times)), when, key=self.at)

    def first_after(self, when: float) -> int:
        return bisect.bisect_right(range(len(self.times)), when, key=self.at)

    def piece(self, lo: int, hi: int) -> dict[str, Any]:
        """The track with only fixes ``lo`` to ``hi - 1``: its coordinates and every per-fix list of
        its properties (as long as its times) cut alike; the other members kept."""
        n = len(self.times)
        props = {
            k: v[lo:hi] if isinstance(v, list) and len(v) == n else v for k, v in properties_of(self.feature).items()
        }
        geom = geometry_of(self.feature) or {}
        return {**self.feature, "properties": props, "geometry": {**geom, "coordinates": self.coords[lo:hi]}}


def listed_times(feature: Mapping[str, Any], index: int | None = None) -> ListedTimes | None:
    """The track as :class:`ListedTimes`, or None for any other shape (positions, a MultiLineString,
    times in a 4th coordinate, as many times as coordinates not given)."""
    props, geom = properties_of(feature), geometry_of(feature)
    if geom is None or geom.get("type") != "LineString" or _present(props.get("positions")):
        return None
    coords = geom.get("coordinates")
    field = "properties.timestamps" if _present(props.get("timestamps")) else "properties.times"
    times = props.get(field.split(".")[1])
    if not isinstance(coords, list) or not isinstance(times, list) or not coords or len(times) != len(coords):
        return None
    return ListedTimes(
        feature, coords, times, field, feature_label(feature, index, "track"), feature_id(feature, index)
    )


def track_near(feature: Mapping[str, Any], when: float, *, index: int | None = None) -> tuple[TrackData, float, float]:
    """The fixes of a track around ``when`` (the leg it falls in and the legs either side, so a
    fix's course is the leg after's, or at the last fix the leg before's), validated as
    :func:`track_data` validates a track, and the track's first and last times.

    For a question at one time (the tote): a LineString with a list of times is bisected on its
    times, parsing some twenty of them, and only the few fixes found are read, so the cost does not
    grow with the track; any other shape is read whole and cut. The times are taken to be in order
    (as every reader of the whole track checks); only the piece read is checked."""
    listed = listed_times(feature, index)
    if listed is None:
        whole = read_track(feature, index, feature_id(feature, index))
        return _piece(whole, when), float(whole.t[0]), float(whole.t[-1])
    n = len(listed)
    i = min(max(listed.first_after(when) - 1, 0), n - 1)
    lo, hi = max(i - 1, 0), min(i + 3, n)
    track = read_track(listed.piece(lo, hi), index, listed.fid)
    if track.edges is not None:
        track = replace(track, edges=track.edges.trimmed(head=lo == 0, tail=hi == n))
    return track, listed.at(0), listed.at(n - 1)


def _piece(track: TrackData, when: float) -> TrackData:
    """The fixes of ``track`` around ``when``, as :func:`track_near` reads them."""
    n = len(track)
    i = min(max(int(np.searchsorted(track.t, when, side="right")) - 1, 0), n - 1)
    cut = slice(max(i - 1, 0), min(i + 3, n))
    depth = track.depth[cut] if track.depth is not None else None
    edges = track.edges.trimmed(head=cut.start == 0, tail=cut.stop == n) if track.edges is not None else None
    return TrackData(track.id, track.name, track.lon[cut], track.lat[cut], track.t[cut], depth, track.time_field, edges)
