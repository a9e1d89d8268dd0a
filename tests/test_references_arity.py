"""find_references with path marks the calls that no longer fit the definition's signature (trial
t23f: ``*, strict: bool`` added to starlette's ``request_response``, tests/data/starlette; its call
``request_response(endpoint)`` was listed as a plain call). Expected calls come from ``ast``."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call, llmem_client

ROUTING = "starlette/routing.py"
OLD = "    func: Callable[[Request], Awaitable[Response] | Response],\n) -> ASGIApp:"
NEW = "    func: Callable[[Request], Awaitable[Response] | Response],\n    *,\n    strict: bool,\n) -> ASGIApp:"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    shutil.copytree(DATA / "starlette", tmp_path / "ws")
    return tmp_path / "ws"


def _add_strict(ws: Path) -> None:
    file = ws / ROUTING
    text = file.read_text("utf-8")
    assert text.count(OLD) == 1
    file.write_text(text.replace(OLD, NEW), encoding="utf-8")


def _calls_without(ws: Path, name: str, keyword: str) -> set[int]:
    """Lines of routing.py calling ``name(…)`` without ``keyword=``, by ``ast``."""
    tree = ast.parse((ws / ROUTING).read_text("utf-8"))
    return {
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == name
        and keyword not in {k.arg for k in n.keywords}
    }


def test_a_call_missing_an_added_required_parameter_is_marked(ws: Path) -> None:
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))
    before = svc.references("request_response", ROUTING, None, 100, None)
    assert "calls_not_fitting" not in before and not any("arguments_do_not_fit" in r for r in before["results"])
    _add_strict(ws)
    answer = svc.references("request_response", ROUTING, None, 100, None)
    marked = {r["line"]: r["arguments_do_not_fit"] for r in answer["results"] if "arguments_do_not_fit" in r}
    assert set(marked) == _calls_without(ws, "request_response", "strict") and len(marked) == 1
    assert answer["calls_not_fitting"] == 1 and "check_references()" in answer["calls_not_fitting_means"]
    assert all("strict is not given" in why for why in marked.values())


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_the_mark_and_the_hint_through_the_server(ws: Path, mode: str) -> None:
    _add_strict(ws)
    async with llmem_client(ws, mode) as c:
        err, out = await call(c, "find_references", symbol="request_response", path=ROUTING)
    assert not err and out["data"]["calls_not_fitting"] == len(_calls_without(ws, "request_response", "strict"))
    assert "check_references()" in out["nextAction"]


@pytest.mark.anyio
async def test_over_stdio_the_call_not_fitting(ws: Path) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            _add_strict(ws)
            err, out = await call(c, "find_references", symbol="request_response", path=ROUTING)
    assert not err
    lines = {r["line"] for r in out["data"]["results"] if "arguments_do_not_fit" in r}
    assert lines == _calls_without(ws, "request_response", "strict")
