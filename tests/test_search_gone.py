"""search_artifacts in 'auto' scope for a name renamed away (trial t23c item 6), on encode/httpx
(tests/data/httpx): ``to_bytes`` renamed to ``as_bytes`` in httpx/_utils.py, its uses left in
_auth.py and _multipart.py. ``to_bytes_or_str`` matches by prefix, so 'auto' used to answer that
(and docstring words) and never the lines still calling the gone name. Counted against grep."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests._httpx import httpx_workspace, rename_method, service
from tests.conftest import MODES, call, llmem_client, llmem_stdio_client

UTILS = "httpx/_utils.py"


def _grep(ws: Path, pattern: str, flags: int = 0) -> int:
    """Lines of the workspace's files matching ``pattern`` (``grep -r``)."""
    return sum(
        1
        for file in ws.rglob("*")
        if file.is_file() and ".llmem" not in file.parts
        for line in file.read_text("utf-8", errors="replace").splitlines()
        if re.search(pattern, line, flags)
    )


@pytest.fixture
def renamed(tmp_path: Path) -> Path:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    svc.parser.parse(svc.resolve("."))
    rename_method(ws, "to_bytes", "as_bytes", UTILS)
    return ws


def test_a_name_renamed_away_says_gone_and_counts_its_lines(renamed: Path) -> None:
    out = service(renamed).search("to_bytes", None, ".", 20, None)
    assert out["scope"] == "auto" and any(r["match"] == "prefix" for r in out["results"])  # the coincidence
    assert list(out)[:3] == ["directory", "query", "gone"]  # said first
    gone = out["gone"]
    assert gone["last_defined"]["path"] == UTILS and gone["renamed_to"] == "as_bytes"
    assert gone["remaining_uses"]["lines"] == _grep(renamed, r"\bto_bytes\b") == 10
    assert "find_references('to_bytes')" in gone["remaining_uses"]["list_with"]
    assert out["lines"]["total"] == _grep(renamed, "to_bytes", re.IGNORECASE)
    assert out["lines"]["whole_word"] == 10
    lines = service(renamed).search("to_bytes", None, ".", 100, None, scope="lines")
    assert lines["total"] == out["lines"]["total"]


def test_a_name_defined_exactly_gets_neither(renamed: Path) -> None:
    out = service(renamed).search("as_bytes", None, ".", 20, None)
    assert out["results"][0]["match"] == "exact-name"
    assert "gone" not in out and "lines" not in out


def test_words_are_not_a_name(renamed: Path) -> None:
    out = service(renamed).search("bytes stream", None, ".", 20, None)
    assert "gone" not in out and "lines" not in out
    short = service(renamed).search("to", None, ".", 20, None)  # in most lines: not counted
    assert short["results"] and "lines" not in short


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, renamed: Path) -> AsyncIterator[Client]:
    async with llmem_client(renamed, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_gone_through_the_server_leads_the_hint(client: Client) -> None:
    err, out = await call(client, "search_artifacts", query="to_bytes")
    assert not err and out["data"]["gone"]["renamed_to"] == "as_bytes"
    assert out["nextAction"].startswith("'to_bytes' is gone (last defined in httpx/_utils.py, renamed to 'as_bytes')")


@pytest.mark.anyio
async def test_gone_and_coverage_over_stdio(renamed: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(renamed) as c:
            err, out = await call(c, "search_artifacts", query="to_bytes")
            assert not err and out["data"]["gone"]["remaining_uses"]["lines"] == _grep(renamed, r"\bto_bytes\b")
            coverage = out["data"]["coverage"]  # the line count walked the workspace: every file is outlined
            assert coverage["workspace_files"] == coverage["outlined_files"] and coverage["not_outlined_parsable"] == 0
