"""Warm reads of artifacts (``Llmem.get``): parsed files and answers reused, never stale.

Files written a moment ago are never trusted on their stat signature (see llmem/_readcache.py),
so these tests make every signature trusted at once: the memo and the read cache are then on
every read, and each change must still be seen by the very next read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from llmem.code.artifacts import Llmem
from llmem.core import _readcache
from llmem.core.config import Limits
from llmem.core.errors import ArtifactNotFound
from llmem.core.store import ArtifactStore


@pytest.fixture
def llmem(sample_project: Path, monkeypatch: pytest.MonkeyPatch) -> Llmem:
    monkeypatch.setattr(_readcache, "RACY_NS", -(10**12))
    svc = Llmem(ArtifactStore(sample_project / ".llmem", sample_project), Limits())
    assert svc.parse(".")["parsed"] >= 2
    return svc


def _bump(path: Path, text: str) -> None:
    """Rewrite ``path`` in place with the same size: only the mtime (or nothing) tells."""
    st = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_a_repeated_read_is_the_same_answer_and_its_own_copy(llmem: Llmem) -> None:
    first = llmem.get("src/app.py", "outline", 0, None)
    second = llmem.get("src/app.py", "outline", 0, None)
    assert first == second and first is not second
    assert first["status"] == "fresh"
    second["status"] = "changed by the caller"
    assert llmem.get("src/app.py", "outline", 0, None)["status"] == "fresh"


def test_an_edited_source_is_outlined_again_at_the_next_read(llmem: Llmem, sample_project: Path) -> None:
    """An outline is mechanical: a read never answers a stale one, it derives it again."""
    before = llmem.get("src/app.py", "outline", 0, None)
    assert before["status"] == "fresh"
    src = sample_project / "src" / "app.py"
    _bump(src, src.read_text(encoding="utf-8").replace("MAX_ITEMS = 3", "MAX_ITEMS = 4"))
    after = llmem.get("src/app.py", "outline", 0, None)
    assert after["status"] == "fresh"
    assert after["source"]["sha256"] != before["source"]["sha256"]
    assert after["source"]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    src.unlink()
    assert llmem.get("src/app.py", "outline", 0, None)["status"] == "orphaned"


def test_a_reparse_is_seen_at_the_next_read(llmem: Llmem, sample_project: Path) -> None:
    before = llmem.get("src/app.py", "outline", 0, None)
    src = sample_project / "src" / "app.py"
    src.write_text(src.read_text(encoding="utf-8") + "\n\ndef added() -> None:\n    pass\n", encoding="utf-8")
    after = llmem.get("src/app.py", "outline", 0, None)
    assert after["status"] == "fresh"
    names = [s["name"] for s in after["content"]["symbols"]]
    assert "added" in names and "added" not in [s["name"] for s in before["content"]["symbols"]]


def test_a_deleted_artifact_is_gone_at_the_next_read(llmem: Llmem) -> None:
    """A deleted note is gone; a deleted outline of a file still there is outlined anew (a file
    never outlined is outlined when read), never the answer kept from before the delete."""
    first = llmem.get("src/app.py", "outline", 0, None)
    prompt = llmem.prompt("src/app.py", "summarize")
    assert prompt.callbackArgs is not None
    llmem.store_result(**prompt.callbackArgs, result="# App", model="t")
    assert llmem.get("src/app.py", "summarize", 0, None)["content"] == "# App"
    outline_file = llmem.store.artifact_file("llmem", "src/app.py", "outline")
    llmem.delete("src/app.py", None)
    assert not outline_file.exists()
    with pytest.raises(ArtifactNotFound):
        llmem.get("src/app.py", "summarize", 0, None)
    again = llmem.get("src/app.py", "outline", 0, None)
    assert outline_file.is_file()
    assert again["status"] == "fresh" and again["content"] == first["content"]
    # The next parse says a read outlined it, not a bare "unchanged".
    parsed = llmem.parse("src/app.py")
    assert parsed["unchanged"] == 1
    assert [(r["path"], r["by"]) for r in parsed["refreshed_since"]] == [("src/app.py", "get_artifact")]


def test_pages_read_twice_join_into_the_content(llmem: Llmem, sample_project: Path) -> None:
    body = "".join(f'def f{i}(x: int) -> int:\n    """Doc "{i}" with quotes."""\n    return x\n\n' for i in range(600))
    (sample_project / "src" / "big.py").write_text(body, encoding="utf-8")
    llmem.parse("src/big.py")
    for _round in range(2):  # the second time every page comes from the memo
        symbols: list[dict[str, object]] = []
        offset: int | None = 0
        while offset is not None:
            answer = llmem.get("src/big.py", "outline", offset, None)
            assert len(json.dumps(answer, ensure_ascii=False)) <= llmem.limits.answer_chars
            # Every page is an outline object: its symbols are those from offset to next_offset.
            assert answer["paged"] and answer["content"]["path"] == "src/big.py"
            symbols += answer["content"]["symbols"]
            offset = answer["next_offset"]
        assert [s["name"] for s in symbols] == [f"f{i}" for i in range(600)]


def test_a_class_too_big_for_one_page_comes_in_windows_of_its_methods(llmem: Llmem, sample_project: Path) -> None:
    body = "class Huge:\n" + "".join(
        f'    def method_{i}(self, x: int) -> int:\n        """Doc {i}."""\n        return x\n\n' for i in range(700)
    )
    (sample_project / "src" / "huge.py").write_text(body, encoding="utf-8")
    llmem.parse("src/huge.py")
    windows: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        answer = llmem.get("src/huge.py", "outline", offset, None)
        assert len(json.dumps(answer, ensure_ascii=False)) <= llmem.limits.answer_chars
        windows += answer["content"]["symbols"]
        offset = answer["next_offset"]
    assert len(windows) > 1 and all(w["qualified_name"] == "Huge" for w in windows)
    starts = [w["children_window"][0] for w in windows]
    assert starts == sorted(starts) and starts[0] == 0 and windows[-1]["children_window"][1] == 700
    methods = [c["name"] for w in windows for c in w["children"]]
    assert methods == [f"method_{i}" for i in range(700)]
