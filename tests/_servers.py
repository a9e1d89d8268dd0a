"""Real code of modelcontextprotocol/servers (tests/data/servers) as a workspace, and an
in-process llmem-mcp client on it with everything outlined: what the notes tests start from."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

from mcp import Client

from llmem.code.server import build_server
from llmem.core.config import ServerConfig
from tests.conftest import ROOT, call

__all__ = ["SERVERS", "copy_servers", "parsed_client"]

SERVERS = ROOT / "tests" / "data" / "servers"


def copy_servers(tmp_path: Path) -> Path:
    """A copy of the servers files of this test's own (the tests edit them)."""
    shutil.copytree(SERVERS, tmp_path / "ws")
    return tmp_path / "ws"


@contextlib.asynccontextmanager
async def parsed_client(ws: Path, mode: str) -> AsyncIterator[Client]:
    """A client of an in-process server on ``ws`` in protocol era ``mode``, the workspace parsed."""
    async with Client(build_server(ServerConfig("llmem-mcp", ws)), mode=mode) as c:  # type: ignore[arg-type]
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        yield c
