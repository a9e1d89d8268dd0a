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

__all__ = ["circle_of", "circle_ring"]

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
