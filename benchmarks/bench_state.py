"""debrief-state-mcp's figures (debrief-state.md "Figures to reach"), each beside its baseline in the same run.

    python benchmarks/bench_state.py [--quick] [--tmp DIR]

1. cold start: ``debrief-state-mcp --workspace <tmp>`` vs ``benchmarks/baseline_server.py`` (a bare
   ``MCPServer`` with one ``echo`` tool), spawn → ``initialize`` answer, interleaved run by run.
2. warm ``debrief_get_selection`` round trip over stdio (real MCP client) vs the baseline's ``echo``,
   the servers alive side by side and called alternately, p50 and p95 over ≥ 500 calls: on
   ``large-sample.plot.json`` (577 KB) and on a 50 MB plot made by replicating its tracks.
3. ``debrief_apply_command`` over stdio on ``large-sample.plot.json``: ``setSelection`` (alternating
   selections: the store, no plot write) and ``updateFeatures`` of one zone (alternating values:
   a real plot write — lock, re-read, encode, atomic write with fsync — and its undo record),
   called alternately with the baseline's ``echo``.
4. the proof-of-concept workflow "delete the selected feature" end to end over stdio, warm, with
   ``debrief-calc-mcp`` alive beside it: ``debrief_get_selection`` → ``run_tool delete-features``
   (the calc server reads the selection from the shared store and the plot from the file) →
   ``debrief_apply_command`` with its command → ``debrief_get_selection``; an untimed
   ``debrief_undo`` puts the feature (and its selection) back for the next round. Baseline: the
   same four round trips to the echo, in the same rounds.
5. ``debrief_render_plot`` at 1024×768 on ``large-sample.plot.json`` over stdio, alternately with
   the echo.

Results are ratios to the echo round trip measured in the same run: these machines are shared
and noisy. ``--quick`` shrinks every size (and the big plot to 5 MB) for a smoke run.
"""

from __future__ import annotations

import copy
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as harness
from _harness import BASELINE_CMD, Section, checked, ms, ratio, server_cmd

HERE = Path(__file__).resolve().parent
PLOTS = HERE.parent / "tests" / "data" / "plots"
LARGE = "large-sample.plot.json"
BIG = "big.plot.json"
POC = "poc.plot.json"
TARGETS = {"apply_ms": 20.0, "poc_ms": 50.0, "render_ms": 300.0}


#: apply_command calls, workflow rounds, render calls, MB of the big plot: full, and --quick.
SIZES = {False: (100, 50, 20, 50), True: (10, 3, 3, 5)}


def make_big_plot(target: Path, megabytes: int) -> int:
    """``large-sample`` with its tracks replicated (new ids, shifted positions) to ``megabytes``."""
    data = json.loads((PLOTS / LARGE).read_bytes())
    tracks = [f for f in data["features"] if (f.get("properties") or {}).get("dataType") == "track"]
    size_of_tracks = sum(len(json.dumps(t, indent=2)) for t in tracks)
    copies = max(1, megabytes * 1_000_000 // size_of_tracks)
    extra = []
    for n in range(copies):
        for t in tracks:
            c = copy.deepcopy(t)
            c["id"] = f"{t['id']}-copy{n}"
            c["properties"]["name"] = f"{t['properties']['name']} #{n}"
            c["geometry"]["coordinates"] = [[x + 0.001 * n, y, *rest] for x, y, *rest in c["geometry"]["coordinates"]]
            extra.append(c)
    data["features"] = data["features"][:-2] + extra + data["features"][-2:]
    raw = json.dumps(data, indent=2).encode()
    target.write_bytes(raw)
    return len(raw)


async def _commands_async(ws: Path, zone: dict[str, Any], apply_calls: int, render_calls: int) -> list[list[float]]:
    """apply_command (setSelection, updateFeatures) and render, each alternating with the echo."""

    def select(i: int) -> dict[str, Any]:
        return {"filename": LARGE, "command": {"command": "setSelection", "payload": ["f-1"] if i % 2 else ["z-1"]}}

    def update(i: int) -> dict[str, Any]:
        changed = copy.deepcopy(zone)
        changed["properties"]["name"] = f"SAP 2 rev {i}"
        return {"filename": LARGE, "command": {"command": "updateFeatures", "payload": [changed]}}

    render = {"filename": LARGE, "width": 1024, "height": 768}
    echo = {"text": "ping"}
    async with harness.connected([server_cmd("debrief-state-mcp", ws), BASELINE_CMD]) as (state, base):
        applied = await harness.timed_rounds(
            [
                (state, "debrief_apply_command", select),
                (state, "debrief_apply_command", update),
                (base, "echo", echo),
            ],
            apply_calls,
            warmup=3,
        )
        rendered = await harness.timed_rounds(
            [(state, "debrief_render_plot", render), (base, "echo", echo)], render_calls, warmup=3
        )
    return [*applied.times, *rendered.times]


POC_STEPS = ("get_selection", "run_tool delete-features", "apply_command", "get_selection")


async def _poc_async(ws: Path, victim: str, rounds: int) -> tuple[list[list[float]], list[float]]:
    """The proof of concept, warm, ``rounds`` times (after one untimed): each step's seconds, and
    four echoes per round."""
    cmds = [server_cmd("debrief-state-mcp", ws), server_cmd("debrief-calc-mcp", ws), BASELINE_CMD]
    async with harness.connected(cmds) as (state, calc, base):
        checked(await state.call_tool("debrief_set_selection", {"filename": POC, "selectedIds": [victim]}), "select")
        clock = time.perf_counter
        steps: list[list[float]] = [[] for _ in POC_STEPS]
        echoes: list[float] = []
        flow: list[tuple[Any, str, Callable[[list[dict[str, Any]]], dict[str, Any]]]] = [
            (state, "debrief_get_selection", lambda _: {"filename": POC}),
            (calc, "run_tool", lambda _: {"tool": "delete-features", "plot": {"filename": POC, "selection": True}}),
            (state, "debrief_apply_command", lambda got: {"filename": POC, "command": got[1]["commands"][0]}),
            (state, "debrief_get_selection", lambda _: {"filename": POC}),
        ]
        for i in range(-1, rounds):
            answers: list[dict[str, Any]] = []
            for k, (client, tool, args) in enumerate(flow):
                start = clock()
                answers.append(checked(await client.call_tool(tool, args(answers)), POC_STEPS[k]))
                if i >= 0:
                    steps[k].append(clock() - start)
            selection, _run, applied, after = answers
            if selection["selectedIds"] != [victim] or applied["deleted_ids"] != [victim] or after["selectedIds"]:
                raise RuntimeError(f"the workflow went wrong: {selection}, {applied}, {after}")
            checked(await state.call_tool("debrief_undo", {"filename": POC}), "undo")  # the feature comes back
            start = clock()
            for _ in range(4):
                await base.call_tool("echo", {"text": "ping"})
            if i >= 0:
                echoes.append(clock() - start)
    return steps, echoes


def collect(tmp: Path, quick: bool) -> Section:
    """debrief-state-mcp's figures, each beside its baseline; the workspace under ``tmp``."""
    import anyio

    apply_calls, poc_rounds, render_calls, big_mb = SIZES[quick]
    section = Section("debrief-state-mcp")
    ws = tmp / "ws"
    ws.mkdir()
    shutil.copy(PLOTS / LARGE, ws / LARGE)
    shutil.copy(PLOTS / LARGE, ws / POC)
    big_bytes = section.stage("big plot", lambda: make_big_plot(ws / BIG, big_mb))
    large_kb = (ws / LARGE).stat().st_size / 1e3
    section.stage(
        "server",
        lambda: harness.add_server_figures(
            section,
            server_cmd("debrief-state-mcp", ws),
            warm=[
                (f"get_selection ({large_kb:.0f} KB plot)", "debrief_get_selection", {"filename": LARGE}),
                (f"get_selection ({big_bytes / 1e6:.0f} MB plot)", "debrief_get_selection", {"filename": BIG}),
            ],
            quick=quick,
        ),
    )

    features = json.loads((ws / LARGE).read_bytes())["features"]
    zone = next(f for f in features if f.get("id") == "z-3")
    sel_t, upd_t, echo_t, render_t, echo_r = section.stage(
        "commands", lambda: anyio.run(_commands_async, ws, zone, apply_calls, render_calls)
    )
    e50 = statistics.median(echo_t)
    n = apply_calls
    for label, xs in (("setSelection", sel_t), ("updateFeatures (plot write)", upd_t)):
        p50 = statistics.median(xs)
        section.add(f"apply_command {label} p50, {n} calls (< 20 ms), vs echo", ms(p50), ms(e50), ratio(p50, e50))
        section.target(f"apply_command {label} p50 < 20 ms", p50 * 1000 < TARGETS["apply_ms"], ms(p50))

    victim = next(str(f["id"]) for f in features if (f.get("properties") or {}).get("dataType") == "reference-point")
    steps, echoes = section.stage("workflow", lambda: anyio.run(_poc_async, ws, victim, poc_rounds))
    flow = [sum(round_) for round_ in zip(*steps, strict=True)]
    f50, fe50 = statistics.median(flow), statistics.median(echoes)
    section.add(
        f"proof-of-concept workflow warm p50, {poc_rounds} rounds (< 50 ms), vs 4 echoes",
        ms(f50),
        ms(fe50),
        ratio(f50, fe50),
    )
    section.target(
        "proof-of-concept workflow warm p50 < 50 ms",
        f50 * 1000 < TARGETS["poc_ms"],
        f"{ms(f50)} (max {ms(max(flow))}; step p50s: "
        + ", ".join(f"{name} {ms(statistics.median(xs))}" for name, xs in zip(POC_STEPS, steps, strict=True))
        + ")",
    )

    r50, re50 = statistics.median(render_t), statistics.median(echo_r)
    section.add(
        f"render_plot 1024x768 p50, {render_calls} calls (< 300 ms), vs echo", ms(r50), ms(re50), ratio(r50, re50)
    )
    section.target("render 1024x768 p50 < 300 ms", r50 * 1000 < TARGETS["render_ms"], ms(r50))
    section.notes.append(
        "baselines: the bare MCPServer (cold start; echo round trips called alternately with ours); "
        "the workflow against four echoes, its number of round trips"
    )
    return section


def main() -> None:
    harness.script_main("debrief-state-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
