"""A windowed copy by reference (issue 22 §2), beside reading the file, in the same run.

    python benchmarks/bench_windows.py [--quick] [--tmp DIR]

One plot of two 1,000,000-fix ships (``bench_calc_domain.patrol``, as ``bench_instruments`` makes
it: 1 s fixes, ISO-8601 ``properties.timestamps``; about 240 MB with Debrief's two-space indent).
Over stdio to the real ``debrief-state-mcp``:

1. ``debrief_create_plot(filename, features=[{"ref": "debrief-state:plots/<file>#ship-2"},
   {"ref": …#ship-3}], time_start, time_end)``: both ships cut to two hours (7,200 fixes each, both
   edges between fixes, so a fix is interpolated at each) into a new plot whose saved window is
   those two hours: one call of a few hundred bytes. Its first call (the server reads and parses
   the big plot) and its warm p50 (the plot cached: a read of a long track bisects its times and
   copies the window alone), each beside ``json.loads`` of the same plot file (reading the file,
   the issue's baseline) and the warm one beside the bare ``MCPServer`` echo;
2. the same in this process (``StateService.create_plot``: no MCP, no stdio), warm, beside the
   same ``json.loads``.

Every copy is checked: each ship runs exactly the window, its edge fixes flagged interpolated.
Results are ratios (ours / baseline time): these machines are shared and noisy. ``--quick``
shrinks every size for a smoke run; its figures mean nothing.
"""

from __future__ import annotations

import json
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
from bench_calc import T0, write_plot
from bench_calc_domain import patrol

from debrief_calc.tracks.times import iso

PLOT = "windows.plot.json"
SHIPS = ("ship-2", "ship-3")  # as bench_calc_domain.patrol names them by seed


@dataclass(frozen=True)
class Sizes:
    quick: bool = False
    points: int = 1_000_000
    window_s: int = 7_200  # two hours
    calls: int = 7  # warm calls timed after the first
    loads: int = 3  # json.loads of the plot file


FULL = Sizes()
QUICK = Sizes(True, points=24_000, window_s=3_600, calls=2, loads=2)


@dataclass
class Plot:
    ws: Path
    bytes: int
    start: str
    end: str


def make_plot(tmp: Path, sizes: Sizes) -> Plot:
    ws = tmp / "ws_windows"
    ws.mkdir()
    a = patrol(sizes.points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=2, box_s=3600)
    b = patrol(sizes.points, 10.0, lat0=50.05, lon0=-3.95, t0=T0 + 0.5, seed=3, box_s=5400)
    start = T0 + sizes.points // 2 + 0.25  # between fixes of both ships
    size = write_plot(ws / PLOT, [a, b], 50.0, -4.0, current=iso(start))
    return Plot(ws, size, iso(start), iso(start + sizes.window_s))


def arguments(plot: Plot, i: int) -> dict[str, Any]:
    """The one call: a new plot of both ships' two hours, by reference."""
    refs = [{"ref": f"debrief-state:plots/{PLOT}#{fid}"} for fid in SHIPS]
    return {"filename": f"copy-{i + 1_000}.plot.json", "features": refs, "time_start": plot.start, "time_end": plot.end}


def check_copy(path: Path, plot: Plot) -> int:
    """The copy's fixes per ship; raises unless each ship runs exactly the window, edges interpolated."""
    tracks = [f for f in json.loads(path.read_bytes())["features"] if f["id"] in SHIPS]
    if len(tracks) != len(SHIPS):
        raise RuntimeError(f"{path.name} holds {len(tracks)} of the {len(SHIPS)} ships")
    for f in tracks:
        stamps, edges = f["properties"]["timestamps"], f["properties"]["window_edges"]
        if (stamps[0], stamps[-1]) != (plot.start, plot.end) or edges["interpolated"] != [True, True]:
            raise RuntimeError(f"{f['id']} in {path.name} runs {stamps[0]} to {stamps[-1]}, edges {edges}")
    return len(tracks[0]["properties"]["timestamps"])


async def _stdio(plot: Plot, n: int) -> tuple[float, list[float], list[float]]:
    """The first call (the big plot read and parsed), then ``n`` warm calls alternating with the echo."""
    cmds = [harness.server_cmd("debrief-state-mcp", plot.ws), harness.BASELINE_CMD]
    async with harness.connected(cmds) as (state, base):
        await harness.timed_rounds([(state, "debrief_list_plots", {}), (base, "echo", {"text": "ping"})], 2)
        start = time.perf_counter()
        harness.checked(await state.call_tool("debrief_create_plot", arguments(plot, -1)), "debrief_create_plot")
        first = time.perf_counter() - start
        rounds = await harness.timed_rounds(
            [(state, "debrief_create_plot", lambda i: arguments(plot, i)), (base, "echo", {"text": "ping"})], n
        )
    return first, rounds.times[0], rounds.times[1]


def _in_process(plot: Plot, tmp: Path, n: int) -> list[float]:
    from debrief_calc.state.service import StateService
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    svc = StateService(ArtifactStore(tmp / "store_windows", plot.ws), Limits())
    times = []
    for i in range(-1, n):  # the first (the plot's parse) untimed
        args = arguments(plot, 500 + i)
        start = time.perf_counter()
        svc.create_plot(args["filename"], None, args["features"], plot.start, plot.end)
        if i >= 0:
            times.append(time.perf_counter() - start)
    return times


def json_load(path: Path, runs: int) -> float:
    """The median seconds of ``json.loads`` of the file's bytes (read included)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        json.loads(path.read_bytes())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(tmp: Path, sizes: Sizes, plot: Plot, section: Section) -> None:
    import anyio

    first, warm, echo = anyio.run(_stdio, plot, sizes.calls)
    inproc = _in_process(plot, tmp, sizes.calls)
    load = json_load(plot.ws / PLOT, sizes.loads)
    fixes = check_copy(plot.ws / arguments(plot, 0)["filename"], plot)
    check_copy(plot.ws / arguments(plot, 500)["filename"], plot)
    p50, echo50, inproc50 = statistics.median(warm), statistics.median(echo), statistics.median(inproc)
    head = f"windowed copy by ref, 2 x {sizes.points:,} fixes to {sizes.window_s // 3600} h ({plot.bytes / 1e6:.0f} MB plot)"
    section.add(f"{head}: first call, vs json load of the file", s(first), s(load), ratio(first, load))
    section.add("  same: warm p50 (the plot read before), vs json load of the file", ms(p50), s(load), ratio(p50, load))
    section.add("  same warm p50, vs echo", ms(p50), ms(echo50), ratio(p50, echo50))
    section.add(
        "  in process (StateService.create_plot) warm p50, vs json load", ms(inproc50), s(load), ratio(inproc50, load)
    )
    request = len(json.dumps(arguments(plot, 0)))
    copy_bytes = (plot.ws / arguments(plot, 0)["filename"]).stat().st_size
    section.notes.append(
        f"windowed copy: one debrief_create_plot call of {request} bytes of arguments; the copy holds {fixes:,} "
        f"fixes a ship (the window's plus an interpolated fix at each edge), {copy_bytes / 1e6:.1f} MB; "
        "json load: json.loads of the big plot's bytes (read included), the median of "
        f"{sizes.loads}; the first call reads and parses that plot (the server's plot cache), the warm ones find it "
        "parsed and bisect each track's times for the window"
    )


def collect(tmp: Path, quick: bool) -> Section:
    """The windowed copy's figures, each beside its baseline; the plot under ``tmp``."""
    sizes = QUICK if quick else FULL
    section = Section("debrief-state-mcp")
    plot: Plot = section.stage("windows plot", lambda: make_plot(tmp, sizes))
    section.stage("windowed copy", lambda: bench(tmp, sizes, plot, section))
    return section


def main() -> None:
    harness.script_main("debrief-state-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
