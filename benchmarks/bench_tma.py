"""Target motion analysis and bearing residuals, each beside its baseline in the same run, and the
solutions on the SATC tutorial's cuts against the truth.

    python benchmarks/bench_tma.py [--cuts N] [--residual-cuts N] [--runs N] [--replays N] [--draws N]

Figures (wall-clock, the median of ``--runs`` runs after one untimed warm-up; the machine is shared, so each is printed beside
its baseline as a ratio):

- ``tma-solve`` on ``--cuts`` (1,000) cuts of a constructed scenario (ownship 000° then 075° at
  10 kn, the target 200° at 8 kn 15 km off, 1° Gaussian bearing noise), through ``executor.run``:
  with one straight leg (``max_turns`` 0) and at its defaults (turns looked for), beside **one bare**
  ``scipy.optimize.least_squares`` **call on the same model** (the same residuals and Jacobian, from
  the pseudolinear start);
- ``bearing-residuals`` on ``--residual-cuts`` (100,000) cuts against a target track, beside a bare
  numpy computation (the suite's vectorised geodesy: target interpolated, one inverse for all cuts)
  and a bare GeographicLib loop (one ``InverseLine`` and one ``Inverse`` per cut);
- the SATC cuts solved (first 11: one leg; all 38: both legs, the turn found), without noise and with
  Gaussian noise of 0.5° and 1° (fixed seeds), beside the truth (GeographicLib on RedTrack.rep);
- the coverage of the 95 % ellipse over ``--replays`` (200) noisy replays of the scenario;
- the trial t24b exercise over ``--draws`` (100) noise draws: the truth inside the stated 95 %
  ellipses (at the reference time and at the least uncertain time) and within ±2 SD of each leg's
  course and speed, each beside its nominal rate; the legs' mean speeds against the truth.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from geographiclib.geodesic import Geodesic  # noqa: E402

from debrief_calc.analysis import default_registry  # noqa: E402
from debrief_calc.analysis.executor import run  # noqa: E402
from debrief_calc.geo import geodesy  # noqa: E402
from debrief_calc.tracks.features import iso_many, parse_iso  # noqa: E402

KNOT = 1852.0 / 3600.0
GEOD = Geodesic.WGS84
T0 = parse_iso("2024-03-01T10:00:00Z")


def median_time(fn: Callable[[], object], runs: int) -> float:
    """The median of ``runs`` timed calls, after one untimed call (imports, caches)."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _once(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def sail(lat: float, lon: float, legs: list[tuple[float, float, float]], step: float = 10.0) -> np.ndarray:
    """Rows (t, lat, lon): each ``(course, knots, seconds)`` in turn, a fix every ``step`` s."""
    rows = [(T0, lat, lon)]
    for course, knots, seconds in legs:
        n = round(seconds / step)
        for _ in range(n):
            t, y, x = rows[-1]
            ny, nx, _ = geodesy.direct(y, x, course, knots * KNOT * step)
            rows.append((t + step, float(ny), float(nx)))
    return np.array(rows)


def track(rows: np.ndarray, fid: str) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": fid,
        "geometry": {"type": "LineString", "coordinates": rows[:, [2, 1]].tolist()},
        "properties": {"kind": "track", "name": fid.upper(), "timestamps": iso_many(rows[:, 0])},
    }


def sensor(own: np.ndarray, target: np.ndarray, cuts: int, noise: float, seed: int) -> dict[str, Any]:
    times = np.linspace(own[0, 0] + 1.0, min(own[-1, 0], target[-1, 0]) - 1.0, cuts)
    olat, olon = geodesy.interpolate_track(own[:, 0], own[:, 1], own[:, 2], times)
    tlat, tlon = geodesy.interpolate_track(target[:, 0], target[:, 1], target[:, 2], times)
    _, bearing, _ = geodesy.inverse(olat, olon, tlat, tlon)
    bearing = (bearing + np.random.default_rng(seed).normal(0.0, noise, cuts)) % 360.0
    none = [None] * cuts
    return {
        "type": "Feature",
        "id": "sensor",
        "geometry": {"type": "MultiPoint", "coordinates": np.column_stack((olon, olat)).tolist()},
        "properties": {
            "kind": "sensor",
            "name": "Array",
            "host": "own",
            "timestamps": iso_many(times),
            "bearings": bearing.tolist(),
            "ambiguousBearings": none,
            "frequencies": none,
        },
    }


def scenario(duration: float = 2400.0) -> tuple[np.ndarray, np.ndarray]:
    own = sail(50.0, -5.0, [(0.0, 10.0, duration / 2), (75.0, 10.0, duration / 2)])
    start = GEOD.Direct(50.0, -5.0, 60.0, 15000.0)
    target = sail(start["lat2"], start["lon2"], [(200.0, 8.0, duration)])
    return own, target


def bare_fit(feature: dict[str, Any]) -> Callable[[], object]:
    """One least_squares call on the tool's own model (residuals, Jacobian), from its pseudolinear start."""
    from scipy.optimize import least_squares

    from debrief_calc.analysis.sensor_cuts import read_cuts
    from debrief_calc.analysis.tma_model import Plan, Problem
    from debrief_calc.geo.local_frame import LocalFrame

    cuts = read_cuts(feature)
    frame = LocalFrame(float(cuts.lat.mean()), float(cuts.lon.mean()))
    problem = Problem(frame, cuts.t, cuts.lat, cuts.lon, cuts.bearing)
    plan = Plan((), float(cuts.t[-1]))
    idx = np.arange(len(cuts))
    start = problem.pseudolinear(plan, np.ones(len(cuts), dtype=bool))

    def go() -> object:
        return least_squares(
            lambda th: problem._fun(th, plan, idx),
            start,
            jac=lambda th: problem._jac(th, plan, idx),
            method="trf",
            x_scale="jac",
        )

    return go


def tool(name: str, features: list[dict[str, Any]], params: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    registry = default_registry()

    def go() -> dict[str, Any]:
        result = run(registry, name, features, params)
        assert result.success, result.error
        return result.features[0]["properties"]

    return go


def glib_loop(feature: dict[str, Any], target: np.ndarray) -> Callable[[], object]:
    times = [parse_iso(s) for s in feature["properties"]["timestamps"]]
    origins = feature["geometry"]["coordinates"]
    bearings = feature["properties"]["bearings"]
    tt = target[:, 0]

    def go() -> object:
        out = []
        for t, (lon, lat), b in zip(times, origins, bearings, strict=True):
            i = min(int(np.searchsorted(tt, t, side="right")) - 1, tt.size - 2)
            line = GEOD.InverseLine(target[i, 1], target[i, 2], target[i + 1, 1], target[i + 1, 2])
            p = line.Position(line.s13 * (t - tt[i]) / (tt[i + 1] - tt[i]))
            az = GEOD.Inverse(lat, lon, p["lat2"], p["lon2"])["azi1"]
            out.append((b - az + 180.0) % 360.0 - 180.0)
        return out

    return go


def numpy_bare(feature: dict[str, Any], target: np.ndarray) -> Callable[[], object]:
    times = np.array([parse_iso(s) for s in feature["properties"]["timestamps"]])
    xy = np.array(feature["geometry"]["coordinates"])
    bearings = np.array(feature["properties"]["bearings"])

    def go() -> object:
        lat, lon = geodesy.interpolate_track(target[:, 0], target[:, 1], target[:, 2], times)
        _, az, _ = geodesy.inverse(xy[:, 1], xy[:, 0], lat, lon)
        return (bearings - az + 180.0) % 360.0 - 180.0

    return go


def satc_rows() -> list[str]:
    from tests._sensors import satc_sensor, satc_track

    own, truth = satc_track("BlueTrack.rep"), satc_track("RedTrack.rep")
    t = np.array([parse_iso(s) for s in truth["properties"]["timestamps"]])[1:]
    xy = np.array(truth["geometry"]["coordinates"])[1:]

    def course_speed(a: str, b: str) -> tuple[float, float]:
        ta, tb = parse_iso("2010-01-12T" + a + "Z"), parse_iso("2010-01-12T" + b + "Z")
        pa = geodesy.interpolate_track(t, xy[:, 1], xy[:, 0], [ta])
        pb = geodesy.interpolate_track(t, xy[:, 1], xy[:, 0], [tb])
        line = GEOD.InverseLine(float(pa[0][0]), float(pa[1][0]), float(pb[0][0]), float(pb[1][0]))
        return line.Position(line.s13 / 2)["azi2"] % 360.0, line.s13 / (tb - ta) / KNOT

    c1, s1 = course_speed("12:13:14", "12:29:59")
    c2, s2 = course_speed("12:33:29", "13:13:14")
    lines = [f"truth (GeographicLib on RedTrack.rep): leg 1 {c1:.1f}° {s1:.2f} kn; leg 2 {c2:.1f}° {s2:.2f} kn"]
    for label, first, last in (("cuts 1-11", 1, 11), ("cuts 1-38", 1, 38)):
        for noise, seed in ((0.0, 0), (0.5, 1), (1.0, 2)):
            answer = tool("tma-solve", [satc_sensor(first, last, noise, seed), own], {})()
            legs = "; ".join(
                f"{leg['course']:.1f}° ± {leg['course_sd']:.1f} at {leg['speed_kn']:.2f} ± {leg['speed_sd_kn']:.2f} kn"
                for leg in answer["target_legs"]
            )
            turns = ", ".join(t["time"][11:19] for t in answer["turns"]) or "none"
            lines.append(f"{label}, noise {noise:.1f}°: {legs}; turns {turns}; RMS {answer['residuals']['rms_deg']}°")
    answer = tool("tma-solve", [satc_sensor(), own], {"cuts": ["5-10"]})()
    lines.append(f"cuts 5-10 (one ownship leg): {answer['range_observability']}")
    return lines


def coverage(replays: int) -> str:
    from tests._sensors import at, inside_ellipse
    from tests._sensors import scenario as constructed

    inside = 0
    for seed in range(replays):
        feature, own, _, _, target = constructed(noise_deg=1.0, seed=seed)
        answer = tool("tma-solve", [feature, own], {"max_turns": 0, "distance_unit": "m"})()
        sol = answer["solution"]
        inside += inside_ellipse(at(target, parse_iso(sol["time"])), sol["position"], sol["ellipse"], 1.0)
    sd = math.sqrt(replays * 0.95 * 0.05)
    return (
        f"truth inside the 95 % ellipse in {inside} of {replays} noisy replays ({inside / replays:.1%}; "
        f"binomial expectation {0.95 * replays:.0f} ± {sd:.1f})"
    )


def _ellipse_m(sol: dict[str, Any], truth: tuple[float, float]) -> float:
    """(x/a)² + (y/b)² of the true position in the answer's ellipse (GeographicLib): 1 on its edge."""
    inv = GEOD.Inverse(sol["position"][1], sol["position"][0], truth[0], truth[1])
    e = sol["ellipse"]
    a = math.radians(inv["azi1"] - e["orientation_deg"])
    d = inv["s12"]
    return (d * math.cos(a) / e["semi_major"]) ** 2 + (d * math.sin(a) / e["semi_minor"]) ** 2


def exercise_coverage(draws: int) -> list[str]:
    """The trial t24b exercise (tests/_exercise.py: two ownship turns, a target turn, three wild
    cuts, frequencies) over ``draws`` noise draws, tma-solve at its defaults: how often the truth
    lies inside the stated 95 % ellipses and within ±2 SD of each leg's course and speed."""
    from tests import _exercise as ex

    inside = {"solution": 0, "solution_least_uncertain": 0}
    legs = {"course": 0, "speed": 0}
    leg_count = 0
    speeds: dict[int, list[float]] = {0: [], 1: []}
    caveats = 0
    for seed in range(draws):
        sensor_feature, own = ex.features(seed)
        answer = tool("tma-solve", [sensor_feature, own], {"distance_unit": "m"})()
        for key in inside:
            sol = answer[key]
            inside[key] += _ellipse_m(sol, ex.geometry().target_at(parse_iso(sol["time"]))) <= 1.0
        for k, leg in enumerate(answer["target_legs"]):
            course, knots = ex.truth_leg((parse_iso(leg["start"]) + parse_iso(leg["end"])) / 2)
            legs["course"] += abs((leg["course"] - course + 180.0) % 360.0 - 180.0) <= 2 * leg["course_sd"]
            legs["speed"] += abs(leg["speed_kn"] - knots) <= 2 * leg["speed_sd_kn"]
            leg_count += 1
            if len(answer["target_legs"]) == 2:
                speeds[k].append(leg["speed_kn"])
            caveats += leg.get("reliability") == "bias-prone"
    sd = math.sqrt(draws * 0.95 * 0.05)
    out = [f"trial t24b exercise, {draws} noise draws (1° bearings, 0.02 Hz, 3 wild cuts), nominal 95 %:"]
    for key, label in (
        ("solution", "ellipse at the reference time (last cut)"),
        ("solution_least_uncertain", "ellipse at the least uncertain time"),
    ):
        out.append(
            f"  truth inside the {label}: {inside[key]}/{draws} ({inside[key] / draws:.1%}; binomial {0.95 * draws:.0f} ± {sd:.1f})"
        )
    for key, hits in legs.items():
        out.append(
            f"  truth within ±2 SD of the leg's {key}: {hits}/{leg_count} ({hits / leg_count:.1%}; nominal 95.4 %)"
        )
    for k, values in speeds.items():
        if values:
            out.append(
                f"  leg {k + 1} speed: mean {statistics.mean(values):.2f} kn, SD {statistics.pstdev(values):.2f} (truth 6.00) over {len(values)} two-leg answers"
            )
    out.append(f"  legs marked bias-prone: {caveats}/{leg_count}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuts", type=int, default=1000)
    parser.add_argument("--residual-cuts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--draws", type=int, default=100, help="noise draws of the trial t24b exercise (0: none)")
    args = parser.parse_args()
    own, target = scenario()
    cuts = sensor(own, target, args.cuts, 1.0, 1)
    features = [cuts, track(own, "own")]
    bare = median_time(bare_fit(cuts), args.runs)
    rows = [
        (f"one bare least_squares, same model, {args.cuts:,} cuts (baseline)", bare, bare),
        (
            "tma-solve, one straight leg (max_turns 0)",
            median_time(tool("tma-solve", features, {"max_turns": 0}), args.runs),
            bare,
        ),
        ("tma-solve at its defaults (turns looked for)", median_time(tool("tma-solve", features, {}), args.runs), bare),
    ]
    long_own, long_target = scenario(duration=args.residual_cuts * 2.0)
    many = sensor(long_own, long_target, args.residual_cuts, 1.0, 2)
    target_feature = track(long_target, "target")
    base = median_time(numpy_bare(many, long_target), args.runs)
    rows += [
        (f"bare numpy residuals, {args.residual_cuts:,} cuts (baseline)", base, base),
        ("bare GeographicLib loop", _once(glib_loop(many, long_target)), base),
        (
            "bearing-residuals (no host)",
            median_time(tool("bearing-residuals", [many, target_feature], {}), args.runs),
            base,
        ),
    ]
    print(f"median of {args.runs} runs (the GeographicLib loop: one run)")
    print(f"{'figure':<70} {'seconds':>9} {'x baseline':>11}")
    for label, seconds, baseline in rows:
        print(f"{label:<70} {seconds:>9.3f} {seconds / baseline:>10.1f}x")
    print()
    for line in satc_rows():
        print(line)
    if args.replays:
        print(coverage(args.replays))
    if args.draws:
        for line in exercise_coverage(args.draws):
            print(line)


if __name__ == "__main__":
    main()
