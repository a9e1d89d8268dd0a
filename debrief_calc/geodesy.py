"""Geodesics on the WGS84 ellipsoid, vectorised with numpy.

:func:`inverse` solves Vincenty's inverse problem for every pair at once and hands the few pairs
it cannot solve (nearly antipodal points, where Vincenty's iteration fails to converge) to
GeographicLib, so every distance agrees with ``Geodesic.WGS84.Inverse`` to about 0.1 mm and
every azimuth to 1e-6 degrees or better. :func:`direct` is Vincenty's direct solution (it
converges everywhere). Angles are degrees, distances metres; azimuths are clockwise from true
north in ``[0, 360)``.

A zero-length geodesic has no direction: :func:`inverse` then reports what GeographicLib does
(180°), while :func:`leg_azimuths` reports NaN so that a stationary platform never gets a fake
course.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from geographiclib.geodesic import Geodesic
from numpy.typing import ArrayLike, NDArray

from debrief_calc.errors import ValidationFailed

__all__ = [
    "WGS84_A",
    "WGS84_B",
    "WGS84_F",
    "direct",
    "interpolate_track",
    "inverse",
    "leg_azimuths",
    "leg_distances",
    "path_length",
    "polygon_area_perimeter",
]

FloatArray = NDArray[np.float64]

WGS84_A: Final = 6378137.0
WGS84_F: Final = 1 / 298.257223563
WGS84_B: Final = WGS84_A * (1 - WGS84_F)
_EP2: Final = (WGS84_A**2 - WGS84_B**2) / WGS84_B**2  # second eccentricity squared

_MAX_ITER: Final = 25
_TOL: Final = 1e-11  # radians of the auxiliary longitude: under 0.1 mm on the Earth
_TOL_AZIMUTH: Final = 1e-10  # relative to the arc: azimuths then good to ~1e-8 degrees


def _wrap_pi(x: FloatArray) -> FloatArray:
    """Angles in radians, wrapped to [-π, π] (cheaper than a modulo for nearly-wrapped input)."""
    out = np.where(x > np.pi, x - 2 * np.pi, x)
    out = np.where(out < -np.pi, out + 2 * np.pi, out)
    if np.any(np.abs(out) > np.pi):
        out = (x + np.pi) % (2 * np.pi) - np.pi
    return out


def _wrap_360(deg: FloatArray) -> FloatArray:
    wrapped: FloatArray = np.where(deg < 0, deg + 360.0, deg)
    # adding 360 can round a tiny negative angle up to exactly 360
    wrapped[wrapped >= 360.0] = 0.0
    return wrapped


def _sin_cos(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """sin and cos; Taylor series when every |x| <= 0.1 (consecutive fixes of a track), which
    is four times quicker than libm and exact to ~1e-18."""
    if x.size and float(np.max(np.abs(x))) <= 0.1:
        x2 = x * x
        sin_x = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110)))))
        cos_x = 1 - x2 / 2 * (1 - x2 / 12 * (1 - x2 / 30 * (1 - x2 / 56 * (1 - x2 / 90 * (1 - x2 / 132)))))
        return sin_x, cos_x
    return np.sin(x), np.cos(x)


def _reduced_latitude(lat_deg: FloatArray) -> tuple[FloatArray, FloatArray]:
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


def _series_ab(cos2_alpha: FloatArray) -> tuple[FloatArray, FloatArray]:
    u2 = cos2_alpha * _EP2
    a = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
    b = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
    return a, b


def _delta_sigma(b: FloatArray, sin_s: FloatArray, cos_s: FloatArray, cos2sm: FloatArray) -> FloatArray:
    c2 = cos2sm * cos2sm
    out: FloatArray = (
        b
        * sin_s
        * (cos2sm + b / 4 * (cos_s * (-1 + 2 * c2) - b / 6 * cos2sm * (-3 + 4 * sin_s * sin_s) * (-3 + 4 * c2)))
    )
    return out


def _check_latlon(lat: FloatArray, lon: FloatArray) -> None:
    if not (np.all(np.isfinite(lat)) and np.all(np.isfinite(lon))):
        raise ValidationFailed(
            "geodesic endpoints must be finite numbers",
            details={"field": "coordinates", "rule": "finite"},
        )
    if np.any(np.abs(lat) > 90):
        raise ValidationFailed(
            "latitudes must lie within [-90, 90] degrees",
            details={"field": "latitude", "rule": "range"},
        )


def inverse(
    lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distance (m) and azimuths at both ends (degrees in [0, 360)) of the geodesic from 1 to 2.

    The arguments broadcast against each other; scalars give 0-d arrays. The azimuth at point 2
    is the direction of travel on arrival (the forward azimuth), as in GeographicLib.
    """
    b_lat1, b_lon1, b_lat2, b_lon2 = np.broadcast_arrays(
        np.asarray(lat1, dtype=np.float64),
        np.asarray(lon1, dtype=np.float64),
        np.asarray(lat2, dtype=np.float64),
        np.asarray(lon2, dtype=np.float64),
    )
    shape = b_lat1.shape
    la1, lo1, la2, lo2 = (np.ravel(x) for x in (b_lat1, b_lon1, b_lat2, b_lon2))
    _check_latlon(la1, lo1)
    _check_latlon(la2, lo2)
    s, az1, az2 = _inverse_chunked(la1, lo1, la2, lo2, want_azimuths=True)
    assert az1 is not None and az2 is not None
    return s.reshape(shape), az1.reshape(shape), az2.reshape(shape)


# Work on slices small enough for numpy's temporaries to stay in cache.
_CHUNK: Final = 1 << 14


def _inverse_chunked(
    lat1: FloatArray, lon1: FloatArray, lat2: FloatArray, lon2: FloatArray, *, want_azimuths: bool
) -> tuple[FloatArray, FloatArray | None, FloatArray | None]:
    n = lat1.size
    dist = np.empty(n)
    az1 = np.empty(n) if want_azimuths else None
    az2 = np.empty(n) if want_azimuths else None
    for lo in range(0, n, _CHUNK):
        part = slice(lo, min(lo + _CHUNK, n))
        sin_u1, cos_u1 = _reduced_latitude(lat1[part])
        sin_u2, cos_u2 = _reduced_latitude(lat2[part])
        d, a1, a2 = _vincenty_inverse(
            sin_u1, cos_u1, sin_u2, cos_u2, lon2[part] - lon1[part], want_azimuths=want_azimuths
        )
        # From pole to pole every meridian is a shortest path: take GeographicLib's.
        d[(np.abs(lat1[part]) == 90) & (np.abs(lat2[part]) == 90)] = np.nan
        _fallback(d, (lat1[part], lon1[part], lat2[part], lon2[part]), a1, a2)
        dist[part] = d
        if az1 is not None and az2 is not None and a1 is not None and a2 is not None:
            az1[part] = _wrap_360(a1)
            az2[part] = _wrap_360(a2)
    return dist, az1, az2


def _leg_distances_chunked(lat: FloatArray, lon: FloatArray) -> FloatArray:
    """Like ``_inverse_chunked(lat[:-1], lon[:-1], lat[1:], lon[1:])[0]``, each point's
    reduced latitude computed once instead of twice."""
    n = lat.size - 1
    dist = np.empty(n)
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        sin_u, cos_u = _reduced_latitude(lat[lo : hi + 1])
        d, _, _ = _vincenty_inverse(
            sin_u[:-1], cos_u[:-1], sin_u[1:], cos_u[1:], np.diff(lon[lo : hi + 1]), want_azimuths=False
        )
        _fallback(d, (lat[lo:hi], lon[lo:hi], lat[lo + 1 : hi + 1], lon[lo + 1 : hi + 1]))
        dist[lo:hi] = d
    return dist


def _fallback(
    dist: FloatArray,
    ends: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    az1: FloatArray | None = None,
    az2: FloatArray | None = None,
) -> None:
    """Solve with GeographicLib the pairs Vincenty marked NaN (it did not converge)."""
    lat1, lon1, lat2, lon2 = ends
    for i in np.flatnonzero(np.isnan(dist)):
        r = Geodesic.WGS84.Inverse(
            float(lat1[i]),
            float(lon1[i]),
            float(lat2[i]),
            float(lon2[i]),
            Geodesic.DISTANCE | Geodesic.AZIMUTH,
        )
        dist[i] = r["s12"]
        if az1 is not None and az2 is not None:
            az1[i] = r["azi1"]
            az2[i] = r["azi2"]


class _Pass:
    """Vincenty's inverse equations evaluated at λ = L + δ for a batch of pairs.

    The loop runs over every pair of a chunk two or three times, so it writes into buffers
    allocated once per chunk rather than into fresh temporaries.
    """

    def __init__(
        self,
        sin_u1: FloatArray,
        cos_u1: FloatArray,
        sin_u2: FloatArray,
        cos_u2: FloatArray,
        big_l: FloatArray,
    ) -> None:
        self.sin_l, self.cos_l = _sin_cos(big_l)
        self.cos_u2 = cos_u2
        self.cu1su2 = cos_u1 * sin_u2
        self.su1cu2 = sin_u1 * cos_u2
        self.su1su2 = sin_u1 * sin_u2
        self.two_su1su2 = 2 * self.su1su2
        self.cu1cu2 = cos_u1 * cos_u2
        n = big_l.shape
        self.sin_lam, self.cos_lam = np.empty(n), np.empty(n)
        self.t1, self.t2 = np.empty(n), np.empty(n)
        self.sin_s, self.cos_s, self.sigma = np.empty(n), np.empty(n), np.empty(n)
        self.sin_a, self.cos2_a, self.cos2sm = np.empty(n), np.empty(n), np.empty(n)
        self.tmp, self.tmp2 = np.empty(n), np.empty(n)
        self.positive = np.empty(n, dtype=bool)

    def subset(self, idx: NDArray[np.intp]) -> _Pass:
        """The same equations for the pairs ``idx`` only."""
        sub = object.__new__(_Pass)
        for name in ("sin_l", "cos_l", "cos_u2", "cu1su2", "su1cu2", "su1su2", "two_su1su2", "cu1cu2"):
            setattr(sub, name, getattr(self, name)[idx])
        n = idx.shape
        sub.sin_lam, sub.cos_lam = np.empty(n), np.empty(n)
        sub.t1, sub.t2 = np.empty(n), np.empty(n)
        sub.sin_s, sub.cos_s, sub.sigma = np.empty(n), np.empty(n), np.empty(n)
        sub.sin_a, sub.cos2_a, sub.cos2sm = np.empty(n), np.empty(n), np.empty(n)
        sub.tmp, sub.tmp2 = np.empty(n), np.empty(n)
        sub.positive = np.empty(n, dtype=bool)
        return sub

    def run(self, delta: FloatArray, out: FloatArray) -> None:
        """Evaluate at λ = L + δ and write the next δ to ``out``."""
        tmp, tmp2 = self.tmp, self.tmp2
        # λ - L stays below f·π ≈ 0.011 wherever Vincenty converges: there these series give
        # sin δ and cos δ to ~1e-16 without calling sin and cos on every round.
        d2 = np.multiply(delta, delta, out=self.t1)
        cos_d = np.multiply(d2, -1 / 12, out=tmp)
        cos_d += 1
        cos_d *= d2
        cos_d *= -0.5
        cos_d += 1
        sin_d = np.multiply(d2, -1 / 20, out=tmp2)
        sin_d += 1
        sin_d *= d2
        sin_d *= -1 / 6
        sin_d += 1
        sin_d *= delta
        sin_lam = np.multiply(self.sin_l, cos_d, out=self.sin_lam)
        cos_lam = np.multiply(self.cos_l, cos_d, out=self.cos_lam)
        np.multiply(self.cos_l, sin_d, out=tmp)
        sin_lam += tmp
        np.multiply(self.sin_l, sin_d, out=tmp)
        cos_lam -= tmp

        t1 = np.multiply(self.cos_u2, sin_lam, out=self.t1)
        t2 = np.multiply(self.su1cu2, cos_lam, out=self.t2)
        np.subtract(self.cu1su2, t2, out=t2)
        sin_s = np.multiply(t1, t1, out=self.sin_s)
        np.multiply(t2, t2, out=tmp)
        sin_s += tmp
        np.sqrt(sin_s, out=sin_s)
        cos_s = np.multiply(self.cu1cu2, cos_lam, out=self.cos_s)
        cos_s += self.su1su2
        sigma = np.arctan2(sin_s, cos_s, out=self.sigma)
        # sin σ = 0 only for coincident points, where the numerator is 0 too: sin α = 0.
        sin_a = self.sin_a
        sin_a.fill(0.0)
        np.multiply(self.cu1cu2, sin_lam, out=tmp)
        np.divide(tmp, sin_s, out=sin_a, where=np.greater(sin_s, 0.0, out=self.positive))
        cos2_a = np.multiply(sin_a, sin_a, out=self.cos2_a)
        np.subtract(1.0, cos2_a, out=cos2_a)
        np.maximum(cos2_a, 0.0, out=cos2_a)
        # An equatorial geodesic (cos²α = 0) has C = 0 and B = 0, so cos 2σm is unused there.
        tmp.fill(0.0)
        np.divide(self.two_su1su2, cos2_a, out=tmp, where=np.greater(cos2_a, 0.0, out=self.positive))
        cos2sm = np.subtract(cos_s, tmp, out=self.cos2sm)

        # C = f/16 cos²α (4 + f (4 - 3 cos²α))
        c = np.multiply(cos2_a, -3 * WGS84_F, out=tmp2)
        c += 4 + 4 * WGS84_F
        c *= cos2_a
        c *= WGS84_F / 16
        # δ' = (1 - C) f sin α (σ + C sin σ (cos 2σm + C cos σ (2 cos² 2σm - 1)))
        acc = np.multiply(cos2sm, cos2sm, out=out)
        acc *= 2
        acc -= 1
        acc *= c
        acc *= cos_s
        acc += cos2sm
        acc *= c
        acc *= sin_s
        acc += sigma
        acc *= sin_a
        np.subtract(1.0, c, out=tmp)
        acc *= tmp
        acc *= WGS84_F


_FULL_ITER: Final = 8  # rounds over the whole chunk; the rare stragglers then iterate alone
_MAX_DELTA: Final = 0.02  # |λ - L| beyond this: the nearly antipodal case Vincenty cannot solve


def _settled(change: FloatArray, prev_change: FloatArray, sigma: FloatArray | None) -> NDArray[np.bool_]:
    """Converged: the iteration contracts (ratio k of successive changes) and the error left in
    λ, about change·k/(1-k), is below the tolerance. Near-antipodal pairs contract slowly (k → 1),
    so a small change alone would not prove them converged. When azimuths are wanted
    (``sigma`` given) the error must also be small beside the arc σ, since an error ε in λ
    turns the azimuth of a short line by about ε/σ."""
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.minimum(change / prev_change, 1.0)
    limit = _TOL * (1 - k)
    if sigma is not None:
        limit = np.minimum(limit, _TOL_AZIMUTH * sigma * (1 - k))
    ok: NDArray[np.bool_] = (change == 0) | (change <= limit)
    return ok


def _vincenty_inverse(
    sin_u1: FloatArray,
    cos_u1: FloatArray,
    sin_u2: FloatArray,
    cos_u2: FloatArray,
    dlon_deg: FloatArray,
    *,
    want_azimuths: bool,
) -> tuple[FloatArray, FloatArray | None, FloatArray | None]:
    """Vincenty's inverse: distance, and azimuths in degrees (-180, 180] when wanted; NaN
    distance where it does not converge."""
    big_l = _wrap_pi(np.radians(dlon_deg))
    p = _Pass(sin_u1, cos_u1, sin_u2, cos_u2, big_l)
    # λ - L ≈ f sin α σ ≈ f cos U1 cos U2 sin L: starting there saves a round for short legs.
    delta = p.cu1cu2 * p.sin_l
    delta *= WGS84_F
    new_delta = np.empty_like(big_l)
    failed = np.zeros(big_l.shape, dtype=bool)
    prev_change = np.full_like(big_l, np.inf)
    step = np.empty_like(big_l)
    converged = False
    for _ in range(_FULL_ITER):
        p.run(delta, new_delta)
        np.subtract(new_delta, delta, out=step)
        change = np.abs(step)
        moving = ~_settled(change, prev_change, p.sigma if want_azimuths else None)
        delta, new_delta, prev_change = new_delta, delta, change
        if not moving.any():
            converged = True
            break
    # Beyond _MAX_DELTA the series for sin δ and cos δ lose accuracy: never trust such a result.
    failed |= ~(np.abs(delta) <= _MAX_DELTA)
    if not converged:
        idx = np.flatnonzero(moving & ~failed)
        prev = prev_change[idx]
        for _ in range(_MAX_ITER - _FULL_ITER):
            if idx.size == 0:
                break
            d_old = delta[idx]
            d_new = np.empty_like(d_old)
            sub = p.subset(idx)
            sub.run(d_old, d_new)
            change = np.abs(d_new - d_old)
            delta[idx] = d_new
            bad = ~(np.abs(d_new) <= _MAX_DELTA)
            failed[idx[bad]] = True
            keep = ~_settled(change, prev, sub.sigma if want_azimuths else None) & ~bad
            idx, prev = idx[keep], change[keep]
        failed[idx] = True
        delta[failed] = 0.0
        # Evaluate every pair once more at its final λ.
        p.run(delta, new_delta)

    sigma = p.sigma
    if converged:
        # p was evaluated one step behind the last λ; dσ/dλ = sin α carries σ that last step,
        # which removes a small bias that would otherwise add up along a long track.
        sigma = sigma + p.sin_a * step
    a_coef, b_coef = _series_ab(p.cos2_a)
    dist: FloatArray = WGS84_B * a_coef * (sigma - _delta_sigma(b_coef, p.sin_s, p.cos_s, p.cos2sm))
    dist[failed] = np.nan
    if not want_azimuths:
        return dist, None, None
    az1 = np.degrees(np.arctan2(p.t1, p.t2))
    az2 = np.degrees(np.arctan2(cos_u1 * p.sin_lam, p.cu1su2 * p.cos_lam - p.su1cu2))
    coincident = p.sin_s == 0
    az1[coincident] = 180.0
    az2[coincident] = 180.0
    return dist, az1, az2


def direct(
    lat1: ArrayLike, lon1: ArrayLike, azi1_deg: ArrayLike, distance_m: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The point reached by travelling ``distance_m`` from (lat1, lon1) on azimuth ``azi1_deg``.

    Returns (lat2, lon2 in [-180, 180], azi2 in [0, 360)), broadcasting the arguments.
    """
    b_lat, b_lon, b_az, b_s = np.broadcast_arrays(
        np.asarray(lat1, dtype=np.float64),
        np.asarray(lon1, dtype=np.float64),
        np.asarray(azi1_deg, dtype=np.float64),
        np.asarray(distance_m, dtype=np.float64),
    )
    shape = b_lat.shape
    lat, lon, az, s = (np.ravel(x) for x in (b_lat, b_lon, b_az, b_s))
    sin_u1, cos_u1 = _reduced_latitude(lat)
    alpha1 = np.radians(az)
    sin_a1 = np.sin(alpha1)
    cos_a1 = np.cos(alpha1)
    sigma1 = np.arctan2(sin_u1, cos_u1 * cos_a1)
    sin_a = cos_u1 * sin_a1
    cos2_a = np.maximum(1 - sin_a * sin_a, 0.0)
    a_coef, b_coef = _series_ab(cos2_a)
    s_over_ba = s / (WGS84_B * a_coef)

    # cos 2σm = cos(2σ1 + σ), expanded so that each round needs only sin σ and cos σ
    sin_2s1 = np.sin(2 * sigma1)
    cos_2s1 = np.cos(2 * sigma1)
    sigma = s_over_ba.copy()
    for _ in range(_MAX_ITER):
        sin_s, cos_s = np.sin(sigma), np.cos(sigma)
        cos2sm = cos_2s1 * cos_s - sin_2s1 * sin_s
        sigma_new = s_over_ba + _delta_sigma(b_coef, sin_s, cos_s, cos2sm)
        converged = bool(np.all(np.abs(sigma_new - sigma) <= _TOL))
        sigma = sigma_new
        if converged:
            break
    sin_s, cos_s = np.sin(sigma), np.cos(sigma)
    cos2sm = cos_2s1 * cos_s - sin_2s1 * sin_s
    tmp = sin_u1 * sin_s - cos_u1 * cos_s * cos_a1
    lat2 = np.arctan2(sin_u1 * cos_s + cos_u1 * sin_s * cos_a1, (1 - WGS84_F) * np.sqrt(sin_a * sin_a + tmp * tmp))
    lam = np.arctan2(sin_s * sin_a1, cos_u1 * cos_s - sin_u1 * sin_s * cos_a1)
    c = WGS84_F / 16 * cos2_a * (4 + WGS84_F * (4 - 3 * cos2_a))
    big_l = lam - (1 - c) * WGS84_F * sin_a * (sigma + c * sin_s * (cos2sm + c * cos_s * (-1 + 2 * cos2sm * cos2sm)))
    lon2 = np.degrees(_wrap_pi(np.radians(lon) + big_l))
    azi2 = _wrap_360(np.degrees(np.arctan2(sin_a, -tmp)))
    return np.degrees(lat2).reshape(shape), lon2.reshape(shape), azi2.reshape(shape)


def _track_arrays(lat: ArrayLike, lon: ArrayLike) -> tuple[FloatArray, FloatArray]:
    la = np.asarray(lat, dtype=np.float64).ravel()
    lo = np.asarray(lon, dtype=np.float64).ravel()
    if la.shape != lo.shape:
        raise ValidationFailed(
            f"latitude and longitude arrays differ in length ({la.size} and {lo.size})",
            details={"field": "coordinates", "rule": "same-length"},
        )
    return la, lo


def leg_distances(lat: ArrayLike, lon: ArrayLike) -> FloatArray:
    """Geodesic length (m) of each leg between consecutive points: ``n - 1`` values."""
    la, lo = _track_arrays(lat, lon)
    if la.size < 2:
        return np.zeros(0)
    _check_latlon(la, lo)
    return _leg_distances_chunked(la, lo)


def leg_azimuths(lat: ArrayLike, lon: ArrayLike) -> FloatArray:
    """Initial azimuth (degrees in [0, 360)) of each leg; NaN for a leg of zero length."""
    la, lo = _track_arrays(lat, lon)
    if la.size < 2:
        return np.zeros(0)
    dist, az1, _ = inverse(la[:-1], lo[:-1], la[1:], lo[1:])
    az1[dist == 0] = np.nan
    return az1


def path_length(lat: ArrayLike, lon: ArrayLike) -> float:
    """Total geodesic length (m) of the path through the points in order."""
    return float(np.sum(leg_distances(lat, lon)))


def polygon_area_perimeter(lat: ArrayLike, lon: ArrayLike) -> tuple[float, float]:
    """Geodesic area (m², never negative) and perimeter (m) of a ring, closed or not.

    Either winding order is accepted; the area is that of the region the ring encloses on the
    side GeographicLib's ``PolygonArea`` takes as the interior for a small ring.
    """
    la, lo = _track_arrays(lat, lon)
    if la.size >= 2 and la[0] == la[-1] and lo[0] == lo[-1]:
        la, lo = la[:-1], lo[:-1]
    if la.size < 3:
        raise ValidationFailed(
            f"a polygon needs at least 3 distinct vertices, got {la.size}",
            details={"field": "coordinates", "rule": "min-vertices"},
        )
    poly = Geodesic.WGS84.Polygon()
    for y, x in zip(la.tolist(), lo.tolist(), strict=True):
        poly.AddPoint(y, x)
    _, perimeter, area = poly.Compute(False, True)
    return abs(float(area)), float(perimeter)


def interpolate_track(
    t_src: ArrayLike, lat: ArrayLike, lon: ArrayLike, t_query: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """Positions at ``t_query``, moving at constant speed along the geodesic between fixes.

    ``t_src`` must be non-decreasing (equal consecutive times are allowed: a query at such a
    time takes the later fix). Query times outside ``[t_src[0], t_src[-1]]`` give NaN: the
    position there is unknown, not the nearest fix.
    """
    t = np.asarray(t_src, dtype=np.float64).ravel()
    la, lo = _track_arrays(lat, lon)
    if t.shape != la.shape:
        raise ValidationFailed(
            f"{t.size} times for {la.size} positions",
            details={"field": "times", "rule": "same-length"},
        )
    q = np.asarray(t_query, dtype=np.float64)
    shape = q.shape
    q = q.ravel()
    out_lat = np.full(q.shape, np.nan)
    out_lon = np.full(q.shape, np.nan)
    if t.size == 0 or q.size == 0:
        return out_lat.reshape(shape), out_lon.reshape(shape)
    if t.size > 1 and np.any(np.diff(t) < 0):
        raise ValidationFailed("track times must not go backwards", details={"field": "times", "rule": "monotonic"})
    inside = (q >= t[0]) & (q <= t[-1])
    if t.size == 1:
        out_lat[inside] = la[0]
        out_lon[inside] = lo[0]
        return out_lat.reshape(shape), out_lon.reshape(shape)

    qi = q[inside]
    seg = np.clip(np.searchsorted(t, qi, side="right") - 1, 0, t.size - 2)
    t0 = t[seg]
    dt = t[seg + 1] - t0
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(dt > 0, (qi - t0) / dt, 1.0)
    frac = np.clip(frac, 0.0, 1.0)

    lat_q = la[seg].copy()
    lon_q = lo[seg].copy()
    at_end = frac == 1.0
    lat_q[at_end] = la[seg[at_end] + 1]
    lon_q[at_end] = lo[seg[at_end] + 1]
    between = (frac > 0.0) & ~at_end
    if np.any(between):
        # Solve each leg once even when many queries fall on it.
        legs, inv = np.unique(seg[between], return_inverse=True)
        dist, az1, _ = inverse(la[legs], lo[legs], la[legs + 1], lo[legs + 1])
        y, x, _ = direct(la[seg[between]], lo[seg[between]], az1[inv], dist[inv] * frac[between])
        lat_q[between] = y
        lon_q[between] = x
    out_lat[inside] = lat_q
    out_lon[inside] = lon_q
    return out_lat.reshape(shape), out_lon.reshape(shape)
