"""Whether bearings fix the target's range, and what is known when they do not.

Bearings alone fix range only after ownship manoeuvres (Nardone & Aidala 1981): while ownship keeps
one course and speed, every range-scaled solution (position along the line of sight, velocity
relative to ownship scaled alike) fits the same bearings. So:

* ownship's legs and manoeuvres over the cuts are read with ``track-legs``
  (:func:`debrief_calc.analysis.track_legs.split_track`, its defaults); a manoeuvre counts when
  :data:`CUTS_EACH_SIDE` fitted cuts lie before it and after it;
* with one, the range's standard deviation relative to the range (from the Fisher information)
  grades it: ``observable`` up to :data:`OBSERVABLE_REL`, ``weak`` up to :data:`WEAK_REL` (the
  solution is given with its wide uncertainty and the range interval the bearings allow), else
  ``not observable``; without one it is ``not observable`` whatever the numbers say;
* when the range is not observable (or weak) the **range profile** says what is known: the best
  fit with the range at the reference time held at each of a set of ranges. Ranges whose fit is
  within the confidence level of the best make the interval the bearings allow; the target's speed
  at each range gives the **range bound** of a target no faster than ``max_speed_kn``; a few of
  them are the **family** of solutions, each a course and speed;
* the **Ekelund range** across each ownship manoeuvre between two legs with cuts on both:
  ``R = (OSA₂ − OSA₁) / (Ḃ₁ − Ḃ₂)``, OSA the ownship speed across the line of sight
  (``V sin(C − B)``), Ḃ the bearing rate on each leg at the manoeuvre (a straight line through
  the nearest :data:`EKELUND_CUTS` cuts of each leg, or a parabola when it curves significantly,
  read at the manoeuvre's middle). In knots and degrees per minute that is
  ``1768.6 · ΔOSA / ΔḂ`` metres (legacy Debrief writes 1770.28); a target zig between the legs
  spoils it;
* and, when the range is not observable, what ownship should do: turn 30–90° across the line of
  sight, the side that changes its speed across the line of sight most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import KNOT_MPS, Legs, motion_at, num, wrap180
from debrief_calc.analysis.sensor_cuts import Cuts
from debrief_calc.analysis.tma_fit import Solved
from debrief_calc.analysis.tma_model import Fit, scaled_starts
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks.features import TrackData, parse_iso, track_data

__all__ = [
    "CUTS_EACH_SIDE",
    "OBSERVABLE_REL",
    "WEAK_REL",
    "Ownship",
    "advice",
    "ekelund",
    "ownship_of",
    "range_profile",
]

#: fitted cuts needed on each side of an ownship manoeuvre for it to count
CUTS_EACH_SIDE: Final = 2
#: range standard deviation / range up to which the range is observable
OBSERVABLE_REL: Final = 0.2
#: … and up to which it is weakly observable (beyond: not observable)
WEAK_REL: Final = 0.5
#: cuts of each leg (nearest the manoeuvre) whose bearings give its bearing rate for Ekelund
EKELUND_CUTS: Final = 4
#: cuts of a leg from which its bearings may be read as a parabola
_CURVE_CUTS: Final = 4
#: metres per (knot / (degree per minute))
EKELUND_M: Final = KNOT_MPS / math.radians(1.0 / 60.0)
#: ranges (m) of the profile: from 200 m to 150 km
_PROFILE_M: Final = tuple(float(x) for x in np.geomspace(200.0, 150_000.0, 23))
#: ranges (m) of the family shown (1, 2, 3, 5, 8, 12 and 20 nautical miles)
_FAMILY_M: Final = tuple(1852.0 * x for x in (1, 2, 3, 5, 8, 12, 20))


@dataclass
class Ownship:
    """The track that carried the sensor, over the cuts' period: its legs and manoeuvres as
    ``track-legs`` answers them, and its motion at any time."""

    track: TrackData
    legs: list[dict[str, Any]]
    manoeuvres: list[dict[str, Any]]
    unsteady: list[dict[str, Any]]

    def position(self, t: float) -> tuple[float, float] | None:
        lat, lon = geodesy.interpolate_track(self.track.t, self.track.lat, self.track.lon, np.array([t]))
        return (float(lat[0]), float(lon[0])) if np.isfinite(lat[0]) else None

    def velocity(self, t: float) -> tuple[float, float] | None:
        """East and north (m/s) at ``t``, or None outside the track."""
        speed, course = motion_at(Legs(self.track), np.array([t]))
        if not np.isfinite(speed[0]):
            return None
        c = math.radians(float(course[0])) if np.isfinite(course[0]) else 0.0
        return float(speed[0]) * math.sin(c), float(speed[0]) * math.cos(c)


def ownship_of(feature: Mapping[str, Any], start: float, end: float) -> Ownship:
    """The host track's legs and manoeuvres from ``start`` to ``end`` (the cuts' period)."""
    from debrief_calc.analysis.track_legs import SPEC, split_track
    from debrief_calc.tracks.times import Window, cut_feature

    whole = track_data(feature)
    cut = cut_feature(feature, Window(start, end))
    params = {p.name: p.default for p in SPEC.parameters}
    if cut is None or len(track_data(cut)) < 2:
        return Ownship(whole, [], [], [])
    answer, _marks = split_track(track_data(cut), params)
    return Ownship(whole, answer["legs"], answer["manoeuvres"], answer["unsteady"])


def manoeuvres_used(own: Ownship, t: FloatArray) -> list[dict[str, Any]]:
    """Ownship's manoeuvres with :data:`CUTS_EACH_SIDE` of the times ``t`` (the cuts fitted) before
    and after them."""
    out = []
    for m in own.manoeuvres:
        before = int(np.sum(t <= parse_iso(m["start"])))
        after = int(np.sum(t >= parse_iso(m["end"])))
        if before >= CUTS_EACH_SIDE and after >= CUTS_EACH_SIDE:
            out.append(m)
    return out


def information_condition(solved: Solved) -> float:
    """The condition number of the Fisher information, its parameters scaled to unit diagonal
    (how nearly some combination of them is not fixed by the bearings at all)."""
    jac = solved.problem.jacobian(solved.fit.theta, solved.fit.plan, solved.fit.active)
    info = jac.T @ jac
    d = np.sqrt(np.maximum(np.diag(info), 1e-300))
    return float(np.linalg.cond(info / np.outer(d, d)))


@dataclass
class Profile:
    """Fits with the range at the reference time held: true metres, χ² (weighted), the fastest
    leg's speed (m/s) and each fit."""

    ranges: list[float]
    chi2: list[float]
    speed: list[float]
    fits: list[Fit]


def _speed(fit: Fit, scale: float) -> float:
    v = fit.theta[2:].reshape(-1, 2)
    return float(np.max(np.hypot(v[:, 0], v[:, 1]))) / scale


def range_profile(
    solved: Solved,
    own_at_ref: tuple[float, float],
    own_velocity: tuple[float, float],
    ranges: tuple[float, ...] = _PROFILE_M,
) -> Profile:
    """The best fit at each range (m) from ownship's position at the reference time."""
    problem, fit = solved.problem, solved.fit
    frame = problem.frame
    ox, oy = (float(v) for v in frame.to_xy(own_at_ref[0], own_at_ref[1]))
    scale = float(frame.scale(own_at_ref[0]))
    here = math.hypot(float(fit.theta[0]) - ox, float(fit.theta[1]) - oy)
    out = Profile([], [], [], [])
    for r in ranges:
        factor = r * scale / here if here > 0 else 1.0
        (start,) = scaled_starts(fit.theta, (ox, oy), own_velocity, [factor])
        held = problem.fit_at_range(start, fit.plan, fit.active, (ox, oy), r * scale)
        out.ranges.append(r)
        out.chi2.append(held.chi2)
        out.speed.append(_speed(held, scale))
        out.fits.append(held)
    return out


def allowed_interval(profile: Profile, threshold: float) -> tuple[float | None, float | None]:
    """The ranges whose χ² is within ``threshold`` of the least: ``(low, high)``, None at an end the
    profile reaches (the bearings allow the range to go on)."""
    chi2 = np.asarray(profile.chi2)
    ok = np.flatnonzero(chi2 <= chi2.min() + threshold)
    lo, hi = int(ok[0]), int(ok[-1])
    return (
        profile.ranges[lo] if lo > 0 else None,
        profile.ranges[hi] if hi < len(profile.ranges) - 1 else None,
    )


def speed_bound(profile: Profile, max_speed_mps: float) -> tuple[float, float] | None:
    """The ranges of the profile at which the target is no faster than ``max_speed_mps``: from the
    first to the last such (each to the grid's spacing, interpolated), or None when at none."""
    speed = np.asarray(profile.speed)
    r = np.log(np.asarray(profile.ranges))
    ok = np.flatnonzero(speed <= max_speed_mps)
    if not ok.size:
        return None
    lo, hi = int(ok[0]), int(ok[-1])

    def cross(a: int, b: int) -> float:
        f = (max_speed_mps - speed[a]) / (speed[b] - speed[a]) if speed[b] != speed[a] else 0.0
        return float(math.exp(r[a] + min(max(f, 0.0), 1.0) * (r[b] - r[a])))

    low = cross(lo - 1, lo) if lo > 0 else profile.ranges[0]
    high = cross(hi + 1, hi) if hi < len(speed) - 1 else profile.ranges[-1]
    return low, high


def family(solved: Solved, own_at_ref: tuple[float, float], own_velocity: tuple[float, float]) -> Profile:
    """The solutions at a few round ranges (1–20 nm): each a course and speed that fits."""
    return range_profile(solved, own_at_ref, own_velocity, _FAMILY_M)


def _rate(t: FloatArray, b: FloatArray, at: float) -> tuple[float, float, float] | None:
    """Bearing (unwrapped, degrees), its rate (degrees per second) and the rate's standard error at
    time ``at``, from the cuts' bearings: a straight line through them, or a parabola when there
    are :data:`_CURVE_CUTS` or more and its curvature is significant (the bearing rate of a
    closing target grows within a leg); None for fewer than two cuts."""
    if t.size < 2 or np.ptp(t) <= 0:
        return None
    u = b[0] + wrap180(b - b[0])
    x = (t - at) / 60.0  # minutes from ``at``: a well-scaled design
    for degree in (2, 1):
        if degree == 2 and t.size < _CURVE_CUTS:
            continue
        design = np.vander(x, degree + 1, increasing=True)
        coef, *_ = np.linalg.lstsq(design, u, rcond=None)
        res = u - design @ coef
        dof = t.size - degree - 1
        cov = np.linalg.pinv(design.T @ design) * (float(res @ res) / dof if dof > 0 else math.nan)
        if degree == 2 and not abs(coef[2]) > 3.0 * math.sqrt(max(cov[2, 2], 0.0)):
            continue  # no curvature worth the name: the straight line
        return float(coef[0]), float(coef[1]) / 60.0, math.sqrt(max(cov[1, 1], 0.0)) / 60.0 if dof > 0 else math.nan
    return None


def ekelund(
    cuts: Cuts, used: np.ndarray[Any, Any], own: Ownship, solved: Solved | None, unit_m: float
) -> list[dict[str, Any]]:
    """The Ekelund range across each ownship manoeuvre between two legs with cuts on both."""
    out = []
    t, b = cuts.t[used], cuts.bearing[used]
    for m in own.manoeuvres:
        pair = m.get("between_legs")
        if not pair:
            continue
        leg1, leg2 = own.legs[pair[0] - 1], own.legs[pair[1] - 1]
        on1 = (t >= parse_iso(leg1["start"])) & (t <= parse_iso(leg1["end"]))
        on2 = (t >= parse_iso(leg2["start"])) & (t <= parse_iso(leg2["end"]))
        entry: dict[str, Any] = {
            "manoeuvre": m["manoeuvre"],
            "start": m["start"],
            "end": m["end"],
            "legs": pair,
            "cuts_before": int(on1.sum()),
            "cuts_after": int(on2.sum()),
        }
        if on1.sum() < 2 or on2.sum() < 2:
            entry["note"] = "fewer than 2 cuts on a leg either side: no bearing rate to compare"
            out.append(entry)
            continue
        i1, i2 = np.flatnonzero(on1)[-EKELUND_CUTS:], np.flatnonzero(on2)[:EKELUND_CUTS]
        t_m = (parse_iso(m["start"]) + parse_iso(m["end"])) / 2
        r1, r2 = _rate(t[i1], b[i1], t_m), _rate(t[i2], b[i2], t_m)
        assert r1 is not None and r2 is not None
        b1, b2 = r1[0], r2[0]
        bearing = (
            math.degrees(
                math.atan2(
                    math.sin(math.radians(b1)) + math.sin(math.radians(b2)),
                    math.cos(math.radians(b1)) + math.cos(math.radians(b2)),
                )
            )
            % 360.0
        )
        osa1 = leg1["speed_kn"] * math.sin(math.radians(leg1["course"] - bearing))
        osa2 = leg2["speed_kn"] * math.sin(math.radians(leg2["course"] - bearing))
        rate1, rate2 = r1[1] * 60.0, r2[1] * 60.0  # degrees per minute
        entry.update(
            bearing=num(bearing, 1),
            bearing_rate_before=num(rate1, 3),
            bearing_rate_after=num(rate2, 3),
            osa_before_kn=num(osa1, 2),
            osa_after_kn=num(osa2, 2),
        )
        d_rate = rate1 - rate2
        metres = EKELUND_M * (osa2 - osa1) / d_rate if d_rate != 0 else math.inf
        if not math.isfinite(metres) or metres <= 0:
            entry["range"] = None
            entry["note"] = (
                "the bearing rate did not change as ownship's speed across the line of sight did (a negative or "
                "no range): the target may have manoeuvred between the legs, or the turn was too small"
            )
        else:
            se = math.hypot(r1[2], r2[2]) * 60.0
            entry["range"] = num(metres / unit_m, 3)
            if math.isfinite(se):
                entry["range_sd"] = num(metres * se / abs(d_rate) / unit_m, 3)
            if solved is not None:
                entry["solution_range"] = _solution_range(solved, own, t_m, unit_m)
        out.append(entry)
    return out


def _solution_range(solved: Solved, own: Ownship, t: float, unit_m: float) -> float | None:
    at = own.position(t)
    if at is None:
        return None
    ax, ay = solved.fit.plan.design(np.array([t]))
    lat, lon = solved.problem.frame.to_latlon(ax @ solved.fit.theta, ay @ solved.fit.theta)
    dist, _, _ = geodesy.inverse(at[0], at[1], lat, lon)
    return num(float(dist[0]) / unit_m, 3)


def advice(own: Ownship, bearing: float, t: float) -> dict[str, Any] | None:
    """What ownship should do for the range to be observable: a turn of 60° (30–90°) to the side
    that changes its speed across the line of sight (OSA) most, held for several cuts."""
    v = own.velocity(t)
    if v is None:
        return None
    speed = math.hypot(*v)
    if speed == 0:
        return {
            "text": "ownship is not moving: get under way and make a leg across the line of sight, then turn 30-90°"
        }
    course = math.degrees(math.atan2(*v)) % 360.0
    osa = speed / KNOT_MPS * math.sin(math.radians(course - bearing))
    options = []
    for turn in (-60.0, 60.0):
        new = (course + turn) % 360.0
        options.append((abs(speed / KNOT_MPS * math.sin(math.radians(new - bearing)) - osa), turn, new))
    _, turn, new = max(options)
    new_osa = speed / KNOT_MPS * math.sin(math.radians(new - bearing))
    side = "starboard" if turn > 0 else "port"
    return {
        "turn": side,
        "turn_deg": 60,
        "new_course": num(new, 0),
        "osa_now_kn": num(osa, 1),
        "osa_after_kn": num(new_osa, 1),
        "text": (
            f"turn ownship 30-90° across the line of sight (bearing {bearing:03.0f}°), e.g. 60° to {side} from "
            f"{course:03.0f}° to {new:03.0f}°, which takes its speed across the line of sight from {osa:+.1f} to "
            f"{new_osa:+.1f} kn, and hold the new course for several cuts; then solve again over cuts on both legs"
        ),
    }
