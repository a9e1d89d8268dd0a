"""check_references and find_references on a value annotated with a union of classes of the
workspace (``x: A | B``), after a method is renamed in one member class only: trial t23f's
``Router.url_path_for`` → ``Router.reverse`` in encode/starlette (tests/data/starlette), where
``requests.py``'s ``url_path_provider: Router | Starlette | None`` still calls ``url_path_for``
(mypy: union-attr). Expected lines come from ``ast``, never from the tool's earlier output."""

from __future__ import annotations

import ast
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.check import UNION_MEMBER
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call, llmem_client

ROUTING = "starlette/routing.py"
REQUESTS = "starlette/requests.py"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(DATA / "starlette", ws)
    return ws


def _svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _rename_in_router(ws: Path) -> None:
    """Router.url_path_for → Router.reverse, in the class Router only (the other classes keep theirs)."""
    file = ws / ROUTING
    tree = ast.parse(file.read_text("utf-8"))
    [router] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Router"]
    [method] = [n for n in router.body if isinstance(n, ast.FunctionDef) and n.name == "url_path_for"]
    lines = file.read_text("utf-8").splitlines(keepends=True)
    line = lines[method.lineno - 1]
    assert "def url_path_for(" in line
    lines[method.lineno - 1] = line.replace("def url_path_for(", "def reverse(")
    file.write_text("".join(lines), encoding="utf-8")


def _union_calls(ws: Path, member: str, name: str) -> set[int]:
    """Lines of requests.py calling ``x.name`` where ``x`` is annotated with a union naming ``member``, by ``ast``."""
    tree = ast.parse((ws / REQUESTS).read_text("utf-8"))
    unions = {
        n.target.id
        for n in ast.walk(tree)
        if isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and isinstance(n.annotation, ast.BinOp)
        and member in {x.id for x in ast.walk(n.annotation) if isinstance(x, ast.Name)}
    }
    return {
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.value, ast.Name) and n.value.id in unions
    }


def test_a_method_renamed_in_one_member_of_a_union_is_a_finding(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    before = svc.check_references(None, 500, None)
    _rename_in_router(ws)
    answer = svc.check_references(None, 500, None)
    expected = _union_calls(ws, "Router", "url_path_for")
    assert expected  # the trial's requests.py:187
    mine = [r for r in answer["results"] if r["path"] == REQUESTS]
    assert {r["line"] for r in mine} == expected
    [finding] = mine
    assert finding["renamed_to"] == "Router.reverse" and finding["last_defined"]["symbol"] == "Router.url_path_for"
    assert "Router | Starlette" in finding["why"] and "Starlette still defines it" in finding["why"]
    # a clean tree: nothing found, nothing counted as a union member lacking a name
    assert before["total"] == 0 and UNION_MEMBER not in before["not_checked"]["by_reason"]


def test_without_a_rename_seen_a_union_member_lacking_it_is_counted_not_found(ws: Path) -> None:
    _rename_in_router(ws)
    svc = _svc(ws)
    svc.parse(".")  # the store never saw Router.url_path_for
    answer = svc.check_references(None, 500, None)
    assert not [r for r in answer["results"] if r["path"] == REQUESTS]
    assert answer["not_checked"]["by_reason"][UNION_MEMBER] == len(_union_calls(ws, "Router", "url_path_for"))


def test_find_references_lists_the_union_use_unresolved_and_as_the_other_members_use(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    expected = _union_calls(ws, "Starlette", "url_path_for")
    starlette = svc.references("Starlette.url_path_for", "starlette/applications.py", None, 200, None)
    certain = {r["line"] for r in starlette["results"] if r["path"] == REQUESTS and not r.get("uncertain")}
    assert certain == expected
    _rename_in_router(ws)
    gone = svc.references("Router.url_path_for", ROUTING, None, 200, None)
    marked = {r["line"]: r["why"] for r in gone["results"] if r["path"] == REQUESTS and r.get("unresolved")}
    assert set(marked) == expected and all("Router has no attribute url_path_for" in w for w in marked.values())


def _shapes(tmp_path: Path) -> Path:
    """A package whose classes A and B both define ``area``."""
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "shapes.py").write_text(
        "class A:\n    def area(self) -> int:\n        return 1\n\n\n"
        "class B:\n    def area(self) -> int:\n        return 2\n"
    )
    return ws


def _renamed_in_a(ws: Path) -> tuple[Llmem, dict[str, Any]]:
    """Parsed clean (nothing found), then ``A.area`` renamed to ``size``: the check's answer."""
    svc = _svc(ws)
    svc.parse(".")
    assert svc.check_references(None, 500, None)["total"] == 0
    shapes = ws / "pkg" / "shapes.py"
    shapes.write_text(
        shapes.read_text().replace(
            "def area(self) -> int:\n        return 1", "def size(self) -> int:\n        return 1"
        )
    )
    return svc, svc.check_references(None, 500, None)


def test_parameters_and_union_spellings(tmp_path: Path) -> None:
    """``Union[A, B]``, ``Optional[Union[A, B]]``, ``"A | B"`` on parameters, ``B | A | None`` on a variable."""
    ws = _shapes(tmp_path)
    (ws / "pkg" / "use.py").write_text(
        "from typing import Optional, Union\n\nfrom pkg.shapes import A, B\n\n\n"
        "def one(x: Union[A, B]) -> int:\n    return x.area()\n\n\n"
        "def two(x: Optional[Union[A, B]]) -> int:\n    return x.area() if x else 0\n\n\n"
        "def three(x: 'A | B') -> int:\n    return x.area()\n\n\n"
        "def four() -> int:\n    y: B | A | None = None\n    return y.area() if y else 0\n"
    )
    _, answer = _renamed_in_a(ws)
    calls = {
        n.lineno
        for n in ast.walk(ast.parse((ws / "pkg/use.py").read_text()))
        if isinstance(n, ast.Attribute) and n.attr == "area"
    }
    assert {r["line"] for r in answer["results"]} == calls and len(calls) == 4
    assert all(r["renamed_to"] == "A.size" for r in answer["results"])


def test_attributes_and_properties_annotated_with_a_union(tmp_path: Path) -> None:
    """``self.shape: A | B`` set in ``__init__`` and a property ``-> A | B``, read from another method and
    from an instance of the holder (``h: Holder``): judged per member as a variable is."""
    ws = _shapes(tmp_path)
    (ws / "pkg" / "holder.py").write_text(
        "from pkg.shapes import A, B\n\n\n"
        "class Holder:\n"
        "    def __init__(self, flag: bool) -> None:\n"
        "        self.shape: A | B = A() if flag else B()\n\n"
        "    @property\n"
        "    def other(self) -> 'A | B':\n        return B()\n\n"
        "    def total(self) -> int:\n        return self.shape.area() + self.other.area()\n\n\n"
        "def outside(h: Holder) -> int:\n    return h.shape.area()\n"
    )
    svc, answer = _renamed_in_a(ws)
    tree = ast.parse((ws / "pkg/holder.py").read_text())
    calls = {
        (n.lineno, n.end_col_offset - len("area"))
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and n.attr == "area"
    }
    assert {(r["line"], r["column"] - 1) for r in answer["results"]} == calls and len(calls) == 3
    b_uses = svc.references("B.area", "pkg/shapes.py", None, 100, None)
    assert {
        (r["line"], r["column"] - 1) for r in b_uses["results"] if r["kind"] == "call" and not r.get("uncertain")
    } == calls


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[tuple[Client, Path]]:
    async with llmem_client(ws, request.param, answer_chars=200_000) as c:
        yield c, ws


@pytest.mark.anyio
async def test_the_union_finding_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    err, _ = await call(c, "generate_artifact", path=".")
    assert not err
    _rename_in_router(ws)
    err, out = await call(c, "check_references", path=REQUESTS)
    data: dict[str, Any] = out["data"]
    assert not err and {r["line"] for r in data["results"]} == _union_calls(ws, "Router", "url_path_for")


@pytest.mark.anyio
async def test_over_stdio_the_union_use_after_the_rename(ws: Path) -> None:
    """The console script as a client launches it: the rename is made between calls."""
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, _ = await call(c, "generate_artifact", path=".")  # the store sees Router.url_path_for
            assert not err
            err, out = await call(c, "check_references", path=REQUESTS)
            assert not err and out["data"]["total"] == 0
            _rename_in_router(ws)
            err, out = await call(c, "check_references", path=REQUESTS)
    assert not err
    assert {r["line"] for r in out["data"]["results"]} == _union_calls(ws, "Router", "url_path_for")
