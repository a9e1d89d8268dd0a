"""Progress notifications and client roots as the workspace (HTTP: see test_http.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import ListRootsResult, Root

from llmem.code.server import build_server
from llmem.core.config import ServerConfig

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
