"""get_artifact(path, symbol=...) answers the outline of one symbol (and its members) instead of
a 1,000-line outline paged by offset; a name the file does not have errs with the near names.
On an excerpt of simonw/sqlite-utils (tests/data/sqlite-utils), checked against ``ast``."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.errors import ArtifactNotFound, InvalidArgument
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, call, llmem_client

DB = "sqlite_utils/db.py"


@pytest.fixture
def ws(sqlite_utils_ws: Path) -> Path:
    return sqlite_utils_ws


def _class(ws: Path, name: str) -> ast.ClassDef:
    [cls] = [n for n in ast.parse((ws / DB).read_text("utf-8")).body if isinstance(n, ast.ClassDef) and n.name == name]
    return cls


def test_the_outline_of_one_symbol(ws: Path) -> None:
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))
    table = _class(ws, "Table")
    methods = {f.name: f for f in table.body if isinstance(f, ast.FunctionDef)}
    answer = svc.get(DB, "outline", 0, None, "Table")
    [entry] = answer["content"]["symbols"]
    assert answer["content"]["symbol"] == entry["qualified_name"] == "Table" and answer["status"] == "fresh"
    assert (entry["start_line"], entry["end_line"]) == (table.lineno, table.end_lineno)
    assert set(methods) <= {c["name"] for c in entry["children"]}
    assert "imports" not in answer["content"] and answer["content"]["imports_left_out"] > 0
    fn = methods["insert_all"]
    [one] = svc.get(DB, "outline", 0, None, "Table.insert_all")["content"]["symbols"]
    assert (one["kind"], one["start_line"], one["end_line"]) == ("method", fn.lineno, fn.end_lineno)
    assert len(str(one)) < 5_000  # one method, not the file's outline
    # A plain name one symbol has is found too; a name the file lacks errs with the near names.
    assert svc.get(DB, "outline", 0, None, "insert_all")["content"]["symbol"] == "Table.insert_all"
    with pytest.raises(ArtifactNotFound) as err:
        svc.get(DB, "outline", 0, None, "Table.lookup_or_insert")
    assert "Table.lookup" in err.value.details["close_matches"]
    with pytest.raises(InvalidArgument):
        svc.get(DB, "annotate", 0, None, "Table")


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_the_outline_of_one_symbol_through_the_server(client: Client) -> None:
    err, out = await call(client, "get_artifact", path=DB, symbol="Table.lookup")
    assert not err and [s["qualified_name"] for s in out["data"]["content"]["symbols"]] == ["Table.lookup"]
    err, out = await call(client, "get_artifact", path=DB, symbol="Table.lookup_or_insert")
    assert err and "Table.lookup" in out["error"]["details"]["close_matches"]
