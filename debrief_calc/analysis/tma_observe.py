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
  (``V sin(C − B)``), Ḃ the bearing rate just before and just after the manoeuvre (a straight
  line through the cuts within :data:`EKELUND_SPAN_S` of it on each side, or a parabola when they
  curve significantly, read at the manoeuvre's middle). In knots and degrees
  per minute that is ``1768.6 · ΔOSA / ΔḂ`` metres (legacy Debrief writes 1770.28). No range when
  the rate's change is within its noise or has the wrong sign; a target turn found among the cuts
  used, or bearings that curve on a side (a rate not steady), are named as what spoils it;
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
from debrief_calc.tracks.features import TrackData, iso, parse_iso, track_data

__all__ = [
    "CUTS_EACH_SIDE",
    "OBSERVABLE_REL",
    "WEAK_REL",
    "Ownship",
    "advice",
    "ekelund",
    "ownship_of",
    "range_profile",
    "ranges_at_speed",
]

#: fitted cuts needed on each side of an ownship manoeuvre for it to count
CUTS_EACH_SIDE: Final = 2
#: range standard deviation / range up to which the range is observable
OBSERVABLE_REL: Final = 0.2
#: … and up to which it is weakly observable (beyond: not observable)
WEAK_REL: Final = 0.5
#: seconds of cuts either side of an ownship manoeuvre whose bearings give the rate there (a local
#: fit, not the whole leg: the rate of a passing target changes along a leg)
EKELUND_SPAN_S: Final = 480.0
#: fewest cuts on each side of a manoeuvre for an Ekelund range (the nearest on the leg when fewer
#: lie within the span)
EKELUND_MIN_CUTS: Final = 3
#: how far (a fraction of the solution's range) the check on the solution's own bearings may miss
#: that range before the method's assumptions are said to fail
_EKELUND_SELF_TOL: Final = 0.25
#: cuts of a side from which its bearings are tested for curvature
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


def ranges_at_speed(profile: Profile, speed_mps: float) -> list[float]:
    """The ranges (m) of the profile at which its fit has the target at ``speed_mps`` (each crossing,
    interpolated in log range); none when the profile never reaches that speed."""
    speed = np.asarray(profile.speed)
    r = np.log(np.asarray(profile.ranges))
    out = []
    for a in range(speed.size - 1):
        lo, hi = sorted((speed[a], speed[a + 1]))
        if lo <= speed_mps <= hi and hi > lo:
            f = (speed_mps - speed[a]) / (speed[a + 1] - speed[a])
            out.append(float(math.exp(r[a] + f * (r[a + 1] - r[a]))))
    return out


def family(
    solved: Solved,
    own_at_ref: tuple[float, float],
    own_velocity: tuple[float, float],
    ranges: tuple[float, ...] = _FAMILY_M,
) -> Profile:
    """The solutions at a few round ranges (1–20 nm, or ``ranges`` in metres): each a course and
    speed that fits."""
    return range_profile(solved, own_at_ref, own_velocity, ranges)


def _rate(t: FloatArray, b: FloatArray, at: float) -> tuple[float, float, float, float]:
    """The bearing rate at ``at`` (the manoeuvre's middle, so that both sides are read at one
    instant) from the cuts' bearings (unwrapped, degrees): a straight line through them, or a
    parabola when its curvature is beyond 3 standard errors (the rate drifts over them, as near a
    close pass). The bearing there, the rate (°/min), its standard error, and the rate's drift over
    the cuts (°/min; 0 for a straight line)."""
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
            continue
        drift = abs(2.0 * float(coef[2]) * float(np.ptp(x))) if degree == 2 else 0.0
        return float(coef[0]), float(coef[1]), math.sqrt(max(cov[1, 1], 0.0)) if dof > 0 else math.nan, drift
    raise AssertionError("unreachable: the straight line always answers")


def _across(
    t: FloatArray,
    b: FloatArray,
    i1: np.ndarray[Any, Any],
    i2: np.ndarray[Any, Any],
    leg1: Any,
    leg2: Any,
    at: float,
) -> tuple[tuple[float, float, float], tuple[float, float, float], float, float, float]:
    """The bearing rate (°/min), its SD and drift on each side, the mean bearing and ownship's
    speed across the line of sight (kn) on each leg."""
    b1, rate1, se1, curved1 = _rate(t[i1], b[i1], at)
    b2, rate2, se2, curved2 = _rate(t[i2], b[i2], at)
    r1, r2 = math.radians(b1), math.radians(b2)
    bearing = math.degrees(math.atan2(math.sin(r1) + math.sin(r2), math.cos(r1) + math.cos(r2))) % 360.0
    osa1 = leg1["speed_kn"] * math.sin(math.radians(leg1["course"] - bearing))
    osa2 = leg2["speed_kn"] * math.sin(math.radians(leg2["course"] - bearing))
    return (rate1, se1, curved1), (rate2, se2, curved2), bearing, osa1, osa2


def _self_check(
    solved: Solved,
    cuts: Cuts,
    used: np.ndarray[Any, Any],
    i1: np.ndarray[Any, Any],
    i2: np.ndarray[Any, Any],
    leg1: Any,
    leg2: Any,
    t_mid: float,
    own: Ownship,
) -> list[str]:
    """The check run on the solution's own noise-free bearings at the same cuts: when it misses the
    solution's range by more than :data:`_EKELUND_SELF_TOL`, the method's assumptions fail at this
    geometry (the bearing rate drifts within the span, near the closest approach, or the target
    turns), whatever the noise."""
    pred = solved.problem.predict(solved.fit.theta, solved.fit.plan)[0][used]
    t = cuts.t[used]
    (rate1, _, _), (rate2, _, _), _, osa1, osa2 = _across(t, pred, i1, i2, leg1, leg2, t_mid)
    at = own.position(t_mid)
    if at is None or rate1 == rate2:
        return []
    ax, ay = solved.fit.plan.design(np.array([t_mid]))
    lat, lon = solved.problem.frame.to_latlon(ax @ solved.fit.theta, ay @ solved.fit.theta)
    truth = float(geodesy.inverse(at[0], at[1], lat, lon)[0][0])
    model = EKELUND_M * (osa2 - osa1) / (rate1 - rate2)
    if truth > 0 and abs(model - truth) <= _EKELUND_SELF_TOL * truth:
        return []
    said = f"{model / 1852.0:.1f} nm" if model > 0 else "a negative range"
    return [
        f"on the solution's own noise-free bearings the check gives {said} against its {truth / 1852.0:.1f} nm: the "
        "bearing rate is not steady across this turn (it drifts within the cuts used: a near pass, or a target turn)"
    ]


def _side_cuts(t: FloatArray, on_leg: np.ndarray[Any, Any], edge: float, before: bool) -> np.ndarray[Any, Any]:
    """Positions of the cuts on a leg within :data:`EKELUND_SPAN_S` of the manoeuvre's ``edge``
    (before or after it), or the :data:`EKELUND_MIN_CUTS` nearest it on the leg when fewer lie there."""
    near = on_leg & ((t >= edge - EKELUND_SPAN_S) if before else (t <= edge + EKELUND_SPAN_S))
    idx = np.flatnonzero(near)
    if idx.size >= EKELUND_MIN_CUTS:
        return idx
    idx = np.flatnonzero(on_leg)
    return idx[-EKELUND_MIN_CUTS:] if before else idx[:EKELUND_MIN_CUTS]


def ekelund(
    cuts: Cuts, used: np.ndarray[Any, Any], own: Ownship, solved: Solved | None, unit_m: float
) -> list[dict[str, Any]]:
    """The Ekelund range across each ownship manoeuvre between two legs with cuts on both, from
    the bearing rates just before and just after it, with what spoils it named."""
    out = []
    t, b, numbers = cuts.t[used], cuts.bearing[used], cuts.number[used]
    target_turns = list(solved.fit.plan.turns) if solved is not None else []
    for m in own.manoeuvres:
        pair = m.get("between_legs")
        if not pair:
            continue
        leg1, leg2 = own.legs[pair[0] - 1], own.legs[pair[1] - 1]
        # the legs' own ends, at fixes: ownship held its course up to the first fix of the turn and
        # from its last (the manoeuvre's start and end are the middles of the segments either side,
        # half a fix interval inside the legs, and would leave out cuts taken on a steady leg)
        m_start, m_end = parse_iso(leg1["end"]), parse_iso(leg2["start"])
        on1 = (t >= parse_iso(leg1["start"])) & (t <= m_start)
        on2 = (t >= m_end) & (t <= parse_iso(leg2["end"]))
        entry: dict[str, Any] = {
            "manoeuvre": m["manoeuvre"],
            "start": m["start"],
            "end": m["end"],
            "legs": pair,
            "cuts_before": int(on1.sum()),
            "cuts_after": int(on2.sum()),
        }
        if on1.sum() < EKELUND_MIN_CUTS or on2.sum() < EKELUND_MIN_CUTS:
            entry["range"] = None
            entry["note"] = f"fewer than {EKELUND_MIN_CUTS} cuts on a leg either side: no bearing rate to compare"
            out.append(entry)
            continue
        i1, i2 = _side_cuts(t, on1, m_start, True), _side_cuts(t, on2, m_end, False)
        (rate1, se1, curved1), (rate2, se2, curved2), bearing, osa1, osa2 = _across(
            t, b, i1, i2, leg1, leg2, (m_start + m_end) / 2
        )
        first, last = float(t[i1[0]]), float(t[i2[-1]])
        entry.update(
            cuts_used_before=[int(numbers[i1[0]]), int(numbers[i1[-1]])],
            cuts_used_after=[int(numbers[i2[0]]), int(numbers[i2[-1]])],
            bearing=num(bearing, 1),
            bearing_rate_before=num(rate1, 3),
            bearing_rate_before_sd=num(se1, 3),
            bearing_rate_after=num(rate2, 3),
            bearing_rate_after_sd=num(se2, 3),
            osa_before_kn=num(osa1, 2),
            osa_after_kn=num(osa2, 2),
        )
        spoilers = [
            f"the target turn found at {iso(tau)[11:19]} lies within the cuts used ({iso(first)[11:16]}–"
            f"{iso(last)[11:16]}): the check assumes the target held its course and speed"
            for tau in target_turns
            if first <= tau <= last
        ]
        for side, drift in (("before", curved1), ("after", curved2)):
            if drift > abs(rate1 - rate2):
                spoilers.append(
                    f"the bearing rate is not steady {side} the turn (it drifts {drift:.2f}°/min over the cuts used, more than "
                    f"its change of {abs(rate1 - rate2):.2f}°/min across the turn): the rate read there is extrapolated"
                )
        d_rate = rate1 - rate2
        se = math.hypot(se1, se2)
        metres = EKELUND_M * (osa2 - osa1) / d_rate if d_rate != 0 else math.inf
        if solved is not None:
            spoilers += _self_check(solved, cuts, used, i1, i2, leg1, leg2, (m_start + m_end) / 2, own)
        if math.isfinite(se) and abs(d_rate) < 2.0 * se:
            entry["range"] = None
            entry["why_no_range"] = (
                f"the bearing rate changed by {-d_rate:+.2f} ± {se:.2f}°/min across the turn, within its noise (ownship's "
                f"speed across the line of sight changed by {osa2 - osa1:+.1f} kn): too little for a range from "
                f"{i1.size} and {i2.size} cuts"
            )
        elif not math.isfinite(metres) or metres <= 0:
            entry["range"] = None
            entry["why_no_range"] = (
                "the bearing rate changed the other way from ownship's speed across the line of sight (a negative "
                "range): the rate drifts across the turn (a near pass: see spoilt_by), or the target manoeuvred there"
            )
        else:
            entry["range"] = num(metres / unit_m, 3)
            if math.isfinite(se):
                entry["range_sd"] = num(metres * se / abs(d_rate) / unit_m, 3)
            if solved is not None:
                entry["solution_range"] = _solution_range(solved, own, (m_start + m_end) / 2, unit_m)
        entry["spoilt_by"] = spoilers
        entry["usable"] = entry["range"] is not None and not spoilers
        entry["note"] = (
            "a quick check, not a solution: R = 1768.6·ΔOSA/ΔḂ m from the bearing rates (a line, or a parabola where they curve) of the cuts just before "
            "and just after ownship's turn; it assumes a steady target and a steady bearing rate on each side, and "
            "its SD counts the rates' scatter only" + ("; discount it: " + "; ".join(spoilers) if spoilers else "")
        )
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
