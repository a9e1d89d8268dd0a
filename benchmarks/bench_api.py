"""The Python API (``debrief_calc.Workspace``) beside what it stands on, in one run.

    python benchmarks/bench_api.py [--calls N] [--runs N]

- ``import debrief_calc`` (a fresh interpreter) beside a bare ``python -c pass``: the package
  root is lazy, so a script pays for what it uses;
- warm calls through the Workspace beside the same service call with no argument check and no
  answer model (what the API adds), and beside the same tool through the in-process MCP client
  (what a script saves by not speaking the protocol): a read (``get_features`` of the 577 KB
  sample plot, summaries) and a write (``set_viewport``: lock, re-read, atomic write). Calls
  alternate between the compared paths so that the machine's noise falls on both.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._harness import machine_line, ms, percentiles, print_table, ratio

ROOT = Path(__file__).resolve().parents[1]
PLOT = "large-sample.plot.json"


def cold_imports(runs: int) -> tuple[list[float], list[float]]:
    """Seconds to start an interpreter and import debrief_calc, and to start one bare; interleaved."""
    ours, bare = [], []
    for run in range(runs + 1):
        pair = [("import debrief_calc", ours), ("pass", bare)]
        for code, into in pair if run % 2 else reversed(pair):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
            if run:  # the first round fills the caches
                into.append(time.perf_counter() - start)
    return ours, bare


async def alternate(calls: int, *paths: Callable[[int], Awaitable[Any]]) -> list[list[float]]:
    """Seconds per call of each path, the paths taking turns call by call (after one warm-up each)."""
    for path in paths:
        await path(0)
    out: list[list[float]] = [[] for _ in paths]
    for i in range(1, calls + 1):
        for k, path in enumerate(paths):
            start = time.perf_counter()
            await path(i)
            out[k].append(time.perf_counter() - start)
    return out


async def warm(folder: Path, calls: int) -> list[tuple[str, list[float], str, list[float]]]:
    from mcp import Client

    import debrief_calc as dc
    from debrief_calc.state.server import build_server
    from llmem.core.config import ServerConfig

    ws = dc.Workspace(folder)
    svc = ws._state  # the service the Workspace and the server both call
    rows = []
    async with Client(build_server(ServerConfig("debrief-state-mcp", folder)), mode="legacy") as client:

        async def api_read(_i: int) -> Any:
            return ws.get_features(filename=PLOT)

        async def service_read(_i: int) -> Any:
            return svc.get_features(PLOT, None, None, "summary", None, None)

        async def mcp_read(_i: int) -> Any:
            return await client.call_tool("debrief_get_features", {"filename": PLOT})

        api, service, protocol = await alternate(calls, api_read, service_read, mcp_read)
        rows += [("get_features (summaries), Workspace", api, "the service alone", service)]
        rows += [("get_features (summaries), Workspace", api, "the tool, in-process MCP client", protocol)]

        def bounds(i: int) -> list[float]:
            return [-5.0 + i * 1e-6, 35.0, -1.0, 38.0]

        async def api_write(i: int) -> Any:
            return ws.set_viewport({"bounds": bounds(i)}, filename=PLOT)

        async def service_write(i: int) -> Any:
            return svc.set_viewport({"bounds": bounds(-i)}, PLOT, None)

        async def mcp_write(i: int) -> Any:
            return await client.call_tool(
                "debrief_set_viewport", {"filename": PLOT, "viewportState": {"bounds": bounds(i + 0.5)}}
            )

        api, service, protocol = await alternate(calls, api_write, service_write, mcp_write)
        rows += [("set_viewport (a write), Workspace", api, "the service alone", service)]
        rows += [("set_viewport (a write), Workspace", api, "the tool, in-process MCP client", protocol)]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="warm calls of each path")
    parser.add_argument("--runs", type=int, default=10, help="cold imports of each")
    args = parser.parse_args()
    logging.getLogger("llmem").setLevel(logging.WARNING)  # the server's one line per call
    print(machine_line())
    table: list[list[str]] = []
    ours, bare = cold_imports(args.runs)
    p50, p50_bare = percentiles(ours)[0], percentiles(bare)[0]
    table.append(["import debrief_calc, cold (p50)", ms(p50), f"python -c pass: {ms(p50_bare)}", ratio(p50, p50_bare)])
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(ROOT / "tests" / "data" / "plots" / PLOT, Path(tmp) / PLOT)
        for figure, mine, baseline, theirs in anyio.run(warm, Path(tmp), args.calls):
            p50, p50_base = percentiles(mine)[0], percentiles(theirs)[0]
            table.append([f"{figure} (p50)", ms(p50), f"{baseline}: {ms(p50_base)}", ratio(p50, p50_base)])
    print_table(table)


if __name__ == "__main__":
    main()
