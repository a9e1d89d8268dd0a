"""Vincenty's inverse solution over chunks of pairs at once, in preallocated buffers, with
GeographicLib solving the few pairs where the iteration does not converge."""

from __future__ import annotations

from typing import Final

import numpy as np
from geographiclib.geodesic import Geodesic
from numpy.typing import NDArray

from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo._ellipsoid import (
    MAX_ITERATIONS,
    TOLERANCE_RAD,
    WGS84_B,
    WGS84_F,
    delta_sigma,
    reduced_latitude,
    series_ab,
    wrap_360,
    wrap_pi,
)

__all__ = ["inverse_chunked", "leg_distances_chunked"]

_TOL_AZIMUTH: Final = 1e-10  # relative to the arc: azimuths then good to ~1e-8 degrees


def _sin_cos(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """sin and cos; Taylor series when every |x| <= 0.1 (consecutive fixes of a track), which
    is four times quicker than libm and exact to ~1e-18."""
    if x.size and float(np.max(np.abs(x))) <= 0.1:
        x2 = x * x
        sin_x = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110)))))
        cos_x = 1 - x2 / 2 * (1 - x2 / 12 * (1 - x2 / 30 * (1 - x2 / 56 * (1 - x2 / 90 * (1 - x2 / 132)))))
        return sin_x, cos_x
    return np.sin(x), np.cos(x)


# Work on slices small enough for numpy's temporaries to stay in cache.
_CHUNK: Final = 1 << 14


def inverse_chunked(
    lat1: FloatArray, lon1: FloatArray, lat2: FloatArray, lon2: FloatArray, *, want_azimuths: bool
) -> tuple[FloatArray, FloatArray | None, FloatArray | None]:
    n = lat1.size
    dist = np.empty(n)
    az1 = np.empty(n) if want_azimuths else None
    az2 = np.empty(n) if want_azimuths else None
    for lo in range(0, n, _CHUNK):
        part = slice(lo, min(lo + _CHUNK, n))
        sin_u1, cos_u1 = reduced_latitude(lat1[part])
        sin_u2, cos_u2 = reduced_latitude(lat2[part])
        d, a1, a2 = _vincenty_inverse(
            sin_u1, cos_u1, sin_u2, cos_u2, lon2[part] - lon1[part], want_azimuths=want_azimuths
        )
        # From pole to pole every meridian is a shortest path: take GeographicLib's.
        d[(np.abs(lat1[part]) == 90) & (np.abs(lat2[part]) == 90)] = np.nan
        _fallback(d, (lat1[part], lon1[part], lat2[part], lon2[part]), a1, a2)
        dist[part] = d
        if az1 is not None and az2 is not None and a1 is not None and a2 is not None:
            az1[part] = wrap_360(a1)
            az2[part] = wrap_360(a2)
    return dist, az1, az2


def leg_distances_chunked(lat: FloatArray, lon: FloatArray) -> FloatArray:
    """Like ``inverse_chunked(lat[:-1], lon[:-1], lat[1:], lon[1:])[0]``, each point's
    reduced latitude computed once instead of twice."""
    n = lat.size - 1
    dist = np.empty(n)
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        sin_u, cos_u = reduced_latitude(lat[lo : hi + 1])
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
        self._allocate(big_l.shape)

    def _allocate(self, n: tuple[int, ...]) -> None:
        """The buffers :meth:`run` writes into, for ``n`` pairs."""
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
        sub._allocate(idx.shape)
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
    limit = TOLERANCE_RAD * (1 - k)
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
    big_l = wrap_pi(np.radians(dlon_deg))
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
        for _ in range(MAX_ITERATIONS - _FULL_ITER):
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
    a_coef, b_coef = series_ab(p.cos2_a)
    dist: FloatArray = WGS84_B * a_coef * (sigma - delta_sigma(b_coef, p.sin_s, p.cos_s, p.cos2sm))
    dist[failed] = np.nan
    if not want_azimuths:
        return dist, None, None
    az1 = np.degrees(np.arctan2(p.t1, p.t2))
    az2 = np.degrees(np.arctan2(cos_u1 * p.sin_lam, p.cu1su2 * p.cos_lam - p.su1cu2))
    coincident = p.sin_s == 0
    az1[coincident] = 180.0
    az2[coincident] = 180.0
    return dist, az1, az2
