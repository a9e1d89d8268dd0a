"""The WGS84 ellipsoid and the auxiliary-sphere formulae that Vincenty's direct and inverse
solutions share."""

from __future__ import annotations

from typing import Final

import numpy as np

from debrief_calc.geo._arrays import FloatArray

__all__ = [
    "MAX_ITERATIONS",
    "TOLERANCE_RAD",
    "WGS84_A",
    "WGS84_B",
    "WGS84_F",
    "delta_sigma",
    "reduced_latitude",
    "series_ab",
    "wrap_360",
    "wrap_pi",
]

WGS84_A: Final = 6378137.0
WGS84_F: Final = 1 / 298.257223563
WGS84_B: Final = WGS84_A * (1 - WGS84_F)
_EP2: Final = (WGS84_A**2 - WGS84_B**2) / WGS84_B**2  # second eccentricity squared

MAX_ITERATIONS: Final = 25
TOLERANCE_RAD: Final = 1e-11  # radians of the auxiliary longitude: under 0.1 mm on the Earth


def wrap_pi(x: FloatArray) -> FloatArray:
    """Angles in radians, wrapped to [-π, π] (cheaper than a modulo for nearly-wrapped input)."""
    out = np.where(x > np.pi, x - 2 * np.pi, x)
    out = np.where(out < -np.pi, out + 2 * np.pi, out)
    if np.any(np.abs(out) > np.pi):
        out = (x + np.pi) % (2 * np.pi) - np.pi
    return out


def wrap_360(deg: FloatArray) -> FloatArray:
    wrapped: FloatArray = np.where(deg < 0, deg + 360.0, deg)
    # adding 360 can round a tiny negative angle up to exactly 360
    wrapped[wrapped >= 360.0] = 0.0
    return wrapped


def reduced_latitude(lat_deg: FloatArray) -> tuple[FloatArray, FloatArray]:
    """sin and cos of the reduced latitude, finite at the poles."""
    # Near a pole cos φ is tiny and np.cos(np.radians(φ)) would keep few correct digits of it;
    # 90 - |φ| is exact there, so take cos φ as the sine of that (and likewise sin φ).
    polar = np.abs(lat_deg) > 45
    a = np.radians(np.where(polar, 90 - np.abs(lat_deg), lat_deg))
    sin_a = np.sin(a)
    cos_a = np.cos(a)
    sin_lat = np.where(polar, np.copysign(cos_a, lat_deg), sin_a)
    cos_lat = np.where(polar, sin_a, cos_a)
    y = (1 - WGS84_F) * sin_lat
    r = np.sqrt(cos_lat * cos_lat + y * y)
    return y / r, cos_lat / r


def series_ab(cos2_alpha: FloatArray) -> tuple[FloatArray, FloatArray]:
    u2 = cos2_alpha * _EP2
    a = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
    b = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
    return a, b


def delta_sigma(b: FloatArray, sin_s: FloatArray, cos_s: FloatArray, cos2sm: FloatArray) -> FloatArray:
    c2 = cos2sm * cos2sm
    out: FloatArray = (
        b
        * sin_s
        * (cos2sm + b / 4 * (cos_s * (-1 + 2 * c2) - b / 6 * cos2sm * (-3 + 4 * sin_s * sin_s) * (-3 + 4 * c2)))
    )
    return out
