"""A rename whose code changed a little too (``git_show`` → ``describe_commit`` with one line of
its body edited, in the git server of modelcontextprotocol/servers, tests/data/servers): the
parse remembers it as renamed, check_references names the new name for each call left behind
(compared with grep), and a summary that still names the old name says renamed apart from gone
(``git_reset``, removed)."""

from __future__ import annotations

import ast
from pathlib import Path

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

GIT = "src/git/src/mcp_server_git/server.py"


def _edit(ws: Path) -> None:
    """git_show renamed at its definition with one body line changed; git_reset removed."""
    file = ws / GIT
    source = file.read_text("utf-8")
    source = source.replace("def git_show(repo", "def describe_commit(repo", 1)
    source = source.replace("d.diff.decode('utf-8')", "d.diff.decode('utf-8', errors='replace')", 1)
    [reset] = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "git_reset"]
    lines = source.splitlines(keepends=True)
    file.write_text("".join(lines[: reset.lineno - 1] + lines[reset.end_lineno or 0 :]), encoding="utf-8")


def test_a_rename_with_a_changed_body_reads_as_a_rename(servers_ws: Path) -> None:
    ws = servers_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))
    svc.parse(".")
    out = svc.prompt(GIT, "summarize")
    assert out.callbackArgs is not None
    summary = "The git server: `git_show` prints a commit, `git_reset` unstages everything, `serve` runs it."
    assert svc.store_result(**out.callbackArgs, result=summary, model="t").status == "success"
    _edit(ws)
    svc.parse(GIT)
    answer = svc.check_references(None, 500, None)
    calls = {  # every use of the name in code, by ast (comments and docstrings are not uses)
        (p.relative_to(ws).as_posix(), n.lineno)
        for p in ws.rglob("*.py")
        if ".llmem" not in p.parts
        for n in ast.walk(ast.parse(p.read_text("utf-8")))
        if (isinstance(n, ast.Name) and n.id == "git_show") or (isinstance(n, ast.alias) and n.name == "git_show")
    }
    shown = {(r["path"], r["line"]): r for r in answer["results"] if r["missing"] == "git_show"}
    tests = "src/git/tests/test_server.py"
    [imported] = [r for r in shown.values() if r["path"] == tests]  # the test file: its import, with its uses
    assert (
        imported["kind"] == "import"
        and {(tests, imported["line"])} | {(tests, n) for n in imported["uses"]["lines"]} <= calls
    )
    assert imported["uses"]["count"] == len([c for c in calls if c[0] == tests]) - 1
    assert {k for k in shown if k[0] == GIT} == {c for c in calls if c[0] == GIT} != set()  # the call in serve
    assert all(
        r["renamed_to"] == "describe_commit" and r["did_you_mean"][0] == "describe_commit" for r in shown.values()
    )
    reset = [r for r in answer["results"] if r["missing"] == "git_reset"]
    assert reset and not [r for r in reset if "renamed_to" in r]  # removed: no rename guessed
    note = svc.get(GIT, "summarize", 0, None)
    assert note["status"] == "stale"
    assert note["renamed_names_mentioned"] == {"git_show": "describe_commit"}
    assert sorted(note["gone_names_mentioned"]) == ["git_reset", "git_show"]  # both gone by those names
