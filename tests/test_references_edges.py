"""Caller trees follow calls only (trial t23f items 2 and 3): a comparison or a read of a method is
no caller, an uncertain node is shown but not expanded, ``super().__init__()`` in a class whose
MRO holds none of the classes asked about is left out, and ``C(...)`` (or ``Sub(...)`` inheriting
``C.__init__``) is a caller of ``C.__init__``. Every expected edge is found with ``ast``."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, call, llmem_client, llmem_stdio_client

PKG = {
    "pkg/__init__.py": "",
    "pkg/_utils.py": ("def is_async(obj):\n    return callable(obj) and bool(obj.__call__)\n"),
    "pkg/routing.py": (
        "from pkg._utils import is_async\n\n\n"
        "def compile_path(path):\n"
        "    return path.split('/')\n\n\n"
        "class NoMatch(Exception):\n"
        "    def __init__(self, name):\n"
        "        super().__init__(name)\n\n\n"
        "class Route:\n"
        "    def __init__(self, path):\n"
        "        self.parts = compile_path(path)\n\n"
        "    def __call__(self, scope):\n"
        "        return self.handle(scope)\n\n"
        "    def handle(self, scope):\n"
        "        return scope\n\n"
        "    def __eq__(self, other):\n"
        "        return self.handle == other.handle\n\n\n"
        "class Sub(Route):\n"
        "    pass\n\n\n"
        "def dispatch(route, scope):\n"
        "    return route.handle(scope)\n\n\n"
        "def register(table, scope):\n"
        "    r = Route('/')\n"
        "    table.append(r.handle)\n"
        "    return is_async(r)\n"
    ),
    "pkg/app.py": ("from pkg.routing import Route, Sub\n\n\ndef make():\n    return [Route('/a'), Sub('/b')]\n"),
    "tests/test_routes.py": (
        "from pkg.routing import Route, dispatch\n\n\n"
        "def test_route():\n"
        "    assert Route('/x').parts == ['', 'x']\n\n\n"
        "def test_dispatch():\n"
        "    assert dispatch(object(), 1) == 1\n"
    ),
}
ROUTING = "pkg/routing.py"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("edges") / "ws"
    for rel, text in PKG.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


@pytest.fixture(scope="module")
def svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _calls_of(ws: Path, rel: str, name: str) -> set[int]:
    """Lines of ``rel`` holding a call ``name(...)`` or ``x.name(...)`` (ast)."""
    tree = ast.parse((ws / rel).read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                out.add(node.lineno)
    return out


def _by_in(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(n["in"]): n for n in nodes}


def test_a_comparison_or_an_uncertain_reference_is_no_caller(svc: Llmem, ws: Path) -> None:
    tree = svc.references("Route.handle", ROUTING, None, 50, None, depth=3)
    callers = _by_in(tree["callers"])
    # self.handle == other.handle (a comparison) and obj.__call__-like reads are no callers
    assert "Route.__eq__" not in callers
    # r.handle handed on (an argument) from a receiver of known type stays an edge
    assert callers["register"]["kind"] == "reference"
    assert callers["Route.__call__"]["line"] in _calls_of(ws, ROUTING, "handle")
    # route.handle(...) on an unannotated parameter: shown with why, not expanded
    uncertain = callers["dispatch"]
    assert uncertain["uncertain"] is True and uncertain["cut"].startswith("uncertain") and "callers" not in uncertain
    assert tree["cut"]["uncertain_nodes"] == 1
    assert tree["not_in_tree"]["count"] >= 1


def test_is_async_reads_no_dunder_call_as_a_caller(svc: Llmem) -> None:
    tree = svc.references("Route.__call__", ROUTING, None, 50, None, depth=3)
    assert all(n["in"] != "is_async" for n in tree["callers"])


def test_super_init_outside_the_mro_is_left_out_and_constructors_are_callers(svc: Llmem, ws: Path) -> None:
    tree = svc.references("Route.__init__", ROUTING, None, 50, None, depth=2)
    callers = _by_in(tree["callers"])
    assert "NoMatch.__init__" not in callers  # super().__init__ in a subclass of Exception
    constructed = {
        (rel, line)
        for rel in PKG
        if rel.endswith(".py")
        for line in _calls_of(ws, rel, "Route") | _calls_of(ws, rel, "Sub")
    }
    lines = {(n["path"], line) for n in tree["callers"] for line in n["lines"]}
    assert lines == constructed
    assert tree["constructor_calls"] == len(constructed) + 1  # Route('/a') and Sub('/b') share app.py:5
    assert callers["make"]["constructs"] == ["Route", "Sub"]
    flat = svc.references("NoMatch.__init__", ROUTING, None, 50, None)
    assert flat["total"] == 0 or all(r["in"] != "NoMatch.__init__" for r in flat["results"])


def test_the_flat_answer_about_init_lists_the_constructor_calls(svc: Llmem, ws: Path) -> None:
    flat = svc.references("Route.__init__", ROUTING, None, 50, None)
    constructed = {
        (rel, line)
        for rel in PKG
        if rel.endswith(".py")
        for line in _calls_of(ws, rel, "Route") | _calls_of(ws, rel, "Sub")
    }
    calls = flat["constructor_calls"]
    assert {(c["path"], c["line"]) for c in calls["calls"]} == constructed
    assert calls["total"] == len(constructed) + 1  # Route('/a') and Sub('/b') share app.py:5
    assert {c["constructs"] for c in calls["calls"] if c["path"] == "pkg/app.py"} == {"Route", "Sub"}
    # apart from total, which counts the name's own uses (as grep -w __init__ finds them)
    assert {(r["path"], r["line"]) for r in flat["results"]}.isdisjoint(constructed)
    no_tests = svc.references("Route.__init__", ROUTING, None, 50, None, tests="exclude")
    assert {c["path"] for c in no_tests["constructor_calls"]["calls"]} == {p for p, _ in constructed if "test" not in p}


def test_tests_only_reach_a_function_through_a_constructor(svc: Llmem) -> None:
    reach = svc.references("compile_path", ROUTING, None, 50, None, tests="only", depth=3)
    tests = {t["in"]: t for t in reach["tests_reaching"]}
    assert tests["test_route"]["calls"] == ["test_route", "Route.__init__", "compile_path"]
    assert "test_dispatch" not in tests


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_constructor_callers_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="Route.__init__", path=ROUTING, depth=2)
    assert not err and out["data"]["constructor_calls"] == 4
    assert all(n["in"] != "NoMatch.__init__" for n in out["data"]["callers"])


@pytest.mark.anyio
async def test_uncertain_nodes_over_stdio(ws: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(ws) as c:
            err, out = await call(c, "find_references", symbol="Route.handle", path=ROUTING, depth=3)
            assert not err and out["data"]["cut"]["uncertain_nodes"] == 1
            err, out = await call(c, "find_references", symbol="compile_path", path=ROUTING, depth=3, tests="only")
            assert not err and {t["in"] for t in out["data"]["tests_reaching"]} == {"test_route"}
