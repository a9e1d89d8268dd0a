"""check_references' arity check: calls an added, removed or renamed parameter broke, against mypy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call

GIT = "src/git/src/mcp_server_git/server.py"
GIT_TESTS = "src/git/tests/test_server.py"


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(ROOT / "tests" / "data" / "servers", ws)
    return ws


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text("utf-8")
    assert old in text, old
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def _arity(ws: Path) -> tuple[set[tuple[str, int]], dict[str, int]]:
    answer = Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).check_references(None, 500, None)
    assert answer["next_cursor"] is None
    found = {(r["path"], r["line"]) for r in answer["results"] if r["kind"] == "call-arguments"}
    return found, answer["not_checked"]["by_reason"]


def _mypy_call_errors(ws: Path) -> set[tuple[str, int]]:
    """Lines mypy reports as a call whose arguments do not fit (call-arg) in the git server and its tests."""
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=silent", "--no-incremental",
         "--check-untyped-defs", "--show-error-codes", "--no-error-summary", "--cache-dir=/dev/null", GIT, GIT_TESTS],
        cwd=ws, capture_output=True, text=True, check=False, timeout=600,
        env={**os.environ, "MYPYPATH": str(ws / "src/git/src")},
    )  # fmt: skip
    return {
        (m.group(1), int(m.group(2)))
        for m in re.finditer(r"^([^:\n]+):(\d+): error: .*\[call-arg\]$", out.stdout, re.MULTILINE)
    }


def test_edits_to_parameters_are_found_as_mypy_finds_them(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    clean, _ = _arity(ws)
    before = _mypy_call_errors(ws)  # calls of mcp's classes, outside the workspace: not the check's
    assert clean == set()
    server = ws / GIT
    # a required parameter added, one removed, a keyword renamed, a required keyword-only added
    _edit(
        server,
        "def git_add(repo: git.Repo, files: list[str])",
        "def git_add(repo: git.Repo, files: list[str], force: bool)",
    )
    _edit(server, ", end_timestamp: Optional[str] = None) -> list[str]:", ") -> list[str]:")
    _edit(server, "contains: str | None = None, not_contains", "contained_in: str | None = None, not_contains")
    _edit(
        server,
        "def git_checkout(repo: git.Repo, branch_name: str)",
        "def git_checkout(repo: git.Repo, branch_name: str, *, create: bool)",
    )
    found, _ = _arity(ws)
    expected = _mypy_call_errors(ws) - before
    assert len(expected) >= 8  # git_add ×5, git_log, git_branch(contains=…), git_checkout ×3 …
    assert found == expected, (found - expected, expected - found)


def test_what_cannot_be_judged_is_counted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "defs.py").write_text(
        "import functools\n\n\ndef deco(f):\n    return f\n\n\n@deco\ndef wrapped(a):\n    return a\n\n\n"
        "def plain(a, b):\n    return a\n\n\nclass Meta(type):\n    pass\n\n\n"
        "class Magic(metaclass=Meta):\n    def m(self, a):\n        return a\n"
    )
    (ws / "pkg" / "use.py").write_text(
        "from pkg.defs import Magic, plain, wrapped\n\nwrapped(1, 2)\nargs = (1,)\nplain(*args)\nMagic.m(None)\n"
        "plain(1)\n"
    )
    found, reasons = _arity(ws)
    assert found == {("pkg/use.py", 7)}  # plain(1): b not given; the others are not judged
    assert reasons["call arguments: a function with a decorator that may change its signature"] == 1
    assert reasons["call arguments: a call with *args or **kwargs"] == 1
    assert reasons["call arguments: a method of a class with a metaclass"] == 1


@pytest.mark.parametrize("tree", ["httpx", "click", "sqlite-utils", "servers"])
def test_clean_trees_give_no_call_argument_finding(tree: str) -> None:
    src = ROOT / "tests" / "data" / tree
    from llmem.code.check import check_files
    from llmem.code.references_files import WorkspaceFiles

    files_src = WorkspaceFiles(src)
    files = {k: f for k in files_src.paths() if (f := files_src.file(k)) is not None}
    run = check_files(files_src, files, sorted(k for k in files if k.endswith(".py")))
    assert [f for f in run.findings if f.kind == "call-arguments"] == []


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_broken_call_through_the_server(tmp_path: Path, mode: str) -> None:
    ws = _ws(tmp_path)
    _edit(ws / GIT, "def git_reset(repo: git.Repo)", "def git_reset(repo: git.Repo, hard: bool)")
    async with Client(build_server(ServerConfig("llmem-mcp", ws)), mode=mode) as c:  # type: ignore[arg-type]
        err, out = await call(c, "check_references", path="src/git")
    assert not err
    found = [r for r in out["data"]["results"] if r["kind"] == "call-arguments"]
    calls = [(p, n) for p, n in _grep_calls(ws, "git_reset(") if "def " not in n]
    assert len(found) == len(calls) > 0
    assert all(r["missing"] == "hard" and "git_reset(repo: git.Repo, hard: bool)" in r["why"] for r in found)


def _grep_calls(ws: Path, needle: str) -> list[tuple[str, str]]:
    return [
        (f.relative_to(ws).as_posix(), line)
        for f in (ws / "src" / "git").rglob("*.py")
        for line in f.read_text("utf-8").splitlines()
        if needle in line
    ]


@pytest.mark.anyio
async def test_over_stdio_a_parameter_removed(tmp_path: Path) -> None:
    """The console script as a client launches it: the edit is made between calls."""
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    ws = _ws(tmp_path)
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, out = await call(c, "check_references", path="src/git")
            assert not err and out["data"]["total"] == 0
            _edit(ws / GIT, "def git_commit(repo: git.Repo, message: str)", "def git_commit(repo: git.Repo)")
            err, out = await call(c, "check_references", path="src/git")
    assert not err
    calls = [(p, n) for p, n in _grep_calls(ws, "git_commit(") if "def " not in n]
    found = [r for r in out["data"]["results"] if r["kind"] == "call-arguments"]
    assert len(found) == len(calls) > 0 and all("at most 1" in r["why"] for r in found)
