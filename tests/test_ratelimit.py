"""Calls are rate-limited per client (seed 000 §4.2): a token bucket for writes, a generous one
for reads; over the limit a call is refused RATE_LIMITED with retry_after and changes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from llmem.core.config import Limits, ServerConfig
from llmem.core.ratelimit import RateLimiter, TokenBucket
from tests.conftest import DATA, MODES, console_script, subprocess_env

pytestmark = pytest.mark.anyio

SAMPLE = DATA / "plots" / "sample.plot.json"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_gives_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=2.0, burst=3, clock=clock)
    assert [bucket.allow() for _ in range(4)] == [True, True, True, False]
    assert bucket.retry_in_s() == pytest.approx(0.5)
    clock.now = 0.5
    assert bucket.allow() and not bucket.allow()
    clock.now = 100.0  # a long pause refills to the burst, no more
    assert sum(bucket.allow() for _ in range(10)) == 3


def test_a_bucket_needs_a_positive_rate_and_burst() -> None:
    with pytest.raises(ValueError, match="rate > 0"):
        TokenBucket(rate=0, burst=1)
    with pytest.raises(ValueError, match="burst >= 1"):
        TokenBucket(rate=1, burst=0)


def test_clients_and_kinds_have_their_own_buckets() -> None:
    clock = Clock()
    limiter = RateLimiter(writes_per_minute=60, write_burst=2, reads_per_minute=600, read_burst=5, clock=clock)
    assert [limiter.check("a", "write").allowed for _ in range(3)] == [True, True, False]
    refused = limiter.check("a", "write")
    assert not refused.allowed and refused.retry_after == pytest.approx(1.0) and refused.kind == "write"
    assert refused.rate_per_minute == 60 and refused.burst == 2
    assert limiter.check("a", "read").allowed  # reads are counted apart
    assert limiter.check("b", "write").allowed  # another client has its own budget


def test_the_limits_are_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMEM_WRITES_PER_MINUTE", "30")
    monkeypatch.setenv("LLMEM_WRITE_BURST", "4")
    monkeypatch.setenv("LLMEM_READS_PER_MINUTE", "90")
    monkeypatch.setenv("LLMEM_READ_BURST", "9")
    limits = Limits.from_env()
    assert (limits.writes_per_minute, limits.write_burst, limits.reads_per_minute, limits.read_burst) == (30, 4, 90, 9)
    monkeypatch.setenv("LLMEM_WRITE_BURST", "0")
    with pytest.raises(ValueError, match="LLMEM_WRITE_BURST"):
        Limits.from_env()


def _state_server(workspace: Path, clock: Clock, *, write_burst: int) -> Any:
    from debrief_calc.state.server import build_server

    limits = Limits(write_burst=write_burst, writes_per_minute=60, read_burst=1000)
    server = build_server(ServerConfig(server_name="debrief-state-mcp", workspace=workspace, limits=limits))
    server.rate_limiter = RateLimiter(
        writes_per_minute=60, write_burst=write_burst, reads_per_minute=6000, read_burst=1000, clock=clock
    )
    return server


@pytest.mark.parametrize("mode", MODES)
async def test_over_the_limit_a_write_is_refused_with_retry_after_and_changes_nothing(
    workspace: Path, mode: str
) -> None:
    shutil.copy(SAMPLE, workspace / "a.plot.json")
    clock = Clock()
    server = _state_server(workspace, clock, write_burst=2)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        features = (await client.call_tool("debrief_get_features", {"filename": "a.plot.json"})).structured_content
        assert features is not None
        ids = [f["id"] for f in features["features"]][:3]
        for fid in ids[:2]:
            ok = await client.call_tool("debrief_set_selection", {"selectedIds": [fid], "filename": "a.plot.json"})
            assert not ok.is_error, ok.structured_content
        before = (workspace / "a.plot.json").read_bytes()
        refused = await client.call_tool("debrief_set_selection", {"selectedIds": [ids[2]], "filename": "a.plot.json"})
        assert refused.is_error and refused.structured_content is not None
        error = refused.structured_content["error"]
        assert error["code"] == "RATE_LIMITED" and error["details"]["retry_after"] == pytest.approx(1.0)
        assert "call again in 1 s" in error["message"].lower()
        assert (workspace / "a.plot.json").read_bytes() == before
        selection = await client.call_tool("debrief_get_selection", {"filename": "a.plot.json"})
        assert selection.structured_content is not None
        assert selection.structured_content["selectedIds"] == [ids[1]]  # reads still answer
        clock.now += 1.0  # retry_after later the same call goes through
        again = await client.call_tool("debrief_set_selection", {"selectedIds": [ids[2]], "filename": "a.plot.json"})
        assert not again.is_error


async def test_the_calc_server_refuses_in_its_own_answer_shape(workspace: Path) -> None:
    from debrief_calc.calc.server import build_server

    limits = Limits(read_burst=1, reads_per_minute=1)
    server = build_server(ServerConfig(server_name="debrief-calc-mcp", workspace=workspace, limits=limits))
    async with Client(server) as client:
        assert not (await client.call_tool("describe_tool", {"name": "track-stats"})).is_error
        refused = await client.call_tool("describe_tool", {"name": "track-stats"})
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["success"] is False
        assert refused.structured_content["error"]["code"] == "RATE_LIMITED"
        assert refused.structured_content["error"]["details"]["retry_after"] > 0


@pytest.mark.slow
async def test_a_burst_of_300_writes_over_stdio_keeps_the_plot_valid_and_every_accepted_write(
    workspace: Path,
) -> None:
    shutil.copy(SAMPLE, workspace / "a.plot.json")
    params = StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    accepted: list[str] = []
    refused: list[float] = []

    async def add(client: Client, n: int) -> None:
        fid = f"burst-{n}"
        feature = {
            "type": "Feature",
            "id": fid,
            "geometry": {"type": "Point", "coordinates": [-21.0, 22.0 + n / 1000]},
            "properties": {"dataType": "reference-point", "name": fid},
        }
        result = await client.call_tool(
            "debrief_apply_command",
            {"command": {"command": "addFeatures", "payload": [feature]}, "filename": "a.plot.json"},
        )
        assert result.structured_content is not None
        if result.is_error:
            error = result.structured_content["error"]
            assert error["code"] == "RATE_LIMITED", error
            refused.append(error["details"]["retry_after"])
        else:
            accepted.append(fid)

    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as client, anyio.create_task_group() as tg:
            for n in range(300):
                tg.start_soon(add, client, n)
    assert len(accepted) + len(refused) == 300
    default = Limits()
    assert default.write_burst <= len(accepted) < 300 and refused and all(r > 0 for r in refused)
    plot = json.loads((workspace / "a.plot.json").read_text(encoding="utf-8"))
    stored = {f.get("id") for f in plot["features"]}
    assert set(accepted) <= stored and not ({f"burst-{n}" for n in range(300)} - set(accepted)) & stored


@pytest.mark.slow
async def test_over_http_each_session_has_its_own_budget(workspace: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_http import serving, wait_healthy

    shutil.copy(SAMPLE, workspace / "a.plot.json")
    env = {"LLMEM_WRITE_BURST": "2", "LLMEM_WRITES_PER_MINUTE": "1"}
    with serving("debrief-state-mcp", workspace, "--log-level", "warning", env=env) as (port, _proc):
        base = f"http://127.0.0.1:{port}"
        await wait_healthy(base + "/health")
        args = {"selectedIds": [], "filename": "a.plot.json"}
        with anyio.fail_after(60):
            async with (
                httpx2.AsyncClient() as http,
                Client(streamable_http_client(base + "/mcp", http_client=http), mode="legacy") as first,
            ):
                outcomes = [(await first.call_tool("debrief_set_selection", args)).is_error for _ in range(3)]
                assert outcomes == [False, False, True]
                async with Client(streamable_http_client(base + "/mcp", http_client=http), mode="legacy") as second:
                    assert not (await second.call_tool("debrief_set_selection", args)).is_error
