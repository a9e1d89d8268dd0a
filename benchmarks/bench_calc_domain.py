"""debrief-calc domain costs (no MCP): ``track-stats`` on a million fixes and
``closest-approach`` between two 100,000-fix tracks, each beside a baseline in the same run.

    python benchmarks/bench_calc_domain.py [--points N] [--cpa-points N] [--runs N] [--sample N]

The synthetic ships are realistic: 1 s fixes with ISO-8601 ``properties.timestamps``, 12 kn
(and 10 kn) on a box patrol with GPS-like noise, at mid latitudes. ``track-stats`` is timed
in parts: (a) reading the feature (coordinates and ISO times, ``track_data``), (b) the
statistics, and (c) the whole ``executor.run`` (a + b + provenance and output checks).

Baselines (stated in the table): a plain GeographicLib loop (``Geodesic.WGS84.Inverse`` per
leg) over a sample of the legs, extrapolated linearly to all of them; for the CPA, a plain
GeographicLib brute-force scan (interpolate both ships along their geodesic legs and take the
range) at every fix time of either track, timed over a sample of those times and extrapolated.
Targets: (b) under 0.3 s; CPA under 1 s.
"""

from __future__ import annotations

import argparse
import math
import statistics as stats_mod
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import machine_line, print_table

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.cpa import closest_approach
from debrief_calc.analysis.executor import run
from debrief_calc.analysis.track_stats import statistics
from debrief_calc.tracks.features import TrackData, iso_many, track_data

GEOD = Geodesic.WGS84
KNOT = 1852.0 / 3600.0


def patrol(
    n: int, knots: float, *, lat0: float, lon0: float, t0: float, seed: int, box_s: float = 3 * 3600
) -> dict[str, Any]:
    """A ship on a square patrol (a turn of 90 degrees every ``box_s`` seconds), 1 s fixes,
    half-metre position noise, as a ``.plot.json`` track feature."""
    rng = np.random.default_rng(seed)
    t = t0 + np.arange(n, dtype=np.float64)
    course = np.radians(45.0 + 90.0 * np.floor((t - t0) / box_s) + rng.normal(0, 2.0, n).cumsum() * 0.01)
    step = knots * KNOT
    north = np.cumsum(step * np.cos(course)) + rng.normal(0, 0.5, n)
    east = np.cumsum(step * np.sin(course)) + rng.normal(0, 0.5, n)
    lat = lat0 + north / 111_132.0
    lon = lon0 + east / (111_320.0 * np.cos(np.radians(lat0)))
    return {
        "type": "Feature",
        "id": f"ship-{seed}",
        "geometry": {"type": "LineString", "coordinates": np.column_stack((lon, lat)).tolist()},
        "properties": {"dataType": "track", "name": f"SHIP {seed}", "timestamps": iso_many(t)},
    }


def best_of(fn: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    fn()  # warm
    times, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return times, value


def glib_legs(track: TrackData, sample: int) -> float:
    """Seconds for a GeographicLib loop over ``sample`` legs, extrapolated to every leg."""
    n = len(track) - 1
    idx = np.linspace(0, n - 1, min(sample, n)).astype(int)
    lat, lon = track.lat.tolist(), track.lon.tolist()
    start = time.perf_counter()
    total = 0.0
    for i in idx.tolist():
        total += GEOD.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])["s12"]
    return (time.perf_counter() - start) * n / idx.size


def glib_position(track: TrackData, when: float) -> tuple[float, float]:
    t = track.t
    i = min(max(int(np.searchsorted(t, when, side="right")) - 1, 0), t.size - 2)
    frac = (when - t[i]) / (t[i + 1] - t[i])
    line = GEOD.InverseLine(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])
    pos = line.Position(frac * line.s13)
    return pos["lat2"], pos["lon2"]


def glib_scan(a: TrackData, b: TrackData, sample: int) -> tuple[float, int]:
    """Seconds for a brute-force GeographicLib range scan at every fix time of either track
    in the overlap, timed over ``sample`` of them and extrapolated; and how many there are."""
    start, end = max(a.t[0], b.t[0]), min(a.t[-1], b.t[-1])
    times = np.union1d(a.t[(a.t >= start) & (a.t <= end)], b.t[(b.t >= start) & (b.t <= end)])
    picked = times[np.linspace(0, times.size - 1, min(sample, times.size)).astype(int)]
    t0 = time.perf_counter()
    for when in picked.tolist():
        p, q = glib_position(a, when), glib_position(b, when)
        GEOD.Inverse(p[0], p[1], q[0], q[1], Geodesic.DISTANCE)
    return (time.perf_counter() - t0) * times.size / picked.size, int(times.size)


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000, help="fixes of the track-stats track")
    parser.add_argument("--cpa-points", type=int, default=100_000, help="fixes of each CPA track")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure (after one warm run)")
    parser.add_argument("--sample", type=int, default=20_000, help="legs/times timed for the GeographicLib baselines")
    args = parser.parse_args()
    print(machine_line())
    t0 = 1_700_000_000.0

    print(f"building a {args.points:,}-fix track (12 kn, 1 s fixes, ISO timestamps) ...", flush=True)
    big = patrol(args.points, 12.0, lat0=50.0, lon0=-4.0, t0=t0, seed=1)
    read_times, track = best_of(lambda: track_data(big), args.runs)
    stat_times, (stats, _) = best_of(lambda: statistics(track, "nm"), args.runs)
    reg = default_registry()
    run_times, result = best_of(lambda: run(reg, "track-stats", [big], {}), max(1, args.runs // 2))
    assert result.success, result.error
    base_legs = glib_legs(track, args.sample)

    print(f"building two {args.cpa_points:,}-fix tracks ...", flush=True)
    ship_a = patrol(args.cpa_points, 12.0, lat0=50.0, lon0=-4.0, t0=t0, seed=2, box_s=3600)
    ship_b = patrol(args.cpa_points, 10.0, lat0=50.05, lon0=-3.95, t0=t0 + 0.5, seed=3, box_s=5400)
    ta, tb = track_data(ship_a), track_data(ship_b)
    span = (max(float(ta.t[0]), float(tb.t[0])), min(float(ta.t[-1]), float(tb.t[-1])))
    cpa_times, (t_cpa, r_cpa) = best_of(lambda: closest_approach(ta, tb, span), args.runs)
    cpa_run_times, cpa_result = best_of(lambda: run(reg, "closest-approach", [ship_a, ship_b], {}), 1)
    assert cpa_result.success, cpa_result.error
    base_scan, scan_count = glib_scan(ta, tb, args.sample // 4)

    p50 = stats_mod.median
    rows = [
        (f"track-stats {args.points:,} fixes: (a) read coords + ISO times, p50", fmt_s(p50(read_times)), "-", "-"),
        (
            "track-stats: (b) statistics, p50 (target < 0.3 s)",
            fmt_s(p50(stat_times)),
            fmt_s(base_legs) + " *1",
            f"{base_legs / p50(stat_times):.0f}x faster",
        ),
        ("track-stats: (c) executor.run end to end, p50", fmt_s(p50(run_times)), "-", "-"),
        (
            f"closest-approach 2 x {args.cpa_points:,} fixes, p50 (target < 1 s)",
            fmt_s(p50(cpa_times)),
            fmt_s(base_scan) + " *2",
            f"{base_scan / p50(cpa_times):.0f}x faster",
        ),
        ("closest-approach: executor.run incl. reading both, once", fmt_s(cpa_run_times[0]), "-", "-"),
    ]
    print()
    print_table(rows)
    print()
    print(
        f"*1 GeographicLib Geodesic.WGS84.Inverse in a Python loop over {min(args.sample, len(track) - 1):,} "
        f"evenly spread legs, extrapolated to all {len(track) - 1:,} legs (distance only: no course, speeds or bbox)"
    )
    print(
        f"*2 GeographicLib brute force: both ships interpolated on their geodesic legs + Inverse at "
        f"{min(args.sample // 4, scan_count):,} of the {scan_count:,} fix times of either track, extrapolated "
        "(and it would still only find the CPA at fix times)"
    )
    print(
        f"results: distance {stats['distance_nm']:.3f} nm, mean {stats['mean_speed_kn']:.3f} kn, "
        f"max {stats['max_speed_kn']:.3f} kn; CPA {r_cpa:.1f} m at t0+{t_cpa - t0:.3f} s"
    )
    ok_stats = p50(stat_times) < 0.3
    ok_cpa = p50(cpa_times) < 1.0
    print(f"targets: statistics < 0.3 s {'ok' if ok_stats else 'MISSED'}; CPA < 1 s {'ok' if ok_cpa else 'MISSED'}")
    if not math.isfinite(r_cpa):
        raise SystemExit("CPA range is not finite")


if __name__ == "__main__":
    main()
