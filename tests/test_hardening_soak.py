"""Soak: 10,000 tool calls to long-running server processes, and their memory must stay flat.

One process per server, each driven over real stdio with several requests in flight:

- llmem-mcp, 4,000 calls: ``get_artifact`` and ``list_artifacts`` on a parsed small project;
- debrief-state-mcp, 3,000 calls: ``debrief_get_selection`` and ``debrief_set_selection`` (a store
  write each) on the 577 KB sample plot;
- debrief-calc-mcp, 3,000 calls: ``list_tools`` and ``run_tool track-stats`` (a stored result
  each) on the small sample track.

Every answer must be a success. The process's resident set size (``VmRSS`` in
``/proc/<pid>/status``) is read every ``SAMPLE_EVERY`` calls. The first ``WARM_UP`` calls are a
warm-up (imports on first use, caches filling, pymalloc arenas and glibc heaps reaching their
working size); after it, the growth from the median of the first 10 samples to the median of
the last 10 must stay under ``GROWTH_LIMIT_KB`` (8 MB), and so must the growth implied by
the least-squares slope over the samples after warm-up.

The bound: measured here, RSS after warm-up moves by under 2 MB over 2,000+ calls (llmem
about +1 MB, in a step: a 30,000-call run of it stays within 70–72 MB; state and calc about
+0.2 MB), which is allocator noise. A leak of 4 KB per call — a small dict or a log record kept per request —
would add 8 MB or more over the 2,000+ measured calls and fail; anything smaller than
about 1 KB per call is below what a 2,000-call window can tell from allocator noise, and
this test does not claim to see it.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests._stdio import UNLIMITED_RATES, RawServer
from tests.conftest import DATA

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="RSS is read from /proc/<pid>/status (Linux only)"
)

WINDOW = 8  # requests in flight per server
SAMPLE_EVERY = 50
WARM_UP = 1_000
GROWTH_LIMIT_KB = 8 * 1024
PLOT = "large-sample.plot.json"

Call = tuple[str, dict[str, Any]]


def llmem_calls(ws: Path, rng: random.Random) -> Callable[[int], Call]:
    (ws / "src").mkdir()
    files = []
    for k in range(12):
        rel = f"src/m{k}.py"
        (ws / rel).write_text(f'"""M{k}."""\n\n\nclass C{k}:\n    def f(self) -> int:\n        return {k}\n')
        files.append(rel)

    def call(i: int) -> Call:
        if i % 2:
            return "get_artifact", {"path": rng.choice(files)}
        return "list_artifacts", {"directory": rng.choice(["src", "."]), "limit": 20}

    return call


def state_calls(ws: Path, rng: random.Random) -> Callable[[int], Call]:
    shutil.copy(DATA / "plots" / PLOT, ws / PLOT)
    ids = [str(f["id"]) for f in json.loads((ws / PLOT).read_bytes())["features"] if "metadata" not in str(f["id"])]

    def call(i: int) -> Call:
        if i % 2:
            return "debrief_get_selection", {"filename": PLOT}
        return "debrief_set_selection", {"filename": PLOT, "selectedIds": rng.sample(ids, rng.randint(0, 4))}

    return call


def calc_calls(ws: Path, rng: random.Random) -> Callable[[int], Call]:
    track = json.loads((DATA / "calc-track-single.geojson").read_text(encoding="utf-8"))

    def call(i: int) -> Call:
        if i % 2:
            return "list_tools", rng.choice([{}, {"kinds": ["track"]}, {"context_type": "single"}])
        return "run_tool", {"tool": "track-stats", "features": [track]}

    return call


def setup_server(server: RawServer, script: str) -> None:
    if script == "llmem-mcp":
        r = server.call_tool("generate_artifact", {"path": "src"})
        assert not r["isError"] and r["structuredContent"]["data"]["parsed"] == 12, r


def soak(server: RawServer, make: Callable[[int], Call], calls: int) -> list[tuple[int, int]]:
    """Drive ``calls`` tool calls with ``WINDOW`` in flight; RSS samples as (calls done, kB)."""
    samples: list[tuple[int, int]] = [(0, server.rss_kb())]
    in_flight: deque[tuple[Any, str]] = deque()
    failures: list[str] = []

    def settle_oldest() -> None:
        id_, name = in_flight.popleft()
        server.wait_for([id_], 60)
        answer = server.pop_answer(id_)
        result = answer.get("result") or {}
        if "error" in answer or result.get("isError"):
            failures.append(f"{name}: {json.dumps(answer)[:300]}")

    for i in range(calls):
        name, arguments = make(i)
        in_flight.append((server.request("tools/call", {"name": name, "arguments": arguments}), name))
        if len(in_flight) >= WINDOW:
            settle_oldest()
        if (i + 1) % SAMPLE_EVERY == 0:
            samples.append((i + 1, server.rss_kb()))
        assert not failures, failures[:5]
    while in_flight:
        settle_oldest()
    assert not failures, failures[:5]
    samples.append((calls, server.rss_kb()))
    return samples


def growth_kb(samples: list[tuple[int, int]]) -> tuple[float, float, float]:
    """(median growth, least-squares growth over the window, kB per 1,000 calls) after warm-up."""
    after = [(n, kb) for n, kb in samples if n >= WARM_UP]
    first, last = [kb for _, kb in after[:10]], [kb for _, kb in after[-10:]]
    median_growth = statistics.median(last) - statistics.median(first)
    xs, ys = [float(n) for n, _ in after], [float(kb) for _, kb in after]
    slope = statistics.linear_regression(xs, ys).slope  # kB per call
    span = xs[-1] - xs[0]
    return median_growth, slope * span, slope * 1000


SOAKS = [  # 10,000 calls in all; debrief-state (an fsynced store write every other call) takes over 20 s
    pytest.param("llmem-mcp", 4_000, llmem_calls, id="llmem-mcp"),
    pytest.param("debrief-state-mcp", 3_000, state_calls, id="debrief-state-mcp", marks=pytest.mark.slow),
    pytest.param("debrief-calc-mcp", 3_000, calc_calls, id="debrief-calc-mcp"),
]


@pytest.mark.parametrize(("script", "calls", "factory"), SOAKS)
def test_memory_stays_flat_over_thousands_of_calls(
    script: str,
    calls: int,
    factory: Callable[[Path, random.Random], Callable[[int], Call]],
    workspace: Path,
    tmp_path: Path,
) -> None:
    make = factory(workspace, random.Random(f"soak:{script}"))
    started = time.monotonic()
    with RawServer(script, workspace, tmp_path / "stderr.log", keep_raw=False, env=UNLIMITED_RATES) as server:
        server.initialize()
        setup_server(server, script)
        samples = soak(server, make, calls)
        assert server.close() == 0
    elapsed = time.monotonic() - started
    median_growth, trend_growth, per_1000 = growth_kb(samples)
    rss = [kb for _, kb in samples]
    print(
        f"{script}: {calls} calls in {elapsed:.1f} s; RSS {rss[0] / 1024:.1f} → {rss[-1] / 1024:.1f} MB "
        f"(peak {max(rss) / 1024:.1f}); after warm-up: median growth {median_growth / 1024:+.2f} MB, "
        f"trend {trend_growth / 1024:+.2f} MB ({per_1000:+.1f} kB per 1,000 calls)"
    )
    assert server.bad_lines == []
    assert median_growth < GROWTH_LIMIT_KB, f"RSS grew {median_growth / 1024:.1f} MB after warm-up: {samples}"
    assert trend_growth < GROWTH_LIMIT_KB, f"RSS trends up {trend_growth / 1024:.1f} MB after warm-up: {samples}"
