"""TypeScript ``#private`` members and check_references through typed receivers (trial t23e,
findings 2, 3, 6 and 9), on real code of sindresorhus/p-queue (tests/data/p-queue, copied unchanged).

``PQueue.#tryToStartAnother`` is a #private method called as ``this.#tryToStartAnother()``; the
outline names it with ``#``, and so must find_references. Every expectation is checked against grep
(regular expressions over the files), never against the tool's own output.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call, llmem_client, llmem_stdio_client

PQ = ROOT / "tests" / "data" / "p-queue"
INDEX = "source/index.ts"


def _grep(ws: Path, pattern: str) -> set[tuple[str, int]]:
    """(path, line) of every line of the workspace's files matching ``pattern``."""
    out: set[tuple[str, int]] = set()
    for file in ws.rglob("*"):
        if file.is_file() and ".llmem" not in file.parts:
            for n, line in enumerate(file.read_text("utf-8", "replace").splitlines(), 1):
                if re.search(pattern, line):
                    out.add((file.relative_to(ws).as_posix(), n))
    return out


def _svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=400_000))


def _lines(answer: dict[str, Any], kinds: tuple[str, ...] = ("call", "reference")) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["results"] if r["kind"] in kinds}


@pytest.fixture
def pq(tmp_path: Path) -> Path:
    ws = tmp_path / "pq"
    shutil.copytree(PQ, ws)
    return ws


@pytest.mark.parametrize("asked", ["PQueue.#tryToStartAnother", "#tryToStartAnother", "tryToStartAnother"])
def test_a_private_method_is_found_with_or_without_its_hash(pq: Path, asked: str) -> None:
    calls = _grep(pq, r"this\.#tryToStartAnother\(")
    assert len(calls) == 4
    out = _svc(pq).references(asked, None, None, 500, None)
    assert {(d["path"], d["symbol"]) for d in out["definitions"]} == {(INDEX, "PQueue.#tryToStartAnother")}
    assert _lines(out, ("call",)) == calls
    assert ("asked" in out) == (not asked.count("#"))  # the bare name says it answered for the # member


def test_a_private_method_has_callers_and_a_private_field_its_reads(pq: Path) -> None:
    tree = _svc(pq).references("tryToStartAnother", None, None, 500, None, depth=2)
    assert {(INDEX, c["line"]) for c in tree["callers"]} == _grep(pq, r"this\.#tryToStartAnother\(")
    reads = _svc(pq).references("PQueue.#intervalId", INDEX, None, 500, None)
    uses = _grep(pq, r"this\.#intervalId\b")
    sets = _grep(pq, r"this\.#intervalId = ")
    assert sets and _lines(reads) == uses - sets


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Client]:
    ws = tmp_path / "pq"
    shutil.copytree(PQ, ws)
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_private_members_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="PQueue.#tryToStartAnother", kind="call")
    assert not err and len(out["data"]["results"]) == 4


@pytest.mark.anyio
async def test_private_members_over_stdio(pq: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(pq) as c:
            err, out = await call(c, "find_references", symbol="#tryToStartAnother", depth=2)
            assert not err and len(out["data"]["callers"]) == 4
