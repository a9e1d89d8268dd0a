"""check_references after a method is removed: its uses on values of unknown type (``species =
fresh_db["species"]; species.lookup(...)``) are listed apart as "may break (by name)", beside the
certain findings, on an excerpt of simonw/sqlite-utils (tests/data/sqlite-utils). Checked against
``ast`` (every ``.lookup`` attribute of the files), never against the tool's own earlier output."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, call, llmem_client

DB = "sqlite_utils/db.py"


def _remove_method(ws: Path, cls: str, name: str) -> int:
    """Delete ``cls.name`` from db.py (its decorators and docstring too); its first line."""
    file = ws / DB
    source = file.read_text("utf-8")
    [klass] = [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == cls]
    [fn] = [n for n in klass.body if isinstance(n, ast.FunctionDef) and n.name == name]
    lines = source.splitlines(keepends=True)
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    assert fn.end_lineno is not None
    file.write_text("".join(lines[: start - 1] + lines[fn.end_lineno :]), encoding="utf-8")
    return start


def _attribute_places(ws: Path, name: str) -> set[tuple[str, int, int]]:
    """Every ``x.name`` of the Python files: (path, line, 1-based column of the name)."""
    out = set()
    for file in ws.rglob("*.py"):
        if ".llmem" in file.parts:
            continue
        for n in ast.walk(ast.parse(file.read_text("utf-8"))):
            if isinstance(n, ast.Attribute) and n.attr == name and n.end_lineno is not None:
                out.add((file.relative_to(ws).as_posix(), n.end_lineno, n.end_col_offset - len(name) + 1))
    return out


@pytest.fixture
def ws(sqlite_utils_ws: Path) -> Path:
    return sqlite_utils_ws


def test_a_removed_method_used_on_values_of_unknown_type_may_break(ws: Path) -> None:
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))
    svc.parse(".")
    # The excerpt leaves out definitions its code names (the findings before the edit); none is lookup.
    before = svc.check_references(None, 500, None)
    assert "may_break_by_name" not in before and not [r for r in before["results"] if r["missing"] == "lookup"]
    line = _remove_method(ws, "Table", "lookup")
    svc.parse(DB)  # the parse sees Table.lookup go (any read that re-parses db.py does the same)
    answer = svc.check_references(None, 500, None)
    places = _attribute_places(ws, "lookup")
    assert len(places) >= 20  # the tests' species.lookup(...) and m2m's other_table.lookup(...)
    maybe = answer["may_break_by_name"]
    shown = {(r["path"], r["line"], r["column"]) for r in maybe["results"]}
    certain = {(r["path"], r["line"], r["column"]) for r in answer["results"] if r["missing"] == "lookup"}
    assert maybe["total"] == len(maybe["results"]) or len(maybe["results"]) == 20
    assert shown | certain <= places and not shown & certain
    assert maybe["total"] + len(certain) == len(places)  # every .lookup is reported, as certain or by name
    for r in maybe["results"]:
        assert r["by_name"] is True and r["missing"] == "lookup" and "Table.lookup" in r["why"]
        assert r["defined_in"] == f"{DB}:{line}" and r["last_defined"]["symbol"] == "Table.lookup"
    inside = sum(1 for r in before["results"] if r["in"] and r["in"].startswith("Table.lookup"))
    assert answer["total"] == before["total"] - inside + len(certain)  # the by-name ones are not counted there
    # A class that still has the member: the same uses are not judged at all (counted, not listed).
    (ws / "sqlite_utils" / "other.py").write_text("class Cache:\n    def lookup(self, key):\n        return key\n")
    assert "may_break_by_name" not in svc.check_references(None, 500, None)


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[tuple[Client, Path]]:
    async with llmem_client(ws, request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_by_name_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    err, out = await call(c, "generate_artifact", path=".")
    assert not err
    _remove_method(ws, "Table", "lookup")
    err, out = await call(c, "generate_artifact", path=DB)
    assert not err
    err, out = await call(c, "check_references")
    data: dict[str, Any] = out["data"]
    assert not err and data["may_break_by_name"]["total"] >= 20
    assert "may_break_by_name" in out["nextAction"]
