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
6. ``debrief_create_plot`` with two imported tracks, as the analyst's first step: each round
   ``run_tool import-rep`` of the two REP files of ``tests/data/rep`` on ``debrief-calc-mcp`` (their
   refs), then ``debrief_create_plot`` with both refs under a new filename (timed: the refs resolved
   from the store, the plot built, locked and written atomically, opened for every client); an
   untimed ``debrief_close_plot`` keeps the open set the same size for the next round. Baselines
   in the same rounds: the echo (and three echoes for the imports and the create together);
   ``baseline_answer_server.py`` returning the very same answer (what the SDK pays for its size);
   and the domain's floor in process: ``json`` load of the plot just made, the ``json.dumps`` the
   plot is written with, and a bare atomic write (temporary file, fsync, rename, fsync of the
   folder).
7. a full read of a 100,000-point timed track in pages over stdio: a plot holding
   ``bench_paging.synthetic_track`` (deterministic), read whole with ``debrief_get_features(ids=[
   track], detail="full")`` following ``next_cursor``, the parts checked to join back into the track
   exactly (``debrief_calc.tracks.paging.join_parts``): pages, total and ms per page (median of a few
   whole reads, after one untimed read that also parses the plot). Baselines: as many round trips
   to ``baseline_answer_server.py`` returning a page of the median size, alternated page by page
   with ours; and one compact ``json.dumps`` of the whole track.

Results are ratios to the echo round trip measured in the same run: these machines are shared
and noisy. ``--quick`` shrinks every size (and the big plot to 5 MB) for a smoke run.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as harness
from _harness import BASELINE_CMD, Section, checked, ms, ratio, server_cmd

HERE = Path(__file__).resolve().parent
PLOTS = HERE.parent / "tests" / "data" / "plots"
REPS = HERE.parent / "tests" / "data" / "rep"
REP_FILES = ("valid_boat1.rep", "valid_boat2.rep")  # NELSON (402 fixes), COLLINGWOOD (403)
ANSWER_CMD = [sys.executable, str(HERE / "baseline_answer_server.py")]
LARGE = "large-sample.plot.json"
BIG = "big.plot.json"
POC = "poc.plot.json"
TARGETS = {"apply_ms": 20.0, "poc_ms": 50.0, "render_ms": 300.0}


#: apply_command calls, workflow rounds, render calls, MB of the big plot: full, and --quick.
SIZES = {False: (100, 50, 20, 50), True: (10, 3, 3, 5)}
#: create_plot rounds, points of the paged track, whole reads of it: full, and --quick.
MORE_SIZES = {False: (50, 100_000, 3), True: (3, 5_000, 1)}


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


def bare_atomic_write(path: Path, data: bytes) -> None:
    """The least a safe write does: a temporary file beside, fsync, rename over, fsync the folder."""
    fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def domain_floor_of_create(plot: Path, out: Path) -> float:
    """Seconds to load the features of ``plot`` (the one just made), encode them as plots are
    written (``indent=2``) and write them atomically to ``out``: what making that file costs at least."""
    start = time.perf_counter()
    data = json.loads(plot.read_bytes())
    bare_atomic_write(out, json.dumps(data, indent=2, ensure_ascii=False).encode())
    return time.perf_counter() - start


CREATE_SERIES = ("imports + create", "create", "echo", "3 echoes", "same answer", "in process")


async def _create_async(ws: Path, scratch: Path, rounds: int, warmup: int = 2) -> tuple[dict[str, list[float]], int]:
    """``rounds`` timed rounds (after ``warmup``): import both REP files, create a plot from their
    refs, close it (untimed); the echo, the answer server and the in-process floor in the same
    rounds. Returns each series' seconds and the tracks' point count."""
    clock = time.perf_counter
    series: dict[str, list[float]] = {key: [] for key in CREATE_SERIES}
    answer_file = scratch / "create-answer.json"
    cmds = [server_cmd("debrief-state-mcp", ws), server_cmd("debrief-calc-mcp", ws), BASELINE_CMD]
    async with harness.connected(cmds) as (state, calc, base):
        points = 0

        async def one_round(i: int, answer: Any) -> None:
            nonlocal points
            start = clock()
            refs = []
            for rep in REP_FILES:
                run = {"tool": "import-rep", "parameters": {"path": rep}}
                refs.append({"ref": checked(await calc.call_tool("run_tool", run), "import-rep")["stored"]["ref"]})
            middle = clock()
            name = f"created-{i + warmup}.plot.json"
            result = await state.call_tool("debrief_create_plot", {"filename": name, "features": refs})
            end = clock()
            made = checked(result, "debrief_create_plot")
            if len(made["added_ids"]) != len(REP_FILES) or made["open_plots"] != [name]:
                raise RuntimeError(f"debrief_create_plot went wrong: {made}")
            checked(await state.call_tool("debrief_close_plot", {"filename": name}), "debrief_close_plot")
            if answer is None:  # a warm-up round: the answer the answer server will give
                answer_file.write_text(result.content[0].text, encoding="utf-8")
                points = sum(
                    f["point_count"]
                    for f in checked(
                        await state.call_tool("debrief_get_features", {"filename": name}), "debrief_get_features"
                    )["features"]
                    if f["kind"] == "track"
                )
                return
            echoes = []
            for _ in range(3):
                e0 = clock()
                checked(await base.call_tool("echo", {"text": "ping"}), "echo")
                echoes.append(clock() - e0)
            a0 = clock()
            checked(await answer.call_tool("answer", {"text": name}), "answer")
            same = clock() - a0
            floor = domain_floor_of_create(ws / name, scratch / "floor.plot.json")
            if i >= 0:
                for key, value in zip(
                    CREATE_SERIES, (end - start, end - middle, echoes[0], sum(echoes), same, floor), strict=True
                ):
                    series[key].append(value)

        for i in range(-warmup, -1):
            await one_round(i, None)
        async with harness.connected([[*ANSWER_CMD, str(answer_file)]]) as (answer,):
            for i in range(-1, rounds):
                await one_round(i, answer)
    return series, points


async def _paged_read_async(ws: Path, scratch: Path, plot: str, track: dict[str, Any], reads: int) -> dict[str, Any]:
    """Whole reads of ``track`` from ``plot`` in pages, each page alternated with a round trip to the
    answer server (a page of the median size); the first read untimed."""
    from debrief_calc.tracks.paging import join_parts

    first = {"filename": plot, "ids": [track["id"]], "detail": "full"}
    clock = time.perf_counter
    async with harness.connected([server_cmd("debrief-state-mcp", ws)]) as (state,):

        async def read_whole(answer: Any) -> tuple[float, float, list[str]]:
            parts: list[dict[str, Any]] = []
            texts: list[str] = []
            ours = base = 0.0
            cursor: str | None = None
            while True:
                start = clock()
                result = await state.call_tool("debrief_get_features", first | ({"cursor": cursor} if cursor else {}))
                ours += clock() - start
                page = checked(result, "debrief_get_features")
                parts += page["features"]
                texts.append(result.content[0].text)
                if answer is not None:
                    start = clock()
                    await answer.call_tool("answer", {"text": "page"})
                    base += clock() - start
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            joined = {k: v for k, v in join_parts(parts).items() if k != "ref"}  # the listing's own ref
            if joined != track:
                raise RuntimeError(f"the {len(texts)} pages of {plot} do not join back into its track")
            return ours, base, texts

        _, _, texts = await read_whole(None)
        median_page = sorted(texts, key=len)[len(texts) // 2]
        (scratch / "page-answer.json").write_text(median_page, encoding="utf-8")
        totals: list[tuple[float, float]] = []
        async with harness.connected([[*ANSWER_CMD, str(scratch / "page-answer.json")]]) as (answer,):
            await answer.call_tool("answer", {"text": "warm"})
            for _ in range(reads):
                ours, base, again = await read_whole(answer)
                if len(again) != len(texts):
                    raise RuntimeError(f"{len(again)} pages, then {len(texts)}")
                totals.append((ours, base))
    return {
        "pages": len(texts),
        "page_chars": len(median_page),
        "largest": max(map(len, texts)),
        "ours": statistics.median(o for o, _ in totals),
        "base": statistics.median(b for _, b in totals),
    }


def add_create_figures(section: Section, tmp: Path, rounds: int) -> None:
    """Figure 6: ``debrief_create_plot`` with two imported tracks, beside its three baselines."""
    import anyio

    ws, scratch = tmp / "ws-create", tmp / "create-scratch"
    ws.mkdir()
    scratch.mkdir()
    for rep in REP_FILES:
        shutil.copy(REPS / rep, ws / rep)
    series, points = anyio.run(_create_async, ws, scratch, rounds)
    p50 = {key: statistics.median(xs) for key, xs in series.items()}
    head = f"create_plot, 2 imported tracks ({points:,} fixes) p50, {rounds} rounds"
    section.add(f"{head}, vs echo", ms(p50["create"]), ms(p50["echo"]), ratio(p50["create"], p50["echo"]))
    section.add(
        "  same, vs bare MCPServer returning the same answer",
        ms(p50["create"]),
        ms(p50["same answer"]),
        ratio(p50["create"], p50["same answer"]),
    )
    section.add(
        "  same, vs json load+dump+atomic write in process",
        ms(p50["create"]),
        ms(p50["in process"]),
        ratio(p50["create"], p50["in process"]),
    )
    section.add(
        "  import-rep x2 + create_plot p50, vs 3 echoes",
        ms(p50["imports + create"]),
        ms(p50["3 echoes"]),
        ratio(p50["imports + create"], p50["3 echoes"]),
    )
    section.notes.append(
        "create_plot: each round imports valid_boat1.rep and valid_boat2.rep (run_tool import-rep on "
        "debrief-calc-mcp) and creates a new plot from their two refs; the in-process floor loads the "
        "plot just made, encodes it with indent 2 and writes it atomically (fsync of file and folder); "
        "the server also resolves the refs from the store, takes the plot's lock and opens the plot "
        "for every client (a store write with fsync)"
    )


def add_paging_figures(section: Section, tmp: Path, points: int, reads: int) -> None:
    """Figure 7: a full paged read of a ``points``-point track, beside its two baselines."""
    import anyio
    from bench_paging import synthetic_track

    ws, scratch = tmp / "ws-paging", tmp / "paging-scratch"
    ws.mkdir()
    scratch.mkdir()
    track = synthetic_track(points)
    plot = "long-track.plot.json"
    (ws / plot).write_text(
        json.dumps({"type": "FeatureCollection", "features": [track]}, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    dumps = []
    for _ in range(3):
        took, _text = harness.timed(lambda: json.dumps(track, separators=(",", ":"), ensure_ascii=False))
        dumps.append(took)
    got = anyio.run(_paged_read_async, ws, scratch, plot, track, reads)
    pages, ours, base, once = got["pages"], got["ours"], got["base"], statistics.median(dumps)
    head = f"get_features full read, {points:,}-point track ({pages} pages), median of {reads}"
    section.add(f"{head}, vs answer echoes", harness.s(ours), harness.s(base), ratio(ours, base))
    section.add(
        f"  same, ms per page, vs an answer of {got['page_chars']:,} chars",
        ms(ours / pages),
        ms(base / pages),
        ratio(ours, base),
    )
    section.add("  same total, vs one json.dumps of the track", harness.s(ours), ms(once), ratio(ours, once))
    section.notes.append(
        f"get_features full read: bench_paging.synthetic_track({points:,}) (ISO time and speed per point) in a "
        f"plot of {(ws / plot).stat().st_size / 1e6:.0f} MB; pages of up to {got['largest']:,} characters joined back "
        "exactly (join_parts); baseline: baseline_answer_server.py returning a page of the median size, called "
        "after each of our pages, and one compact json.dumps of the track (median of 3)"
    )


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
    create_rounds, track_points, whole_reads = MORE_SIZES[quick]
    section.stage("create", lambda: add_create_figures(section, tmp, create_rounds))
    section.stage("paging", lambda: add_paging_figures(section, tmp, track_points, whole_reads))
    return section


def main() -> None:
    harness.script_main("debrief-state-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
