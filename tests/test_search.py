"""search_artifacts: symbols by name and notes by their words, on real outlines of this
repository, kept true to the artifact files whatever process changed them."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmem.code.artifacts import Llmem
from llmem.code.index_db import DB_NAME
from llmem.code.search import SearchIndex, split_words
from llmem.core.errors import InvalidArgument

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def llmem(package_llmem: Llmem) -> Llmem:
    """This repository's ``llmem`` package, outlined once, copied per test (``conftest.py``)."""
    return package_llmem


def _found(answer: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    return [(h["path"], h["symbol"], h["match"]) for h in answer["results"]]


def test_words_of_names_split_camel_and_snake_case() -> None:
    assert split_words("validatePath") == ["validate", "path"]
    assert split_words("HTTPServer_v2") == ["http", "server", "v", "2"]
    assert split_words("resolve_in_workspace") == ["resolve", "in", "workspace"]


def test_every_kind_of_name_match_ranks_exact_names_first(llmem: Llmem) -> None:
    exact = llmem.search("resolve_in_workspace", None, ".", 5, None)
    assert _found(exact)[0] == ("llmem/core/paths.py", "resolve_in_workspace", "exact-name")
    assert exact["results"][0]["start_line"] >= 1 and exact["results"][0]["signature"].startswith("def ")
    qualified = llmem.search("Llmem.get", None, ".", 5, None)
    assert _found(qualified)[0] == ("llmem/code/artifacts.py", "Llmem.get", "exact-name")
    spaced = llmem.search("Llmem get", None, ".", 5, None)
    assert ("llmem/code/artifacts.py", "Llmem.get", "word") in _found(spaced)
    prefix = llmem.search("atomic_write", None, ".", 10, None)
    assert {s for _, s, m in _found(prefix) if m == "prefix"} >= {"atomic_write_bytes", "atomic_write_json"}
    words = llmem.search("walk workspace", None, ".", 5, None)
    assert _found(words)[0] == ("llmem/code/walk.py", "walk_workspace", "word")
    sub = llmem.search("in_works", None, ".", 5, None)
    assert ("llmem/core/paths.py", "resolve_in_workspace", "substring") in _found(sub)
    # An exact name beats a prefix of a longer one; a definition beats a doc that mentions it.
    resolve = _found(llmem.search("resolve", None, ".", 20, None))
    order = ["exact-name", "prefix", "word", "substring", "doc", "note", "summary", "code"]
    tiers = [order.index(m) for _, _, m in resolve]
    assert tiers == sorted(tiers)


def test_docstrings_notes_and_summaries_are_found_by_their_words(llmem: Llmem) -> None:
    doc_hits = llmem.search("one top-level member per line", None, ".", 10, None)
    assert ("llmem/core/fsutil.py", "dumps_readable", "doc") in _found(doc_hits)
    prompt = llmem.prompt("llmem/core/paths.py", "annotate")
    assert prompt.callbackArgs is not None
    notes = {"symbols": {"resolve_in_workspace": {"description": "Keeps every path inside the sandboxed root."}}}
    llmem.store_result(**prompt.callbackArgs, result=json.dumps(notes), model="t")
    hit = llmem.search("sandboxed root", None, ".", 5, None)
    assert _found(hit)[0] == ("llmem/core/paths.py", "resolve_in_workspace", "note")
    # The symbol's own hit (by name, from the outline) shows its docstring, and its note beside.
    named = llmem.search("resolve_in_workspace", None, ".", 1, None)["results"][0]
    tree = ast.parse((llmem.ws / "llmem/core/paths.py").read_text(encoding="utf-8"))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "resolve_in_workspace")
    doc = ast.get_docstring(fn)
    assert doc and doc.splitlines()[0].strip().startswith(named["snippet"].rstrip("…"))
    assert named["note"] == "Keeps every path inside the sandboxed root."
    prompt = llmem.prompt("llmem/code/walk.py", "summarize")
    assert prompt.callbackArgs is not None
    llmem.store_result(**prompt.callbackArgs, result="# Walk\nHonours the zebra crossing rules.", model="t")
    summary = llmem.search("zebra crossing", None, ".", 5, None)
    assert _found(summary) == [("llmem/code/walk.py", None, "summary")]
    # The snippet is the line that holds the words, and the hit says which words matched where.
    assert summary["results"][0]["snippet"] == "Honours the zebra crossing rules."
    assert summary["results"][0]["why"] == {"field": "summarize", "terms": ["zebra", "crossing"]}


def test_filters_paging_and_the_answer_cap(llmem: Llmem) -> None:
    classes = llmem.search("e", "class", "llmem", 100, None)
    assert classes["results"] and all(h["kind"] == "class" for h in classes["results"])
    inside = llmem.search("e", None, "llmem/code/outline", 100, None)
    assert all(h["path"].startswith("llmem/code/outline/") for h in inside["results"])
    seen: list[tuple[object, object, object]] = []
    cursor = None
    while True:
        page = llmem.search("s", None, ".", 100, cursor)
        assert len(json.dumps(page, ensure_ascii=False)) <= llmem.limits.answer_chars
        seen += [(h["path"], h["symbol"], h["start_line"]) for h in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == page["total"] > 100
    with pytest.raises(InvalidArgument) as bad:
        llmem.search("t", None, ".", 5, page["next_cursor"] or "bogus")
    assert bad.value.details["field"] == "cursor"
    for query in ("", "   ", "x" * 201):
        with pytest.raises(InvalidArgument) as err:
            llmem.search(query, None, ".", 5, None)
        assert err.value.details["field"] == "query"


CHANGER = r"""
import sys
from pathlib import Path
from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
ws = Path(sys.argv[1])
(ws / "llmem" / "brand_new.py").write_text("def quokka_counter(n):\n    return n\n", encoding="utf-8")
svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
svc.parse("llmem/brand_new.py")
svc.delete("llmem/code/walk.py", None)
"""


def test_a_change_another_process_made_is_seen_by_the_next_search(llmem: Llmem) -> None:
    assert llmem.search("walk_workspace", None, ".", 5, None)["total"] >= 1  # warm index in this process
    assert llmem.search("quokka_counter", None, ".", 5, None)["total"] == 0
    subprocess.run([sys.executable, "-c", CHANGER, str(llmem.ws)], cwd=REPO, check=True, timeout=120)
    assert _found(llmem.search("quokka_counter", None, ".", 5, None)) == [
        ("llmem/brand_new.py", "quokka_counter", "exact-name")
    ]
    assert not [
        h for h in llmem.search("walk_workspace", None, ".", 5, None)["results"] if h["path"] == "llmem/code/walk.py"
    ]


def test_an_artifact_removed_behind_the_journal_is_never_answered(llmem: Llmem) -> None:
    assert llmem.search("walk_workspace", None, ".", 5, None)["total"] >= 1
    shutil.rmtree(llmem.store.artifact_file("llmem", "llmem/code/walk.py", "outline").parent)
    assert not [
        h for h in llmem.search("walk_workspace", None, ".", 5, None)["results"] if h["path"] == "llmem/code/walk.py"
    ]


def test_a_new_process_answers_from_the_database_without_rebuilding(llmem: Llmem) -> None:
    llmem.search("resolve", None, ".", 5, None)
    assert (llmem.store.root / "cache" / DB_NAME).is_file()
    # An edit no journal line tells of: a process that rebuilt from the files would find it.
    file = llmem.store.artifact_file("llmem", "llmem/core/paths.py", "outline")
    file.write_text(file.read_text(encoding="utf-8").replace("resolve_in_workspace", "unseen_name"), encoding="utf-8")
    fresh = SearchIndex(llmem.store)  # as another process would
    assert [h["path"] for h in fresh.search("resolve_in_workspace")["results"] if h["match"] == "exact-name"] == [
        "llmem/core/paths.py"
    ]
    assert fresh.search("unseen_name", scope="symbols")["total"] == 0


def test_list_artifacts_says_the_total_from_the_index(llmem: Llmem) -> None:
    # every file llmem outlines: the Python modules and the chat page's script
    files = sorted(p for p in (llmem.ws / "llmem").rglob("*") if p.suffix in (".py", ".js"))
    page = llmem.list(".", None, None, 10, None)  # no index in this process yet: counted by a walk
    # a page keeps a folder whole where it fits, so it may stop short of the limit
    assert page["total"] == len(files) and 0 < page["count"] <= 10 and page["next_cursor"]
    llmem.search("resolve", None, ".", 1, None)
    assert llmem.searcher().loaded
    assert llmem.list(".", None, None, 10, None)["total"] == len(files)  # now from the index
    sub = llmem.list("llmem/code/outline", None, None, 50, None)
    assert sub["total"] == len(list((llmem.ws / "llmem" / "code" / "outline").glob("*.py")))


def test_an_unknown_kind_is_refused_with_the_kinds_there_are(llmem: Llmem) -> None:
    with pytest.raises(InvalidArgument) as err:
        llmem.search("resolve", "functions", ".", 5, None)
    assert err.value.details["field"] == "kind"
    assert {"function", "method", "class", "outline", "annotate", "test", "registration"} <= set(
        err.value.details["allowed"]
    )
    assert llmem.search("resolve", "function", ".", 5, None)["results"]


def test_with_few_hits_by_name_the_code_itself_is_searched(llmem: Llmem) -> None:
    """Where no symbol, doc or note has the words, lines of code do, each with its symbol."""
    found = llmem.search("Pick a qualified name from", None, "llmem", 10, None)
    code = [h for h in found["results"] if h["match"] == "code"]
    assert code and code[0]["path"] == "llmem/code/artifacts.py"
    assert code[0]["symbol"] == "_find_symbol" and code[0]["kind"] == "function"
    line = (
        (llmem.ws / "llmem" / "code" / "artifacts.py")
        .read_text(encoding="utf-8")
        .splitlines()[code[0]["start_line"] - 1]
    )
    assert "Pick a qualified name from" in line and code[0]["snippet"] == line.strip()[:160]
    assert not llmem.search("Pick a qualified name from", "function", "llmem", 10, None)["results"]
    # kind="code" asks for code lines whatever else matches: a definition's line is one of them.
    lines = llmem.search("resolve_in_workspace", "code", ".", 100, None)["results"]
    assert lines and {h["match"] for h in lines} == {"code"}
    assert {h["path"] for h in lines} >= {"llmem/core/paths.py", "llmem/code/artifacts.py"}


def test_a_note_hit_says_where_its_symbol_is(llmem: Llmem) -> None:
    prompt = llmem.prompt("llmem/core/paths.py", "annotate")
    assert prompt.callbackArgs is not None
    notes = {"symbols": {"resolve_in_workspace": {"description": "Keeps every path inside the sandboxed root."}}}
    llmem.store_result(**prompt.callbackArgs, result=json.dumps(notes), model="t")
    hit = llmem.search("sandboxed root", None, ".", 5, None)["results"][0]
    named = llmem.search("resolve_in_workspace", None, ".", 1, None)["results"][0]
    assert hit["match"] == "note" and hit["kind"] == "function"
    assert (hit["start_line"], hit["end_line"], hit["signature"]) == (
        named["start_line"],
        named["end_line"],
        named["signature"],
    )
