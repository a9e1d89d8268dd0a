"""check_references on encode/httpx (tests/data/httpx) after a method rename, compared with ``ast``:
right after the edit (no parse since, a new process: the check re-parses what changed itself), on
classes whose pickling methods ``setattr(self, name, value)`` (not dynamic: every use judged)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.check_python import python_file
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from tests._httpx import MODELS, attribute_uses, httpx_workspace, rename_method, service
from tests.conftest import MODES, call


def _reported(answer: dict[str, Any]) -> set[tuple[str, int]]:
    maybe = answer.get("may_break_by_name", {}).get("results", [])
    return {(r["path"], r["line"]) for r in [*answer["results"], *maybe]}


def test_a_method_renamed_right_after_the_edit_every_use_reported(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    service(ws).parser.parse(service(ws).resolve("."))
    rename_method(ws, "raise_for_status", "check_status")
    expected = attribute_uses(ws, "raise_for_status")
    assert len(expected) == 12  # 6 on httpx.Response(...) values, 6 on results of client calls
    answer = service(ws).check_references(None, 500, None)  # a new process: nothing re-parsed the file
    assert answer["freshness"] == {"refreshed": 1, "stale_files": 0}
    assert _reported(answer) == expected
    known = [r for r in answer["results"] if r["missing"] == "raise_for_status"]
    assert len(known) == 6 and all(r["renamed_to"] == "Response.check_status" for r in known)
    assert not any("setattr" in reason for reason in answer["not_checked"]["by_reason"])


def test_a_method_used_inside_its_own_class_is_reported(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    service(ws).parser.parse(service(ws).resolve("."))
    rename_method(ws, "has_redirect_location", "has_location_header")
    expected = attribute_uses(ws, "has_redirect_location")
    assert (MODELS, 808) in expected and len(expected) == 3
    answer = service(ws).check_references("httpx", 500, None)
    assert _reported(answer) == expected
    [inside] = [r for r in answer["results"] if r["path"] == MODELS]
    assert inside["in"] == "Response.raise_for_status" and inside["renamed_to"] == "Response.has_location_header"


def test_pickling_setattr_is_not_dynamic_but_other_computed_setattr_is(tmp_path: Path) -> None:
    source = (
        "class Pickled:\n"
        "    def __setstate__(self, state):\n"
        "        for name, value in state.items():\n"
        "            setattr(self, name, value)\n"
        "    def __getstate__(self):\n"
        "        return {k: v for k, v in self.__dict__.items()}\n"
        "class Loaded:\n"
        "    def load(self, values):\n"
        "        for name, value in values.items():\n"
        "            setattr(self, name, value)\n"
    )
    info = python_file(source.encode())
    assert info.classes["Pickled"].dynamic is None
    assert info.classes["Loaded"].dynamic == "setattr on self with a computed name (in load)"


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    ws = httpx_workspace(tmp_path)
    service(ws).parser.parse(service(ws).resolve("."))
    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=8_000)))
    async with Client(server, mode=request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_check_right_after_an_edit_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    err, out = await call(c, "check_references", path="tests/models")
    assert not err and out["data"]["total"] == 0
    rename_method(ws, "raise_for_status", "check_status")  # edited between calls, nothing parsed
    err, out = await call(c, "check_references", path="tests/models")
    assert not err and out["data"]["freshness"]["refreshed"] == 1
    assert {(r["path"], r["line"]) for r in out["data"]["results"]} == {
        u for u in attribute_uses(ws, "raise_for_status") if u[0].startswith("tests/models/")
    }
    assert "Nothing broken" not in out["nextAction"]
