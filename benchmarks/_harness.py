"""Reusable measuring helpers for the suite's benchmarks (llmem, calc, state).

Every figure is measured beside its baseline in the same run and quoted as a ratio, because
the machines are shared and noisy: cold starts interleave the compared commands run by run,
and warm round trips alternate calls between two live servers.

- :func:`cold_start` / :func:`cold_start_interleaved`: spawn → ``initialize`` answer, in seconds.
- :func:`warm_roundtrip` / :func:`warm_roundtrips`: ``tools/call`` round trips over stdio with
  the real MCP Python client, in seconds.
- :func:`percentiles`, :func:`print_table`, :func:`machine_line`, :func:`timed`.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CLIENT_MODE",
    "PROTOCOL_VERSION",
    "Row",
    "cold_start",
    "cold_start_interleaved",
    "machine_line",
    "percentiles",
    "print_table",
    "ratio",
    "timed",
    "warm_roundtrip",
    "warm_roundtrips",
]

PROTOCOL_VERSION = "2025-11-25"
#: How the MCP client connects for warm round trips: "legacy" is the plain ``initialize``
#: handshake every stdio server of the suite speaks (no ``server/discover`` probe).
CLIENT_MODE = "legacy"

Row = tuple[str, str, str, str]


# -- cold start -----------------------------------------------------------------------------


def _initialize_line() -> bytes:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "suite-bench", "version": "0"},
        },
    }
    return (json.dumps(request) + "\n").encode()


def _one_cold_start(cmd: Sequence[str], timeout: float, env: dict[str, str] | None) -> float:
    """Seconds from spawning ``cmd`` to the line answering ``initialize`` on its stdout."""
    line = _initialize_line()
    full_env = {**os.environ, **env} if env else None
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=full_env,
    )
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line)
        proc.stdin.flush()
        while True:
            out = proc.stdout.readline()
            if not out:
                raise RuntimeError(f"{' '.join(cmd)} exited (or timed out) before answering initialize")
            try:
                msg = json.loads(out)
            except ValueError:
                continue  # not a JSON-RPC line: a stray print; keep reading
            if isinstance(msg, dict) and msg.get("id") == 1:
                elapsed = time.perf_counter() - start
                if "result" not in msg:
                    raise RuntimeError(f"{' '.join(cmd)} answered initialize with an error: {msg.get('error')}")
                return elapsed
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def cold_start_interleaved(
    cmds: Sequence[Sequence[str]],
    runs: int,
    *,
    warmup: int = 1,
    timeout: float = 60.0,
    env: dict[str, str] | None = None,
) -> list[list[float]]:
    """Cold starts of several commands, interleaved run by run (A, B, A, B …) to cancel noise.

    ``warmup`` unrecorded rounds first fill the OS page cache and the ``.pyc`` files; ``env``
    is added to the inherited environment.
    """
    for _ in range(warmup):
        for cmd in cmds:
            _one_cold_start(cmd, timeout, env)
    results: list[list[float]] = [[] for _ in cmds]
    for run in range(runs):
        # Alternate which command goes first so neither always follows the other.
        order = range(len(cmds)) if run % 2 == 0 else reversed(range(len(cmds)))
        for i in order:
            results[i].append(_one_cold_start(cmds[i], timeout, env))
    return results


def cold_start(cmd: list[str], runs: int, *, env: dict[str, str] | None = None) -> list[float]:
    """``runs`` cold starts (spawn → ``initialize`` answer) of one command, in seconds."""
    return cold_start_interleaved([cmd], runs, env=env)[0]


# -- warm round trips -----------------------------------------------------------------------

RoundTripSpec = tuple[Sequence[str], str, dict[str, Any]]


def _check_result(result: Any, cmd: Sequence[str], tool: str) -> None:
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise RuntimeError(f"{tool} on {' '.join(cmd)} failed: {result}")
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if isinstance(structured, dict) and structured.get("status") == "error":
        raise RuntimeError(f"{tool} on {' '.join(cmd)} answered an error envelope: {structured}")


async def _roundtrips_async(
    specs: Sequence[RoundTripSpec], n: int, warmup: int, env: dict[str, str] | None
) -> list[list[float]]:
    from contextlib import AsyncExitStack

    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async with AsyncExitStack() as stack:
        # The servers' stderr (their logs) goes nowhere: it is not what is measured.
        errlog = stack.enter_context(Path(os.devnull).open("w"))  # noqa: SIM115
        clients = []
        for cmd, _tool, _args in specs:
            params = StdioServerParameters(command=cmd[0], args=list(cmd[1:]), env=env)
            client = Client(stdio_client(params, errlog=errlog), mode=CLIENT_MODE, cache=None)
            clients.append(await stack.enter_async_context(client))
        for client, (cmd, tool, args) in zip(clients, specs, strict=True):
            for _ in range(warmup):
                _check_result(await client.call_tool(tool, args), cmd, tool)
        results: list[list[float]] = [[] for _ in specs]
        clock = time.perf_counter
        for _ in range(n):
            # Alternate call by call between the servers: both see the same machine moments.
            for i, client in enumerate(clients):
                _cmd, tool, args = specs[i]
                start = clock()
                await client.call_tool(tool, args)
                results[i].append(clock() - start)
        return results


def warm_roundtrips(
    specs: Sequence[RoundTripSpec], n: int = 500, *, warmup: int = 20, env: dict[str, str] | None = None
) -> list[list[float]]:
    """Round trips of ``(cmd, tool, args)`` for each spec, the servers alive side by side.

    Each server is spawned once (``env`` added to its environment) and connected with the real
    MCP client over stdio (``CLIENT_MODE`` handshake); after ``warmup`` checked calls, ``n`` calls
    per server are timed, alternating call by call.
    """
    import anyio

    return anyio.run(_roundtrips_async, specs, n, warmup, env)


def warm_roundtrip(
    cmd: list[str], tool: str, args: dict[str, Any], n: int = 500, *, env: dict[str, str] | None = None
) -> list[float]:
    """``n`` timed ``tools/call`` round trips (seconds) to one stdio server."""
    return warm_roundtrips([(cmd, tool, args)], n, env=env)[0]


# -- statistics and output ------------------------------------------------------------------


def percentiles(xs: Sequence[float]) -> tuple[float, float]:
    """(p50, p95) of ``xs`` (inclusive method; fine for a handful of samples too)."""
    if not xs:
        raise ValueError("no samples")
    if len(xs) == 1:
        return xs[0], xs[0]
    cuts = statistics.quantiles(xs, n=20, method="inclusive")
    return statistics.median(xs), cuts[18]


def ratio(ours: float, baseline: float) -> str:
    return f"{ours / baseline:.2f}x" if baseline else "n/a"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def machine_line() -> str:
    cpus = os.cpu_count()
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on macOS / Windows
        usable = cpus
    return (
        f"machine: {cpus} cpus ({usable} usable), Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.platform()}, executable {sys.executable}"
    )


def print_table(rows: Sequence[Row], header: Row = ("figure", "ours", "baseline", "ratio")) -> None:
    """Print ``figure | ours | baseline | ratio`` rows as an aligned Markdown table."""
    all_rows = [header, *rows]
    widths = [max(len(r[c]) for r in all_rows) for c in range(4)]

    def fmt(r: Row) -> str:
        cells = [r[0].ljust(widths[0]), *(r[c].rjust(widths[c]) for c in range(1, 4))]
        return "| " + " | ".join(cells) + " |"

    print(fmt(header))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print(fmt(r))
    sys.stdout.flush()
