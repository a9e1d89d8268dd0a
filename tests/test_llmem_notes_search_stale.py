"""A search of notes marks the notes whose code changed since they were written, and a note
written again leaves nothing of its old text to find: the trial's rename of
``KnowledgeGraphManager.saveGraph`` to ``persistGraph`` in the memory server of
modelcontextprotocol/servers (tests/data/servers-memory), edited by the test between calls."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call, llmem_client

INDEX = "src/memory/index.ts"
FILE_NOTE = "Persistence: every mutating method rewrites the whole file with `KnowledgeGraphManager.{}`."


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "servers-memory", ws)
    return ws


def _note(svc: Llmem, file_note: str, symbols: dict[str, str]) -> None:
    out = svc.prompt(INDEX, "annotate")
    assert out.callbackArgs is not None
    answer = {"file": {"description": file_note}, "symbols": {k: {"description": v} for k, v in symbols.items()}}
    assert svc.store_result(**out.callbackArgs, result=json.dumps(answer), model="t").status == "success"


def _rename(ws: Path) -> int:
    """saveGraph → persistGraph everywhere in the file, as the trial's agent did; how many places."""
    file = ws / INDEX
    text, n = re.subn(r"\bsaveGraph\b", "persistGraph", file.read_text("utf-8"))
    file.write_text(text, encoding="utf-8")
    return n


def test_a_stale_note_is_marked_and_a_rewritten_one_leaves_no_old_text(ws: Path) -> None:
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    svc.parse(".")
    _note(
        svc,
        FILE_NOTE.format("saveGraph"),
        {"KnowledgeGraphManager.loadGraph": "Reads the JSONL file back into entities and relations."},
    )
    before = svc.search("saveGraph", None, ".", 20, None, scope="notes")
    assert [h["from"] for h in before["results"]] == ["annotate"] and "stale_notes" not in before
    assert "note_stale" not in before["results"][0]
    assert _rename(ws) == 7  # the definition and its six callers (grep -c saveGraph)
    after = svc.search("saveGraph", None, ".", 20, None, scope="notes")
    [hit] = after["results"]
    assert hit["symbol"] is None and after["stale_notes"] == 1
    assert "KnowledgeGraphManager.saveGraph (gone)" in hit["note_stale"]
    assert hit["refresh_with"] == f"generate_prompt(path={INDEX!r}, task='annotate')"
    # The note on loadGraph, whose code and named code did not change, is not marked.
    [load] = svc.search("JSONL file back", None, ".", 20, None, scope="notes")["results"]
    assert load["symbol"] == "KnowledgeGraphManager.loadGraph" and "note_stale" not in load
    # Written again without the old name: nothing of the old text is left to find.
    _note(svc, FILE_NOTE.format("persistGraph"), {})
    stored = (ws / ".llmem").rglob("annotate.json")
    assert not [p for p in stored if "saveGraph" in p.read_text("utf-8")]  # the store itself, read as text
    assert svc.search("saveGraph", None, ".", 20, None, scope="notes")["total"] == 0
    everywhere = svc.search("saveGraph", None, ".", 50, None)
    assert not [h for h in everywhere["results"] if h["from"] != "source"]
    [now] = svc.search("persistGraph", None, ".", 20, None, scope="notes")["results"]
    assert now["symbol"] is None and "note_stale" not in now


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[tuple[Client, Path]]:
    async with llmem_client(ws, request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_stale_notes_marked_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    err, out = await call(c, "generate_prompt", path=INDEX, task="annotate")
    assert not err
    note = {"file": {"description": FILE_NOTE.format("saveGraph")}, "symbols": {}}
    err, _ = await call(c, "store_llm_result", **out["callbackArgs"], result=json.dumps(note))
    assert not err
    _rename(ws)
    err, out = await call(c, "search_artifacts", query="saveGraph", scope="notes")
    assert not err and out["data"]["stale_notes"] == 1
    # Written with no symbol note, the file's note stands on every symbol: the gone one comes first.
    assert out["data"]["results"][0]["note_stale"].startswith("KnowledgeGraphManager.saveGraph gone")


def test_a_search_says_what_it_covered(servers_ws: Path) -> None:
    """A search of symbols or notes counts the files it covered (outlined, with notes) and, once
    the workspace was walked, those it did not (not yet outlined): counted here with rglob."""
    ws = servers_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    parsed = svc.parse("src/git")
    assert [f["path"] for f in parsed["skipped_files"]] == ["src/git/Dockerfile"]  # no outliner for it
    on_disk = [p for p in ws.rglob("*") if p.is_file() and ".llmem" not in p.parts]
    under_git = [p for p in on_disk if p.relative_to(ws).as_posix().startswith("src/git/") and p.name != "Dockerfile"]
    first = svc.search("serve", None, ".", 5, None, scope="symbols")["coverage"]
    assert first["outlined_files"] == len(under_git) and first["files_with_notes"] == 0
    assert first["workspace_files"] is None  # nothing has walked the workspace yet: not guessed
    assert svc.search("def serve", None, ".", 5, None, scope="lines")["total"] >= 1  # walks it
    after = svc.search("serve", None, ".", 5, None, scope="notes")["coverage"]
    assert after["workspace_files"] == len(on_disk)
    assert after["not_outlined"] == len(on_disk) - len(under_git)
    assert "generate_artifact(path='.')" in after["means"]
    assert "coverage" not in svc.search("def serve", None, ".", 5, None, scope="lines")
