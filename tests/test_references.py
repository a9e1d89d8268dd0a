"""find_references on real code: this repository's own packages and real files of modelcontextprotocol/servers
(tests/data/servers), checked against a plain grep -w of the same files."""

from __future__ import annotations

import ast
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.references import ReferenceFinder
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.errors import InvalidArgument, PathOutsideWorkspace, SourceNotFound
from tests.conftest import MODES, ROOT, call

SERVERS = ROOT / "tests" / "data" / "servers"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's llmem/ and debrief_calc/ and its pyproject.toml, with the servers files beside."""
    ws = tmp_path_factory.mktemp("refs") / "ws"
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("llmem", "debrief_calc"):
        shutil.copytree(ROOT / name, ws / name, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", ws / "pyproject.toml")
    shutil.copytree(SERVERS / "src", ws / "src")
    shutil.copytree(SERVERS / ".github", ws / ".github")
    return ws


@pytest.fixture(scope="module")
def finder(ws: Path) -> ReferenceFinder:
    return ReferenceFinder(ws)


def _everything(finder: ReferenceFinder, symbol: str, **kw: Any) -> dict[str, Any]:
    answer = finder.find(symbol, limit=500, answer_chars=10_000_000, **kw)
    assert answer["next_cursor"] is None and answer["count"] == answer["total"]
    return answer


def _ast_importers(ws: Path, module: str, name: str) -> set[str]:
    """Python files of ``ws`` that import ``name`` from ``module`` (``from module import name``),
    found with ``ast``, independently of the finder: this repository's code is the data here, and
    it changes as the project grows."""
    found = set()
    for path in ws.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name for a in node.names):
                found.add(path.relative_to(ws).as_posix())
    return found


def _ast_definitions(ws: Path, name: str) -> set[tuple[str, str]]:
    """Every function or method named ``name`` in the Python files of ``ws``, qualified by the
    functions and classes it lies in."""
    found = set()

    def visit(node: ast.AST, rel: str, outer: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if child.name == name and not isinstance(child, ast.ClassDef):
                    found.add((rel, ".".join([*outer, child.name])))
                visit(child, rel, [*outer, child.name])
            else:
                visit(child, rel, outer)

    for path in ws.rglob("*.py"):
        visit(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(ws).as_posix(), [])
    return found


def _grep_w(ws: Path, word: str) -> set[tuple[str, int]]:
    """A plain grep -w: every line of every text file (not in a dot-folder but .github, not __pycache__)."""
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")
    found = set()
    for folder, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d == ".github" or not (d.startswith(".") or d == "__pycache__")]
        for name in files:
            path = Path(folder, name)
            data = path.read_bytes()
            if b"\0" in data[:8192]:
                continue
            rel = path.relative_to(ws).as_posix()
            for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                if pattern.search(line):
                    found.add((rel, n))
    return found


def _lines(answer: dict[str, Any]) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["results"]}


@pytest.mark.parametrize(
    "word", ["resolve_in_workspace", "ArtifactStore", "SuiteError", "serve", "isPathWithinAllowedDirectories", "main"]
)
def test_every_line_grep_w_finds_is_a_use_or_a_definition(finder: ReferenceFinder, ws: Path, word: str) -> None:
    answer = _everything(finder, word)
    defs = {(d["path"], d["line"]) for d in answer["definitions"]}
    assert answer["definitions_total"] == len(answer["definitions"])
    assert _lines(answer) | defs == _grep_w(ws, word)
    assert sum(answer["by_kind"].values()) == answer["total"]
    assert answer["files"] == len({r["path"] for r in answer["results"]})


def test_uses_are_classified_by_the_parser(finder: ReferenceFinder) -> None:
    answer = _everything(finder, "resolve_in_workspace")
    assert [(d["path"], d["kind"]) for d in answer["definitions"]] == [("llmem/core/paths.py", "function")]
    by = {(r["path"], r["line"]): r for r in answer["results"]}
    service = "debrief_calc/calc/service.py"
    imports = [r for r in answer["results"] if r["path"] == service and r["kind"] == "import"]
    assert imports and imports[0]["text"] == "from llmem.core.paths import resolve_in_workspace"
    calls = [r for r in answer["results"] if r["kind"] == "call"]
    assert calls and all("resolve_in_workspace(" in r["text"] for r in calls)
    resolve = next(r for r in calls if r["path"] == "llmem/code/artifacts.py")
    assert resolve["in"] == "Llmem.resolve" and resolve["column"] == resolve["text"].index("resolve_in_workspace") + 9
    kinds = [r["kind"] == "text" for r in answer["results"]]
    assert kinds == sorted(kinds), "uses in code come first, text mentions after"
    docstring = [r for r in answer["results"] if r["path"] == "llmem/core/paths.py" and r["kind"] == "text"]
    assert docstring, "a mention in a docstring or comment is answered as text"
    assert all(by[(r["path"], r["line"])]["kind"] in {"import", "call", "reference", "text"} for r in answer["results"])


def test_one_definition_is_followed_through_its_importers(finder: ReferenceFinder, ws: Path) -> None:
    answer = _everything(finder, "resolve_in_workspace", path="llmem/core/paths.py")
    assert answer["resolution"] == "imports" and answer["path"] == "llmem/core/paths.py"
    importers = {r["path"] for r in answer["results"] if r["kind"] == "import"}
    expected = _ast_importers(ws, "llmem.core.paths", "resolve_in_workspace")
    assert len(expected) >= 3 and importers == expected
    # every use is in the defining file or in a file that imports it
    assert {r["path"] for r in answer["results"]} <= importers | {"llmem/core/paths.py"}


def test_the_one_serve_of_the_git_server_not_those_of_time(finder: ReferenceFinder, ws: Path) -> None:
    every = _everything(finder, "serve")
    defined = {(d["path"], d["symbol"]) for d in every["definitions"]}
    assert defined == _ast_definitions(ws, "serve")
    assert {
        ("src/git/src/mcp_server_git/server.py", "serve"),
        ("src/time/src/mcp_server_time/server.py", "serve"),
        ("llmem/core/serve.py", "SuiteServer.serve"),
    } <= defined
    git = _everything(finder, "serve", path="src/git/src/mcp_server_git/server.py")
    assert [(r["path"], r["kind"], r["text"]) for r in git["results"]] == [
        ("src/git/src/mcp_server_git/__init__.py", "import", "from .server import serve"),
        ("src/git/src/mcp_server_git/__init__.py", "call", "asyncio.run(serve(repository))"),
    ]
    assert git["results"][1]["in"] == "main"
    assert git["definitions"] == [
        {
            "path": "src/git/src/mcp_server_git/server.py",
            "line": 308,
            "column": 11,
            "kind": "function",
            "symbol": "serve",
        }
    ]


def test_a_pyproject_script_is_an_entry_point_and_a_package_reexport_is_followed(finder: ReferenceFinder) -> None:
    # main is defined in the package's __init__; __main__ imports it absolutely; pyproject names it
    answer = _everything(finder, "main", path="src/git/src/mcp_server_git/__init__.py")
    kinds = {(r["path"], r["kind"]) for r in answer["results"]}
    assert ("src/git/pyproject.toml", "entry-point") in kinds
    assert ("src/git/src/mcp_server_git/__main__.py", "import") in kinds
    assert ("src/git/src/mcp_server_git/__main__.py", "call") in kinds
    assert not any(r["path"].startswith("src/time/") for r in answer["results"])
    entry = next(r for r in answer["results"] if r["kind"] == "entry-point")
    assert entry["text"] == 'mcp-server-git = "mcp_server_git:main"'
    ours = _everything(finder, "main", path="llmem/code/cli.py")
    assert [r["text"] for r in ours["results"] if r["kind"] == "entry-point"] == ['llmem-mcp = "llmem.code.cli:main"']


def test_a_reexport_through_a_package_init(finder: ReferenceFinder) -> None:
    # hashes_of_symbol_dicts lives in outline/hashes.py; outline/__init__ re-exports it; artifacts imports the package's
    answer = _everything(finder, "hashes_of_symbol_dicts", path="llmem/code/outline/hashes.py")
    imports = {(r["path"], r["text"]) for r in answer["results"] if r["kind"] == "import"}
    assert ("llmem/code/artifacts.py", "from llmem.code.outline import hashes_of_symbol_dicts") in imports
    assert any(p == "llmem/code/outline/__init__.py" for p, _ in imports)
    assert any(r["path"] == "llmem/code/artifacts.py" and r["kind"] == "call" for r in answer["results"])


def test_an_import_as_alias_is_followed(finder: ReferenceFinder) -> None:
    # notes.py: ``from llmem.code import tasks as llm_tasks`` then ``llm_tasks.TASKS``
    answer = _everything(finder, "TASKS", path="llmem/code/tasks.py")
    notes = [r for r in answer["results"] if r["path"] == "llmem/code/notes.py"]
    assert notes and all("llm_tasks.TASKS" in r["text"] for r in notes)
    # debrief_calc: ``from debrief_calc.formats.plotfile import validate_plot_filename as _validate``
    aliased = _everything(finder, "validate_plot_filename", path="debrief_calc/formats/filenames.py")
    uses = [r for r in aliased["results"] if r["path"] == "debrief_calc/state/_open_plots.py"]
    assert any(r.get("as") == "_validate" and r["kind"] == "call" for r in uses)
    assert any(r["kind"] == "import" for r in uses)


def test_a_module_name_asks_who_imports_that_file(finder: ReferenceFinder) -> None:
    # the miss: the importer of a module, found by the module's name
    answer = _everything(finder, "paths", path="llmem/core/paths.py")
    assert answer["resolution"] == "module"
    assert answer["definitions"] == [
        {"path": "llmem/core/paths.py", "line": 1, "column": 1, "kind": "module", "symbol": "llmem.core.paths"}
    ]
    importers = {r["path"] for r in answer["results"]}
    assert {"debrief_calc/calc/service.py", "debrief_calc/formats/filenames.py", "llmem/code/artifacts.py"} <= importers
    assert {r["kind"] for r in answer["results"]} == {"import"}
    assert all("llmem.core.paths" in r["text"] for r in answer["results"])
    server = _everything(finder, "server", path="src/git/src/mcp_server_git/server.py")
    assert [(r["path"], r["text"]) for r in server["results"]] == [
        ("src/git/src/mcp_server_git/__init__.py", "from .server import serve"),
        ("src/git/tests/test_server.py", "from mcp_server_git.server import ("),  # its tests, after the code
    ]
    package = _everything(finder, "mcp_server_git", path="src/git/src/mcp_server_git/__init__.py")
    assert {(r["path"], r["kind"]) for r in package["results"]} == {
        ("src/git/pyproject.toml", "entry-point"),
        ("src/git/src/mcp_server_git/__main__.py", "import"),
        ("src/git/tests/test_server.py", "import"),
    }


def test_typescript_imports_by_relative_specifier(finder: ReferenceFinder, ws: Path) -> None:
    target = "src/filesystem/path-validation.ts"
    answer = _everything(finder, "isPathWithinAllowedDirectories", path=target)
    lib = [r for r in answer["results"] if r["path"] == "src/filesystem/lib.ts"]
    assert [r["kind"] for r in lib] == ["import", "call", "call", "call", "call"]
    assert lib[1]["in"] is not None
    assert {(d["path"], d["line"]) for d in answer["definitions"]} == {(target, 11)}


def test_typescript_reexport_and_namespace_import(tmp_path: Path) -> None:
    fs = tmp_path / "src" / "filesystem"
    fs.mkdir(parents=True)
    for name in ("path-utils.ts", "roots-utils.ts"):
        shutil.copy(SERVERS / "src" / "filesystem" / name, fs / name)
    (fs / "index.ts").write_text("export { normalizePath as normalise } from './path-utils.js';\n", encoding="utf-8")
    (fs / "use.ts").write_text(
        "import { normalise } from './index.js';\nimport * as pu from './path-utils.js';\n"
        "export const a = normalise('x');\nexport const b = pu.normalizePath('y');\n",
        encoding="utf-8",
    )
    answer = _everything(ReferenceFinder(tmp_path), "normalizePath", path="src/filesystem/path-utils.ts")
    got = {(r["path"], r["line"], r["kind"], r.get("as")) for r in answer["results"]}
    assert ("src/filesystem/index.ts", 1, "import", None) in got
    assert ("src/filesystem/use.ts", 3, "call", "normalise") in got
    assert ("src/filesystem/use.ts", 4, "call", None) in got
    assert any(p == "src/filesystem/roots-utils.ts" and k == "import" for p, _, k, _ in got)
    module = _everything(ReferenceFinder(tmp_path), "index", path="src/filesystem/index.ts")
    assert [(r["path"], r["line"], r["kind"]) for r in module["results"]] == [("src/filesystem/use.ts", 1, "import")]


def test_dockerfile_package_json_and_yaml_mentions(finder: ReferenceFinder) -> None:
    index = _everything(finder, "index")
    entry = {(r["path"], r["text"]) for r in index["results"] if r["kind"] == "entry-point"}
    assert ("src/filesystem/Dockerfile", 'ENTRYPOINT ["node", "/app/dist/index.js"]') in entry
    assert ("src/filesystem/package.json", '"mcp-server-filesystem": "dist/index.js"') in entry
    packages = _everything(finder, "packages")
    assert any(r["path"] == ".github/workflows/python.yml" and r["kind"] == "text" for r in packages["results"])


def test_pages_cover_everything_once(finder: ReferenceFinder) -> None:
    whole = _everything(finder, "InvalidArgument")
    assert whole["total"] > 30
    seen: list[tuple[str, int, int]] = []
    cursor = None
    while True:
        page = finder.find("InvalidArgument", limit=7, cursor=cursor)
        assert page["total"] == whole["total"] and page["count"] == len(page["results"]) <= 7
        seen += [(r["path"], r["line"], r["column"]) for r in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [(r["path"], r["line"], r["column"]) for r in whole["results"]]
    calls = finder.find("InvalidArgument", kind="call", limit=500)
    assert calls["total"] == whole["by_kind"]["call"] and {r["kind"] for r in calls["results"]} == {"call"}


def test_the_answer_cap_pages_instead_of_cutting(finder: ReferenceFinder) -> None:
    import json

    page = finder.find("ArtifactStore", limit=500, answer_chars=4_000)
    assert page["next_cursor"] is not None and 0 < page["count"] < page["total"]
    assert len(json.dumps(page)) < 4_000


def test_a_name_nowhere_used_says_so(finder: ReferenceFinder) -> None:
    answer = finder.find("quokka_nowhere_at_all")
    assert answer["total"] == 0 and answer["results"] == [] and answer["definitions"] == []
    assert "No use" in answer["note"]


def test_a_file_edited_between_calls_is_read_again(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from a import f\n", encoding="utf-8")
    finder = ReferenceFinder(tmp_path)
    assert finder.find("f")["total"] == 1
    (tmp_path / "b.py").write_text("from a import f\n\nf()\nf()\n", encoding="utf-8")
    (tmp_path / "c.py").write_text("import a\na.f()\n", encoding="utf-8")
    answer = finder.find("f", path="a.py")
    assert [(r["path"], r["line"], r["kind"]) for r in answer["results"]] == [
        ("b.py", 1, "import"),
        ("b.py", 3, "call"),
        ("b.py", 4, "call"),
        ("c.py", 2, "call"),
    ]


def test_bad_input_names_the_field(finder: ReferenceFinder) -> None:
    with pytest.raises(InvalidArgument) as err:
        finder.find("Llmem resolve")
    assert err.value.details["field"] == "symbol" and err.value.details["did_you_mean"] == "resolve"
    with pytest.raises(InvalidArgument) as err:
        finder.find("Llmem.resolv")  # a qualified name nothing defines, nor the bare name
    assert err.value.details["field"] == "symbol" and "definitions_of_the_name" not in err.value.details
    with pytest.raises(InvalidArgument) as err:
        finder.find("Llmem.references", path="llmem/code/references.py")
    assert err.value.details["field"] == "symbol"
    assert "Llmem.references (llmem/code/artifacts.py)" in err.value.details["definitions_of_the_name"]
    with pytest.raises(InvalidArgument) as err:
        finder.find("serve", kind="usage")
    assert err.value.details["field"] == "kind" and "call" in err.value.details["allowed"]
    with pytest.raises(PathOutsideWorkspace):
        finder.find("serve", path="../outside.py")
    with pytest.raises(SourceNotFound) as missing:
        finder.find("serve", path="src/git/src/mcp_server_git/servr.py")
    assert missing.value.details["field"] == "path"
    assert "src/git/src/mcp_server_git/server.py" in missing.value.details["close_matches"]
    with pytest.raises(SourceNotFound) as folder:
        finder.find("serve", path="src/git")
    assert "folder" in folder.value.message
    with pytest.raises(InvalidArgument) as wrong:
        finder.find("serve", path="src/git/src/mcp_server_git/__init__.py")
    assert wrong.value.details["field"] == "path"
    assert "src/git/src/mcp_server_git/server.py" in wrong.value.details["defined_in"]
    with pytest.raises(InvalidArgument) as cursor:
        finder.find("serve", cursor="bm90IGEgY3Vyc29y")
    assert cursor.value.details["field"] == "cursor"


# -- through the server ----------------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=6_000)))
    async with Client(server, mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_find_references_through_the_server(client: Client, ws: Path) -> None:
    err, out = await call(client, "find_references", symbol="serve", path="src/git/src/mcp_server_git/server.py")
    assert not err and out["status"] == "success"
    data = out["data"]
    assert data["total"] == 2 and data["by_kind"]["call"] == 1 and data["resolution"] == "imports"
    # Several definitions, no path: the hint says how to keep one, whether or not the answer pages.
    definitions = len(_ast_definitions(ws, "serve"))
    assert definitions > 1
    for limit in (1, 500):  # one use a page pages for sure; 500 may still page at the answer's size cap
        err, out = await call(client, "find_references", symbol="serve", limit=limit)
        assert not err and out["data"]["definitions_total"] == definitions and "path=" in out["nextAction"]
        assert ("cursor=next_cursor" in out["nextAction"]) == (out["data"]["next_cursor"] is not None)
        assert limit > 1 or out["data"]["next_cursor"] is not None
    cursor, seen = None, 0
    while True:
        err, out = await call(client, "find_references", symbol="ArtifactStore", limit=500, cursor=cursor)
        assert not err
        seen += out["data"]["count"]
        cursor = out["data"]["next_cursor"]
        if cursor is None:
            break
    assert seen == out["data"]["total"] > 30
    err, out = await call(client, "find_references", symbol="quokka_nowhere_at_all")
    assert not err and out["data"]["total"] == 0 and "No use" in out["nextAction"]


@pytest.mark.anyio
async def test_find_references_bad_input_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="serve", path="../x.py")
    assert err and out["error"]["code"] == "PATH_OUTSIDE_WORKSPACE"
    err, out = await call(client, "find_references", symbol="serve", path="src/time/src/mcp_server_time/__init__.py")
    assert err and out["error"]["code"] == "INVALID_ARGUMENT" and out["error"]["details"]["field"] == "path"
    err, out = await call(client, "find_references", symbol="a b")
    assert err and out["error"]["details"]["field"] == "symbol"
    err, out = await call(client, "find_references", symbol="serve", limit=0)
    assert err and "limit" in out["error"]["message"]


def test_go_is_answered_by_name_and_unreadable_files_are_said(tmp_path: Path) -> None:
    (tmp_path / "server.go").write_text(
        'package main\n\nimport "fmt"\n\ntype Server struct{ name string }\n\n'
        "func (s *Server) Serve() { fmt.Println(s.name) }\n",
        encoding="utf-8",
    )
    (tmp_path / "main.go").write_text(
        "package main\n\n// Serve is called once\nfunc main() {\n\ts := &Server{}\n\ts.Serve()\n}\n", encoding="utf-8"
    )
    (tmp_path / "notes.txt").write_bytes(b"Serve\0binary")
    answer = ReferenceFinder(tmp_path).find("Serve", path="server.go")
    assert answer["resolution"] == "by-name"
    assert [(r["path"], r["line"], r["kind"], r["in"]) for r in answer["results"]] == [("main.go", 6, "call", "main")]
    assert answer["definitions"][0]["symbol"] == "Serve" and answer["definitions"][0]["line"] == 7
    assert answer["not_searched"]["count"] == 1 and answer["not_searched"]["paths"] == ["notes.txt"]
    every = ReferenceFinder(tmp_path).find("main")
    assert {(r["path"], r["line"], r["kind"]) for r in every["results"]} >= {("main.go", 1, "reference")}


def test_the_caller_is_named_as_the_line_search_names_it(tmp_path: Path) -> None:
    """Arrow-function consts, registerTool handlers and describe/it blocks (the servers trial
    answered ``in: null`` in all three), named as search_artifacts(scope='lines') names them."""
    from llmem.code.artifacts import Llmem
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    shutil.copytree(SERVERS / "src" / "filesystem", tmp_path / "src" / "filesystem")
    finder = ReferenceFinder(tmp_path)
    answer = _everything(finder, "validatePath", path="src/filesystem/lib.ts")
    where = {(r["path"], r["line"]): r["in"] for r in answer["results"]}
    index = "src/filesystem/index.ts"
    assert where[(index, 192)] == "readTextFileHandler"  # const readTextFileHandler = async (...) => {
    assert where[(index, 280)] == "read_media_file"  # server.registerTool("read_media_file", ..., async (args) => {
    assert where[(index, 570)] == "directory_tree.buildTree"
    tests = _everything(finder, "getValidRootDirectories")
    calls = [r["in"] for r in tests["results"] if r["kind"] == "call" and "__tests__" in r["path"]]
    assert calls and all(c.startswith("getValidRootDirectories.") for c in calls)
    assert "getValidRootDirectories.error handling.should handle various error types" in calls
    # The line search names the same symbols.
    svc = Llmem(ArtifactStore(tmp_path / ".llmem", tmp_path), Limits())
    svc.parse(".")
    lines = svc.search("validatePath(", None, "src/filesystem", 100, None, scope="lines")["results"]
    named = {(h["path"], h["start_line"]): h["symbol"] for h in lines}
    for key in [(index, 192), (index, 280), (index, 570)]:
        assert named[key] == where[key], key


def _grep_w_count(ws: Path, word: str) -> int:
    """Occurrences (not lines) of ``word`` as grep -ow counts them, in the files _grep_w reads."""
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])")
    return sum(
        len(pattern.findall(Path(ws, path).read_text("utf-8", "replace").split("\n")[line - 1]))
        for path, line in _grep_w(ws, word)
    )


def test_with_path_what_is_left_out_is_counted_so_totals_add_up(tmp_path: Path) -> None:
    # The servers trial: validatePath of lib.ts answered 23 where grep found 25, silently.
    shutil.copytree(SERVERS / "src" / "filesystem", tmp_path / "src" / "filesystem")
    (tmp_path / "src" / "filesystem" / "notes.md").write_text("Call validatePath first.\n", encoding="utf-8")
    (tmp_path / "src" / "filesystem" / "other.ts").write_text(
        "// validatePath is not imported here\nexport const x = 1;\n", encoding="utf-8"
    )
    answer = _everything(ReferenceFinder(tmp_path), "validatePath", path="src/filesystem/lib.ts")
    left = answer["left_out"]
    assert left["by_reason"]["text mentions in files that do not import this definition"] == 1
    assert sum(left["by_reason"].values()) == left["count"]
    assert answer["total"] + answer["definitions_total"] + left["count"] == _grep_w_count(tmp_path, "validatePath")
    # Nothing left out: no left_out at all.
    alone = _everything(ReferenceFinder(tmp_path), "getValidRootDirectories", path="src/filesystem/roots-utils.ts")
    assert "left_out" not in alone


def test_a_name_nothing_defines_any_more_is_flagged_with_its_imports(tmp_path: Path) -> None:
    """After a rename, the old name's imports refer to nothing: said plainly, the lines listed."""
    shutil.copytree(ROOT / "llmem", tmp_path / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    paths = tmp_path / "llmem" / "core" / "paths.py"
    paths.write_text(re.sub(r"\bresolve_in_workspace\b", "resolve_path", paths.read_text("utf-8")), encoding="utf-8")
    answer = _everything(ReferenceFinder(tmp_path), "resolve_in_workspace")
    assert answer["definitions"] == []
    importing = re.compile(r"^\s*from llmem\.core\.paths import .*\bresolve_in_workspace\b", re.MULTILINE)
    grepped = set()
    for p in tmp_path.rglob("*.py"):
        text = p.read_text("utf-8")
        for m in importing.finditer(text):
            grepped.add((p.relative_to(tmp_path).as_posix(), text.count("\n", 0, m.start()) + 1))
    unresolved = {(u["path"], u["line"]) for u in answer["unresolved_imports"]}
    assert unresolved == grepped and answer["unresolved_imports_total"] == len(grepped)
    assert {u["from"] for u in answer["unresolved_imports"]} == {"llmem.core.paths"}
    code = answer["by_kind"]["import"] + answer["by_kind"]["call"] + answer["by_kind"]["reference"]
    assert answer["note"].startswith(
        f"no definition of resolve_in_workspace in the workspace: these {code} uses "
        f"({answer['by_kind']['import']} imports) refer to a name nothing defines — renamed or removed?"
    )
    # A name from outside the workspace (the standard library) is not flagged.
    path = _everything(ReferenceFinder(tmp_path), "Path")
    assert "unresolved_imports" not in path and "note" not in path
