"""A notes search that understands words (issue 23 §4): "who calls normalizePath" finds a note
about its callers. Docs, notes and summaries are indexed with FTS5's porter stemmer (word forms)
and ranked by bm25; each hit says why it matched; an index of the previous layout is rebuilt.
On real code of modelcontextprotocol/servers (tests/data/servers) copied to tmp_path."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.index_db import DB_NAME, SCHEMA
from llmem.code.search import SearchIndex
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import call

PATH_UTILS = "src/filesystem/path-utils.ts"
LIB = "src/filesystem/lib.ts"
CALLERS = "Normalizes a path for the platform. Its callers: validatePath in lib.ts, which expands ~ first."
OTHER = (
    "Reads a file and returns the head of it. The path is checked; it may call other helpers and it "
    "returns what they return. Nothing here is normalized by it: the file, its size and its lines are "
    "read as they are, without a second look at where they came from."
)


@pytest.fixture
def ws(servers_ws: Path) -> Path:
    return servers_ws


@pytest.fixture
async def client(servers_client: Client) -> Client:
    """Two notes: one on normalizePath's callers, one long one on headFile that shares some words."""
    for path, name, text in ((PATH_UTILS, "normalizePath", CALLERS), (LIB, "headFile", OTHER)):
        err, out = await call(servers_client, "generate_prompt", path=path, task="annotate")
        assert not err
        answer = {"symbols": {name: {"description": text}}}
        err, stored = await call(servers_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
        assert not err and stored["data"]["stored"] == [name]
    return servers_client


@pytest.mark.anyio
async def test_who_calls_finds_the_note_about_its_callers(client: Client) -> None:
    assert "calls" not in CALLERS.split() and "callers:" in CALLERS.split()  # only another form of the word
    for scope in ("notes", "auto"):
        err, out = await call(client, "search_artifacts", query="who calls normalizePath", scope=scope)
        assert not err and out["data"]["total"] >= 1, out
        first = out["data"]["results"][0]
        assert (first["path"], first["symbol"], first["match"]) == (PATH_UTILS, "normalizePath", "note")
        assert first["why"]["field"] == "note"
        assert {"Normalizes", "callers", "validatePath"} <= set(first["why"]["terms"])
        assert first["snippet"].startswith("Normalizes a path")
    # Other forms of the same words find the same note; the one note that only mentions "path",
    # "call" and "normalized" once each among many other words comes after it.
    for query in ("calling normalizePath", "callers of normalize path", "who normalized a path and called it"):
        err, out = await call(client, "search_artifacts", query=query, scope="notes")
        assert not err
        notes = [(h["path"], h["symbol"]) for h in out["data"]["results"] if h["from"] == "annotate"]
        assert notes and notes[0] == (PATH_UTILS, "normalizePath"), (query, notes)
    err, out = await call(client, "search_artifacts", query="call path normalized", scope="notes")
    assert not err
    notes = [h["symbol"] for h in out["data"]["results"] if h["from"] == "annotate"]
    assert notes == ["normalizePath", "headFile"]  # both hold the three words; bm25 puts the shorter, denser first


@pytest.mark.anyio
async def test_a_note_lacking_one_word_comes_last_and_says_which(client: Client) -> None:
    query = "which functions call normalizePath"
    err, out = await call(client, "search_artifacts", query=query, scope="notes")
    assert not err
    first = out["data"]["results"][0]
    assert first["symbol"] == "normalizePath" and first["why"]["lacks"] == ["functions"]
    err, out = await call(client, "search_artifacts", query=query)
    assert not err and out["data"]["scope"].startswith("auto: notes lacking one word")
    assert out["data"]["results"][0]["symbol"] == "normalizePath"
    # Two words: no word may be left out; in auto the files and lines come instead.
    err, out = await call(client, "search_artifacts", query="normalizePath zebra", scope="notes")
    assert not err and out["data"]["total"] == 0


def test_an_index_of_the_previous_layout_is_rebuilt_with_word_forms(ws: Path) -> None:
    llmem = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    llmem.parse(PATH_UTILS)
    out = llmem.prompt(PATH_UTILS, "annotate")
    assert out.callbackArgs is not None
    answer = {"symbols": {"normalizePath": {"description": CALLERS}}}
    assert llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t").status == "success"
    assert llmem.search("who calls normalizePath", None, ".", 5, None, "notes")["total"] == 1
    llmem.searcher().db.close()
    db = ws / ".llmem" / "cache" / DB_NAME
    with sqlite3.connect(db) as conn:  # what version 3 was: the text's words unstemmed
        conn.execute("DROP TABLE text_words")
        conn.execute("CREATE VIRTUAL TABLE text_words USING fts5(words, tokenize='unicode61')")
        conn.execute("PRAGMA user_version = 31")
    conn.close()
    fresh = SearchIndex(ArtifactStore(ws / ".llmem", ws))
    assert fresh.search("who calls normalizePath", scope="notes")["total"] == 1
    fresh.db.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] // 10 == SCHEMA >= 4  # 5: outlines fingerprints
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'text_words'").fetchone()[0]
    conn.close()
    assert "porter" in sql
