"""What a fitted target state says, with its uncertainty: positions and their ellipses, each leg's
course and speed, range and bearing from ownship, each with its standard deviation.

Standard deviations come from the state's covariance (:mod:`debrief_calc.analysis.tma_fit`) through
the figures' first derivatives (the delta method), in true metres: the frame's lengths are divided by
its scale at the target (:meth:`~debrief_calc.geo.local_frame.LocalFrame.scale`). An ellipse holds
the position with the stated confidence: its semi-axes are ``√(λ q)`` for the eigenvalues λ of the
position's covariance, with ``q`` the χ² quantile with 2 degrees of freedom when the bearings'
standard deviation was stated, or ``2 F(2, dof)`` when it was estimated from the residuals (so
that an ellipse is as wide as the residuals' own uncertainty makes it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.tma_fit import Solved
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray

__all__ = ["Ellipse", "Motion", "Position", "confidence_quantile", "leg_motion", "positions", "range_bearing"]

_RAD: Final = math.pi / 180.0


def confidence_quantile(solved: Solved, confidence: float, dims: int) -> float:
    """The squared radius (in standard deviations) that holds ``confidence`` of a ``dims``-dimensional
    Gaussian estimate: χ² when σ was stated, ``dims · F(dims, dof)`` when estimated."""
    from scipy.stats import chi2, f

    if solved.sd_estimated:
        return float(dims * f.ppf(confidence, dims, solved.fit.dof))
    return float(chi2.ppf(confidence, dims))


@dataclass(frozen=True)
class Ellipse:
    orientation_deg: float  # of the major axis, true, in [0, 180)
    semi_major_m: float
    semi_minor_m: float

    def as_yards(self) -> dict[str, float]:
        """As a tma-solution track's ``ellipses`` give it (legacy Debrief's semi-axes in yards)."""
        return {
            "orientation_deg": round(self.orientation_deg, 1),
            "semiMajorYd": round(self.semi_major_m / 0.9144, 1),
            "semiMinorYd": round(self.semi_minor_m / 0.9144, 1),
        }


@dataclass(frozen=True)
class Position:
    t: float
    lat: float
    lon: float
    cov: FloatArray  # 2 × 2, true metres², east and north
    ellipse: Ellipse


def _ellipse(cov: FloatArray, q: float) -> Ellipse:
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, 0.0)
    major = vecs[:, 1]
    orientation = math.degrees(math.atan2(major[0], major[1])) % 180.0
    return Ellipse(orientation, math.sqrt(vals[1] * q), math.sqrt(vals[0] * q))


def positions(solved: Solved, times: FloatArray, q: float) -> list[Position]:
    """The target's position at each of ``times`` with its covariance and ellipse."""
    problem, theta, plan = solved.problem, solved.fit.theta, solved.fit.plan
    ax, ay = plan.design(np.asarray(times, dtype=np.float64))
    lat, lon = problem.frame.to_latlon(ax @ theta, ay @ theta)
    scale = problem.frame.scale(lat)
    out = []
    for k in range(lat.size):
        rows = np.vstack((ax[k], ay[k])) / scale[k]
        cov = rows @ solved.covariance @ rows.T
        out.append(Position(float(times[k]), float(lat[k]), float(lon[k]), cov, _ellipse(cov, q)))
    return out


@dataclass(frozen=True)
class Motion:
    leg: int  # from 0
    course: float
    course_sd: float
    speed_mps: float
    speed_sd_mps: float


def leg_motion(solved: Solved, leg: int, at_lat: float) -> Motion:
    """Course (true, degrees) and speed (m/s) of leg ``leg`` with their standard deviations."""
    theta, cov = solved.fit.theta, solved.covariance
    scale = float(solved.problem.frame.scale(at_lat))
    i = 2 + 2 * leg
    vx, vy = float(theta[i]), float(theta[i + 1])
    c = cov[i : i + 2, i : i + 2]
    v2 = vx * vx + vy * vy
    speed = math.sqrt(v2)
    if speed == 0:
        return Motion(leg, math.nan, math.nan, 0.0, math.sqrt(float(np.trace(c)) / 2) / scale)
    g_course = np.array([vy, -vx]) / v2  # radians per frame m/s
    g_speed = np.array([vx, vy]) / speed
    course_sd = math.degrees(math.sqrt(max(float(g_course @ c @ g_course), 0.0)))
    speed_sd = math.sqrt(max(float(g_speed @ c @ g_speed), 0.0)) / scale
    return Motion(leg, math.degrees(math.atan2(vx, vy)) % 360.0, course_sd, speed / scale, speed_sd)


def range_bearing(position: Position, own_lat: float, own_lon: float) -> dict[str, Any]:
    """Range (m) and true bearing from ownship to the target at ``position`` with their standard
    deviations (from the position's covariance; ownship's own position taken as exact)."""
    dist, az1, az2 = geodesy.inverse(own_lat, own_lon, position.lat, position.lon)
    a = float(az2) * _RAD  # the line of sight's direction at the target
    along = np.array([math.sin(a), math.cos(a)])
    across = np.array([math.cos(a), -math.sin(a)])
    r = float(dist)
    range_sd = math.sqrt(max(float(along @ position.cov @ along), 0.0))
    bearing_sd = math.degrees(math.sqrt(max(float(across @ position.cov @ across), 0.0)) / r) if r > 0 else math.nan
    return {"range_m": r, "range_sd_m": range_sd, "bearing": float(az1), "bearing_sd": bearing_sd}
