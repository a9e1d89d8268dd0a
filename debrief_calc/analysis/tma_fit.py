"""How ``tma-solve`` finds its target: starts, robust fits, outliers, the target's turns and the
side of an ambiguous array, on the model of :mod:`debrief_calc.analysis.tma_model`.

1. **Starts**: the pseudolinear estimate (Lindgren & Gong) and a grid of ranges along the bearing
   nearest the reference time (velocities from the pseudolinear equations with the position held);
   each is fitted by least squares and the least cost wins, so that no start's range decides the
   answer; a robust fit (``soft_l1``, scaled to the residuals' robust spread) starts from it.
2. **Target turns**: given, or found one at a time: each gap between cuts that leaves
   :data:`MIN_LEG_CUTS` cuts on every leg is tried as a turn (at most :data:`MAX_CANDIDATES` spread
   over them, then neighbours of the best at halving spacings), the best gap's turn time refined
   within it; the turn is kept only when it lowers χ² by more than chance would (three more
   parameters, an F test at :data:`TURN_P`, strict for the many gaps tried), with a lone cut far
   off (an outlier) left out of the search and every residual counted at most as an outlier is (so
   that no turn is found to absorb one), and every leg slower than ``max_speed_kn``.
3. **Outliers**: a cut whose residual is more than ``outlier_sigma`` robust standard deviations
   (1.4826 × the median absolute residual, never under the noise floor) from the solution is an
   outlier, left out of the final fit and named; the test is repeated on the final fit (a cut left
   out that now fits comes back) until it settles.
4. **The final fit**: plain least squares over the cuts kept (the maximum-likelihood solution for
   Gaussian bearing errors), its covariance ``s² (JᵀJ)⁻¹`` from the Jacobian at the solution, with
   ``s`` the bearings' standard deviation: the cuts' own accuracies (or ``bearing_sd``) when given,
   widened when the residuals scatter more; else estimated from the residuals, never under
   :data:`SD_FLOOR_DEG`; and widened by ``(1 + ρ) / (1 − ρ)`` when the residuals in time order are
   significantly correlated (lag-one ρ over 2/√n: they come in runs, so the model leaves something
   out and each cut tells less than an independent one would); and, for a target that turns, what
   the turn times' own uncertainty adds: a profile over each turn's time across the gaps near it,
   the legs refitted at each time and weighed by its likelihood (:func:`_turn_time_spread`).
5. **Ambiguous arrays**: from several starts (each cut's first bearing, its second, its starboard
   one, its port one) each cut takes whichever of its two bearings the solution predicts until that
   settles; the best assignment is solved, and its mirror (every cut's other bearing) too. The
   side is resolved when the mirror fits significantly worse (an F test at 0.1 %); otherwise the
   answer says it is not, and why (ownship did not turn).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import robust_sd, wrap180
from debrief_calc.analysis.sensor_cuts import Cuts
from debrief_calc.analysis.tma_model import Fit, Plan, Problem
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.local_frame import LocalFrame

__all__ = ["MIN_CUTS", "SD_FLOOR_DEG", "Noise", "Settings", "Solved", "solve"]

#: the fewest cuts with bearings a single-leg solution takes (4 parameters and one to spare)
MIN_CUTS: Final = 5
#: the fewest cuts on each leg when a turn is looked for
MIN_LEG_CUTS: Final = 4
#: bearings are never taken as better than this (degrees): REP writes them to 0.1°, and the earth
#: models of simulators and of this suite differ by about as much (sensors.md §4)
SD_FLOOR_DEG: Final = 0.1
#: most gaps tried at once in the search for a turn
MAX_CANDIDATES: Final = 24
#: a turn is kept when it lowers χ² by more than chance would at this level (3 F quantiles with 3
#: and the residual degrees of freedom: many gaps are tried, and the scatter is estimated)
TURN_P: Final = 1e-5
_KNOT: Final = 1852.0 / 3600.0
#: the cost of a turn whose legs are too fast to be real (finite, for the scalar search)
_IMPLAUSIBLE: Final = 1e100
#: ranges (m) along the bearing tried as starts besides the pseudolinear estimate
_START_RANGES_M: Final = (1500.0, 5000.0, 15000.0, 45000.0)
_MAX_ROUNDS: Final = 4
#: function evaluations allowed a fit from a start (a good start converges in a dozen)
_START_NFEV: Final = 100
#: … and a fit of a trial turn (warm-started from the fit without it; the best is refined)
_SEARCH_NFEV: Final = 20
#: rounds in which an ambiguous array's cuts take the bearing the solution predicts
_SIDE_ROUNDS: Final = 5
#: gaps between cuts either side of a turn found over which its time is profiled, and the times
#: tried in each
_PROFILE_GAPS: Final = 4
_PROFILE_STEPS: Final = 3
#: most the variances are widened for correlated residuals (25: standard deviations × 5)
_MAX_WIDEN: Final = 25.0


@dataclass(frozen=True)
class Settings:
    t_ref: float
    turns: tuple[float, ...] | None  # given turn times, or None to find them
    max_turns: int
    outlier_sigma: float  # 0: no outlier test
    bearing_sd: float | None  # given standard deviation of every bearing (degrees)
    max_speed_kn: float = 30.0  # no leg of a turn found is faster


@dataclass(frozen=True)
class Noise:
    """What the bearings' standard deviation was taken from: ``weights`` per cut (1/σ, degrees) when
    the cuts state it or bearing_sd gives it, else ones (σ then estimated from the residuals)."""

    given: bool
    source: str
    sd: FloatArray

    @classmethod
    def of(cls, cuts: Cuts, bearing_sd: float | None) -> Noise:
        stated = np.isfinite(cuts.bearing_sd) & (cuts.bearing_sd > 0)
        if bearing_sd is not None:
            return cls(True, f"given: bearing_sd {bearing_sd:g}°", np.full(len(cuts), float(bearing_sd)))
        if stated.any():
            fill = float(np.median(cuts.bearing_sd[stated]))
            text = "the cuts' bearing accuracies" + (
                f" ({int((~stated).sum())} cut(s) without one taken as their median, {fill:g}°)"
                if not stated.all()
                else ""
            )
            return cls(True, text, np.where(stated, cuts.bearing_sd, fill))
        return cls(False, "estimated from the residuals", np.ones(len(cuts)))


@dataclass
class TurnFound:
    time: float
    given: bool
    gap: tuple[int, int] | None = None  # the cut numbers either side
    chi2_drop: float | None = None


@dataclass
class Side:
    """How an ambiguous array's side was chosen: per cut, whether it took its ambiguous bearing."""

    took_ambiguous: np.ndarray[Any, np.dtype[np.bool_]]
    resolved: bool
    rms_chosen: float
    rms_mirror: float | None
    f_ratio: float | None
    note: str


@dataclass
class Solved:
    problem: Problem
    fit: Fit
    noise: Noise
    sd: float  # the bearings' standard deviation (degrees; in units of the stated ones when given)
    sd_estimated: bool  # from the residuals (F quantiles) rather than stated (χ²)
    covariance: FloatArray
    outliers: np.ndarray[Any, np.dtype[np.bool_]]
    turns: list[TurnFound] = field(default_factory=list)
    side: Side | None = None
    robust_scale: float = 0.0
    widened: float = 1.0  # variances × this for residuals in runs (1: none)
    turn_shape: bool = False  # the covariance holds how far the legs move without the cuts at the turns


def _robust_scale(res: FloatArray, weight: FloatArray, active: np.ndarray[Any, Any], noise: Noise) -> float:
    """The robust standard deviation of the weighted residuals over ``active`` (never under the floor)."""
    return robust_sd(res[active] * weight[active], 1.0 if noise.given else SD_FLOOR_DEG)


def _starts(problem: Problem, plan: Plan, active: np.ndarray[Any, Any]) -> list[FloatArray]:
    """The pseudolinear estimate, and positions along the bearing nearest the reference time."""
    starts = [problem.pseudolinear(plan, active)]
    usable = np.flatnonzero(active & problem.has_bearing)
    k = int(usable[np.argmin(np.abs(problem.t[usable] - plan.t_ref))])
    b = math.radians(float(problem.bearing[k]))
    for r in _START_RANGES_M:
        pos = np.array([problem.ox[k] + r * math.sin(b), problem.oy[k] + r * math.cos(b)])
        starts.append(problem.pseudolinear(plan, active, fixed=pos))
    return [s for s in starts if np.all(np.isfinite(s))]


def _best_start(problem: Problem, plan: Plan, active: np.ndarray[Any, Any]) -> Fit:
    """Least squares from every start; the least cost wins (plain least squares converges from a
    poor start where a robust loss can stop in a false minimum: the robust fit starts from this)."""
    fits = [problem.fit(s, plan, active, max_nfev=_START_NFEV) for s in _starts(problem, plan, active)]
    return min(fits, key=lambda f: f.cost)


def _expanded(theta: FloatArray, old: Plan, new: Plan) -> FloatArray:
    """``theta`` of plan ``old`` as a state of plan ``new`` that moves the same way: each new leg
    takes the velocity of the old leg it lies in."""
    out = np.empty(new.size)
    out[:2] = theta[:2]
    for k, (lo, hi) in enumerate(new.bounds()):
        mid = (lo + hi) / 2 if math.isfinite(lo) and math.isfinite(hi) else (hi - 1 if math.isfinite(hi) else lo + 1)
        if not math.isfinite(mid):
            mid = new.t_ref
        j = int(old.leg_of(np.array([mid]))[0])
        out[2 + 2 * k : 4 + 2 * k] = theta[2 + 2 * j : 4 + 2 * j]
    return out


def _gaps(problem: Problem, plan: Plan, active: np.ndarray[Any, Any]) -> list[tuple[int, int]]:
    """Pairs of consecutive fitted cuts (indices) between which a new turn leaves every leg
    :data:`MIN_LEG_CUTS` cuts."""
    idx = np.flatnonzero(active & problem.has_bearing)
    t = problem.t[idx]
    out = []
    for i in range(idx.size - 1):
        if t[i + 1] <= t[i]:
            continue
        trial = Plan(tuple(sorted((*plan.turns, (t[i] + t[i + 1]) / 2))), plan.t_ref)
        counts = np.bincount(trial.leg_of(t), minlength=trial.legs)
        if counts.min() >= MIN_LEG_CUTS:
            out.append((int(idx[i]), int(idx[i + 1])))
    return out


def _plausible(fit: Fit, max_speed_mps: float) -> bool:
    """Whether every leg of ``fit`` is slower than the target could go (a leg that reaches an
    outlier or noise at an absurd speed is no turn)."""
    v = fit.theta[2:].reshape(-1, 2)
    return bool(np.all(np.hypot(v[:, 0], v[:, 1]) <= max_speed_mps))


def _find_turn(
    problem: Problem, current: Fit, active: np.ndarray[Any, Any], scale: float, max_speed_mps: float
) -> tuple[Fit, TurnFound] | None:
    """The best single turn to add to ``current`` and its fit, or None when no gap allows one
    (each leg keeps :data:`MIN_LEG_CUTS` cuts and a plausible speed)."""
    from scipy.optimize import minimize_scalar

    plan = current.plan
    gaps = _gaps(problem, plan, active)
    if not gaps:
        return None

    def at(tau: float, start: Fit) -> Fit:
        new = Plan(tuple(sorted((*plan.turns, tau))), plan.t_ref)
        return problem.fit(
            _expanded(start.theta, start.plan, new),
            new,
            active,
            loss="soft_l1",
            f_scale=2.5 * scale,
            max_nfev=_SEARCH_NFEV,
        )

    def cost(fit: Fit) -> float:
        return fit.cost if _plausible(fit, max_speed_mps) else _IMPLAUSIBLE

    def mid(g: tuple[int, int]) -> float:
        return float(problem.t[g[0]] + problem.t[g[1]]) / 2

    picks = sorted(set(np.round(np.linspace(0, len(gaps) - 1, min(len(gaps), MAX_CANDIDATES))).astype(int).tolist()))
    tried = {p: at(mid(gaps[p]), current) for p in picks}
    best = min(tried, key=lambda p: cost(tried[p]))
    stride = max(1, len(gaps) // MAX_CANDIDATES)
    while stride >= 1:  # closer in on the best: neighbours at halving spacings
        for p in (best - stride, best + stride):
            if 0 <= p < len(gaps) and p not in tried:
                tried[p] = at(mid(gaps[p]), current)
        best = min(tried, key=lambda p: cost(tried[p]))
        stride //= 2
    seed = tried[best]
    if cost(seed) >= _IMPLAUSIBLE:
        return None
    lo, hi = float(problem.t[gaps[best][0]]), float(problem.t[gaps[best][1]])
    if hi - lo > 2.0:
        found = minimize_scalar(
            lambda tau: cost(at(float(tau), seed)),
            bounds=(lo + 0.5, hi - 0.5),
            method="bounded",
            options={"xatol": 1.0, "maxiter": 20},
        )
        refined = at(float(found.x), seed)
        if cost(refined) < cost(seed):
            seed = refined
    tau = next(t for t in seed.plan.turns if t not in plan.turns)
    gap = (int(gaps[best][0]) + 1, int(gaps[best][1]) + 1)  # positions in the problem; numbered by the caller
    return seed, TurnFound(tau, False, gap)


def _outliers(
    problem: Problem, fit: Fit, noise: Noise, sigma: float, base: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """Cuts (among ``base``) whose weighted residual is beyond ``sigma`` robust deviations."""
    if sigma <= 0:
        return np.zeros(base.size, dtype=bool)
    scale = _robust_scale(fit.residuals, problem.weight, fit.active, noise)
    with np.errstate(invalid="ignore"):
        far = np.abs(fit.residuals * problem.weight) > sigma * scale
    out: np.ndarray[Any, Any] = base & far & problem.has_bearing
    return out


def _fit_structure(
    problem: Problem, settings: Settings, noise: Noise, base: np.ndarray[Any, Any]
) -> tuple[Fit, list[TurnFound], float]:
    """The robust solution with its legs (turns given or found) over the cuts ``base``."""
    from scipy.stats import f as f_dist

    turns = settings.turns
    plan = Plan(tuple(sorted(turns)) if turns else (), settings.t_ref)
    first = _best_start(problem, plan, base)
    scale = _robust_scale(first.residuals, problem.weight, base, noise)
    fit = problem.fit(first.theta, plan, base, loss="soft_l1", f_scale=2.5 * scale)
    scale = _robust_scale(fit.residuals, problem.weight, base, noise)
    found = [TurnFound(t, True) for t in plan.turns]
    cap = settings.outlier_sigma if settings.outlier_sigma > 0 else 4.0
    if turns is None:
        for _ in range(settings.max_turns):
            # a lone cut far off is an outlier, not a turn: the search leaves it out
            use = base & ~_isolated(problem, _outliers(problem, fit, noise, cap, base))
            trial = _find_turn(problem, replace(fit, active=use), use, scale, settings.max_speed_kn * _KNOT)
            if trial is None:
                break
            new_fit, turn = trial
            new_scale = _robust_scale(new_fit.residuals, problem.weight, use, noise)
            unit = _scatter(problem, new_fit, use, noise, cap * new_scale)
            drop = _capped_chi2(problem, fit, use, unit, cap) - _capped_chi2(problem, new_fit, use, unit, cap)
            dof = max(int((use & problem.has_bearing).sum()) - new_fit.plan.size, 1)
            if drop <= 3.0 * float(f_dist.ppf(1.0 - TURN_P, 3, dof)):
                break
            turn.chi2_drop = drop
            found.append(turn)
            fit = problem.fit(new_fit.theta, new_fit.plan, base, loss="soft_l1", f_scale=2.5 * new_scale)
            scale = _robust_scale(fit.residuals, problem.weight, base, noise)
    found.sort(key=lambda f: f.time)
    return fit, found, scale


def _isolated(problem: Problem, outliers: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The outliers whose neighbours in time (among the cuts with bearings) are not: a target's turn
    puts several cuts in a row off a leg, an outlier stands alone."""
    idx = np.flatnonzero(problem.has_bearing)
    flags = outliers[idx]
    before = np.concatenate(([False], flags[:-1]))
    after = np.concatenate((flags[1:], [False]))
    out = np.zeros(outliers.size, dtype=bool)
    out[idx] = flags & ~before & ~after
    return out


def _scatter(problem: Problem, fit: Fit, active: np.ndarray[Any, Any], noise: Noise, limit: float) -> float:
    """The weighted residuals' standard deviation over the cuts of ``active`` within ``limit`` (the
    outliers left out), on the fit's degrees of freedom; never under the floor (or the stated σ)."""
    use = active & problem.has_bearing
    r = fit.residuals[use] * problem.weight[use]
    kept = r[np.abs(r) <= limit]
    sd = math.sqrt(float(kept @ kept) / max(kept.size - fit.plan.size, 1))
    return max(sd, 1.0 if noise.given else SD_FLOOR_DEG)


def _capped_chi2(problem: Problem, fit: Fit, active: np.ndarray[Any, Any], scale: float, cap: float) -> float:
    """Σ min((r/scale)², cap²) of the weighted residuals over ``active``: two fits compared on one
    measure in which no cut counts for more than an outlier does (so that no turn is found to
    absorb one)."""
    use = active & problem.has_bearing
    z = (fit.residuals[use] * problem.weight[use] / scale) ** 2
    return float(np.sum(np.minimum(z, cap * cap)))


def _final(
    problem: Problem, robust: Fit, settings: Settings, noise: Noise, base: np.ndarray[Any, Any]
) -> tuple[Fit, np.ndarray[Any, Any]]:
    """Least squares over the cuts that are not outliers, the outlier test repeated on it."""
    outliers = _outliers(problem, robust, noise, settings.outlier_sigma, base)
    fit = problem.fit(robust.theta, robust.plan, base & ~outliers)
    for _ in range(_MAX_ROUNDS):
        again = _outliers(problem, fit, noise, settings.outlier_sigma, base)
        if np.array_equal(again, outliers):
            break
        outliers = again
        fit = problem.fit(fit.theta, fit.plan, base & ~outliers)
    return fit, outliers


def _correlation(problem: Problem, fit: Fit) -> float:
    """The lag-one correlation of the fitted cuts' weighted residuals in time order, or 0 when it is
    not significantly positive (under 2/√n): residuals in runs say the model leaves something out
    (a turn that is not sudden, a bearing bias, the earth model), and each cut then tells less."""
    use = fit.active & problem.has_bearing
    r = fit.residuals[use] * problem.weight[use]
    if r.size < 8:
        return 0.0
    r = r - r.mean()
    denom = float(r @ r)
    rho = float(r[1:] @ r[:-1]) / denom if denom > 0 else 0.0
    return rho if rho > 2.0 / math.sqrt(r.size) else 0.0


def _covariance(problem: Problem, fit: Fit, noise: Noise) -> tuple[FloatArray, float, bool, float]:
    """The state's covariance, the bearings' standard deviation used, whether it was estimated, and
    the factor the variances were widened by for correlated residuals (1: none)."""
    jac = problem.jacobian(fit.theta, fit.plan, fit.active)
    info = jac.T @ jac
    rms = math.sqrt(fit.chi2 / fit.dof)
    if noise.given:
        s, estimated = max(1.0, rms), rms > 1.0
    else:
        s, estimated = max(rms, SD_FLOOR_DEG), True
    rho = _correlation(problem, fit)
    widen = min((1.0 + rho) / (1.0 - rho), _MAX_WIDEN) if rho > 0 else 1.0
    return _inverse(info) * (s * s * widen), s, estimated, widen


def _inverse(info: FloatArray) -> FloatArray:
    """The information's inverse, a direction the bearings do not fix at all (an eigenvalue under
    1e-15 of the largest) getting an enormous variance, never none (as a pseudo-inverse would give)."""
    vals, vecs = np.linalg.eigh(info)
    floor = max(float(vals.max()), 1e-300) * 1e-15
    out: FloatArray = (vecs / np.maximum(vals, floor)) @ vecs.T
    return out


def _turn_time_spread(problem: Problem, fit: Fit, s: float) -> FloatArray | None:
    """The covariance the turn times add, from a profile over each: the turn is moved to
    :data:`_PROFILE_STEPS` times in each gap between cuts within :data:`_PROFILE_GAPS` gaps either
    side (never past a neighbouring turn or leaving a leg under :data:`MIN_LEG_CUTS` cuts), the
    legs refitted at each; each time weighs as its likelihood, ``exp(−Δχ²/2s²)``, and the spread
    of the refitted states about the answer's, ``Σ w (θ(τ) − θ̂)(θ(τ) − θ̂)ᵀ``, is added. So a turn
    the bearings place badly (a gap or two either way fit about as well) widens the legs as much
    as it moves them, which the curvature at the best time alone would not tell. None without a
    turn."""
    if not fit.plan.turns:
        return None
    t = np.unique(problem.t[fit.active & problem.has_bearing])
    total = np.zeros((fit.plan.size, fit.plan.size))
    for k, tau in enumerate(fit.plan.turns):
        lo_turn = fit.plan.turns[k - 1] if k > 0 else -math.inf
        hi_turn = fit.plan.turns[k + 1] if k + 1 < len(fit.plan.turns) else math.inf
        pos = int(np.searchsorted(t, tau))
        first = max(pos - 1 - _PROFILE_GAPS, MIN_LEG_CUTS - 1)
        last = min(pos - 1 + _PROFILE_GAPS, t.size - 1 - MIN_LEG_CUTS)
        trials = []
        for g in range(first, last + 1):
            a, b = float(t[g]), float(t[g + 1])
            if a <= lo_turn or b >= hi_turn:
                continue
            trials += [a + (b - a) * (j + 0.5) / _PROFILE_STEPS for j in range(_PROFILE_STEPS)]
        if not trials:
            continue
        states, chi2 = [], []
        for when in trials:
            turns = list(fit.plan.turns)
            turns[k] = when
            moved = problem.fit(fit.theta, Plan(tuple(turns), fit.plan.t_ref), fit.active)
            states.append(moved.theta)
            chi2.append(moved.chi2)
        d = np.asarray(chi2) - min(*chi2, fit.chi2)
        w = np.exp(-d / (2.0 * s * s))
        w /= w.sum()
        dev = np.asarray(states) - fit.theta
        total += (dev * w[:, None]).T @ dev
    return total


def _solve_one(problem: Problem, settings: Settings, noise: Noise, base: np.ndarray[Any, Any]) -> Solved:
    robust, turns, scale = _fit_structure(problem, settings, noise, base)
    fit, outliers = _final(problem, robust, settings, noise, base)
    cov, s, estimated, widen = _covariance(problem, fit, noise)
    spread = _turn_time_spread(problem, fit, s)
    if spread is not None:
        cov = cov + spread * widen
    return Solved(problem, fit, noise, s, estimated, cov, outliers, turns, None, scale, widen, spread is not None)


def _problem(frame: LocalFrame, cuts: Cuts, bearing: FloatArray, noise: Noise) -> Problem:
    return Problem(frame, cuts.t, cuts.lat, cuts.lon, bearing, noise.sd if noise.given else None)


def _nearer(problem: Problem, fit: Fit, cuts: Cuts, has_amb: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Per cut, whether its ambiguous bearing is nearer the solution's than its bearing is."""
    pred = problem.predict(fit.theta, fit.plan)[0]
    err_b = np.abs(wrap180(cuts.bearing - pred))
    err_a = np.abs(wrap180(cuts.ambiguous - pred))
    out: np.ndarray[Any, Any] = has_amb & (err_a < np.where(np.isfinite(err_b), err_b, np.inf))
    return out


def _side(
    cuts: Cuts,
    frame: LocalFrame,
    settings: Settings,
    noise: Noise,
    solve_one: Callable[[Problem], Solved],
    headings: FloatArray | None,
) -> Solved:
    """The side of an ambiguous array: from each start (every cut's bearing; every ambiguous one;
    with ``headings``, every starboard one and every port one) the cuts take whichever of their two
    bearings the solution predicts, refitted until it settles; the assignment that fits best is
    solved, and its mirror (each cut's other bearing) too, to tell whether the side is resolved."""
    from scipy.stats import f as f_dist

    has_amb = np.isfinite(cuts.ambiguous)

    def pick(took: np.ndarray[Any, Any]) -> FloatArray:
        return np.where(took, cuts.ambiguous, cuts.bearing)

    plan = Plan(tuple(sorted(settings.turns)) if settings.turns else (), settings.t_ref)
    starts = [np.zeros(len(cuts), dtype=bool), has_amb.copy()]
    if headings is not None:
        with np.errstate(invalid="ignore"):
            starboard = np.sin(np.radians(cuts.bearing - headings)) > 0
        starts += [has_amb & ~starboard, has_amb & starboard]
    best: tuple[float, np.ndarray[Any, Any]] | None = None
    for start in starts:
        took = start
        for _ in range(_SIDE_ROUNDS):
            problem = _problem(frame, cuts, pick(took), noise)
            fit = _best_start(problem, plan, problem.has_bearing)
            again = _nearer(problem, fit, cuts, has_amb)
            if np.array_equal(again, took):
                break
            took = again
        score = fit.chi2 / fit.dof
        if best is None or score < best[0]:
            best = (score, took)
    assert best is not None
    took = best[1]
    chosen = solve_one(_problem(frame, cuts, pick(took), noise))
    mirror = solve_one(_problem(frame, cuts, pick(has_amb & ~took), noise))
    if mirror.fit.chi2 / mirror.fit.dof < chosen.fit.chi2 / chosen.fit.dof:  # the full fit prefers the other side
        chosen, mirror, took = mirror, chosen, has_amb & ~took
    var_c = chosen.fit.chi2 / chosen.fit.dof
    var_m = mirror.fit.chi2 / mirror.fit.dof
    ratio = var_m / var_c if var_c > 0 else math.inf
    critical = float(f_dist.ppf(0.999, mirror.fit.dof, chosen.fit.dof))
    resolved = ratio > critical
    rms_c = math.sqrt(chosen.fit.chi2 / max(chosen.fit.used, 1))
    rms_m = math.sqrt(mirror.fit.chi2 / max(mirror.fit.used, 1))
    if resolved:
        note = (
            f"resolved: the bearings chosen fit with {rms_c:.2f}° RMS, their mirror images {rms_m:.2f}° "
            f"({ratio:.1f} times the variance; {critical:.1f} would be chance at 0.1 %)"
        )
    else:
        note = (
            f"not resolved: the mirror images of the bearings fit as well ({rms_m:.2f}° against {rms_c:.2f}° RMS); "
            "an ownship turn moves the mirror and tells the true side: solve again over cuts on both sides of one"
        )
    chosen.side = Side(took, resolved, rms_c, rms_m, ratio if math.isfinite(ratio) else None, note)
    return chosen


def solve(cuts: Cuts, settings: Settings, headings: FloatArray | None = None) -> Solved:
    """The maximum-likelihood target of ``cuts`` (see the module's docstring); ``headings``: ownship's
    heading at each cut (degrees), which an ambiguous array's sides are told by."""
    frame = LocalFrame(float(np.mean(cuts.lat)), float(np.mean(cuts.lon)))
    noise = Noise.of(cuts, settings.bearing_sd)
    base = np.ones(len(cuts), dtype=bool)

    def one(problem: Problem) -> Solved:
        return _solve_one(problem, settings, noise, base & problem.has_bearing)

    if np.any(np.isfinite(cuts.ambiguous)):
        return _side(cuts, frame, settings, noise, one, headings)
    return one(_problem(frame, cuts, cuts.bearing, noise))


def with_turn_numbers(solved: Solved, cuts: Cuts) -> Solved:
    """The turns' gaps as the cuts' own numbers (the fit numbers them by position)."""
    turns = [
        replace(t, gap=(int(cuts.number[t.gap[0] - 1]), int(cuts.number[t.gap[1] - 1])) if t.gap else None)
        for t in solved.turns
    ]
    return replace(solved, turns=turns)
