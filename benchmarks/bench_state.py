"""debrief-state-mcp's figures (debrief-state.md "Figures to reach"), each beside its baseline in the same run.

    python benchmarks/bench_state.py [--quick] [--tmp DIR]

1. cold start: ``debrief-state-mcp --workspace <tmp>`` vs ``benchmarks/baseline_server.py`` (a bare
   ``MCPServer`` with one ``echo`` tool), spawn → ``initialize`` answer, interleaved run by run.
2. warm ``debrief_get_selection`` round trip over stdio (real MCP client) vs the baseline's ``echo``,
   the servers alive side by side and called alternately, p50 and p95 over ≥ 500 calls: on
   ``large-sample.plot.json`` (577 KB) and on a 50 MB plot made by replicating its tracks.
3. ``debrief_apply_command`` over stdio on ``large-sample.plot.json``: ``setSelection`` (alternating
   selections: the store, no plot write) and ``updateFeatures`` of one zone (alternating values:
   a real plot write — lock, re-read, encode, atomic write with fsync — and its undo record).
4. ``debrief_render_plot`` at 1024×768 on ``large-sample.plot.json`` over stdio.

Results are ratios to the echo round trip measured in the same run: these machines are shared
and noisy. ``--quick`` shrinks every size (and the big plot to 5 MB) for a smoke run.
"""

from __future__ import annotations

import argparse
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

from _harness import (
    CLIENT_MODE,
    Row,
    cold_start_interleaved,
    machine_line,
    percentiles,
    print_table,
    warm_roundtrips,
)

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline_server.py"
PLOTS = HERE.parents[1] / "shared" / "data" / "plots"
LARGE = "large-sample.plot.json"
BIG = "big.plot.json"
TARGETS = {"cold": 1.10, "warm": 1.5, "apply_ms": 20.0, "render_ms": 300.0}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _ratio(ours: float, base: float) -> str:
    return f"{ours / base:.2f}x" if base > 0 else "n/a"


def _verdict(name: str, ok: bool, detail: str) -> str:
    return f"  [{'met ' if ok else 'MISS'}] {name}: {detail}"


def _state_cmd(workspace: Path) -> list[str]:
    script = Path(sys.executable).with_name("debrief-state-mcp")
    if script.exists():
        return [str(script), "--workspace", str(workspace)]
    return [sys.executable, "-m", "debrief_calc.state", "--workspace", str(workspace)]


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


async def _timed_calls(
    cmd: list[str], env: dict[str, str], calls: list[tuple[str, Callable[[int], dict[str, Any]]]], n: int
) -> list[list[float]]:
    """``n`` timed rounds of each ``(tool, args_for_round)`` over one live stdio server."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env={**os.environ, **env})
    with Path(os.devnull).open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=CLIENT_MODE, cache=None) as client:
            out: list[list[float]] = [[] for _ in calls]
            for i in range(-3, n):  # three unrecorded warm-up rounds
                for k, (tool, args) in enumerate(calls):
                    start = time.perf_counter()
                    result = await client.call_tool(tool, args(i))
                    elapsed = time.perf_counter() - start
                    if result.is_error:
                        raise RuntimeError(f"{tool} failed: {result.structured_content}")
                    if i >= 0:
                        out[k].append(elapsed)
            return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run, figures meaningless")
    parser.add_argument("--tmp", type=Path, help="work folder (default: a fresh temporary folder)")
    opts = parser.parse_args()
    cold_runs, warm_calls, apply_calls, render_calls, big_mb = (
        (2, 30, 10, 3, 5) if opts.quick else (20, 500, 100, 20, 50)
    )
    tmp = Path(tempfile.mkdtemp(prefix="bench-state-", dir=opts.tmp))
    try:
        run(tmp, cold_runs, warm_calls, apply_calls, render_calls, big_mb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path, cold_runs: int, warm_calls: int, apply_calls: int, render_calls: int, big_mb: int) -> None:
    import anyio

    print(machine_line())
    ws = tmp / "ws"
    ws.mkdir()
    shutil.copy(PLOTS / LARGE, ws / LARGE)
    big_bytes = make_big_plot(ws / BIG, big_mb)
    env = {"LLMEM_LOG_DIR": str(tmp / "logs"), "LLMEM_DATA_DIR": str(tmp / "data")}
    ours, base = _state_cmd(ws), [sys.executable, str(BASELINE)]
    rows: list[Row] = []
    verdicts: list[str] = []

    cold_ours, cold_base = cold_start_interleaved([ours, base], cold_runs, env=env)
    m_ours, m_base = statistics.median(cold_ours), statistics.median(cold_base)
    rows.append((f"cold start, median of {cold_runs} interleaved", _ms(m_ours), _ms(m_base), _ratio(m_ours, m_base)))
    verdicts.append(_verdict("cold start <= 1.10x", m_ours / m_base <= TARGETS["cold"], _ratio(m_ours, m_base)))

    sel_large, sel_big, echo = warm_roundtrips(
        [
            (ours, "debrief_get_selection", {"filename": LARGE}),
            (ours, "debrief_get_selection", {"filename": BIG}),
            (base, "echo", {"text": "hello"}),
        ],
        warm_calls,
        env=env,
    )
    e50, e95 = percentiles(echo)
    for label, xs in ((f"577 KB plot, {warm_calls} calls", sel_large), (f"{big_bytes / 1e6:.0f} MB plot", sel_big)):
        p50, p95 = percentiles(xs)
        rows.append((f"warm get_selection p50, {label}", _ms(p50), _ms(e50), _ratio(p50, e50)))
        rows.append((f"warm get_selection p95, {label}", _ms(p95), _ms(e95), _ratio(p95, e95)))
        verdicts.append(
            _verdict(f"get_selection {label} p50 <= 1.5x echo", p50 / e50 <= TARGETS["warm"], _ratio(p50, e50))
        )

    zone = next(f for f in json.loads((ws / LARGE).read_bytes())["features"] if f.get("id") == "z-3")

    def select(i: int) -> dict[str, Any]:
        return {"filename": LARGE, "command": {"command": "setSelection", "payload": ["f-1"] if i % 2 else ["z-1"]}}

    def update(i: int) -> dict[str, Any]:
        changed = copy.deepcopy(zone)
        changed["properties"]["name"] = f"SAP 2 rev {i}"
        return {"filename": LARGE, "command": {"command": "updateFeatures", "payload": [changed]}}

    def render(_i: int) -> dict[str, Any]:
        return {"filename": LARGE, "width": 1024, "height": 768}

    sel_t, upd_t, echo_t = anyio.run(
        _timed_calls,
        ours,
        env,
        [
            ("debrief_apply_command", select),
            ("debrief_apply_command", update),
            ("debrief_get_selection", lambda i: {"filename": LARGE}),
        ],
        apply_calls,
    )
    g50 = statistics.median(echo_t)
    for label, xs in (("setSelection", sel_t), ("updateFeatures (plot write)", upd_t)):
        p50 = statistics.median(xs)
        rows.append((f"apply_command {label} p50, {apply_calls} calls", _ms(p50), _ms(e50), _ratio(p50, e50)))
        verdicts.append(_verdict(f"apply_command {label} p50 < 20 ms", p50 * 1000 < TARGETS["apply_ms"], _ms(p50)))
    (render_t,) = anyio.run(_timed_calls, ours, env, [("debrief_render_plot", render)], render_calls)
    r50 = statistics.median(render_t)
    rows.append((f"render_plot 1024x768 p50, {render_calls} calls", _ms(r50), _ms(g50), _ratio(r50, g50)))
    verdicts.append(_verdict("render 1024x768 p50 < 300 ms", r50 * 1000 < TARGETS["render_ms"], _ms(r50)))

    print()
    print_table(rows, header=("figure", "debrief-state-mcp", "baseline", "ratio"))
    print("\nbaselines: the bare MCPServer (cold start, echo round trip); render is compared with a warm get_selection")
    print("targets:")
    for line in verdicts:
        print(line)


if __name__ == "__main__":
    main()
