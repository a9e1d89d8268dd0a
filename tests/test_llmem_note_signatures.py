"""What changed in a signature (t23e item 5): a note naming a function elsewhere records its
signature; when a required parameter is added, stale_dependencies say ``signature_was`` and
``signature_now``, and the refresh prompt shows both; the refresh prompt of the function's own
note says so too, with its uses and the call that lists them. On pallets/click (tests/data/click),
the signatures checked against the ``def`` lines ``ast`` finds."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import call, llmem_stdio_client

UTILS = "src/click/utils.py"
TERMUI = "src/click/termui.py"
ADDED = "def make_str(value: t.Any, encoding: str) -> str:"


def _def_line(ws: Path, path: str, name: str) -> str:
    """The ``def`` line of a top-level function, by ``ast`` (the test's own reading)."""
    source = (ws / path).read_text("utf-8")
    fn = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return source.splitlines()[fn.lineno - 1].strip().rstrip(":")


def _add_required_parameter(ws: Path) -> None:
    file = ws / UTILS
    old = "def make_str(value: t.Any) -> str:"
    text = file.read_text("utf-8")
    assert text.count(old) == 1
    file.write_text(text.replace(old, ADDED), "utf-8")


def _store(svc: Llmem, out: object, answer: dict[str, object]) -> None:
    args = getattr(out, "callbackArgs", None)
    assert args is not None
    assert svc.store_result(**args, result=json.dumps(answer), model="t").status == "success"


def _uses_by_grep(ws: Path, name: str) -> int:
    """Lines naming ``name`` outside its definition, in the package (grep's count)."""
    return sum(
        line.count(name)
        for f in (ws / "src").rglob("*.py")
        for line in f.read_text("utf-8").splitlines()
        if f"def {name}" not in line
    )


def _calls_of(ws: Path, name: str) -> list[tuple[str, int]]:
    """The calls of ``name`` in the package passing one positional argument (``ast``)."""
    out = []
    for f in sorted((ws / "src").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == name:
                assert len(node.args) == 1 and not node.keywords
                out.append((f.relative_to(ws).as_posix(), node.lineno))
    return out


def test_a_dependency_says_how_its_signature_changed(click_src_ws: Path) -> None:
    ws = click_src_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    was = _def_line(ws, UTILS, "make_str")
    out = svc.prompt(TERMUI, "annotate", symbols=["style"])
    _store(svc, out, {"symbols": {"style": {"description": "Styles text; `make_str` turns the message into text."}}})
    assert svc.get(TERMUI, "annotate", 0, None)["status"] == "fresh"
    _add_required_parameter(ws)
    now = _def_line(ws, UTILS, "make_str")
    got = svc.get(TERMUI, "annotate", 0, None)
    (dep,) = [d for d in got["stale_dependencies"] if d["symbol"] == "make_str"]
    assert dep["change"] == "changed" and dep["named_in"] == ["style"]
    assert (dep["signature_was"], dep["signature_now"]) == (was, now) and was != now
    refresh = svc.prompt(TERMUI, "annotate").promptForHostLLM or ""
    assert f"its signature changed: was `{was}`, now `{now}`" in refresh


def test_a_body_change_says_no_signature(click_src_ws: Path) -> None:
    ws = click_src_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    _store(
        svc,
        svc.prompt(TERMUI, "annotate", symbols=["style"]),
        {"symbols": {"style": {"description": "Styles text; `make_str` turns the message into text."}}},
    )
    file = ws / UTILS
    file.write_text(file.read_text("utf-8").replace('"""Converts a value into a valid string."""', '"""To text."""'))
    (dep,) = [d for d in svc.get(TERMUI, "annotate", 0, None)["stale_dependencies"] if d["symbol"] == "make_str"]
    assert "signature_was" not in dep and "signature_now" not in dep


def test_the_refresh_of_the_changed_function_names_its_new_signature_and_uses(click_src_ws: Path) -> None:
    ws = click_src_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    was = _def_line(ws, UTILS, "make_str")
    _store(
        svc,
        svc.prompt(UTILS, "annotate", symbols=["make_str"]),
        {"symbols": {"make_str": {"description": "Converts a value into a string."}}},
    )
    _add_required_parameter(ws)
    now = _def_line(ws, UTILS, "make_str")
    out = svc.prompt(UTILS, "annotate")
    data, prompt = out.data or {}, out.promptForHostLLM or ""
    (changed,) = data["signatures_changed"]
    uses = _uses_by_grep(ws, "make_str")
    calls = _calls_of(ws, "make_str")  # each passes one argument: none gives `encoding` now
    broken = changed.pop("calls_not_matching")
    assert changed == {
        "symbol": "make_str",
        "signature_was": was,
        "signature_now": now,
        "uses": uses,
        "list_with": f"find_references('make_str', path={UTILS!r})",
        "calls_not_matching_total": len(calls),
    }
    assert [(b["path"], b["line"]) for b in broken] == calls and all("encoding" in b["why"] for b in broken)
    assert uses > 0 and f"- `make_str`: was `{was}`, now `{now}`; {uses} use(s) in the workspace" in prompt
    assert f"{len(calls)} call(s) no longer fit it: {calls[0][0]}:{calls[0][1]}" in prompt
    assert prompt.index("## Signatures that changed") < prompt.index("## Answer format")


@pytest.mark.anyio
async def test_signature_change_through_the_server(click_src_client: Client, click_src_ws: Path) -> None:
    err, out = await call(click_src_client, "generate_prompt", path=TERMUI, task="annotate", symbols=["style"])
    assert not err
    answer = {"symbols": {"style": {"description": "Styles text; `make_str` turns the message into text."}}}
    err, _ = await call(click_src_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
    assert not err
    _add_required_parameter(click_src_ws)
    err, got = await call(click_src_client, "get_artifact", path=TERMUI, kind="annotate")
    (dep,) = [d for d in got["data"]["stale_dependencies"] if d["symbol"] == "make_str"]
    assert not err and dep["signature_now"] == _def_line(click_src_ws, UTILS, "make_str")


@pytest.mark.anyio
async def test_signatures_changed_over_stdio(click_src_ws: Path) -> None:
    with anyio.fail_after(120):
        async with llmem_stdio_client(click_src_ws) as c:
            err, out = await call(c, "generate_prompt", path=UTILS, task="annotate", symbols=["make_str"])
            answer = {"symbols": {"make_str": {"description": "Converts a value into a string."}}}
            err, _ = await call(c, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
            assert not err
            _add_required_parameter(click_src_ws)
            err, out = await call(c, "generate_prompt", path=UTILS, task="annotate")
            (changed,) = out["data"]["signatures_changed"]
            assert not err and changed["signature_now"] == _def_line(click_src_ws, UTILS, "make_str")
