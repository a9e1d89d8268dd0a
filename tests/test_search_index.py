"""search_artifacts as something an agent can trust: exact totals against a plain grep of the
same files, pages that never repeat or skip, every text file searchable, and a persistent index
(SQLite) that is rebuilt whenever it cannot be trusted and stays true across real processes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llmem.code.artifacts import Llmem
from llmem.code.index_db import DB_NAME, SCHEMA
from llmem.code.search import SCOPES, SearchIndex
from llmem.code.walk import walk_workspace
from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument
from llmem.core.store import ArtifactStore

REPO = Path(__file__).resolve().parents[1]
DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\nRUN pip install --no-cache-dir llmem-quokka\n"
WORKFLOW = (
    "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: llmem-quokka --check\n"
)


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's ``llmem`` package plus a Dockerfile and a CI workflow, outlined once and
    its lines indexed (copied per test)."""
    ws = tmp_path_factory.mktemp("indexws")
    shutil.copytree(REPO / "llmem", ws / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    (ws / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    (ws / ".github" / "workflows").mkdir(parents=True)
    (ws / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, encoding="utf-8")
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    svc.parse(".")
    svc.searcher().index_lines()
    svc.searcher().db.close()  # copied per test: nothing half-written in the copy
    return ws


@pytest.fixture
def llmem(parsed: Path, tmp_path: Path) -> Llmem:
    ws = tmp_path / "ws"
    shutil.copytree(parsed, ws)  # the store too: nothing to parse or index again
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits())


def grep(ws: Path, query: str, directory: str = ".") -> list[tuple[str, int]]:
    """A plain grep -i (ASCII) of the files the walk keeps for text search, as (path, line)."""
    needle = " ".join(query.split()).encode().lower()
    out = []
    for f in walk_workspace(ws, text=True).files:
        if f.rel_path.startswith(".llmem/") or not (directory == "." or f.rel_path.startswith(directory + "/")):
            continue
        data = f.abs_path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        out += [(f.rel_path, n) for n, line in enumerate(data.split(b"\n"), 1) if needle in line.lower()]
    return sorted(out)


def every_page(svc: Llmem, query: str, limit: int, scope: str = "auto", directory: str = ".") -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = svc.search(query, None, directory, limit, cursor, scope)
        assert len(json.dumps(page, ensure_ascii=False)) <= svc.limits.answer_chars
        assert page["count"] == len(page["results"]) and not page["total_is_capped"]
        hits += page["results"]
        cursor = page["next_cursor"]
        if cursor is None:
            assert len(hits) == page["total"]
            return hits
        assert page["left"] == page["total"] - len(hits) > 0


def key(hit: dict[str, Any]) -> tuple[Any, ...]:
    return (hit["path"], hit["symbol"], hit["start_line"], hit["match"], hit["from"])


@pytest.mark.parametrize("query", ["self", "resolve_in_workspace", "def ", "Path(", "import json", "ws", "x"])
def test_lines_give_the_exact_total_of_a_plain_grep(llmem: Llmem, query: str) -> None:
    truth = grep(llmem.ws, query)
    first = llmem.search(query, None, ".", 5, None, "lines")
    assert first["total"] == len(truth) and first["scope"] == "lines"
    assert len(truth) <= 5 or first["next_cursor"]  # never a silent limit per file or per answer
    hits = every_page(llmem, query, 100, "lines")
    assert [(h["path"], h["start_line"]) for h in hits] == truth
    assert {h["match"] for h in hits} <= {"code"}


def test_lines_under_a_folder_and_the_old_kind_code(llmem: Llmem) -> None:
    truth = grep(llmem.ws, "self", "llmem/core")
    assert llmem.search("self", None, "llmem/core", 5, None, "lines")["total"] == len(truth)
    assert llmem.search("self", "code", "llmem/core", 5, None)["total"] == len(truth)  # kind="code" still works
    with pytest.raises(InvalidArgument) as err:
        llmem.search("self", "function", ".", 5, None, "lines")
    assert err.value.details["field"] == "kind"
    with pytest.raises(InvalidArgument) as bad:
        llmem.search("self", None, ".", 5, None, "everything")
    assert bad.value.details["field"] == "scope" and bad.value.details["allowed"] == list(SCOPES)


def test_a_dockerfile_and_a_workflow_are_searchable_with_line_numbers(llmem: Llmem) -> None:
    hits = llmem.search("llmem-quokka", None, ".", 20, None, "lines")["results"]
    assert [(h["path"], h["start_line"], h["snippet"]) for h in hits] == [
        (".github/workflows/ci.yml", 7, "- run: llmem-quokka --check"),
        ("Dockerfile", 3, "RUN pip install --no-cache-dir llmem-quokka"),
    ]
    auto = llmem.search("llmem-quokka", None, ".", 20, None)  # no symbol or note: auto searches lines
    assert auto["total"] == 2 and auto["scope"].startswith("auto: lines")
    # Edited, added, ignored: the next search sees the files as they are.
    (llmem.ws / "Dockerfile").write_text(DOCKERFILE + "CMD llmem-quokka serve\n", encoding="utf-8")
    (llmem.ws / "deploy.sh").write_text("#!/bin/sh\nexec llmem-quokka\n", encoding="utf-8")
    (llmem.ws / "secret.env").write_text("TOKEN=llmem-quokka\n", encoding="utf-8")
    (llmem.ws / ".gitignore").write_text("*.env\n", encoding="utf-8")
    (llmem.ws / ".llmemignore").write_text(".github/\n", encoding="utf-8")
    found = {
        (h["path"], h["start_line"]) for h in llmem.search("llmem-quokka", None, ".", 20, None, "lines")["results"]
    }
    assert found == {("Dockerfile", 3), ("Dockerfile", 4), ("deploy.sh", 2)}


def test_symbols_and_notes_scopes_give_exact_totals(llmem: Llmem) -> None:
    outlines = [
        json.loads(f.read_text(encoding="utf-8"))["content"]
        for f in (llmem.store.root / "artifacts" / "llmem").rglob("outline.json")
    ]

    def names(symbols: list[dict[str, Any]]) -> list[str]:
        out = []
        for s in symbols:
            out.append(s["qualified_name"])
            out += names(s.get("children") or [])
        return out

    every = [n for o in outlines for n in names(o["symbols"])]
    # Every symbol whose qualified name holds "path" (any case) is one hit of the symbols scope.
    assert llmem.search("path", None, ".", 5, None, "symbols")["total"] == sum("path" in n.lower() for n in every)
    notes = llmem.search("workspace", None, ".", 5, None, "notes")
    assert notes["total"] > 0 and all(h["match"] in ("doc", "note", "summary") for h in notes["results"])


QUERIES = [
    "self",
    "path",
    "resolve",
    "walk workspace",
    "def",
    "search",
    "e",
    "json",
    "store",
    "Llmem.get",
    "_",
    "in_works",
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.sampled_from(QUERIES) | st.text("abcdefghijklmnopqrstuvwxyz_ .", min_size=1, max_size=6),
    size=st.integers(1, 50),
    scope=st.sampled_from(SCOPES),
)
def test_pages_of_any_size_give_every_hit_once(parsed: Path, query: str, size: int, scope: str) -> None:
    svc = Llmem(ArtifactStore(parsed / ".llmem", parsed), Limits())  # read-only use of the shared copy
    if not query.strip():
        return
    whole = every_page(svc, query, 100, scope)
    # At most 30 pages a draw (the suite stays quick); small results keep the drawn size.
    paged = every_page(svc, query, min(100, max(size, -(-len(whole) // 30))), scope)
    assert [key(h) for h in paged] == [key(h) for h in whole]
    assert len({key(h) for h in paged}) == len(paged)


def test_a_huge_answer_stays_under_the_cap_and_says_what_is_left(llmem: Llmem) -> None:
    small = Llmem(llmem.store, Limits(answer_chars=4_000))
    page = small.search("e", None, ".", 100, None, "lines")
    assert len(json.dumps(page, ensure_ascii=False)) <= 4_000
    assert page["total"] == len(grep(llmem.ws, "e")) > page["count"] > 0
    assert page["next_cursor"] and page["left"] == page["total"] - page["count"]


def _named(index: SearchIndex) -> list[str]:
    return [h["path"] for h in index.search("resolve_in_workspace")["results"] if h["match"] == "exact-name"]


def test_the_index_is_rebuilt_when_missing_corrupt_or_of_an_old_schema(llmem: Llmem) -> None:
    llmem.search("resolve", None, ".", 5, None)
    db = llmem.store.root / "cache" / DB_NAME
    assert db.is_file()
    assert _named(SearchIndex(llmem.store)) == ["llmem/core/paths.py"]  # as a new process: the file as it is
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert _named(SearchIndex(llmem.store)) == ["llmem/core/paths.py"]
    SearchIndex(llmem.store).search("x")  # a settled file, then garbage over it
    db.write_bytes(b"not a database at all " * 4096)
    assert _named(SearchIndex(llmem.store)) == ["llmem/core/paths.py"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] // 10 == SCHEMA
        conn.execute("DELETE FROM entries")  # an old layout that lost its rows: never trusted
        conn.execute("PRAGMA user_version = 10")
    conn.close()
    assert _named(SearchIndex(llmem.store)) == ["llmem/core/paths.py"]
    (llmem.store.root / "cache" / "journal.log").write_bytes(b"")  # another journal: rebuilt from the files
    assert _named(SearchIndex(llmem.store)) == ["llmem/core/paths.py"]


def test_without_the_trigram_tokenizer_the_answers_are_the_same(llmem: Llmem) -> None:
    scanning = SearchIndex(ArtifactStore(llmem.store.root, llmem.ws), trigram=False)
    for query, scope in [("self", "lines"), ("in_works", "symbols"), ("resolve", "auto"), ("llmem-quokka", "lines")]:
        ours = scanning.search(query, None, ".", 100, None, scope=scope)
        assert ours["total"] == llmem.search(query, None, ".", 100, None, scope)["total"]
    assert scanning.search("self", scope="lines")["total"] == len(grep(llmem.ws, "self"))


WRITER = r"""
import sys
from pathlib import Path
from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
ws, me, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
(ws / "w" / me).mkdir(parents=True)
for n in range(count):
    source = ws / "w" / me / f"m{n}.py"
    source.write_text(f"def wombat_{me}_{n}():\n    return {n}\n", encoding="utf-8")
    svc.parse(f"w/{me}/m{n}.py")  # an outline written through the store, as a client's parse does
    print(f"wombat_{me}_{n}", flush=True)
"""


def test_four_writing_processes_and_a_searching_one_lose_nothing(llmem: Llmem) -> None:
    """Every write of four real processes is found by the next search of this one, while they write."""
    index = llmem.searcher()
    assert index.search("wombat")["total"] == 0
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(llmem.ws), str(me), "25"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for me in range(4)
    ]
    seen = 0
    try:
        for _round in range(25):
            for proc in writers:
                assert proc.stdout is not None
                name = proc.stdout.readline().strip()
                seen += 1
                found = index.search(name, scope="symbols")
                assert [h["symbol"] for h in found["results"] if h["match"] == "exact-name"] == [name]
    finally:
        for proc in writers:
            assert proc.wait(timeout=120) == 0
    assert seen == 100
    assert index.search("wombat", scope="symbols")["total"] == 100
    assert SearchIndex(llmem.store).search("wombat", scope="symbols")["total"] == 100  # and a new process
    assert index.search("def wombat_", scope="lines")["total"] == 100  # the new files' lines too


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", None])
async def test_the_scope_is_an_enum_of_the_tool_schema_and_the_guide_explains_it(
    llmem: Llmem, mode: str | None
) -> None:
    from mcp import Client

    from llmem.code.server import build_server
    from llmem.core.config import ServerConfig
    from tests.conftest import call

    server = build_server(ServerConfig("llmem-mcp", llmem.ws, limits=Limits()))
    async with Client(server, **({"mode": mode} if mode else {})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        scope = tools["search_artifacts"].input_schema["properties"]["scope"]
        assert scope["enum"] == list(SCOPES) and scope["default"] == "auto"
        guide = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
        assert all(f"'{s}'" in guide for s in SCOPES) and "exact total" in guide
        err, out = await call(client, "search_artifacts", query="llmem-quokka", scope="lines")
        assert not err and out["data"]["total"] == 2 and out["data"]["scope"] == "lines"
        err, out = await call(client, "search_artifacts", query="x", scope="grep")
        assert err and "scope" in json.dumps(out["error"])


def test_a_text_walk_keeps_every_text_file_and_enters_ci_folders(llmem: Llmem) -> None:
    text = {f.rel_path for f in walk_workspace(llmem.ws, text=True).files}
    code = {f.rel_path for f in walk_workspace(llmem.ws).files}
    assert {"Dockerfile", ".github/workflows/ci.yml"} <= text
    assert not {"Dockerfile", ".github/workflows/ci.yml"} & code  # outlines stay to the languages they know
    assert code <= text and not any(p.startswith(".llmem/") for p in text)
    assert {"", ".github", ".github/workflows", "llmem/code"} <= set(walk_workspace(llmem.ws, text=True).folders)


def test_a_parse_leaves_the_database_current_so_a_new_process_builds_nothing(tmp_path: Path) -> None:
    """Every client starts its own server: the process that parsed brings the search database up
    to the journal it wrote, so the first search of the next process has nothing to catch up."""
    import sqlite3

    from llmem.code.index_db import IndexDb

    ws = tmp_path / "ws"
    shutil.copytree(REPO / "llmem" / "core", ws / "core", ignore=shutil.ignore_patterns("__pycache__"))
    store = ArtifactStore(ws / ".llmem", ws)
    svc = Llmem(store, Limits())
    assert svc.parse(".")["parsed"] > 5
    svc.searcher().db.close()
    db = IndexDb(store)
    conn = sqlite3.connect(db.file)
    try:
        assert db._meta(conn) == db.journal_state()  # caught up to the last byte
    finally:
        conn.close()
    (ws / "core" / "brand_new.py").write_text("def quokka():\n    return 1\n", encoding="utf-8")
    svc.parse("core/brand_new.py")
    svc.searcher().db.close()
    conn = sqlite3.connect(db.file)
    try:
        assert db._meta(conn) == db.journal_state()  # a file parse too
    finally:
        conn.close()
