"""Sensor features: the cuts of one sensor on one host track, every field of every cut kept.

The shape (``properties.dataType`` ``sensor``) is the one the calc and state guides document::

    {"type": "Feature", "id": …,
     "geometry": {"type": "MultiPoint", "coordinates": [[lon, lat], …]},     # each cut's origin
     "properties": {"dataType": "sensor", "kind": "sensor", "name": <sensor>,
       "host": <host track feature id>, "hostName": <platform name in the lines>,
       "timestamps": [ISO …] (ascending), "bearings": [deg | null] (true, [0, 360)),
       "ambiguousBearings", "frequencies" (Hz), "rangesYd", "bearingAccuracies",
       "frequencyAccuracies", "originGiven": [bool], "labels", "comments", "lineTypes",
       "symbols", "colours", "cutsVisible", "stroke", "visible", "arrayOffsetM",
       "arrayMode", "baseFrequency", "source"}}

Every per-cut list has one item per cut, in the order of the geometry's points (the suite's
paging slices such lists with the points). A cut whose line gave no origin (NULL) is placed at its
host's position at that time, interpolated along the geodesic between the host's fixes, moved by
the sensor's array offset when one is set (``arrayOffsetM``: positive ahead, negative astern; with
``arrayMode`` ``worm-in-hole`` the array follows the host's own path back, else it lies along the
host's heading), and ``originGiven`` says it was not given. Such a cut at a time the host's fixes
do not cover has no origin to give: it is reported as an error, never placed at a guess."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.formats.hosted.hosts import Host
from debrief_calc.formats.hosted.records import Cut, Where
from debrief_calc.formats.rep._colours import UNKNOWN_LETTER_COLOUR, replay_colour
from debrief_calc.geo.geodesy import direct, inverse, leg_distances
from debrief_calc.tracks.times import iso

__all__ = ["SensorSettings", "build_sensors", "computed_origins", "normalise_bearing"]

_US = 1_000_000.0


@dataclass(frozen=True)
class SensorSettings:
    """What a ``.dpf`` says of a sensor as a whole (REP lines carry none of it)."""

    offset_m: float | None = None
    array_mode: str | None = None  # "plain" | "worm-in-hole" | a dataset name
    base_frequency: float | None = None
    colour: str | None = None
    visible: bool = True


def normalise_bearing(value: float | None) -> float | None:
    """A true bearing in [0, 360) (``-153.5`` → ``206.5``), None kept."""
    if value is None:
        return None
    out = value % 360.0
    return 0.0 if out >= 360.0 else out + 0.0  # (-0.0 % 360 is 0.0; 360 - tiny rounds to 360)


def _worm_origins(host: Host, times: np.ndarray[Any, Any], astern_m: float) -> tuple[Any, Any]:
    """Points ``astern_m`` back along the host's own path from where it is at ``times``."""
    track = host.track
    assert track is not None
    lat_now, lon_now = host.positions(times)
    if len(track) < 2:
        return lat_now, lon_now
    legs = leg_distances(track.lat, track.lon)
    along = np.concatenate([[0.0], np.cumsum(legs)])
    dt = np.diff(track.t)
    leg = np.clip(np.searchsorted(track.t, times, side="right") - 1, 0, legs.size - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(dt[leg] > 0, (times - track.t[leg]) / np.where(dt[leg] > 0, dt[leg], 1.0), 1.0)
    wanted = along[leg] + legs[leg] * np.clip(frac, 0.0, 1.0) - astern_m
    back = np.clip(np.searchsorted(along, wanted, side="right") - 1, 0, legs.size - 1)
    _, azimuth, _ = inverse(track.lat[back], track.lon[back], track.lat[back + 1], track.lon[back + 1])
    # before the track's first fix the array lies back along the first leg (a negative distance)
    lat, lon, _ = direct(track.lat[back], track.lon[back], azimuth, wanted - along[back])
    bad = ~np.isfinite(lat_now)
    lat[bad] = np.nan
    lon[bad] = np.nan
    return lat, lon


def computed_origins(host: Host, times: np.ndarray[Any, Any], settings: SensorSettings) -> tuple[Any, Any]:
    """Where the host carries the sensor at ``times``: its position, moved by the array offset."""
    offset = settings.offset_m or 0.0
    if offset < 0 and settings.array_mode == "worm-in-hole":
        return _worm_origins(host, times, -offset)
    lat, lon = host.positions(times)
    if offset == 0:
        return lat, lon
    heading = host.headings(times)
    heading = np.where(np.isfinite(heading), heading, 0.0) + (180.0 if offset < 0 else 0.0)
    ok = np.isfinite(lat)
    out_lat, out_lon = lat.copy(), lon.copy()
    if ok.any():
        y, x, _ = direct(lat[ok], lon[ok], heading[ok], abs(offset))
        out_lat[ok], out_lon[ok] = y, x
    return out_lat, out_lon


def _span_text(host: Host) -> str:
    track = host.track
    if track is None or len(track) == 0:
        return "the host track has no times to place it by"
    return f"the host {host.name!r} has fixes from {iso(float(track.t[0]))} to {iso(float(track.t[-1]))} only"


def build_sensors(
    cuts: Sequence[Cut],
    hosts: dict[str, Host],
    make_id: Callable[[Host, str], str],
    *,
    settings: dict[tuple[str, str], SensorSettings] | None = None,
    source: str | None = None,
) -> tuple[list[dict[str, Any]], list[tuple[Where, str]]]:
    """One sensor feature per (host track, sensor name), in order of first appearance, and the
    cuts that could not be placed (each with its reason). ``hosts``: host name in the lines ->
    its track; ``settings``: (host name, sensor) -> what the file says of the sensor."""
    groups: dict[tuple[str, str], list[Cut]] = {}
    for cut in cuts:
        groups.setdefault((hosts[cut.host_name].id, cut.sensor), []).append(cut)
    features: list[dict[str, Any]] = []
    errors: list[tuple[Where, str]] = []
    for (_host_id, sensor), members in groups.items():
        members.sort(key=lambda c: c.key)  # stable: equal times keep file order
        host = hosts[members[0].host_name]
        conf = (settings or {}).get((members[0].host_name, sensor), SensorSettings())
        times = np.array([c.key / _US for c in members], dtype=np.float64)
        need = np.array([c.origin is None for c in members])
        lat = np.array([c.origin[1] if c.origin else np.nan for c in members], dtype=np.float64)
        lon = np.array([c.origin[0] if c.origin else np.nan for c in members], dtype=np.float64)
        if need.any():
            y, x = computed_origins(host, times[need], conf)
            lat[need], lon[need] = y, x
        placed_array = np.isfinite(lat) & np.isfinite(lon)
        placed = placed_array.tolist()
        for cut in (c for c, ok in zip(members, placed, strict=True) if not ok):
            errors.append(
                (cut.where, f"{cut.line_type}: NULL origin at {cut.time}, when {_span_text(host)}: no position to give")
            )
        kept = [c for c, ok in zip(members, placed, strict=True) if ok]
        if not kept:
            continue
        coords = np.column_stack([lon[placed_array], lat[placed_array]]).tolist()
        features.append(_feature(make_id(host, sensor), sensor, host, kept, coords, conf, source))
    return features, errors


def _feature(
    fid: str,
    sensor: str,
    host: Host,
    cuts: list[Cut],
    coords: list[list[float]],
    conf: SensorSettings,
    source: str | None,
) -> dict[str, Any]:
    colours = [c.colour or (replay_colour(c.symbol) if c.symbol else None) for c in cuts]
    stroke = conf.colour or next((c for c in colours if c), None) or UNKNOWN_LETTER_COLOUR
    properties: dict[str, Any] = {
        "dataType": "sensor",
        "kind": "sensor",
        "name": sensor,
        "host": host.id,
        "hostName": cuts[0].host_name,
        "timestamps": [c.time for c in cuts],
        "bearings": [normalise_bearing(c.bearing) for c in cuts],
        "ambiguousBearings": [normalise_bearing(c.ambiguous) for c in cuts],
        "frequencies": [c.frequency for c in cuts],
        "rangesYd": [c.range_yd for c in cuts],
        "bearingAccuracies": [c.bearing_accuracy for c in cuts],
        "frequencyAccuracies": [c.frequency_accuracy for c in cuts],
        "originGiven": [c.origin is not None for c in cuts],
        "labels": [c.label for c in cuts],
        "comments": [c.comment for c in cuts],
        "lineTypes": [c.line_type for c in cuts],
        "symbols": [c.symbol for c in cuts],
        "colours": colours,
        "cutsVisible": [c.visible for c in cuts],
        "stroke": stroke,
        "visible": conf.visible,
        "arrayOffsetM": conf.offset_m,
        "arrayMode": conf.array_mode,
        "baseFrequency": conf.base_frequency,
    }
    if source is not None:
        properties["source"] = source
    for value in properties.values():  # plain JSON: a NaN would make the feature unreadable
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"sensor {sensor!r}: a non-finite number in its properties")
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "MultiPoint", "coordinates": coords},
        "properties": properties,
    }
