"""Zones drawn as circles: the circle a zone's ``properties.specifics`` describes, and a ring on it.

Debrief stores a circle zone as a polygon (to draw it) and ``specifics`` ``{shapeType:
"circle", origin: [lon, lat], radiusM}``; the polygon is an approximation (in real plots often
an oval), so measurements and pictures take the circle from ``specifics``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks._feature_parts import feature_id, properties_of

__all__ = ["circle_of", "circle_ring", "ellipse_ring", "sector_rings"]

#: vertices of a ring drawn on a circle zone (one a degree)
_CIRCLE_VERTICES: Final = 360


def circle_of(
    feature: Mapping[str, Any], index: int | None = None, *, strict: bool = True
) -> tuple[float, float, float] | None:
    """``(lon, lat, radius_m)`` of a zone drawn as a circle (``properties.specifics`` with
    ``shapeType`` circle, ``origin`` [lon, lat] and ``radiusM``), or None for any other zone.
    A circle whose origin or radius cannot be read is a ValidationFailed naming the field with
    ``strict`` (an analysis must not guess), else None (the picture draws the stored polygon)."""
    specifics = properties_of(feature).get("specifics")
    if not isinstance(specifics, Mapping) or str(specifics.get("shapeType", "")).lower() != "circle":
        return None
    origin, radius = specifics.get("origin"), specifics.get("radiusM")
    fid = feature_id(feature, index)

    def bad(field: str, why: str) -> ValidationFailed:
        return ValidationFailed(
            f"zone {fid!r}: properties.specifics.{field} {why}; a circle zone needs origin [lon, lat] and "
            "radiusM > 0 (metres), or drop specifics to use the stored polygon",
            details={"feature_id": fid, "field": f"properties.specifics.{field}", "rule": "circle"},
        )

    if not (
        isinstance(origin, list | tuple)
        and len(origin) >= 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in origin[:2])
        and -180 <= origin[0] <= 180
        and -90 <= origin[1] <= 90
    ):
        if not strict:
            return None
        raise bad("origin", f"{str(origin)[:60]} is not a [lon, lat] position")
    if not (isinstance(radius, int | float) and not isinstance(radius, bool) and math.isfinite(radius) and radius > 0):
        if not strict:
            return None
        raise bad("radiusM", f"{str(radius)[:60]} is not a positive number of metres")
    return float(origin[0]), float(origin[1]), float(radius)


def circle_ring(lon: float, lat: float, radius_m: float, vertices: int = _CIRCLE_VERTICES) -> FloatArray:
    """A closed ring of ``vertices`` points on the geodesic circle, counter-clockwise."""
    azimuths = np.linspace(360.0, 0.0, vertices + 1)
    lat2, lon2, _ = geodesy.direct(lat, lon, azimuths, radius_m)
    ring = np.column_stack((lon2, lat2))
    ring[-1] = ring[0]
    return ring


def ellipse_ring(
    lon: float, lat: float, orientation_deg: float, semi_major_m: float, semi_minor_m: float, vertices: int = 72
) -> FloatArray:
    """A closed, counter-clockwise ring on an ellipse of semi-axes ``semi_major_m`` (along the
    true bearing ``orientation_deg``) and ``semi_minor_m``, each vertex a geodesic from the centre
    (as legacy Debrief's ``EllipseShape`` draws it)."""
    theta = np.radians(np.linspace(360.0, 0.0, vertices + 1))
    along = semi_major_m * np.cos(theta)  # metres along the major axis
    across = semi_minor_m * np.sin(theta)  # metres to its right
    azimuths = orientation_deg + np.degrees(np.arctan2(across, along))
    lat2, lon2, _ = geodesy.direct(lat, lon, azimuths, np.hypot(along, across))
    ring = np.column_stack((lon2, lat2))
    ring[-1] = ring[0]
    return ring


def sector_rings(
    lon: float, lat: float, from_deg: float, to_deg: float, inner_m: float, outer_m: float, step_deg: float = 5.0
) -> list[FloatArray]:
    """The rings of the area between radii ``inner_m`` and ``outer_m`` swept clockwise from the
    true bearing ``from_deg`` to ``to_deg``: one counter-clockwise ring, or for a whole turn with
    an inner radius an outer ring and the hole (clockwise), as GeoJSON polygons want them."""
    span = (to_deg - from_deg) % 360.0 or 360.0
    if span >= 360.0:
        outer = circle_ring(lon, lat, outer_m, 72)
        return [outer] if inner_m <= 0 else [outer, circle_ring(lon, lat, inner_m, 72)[::-1]]
    count = max(2, math.ceil(span / step_deg) + 1)
    sweep = np.linspace(from_deg, from_deg + span, count)
    y_out, x_out, _ = geodesy.direct(lat, lon, sweep, outer_m)
    if inner_m > 0:
        y_in, x_in, _ = geodesy.direct(lat, lon, sweep[::-1], inner_m)
    else:
        y_in, x_in = np.array([lat]), np.array([lon])
    ring = np.column_stack((np.concatenate([x_out, x_in]), np.concatenate([y_out, y_in])))
    ring = np.vstack([ring, ring[:1]])[::-1]  # swept clockwise: reversed to run counter-clockwise
    return [ring]
