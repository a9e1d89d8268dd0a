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
5. accuracy: worst and p99 distance error of ``debrief_calc.geodesy.inverse`` against
   ``Geodesic.WGS84.Inverse`` over 10,000 random pairs uniform on the sphere.

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
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _harness import (
    CLIENT_MODE,
    Row,
    cold_start_interleaved,
    machine_line,
    percentiles,
    print_table,
    warm_roundtrips,
)
from bench_calc_domain import glib_legs, glib_scan, patrol

from debrief_calc import geodesy
from debrief_calc.features import track_data
from debrief_calc.service import CalcService
from llmem.config import Limits
from llmem.store import ArtifactStore

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline_server.py"
GEOD = Geodesic.WGS84
T0 = 1_731_618_413.0  # 2024-11-14T21:06:53Z, the day of the shared sample plot

TARGETS = {
    "cold": 1.10,
    "warm": 1.5,
    "track_stats_s": 1.0,
    "cpa_s": 1.0,
    "accuracy_m": 0.5,
}


@dataclass(frozen=True)
class Sizes:
    cold_runs: int
    warm_calls: int
    track_points: int
    cpa_points: int
    run_calls: int  # warm run_tool calls timed after the first
    glib_sample: int  # legs (and, quartered, fix times) timed for the GeographicLib baselines
    pairs: int


FULL = Sizes(
    cold_runs=20,
    warm_calls=500,
    track_points=1_000_000,
    cpa_points=100_000,
    run_calls=7,
    glib_sample=20_000,
    pairs=10_000,
)
QUICK = Sizes(
    cold_runs=2,
    warm_calls=30,
    track_points=20_000,
    cpa_points=5_000,
    run_calls=2,
    glib_sample=1_000,
    pairs=500,
)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 100 else f"{seconds:.0f} s"


def _ratio(ours: float, base: float) -> str:
    if base <= 0:
        return "n/a"
    r = ours / base
    return f"{r:.2f}x" if r < 100 else f"{r:,.0f}x"


def _verdict(name: str, ok: bool, detail: str) -> str:
    return f"  [{'met ' if ok else 'MISS'}] {name}: {detail}"


def _calc_cmd(workspace: Path) -> list[str]:
    script = Path(sys.executable).with_name("debrief-calc-mcp")
    if script.exists():
        return [str(script), "--workspace", str(workspace)]
    return [sys.executable, "-c", "from debrief_calc.cli import main_calc; main_calc()", "--workspace", str(workspace)]


def _service(workspace: Path, store_root: Path) -> CalcService:
    return CalcService(ArtifactStore(store_root, workspace.resolve()), Limits())


# -- the plots ------------------------------------------------------------------------------


def _small_features(lat0: float, lon0: float) -> list[dict[str, Any]]:
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
                "current": "2024-11-14T21:06:53.000Z",
                "start": "2024-11-14T21:06:53.000Z",
                "end": "2024-11-26T11:00:00.000Z",
            },
        },
    ]


def _write_plot(path: Path, tracks: list[dict[str, Any]], lat0: float, lon0: float) -> int:
    doc = {"type": "FeatureCollection", "features": [*tracks, *_small_features(lat0, lon0)]}
    raw = json.dumps(doc, indent=2).encode()
    path.write_bytes(raw)
    return len(raw)


@dataclass
class Plots:
    ws: Path
    big_name: str
    big_bytes: int
    big_id: str
    cpa_name: str
    cpa_bytes: int
    cpa_ids: list[str]
    glib_legs_s: float  # extrapolated GeographicLib leg loop over the big track
    glib_scan_s: float  # extrapolated GeographicLib brute-force CPA scan
    scan_times: int


def make_plots(tmp: Path, sizes: Sizes) -> Plots:
    ws = tmp / "ws_plots"
    ws.mkdir()
    big = patrol(sizes.track_points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=1)
    big_bytes = _write_plot(ws / "patrol.plot.json", [big], 50.0, -4.0)
    base_legs = glib_legs(track_data(big), sizes.glib_sample)
    del big
    ship_a = patrol(sizes.cpa_points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=2, box_s=3600)
    ship_b = patrol(sizes.cpa_points, 10.0, lat0=50.05, lon0=-3.95, t0=T0 + 0.5, seed=3, box_s=5400)
    cpa_bytes = _write_plot(ws / "exercise.plot.json", [ship_a, ship_b], 50.0, -4.0)
    base_scan, scan_times = glib_scan(track_data(ship_a), track_data(ship_b), max(1, sizes.glib_sample // 4))
    return Plots(
        ws=ws,
        big_name="patrol.plot.json",
        big_bytes=big_bytes,
        big_id=_track_id(1),
        cpa_name="exercise.plot.json",
        cpa_bytes=cpa_bytes,
        cpa_ids=[_track_id(2), _track_id(3)],
        glib_legs_s=base_legs,
        glib_scan_s=base_scan,
        scan_times=scan_times,
    )


def _track_id(seed: int) -> str:
    return f"ship-{seed}"  # as bench_calc_domain.patrol names its tracks


# -- 1 and 2: cold start and warm list_tools -------------------------------------------------


def bench_server(tmp: Path, sizes: Sizes, env: dict[str, str], rows: list[Row], verdicts: list[str]) -> None:
    ws = tmp / "ws_server"
    ws.mkdir()
    ours = _calc_cmd(ws)
    base = [sys.executable, str(BASELINE)]

    cold_ours, cold_base = cold_start_interleaved([ours, base], sizes.cold_runs, env=env)
    m_ours, m_base = statistics.median(cold_ours), statistics.median(cold_base)
    rows.append(
        (
            f"cold start, median of {sizes.cold_runs} interleaved (<= 1.10x)",
            _ms(m_ours),
            _ms(m_base),
            _ratio(m_ours, m_base),
        )
    )
    paired = statistics.median(o / b for o, b in zip(cold_ours, cold_base, strict=True))
    p95_ours, p95_base = percentiles(cold_ours)[1], percentiles(cold_base)[1]
    rows.append(("  cold start p95 / median of per-run ratios", _ms(p95_ours), _ms(p95_base), f"{paired:.2f}x"))
    verdicts.append(
        _verdict(
            "cold start",
            m_ours / m_base <= TARGETS["cold"],
            f"{m_ours / m_base:.2f}x (median of per-run ratios {paired:.2f}x)",
        )
    )

    svc = _service(ws, tmp / "store_inproc_list")
    answer_chars = len(json.dumps({"tools": svc.list_tools(None, None)}, ensure_ascii=False))
    list_ours, echo_base, echo_same = warm_roundtrips(
        [
            (ours, "list_tools", {}),
            (base, "echo", {"text": "ping"}),
            (base, "echo", {"text": "x" * answer_chars}),
        ],
        sizes.warm_calls,
        env=env,
    )
    (o50, o95), (b50, b95), (s50, s95) = percentiles(list_ours), percentiles(echo_base), percentiles(echo_same)
    n = sizes.warm_calls
    rows.append((f"warm list_tools p50, {n} calls (<= 1.5x)", _ms(o50), _ms(b50), _ratio(o50, b50)))
    rows.append((f"warm list_tools p95, {n} calls (<= 1.5x)", _ms(o95), _ms(b95), _ratio(o95, b95)))
    rows.append((f"  same, vs echo of {answer_chars:,} chars: p50", _ms(o50), _ms(s50), _ratio(o50, s50)))
    rows.append((f"  same, vs echo of {answer_chars:,} chars: p95", _ms(o95), _ms(s95), _ratio(o95, s95)))
    verdicts.append(
        _verdict(
            "warm list_tools round trip",
            o50 / b50 <= TARGETS["warm"],
            f"p50 {o50 / b50:.2f}x, p95 {o95 / b95:.2f}x vs 'ping' echo",
        )
    )


# -- 3 and 4: run_tool on plot references over stdio ------------------------------------------


@dataclass
class RunTimes:
    first: float
    warm: list[float]
    echo: list[float]  # the baseline echo, called alternately with the warm calls
    answer: dict[str, Any]


def _structured(result: Any, what: str) -> dict[str, Any]:
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise RuntimeError(f"{what} failed: {result}")
    content = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if not isinstance(content, dict) or content.get("success") is not True:
        raise RuntimeError(f"{what} did not succeed: {content or result}")
    return content


async def _plot_runs_async(
    calc_cmd: list[str], base_cmd: list[str], env: dict[str, str], calls: list[tuple[str, dict[str, Any]]], n: int
) -> list[RunTimes]:
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(Path(os.devnull).open("w"))  # noqa: SIM115
        full_env = {**os.environ, **env}

        async def connect(cmd: list[str]) -> Any:
            params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=full_env)
            client = Client(stdio_client(params, errlog=errlog), mode=CLIENT_MODE, cache=None)
            return await stack.enter_async_context(client)

        calc, base = await connect(calc_cmd), await connect(base_cmd)
        # Warm the server's lazy imports (registry, numpy, the analysis tools) on a tiny inline
        # track, so the first timed call is the plot's read + parse + the work, not imports.
        tiny = patrol(50, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=9)
        for _ in range(3):
            _structured(await calc.call_tool("run_tool", {"tool": "track-stats", "features": [tiny]}), "warm-up")
            await calc.call_tool("list_tools", {})
            await base.call_tool("echo", {"text": "ping"})
        clock = time.perf_counter
        out = []
        for tool, plot in calls:
            args = {"tool": tool, "plot": plot}
            start = clock()
            answer = _structured(await calc.call_tool("run_tool", args), f"{tool} (first)")
            first = clock() - start
            warm, echo = [], []
            for _ in range(n):
                start = clock()
                answer = _structured(await calc.call_tool("run_tool", args), tool)
                warm.append(clock() - start)
                start = clock()
                await base.call_tool("echo", {"text": "ping"})
                echo.append(clock() - start)
            out.append(RunTimes(first, warm, echo, answer))
        return out


def _inprocess_runs(svc: CalcService, tool: str, plot: dict[str, Any], n: int) -> list[float]:
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


def bench_plots(
    tmp: Path, sizes: Sizes, env: dict[str, str], plots: Plots, rows: list[Row], verdicts: list[str], notes: list[str]
) -> None:
    import anyio

    ws = plots.ws
    big_ref = {"filename": plots.big_name, "feature_ids": [plots.big_id]}
    cpa_ref = {"filename": plots.cpa_name, "feature_ids": plots.cpa_ids}
    n = sizes.run_calls
    stats_run, cpa_run = anyio.run(
        _plot_runs_async,
        _calc_cmd(ws),
        [sys.executable, str(BASELINE)],
        env,
        [("track-stats", big_ref), ("closest-approach", cpa_ref)],
        n,
    )
    svc = _service(ws, tmp / "store_inproc_plots")
    stats_inproc = _inprocess_runs(svc, "track-stats", big_ref, n)
    cpa_inproc = _inprocess_runs(svc, "closest-approach", cpa_ref, n)

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
        rows.append(
            (f"{label}: first call (read+parse), vs echo", _s(run.first), _ms(echo50), _ratio(run.first, echo50))
        )
        rows.append((f"{label}: warm p50 of {n} (< 1 s), vs echo", _s(w50), _ms(echo50), _ratio(w50, echo50)))
        rows.append((f"  same warm p50, vs {glib_note}", _s(w50), _s(glib), _ratio(w50, glib)))
        rows.append(("  same warm p50, vs CalcService.run in process", _s(w50), _s(i50), _ratio(w50, i50)))
        verdicts.append(
            _verdict(
                label.split(" (")[0] + " warm, through run_tool over stdio",
                w50 < TARGETS[target_key],
                f"p50 {w50:.3f} s (max {max(run.warm):.3f} s; first call {run.first:.2f} s; "
                f"in process {i50:.3f} s; server-reported duration_ms {run.answer.get('duration_ms')})",
            )
        )

    st = stats_run.answer["features"][0]["properties"]["statistics"]
    cpa = cpa_run.answer["features"][0]["properties"]
    notes.append(
        f"results: track-stats {st['point_count']:,} fixes, {st['distance_nm']:.2f} nm, mean "
        f"{st['mean_speed_kn']} kn, max {st['max_speed_kn']} kn; closest-approach "
        + json.dumps({k: v for k, v in cpa.items() if k not in ("provenance", "kind", "name")}, default=str)[:300]
    )
    notes.append(
        f"*1 Geodesic.WGS84.Inverse in a Python loop over {min(sizes.glib_sample, sizes.track_points - 1):,} evenly "
        f"spread legs, EXTRAPOLATED to all {sizes.track_points - 1:,} legs (distance only: no times, speeds, "
        "course or bbox, and no reading of the plot)"
    )
    notes.append(
        "*2 GeographicLib brute force (both ships interpolated on their geodesic legs + Inverse) at "
        f"{min(max(1, sizes.glib_sample // 4), plots.scan_times):,} of the {plots.scan_times:,} fix times of either "
        "track, EXTRAPOLATED to all of them (and it finds the CPA only at fix times)"
    )


# -- 5: accuracy ----------------------------------------------------------------------------------


def bench_accuracy(sizes: Sizes, rows: list[Row], verdicts: list[str]) -> None:
    rng = np.random.default_rng(20240115)

    def on_sphere(n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        return np.degrees(np.arcsin(rng.uniform(-1, 1, n))), rng.uniform(-180, 180, n)

    lat1, lon1 = on_sphere(sizes.pairs)
    lat2, lon2 = on_sphere(sizes.pairs)
    fallbacks = 0
    real_inverse = GEOD.Inverse

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal fallbacks
        fallbacks += 1
        return real_inverse(*args, **kwargs)

    geodesy.inverse(lat1[:10], lon1[:10], lat2[:10], lon2[:10])  # warm
    GEOD.Inverse = counting  # type: ignore[method-assign]
    try:
        start = time.perf_counter()
        ours = geodesy.inverse(lat1, lon1, lat2, lon2)[0]
        ours_s = time.perf_counter() - start
    finally:
        del GEOD.Inverse
    pairs = list(zip(lat1.tolist(), lon1.tolist(), lat2.tolist(), lon2.tolist(), strict=True))
    start = time.perf_counter()
    ref = np.array([real_inverse(a, b, c, d, Geodesic.DISTANCE)["s12"] for a, b, c, d in pairs])
    ref_s = time.perf_counter() - start
    err = np.abs(ours - ref)
    worst, p99 = float(err.max()), float(np.percentile(err, 99))
    n = sizes.pairs
    rows.append(
        (f"accuracy: worst distance error, {n:,} pairs (<= 0.5 m)", f"{worst * 1000:.4f} mm", "GeographicLib", "-")
    )
    rows.append((f"accuracy: p99 distance error, {n:,} pairs", f"{p99 * 1000:.4f} mm", "GeographicLib", "-"))
    rows.append(
        (f"  inverse of the {n:,} pairs: ours vs GeographicLib loop", _ms(ours_s), _ms(ref_s), _ratio(ours_s, ref_s))
    )
    rows.append(("  pairs ours handed to GeographicLib (no convergence)", str(fallbacks), "-", "-"))
    verdicts.append(
        _verdict(
            "geodesic accuracy",
            worst <= TARGETS["accuracy_m"],
            f"worst {worst * 1000:.4f} mm, p99 {p99 * 1000:.4f} mm over {n:,} pairs uniform on the sphere "
            f"({fallbacks} solved by the GeographicLib fallback)",
        )
    )


# -- --profile: where the warm run_tool time goes -----------------------------------------------


def profile_runs(tmp: Path, sizes: Sizes, plots: Plots) -> None:
    svc = _service(plots.ws, tmp / "store_profile")
    for tool, plot in (
        ("track-stats", {"filename": plots.big_name, "feature_ids": [plots.big_id]}),
        ("closest-approach", {"filename": plots.cpa_name, "feature_ids": plots.cpa_ids}),
    ):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run (figures mean nothing)")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the warm CalcService.run calls after the table"
    )
    parser.add_argument("--tmp", type=Path, default=None, help="where the temporary workspaces go")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL

    print("debrief-calc-mcp benchmarks" + (" (--quick: smoke sizes, figures mean nothing)" if args.quick else ""))
    print(machine_line())
    print(
        f"client: mcp Client over stdio, mode={CLIENT_MODE!r} (initialize handshake); "
        "ratio = ours / baseline time (lower is better)"
    )
    print(flush=True)
    rows: list[Row] = []
    verdicts: list[str] = []
    notes: list[str] = []
    took: list[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="calc-bench-", dir=args.tmp)).resolve()
    # The servers' logs and user-level data go to the temp folder, never the user's home.
    env = {"LLMEM_LOG_DIR": str(tmp / "logs"), "LLMEM_DATA_DIR": str(tmp / "data")}
    os.environ.update(env)  # and this process's in-process CalcService, the same way

    def stage(name: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        value = fn()
        took.append(f"{name} {time.perf_counter() - start:.1f} s")
        print(f"  ({took[-1]})", file=sys.stderr, flush=True)
        return value

    try:
        stage("server", lambda: bench_server(tmp, sizes, env, rows, verdicts))
        plots: Plots = stage("plots", lambda: make_plots(tmp, sizes))
        stage("run_tool", lambda: bench_plots(tmp, sizes, env, plots, rows, verdicts, notes))
        stage("accuracy", lambda: bench_accuracy(sizes, rows, verdicts))
        print_table(rows)
        print()
        for note in notes:
            print(note)
        print()
        print("targets:")
        for line in verdicts:
            print(line)
        if args.profile:
            stage("profile", lambda: profile_runs(tmp, sizes, plots))
    finally:
        start = time.perf_counter()
        shutil.rmtree(tmp, ignore_errors=True)
        took.append(f"cleanup {time.perf_counter() - start:.1f} s")
    print(f"stages: {', '.join(took)}")


if __name__ == "__main__":
    main()
