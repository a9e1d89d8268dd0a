"""check_references on real code: half-done renames in the git server (Python) and the filesystem
server (TypeScript) of modelcontextprotocol/servers (tests/data/servers, copied into tmp_path and
edited by the test), each answer compared with grep and, for Python, with mypy; clean trees (the
servers files, this repository's packages) answer no finding at all."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.errors import InvalidArgument, SourceNotFound
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call

SERVERS = ROOT / "tests" / "data" / "servers"
GIT = "src/git/src/mcp_server_git/server.py"
PATH_UTILS = "src/filesystem/path-utils.ts"


def _servers(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(SERVERS, ws)
    return ws


def _svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits())


def _all(svc: Llmem, path: str | None = None) -> dict[str, Any]:
    """Every page of the answer, the results joined (and each page checked against the totals)."""
    answer = svc.check_references(path, 500, None)
    results = list(answer["results"])
    while answer["next_cursor"]:
        answer = svc.check_references(path, 500, answer["next_cursor"])
        results += answer["results"]
    assert len(results) == answer["total"] == sum(answer["by_kind"].values())
    return {**answer, "results": results}


def _edit(file: Path, old: str, new: str, count: int = 1) -> None:
    text = file.read_text("utf-8")
    assert text.count(old) >= count, old
    file.write_text(text.replace(old, new, count), encoding="utf-8")


def _grep(ws: Path, pattern: str, glob: str) -> set[tuple[str, int]]:
    found = set()
    for file in ws.rglob(glob):
        if ".llmem" in file.parts:
            continue
        for n, line in enumerate(file.read_text("utf-8").splitlines(), 1):
            if re.search(pattern, line):
                found.add((file.relative_to(ws).as_posix(), n))
    return found


def _mypy_attr_errors(folder: Path, file: str) -> set[int]:
    """Lines mypy reports as naming what does not exist (attr-defined, name-defined) in ``file``."""
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--follow-imports=skip", "--no-incremental",
         "--show-error-codes", "--no-error-summary", "--cache-dir=/dev/null", file],
        cwd=folder, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    return {
        int(m.group(1))
        for m in re.finditer(r"^[^:\n]+:(\d+): error: .*\[(attr-defined|name-defined)\]$", out.stdout, re.MULTILINE)
    }


def test_clean_trees_answer_no_finding(tmp_path: Path) -> None:
    """No false alarm on real code: the servers files and this repository's packages as they are."""
    answer = _all(_svc(_servers(tmp_path)))
    assert answer["results"] == [] and answer["total"] == 0
    assert answer["by_language"] == {"python": 7, "typescript": 7}
    assert answer["not_checked"]["total"] == sum(answer["not_checked"]["by_reason"].values()) > 0
    ours = tmp_path / "ours"
    for name in ("llmem", "debrief_calc", "benchmarks", "tests"):
        shutil.copytree(ROOT / name, ours / name, ignore=shutil.ignore_patterns("__pycache__", "data", "node_modules"))
    mine = _all(_svc(ours))
    assert mine["results"] == [], mine["results"][:5]
    assert mine["files_checked"] > 250


def test_the_issues_half_done_python_rename(tmp_path: Path) -> None:
    """GitTools.DIFF renamed to DIFF_REF in the enum and the match, not in serve.list_tools: that
    one use is the finding, where grep and mypy find it, in serve.list_tools."""
    ws = _servers(tmp_path)
    clean_mypy = _mypy_attr_errors(ws / "src/git/src", "mcp_server_git/server.py")
    server = ws / GIT
    _edit(server, '    DIFF = "git_diff"', '    DIFF_REF = "git_diff"')
    _edit(server, "case GitTools.DIFF:", "case GitTools.DIFF_REF:")
    answer = _all(_svc(ws))
    [finding] = answer["results"]
    grepped = _grep(ws, r"GitTools\.DIFF\b", "*.py")
    assert {(finding["path"], finding["line"])} == grepped == {(GIT, 358)}
    assert _mypy_attr_errors(ws / "src/git/src", "mcp_server_git/server.py") - clean_mypy == {358}
    assert finding["in"] == "serve.list_tools"
    assert finding["name"] == "GitTools.DIFF" and finding["missing"] == "DIFF" and finding["kind"] == "reference"
    assert finding["text"] == "name=GitTools.DIFF,"
    assert finding["did_you_mean"][0] == "DIFF_REF"
    assert finding["defined_in"] == f"{GIT}:96"  # where GitTools is
    assert answer["by_file"] == {GIT: 1} and answer["in_tests"] == 0


def test_a_rename_the_store_saw_is_named_though_no_near_name_exists(tmp_path: Path) -> None:
    """DIFF becomes DIFF_BETWEEN_COMMITS (not a near name): the check re-parses the edited file
    first and the parse remembers it; with no time to re-parse, the stored outline (older than the
    file) tells it, and the answer says which outline it could not bring up to date."""
    ws = _servers(tmp_path)
    svc = _svc(ws)
    svc.parse(".")
    server = ws / GIT
    _edit(server, '    DIFF = "git_diff"', '    DIFF_BETWEEN_COMMITS = "git_diff"')
    _edit(server, "case GitTools.DIFF:", "case GitTools.DIFF_BETWEEN_COMMITS:")
    hurried = Llmem(ArtifactStore(ws / ".llmem", ws), Limits(refresh_budget_ms=0))
    answer = _all(hurried)
    assert answer["freshness"]["stale_files"] == 1 and answer["freshness"]["stale_paths"] == [GIT]
    [stale] = answer["results"]
    assert stale["renamed_to"] == "GitTools.DIFF_BETWEEN_COMMITS"
    assert stale["did_you_mean"][0] == "DIFF_BETWEEN_COMMITS"
    assert stale["last_defined"] == {
        "path": GIT,
        "line": 100,
        "symbol": "GitTools.DIFF",
        "source": "stored outline (older than the file)",
    }
    answer = _all(svc)  # the outline is replaced by the check: the parse remembers what went
    assert answer["freshness"] == {"refreshed": 1, "stale_files": 0}
    [parsed] = answer["results"]
    assert parsed["renamed_to"] == "GitTools.DIFF_BETWEEN_COMMITS"
    assert parsed["last_defined"]["source"] == "parse" and parsed["last_defined"]["line"] == 100
    assert svc.parse(GIT)["parsed"] == 0


def test_a_half_done_typescript_rename(tmp_path: Path) -> None:
    """normalizePath renamed in path-utils.ts and in lib.ts only: the imports left behind in
    index.ts, roots-utils.ts and the tests are the findings (code first), each with the lines using it."""
    ws = _servers(tmp_path)
    _edit(ws / PATH_UTILS, "export function normalizePath(", "export function normalizeFsPath(")
    lib = ws / "src/filesystem/lib.ts"
    lib.write_text(re.sub(r"\bnormalizePath\b", "normalizeFsPath", lib.read_text("utf-8")), encoding="utf-8")
    answer = _all(_svc(ws))
    found = [(r["path"], r["line"]) for r in answer["results"]]
    importing = _grep(ws, r"^import .*\bnormalizePath\b.* from '(\./|\.\./)path-utils\.js'", "*.ts")
    assert set(found) == importing and len(found) == 3
    assert found[-1][0] == "src/filesystem/__tests__/path-utils.test.ts"  # tests come last
    assert answer["in_tests"] == 1
    for r in answer["results"]:
        assert r["kind"] == "import" and r["missing"] == "normalizePath" and r["did_you_mean"][0] == "normalizeFsPath"
        calls = _grep(ws / Path(r["path"]).parent, r"\bnormalizePath\(", Path(r["path"]).name)
        assert r["uses"]["count"] == len(calls) and set(r["uses"]["lines"]) <= {n for _p, n in calls}
        assert r["defined_in"] == f"{PATH_UTILS}:1"


def test_a_call_left_behind_in_its_own_file(tmp_path: Path) -> None:
    """convertToWindowsPath renamed at its definition only: its call in normalizePath no longer
    resolves (a near name is defined in the file), and the test file's import of it neither."""
    ws = _servers(tmp_path)
    _edit(ws / PATH_UTILS, "export function convertToWindowsPath(", "export function toWindowsPath(")
    answer = _all(_svc(ws), "src/filesystem")
    found = {(r["path"], r["line"], r["kind"], r["in"]) for r in answer["results"]}
    assert found == {
        (PATH_UTILS, 63, "call", "normalizePath"),
        ("src/filesystem/__tests__/path-utils.test.ts", 2, "import", None),
    }
    assert all(r["did_you_mean"][0] == "toWindowsPath" for r in answer["results"])
    grepped = {(p, n) for p, n in _grep(ws, r"\bconvertToWindowsPath\b", "*.ts") if p == PATH_UTILS}
    assert grepped == {(PATH_UTILS, 63)}


def test_a_renamed_method_left_behind_in_its_callers(tmp_path: Path) -> None:
    """TimeServer.get_current_time renamed to now_in (no near name): time_server = TimeServer() in
    serve makes its call a method of a known class, found where grep finds it; through self, a
    renamed method is found when the new name reads as a rename, and an attribute no class sets
    (an argparse namespace's) is counted, not reported."""
    ws = _servers(tmp_path)
    time_py = "src/time/src/mcp_server_time/server.py"
    _edit(ws / time_py, "    def get_current_time(", "    def now_in(")
    (ws / "tool.py").write_text(
        "import argparse\n\nclass Tool:\n    def __init__(self) -> None:\n        self.rows: list[str] = []\n"
        "        argparse.ArgumentParser().parse_args(namespace=self)\n\n"
        "    def _load_rows_now(self) -> None:\n        self.rows = []\n\n"
        "    def run(self) -> int:\n        self._load_rows()\n        return len(self.rows) + self.verbose\n"
    )
    answer = _all(_svc(ws))
    found = {(r["path"], r["line"]): r for r in answer["results"]}
    grepped = {(p, n) for p, n in _grep(ws, r"\.get_current_time\(", "*.py")}
    assert set(found) == grepped | {("tool.py", 12)}
    call = found[(time_py, 194)]
    assert (call["name"], call["in"], call["defined_in"]) == (
        "time_server.get_current_time",
        "serve.call_tool",
        f"{time_py}:60",
    )
    loader = found[("tool.py", 12)]
    assert loader["name"] == "self._load_rows" and loader["did_you_mean"][0] == "_load_rows_now"
    assert (
        answer["not_checked"]["by_reason"]["self.x no class of the workspace sets (a subclass's, set dynamically?)"]
        == 1
    )


def test_what_cannot_be_judged_is_counted_and_what_python_defines_is_not_an_alarm(tmp_path: Path) -> None:
    """Builtins, dunders, attributes set in __init__, dataclass fields, enum members, a module
    __getattr__, TYPE_CHECKING imports, a mixin's self.x its subclass defines, TypeScript type-only
    imports: no finding. getattr, attributes of untyped values, classes based on a package's: counted."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .shapes import Shape, Color\n__all__ = ['Shape', 'Color']\n")
    (pkg / "shapes.py").write_text(
        "from __future__ import annotations\n"
        "import enum\nfrom dataclasses import dataclass\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.lazy import Later\n"
        "class Color(str, enum.Enum):\n    RED = 'red'\n\n"
        "@dataclass\nclass Shape:\n    sides: int\n    def area(self, later: Later) -> int:\n"
        "        self.cache = later\n        return self.sides * len(Color.RED.value) + self.cache.size\n\n"
        "class Mixin:\n    def twice(self) -> int:\n        return self.sides * 2\n\n"
        "class Square(Mixin, Shape):\n    pass\n\n"
        "def names(obj: object) -> list[str]:\n    print(__name__, Shape.__name__, Color.RED.name)\n"
        "    return [getattr(obj, 'x'), obj.anything, Square(4).twice()]\n"
    )
    (pkg / "lazy.py").write_text("def __getattr__(name: str) -> int:\n    return 1\nclass Later:\n    size = 1\n")
    (pkg / "use.py").write_text(
        "from pkg.lazy import whatever\nfrom pkg import Shape\nimport pydantic\n"
        "class M(pydantic.BaseModel):\n    a: int\n"
        "print(whatever, Shape(3).sides, M.model_fields, M.anything_pydantic_has)\n"
    )
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "types.ts").write_text("export interface Options { a: number }\nexport type Id = string;\n")
    (tmp_path / "web" / "main.ts").write_text(
        "import type { Options } from './types.js';\nimport { type Id } from './types';\n"
        "export function run(o: Options, id: Id): number { console.log(id); return parseInt('1') + o.a; }\n"
    )
    answer = _all(_svc(tmp_path))
    assert answer["results"] == []
    reasons = answer["not_checked"]["by_reason"]
    assert reasons["getattr/hasattr with a name in a string"] == 1
    assert reasons["attribute of a function or a value of unknown type"] >= 1  # obj.anything
    assert reasons["a class with a base from outside the workspace (pydantic.BaseModel)"] == 2


def test_a_broken_python_import_and_a_missing_module(tmp_path: Path) -> None:
    """A function renamed in llmem/core/paths.py: every import of the old name left in a copy of
    llmem is a finding, as grep finds them; then paged two at a time, every finding once."""
    shutil.copytree(ROOT / "llmem", tmp_path / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    _edit(tmp_path / "llmem/core/paths.py", "def resolve_in_workspace(", "def resolve_in_work_space(")
    (tmp_path / "llmem/core/extra.py").write_text("from llmem.core import gone_module\nimport llmem.code.nowhere\n")
    svc = _svc(tmp_path)
    answer = _all(svc)
    imports = _grep(tmp_path, r"^\s*from llmem\.core\.paths import .*\bresolve_in_workspace\b", "*.py")
    in_paths = _grep(tmp_path / "llmem/core", r"\bresolve_in_workspace\(", "paths.py")
    exported = _grep(tmp_path / "llmem/core", r"^__all__ = .*\"resolve_in_workspace\"", "paths.py")
    found = {(r["path"], r["line"]) for r in answer["results"]}
    assert imports <= found
    broken = {(r["path"], r["line"]): r["kind"] for r in answer["results"] if r["missing"] == "resolve_in_workspace"}
    assert set(broken) == imports | {("llmem/core/paths.py", n) for _p, n in in_paths | exported}
    [(_, all_line)] = exported
    assert broken[("llmem/core/paths.py", all_line)] == "re-export"
    assert {r["did_you_mean"][0] for r in answer["results"] if r["missing"] == "resolve_in_workspace"} == {
        "resolve_in_work_space"
    }
    modules = {(r["line"], r["missing"]) for r in answer["results"] if r["path"] == "llmem/core/extra.py"}
    assert modules == {(1, "gone_module"), (2, "nowhere")}
    seen: list[tuple[str, int]] = []
    page = svc.check_references(None, 2, None)
    while True:
        seen += [(r["path"], r["line"]) for r in page["results"]]
        assert page["count"] <= 2
        if not page["next_cursor"]:
            break
        page = svc.check_references(None, 2, page["next_cursor"])
    assert len(seen) == len(set(seen)) == answer["total"]
    with pytest.raises(InvalidArgument) as bad:
        svc.check_references(None, 2, "bm90IGEgY3Vyc29y")
    assert bad.value.details["field"] == "cursor"
    with pytest.raises(SourceNotFound) as missing:
        svc.check_references("llmem/nowhere", 2, None)
    assert missing.value.details["field"] == "path"


def test_a_notes_prompt_lists_what_is_broken_in_its_file(tmp_path: Path) -> None:
    ws = _servers(tmp_path)
    _edit(ws / GIT, '    DIFF = "git_diff"', '    DIFF_REF = "git_diff"')
    _edit(ws / GIT, "case GitTools.DIFF:", "case GitTools.DIFF_REF:")
    svc = _svc(ws)
    env = svc.prompt(GIT, "annotate")
    prompt = env.promptForHostLLM or ""
    section = prompt.split("## Broken around it", 1)[1].split("## Answer format", 1)[0]
    assert "line 358: `GitTools.DIFF`" in section and "`DIFF_REF`" in section
    assert env.data["broken_uses"] == 1
    summary = svc.prompt(GIT, "summarize")
    assert "line 358: `GitTools.DIFF`" in (summary.promptForHostLLM or "") and summary.data["broken_uses"] == 1
    clean = svc.prompt("src/time/src/mcp_server_time/server.py", "summarize")
    assert "Broken around it" not in (clean.promptForHostLLM or "") and "broken_uses" not in clean.data


# -- through the server --------------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    ws = _servers(tmp_path)
    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=6_000)))
    async with Client(server, mode=request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_check_references_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    err, out = await call(c, "check_references")
    assert not err and out["data"]["total"] == 0 and out["nextAction"] == "Nothing broken found."
    err, out = await call(c, "check_references", path="src/git")
    assert not err and out["data"]["total"] == 0  # the same question later is answered afresh once a file changed:
    _edit(ws / GIT, '    DIFF = "git_diff"', '    DIFF_REF = "git_diff"')  # edited between calls, no parse
    _edit(ws / GIT, "case GitTools.DIFF:", "case GitTools.DIFF_REF:")
    err, out = await call(c, "check_references", path="src/git")
    assert not err
    [finding] = out["data"]["results"]
    assert (finding["line"], finding["in"], finding["did_you_mean"][0]) == (358, "serve.list_tools", "DIFF_REF")
    assert "did_you_mean" in out["nextAction"]
    err, out = await call(c, "check_references", path="../elsewhere")
    assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE"
    err, out = await call(c, "find_references", symbol="DIFF")
    assert not err and out["data"]["unresolved"] is True
    [use] = out["data"]["results"]
    assert use["unresolved"] is True and use["in"] == "serve.list_tools" and "check_references()" in out["nextAction"]


@pytest.mark.anyio
async def test_over_stdio_after_a_half_done_rename(tmp_path: Path) -> None:
    """The console script as a client launches it: the edit is made between calls, nothing parsed."""
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    ws = _servers(tmp_path)
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, out = await call(c, "check_references")
            assert not err and out["data"]["total"] == 0
            _edit(ws / PATH_UTILS, "export function normalizePath(", "export function normalizeFsPath(")
            err, out = await call(c, "check_references", path="src/filesystem")
            assert not err and out["data"]["total"] == 4  # lib.ts, index.ts, roots-utils.ts, the test file
            assert [r["path"] for r in out["data"]["results"]][-1].endswith(".test.ts")
            err, out = await call(c, "find_references", symbol="normalizePath", tests="exclude", limit=100)
            assert not err and out["data"]["unresolved"] is True and out["data"]["tests_left_out"] > 0
            assert all(not is_test for is_test in [r["path"].endswith(".test.ts") for r in out["data"]["results"]])
