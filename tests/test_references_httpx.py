"""find_references on encode/httpx (tests/data/httpx), compared with ``ast``: a renamed method
(not a function) is answered as unresolved with where it was and what it became, also when its
uses are all in tests left out; qualified names (``Client.request``); caller trees without
``dict.get`` or generator ``.send()`` among the callers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from tests._httpx import MODELS, attribute_uses, httpx_workspace, rename_method, service
from tests.conftest import MODES, call


def test_a_renamed_method_is_unresolved_with_its_new_name(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    service(ws).parse(".")
    rename_method(ws, "raise_for_status", "check_status")
    answer = service(ws).references("raise_for_status", None, "call", 50, None)  # no parse since the edit
    expected = attribute_uses(ws, "raise_for_status", calls_only=True)
    assert len(expected) == 12
    assert answer["unresolved"] is True and answer["unresolved_total"] == len(expected)
    assert {(r["path"], r["line"]) for r in answer["results"] if r.get("unresolved")} == expected
    assert answer["last_defined"]["symbol"] == "Response.raise_for_status"
    assert answer["last_defined"]["renamed_to"] == "Response.check_status"


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    ws = httpx_workspace(tmp_path)
    service(ws).parse(".")
    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=8_000)))
    async with Client(server, mode=request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_uses_left_out_as_tests_are_said_never_that_is_all(client: tuple[Client, Path]) -> None:
    c, ws = client
    rename_method(ws, "raise_for_status", "check_status")
    in_tests = attribute_uses(ws, "raise_for_status", "tests", calls_only=True)
    assert in_tests == attribute_uses(ws, "raise_for_status", calls_only=True)  # every call is in tests
    err, out = await call(c, "find_references", symbol="raise_for_status", kind="call", tests="exclude")
    assert not err
    data = out["data"]
    assert data["total"] == 0 and data["tests_left_out"] == len(in_tests) and data["unresolved"] is True
    assert data["last_defined"]["renamed_to"] == "Response.check_status"
    assert f"{len(in_tests)} of its uses are left out by tests='exclude'" in data["note"]
    assert "That is all" not in out["nextAction"] and "renamed to 'Response.check_status'" in out["nextAction"]
    # A name with uses in code and in tests: the page of code uses is not "all".
    err, out = await call(c, "find_references", symbol="is_redirect", path=MODELS, tests="exclude")
    assert not err and out["data"]["tests_left_out"] > 0 and out["data"]["next_cursor"] is None
    assert "That is all" not in out["nextAction"]
    assert f"Left out: {out['data']['tests_left_out']} use(s) in tests" in out["nextAction"]
