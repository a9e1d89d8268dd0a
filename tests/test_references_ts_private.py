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

from tests.conftest import MODES, ROOT, call, llmem_client, llmem_stdio_client
from tests.test_references_ts_receivers import _grep, _lines, _svc  # grep over the files; the service

PQ = ROOT / "tests" / "data" / "p-queue"
INDEX = "source/index.ts"


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


def _rename(ws: Path, path: str, old: str, new: str, lines: range | None = None) -> None:
    """Rename ``old`` to ``new`` on ``lines`` of ``path`` (every line when None)."""
    file = ws / path
    text = file.read_text("utf-8").splitlines(keepends=True)
    for i, line in enumerate(text, 1):
        if lines is None or i in lines:
            text[i - 1] = re.sub(rf"\b{old}\b", new, line)
    file.write_text("".join(text), "utf-8")


def _found(answer: dict[str, Any]) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["results"]}


def test_a_member_missing_on_a_typed_receiver_is_a_finding(pq: Path) -> None:
    """``const queue = new PriorityQueue(); queue.enqueue(…)`` once the class's enqueue is push."""
    svc = _svc(pq)
    assert svc.check_references(None, 500, None)["total"] == 0  # a clean checkout: nothing broken
    svc.parse("source/priority-queue.ts")  # the store sees the class as it was
    decl = _grep(pq, r"^\tenqueue\(")
    assert decl == {("source/priority-queue.ts", 17)}
    _rename(pq, "source/priority-queue.ts", "enqueue", "push", range(17, 18))
    out = svc.check_references(None, 500, None)
    calls = _grep(pq, r"(?<![#\w])queue\.enqueue\(")  # not this.#queue (a generic QueueType)
    assert len(calls) >= 20 and _found(out) == calls
    for r in out["results"]:
        assert r["renamed_to"] == "PriorityQueue.push" and r["did_you_mean"][0] == "push"
        assert not [n for n in r["did_you_mean"] if n.startswith("#")]  # a #private member is no fix outside
    assert _found(svc.check_references("test/priority-queue.ts", 500, None)) == calls


def test_a_gone_member_of_a_class_with_a_base_outside_may_break(pq: Path) -> None:
    """PQueue extends EventEmitter (a package): its members are not all known, so a call of the gone
    onSizeLessThan on ``const queue = new PQueue()`` is listed as may break, with the rename."""
    svc = _svc(pq)
    assert svc.check_references(None, 500, None)["total"] == 0
    svc.parse("source/index.ts")
    (decl,) = _grep(pq, r"^\tasync onSizeLessThan\(")
    _rename(pq, decl[0], "onSizeLessThan", "onSizeBelow", range(decl[1], decl[1] + 1))
    _rename(pq, "test/basic.ts", "onSizeLessThan", "onSizeBelow", range(277, 290))
    out = svc.check_references(None, 500, None)
    left = {u for u in _grep(pq, r"\bqueue\.onSizeLessThan\(") if u[0] == "test/basic.ts"}  # not doc comments
    assert len(left) == 8 and out["total"] == 0
    by_name = out["may_break_by_name"]["results"]
    assert {(r["path"], r["line"]) for r in by_name} == left
    assert {r["renamed_to"] for r in by_name} == {"PQueue.onSizeBelow"}
    assert all("queue is a PQueue" in r["why"] for r in by_name)


@pytest.mark.anyio
async def test_typed_receivers_checked_through_the_server(client: Client, tmp_path: Path) -> None:
    ws = tmp_path / "pq"  # the client's workspace
    err, out = await call(client, "check_references")
    assert not err and out["data"]["total"] == 0
    err, out = await call(client, "get_artifact", path="source/priority-queue.ts")
    assert not err
    _rename(ws, "source/priority-queue.ts", "enqueue", "push", range(17, 18))
    err, out = await call(client, "check_references", path="test")
    assert not err and _found(out["data"]) == _grep(ws, r"(?<![#\w])queue\.enqueue\(")
    assert {r["renamed_to"] for r in out["data"]["results"]} == {"PriorityQueue.push"}


@pytest.mark.anyio
async def test_typed_receivers_checked_over_stdio(pq: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(pq) as c:
            err, out = await call(c, "check_references")
            assert not err and out["data"]["total"] == 0
            _rename(pq, "source/priority-queue.ts", "enqueue", "push", range(17, 18))
            err, out = await call(c, "check_references")
            assert not err and len(out["data"]["results"]) == len(_grep(pq, r"(?<![#\w])queue\.enqueue\("))


def _unexport(ws: Path, path: str, name: str) -> int:
    """Drop ``export`` from the declaration of ``name`` in ``path``; its line."""
    (decl,) = _grep(ws, rf"^export type {name}\b")
    assert decl[0] == path
    _rename(ws, path, f"export type {name}", f"type {name}", range(decl[1], decl[1] + 1))
    return decl[1]


@pytest.mark.anyio
async def test_an_import_of_a_name_declared_but_not_exported(client: Client, tmp_path: Path) -> None:
    """The fix is ``export``, not another name: why says so and did_you_mean is empty."""
    ws = tmp_path / "pq"
    line = _unexport(ws, "source/options.ts", "TaskOptions")
    err, out = await call(client, "check_references")
    imports = _grep(ws, r"^import .*\bTaskOptions\b.*from '\./options\.js'")
    assert not err and _found(out["data"]) == imports == {("source/index.ts", 5)}
    (finding,) = out["data"]["results"]
    assert finding["defined_in"] == f"source/options.ts:{line}"
    assert "not exported" in finding["why"] and "add export" in finding["why"]
    assert not finding.get("did_you_mean")
    assert finding["uses"]["lines"] == sorted(
        n for p, n in _grep(ws, r"\bTaskOptions\b") if p == "source/index.ts" and n != 5
    )


def test_find_references_of_a_method_renamed_in_its_class_only(pq: Path) -> None:
    """find_references('onSizeLessThan') answers as for Python: the calls left are unresolved with
    why, and last_defined says where it was and what it was renamed to."""
    svc = _svc(pq)
    svc.parse("source/index.ts")
    (decl,) = _grep(pq, r"^\tasync onSizeLessThan\(")
    _rename(pq, decl[0], "onSizeLessThan", "onSizeBelow", range(decl[1], decl[1] + 1))
    left = {u for u in _grep(pq, r"\bqueue\.onSizeLessThan\(") if u[0] == "test/basic.ts"}
    for asked in ("onSizeLessThan", "PQueue.onSizeLessThan"):
        out = svc.references(asked, None, None, 500, None)
        assert out["definitions"] == [] and out["unresolved"] is True
        assert {(r["path"], r["line"]) for r in out["results"] if r.get("unresolved")} == left
        assert out["last_defined"]["renamed_to"] == "PQueue.onSizeBelow"
        assert out["last_defined"]["line"] == decl[1]


def test_find_references_marks_an_import_of_a_name_no_longer_exported_unresolved(pq: Path) -> None:
    """The import of a type its file declares but no longer exports, and the uses it brings in,
    are unresolved with why, as check_references judges them; not plain uses."""
    svc = _svc(pq)
    svc.parse(".")
    _unexport(pq, "source/options.ts", "TaskOptions")
    out = svc.references("TaskOptions", None, None, 500, None)
    broken = {(u["path"], u["line"]) for u in out["results"] if u.get("unresolved")}
    expected = {u for u in _grep(pq, r"\bTaskOptions\b") if u[0] == "source/index.ts"}
    assert broken == expected and ("source/index.ts", 5) in broken
    assert all(u.get("why") for u in out["results"] if u.get("unresolved"))
    assert out["unresolved_total"] == len(expected)
