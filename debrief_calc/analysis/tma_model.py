"""The bearings-only target model that ``tma-solve`` fits: a target on straight legs at constant speed.

The state lives in a :class:`~debrief_calc.geo.local_frame.LocalFrame` about the cuts (a straight
line there is a rhumb line, so each leg keeps its course): the target's position at the reference
time ``t_ref`` and one velocity per leg, ``θ = (x_ref, y_ref, vx_1, vy_1, …, vx_L, vy_L)`` (metres,
metres per second of the frame). Legs meet at the turn times, where the target turns at once, so its
position at any time is linear in θ: ``p(t) = p_ref + Σ_ℓ d_ℓ(t) v_ℓ`` with ``d_ℓ(t)`` the signed time
spent on leg ℓ between ``t_ref`` and ``t`` (:meth:`Plan.design`).

Each cut's predicted bearing is the geodesic azimuth (WGS84, :func:`debrief_calc.geo.geodesy.inverse`)
from its origin to the target at its time; the residual is the measured bearing minus that, wrapped
to ±180°, in degrees, divided by the cut's weight (its stated accuracy, when it has one). The
Jacobian is exact to the geodesic's reduced length: moving the target ``dm`` to the right of the
line of sight (at its end, azimuth ``az2``) turns the bearing by ``dm / s`` radians.

Fits are :func:`scipy.optimize.least_squares` (trust region; ``loss="soft_l1"`` where outliers must
not pull), imported on the first fit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import wrap180
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.local_frame import LocalFrame

__all__ = ["Fit", "Plan", "Problem", "scaled_starts"]

_DEG: Final = 180.0 / math.pi
#: nearer than this (m) a target has no bearing worth the name: the Jacobian is held there
_MIN_RANGE_M: Final = 1.0
#: the frame's latitudes are kept inside this while a fit wanders (a pole has no frame)
_MAX_LAT: Final = 85.0
#: how far from the frame's origin (m) a target is ever put: a third of the way round the earth
_REACH_M: Final = 1.0e7


@dataclass(frozen=True)
class Plan:
    """The target's legs: the times of its turns (epoch s, ascending) and the reference time."""

    turns: tuple[float, ...]
    t_ref: float

    @property
    def legs(self) -> int:
        return len(self.turns) + 1

    @property
    def size(self) -> int:
        """Parameters of the state: a position and a velocity per leg."""
        return 2 + 2 * self.legs

    def bounds(self) -> list[tuple[float, float]]:
        edges = [-math.inf, *self.turns, math.inf]
        return list(itertools.pairwise(edges))

    def leg_of(self, t: FloatArray) -> np.ndarray[Any, np.dtype[np.intp]]:
        """The leg each time falls on (a turn time starts the next leg)."""
        return np.searchsorted(np.asarray(self.turns, dtype=np.float64), t, side="right")

    def durations(self, t: FloatArray) -> FloatArray:
        """``d_ℓ(t)``: signed seconds spent on each leg between ``t_ref`` and each ``t`` (n × legs)."""
        t = np.asarray(t, dtype=np.float64)
        out = np.empty((t.size, self.legs))
        for k, (lo, hi) in enumerate(self.bounds()):
            out[:, k] = np.clip(t, lo, hi) - min(max(self.t_ref, lo), hi)
        return out

    def design(self, t: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Rows ``ax``, ``ay`` (n × size) with ``x(t) = ax @ θ`` and ``y(t) = ay @ θ``."""
        d = self.durations(t)
        n = d.shape[0]
        ax, ay = np.zeros((n, self.size)), np.zeros((n, self.size))
        ax[:, 0] = 1.0
        ay[:, 1] = 1.0
        ax[:, 2::2] = d
        ay[:, 3::2] = d
        return ax, ay


@dataclass
class Fit:
    """A solution: the state, every cut's residual (degrees, unweighted; NaN for a cut without a
    bearing), the cost over the cuts fitted (½ Σ of the loss of the weighted residuals) and the
    sum of squares of their weighted residuals."""

    theta: FloatArray
    residuals: FloatArray
    cost: float
    chi2: float
    active: np.ndarray[Any, np.dtype[np.bool_]]
    plan: Plan
    success: bool = True

    @property
    def used(self) -> int:
        return int(self.active.sum())

    @property
    def dof(self) -> int:
        return max(self.used - self.plan.size, 1)


class Problem:
    """The cuts of one fit in a frame: times, origins, measured bearings and weights."""

    def __init__(
        self,
        frame: LocalFrame,
        t: FloatArray,
        lat: FloatArray,
        lon: FloatArray,
        bearing: FloatArray,
        sd: FloatArray | None = None,
    ) -> None:
        self.frame = frame
        self.t, self.lat, self.lon = t, lat, lon
        self.bearing = bearing
        self.ox, self.oy = frame.to_xy(lat, lon)
        self.weight = np.ones(t.size) if sd is None else np.where(np.isfinite(sd) & (sd > 0), 1.0 / sd, 1.0)
        self.has_bearing = np.isfinite(bearing)
        self._plan: Plan | None = None
        self._design: tuple[FloatArray, FloatArray] = (np.zeros((0, 0)), np.zeros((0, 0)))
        self._memo: tuple[bytes, tuple[FloatArray, ...]] | None = None

    def design(self, plan: Plan) -> tuple[FloatArray, FloatArray]:
        if plan != self._plan:
            self._plan, self._design, self._memo = plan, plan.design(self.t), None
        return self._design

    def predict(self, theta: FloatArray, plan: Plan) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Predicted bearing (degrees), range (m), azimuth at the target's end of the line of sight
        (degrees) and the frame's scale at the target, for every cut."""
        ax, ay = self.design(plan)
        key = theta.tobytes()
        if self._memo is not None and self._memo[0] == key:
            pred, dist, az2, scale = self._memo[1]
            return pred, dist, az2, scale
        # a fit that wanders (an unobservable range) is held within reach of the frame
        px = np.nan_to_num(np.clip(ax @ theta, -_REACH_M, _REACH_M), nan=_REACH_M)
        py = np.nan_to_num(np.clip(ay @ theta, -_REACH_M, _REACH_M), nan=_REACH_M)
        lat, lon = self.frame.to_latlon(px, py)
        lat = np.clip(lat, -_MAX_LAT, _MAX_LAT)
        dist, az1, az2 = geodesy.inverse(self.lat, self.lon, lat, lon)
        scale = self.frame.scale(lat)
        self._memo = (key, (az1, dist, az2, scale))
        return az1, dist, az2, scale

    def residuals(self, theta: FloatArray, plan: Plan) -> FloatArray:
        """Measured minus predicted bearing, degrees in [-180, 180) (NaN without a measurement)."""
        pred = self.predict(theta, plan)[0]
        return wrap180(self.bearing - pred)

    def _fun(self, theta: FloatArray, plan: Plan, idx: np.ndarray[Any, Any]) -> FloatArray:
        out: FloatArray = self.residuals(theta, plan)[idx] * self.weight[idx]
        return out

    def _jac(self, theta: FloatArray, plan: Plan, idx: np.ndarray[Any, Any]) -> FloatArray:
        ax, ay = self.design(plan)
        _, dist, az2, scale = self.predict(theta, plan)
        a = np.radians(az2[idx])
        per = _DEG / (np.maximum(dist[idx], _MIN_RANGE_M) * scale[idx])
        # d(bearing)/dθ; the residual is measured minus predicted
        d = (np.cos(a) * per)[:, None] * ax[idx] - (np.sin(a) * per)[:, None] * ay[idx]
        out: FloatArray = -d * self.weight[idx][:, None]
        return out

    def jacobian(self, theta: FloatArray, plan: Plan, active: np.ndarray[Any, Any]) -> FloatArray:
        """The weighted residuals' Jacobian over the ``active`` cuts (degrees per unit of θ)."""
        return self._jac(theta, plan, np.flatnonzero(active))

    def fit(
        self,
        theta0: FloatArray,
        plan: Plan,
        active: np.ndarray[Any, np.dtype[np.bool_]],
        *,
        loss: str = "linear",
        f_scale: float = 1.0,
        max_nfev: int | None = None,
    ) -> Fit:
        """Least squares from ``theta0`` over the ``active`` cuts."""
        from scipy.optimize import least_squares

        idx = np.flatnonzero(active & self.has_bearing)
        sol = least_squares(
            lambda th: self._fun(th, plan, idx),
            theta0,
            jac=lambda th: self._jac(th, plan, idx),
            method="trf",
            loss=loss,
            f_scale=f_scale,
            x_scale="jac",
            max_nfev=max_nfev,
        )
        theta = np.asarray(sol.x, dtype=np.float64)
        res = self.residuals(theta, plan)
        weighted = res[idx] * self.weight[idx]
        mask = np.zeros(self.t.size, dtype=bool)
        mask[idx] = True
        return Fit(theta, res, float(sol.cost), float(weighted @ weighted), mask, plan, bool(sol.success))

    def pseudolinear(self, plan: Plan, active: np.ndarray[Any, Any], fixed: FloatArray | None = None) -> FloatArray:
        """Lindgren & Gong's pseudolinear estimate: each bearing line as a linear equation in θ
        (the target's offset across the line is zero), solved by least squares. ``fixed``: the
        position at ``t_ref`` held there, only the velocities solved."""
        ax, ay = self.design(plan)
        idx = np.flatnonzero(active & self.has_bearing)
        b = np.radians(self.bearing[idx])
        c, s = np.cos(b), np.sin(b)
        rows = c[:, None] * ax[idx] - s[:, None] * ay[idx]
        rhs = c * self.ox[idx] - s * self.oy[idx]
        if fixed is not None:
            rhs = rhs - rows[:, :2] @ fixed
            vel = np.linalg.lstsq(rows[:, 2:], rhs, rcond=None)[0]
            return np.concatenate((fixed, vel)).astype(np.float64)
        return np.asarray(np.linalg.lstsq(rows, rhs, rcond=None)[0], dtype=np.float64)

    def fit_at_range(
        self,
        start: FloatArray,
        plan: Plan,
        active: np.ndarray[Any, Any],
        origin: tuple[float, float],
        range_frame: float,
    ) -> Fit:
        """The best solution whose position at ``t_ref`` lies ``range_frame`` (frame metres) from
        ``origin`` (frame x, y): the bearing at ``t_ref`` and the velocities free."""
        from scipy.optimize import least_squares

        idx = np.flatnonzero(active & self.has_bearing)
        ox, oy = origin

        def theta_of(phi: FloatArray) -> FloatArray:
            return np.concatenate(([ox + range_frame * math.sin(phi[0]), oy + range_frame * math.cos(phi[0])], phi[1:]))

        def jac(phi: FloatArray) -> FloatArray:
            full = self._jac(theta_of(phi), plan, idx)
            out = np.empty((idx.size, phi.size))
            out[:, 0] = full[:, 0] * range_frame * math.cos(phi[0]) - full[:, 1] * range_frame * math.sin(phi[0])
            out[:, 1:] = full[:, 2:]
            return out

        phi0 = np.concatenate(([math.atan2(start[0] - ox, start[1] - oy)], start[2:]))
        sol = least_squares(lambda p: self._fun(theta_of(p), plan, idx), phi0, jac=jac, method="trf", x_scale="jac")
        theta = theta_of(np.asarray(sol.x, dtype=np.float64))
        res = self.residuals(theta, plan)
        weighted = res[idx] * self.weight[idx]
        mask = np.zeros(self.t.size, dtype=bool)
        mask[idx] = True
        return Fit(theta, res, float(sol.cost), float(weighted @ weighted), mask, plan, bool(sol.success))


def scaled_starts(
    theta: FloatArray, origin: tuple[float, float], own_velocity: tuple[float, float], factors: Sequence[float]
) -> list[FloatArray]:
    """Solutions like ``theta`` at other ranges: the position moved along the line of sight from
    ``origin`` by each factor, the velocity relative to ownship scaled alike (Nardone and Aidala's
    family: before ownship manoeuvres, they all fit the same bearings)."""
    out = []
    ox, oy = origin
    for f in factors:
        th = theta.copy()
        th[0], th[1] = ox + f * (theta[0] - ox), oy + f * (theta[1] - oy)
        th[2::2] = own_velocity[0] + f * (theta[2::2] - own_velocity[0])
        th[3::2] = own_velocity[1] + f * (theta[3::2] - own_velocity[1])
        out.append(th)
    return out
