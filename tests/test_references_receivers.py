"""Callers an agent can trust: uses judged by their receiver (issue 23 trial, findings 1-4, 6, 15, 23).

On real code of simonw/sqlite-utils (tests/data/sqlite-utils: whole definitions copied unchanged):
``list.insert`` is not ``Table.insert``; a keyword argument ``memory=True`` or a parameter
``upsert`` is no caller; a Click command is an entry point, not a cycle; a method's callers in
other modules need no import of its class; a call shows its arguments. Checked against ``ast``
(every ``.insert(`` call and what its receiver is bound to, every keyword argument and parameter)
and grep, never against the tool's own earlier output.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call, llmem_client

SQLITE_UTILS = ROOT / "tests" / "data" / "sqlite-utils"
SERVERS = ROOT / "tests" / "data" / "servers"
DB = "sqlite_utils/db.py"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("receivers") / "ws"
    shutil.copytree(SQLITE_UTILS, ws)
    return ws


@pytest.fixture(scope="module")
def svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its qualified name."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield prefix + child.name, child
                yield from walk(child, prefix + child.name + ".")

    yield from walk(tree, "")


def _insert_calls(ws: Path) -> dict[tuple[str, int], tuple[str, bool]]:
    """Every ``x.insert(…)`` call of the code (not the tests), by ``ast``: (path, line) → (the
    function it lies in, whether its receiver is a name bound to a list there: ``x = […]``,
    ``x = list(…)``, ``x = sorted(…)``, ``x: list[…] = …``, ``cast(list[…], …)``, or another such name)."""
    out: dict[tuple[str, int], tuple[str, bool]] = {}
    for file in sorted((ws / "sqlite_utils").glob("*.py")):
        rel = file.relative_to(ws).as_posix()
        tree = ast.parse(file.read_text("utf-8"))
        for qn, fn in _functions(tree):
            lists: set[str] = set()
            others: set[str] = set()
            for node in ast.walk(fn):
                target, value = None, None
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    target, value = node.targets[0].id, node.value
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    target = node.target.id
                    value = node.annotation if isinstance(node.annotation, ast.Subscript) else node.value
                if target is None or value is None:
                    continue
                listy = (
                    isinstance(value, ast.List | ast.ListComp)
                    or (isinstance(value, ast.Subscript) and ast.unparse(value.value) == "list")
                    or (isinstance(value, ast.Call) and ast.unparse(value.func) in ("list", "sorted", "cast"))
                    or (isinstance(value, ast.Name) and value.id in lists)
                )
                (lists if listy else others).add(target)
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "insert":
                    recv = node.func.value
                    is_list = isinstance(recv, ast.Name) and recv.id in lists and recv.id not in others
                    key = (rel, node.func.end_lineno or node.lineno)
                    if key not in out or len(qn) > len(out[key][0]):  # the innermost function
                        out[key] = (qn, is_list)
    return out


def _nodes(tree: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in tree:
        yield node
        yield from _nodes(node.get("callers", []))


def test_list_insert_is_not_table_insert(svc: Llmem, ws: Path) -> None:
    """Finding 1: the callers of Table.insert were 18 of 49 nodes list.insert, expanded in turn."""
    calls = _insert_calls(ws)
    lists = {k for k, (_qn, is_list) in calls.items() if is_list}
    real = {k for k, (_qn, is_list) in calls.items() if not is_list}
    assert len(lists) >= 3 and len(real) >= 4  # pks_and_rows_where, insert_all (twice), _compile_code …
    answer = svc.references("insert", DB, "call", 500, None, tests="exclude")
    found = {(r["path"], r["line"]) for r in answer["results"]}
    assert found == real
    assert answer["resolution"] == "receivers"
    assert answer["left_out"]["by_reason"][next(r for r in answer["left_out"]["by_reason"] if "receiver" in r)] == len(
        lists
    )
    # Each kept use whose receiver is an expression or an untyped name says so; self.insert does not.
    for r in answer["results"]:
        assert r.get("uncertain", False) == (
            not r["text"].removeprefix("return ").startswith(("self.", "pk = self."))
        ), r
    tree = svc.references("insert_all", None, None, 50, None, tests="exclude", depth=3)
    every = list(_nodes(tree["callers"]))
    shown = {n["in"] for n in every}
    assert not shown & {qn for k, (qn, _) in calls.items() if k in lists}  # no list.insert caller …
    [table_insert] = [n for n in tree["callers"] if n["in"] == "Table.insert"]
    assert {(n["path"], n["line"]) for n in table_insert["callers"]} <= {
        (p, min(ls)) for p, ls in _by_caller(calls, real)
    }
    assert tree["uncertain"] >= 1 and all(n.get("why") for n in every if n.get("uncertain"))


def _by_caller(
    calls: dict[tuple[str, int], tuple[str, bool]], keys: set[tuple[str, int]]
) -> list[tuple[str, list[int]]]:
    grouped: dict[tuple[str, str], list[int]] = {}
    for path, line in keys:
        grouped.setdefault((path, calls[(path, line)][0]), []).append(line)
    return [(path, lines) for (path, _qn), lines in grouped.items()]


def test_keyword_arguments_and_parameters_are_no_callers(svc: Llmem, ws: Path) -> None:
    """Finding 2: ``Database(memory=True)`` was a caller of ``memory``; the ``upsert`` parameter of Table.upsert."""
    expected: set[tuple[str, int, int]] = set()
    for file in sorted(ws.rglob("*.py")):
        rel = file.relative_to(ws).as_posix()
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            if isinstance(node, ast.keyword | ast.arg) and (node.arg == "upsert"):
                expected.add((rel, node.lineno, node.col_offset + 1))
    every = svc.references("upsert", None, None, 500, None)
    params = {(r["path"], r["line"], r["column"]) for r in every["results"] if r["kind"] == "parameter"}
    assert params == expected and len(expected) >= 4
    assert every["by_kind"]["parameter"] == len(expected)
    of_method = svc.references("upsert", DB, None, 500, None)
    assert not {(r["path"], r["line"], r["column"]) for r in of_method["results"]} & expected
    assert any("parameter and keyword-argument names" in r for r in of_method["left_out"]["by_reason"])
    # The local ``upsert`` (a parameter read in insert_all's body) is no use of the method either.
    locals_ = [r for r in every["results"] if r["kind"] == "reference" and r["in"] == "Table.insert_all"]
    assert locals_ and not {(r["path"], r["line"]) for r in locals_} & {
        (r["path"], r["line"]) for r in of_method["results"]
    }
    tree = svc.references("upsert", DB, None, 50, None, depth=2)
    assert all(n["kind"] != "parameter" for n in _nodes(tree["callers"]))
    assert not [n for n in _nodes(tree["callers"]) if n["in"] in ("insert_files", "Table.insert_all")]


def test_a_cli_command_is_an_entry_point_not_a_cycle(svc: Llmem) -> None:
    """Finding 3: ``reset_counts`` (the command) calling ``db.reset_counts()`` read as a cycle;
    ``insert_files`` answered callers_total 0 with no reason."""
    tree = svc.references("reset_counts", DB, None, 50, None, depth=3)
    [command] = [n for n in _nodes(tree["callers"]) if n["path"] == "sqlite_utils/cli.py"]
    assert command["in"] == "reset_counts" and "cut" not in command
    assert command["entry_point"].startswith("a CLI command (cli.command")
    assert command["callers_total"] == 0 and tree["cut"].get("cycle_nodes", 0) == 0
    assert tree["reached_from"] == {"an entry point": 1}
    # The command's own name: the attribute db.reset_counts() in its body is not a use of it.
    own = svc.references("reset_counts", "sqlite_utils/cli.py", None, 50, None)
    assert own["total"] == 0 and any("another object's attribute" in r for r in own["left_out"]["by_reason"])
    tree = svc.references("insert_all", DB, None, 50, None, tests="exclude", depth=2)
    [files] = [n for n in tree["callers"] if n["in"] == "insert_files"]
    assert files["entry_point"].startswith("a CLI command") and files["text"].startswith("db.table(table).insert_all(")


def test_a_method_called_from_other_modules_needs_no_import(svc: Llmem, ws: Path) -> None:
    """Findings 4 and 15: path= dropped the callers in cli.py and migrations.py (and every test of
    ``lookup``) as 'uses in files that do not import this definition'."""
    calls = {
        (f.relative_to(ws).as_posix(), n.func.end_lineno)
        for f in ws.rglob("*.py")
        for n in ast.walk(ast.parse(f.read_text("utf-8")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "lookup"
    }
    grep = {
        (f.relative_to(ws).as_posix(), n)
        for f in ws.rglob("*.py")
        for n, line in enumerate(f.read_text("utf-8").splitlines(), 1)
        if re.search(r"\.lookup\(", line) and "``" not in line  # docstrings mention it too
    }
    assert calls == grep
    answer = svc.references("lookup", DB, "call", 500, None)
    assert {(r["path"], r["line"]) for r in answer["results"]} == calls
    assert sum(1 for r in answer["results"] if r["path"].startswith("tests/")) >= 20
    assert not any("do not import" in r for r in answer.get("left_out", {}).get("by_reason", {}))
    assert all(r["uncertain"] and r["receiver"] for r in answer["results"] if r["path"].startswith("tests/"))
    inserts = svc.references("insert", DB, "call", 500, None, tests="exclude")
    assert {"sqlite_utils/cli.py", "sqlite_utils/migrations.py"} <= {r["path"] for r in inserts["results"]}


def test_a_call_shows_its_arguments(svc: Llmem, ws: Path) -> None:
    """Finding 6: a call's text was its first line (``db.table(table).insert_all(``)."""
    answer = svc.references("insert_all", None, "call", 500, None, tests="exclude")
    multi = [r for r in answer["results"] if r["text"].endswith("(")]
    assert multi
    for r in multi:
        source = (ws / r["path"]).read_text("utf-8")
        [node] = [
            n
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "insert_all"
            and n.func.end_lineno == r["line"]
        ]  # fmt: skip
        segment = ast.get_source_segment(source, node)
        assert segment is not None and segment.count("\n") >= 1
        # The whole call (cut at 300 characters, marked), as written less its line breaks and indents.
        shown = re.sub(r"\s+", "", r["call"].removesuffix("…"))
        assert re.sub(r"\s+", "", segment).startswith(shown) and len(shown) >= min(
            250, len(re.sub(r"\s+", "", segment))
        )
    tree = svc.references("insert_all", DB, None, 50, None, tests="exclude", depth=2)
    assert all(n["text"] for n in _nodes(tree["callers"]))


def _commands(ws: Path) -> dict[str, str]:
    """The Click commands of cli.py by ``ast``: function → the command's name (the decorator's
    name= or first argument, else the function's name with _ made -)."""
    out = {}
    for fn in ast.parse((ws / "sqlite_utils/cli.py").read_text("utf-8")).body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for d in fn.decorator_list:
            if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("command", "group"):
                given = [k.value for k in d.keywords if k.arg == "name"] + d.args[:1]
                named = given[0].value if given and isinstance(given[0], ast.Constant) else None
                out[fn.name] = named if isinstance(named, str) else fn.name.replace("_", "-")
    return out


def test_a_cli_command_with_no_caller_says_it_is_an_entry_point(svc: Llmem, ws: Path) -> None:
    """Finding 3 (flat answers): ``find_references('insert_files', path='sqlite_utils/cli.py')``
    answered total 0, "no use", of a function Click runs as ``insert-files``."""
    commands = _commands(ws)
    assert {"insert_files": "insert-files", "reset_counts": "reset-counts"}.items() <= commands.items()
    for fn, name in commands.items():
        answer = svc.references(fn, "sqlite_utils/cli.py", None, 50, None)
        assert answer["entry_point"].startswith("a CLI command (") and answer["entry_point"].endswith(f"`{name}`")
        if not answer["total"]:
            assert answer["note"].startswith("An entry point, a CLI command")
    plain = svc.references("_compile_code", "sqlite_utils/utils.py", None, 50, None)
    assert "entry_point" not in plain


def test_left_out_says_how_many_in_which_files(svc: Llmem, ws: Path) -> None:
    """Finding 4: with path=, the occurrences grep -w finds beyond the answer are counted by
    reason and by file, with the call that lists them."""
    answer = svc.references("insert", DB, None, 500, None)
    grep: dict[str, int] = {}
    for file in ws.rglob("*"):
        if file.is_file() and ".llmem" not in file.parts:
            n = len(re.findall(r"\binsert\b", file.read_text("utf-8", errors="replace")))
            if n:
                grep[file.relative_to(ws).as_posix()] = n
    shown: dict[str, int] = {}
    for r in answer["results"]:
        shown[r["path"]] = shown.get(r["path"], 0) + 1
    shown[DB] += len(answer["definitions"])
    left = answer["left_out"]
    expected = {k: grep[k] - shown.get(k, 0) for k in grep if grep[k] > shown.get(k, 0)}
    assert left["by_file"] == dict(sorted(expected.items(), key=lambda kv: -kv[1]))
    assert left["count"] == sum(expected.values()) == sum(left["by_reason"].values()) and left["files"] == len(expected)
    assert "find_references('insert') without path" in left["how"]


def test_a_function_only_tests_reach_says_so(tmp_path: Path) -> None:
    """Finding 23: 'is it only reached from tests?' could not be asked."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "core.py").write_text(
        "def helper():\n    return 1\n\n\ndef only_tested():\n    return helper()\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text(
        "from pkg.core import only_tested\n\n\ndef test_it():\n    assert only_tested() == 1\n"
    )
    svc = Llmem(ArtifactStore(tmp_path / ".llmem", tmp_path), Limits())
    tree = svc.references("helper", "pkg/core.py", None, 50, None, tests="exclude", depth=3)
    [node] = tree["callers"]
    assert node["in"] == "only_tested" and node["only_from_tests"] and node["tests_left_out"] == 1
    assert tree["reached_from"] == {"a test": 1}
    kept = svc.references("helper", "pkg/core.py", None, 50, None, depth=3)
    [test] = kept["callers"][0]["callers"]
    assert test["in_kind"] == "test block" and test["cut"] == "a test block"


def test_typescript_test_blocks_read_as_tests(tmp_path: Path) -> None:
    """Finding 23: ``describe``/``it`` names read like method names; in_kind says what they are."""
    shutil.copytree(SERVERS, tmp_path / "ws")
    svc = Llmem(ArtifactStore(tmp_path / "ws" / ".llmem", tmp_path / "ws"), Limits(answer_chars=200_000))
    tree = svc.references("normalizePath", "src/filesystem/path-utils.ts", None, 200, None, depth=2)
    in_tests = [n for n in tree["callers"] if n["path"].endswith(".test.ts")]
    assert in_tests and all(n["in_kind"] == "test block" for n in in_tests)
    assert tree["reached_from"]["a test"] >= len(in_tests)


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_receivers_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="insert", path=DB, kind="call", tests="exclude")
    assert not err and out["data"]["resolution"] == "receivers" and out["data"]["uncertain"] >= 1
    assert all("receiver" in r for r in out["data"]["results"] if r.get("uncertain"))
    err, out = await call(client, "find_references", symbol="reset_counts", path=DB, depth=2)
    assert not err and out["data"]["callers"][0]["entry_point"].startswith("a CLI command")
    err, out = await call(client, "find_references", symbol="insert_files", path="sqlite_utils/cli.py")
    assert not err and out["data"]["entry_point"].endswith("`insert-files`")
    err, out = await call(client, "find_references", symbol="insert", path=DB)
    assert not err and out["data"]["left_out"]["files"] == len(out["data"]["left_out"]["by_file"]) >= 1
