"""``tma-solve``: target motion analysis from a sensor's bearings and ownship's track.

The maximum-likelihood constant-course, constant-speed target over the cuts (or one leg per target
turn, the turns given or found: :mod:`debrief_calc.analysis.tma_fit`), its course, speed, range and
bearing at the reference time each with a standard deviation and the position's ellipse
(:mod:`debrief_calc.analysis.tma_figures`), honest about what bearings cannot tell
(:mod:`debrief_calc.analysis.tma_observe`): without an ownship manoeuvre the range is not
observable, and the answer then gives what is known instead of a number. A solution comes as a
``tma-solution`` track (per-fix courses, speeds and ellipses, and its figures in ``solution``) that
every other tool takes, with an ``addFeatures`` command for it.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    motion_at,
    num,
    result_feature,
    source_ref,
    wrap180,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.analysis.sensor_cuts import (
    CUTS_PARAM,
    OWNSHIP_PARAM,
    SENSOR_PARAM,
    Cuts,
    roles_of,
    select_cuts,
    with_array_offset,
)
from debrief_calc.analysis.tma_figures import Position, confidence_quantile, leg_motion, positions, range_bearing
from debrief_calc.analysis.tma_fit import MIN_CUTS, Settings, Solved, solve, with_turn_numbers
from debrief_calc.analysis.tma_observe import (
    OBSERVABLE_REL,
    WEAK_REL,
    Ownship,
    advice,
    allowed_interval,
    ekelund,
    family,
    information_condition,
    manoeuvres_used,
    ownship_of,
    range_profile,
    ranges_at_speed,
    speed_bound,
)
from debrief_calc.errors import InvalidContext, ValidationFailed
from debrief_calc.geo import geodesy
from debrief_calc.geo.dm import position_dm
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks._feature_parts import properties_of
from debrief_calc.tracks.features import iso, iso_many, parse_times

__all__ = ["SPEC"]

#: fix spacings (s) of a solution track: the first that gives at most _MAX_FIXES fixes
_STEPS: Final = (15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600)
_MAX_FIXES: Final = 40
#: a solution's colours, the first farthest from its host's and its sensor's colours taken
_SOLUTION_STROKES: Final = ("#2ca02c", "#ff7f0e", "#9467bd", "#d62728", "#1f77b4", "#17becf")
#: a leg whose speed SD is over this fraction of its speed is bias-prone (its 2-SD interval ±20 %)
_BIAS_PRONE_REL: Final = 0.1
#: times tried (besides the cuts') for the solution's least uncertain point
_LEAST_GRID: Final = 121
#: seconds either side of the reference time over which its bearing rate is read
_RATE_HALF_S: Final = 30.0


def _rgb(colour: Any) -> tuple[int, int, int] | None:
    text = colour.strip().lstrip("#") if isinstance(colour, str) else ""
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    try:
        return (int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)) if len(text) == 6 else None
    except ValueError:
        return None


def solution_stroke(*others: Any) -> str:
    """The solution's colour: of :data:`_SOLUTION_STROKES`, the one farthest (in RGB) from the
    nearest of ``others`` (its host's and its sensor's strokes), so that a picture tells them apart."""
    taken = [c for c in (_rgb(o) for o in others) if c is not None]
    if not taken:
        return _SOLUTION_STROKES[0]

    def distance(colour: str) -> float:
        mine = _rgb(colour)
        assert mine is not None
        return min(math.dist(mine, c) for c in taken)

    return max(_SOLUTION_STROKES, key=distance)


def _clock(t: float) -> str:
    return iso(t)[11:19]


def _turn_times(values: list[Any] | None, cuts: Cuts) -> tuple[float, ...] | None:
    if values is None:
        return None
    times = parse_times(values, field="target_turns", label="parameter")
    for k, t in enumerate(times.tolist()):
        if not float(cuts.t[0]) < t < float(cuts.t[-1]):
            raise ValidationFailed(
                f"parameter 'target_turns': {values[k]!r} is not inside the cuts' period "
                f"({iso(float(cuts.t[0]))} to {iso(float(cuts.t[-1]))})",
                details={"field": "target_turns", "rule": "inside the period", "index": k},
            )
    return tuple(sorted(float(t) for t in times))


def _usable(cuts: Cuts) -> Cuts:
    keep = np.isfinite(cuts.bearing) | np.isfinite(cuts.ambiguous)
    usable = cuts.take(keep)
    if len(usable) < MIN_CUTS:
        raise InvalidContext(
            f"{cuts.label}: {len(usable)} cut(s) with a bearing among those given; tma-solve needs at least {MIN_CUTS}",
            details={"field": "cuts", "rule": f"at least {MIN_CUTS} bearings", "received_count": len(usable)},
            next_action="give more cuts (a wider window or cuts selection)",
        )
    return usable


def _on_side(cuts: Cuts, side: str) -> Cuts:
    """An ambiguous array's cuts on the ``side`` given: its ``ambiguous`` bearings (where a cut has
    one) or its recorded ones, the other side dropped, so that no side is chosen by the fit."""
    has = np.isfinite(cuts.ambiguous)
    if not has.any():
        raise ValidationFailed(
            f"parameter 'side': sensor {cuts.sensor_id!r} has no ambiguous bearings: leave side out",
            details={"field": "side", "rule": "an ambiguous array"},
        )
    bearing = np.where(has, cuts.ambiguous, cuts.bearing) if side == "ambiguous" else cuts.bearing
    keep = np.isfinite(bearing)
    return replace(cuts, bearing=bearing, ambiguous=np.full(len(cuts), np.nan)).take(keep)


def _fix_times(start: float, end: float, extra: list[float]) -> np.ndarray[Any, np.dtype[np.float64]]:
    step = next((s for s in _STEPS if (end - start) / s <= _MAX_FIXES), _STEPS[-1])
    regular = np.arange(math.ceil(start / step) * step, end, step, dtype=np.float64)
    regular = regular[(regular - start > step / 2) & (end - regular > step / 2)]  # none crowding an end
    times = np.concatenate(([start, end], regular, [t for t in extra if start <= t <= end]))
    return np.unique(times)


def _bearing_rate(solved: Solved, own: Ownship, t: float) -> float | None:
    """The fitted bearing's rate at ``t``, degrees per minute (positive drawing right), over a
    minute about it (within ownship's track)."""
    lo = max(t - _RATE_HALF_S, float(own.track.t[0]))
    hi = min(t + _RATE_HALF_S, float(own.track.t[-1]))
    if hi - lo < 1.0:
        return None
    span = np.array([lo, hi])
    lat, lon = geodesy.interpolate_track(own.track.t, own.track.lat, own.track.lon, span)
    ax, ay = solved.fit.plan.design(span)
    tl, to = solved.problem.frame.to_latlon(ax @ solved.fit.theta, ay @ solved.fit.theta)
    _, az, _ = geodesy.inverse(lat, lon, tl, to)
    return float(wrap180(np.array([az[1] - az[0]]))[0]) / (hi - lo) * 60.0


def _cut_origin(cuts: Cuts, t: float) -> tuple[float, float] | None:
    """Ownship's position at ``t`` from a cut then (its origin), when its track does not reach ``t``."""
    hit = np.flatnonzero(np.abs(cuts.t - t) < 1e-3)
    return (float(cuts.lat[hit[0]]), float(cuts.lon[hit[0]])) if hit.size else None


def _residual_figures(solved: Solved, cuts: Cuts) -> dict[str, Any]:
    fit = solved.fit
    r = fit.residuals[fit.active]
    rms = math.sqrt(float(np.mean(r * r))) if r.size else None
    worst = int(np.flatnonzero(fit.active)[np.argmax(np.abs(r))]) if r.size else None
    out: dict[str, Any] = {
        "rms_deg": num(rms, 3),
        "mean_deg": num(float(np.mean(r)) if r.size else None, 3),
        "max_abs_deg": num(float(np.max(np.abs(r))) if r.size else None, 3),
        "max_abs_cut": int(cuts.number[worst]) if worst is not None else None,
        "cuts_fitted": fit.used,
        "parameters": fit.plan.size,
        "bearing_sd_deg": num(solved.sd if not solved.noise.given else None, 3),
        "bearing_sd_source": solved.noise.source,
    }
    if solved.widened > 1.0:
        out["correlated"] = {
            "variance_factor": num(solved.widened, 2),
            "note": (
                f"the residuals come in runs (correlated in time): the model leaves something out (a turn that is not "
                f"sudden, a bias, the earth model), so the uncertainties are widened × {math.sqrt(solved.widened):.1f}"
            ),
        }
    if solved.turn_shape:
        out["turn_times"] = (
            "each turn's time is known only as well as the bearings fix it within its gap between cuts (and the "
            "model turns at once): the legs' uncertainties include it"
        )
    if solved.noise.given:
        ratio = math.sqrt(fit.chi2 / fit.dof)
        out["scatter_to_stated"] = num(ratio, 3)
        out["uncertainty_scale"] = num(solved.sd, 3)
        out["note"] = (
            f"scatter_to_stated: the residuals' SD (weighted, on the fit's {fit.dof} degrees of freedom, so a little "
            "above rms_deg) over the stated SD; "
            + (
                f"above 1, so the uncertainties are widened × {solved.sd:.2f} (uncertainty_scale)"
                if solved.sd > 1.0
                else "within the stated accuracies, so the stated SD is kept (uncertainty_scale 1: never narrowed)"
            )
        )
    else:
        out["note"] = (
            f"σ of the bearings estimated from the residuals, at least {0.1:g}° (their resolution and the earth "
            "model's difference); give bearing_sd when it is known"
        )
    return out


def _outliers(solved: Solved, cuts: Cuts) -> list[dict[str, Any]]:
    out = []
    for k in np.flatnonzero(solved.outliers).tolist():
        out.append(
            {
                "cut": int(cuts.number[k]),
                "time": iso(float(cuts.t[k])),
                "bearing": num(float(solved.problem.bearing[k]), 2),
                "error_deg": num(float(solved.fit.residuals[k]), 2),
            }
        )
    return out


def _legs_out(solved: Solved, cuts: Cuts, at: Position) -> list[dict[str, Any]]:
    plan = solved.fit.plan
    leg_of = plan.leg_of(cuts.t)
    edges = [float(cuts.t[0]), *plan.turns, float(cuts.t[-1])]
    out: list[dict[str, Any]] = []
    for k in range(plan.legs):
        m = leg_motion(solved, k, at.lat)
        out.append(
            {
                "leg": k + 1,
                "start": iso(edges[k]),
                "end": iso(edges[k + 1]),
                "course": num(m.course, 1),
                "course_sd": num(m.course_sd, 2),
                "speed_kn": num(m.speed_mps / KNOT_MPS, 2),
                "speed_sd_kn": num(m.speed_sd_mps / KNOT_MPS, 2),
                "cuts": int(np.sum((leg_of == k) & solved.fit.active)),
            }
        )
        out[-1].update(_reliability(solved, cuts, leg_of == k, m.speed_mps, m.speed_sd_mps))
    for k in range(1, len(out)):
        a, b = out[k - 1], out[k]
        change, sd = b["speed_kn"] - a["speed_kn"], math.hypot(a["speed_sd_kn"], b["speed_sd_kn"])
        if abs(change) < 2.0 * sd:
            b.setdefault("notes", []).append(
                f"its speed differs from leg {k}'s by {change:+.1f} kn, within 2 SD of the difference ({2 * sd:.1f} kn): "
                "do not report a speed change at the turn as real"
            )
    return out


def _reliability(
    solved: Solved, cuts: Cuts, on_leg: np.ndarray[Any, Any], speed: float, speed_sd: float
) -> dict[str, Any]:
    """Whether a leg's speed is bias-prone: the maximum-likelihood estimate of bearings-only TMA is
    biased (mostly towards more speed and range) where the information is low (Nardone, Lindgren &
    Gong 1984): a speed SD over :data:`_BIAS_PRONE_REL` of the speed, with what makes it low named
    (few cuts, little bearing spread, a receding target)."""
    rel = speed_sd / speed if speed > 0 else math.inf
    if rel < _BIAS_PRONE_REL:
        return {"reliability": "good"}
    use = on_leg & solved.fit.active
    pred, dist, _, _ = solved.problem.predict(solved.fit.theta, solved.fit.plan)
    why = [f"speed SD {rel:.0%} of the speed"]
    if use.sum() >= 2:
        b = pred[use]
        spread = float(np.ptp(b[0] + wrap180(b - b[0])))
        r0, r1 = float(dist[use][0]), float(dist[use][-1])
        if spread < 30.0:
            why.append(f"the bearing moves only {spread:.0f}° over it")
        if r1 > 1.3 * r0:
            why.append(f"the target recedes ({r0 / 1852:.1f} to {r1 / 1852:.1f} nm)")
        why.append(f"{int(use.sum())} cuts")
    return {
        "reliability": "bias-prone",
        "notes": [
            "speed (and range) bias-prone: " + ", ".join(why) + "; the maximum-likelihood estimate of such a leg tends "
            "to read fast; quote the speed with its SD and the caveat, and confirm it with frequencies or more cuts"
        ],
    }


def _turns_out(solved: Solved) -> list[dict[str, Any]]:
    out = []
    for turn in solved.turns:
        item: dict[str, Any] = {"time": iso(turn.time), "given": turn.given}
        if turn.gap is not None:
            item["between_cuts"] = list(turn.gap)
            item["note"] = (
                f"found where one leg no longer fits: χ² fell by {turn.chi2_drop:.0f} with it; the turn lies between "
                f"cuts {turn.gap[0]} and {turn.gap[1]}, its time the best fit within that gap"
            )
        out.append(item)
    return out


def _ellipse_out(p: Position, unit: str, confidence: float) -> dict[str, Any]:
    m = METRES_PER_UNIT[unit]
    d = min(distance_decimals(unit), 4)
    return {
        "orientation_deg": num(p.ellipse.orientation_deg, 1),
        "semi_major": num(p.ellipse.semi_major_m / m, d),
        "semi_minor": num(p.ellipse.semi_minor_m / m, d),
        "unit": unit,
        "confidence": confidence,
    }


def _ambiguity(solved: Solved, cuts: Cuts) -> dict[str, Any] | None:
    side = solved.side
    if side is None:
        return None
    took = np.flatnonzero(side.took_ambiguous)
    return {
        "resolved": side.resolved,
        "note": side.note,
        "cuts_taking_ambiguous_bearing": [int(cuts.number[k]) for k in took[:100]],
        "count_taking_ambiguous_bearing": int(took.size),
        "rms_chosen_deg": num(side.rms_chosen, 3),
        "rms_mirror_deg": num(side.rms_mirror, 3),
    }


class _Answer:
    """The parts of one answer, built in order."""

    def __init__(self, inp: ToolInput, cuts: Cuts, own: Ownship, solved: Solved) -> None:
        self.p = inp.parameters
        self.unit: str = self.p["distance_unit"]
        self.confidence = float(self.p["confidence"])
        self.cuts, self.own, self.solved = cuts, own, solved
        self.t_ref = solved.fit.plan.t_ref
        self.q2 = confidence_quantile(solved, self.confidence, 2)
        (self.at_ref,) = positions(solved, np.array([self.t_ref]), self.q2)
        self.own_at_ref = own.position(self.t_ref) or _cut_origin(cuts, self.t_ref)
        self.stroke = _SOLUTION_STROKES[0]

    def dist(self, metres: float | None) -> float | None:
        return (
            None if metres is None else num(metres / METRES_PER_UNIT[self.unit], min(distance_decimals(self.unit), 4))
        )

    def observability(self) -> dict[str, Any]:
        solved, cuts = self.solved, self.cuts
        used = manoeuvres_used(self.own, cuts.t[solved.fit.active])
        cond = information_condition(solved)
        out: dict[str, Any] = {
            "ownship_legs": [
                {k: leg[k] for k in ("leg", "start", "end", "course", "speed_kn")} for leg in self.own.legs
            ],
            "ownship_manoeuvres_with_cuts_either_side": [
                {k: m.get(k) for k in ("manoeuvre", "start", "end", "turn", "turn_deg", "course_from", "course_to")}
                for m in used
            ],
            "information_condition": float(f"{cond:.3g}") if math.isfinite(cond) else None,
            "information_condition_note": (
                "the condition number of the fit's information matrix: how unequally the bearings fix the target's "
                "position and velocity; in the thousands the range is fixed, in the millions and beyond one "
                "combination (the range) is hardly fixed at all. A diagnostic: range_observability is the verdict"
            ),
        }
        rb = range_bearing(self.at_ref, *self.own_at_ref) if self.own_at_ref is not None else None
        rel = rb["range_sd_m"] / rb["range_m"] if rb and rb["range_m"] > 0 else math.inf
        out["range_sd_ratio"] = num(rel, 3) if used else None  # without a manoeuvre only curvature and noise speak
        fastest = max(leg_motion(solved, k, self.at_ref.lat).speed_mps for k in range(solved.fit.plan.legs)) / KNOT_MPS
        if rb is None:
            verdict = "not observable"
            out["reason"] = f"ownship has no position at the reference time {iso(self.t_ref)}: no range to give"
        elif fastest > float(self.p["max_speed_kn"]):
            verdict = "not observable"
            out["reason"] = (
                "the bearings do not fix the range (ownship's manoeuvre too small or too late for them): the fit is "
                "meaningless without a range (its unconstrained best runs off to a target faster than max_speed_kn, "
                f"{self.p['max_speed_kn']:g} kn)"
            )
        elif not used:
            verdict = "not observable"
            legs = (
                "; ".join(f"{leg['course']:05.1f}° at {leg['speed_kn']:.1f} kn" for leg in self.own.legs)
                or "no steady leg"
            )
            out["reason"] = (
                f"ownship made no manoeuvre with {2} or more cuts either side in the period ({legs}): bearings alone "
                "cannot fix the range until ownship turns (Nardone & Aidala)"
            )
        elif rel <= OBSERVABLE_REL:
            verdict = "observable"
            out["reason"] = (
                f"ownship manoeuvred ({len(used)} turn(s) with cuts either side); range SD {rel:.0%} of the range"
            )
        elif rel <= WEAK_REL:
            verdict = "weak"
            out["reason"] = (
                f"ownship manoeuvred, but the range is poorly fixed: its SD is {rel:.0%} of the range; the interval "
                "the bearings allow is in range_known"
            )
        else:
            verdict = "not observable"
            out["reason"] = (
                f"ownship manoeuvred, but too little or too late for the bearings to fix the range (its SD would be "
                f"{rel:.0%} of it)"
            )
        out["verdict"] = verdict
        self.rb = rb
        return out

    def solution(self) -> dict[str, Any]:
        return self._point(self.at_ref, self.rb)

    def _point(self, at: Position, rb: dict[str, Any] | None) -> dict[str, Any]:
        pos = [round(at.lon, 6), round(at.lat, 6)]
        leg = int(self.solved.fit.plan.leg_of(np.array([at.t]))[0])
        m = leg_motion(self.solved, leg, at.lat)
        out: dict[str, Any] = {
            "time": iso(at.t),
            "position": pos,
            "position_dm": position_dm(pos),
            "course": num(m.course, 1),
            "course_sd": num(m.course_sd, 2),
            "speed_kn": num(m.speed_mps / KNOT_MPS, 2),
            "speed_sd_kn": num(m.speed_sd_mps / KNOT_MPS, 2),
        }
        if rb is not None:
            out.update(
                range=self.dist(rb["range_m"]),
                range_sd=self.dist(rb["range_sd_m"]),
                bearing=num(rb["bearing"], 1),
                bearing_sd=num(rb["bearing_sd"], 2),
                range_bearing_from=self.own.track.name or self.own.track.id,
            )
        out["ellipse"] = _ellipse_out(at, self.unit, self.confidence)
        return out

    def least_uncertain(self) -> dict[str, Any]:
        """The solution at the time within the cuts' period where its position is best known (the
        least ellipse area): where the bearings fix the target most tightly, usually well inside
        the period, not at its end."""
        t0, t1 = float(self.cuts.t[0]), float(self.cuts.t[-1])
        grid = np.unique(np.concatenate((np.linspace(t0, t1, _LEAST_GRID), self.cuts.t)))
        best = min(positions(self.solved, grid, self.q2), key=lambda p: float(np.linalg.det(p.cov)))
        own_at = self.own.position(best.t) or _cut_origin(self.cuts, best.t)
        out = self._point(best, range_bearing(best, *own_at) if own_at is not None else None)
        out["note"] = (
            "the time of the smallest position ellipse within the cuts' period: quote the target's position there "
            "(and its motion) as the best-known point; solution is at reference_time. The tightest ellipse is the "
            "most sensitive to what the model leaves out (a turn's exact time, a gradual turn): take it as a lower "
            "bound of the uncertainty"
        )
        return out

    def known(self, verdict: str) -> dict[str, Any]:
        """What the bearings tell when the range is not (or weakly) observable."""
        out: dict[str, Any] = {}
        if self.own_at_ref is None:
            return {"note": f"ownship has no position at {iso(self.t_ref)}: no range family"}
        velocity = self.own.velocity(self.t_ref) or (0.0, 0.0)
        frame = self.solved.problem.frame
        scale = float(frame.scale(self.own_at_ref[0]))
        v_frame = (velocity[0] * scale, velocity[1] * scale)
        rb = self.rb or range_bearing(self.at_ref, *self.own_at_ref)
        out["bearing"] = num(rb["bearing"], 1)
        out["bearing_sd"] = num(rb["bearing_sd"], 2)
        rate = _bearing_rate(self.solved, self.own, self.t_ref)
        out["bearing_rate"] = num(rate, 3)
        out["bearing_rate_unit"] = "deg/min, + drawing right"
        side = self.solved.side
        if side is not None and not side.resolved and (vel := self.own.velocity(self.t_ref)) is not None:
            heading = math.degrees(math.atan2(vel[0], vel[1])) % 360.0
            out["side"] = {
                "settled": False,
                "bearing": out["bearing"],
                "bearing_rate": out["bearing_rate"],
                "mirror_bearing": num((2.0 * heading - rb["bearing"]) % 360.0, 1),
                "mirror_bearing_rate": num(-rate, 3) if rate is not None else None,
                "ownship_heading": num(heading, 1),
                "note": (
                    "an ambiguous array without an ownship turn: either bearing fits, the mirror taken about "
                    "ownship's heading; the family, range bound and advice are built on the first. What settles "
                    "it: an ownship turn, or another sensor (bearing-residuals of this array against that sensor's "
                    "solution names the side; then tma-solve with parameters.side)"
                ),
            }
        profile = range_profile(self.solved, self.own_at_ref, v_frame)
        s2 = self.solved.sd**2
        from scipy.stats import chi2, f

        q1 = (
            float(f.ppf(self.confidence, 1, self.solved.fit.dof))
            if self.solved.sd_estimated
            else float(chi2.ppf(self.confidence, 1))
        )
        lo, hi = allowed_interval(profile, q1 * s2)
        out["range_interval"] = {
            "low": self.dist(lo),
            "high": self.dist(hi),
            "confidence": self.confidence,
            "note": (
                "the ranges at which the bearings fit as well as at the best (within the confidence level); null "
                f"at an end means any range beyond (the profile runs {self.dist(profile.ranges[0])} to "
                f"{self.dist(profile.ranges[-1])} {self.unit})"
            ),
        }
        max_speed = float(self.p["max_speed_kn"])
        bound = speed_bound(profile, max_speed * KNOT_MPS)
        out["speed_bound"] = {
            "max_speed_kn": max_speed,
            "range_low": self.dist(bound[0]) if bound and bound[0] > profile.ranges[0] else None,
            "range_high": self.dist(bound[1]) if bound else None,
            "note": (
                f"a target no faster than {max_speed:g} kn (max_speed_kn) lies at these ranges of the family (low "
                "null: any shorter range too)"
                if bound
                else f"no range of the family has the target slower than {max_speed:g} kn"
            ),
        }
        metres = METRES_PER_UNIT[self.unit]
        asked = tuple(float(r) * metres for r in self.p["ranges"] or ())
        fam = family(self.solved, self.own_at_ref, v_frame, *((asked,) if asked else ()))
        out["family"] = self._rows(fam.ranges, fam.fits, scale)
        if self.p["speed_kn"] is not None:
            out["at_speed"] = self._at_speed(profile, v_frame, float(self.p["speed_kn"]))
        out["family_note"] = (
            f"every row fits the bearings (about) as well: the target at that range from ownship at {iso(self.t_ref)}, "
            "on that course and speed; only an ownship manoeuvre tells them apart"
            if verdict == "not observable"
            else "the target at each range held, on the course and speed that fit best there"
        )
        return out

    def _rows(self, ranges: list[float], fits: list[Any], scale: float) -> list[dict[str, Any]]:
        """Each fit with the range held: the range, the course and speed at the reference time, the RMS."""
        rows = []
        for r, fit in zip(ranges, fits, strict=True):
            leg = int(fit.plan.leg_of(np.array([self.t_ref]))[0])
            vx, vy = float(fit.theta[2 + 2 * leg]), float(fit.theta[3 + 2 * leg])
            rows.append(
                {
                    "range": self.dist(r),
                    "course": num(math.degrees(math.atan2(vx, vy)) % 360.0, 1),
                    "speed_kn": num(math.hypot(vx, vy) / scale / KNOT_MPS, 1),
                    "rms_deg": num(math.sqrt(float(np.mean(fit.residuals[fit.active] ** 2))), 3),
                }
            )
        return rows

    def _at_speed(self, profile: Any, v_frame: tuple[float, float], knots: float) -> dict[str, Any]:
        """Where the target is, on the family, if it goes at ``knots``: each range at which the fit
        has it at that speed, with its course."""
        assert self.own_at_ref is not None
        found = ranges_at_speed(profile, knots * KNOT_MPS)
        scale = float(self.solved.problem.frame.scale(self.own_at_ref[0]))
        fits = family(self.solved, self.own_at_ref, v_frame, tuple(found)).fits if found else []
        rows = self._rows(found, fits, scale)
        return {
            "speed_kn": knots,
            "rows": rows,
            "note": (
                f"the member(s) of the family with the target at {knots:g} kn (speed_kn): an assumption, not a "
                "measurement"
                if rows
                else f"no range of the family ({self.dist(profile.ranges[0])}–{self.dist(profile.ranges[-1])} "
                f"{self.unit}) has the target at {knots:g} kn"
            ),
        }

    def ekelund(self) -> list[dict[str, Any]]:
        solved = self.solved
        return ekelund(self.cuts, solved.fit.active, self.own, solved, METRES_PER_UNIT[self.unit])


def _rounded(value: Any, unit: str) -> str:
    """A distance as the summary quotes it: to about ten metres (2 decimals in nm, km or kyd; whole
    yards or metres), never more digits than the data hold."""
    if value is None:
        return "?"
    decimals = max(0, round(math.log10(METRES_PER_UNIT[unit] / 10.0)))
    return f"{float(value):.{decimals}f}"


def _summary(props: dict[str, Any], answer: _Answer) -> str:
    verdict = props["range_observability"]
    legs = props.get("target_legs") or []
    unit = props["distance_unit"]
    if verdict == "not observable":
        known = props.get("range_known") or {}
        bound = known.get("speed_bound") or {}
        text = f"Range not observable: {props['observability']['reason']}. Known at {_clock(answer.t_ref)}: "
        side = known.get("side")
        if side:
            text += (
                f"the array's side is NOT settled (no ownship turn): bearing {known.get('bearing')}° ± "
                f"{known.get('bearing_sd')}° (rate {known.get('bearing_rate')}°/min) or its mirror "
                f"{side['mirror_bearing']}° (rate {side['mirror_bearing_rate']}°/min) about ownship's heading "
                f"{side['ownship_heading']:05.1f}°; the figures below take the first. To settle the side: an "
                "ownship turn, or another sensor (bearing-residuals of this array against its solution, then "
                "tma-solve with parameters.side)"
            )
        else:
            text += f"bearing {known.get('bearing')}° ± {known.get('bearing_sd')}°, bearing rate {known.get('bearing_rate')}°/min"
        if bound.get("range_high") is not None:
            low = f"{_rounded(bound['range_low'], unit)}–" if bound.get("range_low") is not None else "within "
            text += (
                f"; a target no faster than {bound['max_speed_kn']:g} kn lies {low}"
                f"{_rounded(bound['range_high'], unit)} {unit} off"
            )
        at_speed = known.get("at_speed")
        if at_speed and at_speed["rows"]:
            text += f"; at {at_speed['speed_kn']:g} kn it would be " + " or ".join(
                f"{_rounded(r['range'], unit)} {unit} off on {r['course']:05.1f}°" for r in at_speed["rows"]
            )
        adv = props.get("advice")
        if adv:
            text += f". To fix it: {adv['text']}"
        return text + "."
    sol = props["solution"]
    parts = []
    for k, leg in enumerate(legs):
        text = f"{leg['course']:05.1f}° ± {leg['course_sd']}° at {leg['speed_kn']} ± {leg['speed_sd_kn']} kn"
        if k < len(legs) - 1:
            text += f" until {_clock(answer.solved.fit.plan.turns[k])}"
        parts.append(text)
    text = ("Target on " if len(legs) == 1 else "Target legs: ") + "; then ".join(parts)
    ell = sol["ellipse"]
    text += (
        f". At {_clock(answer.t_ref)}: {sol.get('position_dm')}"
        + (
            f", bearing {sol['bearing']:05.1f}° range {_rounded(sol['range'], unit)} ± {_rounded(sol['range_sd'], unit)} "
            f"{unit} from {sol['range_bearing_from']}"
            if "range" in sol
            else ""
        )
        + f"; {ell['confidence']:.0%} ellipse {_rounded(ell['semi_major'], unit)} × {_rounded(ell['semi_minor'], unit)} "
        f"{unit} (semi-axes) on {ell['orientation_deg']:05.1f}°"
    )
    best = props.get("solution_least_uncertain")
    if best and best["time"] != sol["time"]:
        e = best["ellipse"]
        text += (
            f". Best known at {best['time'][11:19]}: {best['position_dm']}"
            + (
                f", bearing {best['bearing']:05.1f}° range {_rounded(best['range'], unit)} ± "
                f"{_rounded(best['range_sd'], unit)} {unit}"
                if "range" in best
                else ""
            )
            + f"; ellipse {_rounded(e['semi_major'], unit)} × {_rounded(e['semi_minor'], unit)} {unit}"
        )
    text += f". Residuals {props['residuals']['rms_deg']}° RMS over {props['residuals']['cuts_fitted']} cuts"
    if props.get("outliers"):
        text += f"; {len(props['outliers'])} outlier(s) left out: cut(s) " + ", ".join(
            str(o["cut"]) for o in props["outliers"][:10]
        )
    if verdict == "weak":
        text += ". Range only weakly observable: see range_known.range_interval"
    return text + "."


def _track(answer: _Answer, props: dict[str, Any], fid: str) -> dict[str, Any]:
    solved, cuts = answer.solved, answer.cuts
    t0, t1 = float(cuts.t[0]), float(cuts.t[-1])
    times = _fix_times(min(t0, answer.t_ref), max(t1, answer.t_ref), [*solved.fit.plan.turns, answer.t_ref])
    fixes = positions(solved, times, answer.q2)
    leg_of = solved.fit.plan.leg_of(times)
    motions = [leg_motion(solved, k, answer.at_ref.lat) for k in range(solved.fit.plan.legs)]
    coords = [[round(p.lon, 7), round(p.lat, 7)] for p in fixes]
    name = f"TMA {cuts.name} {_clock(t0)[:5]}–{_clock(t1)[:5]}"
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {
            "kind": "track",
            "dataType": "track",
            "trackType": "tma-solution",
            "name": name,
            "host": answer.own.track.id,
            "hostName": answer.own.track.name,
            "sensor": cuts.sensor_id,
            "timestamps": iso_many(times),
            "courses": [num(motions[k].course, 1) for k in leg_of.tolist()],
            "speeds": [num(motions[k].speed_mps / KNOT_MPS, 2) for k in leg_of.tolist()],
            "ellipses": [p.ellipse.as_yards() for p in fixes],
            "ellipse_confidence": answer.confidence,
            "stroke": answer.stroke,
            "visible": True,
            "solution": {
                k: props[k]
                for k in (
                    "reference_time",
                    "range_observability",
                    "solution",
                    "target_legs",
                    "turns",
                    "residuals",
                    "summary",
                )
                if k in props
            },
        },
    }


def handle(inp: ToolInput) -> ToolOutput:
    p = inp.parameters
    roles = roles_of(inp.features, p["sensor"], p["ownship"])
    cuts = _usable(select_cuts(roles.cuts, p["cuts"]))
    if p["side"] is not None:
        cuts = _on_side(cuts, p["side"])
    if p["ranges"] is not None and (
        not p["ranges"]
        or not all(isinstance(r, (int, float)) and not isinstance(r, bool) and r > 0 for r in p["ranges"])
    ):
        raise ValidationFailed(
            f"parameter 'ranges': {p['ranges']!r} must be a list of positive distances in distance_unit",
            details={"field": "ranges", "rule": "positive numbers"},
        )
    if roles.ownship is None or roles.ownship_feature is None:
        host = p["ownship"] or roles.cuts.host
        tracks = [t.id for t, _, _ in roles.others]
        raise InvalidContext(
            f"tma-solve needs the track that carried {roles.cuts.label}"
            + (f", {host!r}," if host else "")
            + " beside it: its legs decide whether the range is observable"
            + (
                f"; the tracks given are {', '.join(map(repr, tracks))} (name the host with parameters.ownship)"
                if tracks
                else ""
            ),
            details={"field": "features", "rule": "sensor and its host track", "host": host, "tracks": tracks},
            next_action="add the host track to features (or plot.feature_ids), or set parameters.ownship",
        )
    warnings = []
    if p["array_offset_m"] is not None:
        cuts, moved = with_array_offset(
            cuts,
            roles.sensor,
            roles.ownship,
            float(p["array_offset_m"]),
            "worm-in-hole" if p["array_offset_m"] < 0 else None,
        )
        warnings.append(
            f"array_offset_m {p['array_offset_m']:g}: {moved} cut origin(s) the lines did not give placed that far "
            + ("astern along ownship's own path" if p["array_offset_m"] < 0 else "ahead of ownship")
            + " (origins the lines gave are kept)"
        )
    if roles.others:
        warnings.append(
            "left out: track(s) "
            + ", ".join(repr(t.id) for t, _, _ in roles.others)
            + " (tma-solve reads the sensor and its host; compare a track with the cuts by bearing-residuals)"
        )
    t_ref = (
        float(parse_times([p["reference_time"]], field="reference_time", label="parameter")[0])
        if p["reference_time"]
        else float(cuts.t[-1])
    )
    settings = Settings(
        t_ref=t_ref,
        turns=_turn_times(p["target_turns"], cuts),
        max_turns=int(p["max_turns"]),
        outlier_sigma=float(p["outlier_sigma"]),
        bearing_sd=p["bearing_sd"],
        max_speed_kn=float(p["max_speed_kn"]),
    )
    headings = motion_at(Legs(roles.ownship), cuts.t)[1] if np.isfinite(cuts.ambiguous).any() else None
    solved = with_turn_numbers(solve(cuts, settings, headings), cuts)
    own = ownship_of(roles.ownship_feature, float(cuts.t[0]), float(cuts.t[-1]))
    answer = _Answer(inp, cuts, own, solved)
    answer.stroke = solution_stroke(
        properties_of(roles.ownship_feature).get("stroke"), properties_of(roles.sensor).get("stroke")
    )
    observe = answer.observability()
    verdict = observe["verdict"]
    props: dict[str, Any] = {
        "sensor_id": cuts.sensor_id,
        "sensor_name": cuts.name,
        "ownship_id": own.track.id,
        "ownship_name": own.track.name,
        "period": {"start": iso(float(cuts.t[0])), "end": iso(float(cuts.t[-1]))},
        "cut_count": len(cuts),
        "cuts": [int(cuts.number[0]), int(cuts.number[-1])],
        "reference_time": iso(t_ref),
        "distance_unit": answer.unit,
        "range_observability": verdict,
        "observability": observe,
    }
    if p["side"] is not None:
        props["side_given"] = {
            "side": p["side"],
            "note": f"solved on the array's {p['side']} bearings alone, as parameters.side says (settled elsewhere)",
        }
    if not float(cuts.t[0]) <= t_ref <= float(cuts.t[-1]):
        warnings.append(f"reference_time {iso(t_ref)} is outside the cuts' period: the solution there is extrapolated")
    if verdict != "not observable":
        props["solution"] = answer.solution()
        props["solution_least_uncertain"] = answer.least_uncertain()
        props["target_legs"] = _legs_out(solved, cuts, answer.at_ref)
    props["turns"] = _turns_out(solved)
    props["residuals"] = _residual_figures(solved, cuts)
    props["outliers"] = _outliers(solved, cuts)
    if (amb := _ambiguity(solved, cuts)) is not None:
        props["ambiguity"] = amb
    props["ekelund"] = answer.ekelund()
    if verdict != "observable":
        props["range_known"] = answer.known(verdict)
    if (
        verdict == "not observable"
        and (adv := advice(own, answer.rb["bearing"] if answer.rb else 0.0, t_ref)) is not None
    ):
        props["advice"] = adv
    props["summary"] = _summary(props, answer)
    if props["outliers"]:
        warnings.append(
            f"{len(props['outliers'])} outlier cut(s) left out of the solution: "
            + ", ".join(f"cut {o['cut']} ({o['error_deg']:+.1f}°)" for o in props["outliers"][:20])
        )
    if verdict == "not observable":
        warnings.append("range not observable: no solution track (see range_known and advice)")
    sources = [source_ref(roles.sensor, roles.sensor_index), source_ref(roles.ownship_feature, roles.ownship_index)]
    name = f"TMA {cuts.name} from {own.track.name or own.track.id}"
    if verdict == "not observable":
        return ToolOutput(features=[result_feature(name, None, props)], feature_sources=[sources], warnings=warnings)
    digest = hashlib.sha256(repr((cuts.sensor_id, cuts.t.tolist(), sorted(p.items(), key=str))).encode()).hexdigest()
    track = _track(answer, props, f"tma-{cuts.sensor_id}-{digest[:8]}")
    props["solution_track_id"] = track["id"]
    result = result_feature(name, {"type": "Point", "coordinates": props["solution"]["position"]}, props)
    command = {"command": "addFeatures", "payload": {"features": [track]}}
    return ToolOutput(
        features=[result, track], feature_sources=[sources, sources], commands=[command], warnings=warnings
    )


SPEC = ToolSpec(
    name="tma-solve",
    description=(
        "Target motion analysis from a sensor's bearing cuts and its host track (ownship): the maximum-likelihood "
        "constant-course, constant-speed target, one leg per target turn (target_turns, or found). summary; "
        "range_observability observable|weak|not observable; solution at reference_time {course, speed_kn, range, "
        "bearing, each _sd; position_dm; ellipse}; target_legs, turns, residuals, outliers (named, left out), "
        "ambiguity, ekelund. Not observable (no ownship manoeuvre): no solution, range_known (bearing, rate, family, "
        "range bound) and advice. A solution is also a tma-solution track with an addFeatures command."
    ),
    version="1.0.0",
    input_kinds=("sensor", "track"),
    output_kind="analysis-result",
    also_outputs=("track",),
    context_type="multi",
    also_accepts=("single",),  # a sensor alone: the handler says which track to add
    parameters=(
        CUTS_PARAM,
        Parameter(
            "target_turns",
            "array",
            "Times (ISO-8601) the target turned: one leg between each; default: found (max_turns).",
        ),
        Parameter(
            "max_turns",
            "integer",
            "Most target turns looked for when target_turns is not given; 0: one straight leg.",
            default=2,
            minimum=0,
            maximum=5,
        ),
        Parameter(
            "reference_time",
            "string",
            "Time (ISO-8601) of the answer's position, range and bearing; default the last cut.",
        ),
        Parameter(
            "bearing_sd",
            "number",
            "Standard deviation of the bearings (degrees) when known; default the cuts' accuracies, else estimated from the residuals.",
            unit="deg",
            minimum=0,
            exclusive_minimum=True,
            maximum=30,
        ),
        Parameter(
            "outlier_sigma",
            "number",
            "A cut more than this many robust SDs from the solution is an outlier (named, left out); 0: none.",
            default=4.0,
            minimum=0,
            maximum=100,
        ),
        Parameter(
            "confidence",
            "number",
            "Confidence of the position ellipses and of the range interval.",
            default=0.95,
            minimum=0.5,
            maximum=0.999,
        ),
        Parameter(
            "max_speed_kn",
            "number",
            "Fastest the target could go: bounds the range when it is not observable, and the legs of a turn found.",
            default=30.0,
            unit="kn",
            minimum=0,
            exclusive_minimum=True,
        ),
        Parameter(
            "array_offset_m",
            "number",
            "Array offset (m; ahead +, astern - along ownship's path): moves the cuts' origins the lines left NULL.",
            unit="m",
        ),
        Parameter(
            "side",
            "string",
            "An ambiguous array's side another sensor settled (bearing-residuals' residual_side): solve on it alone.",
            choices=("bearing", "ambiguous"),
        ),
        Parameter("ranges", "array", "Not observable: the family's ranges (distance_unit); default 1-20 nm."),
        Parameter(
            "speed_kn",
            "number",
            "Not observable: where the family has the target at this speed (range_known.at_speed).",
            unit="kn",
            minimum=0,
            exclusive_minimum=True,
        ),
        SENSOR_PARAM,
        OWNSHIP_PARAM,
        DISTANCE_UNIT_PARAM,
    ),
    handler=handle,
)
