"""A search's coverage splits the files without an outline into those a parse would outline and
those of a kind no parse outlines (trial t23c item 13: ky's license, .svg and tsconfig.json were
counted in not_outlined, followed by "generate_artifact(path='.') outlines the rest"), on
modelcontextprotocol/servers (tests/data/servers), checked against what the parse itself does."""

from __future__ import annotations

import shutil
from pathlib import Path

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import ROOT


def test_not_outlined_splits_parsable_from_kinds_without_outline(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "servers", ws)
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    svc.parse("src/filesystem")
    svc.search("zzz", None, ".", 5, None, scope="lines")  # the line walk counts the workspace's files
    before = svc.search("normalizePath", None, ".", 1, None)["coverage"]
    parsed = svc.parse(".")
    after = svc.search("normalizePath", None, ".", 1, None)["coverage"]
    # what the parse outlined is what coverage called parsable; what it skipped is what it did not
    assert before["not_outlined_parsable"] == parsed["parsed"] > 0
    assert "generate_artifact(path='.') outlines the" in before["means"]
    assert after["not_outlined_parsable"] == 0 and "generate_artifact" not in after["means"]
    unsupported = [f["path"] for f in parsed["skipped_files"] if f["reason"] == "unsupported-language"]
    hidden = [p for p in ws.glob(".github/**/*") if p.is_file()]  # the parse skips .github, lines do not
    none = after["not_outlined_no_outline"]
    assert after["not_outlined"] == none["count"] == len(unsupported) + len(hidden)
    assert none["by_kind"]["Dockerfile"] == len(list(ws.rglob("Dockerfile")))
    assert none["by_kind"]["LICENSE"] == 1


def test_a_parsable_file_in_a_hidden_folder_is_advised_by_its_path(tmp_path: Path) -> None:
    """click's .github/ISSUE_TEMPLATE/*.md: Markdown a parse outlines, in a folder the parse of '.' skips."""
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "servers", ws)
    (ws / ".github" / "notes.md").write_text("# Release notes\n\nHow a release is cut.\n", encoding="utf-8")
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    parsed = svc.parse(".")
    assert {"path": ".github/", "reason": "hidden-dir"} in parsed["skipped_files"]
    svc.search("zzz", None, ".", 5, None, scope="lines")
    coverage = svc.search("normalizePath", None, ".", 1, None)["coverage"]
    assert coverage["not_outlined_parsable"] == coverage["not_outlined_in_hidden_folders"] == 1
    assert "generate_artifact(path='.')" not in coverage["means"]
    assert "generate_artifact(path=<the file>) the 1 in hidden folders" in coverage["means"]
    assert svc.parse(".github/notes.md")["parsed"] == 1  # what the advice says does it
    after = svc.search("normalizePath", None, ".", 1, None)["coverage"]
    assert after["not_outlined_parsable"] == 0 and "not_outlined_in_hidden_folders" not in after
