"""Progress notifications, client roots as the workspace, and the HTTP transport."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp_types import ListRootsResult, Root

from llmem.config import ServerConfig
from llmem.server import build_server
from tests.conftest import console_script, subprocess_env

pytestmark = pytest.mark.anyio


async def test_folder_parse_reports_progress(sample_project: Path) -> None:
    for i in range(30):
        (sample_project / "src" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    server = build_server(ServerConfig("llmem-mcp", sample_project))
    async with Client(server, mode="legacy") as c:
        r = await c.call_tool("generate_artifact", {"path": "."}, progress_callback=on_progress)
    assert r.structured_content and r.structured_content["data"]["parsed"] == 32
    assert seen and seen[-1][0] == seen[-1][1] == 32
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


async def test_without_workspace_the_clients_root_is_used(sample_project: Path) -> None:
    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=sample_project.as_uri(), name="project")])  # type: ignore[arg-type]

    server = build_server(ServerConfig("llmem-mcp", None))
    async with Client(server, mode="legacy", list_roots_callback=roots) as c:
        r = await c.call_tool("generate_artifact", {"path": "src/app.py"})
        assert not r.is_error, r.structured_content
    assert server.runtime.workspace == sample_project
    assert "client root" in server.runtime.workspace_source


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_http_transport_health_and_origin_check(sample_project: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [
            console_script("llmem-mcp"),
            "--workspace",
            str(sample_project),
            "--transport",
            "streamable-http",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            with anyio.fail_after(30):
                while True:
                    try:
                        health = await http.get("/health")
                        break
                    except httpx.ConnectError:
                        await anyio.sleep(0.05)
            assert health.json()["status"] == "ok"
            foreign = await http.post(
                "/mcp",
                headers={
                    "Origin": "http://evil.example",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
            assert foreign.status_code in (400, 403)
        with anyio.fail_after(30):
            async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as c:
                tools = {t.name for t in (await c.list_tools()).tools}
                assert "get_artifact" in tools
                r = await c.call_tool("generate_artifact", {"path": "src/app.py"})
                assert not r.is_error
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.stdout is not None and proc.stdout.read() == b""
