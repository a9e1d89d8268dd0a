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

import numpy as np
from geographiclib.geodesic import Geodesic
from numpy.typing import ArrayLike

from debrief_calc.errors import ValidationFailed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo._ellipsoid import (
    MAX_ITERATIONS,
    TOLERANCE_RAD,
    WGS84_A,
    WGS84_B,
    WGS84_F,
    delta_sigma,
    reduced_latitude,
    series_ab,
    wrap_360,
    wrap_pi,
)
from debrief_calc.geo._vincenty_inverse import inverse_chunked, leg_distances_chunked

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


def _broadcast_flat(*values: ArrayLike) -> tuple[tuple[int, ...], list[FloatArray]]:
    """The arguments as float arrays broadcast against each other: their common shape, and each
    one flattened."""
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in values))
    return arrays[0].shape, [np.ravel(a) for a in arrays]


def inverse(
    lat1: ArrayLike, lon1: ArrayLike, lat2: ArrayLike, lon2: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distance (m) and azimuths at both ends (degrees in [0, 360)) of the geodesic from 1 to 2.

    The arguments broadcast against each other; scalars give 0-d arrays. The azimuth at point 2
    is the direction of travel on arrival (the forward azimuth), as in GeographicLib.
    """
    shape, (la1, lo1, la2, lo2) = _broadcast_flat(lat1, lon1, lat2, lon2)
    _check_latlon(la1, lo1)
    _check_latlon(la2, lo2)
    s, az1, az2 = inverse_chunked(la1, lo1, la2, lo2, want_azimuths=True)
    assert az1 is not None and az2 is not None
    return s.reshape(shape), az1.reshape(shape), az2.reshape(shape)


def direct(
    lat1: ArrayLike, lon1: ArrayLike, azi1_deg: ArrayLike, distance_m: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The point reached by travelling ``distance_m`` from (lat1, lon1) on azimuth ``azi1_deg``.

    Returns (lat2, lon2 in [-180, 180], azi2 in [0, 360)), broadcasting the arguments.
    """
    shape, (lat, lon, az, s) = _broadcast_flat(lat1, lon1, azi1_deg, distance_m)
    sin_u1, cos_u1 = reduced_latitude(lat)
    alpha1 = np.radians(az)
    sin_a1 = np.sin(alpha1)
    cos_a1 = np.cos(alpha1)
    sigma1 = np.arctan2(sin_u1, cos_u1 * cos_a1)
    sin_a = cos_u1 * sin_a1
    cos2_a = np.maximum(1 - sin_a * sin_a, 0.0)
    a_coef, b_coef = series_ab(cos2_a)
    s_over_ba = s / (WGS84_B * a_coef)

    # cos 2σm = cos(2σ1 + σ), expanded so that each round needs only sin σ and cos σ
    sin_2s1 = np.sin(2 * sigma1)
    cos_2s1 = np.cos(2 * sigma1)
    sigma = s_over_ba.copy()
    for _ in range(MAX_ITERATIONS):
        sin_s, cos_s = np.sin(sigma), np.cos(sigma)
        cos2sm = cos_2s1 * cos_s - sin_2s1 * sin_s
        sigma_new = s_over_ba + delta_sigma(b_coef, sin_s, cos_s, cos2sm)
        converged = bool(np.all(np.abs(sigma_new - sigma) <= TOLERANCE_RAD))
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
    lon2 = np.degrees(wrap_pi(np.radians(lon) + big_l))
    azi2 = wrap_360(np.degrees(np.arctan2(sin_a, -tmp)))
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
    return leg_distances_chunked(la, lo)


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
