"""Depth trees of find_references (trial t23c items 7, 8, 9) on pallets/click's package and one of
its test files (tests/data/click, tests/data/click-tests): a caller reached by several paths is expanded once (later
occurrences say ``see``), a depth answer says what it does not show (text mentions, left_out), and
``tests='only'`` answers the tests that reach the symbol at any level, each with its path of calls;
every call on such a path checked with ``ast``."""

from __future__ import annotations

import ast
import re
import shutil
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call, llmem_client, llmem_stdio_client

CLICK = ROOT / "tests" / "data" / "click"
CLICK_TESTS = ROOT / "tests" / "data" / "click-tests"  # tests/test_commands.py, beside the package
CORE = "src/click/core.py"
TESTS = "tests/test_commands.py"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("trees") / "ws"
    shutil.copytree(CLICK, ws)
    shutil.copytree(CLICK_TESTS, ws, dirs_exist_ok=True)
    return ws


@pytest.fixture(scope="module")
def svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _nodes(nodes: list[dict[str, Any]], at: str = "", level: int = 1) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for i, n in enumerate(nodes):
        here = f"{at}{'.' if at else ''}callers[{i}]"
        yield here, level, n
        yield from _nodes(n.get("callers", []), here, level + 1)


def _functions(path: Path) -> dict[str, ast.AST]:
    """Every function of a file by its qualified name (Class.method, outer.inner)."""
    out: dict[str, ast.AST] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[name] = child
                visit(child, name + ".")

    visit(ast.parse(path.read_text("utf-8")), "")
    return out


def _calls(fn: ast.AST, leaf: str) -> bool:
    """Whether ``fn`` itself (not a function nested in it) calls something named ``leaf``
    (``x.leaf(...)`` or ``leaf(...)``)."""
    for n in _own_nodes(fn):
        if isinstance(n, ast.Call):
            f = n.func
            if (isinstance(f, ast.Attribute) and f.attr == leaf) or (isinstance(f, ast.Name) and f.id == leaf):
                return True
    return False


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(fn):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
            yield from _own_nodes(child)


def test_a_caller_reached_by_several_paths_is_expanded_once(svc: Llmem) -> None:
    """E#2: 26 nodes where about 10 were distinct; Parameter.consume_value's subtree three times."""
    tree = svc.references("Parameter.resolve_envvar_value", CORE, None, 50, None, depth=5)
    nodes = list(_nodes(tree["callers"]))
    by_place = {at: n for at, _, n in nodes}
    expanded = Counter((n["path"], n["in"], level) for _, level, n in nodes if n.get("callers"))
    assert max(expanded.values()) == 1  # never the same subtree twice at one level
    sees = [n for _, _, n in nodes if "see" in n]
    assert sees and tree["cut"]["see_nodes"] == len(sees)
    for n in sees:  # each points at the node that lists its callers
        first = by_place[n["see"]]
        assert (first["path"], first["in"]) == (n["path"], n["in"]) and "callers" in first and "callers" not in n
        assert n["callers_total"] == first["callers_total"]
    assert tree["distinct_callers"] == len({(n["path"], n["in"]) for _, _, n in nodes}) < len(nodes)
    # every level-1 caller is a function of core.py calling resolve_envvar_value (ast)
    funcs = _functions(svc.store.workspace / CORE)
    assert {n["in"] for n in tree["callers"]} == {
        name for name, fn in funcs.items() if _calls(fn, "resolve_envvar_value") and name.count(".") == 1
    }


def test_a_depth_answer_says_what_it_does_not_show(svc: Llmem, ws: Path) -> None:
    """B#1/B#2: depth=1 said 3 text mentions and left_out 1; depth=2 said nothing of them."""
    one = svc.references("Parameter.consume_value", CORE, None, 50, None, tests="exclude")
    tree = svc.references("Parameter.consume_value", CORE, None, 50, None, tests="exclude", depth=2)
    texts = one["by_kind"]["text"]
    assert texts == 3 and tree["not_in_tree"]["by_kind"] == {"text": texts}  # B#2: core.py 2, _utils.py 1
    assert "(depth=1)" in tree["not_in_tree"]["how"]
    assert tree["left_out"]["count"] == one["left_out"]["count"] == 1  # Option.consume_value's definition
    assert tree["left_out"]["by_reason"] == one["left_out"]["by_reason"]
    # what grep -w finds outside tests is all said: the definition, the tree's uses, the rest
    grep = sum(len(re.findall(r"\bconsume_value\b", f.read_text("utf-8"))) for f in (ws / "src").rglob("*.py"))
    assert 1 + tree["total"] + tree["not_in_tree"]["count"] + tree["left_out"]["count"] == grep


def test_tests_only_answers_the_tests_reaching_it_with_their_calls(svc: Llmem, ws: Path) -> None:
    """E#1: 'Nothing calls or passes on resolve_envvar_value (in code, only tests)' and level 1 only.
    t23f: the way in is ``param.handle_parse_result(...)`` in Command.parse_args, on a receiver of
    unknown type: those tests are listed apart (uncertain_tests), not as reaching."""
    answer = svc.references("Parameter.resolve_envvar_value", CORE, None, 50, None, tests="only", depth=5)
    assert answer["tests_total"] == 0 and answer["tests_reaching"] == []
    reached = answer["uncertain_tests"]["first"]
    assert answer["uncertain_tests"]["count"] == len(reached) and reached
    assert all(t["uncertain"] and t["why"].startswith("Command.parse_args: ") for t in reached)
    assert "uncertain_tests" in answer["note"]
    test_funcs, core_funcs = _functions(ws / TESTS), _functions(ws / CORE)
    # the tests of the file calling parse_args themselves (ast): the only way in by name
    direct = {name for name, fn in test_funcs.items() if _calls(fn, "parse_args")}
    assert {t["in"] for t in reached} == direct
    for t in reached:
        assert t["path"] == TESTS and t["calls"][-1] == "Parameter.resolve_envvar_value"
        assert t["levels"] == len(t["calls"]) - 1
        steps = [test_funcs[t["calls"][0]], *(core_funcs[c] for c in t["calls"][1:-1])]
        for fn, callee in zip(steps, t["calls"][1:], strict=True):  # each step is a call (ast)
            assert _calls(fn, callee.rsplit(".", 1)[-1]), (t["in"], callee)
    assert "CliRunner" in answer["not_followed"]
    assert "callers" not in answer
    every = svc.references("Group.add_command", CORE, None, 50, None, tests="only", depth=3)["tests_reaching"]
    assert len(every) > 1
    seen, cursor = [], None  # paged by cursor: each test once, in the same order
    while True:
        page = svc.references("Group.add_command", CORE, None, 1, cursor, tests="only", depth=3)
        seen += [t["in"] for t in page["tests_reaching"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [t["in"] for t in every]


def test_tests_only_counts_the_tests_that_may_reach_it_through_a_fixture(svc: Llmem, ws: Path) -> None:
    """t23e item 7: the tests driving the code through a runner fixture (not followed) are counted."""
    answer = svc.references("Parameter.resolve_envvar_value", CORE, None, 50, None, tests="only", depth=5)
    reached = {t["in"] for t in answer["tests_reaching"]}
    tree = ast.parse((ws / TESTS).read_text("utf-8"))
    with_runner = {
        fn.name
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")
        and {"runner", "app", "client"} & {a.arg for a in fn.args.args}
    }  # fmt: skip
    maybe = answer["maybe_through_dispatch"]
    assert maybe["count"] == len(with_runner - reached) > 0
    assert {m["in"] for m in maybe["first"]} <= with_runner - reached and len(maybe["first"]) == min(10, maybe["count"])
    assert answer["tests_found_are_a_floor"] is True


def test_tests_only_says_plainly_when_no_test_reaches_it(svc: Llmem) -> None:
    answer = svc.references("Option.resolve_envvar_value", CORE, None, 50, None, tests="only", depth=2)
    assert answer["tests_total"] == 0 and answer["tests_reaching"] == []
    assert answer["note"].startswith("No test reaches resolve_envvar_value within depth 2")
    assert answer["not_expanded"]["depth_reached_nodes"] >= 1


def test_tests_exclude_leaves_tests_out_at_every_level(svc: Llmem) -> None:
    kept = svc.references("Command.make_context", CORE, None, 50, None, depth=3)
    out = svc.references("Command.make_context", CORE, None, 50, None, tests="exclude", depth=3)
    assert not [n for _, _, n in _nodes(out["callers"]) if n["path"].startswith("tests/")]
    in_kept = [n for _, level, n in _nodes(kept["callers"]) if n["path"].startswith("tests/") and level > 1]
    assert in_kept and out["tests_left_out_in_tree"] >= len({(n["path"], n["line"]) for n in in_kept})


# -- through the server ----------------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_trees_through_the_server(client: Client) -> None:
    err, out = await call(
        client, "find_references", symbol="Parameter.consume_value", path=CORE, depth=2, tests="exclude"
    )
    assert not err and out["data"]["not_in_tree"]["count"] == 3 and "not_in_tree" in out["nextAction"]
    err, out = await call(
        client, "find_references", symbol="Parameter.resolve_envvar_value", path=CORE, depth=5, tests="only"
    )
    assert not err and out["data"]["tests_total"] == 0 and out["data"]["uncertain_tests"]["count"] == 3
    # t23e item 7: never "That is all." while a runner's or a framework's dispatch is not followed
    assert out["nextAction"].startswith("No test reaches resolve_envvar_value within depth 5")
    assert "A floor: tests calling through a CLI runner" in out["nextAction"]
    assert "That is all" not in out["nextAction"] and out["data"]["tests_found_are_a_floor"] is True
    maybe = out["data"]["maybe_through_dispatch"]["count"]
    assert f"; {maybe} more take a client/app/runner fixture and may (maybe_through_dispatch). " in out["nextAction"]


@pytest.mark.anyio
async def test_trees_over_stdio(ws: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(ws) as c:
            err, out = await call(c, "find_references", symbol="Parameter.resolve_envvar_value", path=CORE, depth=5)
            assert not err and out["data"]["cut"]["see_nodes"] >= 1
            err, out = await call(
                c, "find_references", symbol="Parameter.resolve_envvar_value", path=CORE, depth=5, tests="only"
            )
            assert not err and {t["in"] for t in out["data"]["uncertain_tests"]["first"]} >= {
                "test_command_parse_args_collects_option_prefixes"
            }
            assert out["data"]["maybe_through_dispatch"]["count"] > 0 and "That is all" not in out["nextAction"]
