"""What a coding agent stumbled on in the code memory over modelcontextprotocol/servers, through
the server, on real files of that repository (tests/data/servers) copied to tmp_path."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.server import build_server
from llmem.core.config import ServerConfig
from tests.conftest import ROOT, call

SERVERS = ROOT / "tests" / "data" / "servers"
GIT = "src/git/src/mcp_server_git/server.py"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    shutil.copytree(SERVERS / "src", tmp_path / "src")
    async with Client(build_server(ServerConfig("llmem-mcp", tmp_path)), mode="auto") as c:
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        yield c


@pytest.mark.anyio
async def test_a_stale_summary_names_what_it_mentions_that_is_gone_and_how_to_refresh(
    client: Client, tmp_path: Path
) -> None:
    err, out = await call(client, "generate_prompt", path=GIT, task="summarize")
    assert not err
    summary = "# server.py\n\nThe git server: `serve` wires the tools; `git_status` and `git_log` read the repo."
    err, out = await call(client, "store_llm_result", **out["callbackArgs"], result=summary)
    assert not err and out["status"] == "success"
    err, out = await call(client, "list_artifacts", directory="src/git", status="stale")
    assert not err and "To refresh" not in out["nextAction"]  # nothing stale: no advice
    source = tmp_path / GIT
    source.write_text(re.sub(r"\bgit_status\b", "git_state", source.read_text("utf-8")), encoding="utf-8")
    err, out = await call(client, "list_artifacts", directory="src/git", status="stale")
    assert not err and out["data"]["count"] >= 1
    assert "generate_artifact(path)" in out["nextAction"] and "generate_prompt(path, task)" in out["nextAction"]
    err, out = await call(client, "get_artifact", path=GIT, kind="summarize")
    assert not err and out["data"]["status"] == "stale"
    assert out["data"]["gone_names_mentioned"] == ["git_status"]  # git_log and serve are still there
    assert "gone_names_mentioned" in out["nextAction"] and f"generate_prompt('{GIT}', 'summarize')" in out["nextAction"]
