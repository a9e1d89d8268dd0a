"""A local flat (east, north) frame in metres about a point, for motion that keeps its course.

The frame is a Mercator projection of the WGS84 ellipsoid scaled to true size at the frame's
latitude: ``x = k0 (λ - λ0)``, ``y = k0 (ψ(φ) - ψ(φ0))`` with ψ the ellipsoid's isometric
latitude and ``k0 = N(φ0) cos φ0`` (metres per radian of longitude there). It is conformal, so a
direction in the frame is a true direction (north is up everywhere), and a straight line in it is
a rhumb line: a ship steering one course at one speed moves in a straight line at a constant
velocity, which is what target motion analysis assumes. Lengths are true at the frame's latitude
and off by the factor :meth:`LocalFrame.scale` elsewhere (1 + 0.27 % ten kilometres north or south
at 60°N; nothing at the equator), which is why speeds are read with it.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike

from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo._ellipsoid import WGS84_A, WGS84_F

__all__ = ["LocalFrame"]

_E2: Final = WGS84_F * (2 - WGS84_F)
_E: Final = math.sqrt(_E2)
#: Newton rounds that take the isometric latitude back to the geodetic one (each squares the error)
_NEWTON: Final = 5


def _isometric(phi: FloatArray) -> FloatArray:
    s = np.sin(phi)
    out: FloatArray = np.arctanh(s) - _E * np.arctanh(_E * s)
    return out


class LocalFrame:
    """East and north in metres about ``(lat0, lon0)`` (degrees); see the module's docstring."""

    def __init__(self, lat0: float, lon0: float) -> None:
        if not (math.isfinite(lat0) and math.isfinite(lon0)) or abs(lat0) >= 89.0:
            raise ValueError(f"a local frame needs a finite latitude within 89° of the equator, not {lat0!r}")
        self.lat0, self.lon0 = float(lat0), float(lon0)
        phi0 = math.radians(self.lat0)
        self._k0 = WGS84_A * math.cos(phi0) / math.sqrt(1.0 - _E2 * math.sin(phi0) ** 2)
        self._psi0 = float(_isometric(np.array(phi0)))

    def to_xy(self, lat: ArrayLike, lon: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Frame coordinates (m) of positions in degrees."""
        phi = np.radians(np.asarray(lat, dtype=np.float64))
        dlon = (np.asarray(lon, dtype=np.float64) - self.lon0 + 180.0) % 360.0 - 180.0
        return self._k0 * np.radians(dlon), self._k0 * (_isometric(phi) - self._psi0)

    def to_latlon(self, x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Positions in degrees of frame coordinates (m); longitudes in [-180, 180)."""
        psi = np.asarray(y, dtype=np.float64) / self._k0 + self._psi0
        phi = np.arctan(np.sinh(psi))  # the sphere's answer, then Newton on the ellipsoid's
        for _ in range(_NEWTON):
            s = np.sin(phi)
            phi = phi - (_isometric(phi) - psi) * (1.0 - _E2 * s * s) * np.cos(phi) / (1.0 - _E2)
        lon = (self.lon0 + np.degrees(np.asarray(x, dtype=np.float64) / self._k0) + 180.0) % 360.0 - 180.0
        return np.degrees(phi), lon

    def scale(self, lat: ArrayLike) -> FloatArray:
        """Frame metres per true metre at latitude ``lat`` (degrees): 1 at the frame's latitude."""
        phi = np.radians(np.asarray(lat, dtype=np.float64))
        s = np.sin(phi)
        out: FloatArray = self._k0 * np.sqrt(1.0 - _E2 * s * s) / (WGS84_A * np.cos(phi))
        return out
