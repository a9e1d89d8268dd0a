"""A tour of the suite through a small MCP host: three servers over real stdio, one coordinator.

Run from the repository root after installing the package::

    python examples/tour.py              # everything in a temporary folder, removed at the end
    python examples/tour.py --keep DIR   # keep the workspace, the artifact stores and the PNG in DIR

What it does, as the chat host of seed 004 would: it generates an example workspace
(``examples/make_workspace.py``: a Debrief plot with two ships that pass close and a zone one
of them crosses, a legacy REP file of a third ship, a small code project) into a folder with a
space in its name; reads ``mcp_config.example.json`` and fills in its placeholders; starts the
three servers with the coordinator (``llmem/host.py``), which lists their tools under qualified
names and reads each server's ``tool-descriptions`` prompt; then walks through

  (a) llmem: parse the project, annotate a file through generate_prompt → store_llm_result,
      one malformed answer refused and retried on the same ticket;
  (b) debrief-calc import-rep of the REP file → debrief-state applies its addFeatures command;
  (c) analysis by plot reference: track-stats, closest-approach, zone-transits;
  (d) the seed's "delete the selected feature" across the two Debrief servers;
  (e) a PNG of the plot, saved to disk;
  (f) a narrated summary of the analysis through the calc server's callback.

The host's model is played by ``stand_in_llm``: a clearly labelled, DETERMINISTIC STAND-IN that
answers from the prompt's own text; no model is called. The tour exits non-zero if any step fails.
"""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # make_workspace, next to this file
sys.path.insert(1, str(ROOT))  # the coordinator, when run from a checkout without an install

from make_workspace import PLOT_NAME, REP_NAME, make_workspace  # noqa: E402

from llmem.host import (  # noqa: E402
    ArgumentError,
    Coordinator,
    HostError,
    NameConflict,
    ServerSpec,
    ToolResult,
    load_config,
)

CONFIG = ROOT / "mcp_config.example.json"
SCRIPTS = ("llmem-mcp", "debrief-calc-mcp", "debrief-state-mcp")


class StepFailed(Exception):
    """A tool answered with an error where the tour expected success."""


# --------------------------------------------------------------------------------------------
# the host's model: a deterministic stand-in
# --------------------------------------------------------------------------------------------


def stand_in_llm(prompt: str, task: str) -> str:
    """STAND-IN FOR THE HOST'S MODEL: answers from the prompt's own text, deterministically."""
    if task == "annotate":
        listed = prompt.split("Keys must be qualified names from this list", 1)[-1]
        names = re.findall(r"^- (\S+)$", listed, flags=re.MULTILINE)
        docs = dict(re.findall(r"`([^`]+)` \(lines [^)]*\): [^\n]*? — ([^\n]+)", prompt))
        return json.dumps(
            {
                "symbols": {
                    n: {"description": f"(stand-in) {docs.get(n, n.rsplit('.', 1)[-1] + ', as outlined')}"}
                    for n in names
                }
            }
        )
    if task == "summarize-analysis":
        lines = ["# Analysis summary (written by the deterministic stand-in, not a model)", ""]
        for tool, figures in re.findall(
            r"^### Result \S+ — tool (\S+) [^\n]*\n(?:[^\n]*\n)*?Figures: (\{[^\n]*\})$", prompt, re.M
        ):
            f = json.loads(figures)
            if tool == "track-stats":
                s = f["statistics"]
                lines.append(
                    f"- **{f['track_name']}**: {s['point_count']} fixes from {s['start']} to {s['end']}, "
                    f"{s['distance_nm']:.2f} nm at a mean {s['mean_speed_kn']:.1f} kn (max {s['max_speed_kn']:.1f} kn)."
                )
            elif tool == "closest-approach":
                lines.append(
                    f"- **{f['name']}**: {f['range']:.3f} {f['distance_unit']} at {f['time']}, "
                    f"bearing {f['bearing']:.1f}° from the first ship."
                )
            elif tool == "zone-transits":
                for t in f["transits"]:
                    lines.append(
                        f"- **{f['name']}**: entered {t['entry_time']}, left {t['exit_time']} "
                        f"({t['duration_s'] / 60:.1f} min inside)."
                    )
        return "\n".join(lines) + "\n"
    return f"# {task} (written by the deterministic stand-in, not a model)\n"


# --------------------------------------------------------------------------------------------
# the transcript
# --------------------------------------------------------------------------------------------


def say(ms: float | None, text: str) -> None:
    stamp = f"[{ms:8.1f} ms]" if ms is not None else " " * 13
    print(f"{stamp} {text}", flush=True)


def section(title: str) -> None:
    print(f"\n── {title} " + "─" * max(3, 88 - len(title)), flush=True)


def error_of(result: ToolResult) -> str:
    data = result.structured
    err = data.get("error") if isinstance(data.get("error"), dict) else {}
    return f"{err.get('code', 'ERROR')}: {err.get('message', result.text[:300])}"


def ok(result: ToolResult, what: str) -> dict[str, Any]:
    if result.is_error:
        raise StepFailed(f"{what} failed: {error_of(result)}")
    return result.structured


def hm(iso: str) -> str:
    """``2025-03-14T10:42:29.998Z`` → ``10:42:30Z``."""
    hh, mm, ss = iso[11:13], iso[14:16], float(iso[17:].rstrip("Z"))
    total = int(hh) * 3600 + int(mm) * 60 + round(ss)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}Z"


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


def servers_from_config(plots: Path, project: Path, logs: Path, use_uvx: bool) -> tuple[list[ServerSpec], str]:
    specs = load_config(
        CONFIG,
        {
            "/absolute/path/to/llmem-debrief-mcp": str(ROOT),
            "/absolute/path/to/your/project": str(project),
            "/absolute/path/to/your/plots": str(plots),
        },
    )
    env_extra = {"LLMEM_LOG_DIR": os.environ.get("LLMEM_LOG_DIR", str(logs))}
    if "LLMEM_DATA_DIR" in os.environ:
        env_extra["LLMEM_DATA_DIR"] = os.environ["LLMEM_DATA_DIR"]
    uvx = shutil.which("uvx")
    out = []
    for spec in specs:
        args = list(spec.args)
        env = {**(spec.env or {}), **env_extra}
        if spec.command == "uvx" and not (use_uvx and uvx):
            script = next(a for a in args if a in SCRIPTS)
            command, prefix = script_command(script)
            args = [*prefix, *args[args.index(script) + 1 :]]
        else:
            command = uvx if spec.command == "uvx" and uvx else spec.command
        out.append(ServerSpec(spec.name, command, (*args, "--log-level", "warning"), env, spec.cwd))
    if use_uvx and uvx:
        how = f"as configured, through uvx ({uvx}): the first run builds the package"
    elif use_uvx:
        how = "uvx is not on PATH: launching the console scripts next to this Python instead"
    else:
        how = (
            "the config launches `uvx --from <repo> <script>`; to stay offline and fast this tour launches "
            f"the console scripts next to this Python instead ({Path(sys.executable).parent}; --uvx to use uvx)"
        )
    return out, how


# --------------------------------------------------------------------------------------------
# the tour
# --------------------------------------------------------------------------------------------


async def tour(base: Path, use_uvx: bool) -> None:
    print("The suite through a small MCP host (seed 004): three stdio servers behind one coordinator.")
    print("The host's LLM is played by a DETERMINISTIC STAND-IN (stand_in_llm): no model is called.")
    section("setup")
    t = time.perf_counter()
    ws = make_workspace(base / "workspace")
    plots, project = ws["plots_dir"], ws["project_dir"]
    say((time.perf_counter() - t) * 1000, f"generated the example workspace: {ws['root']}")
    ships = ws["ships"]
    say(
        None,
        f"plots/{PLOT_NAME}: ARGONAUT ({ships['ARGONAUT']['fixes']} fixes), BLUE HERON "
        f"({ships['BLUE HERON']['fixes']} fixes), zone {ws['zone']['name']}, {len(ws['reference_points'])} reference points",
    )
    say(None, f"plots/{REP_NAME}: CORMORANT, {ships['CORMORANT']['fixes']} fixes in legacy REP with narratives")
    sources = [p for p in ws["code_files"] if p.suffix in (".py", ".ts") and "build" not in p.parts]
    say(None, f"project/: {len(sources)} Python and TypeScript files, a .gitignore and an ignored build/ folder")
    specs, how = servers_from_config(plots, project, base / "logs", use_uvx)
    say(None, f"config {CONFIG.name}: servers {', '.join(s.name for s in specs)}; placeholders filled in")
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
        cormorant = await step_b(host)
        results = await step_c(host, ws, cormorant)
        await step_d(host)
        await step_e(host, plots)
        await step_f(host, results)
        t = time.perf_counter()
    say((time.perf_counter() - t) * 1000, "servers stopped (stdin closed, each exited)")


async def host_checks(host: Coordinator) -> None:
    """What the coordinator itself refuses, before any server is asked."""
    t = time.perf_counter()
    try:
        host.resolve("generate_prompt")
    except NameConflict as exc:
        say((time.perf_counter() - t) * 1000, f"host: the bare name 'generate_prompt' is refused: {exc}")
    else:
        raise StepFailed("an ambiguous bare tool name was resolved")
    t = time.perf_counter()
    try:
        await host.call("debrief-calc:run_tool", {"tool": "track-stats", "plot": {"selection": True}})
    except ArgumentError as exc:
        say((time.perf_counter() - t) * 1000, f"host: arguments checked against the tool's schema: {exc}")
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
    say(r.duration_ms, f"llmem:store_llm_result → refused, {error_of(r)[:110]}…; retry on the same ticket")
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


async def step_b(host: Coordinator) -> str:
    section("(b) debrief-calc import-rep → debrief-state applies its addFeatures command")
    r = await host.call("debrief-state:debrief_open_plot", {"filename": PLOT_NAME})
    ok(r, "open plot")
    say(r.duration_ms, f"debrief-state:debrief_open_plot {PLOT_NAME} → open")
    r = await host.call("debrief-calc:run_tool", {"tool": "import-rep", "parameters": {"path": REP_NAME}})
    run = ok(r, "import-rep")
    rep = run["report"]
    command = run["commands"][0]
    payload = command["payload"]
    carried = f"by reference {payload['ref']}" if "ref" in payload else "inline"
    say(
        r.duration_ms,
        f"debrief-calc:run_tool import-rep {REP_NAME} → {rep['fix_count']} fixes, {rep['narrative_count']} narratives, "
        f"{len(rep['errors'])} bad lines; {command['command']} command {carried}",
    )
    r = await host.call("debrief-state:debrief_apply_command", {"command": command})
    applied = ok(r, "apply addFeatures")
    say(r.duration_ms, f"debrief-state:debrief_apply_command → added {', '.join(applied['added_ids'])}")
    track = next(str(f["id"]) for f in run["features"] if f["kind"] == "track")
    if track not in applied["added_ids"]:
        raise StepFailed(f"the imported track {track} is not in the plot")
    return track


async def step_c(host: Coordinator, ws: dict[str, Any], cormorant: str) -> list[str]:
    section("(c) analysis by plot reference: track-stats, closest-approach, zone-transits")
    ids: list[str] = []

    async def run(tool: str, feature_ids: list[str]) -> tuple[dict[str, Any], float]:
        r = await host.call(
            "debrief-calc:run_tool", {"tool": tool, "plot": {"filename": PLOT_NAME, "feature_ids": feature_ids}}
        )
        feature = ok(r, tool)["features"][0]
        ids.append(feature["id"])
        return feature["properties"], r.duration_ms

    for track in ("t-argonaut", cormorant):
        props, ms = await run("track-stats", [track])
        s = props["statistics"]
        say(
            ms,
            f"debrief-calc:run_tool track-stats {props['track_name']}: {s['distance_nm']:.2f} nm in {s['duration_hours']:.2f} h, "
            f"mean {s['mean_speed_kn']:.1f} kn, max {s['max_speed_kn']:.1f} kn, mean course {s['mean_course']:.0f}°",
        )
    cpa, ms = await run("closest-approach", list(ws["cpa"]["ships"]))
    designed = ws["cpa"]
    say(
        ms,
        f"debrief-calc:run_tool closest-approach {cpa['name']}: {cpa['range']:.4f} nm ({cpa['range'] * 1852:.1f} m) at {hm(cpa['time'])}, "
        f"bearing {cpa['bearing']:.1f}°; designed by make_workspace: {designed['range_nm']:.4f} nm at {hm(designed['time'])}",
    )
    if abs(cpa["range"] * 1852 - designed["range_m"]) > 5 or hm(cpa["time"]) != hm(designed["time"]):
        raise StepFailed("the CPA found differs from the designed one")
    zone, ms = await run("zone-transits", [ws["zone"]["crossed_by"], ws["zone"]["id"]])
    for transit in zone["transits"]:
        say(
            ms,
            f"debrief-calc:run_tool zone-transits {zone['name']}: entry {hm(transit['entry_time'])}, exit {hm(transit['exit_time'])}, "
            f"{transit['duration_s'] / 60:.1f} min inside",
        )
    return ids


async def step_d(host: Coordinator) -> None:
    section("(d) delete the selected feature: state selection → calc delete-features → state applies")
    victim = "p-buoy"
    r = await host.call("debrief-state:debrief_set_selection", {"selectedIds": [victim]})
    ok(r, "set selection")
    say(r.duration_ms, f"debrief-state:debrief_set_selection [{victim}]")
    r = await host.call("debrief-state:debrief_get_selection", {})
    say(r.duration_ms, f"debrief-state:debrief_get_selection → {ok(r, 'get selection')['selectedIds']}")
    r = await host.call(
        "debrief-calc:run_tool", {"tool": "delete-features", "plot": {"filename": PLOT_NAME, "selection": True}}
    )
    command = ok(r, "delete-features")["commands"][0]
    say(r.duration_ms, f"debrief-calc:run_tool delete-features (plot selection) → {json.dumps(command)}")
    r = await host.call("debrief-state:debrief_apply_command", {"command": command})
    applied = ok(r, "apply deleteFeatures")
    say(r.duration_ms, f"debrief-state:debrief_apply_command → deleted {applied['deleted_ids']}")
    r = await host.call("debrief-state:debrief_get_selection", {})
    left = ok(r, "get selection")["selectedIds"]
    say(r.duration_ms, f"debrief-state:debrief_get_selection → {left} (the deleted feature left the selection)")
    if left or applied["deleted_ids"] != [victim]:
        raise StepFailed("the selected feature was not deleted")


async def step_e(host: Coordinator, plots: Path) -> None:
    section("(e) render the plot to a PNG")
    r = await host.call("debrief-state:debrief_render_plot", {"width": 1024, "height": 768})
    ok(r, "render")
    if not r.images:
        raise StepFailed("debrief_render_plot returned no image")
    png = base64.b64decode(r.images[0].data)
    width, height = struct.unpack(">II", png[16:24])
    out = plots / "exercise.png"
    out.write_bytes(png)
    say(
        r.duration_ms, f"debrief-state:debrief_render_plot → {r.images[0].mime_type} {width}×{height}, {len(png)} bytes"
    )
    say(None, f"PNG saved: {out}")


async def step_f(host: Coordinator, results: list[str]) -> None:
    section("(f) a narrated summary through the calc server's callback")
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
    stored = ok(r, "store_llm_result")["data"]
    where = stored.get("path") or stored.get("target") or ready["callbackArgs"]["target"]
    say(r.duration_ms, f"debrief-calc:store_llm_result → stored {where} at step {stored.get('step')}")
    for line in summary.splitlines():
        if line:
            say(None, f"  | {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A tour of the suite through a small MCP host.")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the workspace, stores and PNG in DIR")
    parser.add_argument("--uvx", action="store_true", help="launch the servers through uvx, as the config says")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="llmem tour ") as tmp:
        base = (args.keep / "tour workspace") if args.keep else Path(tmp)
        if args.keep and base.exists():
            shutil.rmtree(base)
        base.mkdir(parents=True, exist_ok=True)
        try:
            anyio.run(tour, base.resolve(), args.uvx)
        except (HostError, StepFailed) as exc:
            print(f"\nTOUR FAILED: {type(exc).__name__}: {exc}", flush=True)
            return 1
        total = time.perf_counter() - started
        kept = f"kept in {base.resolve()}" if args.keep else "removed (pass --keep DIR to keep it)"
        print(f"\nTour complete in {total:.1f} s, every step passed; the workspace is {kept}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
