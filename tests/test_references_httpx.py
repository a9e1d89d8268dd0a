"""find_references on encode/httpx (tests/data/httpx), compared with ``ast``: a renamed method
(not a function) is answered as unresolved with where it was and what it became, also when its
uses are all in tests left out; qualified names (``Client.request``); caller trees without
``dict.get`` or generator ``.send()`` among the callers."""

from __future__ import annotations

import ast
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.references import NOT_IT
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from tests._httpx import CLIENT, MODELS, attribute_uses, httpx_workspace, rename_method, service
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


def _methods_calling(ws: Path, file: str, cls: str, name: str) -> set[tuple[str, int]]:
    """(qualified method, line) of every ``self.name(…)`` call in the methods of ``cls`` (ast)."""
    tree = ast.parse((ws / file).read_text("utf-8"))
    [klass] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    found = set()
    for method in klass.body:
        if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(method):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == name
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "self"
                ):
                    found.add((f"{cls}.{method.name}", node.lineno))
    return found


def test_a_qualified_name_keeps_one_class_of_two_in_a_file(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    sync = svc.references("Client.request", None, "call", 100, None, tests="exclude")
    assert sync["qualified"] == "Client.request" and sync["path"] == CLIENT
    assert [d["symbol"] for d in sync["definitions"]] == ["Client.request"]
    calls = {(r["in"], r["line"]) for r in sync["results"] if r["path"] == CLIENT}
    assert calls == _methods_calling(ws, CLIENT, "Client", "request")
    assert not _methods_calling(ws, CLIENT, "AsyncClient", "request") & calls
    # httpx.request: `with Client(…) as client: client.request(…)`, the with's target a Client
    assert {(r["path"], r["in"]) for r in sync["results"] if r["path"] != CLIENT} == {("httpx/_api.py", "request")}
    assert not any(r.get("uncertain") for r in sync["results"])
    async_ = svc.references("AsyncClient.request", CLIENT, "call", 100, None, tests="exclude")
    assert {(r["in"], r["line"]) for r in async_["results"]} == _methods_calling(ws, CLIENT, "AsyncClient", "request")
    module = svc.references("_api.request", None, "call", 100, None)
    assert module["path"] == "httpx/_api.py" and module["definitions"][0]["symbol"] == "request"
    assert {r["line"] for r in module["results"]} == {
        n.lineno
        for n in ast.walk(ast.parse((ws / "httpx/_api.py").read_text("utf-8")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "request"
    }


def test_attribute_stores_and_imports_are_no_uses_of_a_method(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    answer = service(ws).references("Client.request", None, None, 200, None)
    stores = {
        (file.relative_to(ws).as_posix(), t.end_lineno)
        for file in ws.rglob("*.py")
        if ".llmem" not in file.parts
        for n in ast.walk(ast.parse(file.read_text("utf-8")))
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Attribute) and t.attr == "request"
    }
    assert len(stores) >= 5  # response.request = request, self.request = request …
    found = {(r["path"], r["line"]) for r in answer["results"]}
    assert not stores & found
    assert not [r for r in answer["results"] if r["kind"] == "import"]  # from urllib.request import …
    assert answer["left_out"]["by_reason"][NOT_IT["stored"]] >= len(stores)


def test_caller_trees_leave_out_dict_get_generator_send_and_false_cycles(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    tree = svc.references("Client.send", None, None, 50, None, tests="exclude", depth=2)
    assert {(c["in"], c["line"]) for c in tree["callers"]} == _methods_calling(ws, CLIENT, "Client", "send")
    # flow.send(response) on generators in Auth.sync_auth_flow and auth_flow.send in _send_handling_auth
    sends = {
        n.lineno
        for n in ast.walk(ast.parse((ws / "httpx/_auth.py").read_text("utf-8")))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "send"
    }
    assert sends and not any(c["path"] == "httpx/_auth.py" for c in tree["callers"])
    # self.headers.get / kwargs.get: Headers and dict, not Client: no caller of Client.get is one of those
    get = svc.references("Client.get", None, None, 50, None, tests="exclude", depth=2)
    texts = [c["text"] for c in get["callers"]]
    assert not [t for t in texts if "headers.get(" in t or "kwargs.get(" in t], texts
    assert all(c.get("uncertain") for c in get["callers"])  # what is left is said to be uncertain
    # self._pool.handle_request inside HTTPTransport.handle_request: not a cycle
    handle = svc.references("HTTPTransport.handle_request", None, None, 50, None, tests="exclude", depth=5)
    assert "cycle_nodes" not in handle["cut"] and handle["cut"]["uncertain_self_nodes"] == 1
    # transport.handle_request(...) in Client._send_single_request: a transport of unknown type is
    # shown with why, and not followed further (its callers would be guesses); counted, named so
    (caller,) = [c for c in handle["callers"] if c["in"] == "Client._send_single_request"]
    assert caller["uncertain"] and not caller.get("callers") and "not followed" in caller["cut"]
    assert handle["cut"]["uncertain_nodes"] == 1


def test_line_search_gives_a_symbols_signature_once(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    svc.parse(".")
    answer = svc.search("timeout", None, CLIENT, 500, None, scope="lines")
    lines = (ws / CLIENT).read_text("utf-8").lower().splitlines()
    assert answer["total"] == sum(1 for line in lines if "timeout" in line)  # grep -ci
    signed = [(h["path"], h["symbol"]) for h in answer["results"] if h.get("signature")]
    assert len(signed) == len(set(signed)) and answer["signatures"]
    first = {}  # each symbol's first hit carries its signature, the later ones none
    for h in answer["results"]:
        first.setdefault(h["symbol"], h)
    assert all(h.get("signature") for s, h in first.items() if s and h["kind"] != "line")


@pytest.mark.anyio
async def test_over_stdio_a_method_renamed_between_calls(tmp_path: Path) -> None:
    """The console script as a client launches it (default protocol era): parsed once, then the
    method renamed without telling it; check_references and find_references answer the edit."""
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    ws = httpx_workspace(tmp_path)
    service(ws).parse(".")
    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params) as c:  # type: ignore[arg-type]
            err, out = await call(c, "find_references", symbol="AsyncClient.request", kind="call", tests="exclude")
            assert not err and out["data"]["qualified"] == "AsyncClient.request"
            assert {r["in"] for r in out["data"]["results"]} <= {
                m for m, _line in _methods_calling(ws, CLIENT, "AsyncClient", "request")
            }
            rename_method(ws, "raise_for_status", "check_status")
            err, out = await call(c, "check_references")
            reported = {(r["path"], r["line"]) for r in out["data"]["results"]}
            reported |= {(r["path"], r["line"]) for r in out["data"]["may_break_by_name"]["results"]}
            assert not err and reported == attribute_uses(ws, "raise_for_status")
            err, out = await call(c, "find_references", symbol="raise_for_status", kind="call")
            assert not err and out["data"]["last_defined"]["renamed_to"] == "Response.check_status"


@pytest.mark.anyio
async def test_a_tree_that_left_tests_out_never_says_that_is_all(client: tuple[Client, Path]) -> None:
    c, _ws = client
    err, out = await call(c, "find_references", symbol="Client.send", tests="exclude", depth=2)
    assert not err and out["data"]["tests_left_out"] > 0 and out["data"]["next_cursor"] is None
    assert "That is all" not in out["nextAction"]
    assert f"{out['data']['tests_left_out']} use(s) in tests" in out["nextAction"]
