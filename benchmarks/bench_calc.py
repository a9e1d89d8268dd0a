"""debrief-calc-mcp's figures (debrief-calc.md "Figures to reach"), each beside its baseline in the same run.

    python benchmarks/bench_calc.py [--quick] [--profile] [--tmp DIR]

1. cold start: ``debrief-calc-mcp --workspace <tmp>`` vs ``benchmarks/baseline_server.py`` (spawn →
   ``initialize`` answer), interleaved run by run, medians.
2. warm round trip over stdio (real MCP client): the ``list_tools`` tool vs the baseline's
   ``echo``, the servers alive side by side and called alternately; p50 and p95.
3. ``track-stats`` on a 1,000,000-fix track read from a plot reference (``run_tool(tool,
   plot={filename, feature_ids})``) through the real server over stdio: the first call (the
   server reads and parses the 120 MB ``.plot.json``) and the p50 of the warm calls after it
   (the plot is parsed once and cached). Baselines from the same run: the bare ``MCPServer``
   echo round trip, called alternately with the warm calls (so the ratio is the work's cost
   over protocol overhead); ``Geodesic.WGS84.Inverse`` in a Python loop over a sample of the
   legs, extrapolated to all of them; and ``CalcService.run`` in this process on the same plot
   (what MCP and stdio add).
4. ``closest-approach`` between two 100,000-fix tracks of another plot, the same way (the
   GeographicLib baseline is a brute-force range scan at a sample of the fix times, extrapolated).
5. accuracy: worst and p99 distance error of ``debrief_calc.geo.geodesy.inverse`` against
   ``Geodesic.WGS84.Inverse`` over 10,000 random pairs uniform on the sphere
   (``bench_geodesy.uniform_accuracy``: the same seeded pairs as ``bench_geodesy.py``).

The plots are realistic: a ship at 12 kn (and one at 10 kn for the CPA) on a box patrol with
GPS-like noise, 1 s fixes, ``properties.dataType: "track"``, ISO-8601 ``properties.timestamps``,
LineString ``[lon, lat]``, beside a reference point, a zone and the time metadata, written with
the two-space indent Debrief plot files have.

Results are ratios (ours / baseline time): these machines are shared and noisy. ``--quick``
shrinks every size for a smoke run; its figures mean nothing. ``--profile`` adds a cProfile of
the warm ``CalcService.run`` calls (in process, same plots) after the table.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section, ms, ratio, s
from bench_calc_domain import glib_legs, glib_scan, patrol
from bench_geodesy import uniform_accuracy

from debrief_calc.calc.service import CalcService
from debrief_calc.tracks.features import track_data
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

T0 = 1_731_618_413.0  # 2024-11-14T21:06:53Z, the day of the shared sample plot
START = "2024-11-14T21:06:53.000Z"  # T0: the plots' time window starts there, and their current time
BIG_PLOT, CPA_PLOT = "patrol.plot.json", "exercise.plot.json"
BIG_REF = {"filename": BIG_PLOT, "feature_ids": ["ship-1"]}  # ids as bench_calc_domain.patrol names them
CPA_REF = {"filename": CPA_PLOT, "feature_ids": ["ship-2", "ship-3"]}

TARGETS = {"track_stats_s": 1.0, "cpa_s": 1.0, "accuracy_m": 0.5}


@dataclass(frozen=True)
class Sizes:
    """A full run's sizes, the spec's (``QUICK`` shrinks them for a smoke run)."""

    quick: bool = False
    track_points: int = 1_000_000
    cpa_points: int = 100_000
    run_calls: int = 7  # warm run_tool calls timed after the first
    glib_sample: int = 20_000  # legs (and, quartered, fix times) timed for the GeographicLib baselines
    pairs: int = 10_000


FULL = Sizes()
QUICK = Sizes(True, track_points=20_000, cpa_points=5_000, run_calls=2, glib_sample=1_000, pairs=500)


def service(workspace: Path, store_root: Path) -> CalcService:
    return CalcService(ArtifactStore(store_root, workspace.resolve()), Limits())


# -- the plots ------------------------------------------------------------------------------


def small_features(lat0: float, lon0: float, current: str = START) -> list[dict[str, Any]]:
    """A reference point, a zone and the time metadata, as in Debrief's own plot files."""
    box = [[lon0 - 0.2, lat0 - 0.1], [lon0 + 0.2, lat0 - 0.1], [lon0 + 0.2, lat0 + 0.1], [lon0 - 0.2, lat0 + 0.1]]
    return [
        {
            "type": "Feature",
            "id": "p-1",
            "properties": {"name": "SONO 1-1", "dataType": "reference-point", "marker_color": "#00FF00"},
            "geometry": {"type": "Point", "coordinates": [lon0 + 0.05, lat0 + 0.02]},
        },
        {
            "type": "Feature",
            "id": "z-1",
            "properties": {"name": "SAP 1", "dataType": "annotation", "stroke": "#F00", "fill": "#0F0"},
            "geometry": {"type": "Polygon", "coordinates": [[*box, box[0]]]},
        },
        {
            "type": "Feature",
            "id": "debrief-time-metadata",
            "geometry": {"type": "Polygon", "coordinates": [[]]},
            "properties": {
                "dataType": "metadata",
                "metadataType": "time",
                "current": current,
                "start": START,
                "end": "2024-11-26T11:00:00.000Z",
            },
        },
    ]


def write_plot(path: Path, tracks: list[dict[str, Any]], lat0: float, lon0: float, current: str = START) -> int:
    """``tracks`` with a reference point, a zone and the time metadata, written as plots are (``indent=2``); its bytes."""
    doc = {"type": "FeatureCollection", "features": [*tracks, *small_features(lat0, lon0, current)]}
    raw = json.dumps(doc, indent=2).encode()
    path.write_bytes(raw)
    return len(raw)


@dataclass
class Plots:
    ws: Path
    big_bytes: int
    cpa_bytes: int
    glib_legs_s: float  # extrapolated GeographicLib leg loop over the big track
    glib_scan_s: float  # extrapolated GeographicLib brute-force CPA scan
    scan_times: int


def make_plots(tmp: Path, sizes: Sizes) -> Plots:
    ws = tmp / "ws_plots"
    ws.mkdir()
    big = patrol(sizes.track_points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=1)
    big_bytes = write_plot(ws / BIG_PLOT, [big], 50.0, -4.0)
    base_legs = glib_legs(track_data(big), sizes.glib_sample)
    del big
    ship_a = patrol(sizes.cpa_points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=2, box_s=3600)
    ship_b = patrol(sizes.cpa_points, 10.0, lat0=50.05, lon0=-3.95, t0=T0 + 0.5, seed=3, box_s=5400)
    cpa_bytes = write_plot(ws / CPA_PLOT, [ship_a, ship_b], 50.0, -4.0)
    base_scan, scan_times = glib_scan(track_data(ship_a), track_data(ship_b), max(1, sizes.glib_sample // 4))
    return Plots(ws, big_bytes, cpa_bytes, base_legs, base_scan, scan_times)


# -- 1 and 2: cold start and warm list_tools -------------------------------------------------


def bench_server(tmp: Path, sizes: Sizes, section: Section) -> None:
    ws = tmp / "ws_server"
    ws.mkdir()
    svc = service(ws, tmp / "store_inproc_list")
    answer_chars = len(json.dumps({"tools": svc.list_tools(None, None)}, ensure_ascii=False))
    harness.add_server_figures(
        section,
        harness.server_cmd("debrief-calc-mcp", ws),
        warm=[("list_tools", "list_tools", {})],
        quick=sizes.quick,
        echo_chars=answer_chars,
    )


# -- 3 and 4: run_tool on plot references over stdio ------------------------------------------


@dataclass
class RunTimes:
    first: float
    warm: list[float]
    echo: list[float]  # the baseline echo, called alternately with the warm calls
    answer: dict[str, Any]


def succeeded(answer: dict[str, Any], what: str) -> dict[str, Any]:
    if answer.get("success") is not True:
        raise RuntimeError(f"{what} did not succeed: {answer}")
    return answer


async def tool_runs_async(ws: Path, calls: list[tuple[str, dict[str, Any]]], n: int) -> list[RunTimes]:
    """``(tool, arguments)`` calls on a live ``debrief-calc-mcp`` over stdio, each timed once
    first (a plot's read + parse) then ``n`` times warm, alternating with the baseline's echo."""
    async with harness.connected([harness.server_cmd("debrief-calc-mcp", ws), harness.BASELINE_CMD]) as (calc, base):
        # Warm the server's lazy imports (registry, numpy, the analysis tools) on a tiny inline
        # track, so the first timed call is the plot's read + parse + the work, not imports.
        tiny = patrol(50, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=9)
        warm_up = await harness.timed_rounds(
            [
                (calc, "run_tool", {"tool": "track-stats", "features": [tiny]}),
                (calc, "list_tools", {}),
                (base, "echo", {"text": "ping"}),
            ],
            3,
        )
        succeeded(warm_up.last[0], "warm-up")
        out = []
        for tool, args in calls:
            what = str(args.get("tool", tool))
            start = time.perf_counter()
            succeeded(harness.checked(await calc.call_tool(tool, args), what), f"{what} (first)")
            first = time.perf_counter() - start
            rounds = await harness.timed_rounds([(calc, tool, args), (base, "echo", {"text": "ping"})], n)
            out.append(RunTimes(first, rounds.times[0], rounds.times[1], succeeded(rounds.last[0], what)))
        return out


def inprocess_runs(svc: CalcService, tool: str, plot: dict[str, Any], n: int) -> list[float]:
    """``CalcService.run`` in this process on the same plot: first (parse) call untimed."""
    answer = svc.run(tool, None, plot, None, None)
    if not answer["success"]:
        raise RuntimeError(f"in-process {tool} failed: {answer.get('error')}")
    times = []
    for _ in range(n):
        start = time.perf_counter()
        svc.run(tool, None, plot, None, None)
        times.append(time.perf_counter() - start)
    return times


def bench_plots(tmp: Path, sizes: Sizes, plots: Plots, section: Section) -> None:
    import anyio

    n = sizes.run_calls
    calls = [
        ("run_tool", {"tool": tool, "plot": plot})
        for tool, plot in (("track-stats", BIG_REF), ("closest-approach", CPA_REF))
    ]
    stats_run, cpa_run = anyio.run(tool_runs_async, plots.ws, calls, n)
    svc = service(plots.ws, tmp / "store_inproc_plots")
    stats_inproc = inprocess_runs(svc, "track-stats", BIG_REF, n)
    cpa_inproc = inprocess_runs(svc, "closest-approach", CPA_REF, n)

    for label, run, inproc, glib, target_key, glib_note in (
        (
            f"track-stats {sizes.track_points:,} fixes (plot {plots.big_bytes / 1e6:.0f} MB)",
            stats_run,
            stats_inproc,
            plots.glib_legs_s,
            "track_stats_s",
            "GeographicLib leg loop *1",
        ),
        (
            f"closest-approach 2 x {sizes.cpa_points:,} fixes (plot {plots.cpa_bytes / 1e6:.0f} MB)",
            cpa_run,
            cpa_inproc,
            plots.glib_scan_s,
            "cpa_s",
            "GeographicLib CPA scan *2",
        ),
    ):
        echo50 = statistics.median(run.echo)
        w50 = statistics.median(run.warm)
        i50 = statistics.median(inproc)
        section.add(f"{label}: first call (read+parse), vs echo", s(run.first), ms(echo50), ratio(run.first, echo50))
        section.add(f"{label}: warm p50 of {n} (< 1 s), vs echo", s(w50), ms(echo50), ratio(w50, echo50))
        section.add(f"  same warm p50, vs {glib_note}", s(w50), s(glib), ratio(w50, glib))
        section.add("  same warm p50, vs CalcService.run in process", s(w50), s(i50), ratio(w50, i50))
        section.target(
            label.split(" (")[0] + " warm, through run_tool over stdio",
            w50 < TARGETS[target_key],
            f"p50 {w50:.3f} s (max {max(run.warm):.3f} s; first call {run.first:.2f} s; "
            f"in process {i50:.3f} s; server-reported duration_ms {run.answer.get('duration_ms')})",
        )

    st = stats_run.answer["features"][0]["properties"]["statistics"]
    cpa = cpa_run.answer["features"][0]["properties"]
    section.notes.append(
        f"results: track-stats {st['point_count']:,} fixes, {st['distance_nm']:.2f} nm, mean "
        f"{st['mean_speed_kn']} kn, max {st['max_speed_kn']} kn; closest-approach {cpa.get('first_id')} / "
        f"{cpa.get('second_id')}: {cpa.get('range')} {cpa.get('distance_unit')} at {cpa.get('time')}, "
        f"bearing {cpa.get('bearing')}"
    )
    section.notes.append(
        f"*1 Geodesic.WGS84.Inverse in a Python loop over {min(sizes.glib_sample, sizes.track_points - 1):,} evenly "
        f"spread legs, EXTRAPOLATED to all {sizes.track_points - 1:,} legs (distance only: no times, speeds, "
        "course or bbox, and no reading of the plot)"
    )
    section.notes.append(
        "*2 GeographicLib brute force (both ships interpolated on their geodesic legs + Inverse) at "
        f"{min(max(1, sizes.glib_sample // 4), plots.scan_times):,} of the {plots.scan_times:,} fix times of either "
        "track, EXTRAPOLATED to all of them (and it finds the CPA only at fix times)"
    )


# -- 5: accuracy ----------------------------------------------------------------------------------


def bench_accuracy(sizes: Sizes, section: Section) -> None:
    acc = uniform_accuracy(sizes.pairs)  # bench_geodesy's figure, the same seeded pairs
    n = acc.n
    section.add(
        f"accuracy: worst distance error, {n:,} pairs (<= 0.5 m)", f"{acc.worst * 1000:.4f} mm", "GeographicLib", "-"
    )
    section.add(f"accuracy: p99 distance error, {n:,} pairs", f"{acc.p99 * 1000:.4f} mm", "GeographicLib", "-")
    section.add(
        f"  inverse of the {n:,} pairs: ours vs GeographicLib loop",
        ms(acc.ours_s),
        ms(acc.ref_s),
        ratio(acc.ours_s, acc.ref_s),
    )
    section.add("  pairs ours handed to GeographicLib (no convergence)", str(acc.fallbacks), "-", "-")
    section.target(
        "geodesic accuracy",
        acc.worst <= TARGETS["accuracy_m"],
        f"worst {acc.worst * 1000:.4f} mm, p99 {acc.p99 * 1000:.4f} mm over {n:,} pairs uniform on the sphere "
        f"({acc.fallbacks} solved by the GeographicLib fallback)",
    )


# -- --profile: where the warm run_tool time goes -----------------------------------------------


def profile_runs(tmp: Path, sizes: Sizes) -> None:
    svc = service(tmp / "ws_plots", tmp / "store_profile")
    for tool, plot in (("track-stats", BIG_REF), ("closest-approach", CPA_REF)):
        svc.run(tool, None, plot, None, None)  # the plot is parsed and cached: profile the warm calls
        prof = cProfile.Profile()
        calls = max(1, sizes.run_calls // 2)
        prof.enable()
        for _ in range(calls):
            svc.run(tool, None, plot, None, None)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(15)
        print(f"\nprofile: {calls} warm CalcService.run({tool!r}) in process, by own time")
        print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[:6000])


def collect(tmp: Path, quick: bool) -> Section:
    """debrief-calc-mcp's figures, each beside its baseline; workspaces and plots under ``tmp``."""
    sizes = QUICK if quick else FULL
    section = Section("debrief-calc-mcp")
    section.stage("server", lambda: bench_server(tmp, sizes, section))
    plots: Plots = section.stage("plots", lambda: make_plots(tmp, sizes))
    section.stage("run_tool", lambda: bench_plots(tmp, sizes, plots, section))
    section.stage("accuracy", lambda: bench_accuracy(sizes, section))
    return section


def _add_profile(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the warm CalcService.run calls after the table"
    )


def _after(args: argparse.Namespace, tmp: Path) -> None:
    if args.profile:
        took, _ = harness.timed(lambda: profile_runs(tmp, QUICK if args.quick else FULL))
        print(f"profile {took:.1f} s")


def main() -> None:
    harness.script_main("debrief-calc-mcp", __doc__, collect, add_args=_add_profile, after=_after)


if __name__ == "__main__":
    main()
