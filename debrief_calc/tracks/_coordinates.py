"""Positions read from GeoJSON coordinates: rows checked as ``[lon, lat, z?, t?]``, longitudes
and latitudes in range, the rows of a track's lines, zone rings, points and bounds."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks._feature_parts import (
    POLYGON_TYPES,
    feature_label,
    field_failure,
    float_or_nan,
    geometry_of,
    is_number,
    raw_id,
)

__all__ = [
    "bounds_of",
    "check_lonlat",
    "feature_bounds",
    "feature_positions",
    "line_rows",
    "point_lonlat",
    "position_rows",
    "zone_rings",
]


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


def position_rows(rows: Sequence[Any], label: str, fid: str | None, field: str) -> FloatArray:
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
                if not is_number(value):
                    good = False
                    break
                try:
                    out[i, j] = value
                except OverflowError:
                    good = False
                    break
        if not good:
            raise field_failure(
                label,
                fid,
                field,
                "position",
                f"{field}[{i}] = {str(row)[:80]} is not a position [lon, lat] or [lon, lat, z, time_ms]",
                index=i,
            )
    return out


def check_lonlat(lon: FloatArray, lat: FloatArray, label: str, fid: str | None, field: str) -> None:
    finite = np.isfinite(lon) & np.isfinite(lat)
    bad = ~(finite & (np.abs(lat) <= 90) & (np.abs(lon) <= 180))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        if not finite[i]:
            rule, why = "finite", "longitude and latitude must be finite numbers"
        else:
            rule, why = "range", "longitude must lie in [-180, 180] and latitude in [-90, 90] degrees"
        raise field_failure(
            label, fid, field, rule, f"{field}[{i}] = [{lon[i]!r}, {lat[i]!r}] is not a position: {why}", index=i
        )


def _wrong_geometry_type(label: str, fid: str | None, needed: str, gtype: object) -> ValidationFailed:
    """A feature whose geometry is not of the type its kind needs (``needed``: "a zone needs a Polygon")."""
    return field_failure(label, fid, "geometry.type", "geometry-type", f"{needed} geometry, not {gtype!r}")


def line_rows(geom: Mapping[str, Any], label: str, fid: str | None) -> list[Any]:
    gtype = geom.get("type")
    coords = geom.get("coordinates")
    if gtype == "LineString":
        if not isinstance(coords, list):
            raise field_failure(label, fid, "geometry.coordinates", "type", "LineString coordinates must be a list")
        return coords
    if gtype == "MultiLineString":
        if not isinstance(coords, list) or not all(isinstance(part, list) for part in coords):
            raise field_failure(
                label,
                fid,
                "geometry.coordinates",
                "type",
                "MultiLineString coordinates must be a list of lines",
            )
        return [row for part in coords for row in part]
    raise _wrong_geometry_type(label, fid, "a track needs a LineString or MultiLineString", gtype)


def zone_rings(feature: Mapping[str, Any]) -> list[FloatArray]:
    """The outer ring of each polygon of a Polygon or MultiPolygon, as (n, 2) ``[lon, lat]``."""
    label = feature_label(feature, None, "zone")
    fid = raw_id(feature)
    geom = geometry_of(feature)
    gtype = geom.get("type") if geom is not None else None
    coords = geom.get("coordinates") if geom is not None else None
    if gtype not in POLYGON_TYPES or not isinstance(coords, list):
        raise _wrong_geometry_type(label, fid, "a zone needs a Polygon or MultiPolygon", gtype)
    polygons = [coords] if gtype == "Polygon" else coords
    rings: list[FloatArray] = []
    for p, polygon in enumerate(polygons):
        field = "geometry.coordinates" + ("[0]" if gtype == "Polygon" else f"[{p}][0]")
        if not isinstance(polygon, list) or not polygon or not isinstance(polygon[0], list):
            raise field_failure(label, fid, field, "required", "a polygon needs an outer ring")
        ring = position_rows(polygon[0], label, fid, field)[:, :2]
        check_lonlat(ring[:, 0], ring[:, 1], label, fid, field)
        distinct = ring[:-1] if len(ring) > 1 and np.array_equal(ring[0], ring[-1]) else ring
        if len(distinct) < 3:
            raise field_failure(
                label, fid, field, "min-vertices", f"a ring needs at least 3 vertices, has {len(distinct)}"
            )
        rings.append(np.ascontiguousarray(ring))
    return rings


def point_lonlat(feature: Mapping[str, Any]) -> tuple[float, float]:
    """``(lon, lat)`` of a Point feature."""
    label = feature_label(feature, None, "point")
    fid = raw_id(feature)
    geom = geometry_of(feature)
    gtype = geom.get("type") if geom is not None else None
    if gtype != "Point" or geom is None:
        raise _wrong_geometry_type(label, fid, "a point needs a Point", gtype)
    coords = geom.get("coordinates")
    if not isinstance(coords, list | tuple):
        raise field_failure(label, fid, "geometry.coordinates", "position", "Point coordinates must be [lon, lat]")
    xy = position_rows([coords], label, fid, "geometry.coordinates")
    check_lonlat(xy[:, 0], xy[:, 1], label, fid, "geometry.coordinates")
    return float(xy[0, 0]), float(xy[0, 1])


def _collect_positions(coords: object, out: list[FloatArray]) -> None:
    if not isinstance(coords, list | tuple) or not coords:
        return
    first = coords[0]
    if is_number(first):
        if len(coords) >= 2 and is_number(coords[1]):
            out.append(np.array([[float_or_nan(coords[0]), float_or_nan(coords[1])]]))
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


def feature_positions(feature: object) -> FloatArray:
    out: list[FloatArray] = []
    _collect_geometry(geometry_of(feature), out)
    return np.concatenate(out) if out else np.zeros((0, 2))


def feature_bounds(feature: Mapping[str, Any]) -> tuple[float, float, float, float] | None:
    """``(west, south, east, north)`` over every position of any geometry type, or None when
    there are none. Positions that are not finite numbers are skipped; never raises."""
    return bounds_of(feature_positions(feature))


def bounds_of(xy: FloatArray) -> tuple[float, float, float, float] | None:
    xy = xy[np.isfinite(xy).all(axis=1)]
    if xy.size == 0:
        return None
    return (float(xy[:, 0].min()), float(xy[:, 1].min()), float(xy[:, 0].max()), float(xy[:, 1].max()))
