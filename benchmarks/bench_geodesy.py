"""Accuracy and speed of ``debrief_calc.geo.geodesy`` beside GeographicLib, in one run.

    python benchmarks/bench_geodesy.py [--pairs N] [--track-points N] [--sample N] [--runs N]

Accuracy: distance and azimuth errors of :func:`inverse` against ``Geodesic.WGS84.Inverse``
over random pairs uniform on the sphere, and separately over nearly antipodal pairs (the
case Vincenty's iteration cannot always solve, handed to GeographicLib; the count is shown).
Speed: leg distances of a 1,000,000-point random-walk track with ours against a plain
GeographicLib loop. The loop is timed on a sample of the legs and extrapolated to all of
them (it would take most of a minute), which the output says. Also the vectorised parse of
as many ISO-8601 timestamps against ``parse_iso`` one by one (sampled and extrapolated too).
Targets: worst distance error <= 0.5 m; leg distances of the track well under 0.5 s.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from geographiclib.geodesic import Geodesic

from debrief_calc.geo import geodesy
from debrief_calc.tracks.features import iso_many, parse_iso, parse_times

GEOD = Geodesic.WGS84


def best_and_median(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    fn()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


SEED = 20240115


def angle_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs((a - b + 180.0) % 360.0 - 180.0)


def on_sphere(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points uniform on the sphere: (latitudes, longitudes) in degrees."""
    return np.degrees(np.arcsin(rng.uniform(-1, 1, n))), rng.uniform(-180, 180, n)


@dataclass(frozen=True)
class Accuracy:
    """Errors of ``geodesy.inverse`` against ``Geodesic.WGS84.Inverse`` over ``n`` pairs (metres, degrees)."""

    n: int
    worst: float
    p99: float
    median: float
    worst_azimuth: float
    fallbacks: int  # pairs ours handed to GeographicLib (no convergence)
    ours_s: float  # ours over all the pairs, vectorised
    ref_s: float  # a GeographicLib loop over all the pairs


def accuracy(lat1: np.ndarray, lon1: np.ndarray, lat2: np.ndarray, lon2: np.ndarray) -> Accuracy:
    calls = 0
    real_inverse = GEOD.Inverse

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real_inverse(*args, **kwargs)

    geodesy.inverse(lat1[:10], lon1[:10], lat2[:10], lon2[:10])  # warm
    GEOD.Inverse = counting  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        d, az1, az2 = geodesy.inverse(lat1, lon1, lat2, lon2)
        ours_s = time.perf_counter() - start
    finally:
        del GEOD.Inverse
    pairs = list(zip(lat1.tolist(), lon1.tolist(), lat2.tolist(), lon2.tolist(), strict=True))
    start = time.perf_counter()
    ref = [real_inverse(*p) for p in pairs]
    ref_s = time.perf_counter() - start
    ref_d = np.array([r["s12"] for r in ref])
    err = np.abs(d - ref_d)
    far = ref_d > 1.0
    az_err = np.maximum(
        angle_diff(az1, np.array([r["azi1"] for r in ref]) % 360),
        angle_diff(az2, np.array([r["azi2"] for r in ref]) % 360),
    )[far]
    return Accuracy(
        n=len(d),
        worst=float(err.max()),
        p99=float(np.percentile(err, 99)),
        median=float(np.median(err)),
        worst_azimuth=float(az_err.max()) if az_err.size else 0.0,
        fallbacks=calls,
        ours_s=ours_s,
        ref_s=ref_s,
    )


def uniform_accuracy(pairs: int, rng: np.random.Generator | None = None) -> Accuracy:
    """The spec's figure: :func:`accuracy` over ``pairs`` random pairs uniform on the sphere."""
    rng = rng if rng is not None else np.random.default_rng(SEED)
    lat1, lon1 = on_sphere(rng, pairs)
    lat2, lon2 = on_sphere(rng, pairs)
    return accuracy(lat1, lon1, lat2, lon2)


def print_accuracy(name: str, a: Accuracy) -> None:
    print(
        f"{name:<34} n={a.n:>6}  worst {a.worst * 1000:8.4f} mm  p99 {a.p99 * 1000:8.4f} mm"
        f"  median {a.median * 1000:8.4f} mm  worst azimuth {a.worst_azimuth:.1e} deg"
        f"  solved by GeographicLib: {a.fallbacks}  target worst <= 500 mm: {'ok' if a.worst <= 0.5 else 'MISSED'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--antipodal", type=int, default=1_000)
    parser.add_argument("--track-points", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=20_000, help="legs timed in the GeographicLib loop")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    import geographiclib

    print(
        f"# {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}, "
        f"geographiclib {geographiclib.__version__}, {platform.machine()}"
    )
    rng = np.random.default_rng(SEED)

    print("\n## Accuracy against Geodesic.WGS84.Inverse")
    print_accuracy("uniform on the sphere", uniform_accuracy(args.pairs, rng))
    alat, alon = on_sphere(rng, args.antipodal)
    blat = np.clip(-alat + rng.normal(0, 0.5, args.antipodal), -90, 90)
    blon = alon + 180 + rng.normal(0, 0.5, args.antipodal)
    print_accuracy("nearly antipodal (within ~1 deg)", accuracy(alat, alon, blat, blon))

    print(f"\n## Leg distances of a {args.track_points:,}-point track (random walk, ~100 m legs)")
    n = args.track_points
    lat = 36 + np.cumsum(rng.normal(0, 7e-4, n))
    lon = -4 + np.cumsum(rng.normal(0, 7e-4, n))
    best, median = best_and_median(lambda: geodesy.leg_distances(lat, lon), args.runs)
    legs = geodesy.leg_distances(lat, lon)
    sample = np.sort(rng.choice(n - 1, min(args.sample, n - 1), replace=False))

    def loop() -> list[float]:
        return [GEOD.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1], Geodesic.DISTANCE)["s12"] for i in sample]

    loop_best, _ = best_and_median(loop, max(1, args.runs // 3))
    loop_all = loop_best * (n - 1) / len(sample)
    worst_leg = np.max(np.abs(legs[sample] - np.array(loop())))
    print(
        f"ours, leg_distances                best {best:7.3f} s  median {median:7.3f} s"
        f"  target well under 0.5 s: {'ok' if median < 0.5 else 'MISSED'}"
    )
    best_az, median_az = best_and_median(lambda: geodesy.inverse(lat[:-1], lon[:-1], lat[1:], lon[1:]), args.runs)
    print(f"ours, inverse (with azimuths)      best {best_az:7.3f} s  median {median_az:7.3f} s")
    print(
        f"GeographicLib loop                 {loop_all:7.2f} s for all {n - 1:,} legs, extrapolated from "
        f"{len(sample):,} sampled legs ({loop_best:.3f} s)"
    )
    print(f"ratio                              ours is {loop_all / best:,.0f}x faster (best against best)")
    print(f"agreement on the sampled legs      worst {worst_leg * 1000:.6f} mm")

    print(f"\n## Parsing {n:,} ISO-8601 timestamps")
    stamps = iso_many(1731618413.661999 + np.arange(n) * 0.5)
    t_best, t_median = best_and_median(lambda: parse_times(stamps), max(1, args.runs // 2))
    few = stamps[: min(args.sample, n)]
    per_item, _ = best_and_median(lambda: [parse_iso(s) for s in few], 1)
    per_item_all = per_item * n / len(few)
    print(f"ours, parse_times                  best {t_best:7.3f} s  median {t_median:7.3f} s")
    print(
        f"parse_iso one by one               {per_item_all:7.2f} s, extrapolated from {len(few):,} "
        f"({per_item:.3f} s); ours is {per_item_all / t_best:.1f}x faster"
    )


if __name__ == "__main__":
    main()
