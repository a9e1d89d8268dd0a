"""A tour of the suite through a small MCP host: three servers over real stdio, one coordinator.

Run from the repository root after installing the package::

    python examples/tour.py              # everything in a temporary folder, removed at the end
    python examples/tour.py --keep DIR   # keep the workspace, the artifact stores and the PNG in DIR

What it does, as the chat host of seed 004 would: it generates an example workspace
(``examples/make_workspace.py``: three legacy REP files, two ships that pass close with
narratives, the exercise area as a ``;CIRCLE:`` line and reference marks as ``;TEXT:`` labels, a
trawler nearby; no plot yet; and a small code project) into a folder with a space in its name;
reads ``mcp_config.example.json`` (the console scripts, each on ``${workspaceFolder}``: here the
plots, and the code project for llmem); starts the three servers with
the coordinator (``llmem/host/``), which lists their tools under qualified names and reads each
server's ``tool-descriptions`` prompt; then does an analyst's job as a model would, reading each
answer for the next call (``stored.ref``, ``stored.use``, ``nextAction``, feature summaries):

  (a) llmem: parse the project, annotate a file through generate_prompt → store_llm_result,
      one answer malformed on purpose refused (as it should be) and retried on the same ticket;
  (b) debrief-calc import-rep of each REP file (each answer too big for the cap comes back as a
      stored ``{"ref": …}``) → debrief-state debrief_create_plot from those refs: a new plot,
      opened, its time window and viewport fitted to the tracks; the ships recoloured with
      debrief_set_properties;
  (c) analysis by plot reference, ids from debrief_get_features: closest-approach in yards
      (checked against the designed encounter), track-stats of the three tracks in one call,
      speed-filter and zone-transits (checked against the design too);
  (d) the seed's "delete the selected feature": select a stale reference mark, delete-features
      on the plot selection, debrief_apply_command with its command;
  (e) the two ships selected, the plot's time moved to the CPA, a PNG rendered with the CPA
      line and saved to disk;
  (f) the calc server's summarize-analysis of the results through the callback, read back with
      get_result by the ref store_llm_result answers; and a plot summary through the state
      server's callback, kept in the plot as an annotation;
  (g) the analyst's instruments: the tote at the plot's current time (the CPA, as (e) left it),
      ARGONAUT's legs (checked against the design) marked in the plot with the answer's
      addFeatures command, range-bearing every minute over the hour round the CPA, and
      render_series of that result (its ref from the answer's keep): a PNG with the CPA marked;
  (h) sensors (``tour_sensors.py``): legacy Debrief's SATC data imported (ownship, its cuts as a
      ``.dsf`` and a REP file, the true track), the cuts drawn, tma-solve of the first leg's cuts
      and of all of them (the target's turn found), bearing-residuals, the solution on the plot,
      every figure beside the truth read from the true track;
  (i) an hour's copy of the exercise by reference (each ref with its window), every pass of each
      pair (closest-approach, range-bearing) and close-quarters.

The host's model is played by ``stand_in_llm``: a clearly labelled, DETERMINISTIC STAND-IN that
answers from the prompt's own text; no model is called. The tour exits non-zero if any step fails.
"""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import json
import os
import shutil
import struct
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # make_workspace, next to this file
sys.path.insert(1, str(ROOT))  # the coordinator, when run from a checkout without an install

from make_workspace import make_workspace  # noqa: E402
from tour_sensors import step_h, step_i  # noqa: E402
from tour_transcript import YARD_M, StepFailed, check, dm, error_of, hm, ok, say, seconds, section  # noqa: E402

from llmem.host import (  # noqa: E402
    ArgumentError,
    Coordinator,
    HostError,
    NameConflict,
    ServerSpec,
    load_config,
)
from llmem.host.providers.standin import stand_in_answer  # noqa: E402

CONFIG = ROOT / "mcp_config.example.json"
SCRIPTS = ("llmem-mcp", "debrief-calc-mcp", "debrief-state-mcp")


# --------------------------------------------------------------------------------------------
# the host's model: a deterministic stand-in
# --------------------------------------------------------------------------------------------


def stand_in_llm(prompt: str, task: str) -> str:
    """STAND-IN FOR THE HOST'S MODEL: answers from the prompt's own text, deterministically
    (the same stand-in ``llmem-host --provider stand-in`` uses)."""
    return stand_in_answer(prompt, task)


# --------------------------------------------------------------------------------------------
# the configuration
# --------------------------------------------------------------------------------------------


def script_command(script: str) -> tuple[str, list[str]]:
    """The console script next to this Python, or the entry point run by this Python."""
    exe = Path(sys.executable).with_name(script + (".exe" if os.name == "nt" else ""))
    if exe.exists():
        return str(exe), []
    (ep,) = importlib.metadata.entry_points(group="console_scripts", name=script)
    module, func = ep.value.split(":")
    return sys.executable, ["-c", f"import sys; from {module} import {func}; sys.exit({func}())"]


def servers_from_config(plots: Path, project: Path, logs: Path) -> tuple[list[ServerSpec], str]:
    """The config's servers, each on its folder: llmem on the code project, the Debrief servers on
    the plots (``${workspaceFolder}``, which ``llmem-host --workspace`` fills for all three)."""
    on_plots = load_config(CONFIG, {"${workspaceFolder}": str(plots)})
    on_project = {s.name: s for s in load_config(CONFIG, {"${workspaceFolder}": str(project)})}
    specs = [on_project[s.name] if s.name == "llmem" else s for s in on_plots]
    env_extra = {"LLMEM_LOG_DIR": os.environ.get("LLMEM_LOG_DIR", str(logs))}
    if "LLMEM_DATA_DIR" in os.environ:
        env_extra["LLMEM_DATA_DIR"] = os.environ["LLMEM_DATA_DIR"]
    out = []
    for spec in specs:
        command, prefix = script_command(spec.command) if spec.command in SCRIPTS else (spec.command, [])
        env = {**(spec.env or {}), **env_extra}
        out.append(ServerSpec(spec.name, command, (*prefix, *spec.args, "--log-level", "warning"), env, spec.cwd))
    how = (
        "the config names the console scripts; the tour launches those next to this Python "
        f"({Path(sys.executable).parent}), so it runs without activating the venv"
    )
    return out, how


# --------------------------------------------------------------------------------------------
# the tour
# --------------------------------------------------------------------------------------------


async def tour(base: Path) -> None:
    print("The suite through a small MCP host (seed 004): three stdio servers behind one coordinator.")
    print("The host's LLM is played by a DETERMINISTIC STAND-IN (stand_in_llm): no model is called.")
    section("setup")
    t = time.perf_counter()
    ws = make_workspace(base / "workspace")
    plots, project = ws["plots_dir"], ws["project_dir"]
    say((time.perf_counter() - t) * 1000, f"generated the example workspace: {ws['root']}")
    for name, ship in ws["ships"].items():
        extra = ""
        if ship["file"] == ws["zone"]["file"]:
            extra = (
                f", the exercise area {ws['zone']['name']} as a ;CIRCLE: line, "
                f"{len(ws['reference_points'])} reference marks as ;TEXT: lines"
            )
        say(None, f"plots/{ship['file']}: {name}, {ship['fixes']} fixes, {ship['narratives']} narratives{extra}")
    say(None, f"plots/: legacy REP files only (CRLF); no plot yet: the tour makes {ws['plot_name']} from them")
    sources = [p for p in ws["code_files"] if p.suffix in (".py", ".ts") and "build" not in p.parts]
    say(None, f"project/: {len(sources)} Python and TypeScript files, a .gitignore and an ignored build/ folder")
    specs, how = servers_from_config(plots, project, base / "logs")
    say(
        None,
        f"config {CONFIG.name}: servers {', '.join(s.name for s in specs)}; ${{workspaceFolder}}: plots/ (llmem: project/)",
    )
    say(None, f"launch: {how}")
    say(None, f"server logs: --log-level warning, files under {(specs[0].env or {}).get('LLMEM_LOG_DIR')}")

    section("start: discover tools, read each tool-descriptions prompt")
    t = time.perf_counter()
    async with Coordinator(specs, mode="legacy", timeout_s=120.0, startup_timeout_s=300.0) as host:
        say(
            (time.perf_counter() - t) * 1000,
            f"started {len(host.servers)} servers over stdio, {len(host.tools())} tools as server:tool",
        )
        for name in host.servers:
            guide = host.descriptions(name)
            source = "generated fallback" if host.descriptions_generated(name) else "tool-descriptions prompt"
            tools = ", ".join(e.tool.name for e in host.tools(name))
            say(None, f"{name}: {source}, {len(guide)} chars, '{guide.splitlines()[0]}'; tools: {tools}")
        await host_checks(host)

        await step_a(host)
        plot = await step_b(host, ws)
        results, cpa = await step_c(host, ws, plot)
        await step_d(host, plot)
        await step_e(host, plot, cpa, plots)
        await step_f(host, plot, results)
        await step_g(host, ws, plot, cpa, plots)
        await step_h(host, plots)
        await step_i(host, plot.filename, plot.ids)
        t = time.perf_counter()
    say((time.perf_counter() - t) * 1000, "servers stopped (stdin closed, each exited)")


async def host_checks(host: Coordinator) -> None:
    """What the coordinator itself refuses, before any server is asked."""
    t = time.perf_counter()
    try:
        host.resolve("generate_prompt")
    except NameConflict as exc:
        say((time.perf_counter() - t) * 1000, f"host: the bare name 'generate_prompt' refused, as it should: {exc}")
    else:
        raise StepFailed("an ambiguous bare tool name was resolved")
    t = time.perf_counter()
    try:
        await host.call("debrief-calc:run_tool", {"tool": "track-stats", "plot": {"selection": True}})
    except ArgumentError as exc:
        say((time.perf_counter() - t) * 1000, f"host: arguments that break the schema refused, as they should: {exc}")
    else:
        raise StepFailed("arguments that break the schema were sent")


async def step_a(host: Coordinator) -> None:
    section("(a) llmem: parse the project, annotate a file through the callback")
    r = await host.call("llmem:generate_artifact", {"path": "."})
    d = ok(r, "parse")["data"]
    say(
        r.duration_ms,
        f"llmem:generate_artifact path='.' → parsed {d['parsed']}, unchanged {d['unchanged']}, "
        f"skipped {d['skipped']} ({', '.join(f'{k} {v}' for k, v in d['skipped_by_reason'].items())}), failed {d['failed']}",
    )
    r = await host.call("llmem:get_artifact", {"path": "fleet/tracks.py"})
    outline = ok(r, "outline")["data"]["content"]
    names: list[str] = []
    stack = list(reversed(outline["symbols"]))
    while stack:
        symbol = stack.pop()
        names.append(f"{symbol['kind']} {symbol['qualified_name']}")
        stack.extend(reversed(symbol.get("children", [])))
    say(r.duration_ms, f"llmem:get_artifact fleet/tracks.py outline → {', '.join(names)}")
    r = await host.call("llmem:generate_prompt", {"path": "fleet/tracks.py", "task": "annotate"})
    ready = ok(r, "generate_prompt")
    say(
        r.duration_ms,
        f"llmem:generate_prompt annotate → {ready['status']}, {len(ready['promptForHostLLM'])}-char prompt, "
        f"ticket {ready['callbackArgs']['ticket'][:8]}…",
    )
    bad = "Sure! Here are the notes you asked for: Track keeps fixes, Fix is a position."
    say(0.0, f"STAND-IN LLM (malformed on purpose, not JSON): {bad[:48]}…")
    r = await host.call("llmem:store_llm_result", {**ready["callbackArgs"], "result": bad, "model": "stand-in"})
    if not r.is_error:
        raise StepFailed("the malformed answer was accepted")
    say(
        r.duration_ms, f"llmem:store_llm_result → refused, as it should: {error_of(r)[:100]}…; retry on the same ticket"
    )
    t = time.perf_counter()
    answer = stand_in_llm(ready["promptForHostLLM"], "annotate")
    say((time.perf_counter() - t) * 1000, f"STAND-IN LLM: JSON notes for {len(json.loads(answer)['symbols'])} symbols")
    r = await host.call("llmem:store_llm_result", {**ready["callbackArgs"], "result": answer, "model": "stand-in"})
    stored = ok(r, "store_llm_result")["data"]
    say(r.duration_ms, f"llmem:store_llm_result (same ticket) → stored at step {stored['step']}")
    r = await host.call("llmem:get_artifact", {"path": "fleet/tracks.py", "kind": "annotate"})
    notes = ok(r, "read notes")["data"]
    say(
        r.duration_ms,
        f"llmem:get_artifact annotate → {len(notes['content']['symbols'])} symbols described, status {notes['status']}",
    )


class Plot:
    """What the tour learnt about the plot it made, from the answers: its name and feature ids."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.ids: dict[str, str] = {}  # feature name → id, from debrief_get_features summaries

    def ref(self, *names: str) -> dict[str, Any]:
        return {"filename": self.filename, "feature_ids": [self.ids[n] for n in names]}


async def _import_rep(host: Coordinator, ws: dict[str, Any]) -> list[dict[str, Any]]:
    """Each REP file through import-rep; the answers, each with the ref of its stored run."""
    runs: list[dict[str, Any]] = []
    for path in ws["rep_files"]:
        r = await host.call("debrief-calc:run_tool", {"tool": "import-rep", "parameters": {"path": path.name}})
        run = ok(r, f"import-rep {path.name}")
        rep, stored = run["report"], run.get("stored")
        if not stored or "ref" not in stored:
            raise StepFailed(f"import-rep {path.name}: every import answer should hold a stored ref")
        # summaries (over the cap) carry kind; whole features (under it) properties.kind or dataType
        kinds = Counter(
            str(f.get("kind") or f.get("properties", {}).get("kind") or f.get("properties", {}).get("dataType"))
            for f in run["features"]
        )
        listed = "as summaries" if "features" in stored else "whole"
        say(
            r.duration_ms,
            f"debrief-calc:run_tool import-rep {path.name} → {rep['fix_count']} fixes, {rep['narrative_count']} narratives, "
            f"{len(rep['errors'])} bad lines, {len(rep['skipped'])} skipped; features "
            f"{', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))} {listed}; stored.ref {stored['ref']}",
        )
        check(not rep["errors"] and not rep["skipped"], f"{path.name} has lines the importer could not read")
        if not runs:
            say(None, f"  stored.use: {stored['use']}")
        runs.append(run)
    return runs


async def _create_plot(host: Coordinator, plot: Plot, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """debrief_create_plot from the imports' refs, as the guides and each answer's stored.use say."""
    refs = [{"ref": run["stored"]["ref"]} for run in runs]
    args = {"filename": plot.filename, "title": "Exercise KILO, 14 March 2025", "features": refs}
    r = await host.call("debrief-state:debrief_create_plot", args)
    created = ok(r, "create plot")
    say(
        r.duration_ms,
        f"debrief-state:debrief_create_plot {plot.filename} features=[{len(refs)} refs] → {created['message']}",
    )
    return created


async def step_b(host: Coordinator, ws: dict[str, Any]) -> Plot:
    section("(b) from REP files to a new plot: debrief-calc import-rep → debrief-state debrief_create_plot")
    plot = Plot(ws["plot_name"])
    runs = await _import_rep(host, ws)
    created = await _create_plot(host, plot, runs)
    window = created["timeState"]
    starts = [s["start"] for s in ws["ships"].values()]
    ends = [s["end"] for s in ws["ships"].values()]
    check(
        seconds(window["start"]) == min(map(seconds, starts)) and seconds(window["end"]) == max(map(seconds, ends)),
        f"the new plot's time window {window} is not the tracks' period",
    )
    say(
        None,
        f"  time window {hm(window['start'])}..{hm(window['end'])} (the tracks' period), "
        f"viewport {[round(b, 3) for b in created['viewportState']['bounds']]}",
    )
    r = await host.call("debrief-state:debrief_get_features", {"filename": plot.filename})
    summaries = ok(r, "get features")["features"]
    plot.ids = {str(f["name"]): str(f["id"]) for f in summaries if f.get("name")}
    kinds = Counter(str(f["kind"]) for f in summaries)
    tracks = [f"{f['name']} {f['id']}" for f in summaries if f["kind"] == "track"]
    zones = [f"{f['name']} {f['id']}" for f in summaries if f["kind"] == "zone"]
    say(
        r.duration_ms,
        f"debrief-state:debrief_get_features (summaries) → {', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}; "
        f"tracks {', '.join(tracks)}; zone {', '.join(zones)}",
    )
    narratives = sum(s["narratives"] for s in ws["ships"].values())
    check(
        sorted(ws["ships"]) == sorted(f["name"] for f in summaries if f["kind"] == "track")
        and kinds["zone"] == 1
        and kinds["annotation"] == narratives + len(ws["reference_points"]),
        "the plot does not hold every track, zone, narrative and reference mark of the REP files",
    )
    # REP symbols carry no colour the importer keeps: the analyst's colours, as properties
    for name, colour in (("ARGONAUT", "#E00000"), ("BLUE HERON", "#0050FF")):
        r = await host.call(
            "debrief-state:debrief_set_properties", {"ids": [plot.ids[name]], "properties": {"stroke": colour}}
        )
        ok(r, "set properties")
        say(r.duration_ms, f"debrief-state:debrief_set_properties {plot.ids[name]} stroke {colour}")
    return plot


async def step_c(host: Coordinator, ws: dict[str, Any], plot: Plot) -> tuple[list[str], dict[str, Any]]:
    section("(c) analysis by plot reference: closest-approach, track-stats, speed-filter, zone-transits")
    results: list[str] = []

    async def run(
        tool: str, names: list[str], parameters: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], float]:
        args: dict[str, Any] = {"tool": tool, "plot": plot.ref(*names)}
        if parameters:
            args["parameters"] = parameters
        r = await host.call("debrief-calc:run_tool", args)
        features = ok(r, tool)["features"]
        results.extend(str(f["id"]) for f in features)
        return [f["properties"] for f in features], r.duration_ms

    designed = ws["cpa"]
    (cpa,), ms = await run("closest-approach", designed["ships"], {"distance_unit": "yd"})
    metres = cpa["range"] * YARD_M
    say(
        ms,
        f"debrief-calc:run_tool closest-approach {cpa['name']} (distance_unit yd): {cpa['range']:.1f} {cpa['distance_unit']} "
        f"({metres:.1f} m) at {hm(cpa['time'])}, bearing {cpa['bearing']:.1f}°, between fixes: {cpa['between_fixes']}",
    )
    say(
        None,
        f"  designed by make_workspace: {designed['range_yd']:.1f} yd ({designed['range_m']:.1f} m) at {hm(designed['time'])}"
        " (checked: within 5 m, to the second)",
    )
    check(
        cpa["distance_unit"] == "yd"
        and abs(metres - designed["range_m"]) < 5
        and hm(cpa["time"]) == hm(designed["time"]),
        "the CPA found differs from the designed one",
    )

    stats, ms = await run("track-stats", list(ws["ships"]))
    say(ms, f"debrief-calc:run_tool track-stats of {len(ws['ships'])} tracks in one call → {len(stats)} results")
    for props in stats:
        s = props["statistics"]
        say(
            None,
            f"  {props['track_name']}: {s['point_count']} fixes, {s['distance_nm']:.2f} nm in {s['duration_hours']:.2f} h, "
            f"mean {s['mean_speed_kn']:.1f} kn, max {s['max_speed_kn']:.1f} kn, mean course {s['mean_course']:.0f}°",
        )
    check(sorted(p["track_name"] for p in stats) == sorted(ws["ships"]), "track-stats did not answer once per track")

    (fast,), ms = await run("speed-filter", ["ARGONAUT"], {"threshold_kn": 15})
    periods = ", ".join(
        f"{hm(p['start'])}–{hm(p['end'])} ({p['duration_s'] / 60:.0f} min, mean {p['mean_speed_kn']:.1f} kn)"
        for p in fast["periods"]
    )
    legs = [leg for leg in ws["ships"]["ARGONAUT"]["legs"] if leg["speed_kn"] > 15]
    say(ms, f"debrief-calc:run_tool speed-filter {fast['name']}: {fast['period_count']} period, {periods}")
    say(
        None,
        "  designed: "
        + ", ".join(f"{leg['speed_kn']:.0f} kn leg {hm(leg['start'])}–{hm(leg['end'])}" for leg in legs)
        + " (checked: the same to the second)",
    )
    check(
        [(hm(p["start"]), hm(p["end"])) for p in fast["periods"]] == [(hm(g["start"]), hm(g["end"])) for g in legs],
        "speed-filter's periods differ from the designed legs",
    )

    zone = ws["zone"]["name"]
    transits, ms = await run("zone-transits", [*ws["ships"], zone])
    say(ms, f"debrief-calc:run_tool zone-transits of {len(ws['ships'])} tracks and {zone} → {len(transits)} results")
    for props in transits:
        found = "; ".join(
            f"entry {hm(t['entry_time'])}, exit {hm(t['exit_time'])}, {t['duration_s'] / 60:.1f} min inside"
            for t in props["transits"]
        )
        say(None, f"  {props['name']}: {found or 'never inside'}")
        design = ws["zone"]["transits"][props["name"].split(" in ")[0]]
        check(
            len(design) == len(props["transits"])
            and all(
                abs(seconds(t["entry_time"]) - seconds(d["entry"])) <= 2
                and abs(seconds(t["exit_time"]) - seconds(d["exit"])) <= 2
                for t, d in zip(props["transits"], design, strict=True)
            ),
            f"{props['name']}: the transits differ from the designed ones {design}",
        )
    crossed = ws["zone"]["transits"][ws["zone"]["crossed_by"]][0]
    say(
        None,
        f"  designed: {ws['zone']['crossed_by']} inside {hm(crossed['entry'])}–{hm(crossed['exit'])}, the others never "
        "(checked: entry and exit within 2 s)",
    )
    return results, cpa


async def step_d(host: Coordinator, plot: Plot) -> None:
    section("(d) delete the selected feature: state selection → calc delete-features → state applies")
    name = "BUOY E1 (OFF STATION)"  # a reference mark the analyst finds stale
    victim = plot.ids[name]
    r = await host.call("debrief-state:debrief_set_selection", {"selectedIds": [victim]})
    ok(r, "set selection")
    say(r.duration_ms, f"debrief-state:debrief_set_selection [{victim}] ({name}, a stale reference mark)")
    r = await host.call("debrief-state:debrief_get_selection", {})
    say(r.duration_ms, f"debrief-state:debrief_get_selection → {ok(r, 'get selection')['selectedIds']}")
    r = await host.call(
        "debrief-calc:run_tool", {"tool": "delete-features", "plot": {"filename": plot.filename, "selection": True}}
    )
    command = ok(r, "delete-features")["commands"][0]
    say(r.duration_ms, f"debrief-calc:run_tool delete-features (plot selection) → {json.dumps(command)}")
    r = await host.call("debrief-state:debrief_apply_command", {"command": command})
    applied = ok(r, "apply deleteFeatures")
    say(r.duration_ms, f"debrief-state:debrief_apply_command → deleted {applied['deleted_ids']}")
    r = await host.call("debrief-state:debrief_get_selection", {})
    left = ok(r, "get selection")["selectedIds"]
    say(r.duration_ms, f"debrief-state:debrief_get_selection → {left} (the deleted feature left the selection)")
    check(not left and applied["deleted_ids"] == [victim], "the selected feature was not deleted")


async def step_e(host: Coordinator, plot: Plot, cpa: dict[str, Any], folder: Path) -> None:
    section("(e) the two ships at their CPA: select, set the time, render a PNG with the CPA line")
    ships = [cpa["first_id"], cpa["second_id"]]
    r = await host.call("debrief-state:debrief_set_selection", {"selectedIds": ships})
    ok(r, "set selection")
    say(r.duration_ms, f"debrief-state:debrief_set_selection {ships}")
    r = await host.call("debrief-state:debrief_set_time", {"timeState": {"current": cpa["time"]}})
    state = ok(r, "set time")["timeState"]
    say(
        r.duration_ms,
        f"debrief-state:debrief_set_time current={cpa['time']} (the CPA, current alone) → "
        f"{hm(state['current'])} in {hm(state['start'])}..{hm(state['end'])}",
    )
    check(hm(state["current"]) == hm(cpa["time"]), "the plot's time is not the CPA")
    # the whole exercise, then (as a model does once it has looked: 420 m is a dot at that scale)
    # a box of about 2 nm around the two positions the closest-approach result gave
    lons, lats = zip(cpa["first_position"], cpa["second_position"], strict=True)
    box = [
        round(min(lons) - 0.05, 4),
        round(min(lats) - 0.025, 4),
        round(max(lons) + 0.05, 4),
        round(max(lats) + 0.025, 4),
    ]
    for fit, name in (("all", "exercise.png"), (box, "exercise-cpa.png")):
        r = await host.call(
            "debrief-state:debrief_render_plot", {"width": 1024, "height": 768, "fit": fit, "cpa": ships}
        )
        answer = ok(r, "render")
        if not r.images:
            raise StepFailed("debrief_render_plot returned no image")
        png = base64.b64decode(r.images[0].data)
        width, height = struct.unpack(">II", png[16:24])
        out = folder / name
        out.write_bytes(png)
        say(
            r.duration_ms,
            f"debrief-state:debrief_render_plot fit={fit} cpa={ships} → {r.images[0].mime_type} {width}×{height}, "
            f"at {hm(answer.get('time', cpa['time']))}, selected {answer.get('selectedIds')}",
        )
        say(None, f"PNG saved: {out} ({len(png)} bytes)")


async def step_f(host: Coordinator, plot: Plot, results: list[str]) -> None:
    section("(f) narratives through the callbacks: the analysis summarised, the plot summarised into it")
    r = await host.call("debrief-calc:generate_prompt", {"target": results, "task": "summarize-analysis"})
    ready = ok(r, "generate_prompt")
    say(
        r.duration_ms,
        f"debrief-calc:generate_prompt summarize-analysis of {len(results)} results → {ready['status']}, "
        f"{len(ready['promptForHostLLM'])}-char prompt",
    )
    t = time.perf_counter()
    summary = stand_in_llm(ready["promptForHostLLM"], "summarize-analysis")
    say((time.perf_counter() - t) * 1000, f"STAND-IN LLM: {len(summary.splitlines())}-line Markdown summary")
    r = await host.call(
        "debrief-calc:store_llm_result", {**ready["callbackArgs"], "result": summary, "model": "stand-in"}
    )
    stored = ok(r, "store_llm_result")
    ref = stored["data"]["ref"]
    say(r.duration_ms, f"debrief-calc:store_llm_result → stored at step {stored['data']['step']}, ref {ref}")
    say(None, f"  nextAction: {stored.get('nextAction')}")
    r = await host.call("debrief-calc:get_result", {"ref": ref})
    back = ok(r, "get_result")
    check(str(back.get("text", "")).strip() == summary.strip(), "get_result did not give back the stored summary")
    say(r.duration_ms, f"debrief-calc:get_result {ref} → {back['kind']}, {back['chars']} chars, the same text:")
    for line in summary.splitlines():
        if line:
            say(None, f"  | {line}")

    r = await host.call("debrief-state:generate_prompt", {"task": "summarize-plot"})
    ready = ok(r, "generate_prompt")
    say(
        r.duration_ms,
        f"debrief-state:generate_prompt summarize-plot → {ready['status']} for {ready['callbackArgs']['target']}, "
        f"{len(ready['promptForHostLLM'])}-char prompt (feature summaries, no coordinates)",
    )
    t = time.perf_counter()
    text = stand_in_llm(ready["promptForHostLLM"], "summarize-plot")
    say((time.perf_counter() - t) * 1000, f"STAND-IN LLM: {len(text.splitlines())}-line plot summary")
    r = await host.call(
        "debrief-state:store_llm_result",
        {**ready["callbackArgs"], "result": text, "model": "stand-in", "add_annotation": True},
    )
    stored = ok(r, "store_llm_result")
    note = stored["data"]["annotation"]
    say(
        r.duration_ms,
        f"debrief-state:store_llm_result add_annotation=true → annotation {note['id']} added: {note['added']}",
    )
    r = await host.call("debrief-state:debrief_get_features", {"ids": [note["id"]], "detail": "full"})
    (feature,) = ok(r, "read the annotation")["features"]
    check(str(feature["properties"].get("text", "")).strip() == text.strip(), "the plot summary is not in the plot")
    say(
        r.duration_ms,
        f"debrief-state:debrief_get_features {note['id']} (full) → in {plot.filename}: "
        f"'{feature['properties'].get('name')}', {len(text)} chars:",
    )
    for line in text.splitlines():
        if line:
            say(None, f"  | {line}")


async def step_g(host: Coordinator, ws: dict[str, Any], plot: Plot, cpa: dict[str, Any], folder: Path) -> None:
    section("(g) the analyst's instruments: the tote, the legs, the range-bearing series and its picture")
    designed = ws["cpa"]
    ships = designed["ships"]
    # the tote without a time: the plot's current time, which (e) set to the CPA
    r = await host.call("debrief-calc:run_tool", {"tool": "tote", "plot": plot.ref(*ships)})
    (tote,) = (f["properties"] for f in ok(r, "tote")["features"])
    say(
        r.duration_ms,
        f"debrief-calc:run_tool tote {' / '.join(ships)} ({tote['time_source']}, {hm(tote['time'])}): "
        f"{tote['range']:.1f} {tote['distance_unit']}, bearing {dm(tote['bearing'])}, relative "
        f"{abs(tote['relative_bearing']):.1f}° {tote['relative_bearing_side']}, ATB {abs(tote['atb']):.1f}° "
        f"{tote['atb_side']}, bearing rate {abs(tote['bearing_rate']):.1f}°/min {tote['bearing_rate_side']}",
    )
    say(
        None,
        f"  {ships[0]} {dm(tote['primary_course'])} {tote['primary_speed']:.1f} kn, "
        f"{ships[1]} {dm(tote['secondary_course'])} {tote['secondary_speed']:.1f} kn",
    )
    at_cpa = {
        name: next(g for g in ws["ships"][name]["legs"] if g["start"] <= designed["time"] < g["end"]) for name in ships
    }
    say(
        None,
        f"  designed at the CPA: {designed['range_m']:.0f} m, "
        + ", ".join(f"{n} {dm(at_cpa[n]['course'])} {at_cpa[n]['speed_kn']:.1f} kn" for n in ships)
        + " (checked: within 5 m, 1°, 0.3 kn)",
    )
    check(
        hm(tote["time"]) == hm(cpa["time"])
        and abs(tote["range"] * YARD_M - designed["range_m"]) < 5
        and abs(tote["primary_course"] - at_cpa[ships[0]]["course"]) < 1
        and abs(tote["secondary_course"] - at_cpa[ships[1]]["course"]) < 1
        and abs(tote["primary_speed"] - at_cpa[ships[0]]["speed_kn"]) < 0.3
        and abs(tote["secondary_speed"] - at_cpa[ships[1]]["speed_kn"]) < 0.3,
        f"the tote at the CPA differs from the design: {tote}",
    )

    # ARGONAUT's legs, marked in the plot (an answer over the cap gives summaries: read by its ref)
    name = ships[0]
    r = await host.call(
        "debrief-calc:run_tool", {"tool": "track-legs", "plot": plot.ref(name), "parameters": {"mark_legs": True}}
    )
    answer = ok(r, "track-legs")
    result = next(f for f in answer["features"] if "legs" in f.get("properties", {}))
    say(
        r.duration_ms,
        f"debrief-calc:run_tool track-legs {name} mark_legs=true → {result['properties']['leg_count']} legs, "
        f"{len(answer['features']) - 1} leg marks, commands {[c['command'] for c in answer['commands']]}",
    )
    if "ref" in result:  # a summary
        r = await host.call("debrief-calc:get_result", {"ref": result["ref"]})
        (result,) = ok(r, "get_result")["features"]
        say(r.duration_ms, f"debrief-calc:get_result {result['id']} → the legs whole")
    legs = result["properties"]["legs"]
    for leg in legs:
        say(
            None,
            f"  leg {leg['leg']}: {dm(leg['course'])} {leg['speed_kn']:.1f} kn {hm(leg['start'])}–{hm(leg['end'])}, "
            f"{leg['distance']:.2f} nm",
        )
    for turn in result["properties"]["manoeuvres"]:
        start, end = hm(turn["start"]), hm(turn["end"])
        when = f"at {start}" if start == end else f"{start}–{end}"  # a turn between two fixes: an instant
        speeds = f", {turn['speed_from_kn']:.1f} → {turn['speed_to_kn']:.1f} kn" if "speed_from_kn" in turn else ""
        say(None, f"  {when}: {turn['changed']}, {turn['turn_deg']:.0f}° to {turn['turn']}{speeds}")
    design = ws["ships"][name]["legs"]
    say(
        None,
        "  designed: "
        + ", ".join(f"{dm(g['course'])} {g['speed_kn']:.1f} kn {hm(g['start'])}–{hm(g['end'])}" for g in design)
        + " (checked: each leg within 1°, 0.3 kn and 2 min)",
    )
    check(
        len(legs) == len(design)
        and all(
            abs(leg["course"] - g["course"]) < 1
            and abs(leg["speed_kn"] - g["speed_kn"]) < 0.3
            and abs(seconds(leg["start"]) - seconds(g["start"])) <= 120
            and abs(seconds(leg["end"]) - seconds(g["end"])) <= 120
            for leg, g in zip(legs, design, strict=True)
        ),
        f"{name}'s legs differ from the designed ones",
    )
    (command,) = answer["commands"]
    r = await host.call("debrief-state:debrief_apply_command", {"command": command})
    marked = ok(r, "apply the leg marks")["added_ids"]
    say(
        r.duration_ms, f"debrief-state:debrief_apply_command {command['command']} → {len(marked)} leg marks in the plot"
    )
    check(len(marked) == len(legs), "not every leg was marked in the plot")

    # range-bearing every minute over the hour round the CPA, then its picture from the stored result
    day, mid = cpa["time"][:11], int(seconds(cpa["time"]) // 60)
    start, end = (f"{day}{m // 60:02d}:{m % 60:02d}:00Z" for m in (mid - 30, mid + 30))
    r = await host.call(
        "debrief-calc:run_tool",
        {
            "tool": "range-bearing",
            "plot": plot.ref(*ships),
            "time_start": start,
            "time_end": end,
            "parameters": {"interval_s": 60, "distance_unit": "yd"},
        },
    )
    run = ok(r, "range-bearing")
    (rb,) = run["features"]
    props = rb["properties"]
    say(
        r.duration_ms,
        f"debrief-calc:run_tool range-bearing every 60 s, window {hm(start)}–{hm(end)} → {props['sample_count']} "
        f"samples; true CPA {props['cpa_range']:.1f} yd at {hm(props['cpa_time'])}, least sample "
        f"{props['min_sampled_range']:.1f} yd at {hm(props['min_sampled_range_time'])}, peak bearing rate "
        f"{abs(props['peak_bearing_rate']):.1f}°/min {props['peak_bearing_rate_side']} at {hm(props['peak_bearing_rate_time'])}",
    )
    check(
        props["sample_count"] == 61
        and hm(props["cpa_time"]) == hm(cpa["time"])
        and abs(props["cpa_range"] - cpa["range"]) < 0.5,
        "range-bearing's true CPA differs from closest-approach's",
    )
    ref = f"debrief-calc:results/{rb['id']}"
    check(ref in run.get("keep", ""), "the range-bearing answer does not say how to keep its result")
    r = await host.call("debrief-calc:render_series", {"features": [{"ref": ref}]})
    drawn = ok(r, "render_series")
    if not r.images:
        raise StepFailed("render_series returned no image")
    png = base64.b64decode(r.images[0].data)
    out = folder / "exercise-series.png"
    out.write_bytes(png)
    say(
        r.duration_ms,
        f"debrief-calc:render_series [{ref}] → {r.images[0].mime_type} {drawn['width']}×{drawn['height']}, "
        f"{drawn['samples']} samples, panels {', '.join(p['label'] for p in drawn['panels'])}; "
        f"CPA marked: '{drawn['cpa']['label']}'",
    )
    say(None, f"PNG saved: {out} ({len(png)} bytes)")
    check(
        struct.unpack(">II", png[16:24]) == (drawn["width"], drawn["height"])
        and drawn["cpa"]["time"] == props["cpa_time"],
        "the series picture is not the size it says, or does not mark the CPA",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A tour of the suite through a small MCP host.")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the workspace, stores and PNG in DIR")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="llmem tour ") as tmp:
        base = (args.keep / "tour workspace") if args.keep else Path(tmp)
        if args.keep and base.exists():
            shutil.rmtree(base)
        base.mkdir(parents=True, exist_ok=True)
        try:
            anyio.run(tour, base.resolve())
        except (HostError, StepFailed) as exc:
            print(f"\nTOUR FAILED: {type(exc).__name__}: {exc}", flush=True)
            return 1
        total = time.perf_counter() - started
        kept = f"kept in {base.resolve()}" if args.keep else "removed (pass --keep DIR to keep it)"
        print(f"\nTour complete in {total:.1f} s, every step passed; the workspace is {kept}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
