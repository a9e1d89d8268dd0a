"""The streamable-HTTP transport of every server: /mcp, GET /health, Host and Origin checks."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from tests.conftest import DATA, console_script, subprocess_env

pytestmark = pytest.mark.anyio

SERVERS = {
    "llmem-mcp": ("generate_artifact", {"path": "."}),
    "debrief-calc-mcp": ("describe_tool", {"name": "track-stats"}),
    "debrief-state-mcp": ("debrief_list_plots", {}),
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(
    script: str, workspace: Path, *extra: str, env: dict[str, str] | None = None
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            console_script(script),
            "--workspace",
            str(workspace),
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            *extra,
        ],
        env=subprocess_env(**(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.stdout is not None and proc.stdout.read() == b""  # stdout stays silent over HTTP too


async def wait_healthy(url: str, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        with anyio.fail_after(30):
            while True:
                try:
                    return await http.get(url, headers=headers)
                except httpx.ConnectError:
                    await anyio.sleep(0.05)


@pytest.fixture
def ws(workspace: Path) -> Path:
    (workspace / "app.py").write_text("def main():\n    return 0\n")
    shutil.copy(DATA / "plots" / "sample.plot.json", workspace / "sample.plot.json")
    return workspace


@pytest.mark.parametrize("script", SERVERS)
async def test_http_serves_mcp_health_and_refuses_foreign_origins(script: str, ws: Path) -> None:
    tool, args = SERVERS[script]
    with serving(script, ws, "--log-level", "warning") as (port, _proc):
        base = f"http://127.0.0.1:{port}"
        health = await wait_healthy(base + "/health")
        assert health.status_code == 200 and health.json()["server"] == script
        async with httpx.AsyncClient(base_url=base) as http:
            foreign = await http.post("/mcp", headers={**MCP_HEADERS, "Origin": "http://evil.example"}, json=INIT)
            assert foreign.status_code == 403
            rebinding = await http.post("/mcp", headers={**MCP_HEADERS, "Host": "evil.example"}, json=INIT)
            assert rebinding.status_code in (400, 421)
            same_origin = await http.post("/mcp", headers={**MCP_HEADERS, "Origin": base}, json=INIT)
            assert same_origin.status_code == 200
        for mode in ("legacy", "auto"):
            with anyio.fail_after(30):
                async with Client(base + "/mcp", mode=mode) as c:  # type: ignore[arg-type]
                    assert tool in {t.name for t in (await c.list_tools()).tools}
                    result = await c.call_tool(tool, args)
                    assert not result.is_error, result.structured_content


TOKEN = "t0ken-for-the-tests-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.mark.parametrize("script", SERVERS)
def test_beyond_loopback_without_a_token_refuses_to_start(script: str, ws: Path) -> None:
    done = subprocess.run(
        [console_script(script), "--workspace", str(ws), "--transport", "streamable-http", "--host", "0.0.0.0"],
        env=subprocess_env(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert b"beyond loopback" in done.stderr and b"LLMEM_AUTH_TOKEN" in done.stderr


@pytest.mark.parametrize("script", SERVERS)
async def test_with_a_token_every_request_needs_it(script: str, ws: Path) -> None:
    import httpx2

    tool, args = SERVERS[script]
    with serving(script, ws, "--log-level", "warning", env={"LLMEM_AUTH_TOKEN": TOKEN}) as (port, _proc):
        base = f"http://127.0.0.1:{port}"
        assert (await wait_healthy(base + "/health", BEARER)).status_code == 200
        async with httpx.AsyncClient(base_url=base) as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                refused = await http.post("/mcp", headers={**MCP_HEADERS, **headers}, json=INIT)
                assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
                assert (await http.get("/health", headers=headers)).status_code == 401
            assert (await http.post("/mcp", headers={**MCP_HEADERS, **BEARER}, json=INIT)).status_code == 200
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers=BEARER) as authed:
            with anyio.fail_after(30):
                async with Client(streamable_http_client(base + "/mcp", http_client=authed), mode="legacy") as c:
                    result = await c.call_tool(tool, args)
                    assert not result.is_error, result.structured_content


async def test_beyond_loopback_warns_and_keeps_checks_with_allow_lists(ws: Path) -> None:
    with serving(
        "debrief-calc-mcp",
        ws,
        "--host",
        "0.0.0.0",
        "--allow-host",
        "analysis.local",
        "--allow-origin",
        "http://analysis.local",
        env={"LLMEM_AUTH_TOKEN": TOKEN},
    ) as (port, proc):
        base = f"http://127.0.0.1:{port}"
        allowed = {"Host": "analysis.local", **BEARER}
        health = await wait_healthy(base + "/health", allowed)
        assert health.status_code == 200
        async with httpx.AsyncClient(base_url=base) as http:
            ok = await http.post(
                "/mcp", headers={**MCP_HEADERS, **allowed, "Origin": "http://analysis.local"}, json=INIT
            )
            assert ok.status_code == 200
            evil = await http.post(
                "/mcp", headers={**MCP_HEADERS, **allowed, "Origin": "http://evil.example"}, json=INIT
            )
            assert evil.status_code == 403
            unknown_host = await http.post("/mcp", headers={**MCP_HEADERS, **BEARER, "Host": "evil.example"}, json=INIT)
            assert unknown_host.status_code in (400, 421)
        proc.terminate()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        assert b"beyond loopback" in proc.stderr.read()
