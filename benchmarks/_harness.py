"""What the suite's benchmarks share: measuring, the standard server figures, and output.

Every figure is measured beside its baseline in the same run and quoted as a ratio, because
the machines are shared and noisy: cold starts interleave the compared commands run by run,
and warm round trips alternate calls between the live servers.

- Measuring: :func:`cold_start_interleaved` (spawn → ``initialize`` answer, seconds),
  :func:`warm_roundtrips` (``tools/call`` round trips over stdio with the real MCP client),
  :func:`connected` + :func:`timed_rounds` for anything else over stdio, :func:`percentiles`.
- The standard figures of every server (suite.md §12), parametrised by its command and tools:
  :func:`add_server_figures`, cold start vs a bare ``MCPServer`` and warm round trips vs its
  ``echo``; :func:`server_cmd` starts a server of the suite.
- Output: a :class:`Section` (rows, targets met or missed, notes) per server, printed by
  :func:`print_section` or, for several, as one table by ``run_all.py``; :func:`script_main`
  is the whole ``main()`` of a server script.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BASELINE_CMD",
    "CLIENT_LINE",
    "CLIENT_MODE",
    "COLD_RUNS",
    "COLD_TARGET",
    "PROTOCOL_VERSION",
    "SERVERS",
    "WARM_CALLS",
    "WARM_TARGET",
    "Row",
    "Section",
    "Target",
    "add_server_figures",
    "bench_env",
    "checked",
    "cold_start_interleaved",
    "compile_bytecode",
    "connected",
    "format_table",
    "load_average",
    "machine_line",
    "ms",
    "patched_environ",
    "percentiles",
    "print_section",
    "print_table",
    "ratio",
    "s",
    "script_main",
    "server_cmd",
    "timed",
    "timed_rounds",
    "warm_roundtrips",
]

HERE = Path(__file__).resolve().parent
PROTOCOL_VERSION = "2025-11-25"
#: How the MCP client connects for warm round trips: "legacy" is the plain ``initialize``
#: handshake every stdio server of the suite speaks (no ``server/discover`` probe).
CLIENT_MODE = "legacy"
CLIENT_LINE = (
    f"client: mcp Client over stdio, mode={CLIENT_MODE!r} (initialize handshake); "
    "ratio = ours / baseline time (lower is better)"
)
#: The baseline of every server figure: a bare ``MCPServer`` with one ``echo`` tool.
BASELINE_CMD = [sys.executable, str(HERE / "baseline_server.py")]
#: Start-up "barely above the SDK's own import cost" (the spec's principle 5): the team's bar.
COLD_TARGET = 1.10
#: "Within 1.5x of a bare MCPServer echo" (each server's spec).
WARM_TARGET = 1.5
#: The standard figures' sizes, full and ``--quick``: cold starts per command, and warm calls
#: per tool ("p50, p95 over >= 500 calls", suite.md §12).
COLD_RUNS = {False: 20, True: 2}
WARM_CALLS = {False: 500, True: 30}

Row = tuple[str, str, str, str]  # figure, ours, baseline, ratio


# -- formatting -----------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def s(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 100 else f"{seconds:.0f} s"


def ratio(ours: float, baseline: float) -> str:
    """``ours / baseline`` as ``1.23x`` (``1,234x`` when large, ``0.0021x`` when tiny), ``n/a`` without a baseline."""
    if baseline <= 0:
        return "n/a"
    r = ours / baseline
    if r >= 100:
        return f"{r:,.0f}x"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def percentiles(xs: Sequence[float]) -> tuple[float, float]:
    """(p50, p95) of ``xs`` (inclusive method; fine for a handful of samples too)."""
    if not xs:
        raise ValueError("no samples")
    if len(xs) == 1:
        return xs[0], xs[0]
    cuts = statistics.quantiles(xs, n=20, method="inclusive")
    return statistics.median(xs), cuts[18]


# -- sections: rows, targets, notes -----------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    ok: bool
    detail: str

    def line(self, prefix: str = "", bullet: str = " ") -> str:
        return f"{bullet} [{'met ' if self.ok else 'MISS'}] {prefix}{self.name}: {self.detail}"


@dataclass
class Section:
    """One server's figures: table rows, the targets met or missed, notes, stage timings."""

    server: str
    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)

    def add(self, figure: str, ours: str, baseline: str, ratio_: str) -> None:
        self.rows.append((figure, ours, baseline, ratio_))

    def target(self, name: str, ok: bool, detail: str) -> None:
        self.targets.append(Target(name, ok, detail))

    def stage(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn``, note how long it took (also on stderr, as progress) and return its value."""
        took, value = timed(fn)
        self.stages.append(f"{name} {took:.1f} s")
        print(f"  ({self.server}: {self.stages[-1]})", file=sys.stderr, flush=True)
        return value

    def extend(self, other: Section) -> None:
        self.rows += other.rows
        self.targets += other.targets
        self.notes += other.notes
        self.stages += other.stages


# -- environment and commands -----------------------------------------------------------------


#: A benchmark measures the servers' own speed with thousands of calls a second, far past the
#: rate limit a model meets (its cost, one bucket check a call, is in every figure all the same).
UNLIMITED_RATES = {
    "LLMEM_WRITES_PER_MINUTE": "100000000",
    "LLMEM_WRITE_BURST": "1000000",
    "LLMEM_READS_PER_MINUTE": "100000000",
    "LLMEM_READ_BURST": "1000000",
}
ENV_VARS = ("LLMEM_LOG_DIR", "LLMEM_DATA_DIR", *UNLIMITED_RATES)


def bench_env(tmp: Path) -> dict[str, str]:
    """The servers' logs and user-level data go to ``tmp``, never the user's home, and their
    rate limits out of the way (:data:`UNLIMITED_RATES`).

    The runners (:func:`script_main`, ``run_all.py``) put these in this process's environment
    (:func:`patched_environ`) around a ``collect``: the servers spawned inherit them, and so do
    the in-process services.
    """
    return {**dict(zip(ENV_VARS[:2], (str(tmp / "logs"), str(tmp / "data")), strict=True)), **UNLIMITED_RATES}


def _server_env() -> dict[str, str]:
    """What a spawned MCP server gets on top of the SDK's default (safe) environment."""
    return {k: os.environ[k] for k in ENV_VARS if k in os.environ}


@contextmanager
def patched_environ(env: dict[str, str]) -> Iterator[None]:
    """``env`` in this process's environment (for in-process services), restored afterwards."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: The suite's console scripts, and how to start each without its script.
SERVERS = {
    "llmem-mcp": ["-m", "llmem"],
    "debrief-calc-mcp": ["-c", "from debrief_calc.cli import main_calc; main_calc()"],
    "debrief-state-mcp": ["-m", "debrief_calc.state"],
}


def server_cmd(server: str, workspace: Path) -> list[str]:
    """The command starting ``server`` (a key of :data:`SERVERS`) on ``workspace``.

    The console script beside this Python when installed, else ``python -m …``.
    """
    exe = Path(sys.executable).with_name(server)
    head = [str(exe)] if exe.exists() else [sys.executable, *SERVERS[server]]
    return [*head, "--workspace", str(workspace)]


# -- cold start -----------------------------------------------------------------------------


def compile_bytecode() -> str:
    """Write the ``.pyc`` files of the suite and of this environment's packages, as pip does.

    A server's start-up is mostly imports. ``pip install`` leaves every module compiled, but an
    environment made with ``uv`` (without ``--compile-bytecode``) and run with
    ``PYTHONDONTWRITEBYTECODE`` set compiles modules from source on every start, ours and the
    SDK's alike, which measures the compiler rather than the servers. Returns what it did, for
    the report's machine line.
    """
    import compileall
    import contextlib
    import io
    import sysconfig

    import debrief_calc
    import llmem

    folders = [Path(llmem.__file__).parent, Path(debrief_calc.__file__).parent, Path(sysconfig.get_paths()["purelib"])]
    with contextlib.redirect_stdout(io.StringIO()):
        ok = all(compileall.compile_dir(folder, quiet=2, workers=0) for folder in folders)
    return "bytecode compiled for the suite and site-packages" + ("" if ok else " (some files failed to compile)")


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


def _one_cold_start(cmd: Sequence[str], timeout: float) -> float:
    """Seconds from spawning ``cmd`` (this process's environment) to its answer to ``initialize``."""
    line = _initialize_line()
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
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
) -> list[list[float]]:
    """Cold starts of several commands, interleaved run by run (A, B, A, B …) to cancel noise.

    ``warmup`` unrecorded rounds first fill the OS page cache and the ``.pyc`` files.
    """
    for _ in range(warmup):
        for cmd in cmds:
            _one_cold_start(cmd, timeout)
    results: list[list[float]] = [[] for _ in cmds]
    for run in range(runs):
        # Alternate which command goes first so neither always follows the other.
        order = range(len(cmds)) if run % 2 == 0 else reversed(range(len(cmds)))
        for i in order:
            results[i].append(_one_cold_start(cmds[i], timeout))
    return results


# -- calls over stdio -----------------------------------------------------------------------


def checked(result: Any, what: str) -> dict[str, Any]:
    """The structured content of a tool result; raises on an error result or error envelope."""
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise RuntimeError(f"{what} failed: {result}")
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if isinstance(structured, dict) and structured.get("status") == "error":
        raise RuntimeError(f"{what} answered an error envelope: {structured}")
    return structured if isinstance(structured, dict) else {}


@asynccontextmanager
async def connected(cmds: Sequence[Sequence[str]], mode: str = CLIENT_MODE) -> AsyncIterator[list[Any]]:
    """One live MCP client per command over stdio, with the ``mode`` handshake (:data:`CLIENT_MODE`).

    A server gets the SDK's default environment plus :data:`ENV_VARS` from this process's; its
    stderr (its logs) goes nowhere: it is not what is measured.
    """
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(Path(os.devnull).open("w"))  # noqa: SIM115
        clients = []
        for cmd in cmds:
            params = StdioServerParameters(command=cmd[0], args=list(cmd[1:]), env=_server_env())
            client = Client(stdio_client(params, errlog=errlog), mode=mode, cache=None)  # type: ignore[arg-type]
            clients.append(await stack.enter_async_context(client))
        yield clients


Args = dict[str, Any] | Callable[[int], dict[str, Any]]
#: ``(client, tool, args)``; ``args`` may be a function of the round number (negative: warm-up).
Call = tuple[Any, str, Args]


@dataclass
class Rounds:
    times: list[list[float]]  # seconds, per call of the round
    last: list[dict[str, Any]]  # each call's last structured answer


async def timed_rounds(calls: Sequence[Call], n: int, *, warmup: int = 0) -> Rounds:
    """``warmup`` unrecorded, then ``n`` timed rounds of ``calls``, called one after another.

    Alternating call by call, the servers compared see the same machine moments. Every answer
    is checked, after its clock stops.
    """
    out = Rounds([[] for _ in calls], [{} for _ in calls])
    clock = time.perf_counter
    for i in range(-warmup, n):
        for k, (client, tool, args) in enumerate(calls):
            arguments = args(i) if callable(args) else args
            start = clock()
            result = await client.call_tool(tool, arguments)
            elapsed = clock() - start
            out.last[k] = checked(result, tool)
            if i >= 0:
                out.times[k].append(elapsed)
    return out


RoundTripSpec = tuple[Sequence[str], str, dict[str, Any]]


async def _roundtrips_async(specs: Sequence[RoundTripSpec], n: int, warmup: int, mode: str) -> list[list[float]]:
    async with connected([cmd for cmd, _tool, _args in specs], mode) as clients:
        calls = [(client, tool, args) for client, (_cmd, tool, args) in zip(clients, specs, strict=True)]
        return (await timed_rounds(calls, n, warmup=warmup)).times


def warm_roundtrips(
    specs: Sequence[RoundTripSpec], n: int = 500, *, warmup: int = 20, mode: str = CLIENT_MODE
) -> list[list[float]]:
    """Round trips of ``(cmd, tool, args)`` for each spec, the servers alive side by side.

    Each server is spawned once and connected with the real MCP client over stdio
    (:func:`connected`, in ``mode``); after ``warmup`` checked rounds, ``n`` calls per server
    are timed, alternating call by call.
    """
    import anyio

    return anyio.run(_roundtrips_async, specs, n, warmup, mode)


# -- the standard figures of every server -------------------------------------------------------


WarmCall = tuple[str, str, dict[str, Any]]  # label, tool, arguments


def add_server_figures(
    section: Section,
    ours: Sequence[str],
    *,
    warm: Sequence[WarmCall],
    quick: bool,
    echo_chars: int | None = None,
) -> None:
    """The standard figures of every server (suite.md §12), beside the bare ``MCPServer``.

    1. Cold start (spawn → ``initialize`` answer) of ``ours`` vs the baseline server, interleaved
       run by run (:data:`COLD_RUNS`): the medians, the p95s and the median of the per-run ratios.
    2. Warm round trips of each ``(label, tool, args)`` of ``warm`` on ``ours`` vs the baseline's
       ``echo`` of "ping", the servers alive side by side and called alternately
       (:data:`WARM_CALLS` each): p50 and p95. With ``echo_chars``, also vs an echo that long
       (the cost of the answer's bytes alone).
    """
    cold_runs, warm_calls = COLD_RUNS[quick], WARM_CALLS[quick]
    cold_ours, cold_base = cold_start_interleaved([ours, BASELINE_CMD], cold_runs)
    m_ours, m_base = statistics.median(cold_ours), statistics.median(cold_base)
    section.add(
        f"cold start, median of {cold_runs} interleaved (<= {COLD_TARGET:.2f}x)",
        ms(m_ours),
        ms(m_base),
        ratio(m_ours, m_base),
    )
    # Each run's pair was spawned back to back: the median of their ratios cancels slow drifts.
    paired = statistics.median(o / b for o, b in zip(cold_ours, cold_base, strict=True))
    p95_ours, p95_base = percentiles(cold_ours)[1], percentiles(cold_base)[1]
    section.add("  cold start p95 / median of per-run ratios", ms(p95_ours), ms(p95_base), f"{paired:.2f}x")
    section.target(
        "cold start", m_ours / m_base <= COLD_TARGET, f"{m_ours / m_base:.2f}x (median of per-run ratios {paired:.2f}x)"
    )

    specs: list[RoundTripSpec] = [(ours, tool, args) for _label, tool, args in warm]
    specs.append((BASELINE_CMD, "echo", {"text": "ping"}))
    if echo_chars:
        specs.append((BASELINE_CMD, "echo", {"text": "x" * echo_chars}))
    times = warm_roundtrips(specs, warm_calls)
    b50, b95 = percentiles(times[len(warm)])
    n = warm_calls
    for (label, _tool, _args), xs in zip(warm, times, strict=False):
        o50, o95 = percentiles(xs)
        section.add(f"warm {label} p50, {n} calls (<= {WARM_TARGET}x)", ms(o50), ms(b50), ratio(o50, b50))
        section.add(f"warm {label} p95, {n} calls (<= {WARM_TARGET}x)", ms(o95), ms(b95), ratio(o95, b95))
        if echo_chars:
            s50, s95 = percentiles(times[-1])
            section.add(f"  same, vs echo of {echo_chars:,} chars: p50", ms(o50), ms(s50), ratio(o50, s50))
            section.add(f"  same, vs echo of {echo_chars:,} chars: p95", ms(o95), ms(s95), ratio(o95, s95))
        section.target(
            f"warm {label} round trip",
            o50 / b50 <= WARM_TARGET,
            f"p50 {o50 / b50:.2f}x, p95 {o95 / b95:.2f}x vs 'ping' echo",
        )


# -- output ---------------------------------------------------------------------------------------


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):  # not on Windows
        return "n/a"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def machine_line() -> str:
    cpus = os.cpu_count()
    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on macOS / Windows
        usable = cpus
    return (
        f"machine: {cpus} cpus ({usable} usable), Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.platform()}, executable {sys.executable}; "
        f"load average {load_average()} (1/5/15 min)"
    )


def format_table(rows: Sequence[Sequence[str]], header: Sequence[str], left: int = 1) -> list[str]:
    """An aligned Markdown table: the first ``left`` columns left-aligned, the rest right-aligned."""
    all_rows = [header, *rows]
    widths = [max(len(r[c]) for r in all_rows) for c in range(len(header))]

    def fmt(r: Sequence[str]) -> str:
        cells = [r[c].ljust(widths[c]) if c < left else r[c].rjust(widths[c]) for c in range(len(header))]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) if c < left else "-" * (w + 1) + ":" for c, w in enumerate(widths)) + "|"
    return [fmt(header), rule, *(fmt(r) for r in rows)]


def print_table(rows: Sequence[Sequence[str]], header: Sequence[str] = ("figure", "ours", "baseline", "ratio")) -> None:
    print("\n".join(format_table(rows, header)), flush=True)


def print_section(section: Section) -> None:
    print_table(section.rows)
    print()
    for note in section.notes:
        print(note)
    if section.notes:
        print()
    print("targets:")
    for target in section.targets:
        print(target.line())
    if section.stages:
        print(f"stages: {', '.join(section.stages)}")
    sys.stdout.flush()


def script_main(
    server: str,
    doc: str | None,
    collect: Callable[[Path, bool], Section],
    *,
    add_args: Callable[[argparse.ArgumentParser], None] | None = None,
    after: Callable[[argparse.Namespace, Path], None] | None = None,
) -> None:
    """The whole ``main()`` of a server script: ``[--quick] [--tmp DIR]``, ``collect``, print.

    ``add_args`` adds the script's own options; ``after(args, tmp)`` runs once the section is
    printed, before the temporary folder goes.
    """
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run (figures mean nothing)")
    parser.add_argument("--tmp", type=Path, default=None, help="where the temporary workspaces go")
    if add_args:
        add_args(parser)
    args = parser.parse_args()
    print(f"{server} benchmarks" + (" (--quick: smoke sizes, figures mean nothing)" if args.quick else ""))
    print(machine_line() + "; " + compile_bytecode())
    print(CLIENT_LINE)
    print(flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="suite-bench-", dir=args.tmp)).resolve()
    try:
        with patched_environ(bench_env(tmp)):
            print_section(collect(tmp, args.quick))
            if after:
                after(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
