"""A prompt is never cut silently (t23e items 4 and 10): symbols= asks for as many symbols as one
part's source holds, in the given order, and names the rest (symbols_left) with the call that asks
for them; the answer format and the keys asked are always whole; store_llm_result names the call
for what is still missing; fields are accepted in symbols=; a newer prompt replaces the older
tickets asking any of the same symbols. On click's core.py (tests/data/click: 147 kB, 167 classes
and functions, fields), its methods checked with ``ast``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.callback import fit_prompt
from llmem.core.config import Limits
from llmem.core.errors import TicketError
from llmem.core.store import ArtifactStore
from tests.conftest import call, llmem_stdio_client
from tests.test_llmem_prompt_symbols import methods_of

CORE = "src/click/core.py"


def _keys_asked(prompt: str) -> list[str]:
    """The qualified names listed after the answer format (the keys the answer must have)."""
    fmt = prompt.split("\n## Answer format\n", 1)
    assert len(fmt) == 2, "the answer format is missing"
    return re.findall(r"^- (\S+)$", fmt[1].split("these qualified names:\n", 1)[1], re.M)


def _svc(ws: Path, limits: Limits | None = None) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), limits or Limits())


def test_symbols_asks_what_one_part_holds_and_names_the_rest(click_src_ws: Path) -> None:
    svc = _svc(click_src_ws)
    methods = methods_of(click_src_ws, CORE)
    wanted = [n for n in methods if n.startswith(("Context.", "Command."))][:45]
    assert len(wanted) == 45 and sum(len(methods[n]) for n in wanted) > 2 * 11_000  # more than one part
    asked_all: list[str] = []
    todo = wanted
    rounds = 0
    while todo:
        rounds += 1
        out = svc.prompt(CORE, "annotate", symbols=todo)
        prompt, data = out.promptForHostLLM or "", out.data or {}
        assert len(prompt) <= svc.notes.callback.prompt_chars and "prompt_cut" not in data
        assert "truncated" not in prompt and "left out for the size cap" not in prompt
        keys = _keys_asked(prompt)
        assert keys == data["only_symbols"][:50] and len(keys) == data["asked"]
        assert all(methods[k] in prompt for k in keys)  # the code of every key asked, whole
        # taken in the given order (the first always; one too big for the room left is skipped, a
        # later smaller one taken): the rest is named in the given order
        left = data["symbols_left"]
        rest = [n for n in todo if n not in keys]
        assert todo[0] in keys and set(keys) <= set(todo)
        assert left["count"] == len(rest) and left.get("names", []) == rest
        if left["count"]:
            assert left["with"] == f"generate_prompt(path={CORE!r}, task='annotate', symbols={rest!r})"
            # the first one left did not fit beside what was taken before it
            before = [k for k in todo[: todo.index(rest[0])] if k in keys]
            assert sum(len(methods[k]) + 80 for k in [*before, rest[0]]) > 11_000 - 400
            assert left["with"] in (out.nextAction or "")
        asked_all += keys
        todo = left.get("names", [])
    assert rounds >= 3 and sorted(asked_all) == sorted(wanted)  # each asked once, none lost


def test_an_answer_missing_symbols_names_the_call_for_them(click_src_ws: Path) -> None:
    svc = _svc(click_src_ws)
    methods = methods_of(click_src_ws, CORE)
    wanted = [n for n in methods if n.startswith("Context.")][:40]
    out = svc.prompt(CORE, "annotate", symbols=wanted)
    data = out.data or {}
    asked = _keys_asked(out.promptForHostLLM or "")
    left = data["symbols_left"]["names"]
    answer = {"symbols": {n: {"description": "Does its part."} for n in asked[:3]}}
    stored = svc.store_result(**(out.callbackArgs or {}), result=json.dumps(answer), model="t")
    sdata = stored.data or {}
    assert sdata["missing_symbols"] == asked[3:]
    rest = asked[3:] + left
    assert sdata["ask_next"] == {
        "count": len(rest),
        "with": f"generate_prompt(path={CORE!r}, task='annotate', symbols={rest!r})",
    }
    assert sdata["ask_next"]["with"] in (stored.nextAction or "")
    again = svc.prompt(CORE, "annotate", symbols=rest)  # the call works: asks the first of them
    assert _keys_asked(again.promptForHostLLM or "")[0] == asked[3]


def test_fields_are_accepted_in_symbols(click_src_ws: Path) -> None:
    svc = _svc(click_src_ws)
    source = (click_src_ws / CORE).read_text("utf-8")
    line = next(i for i, t in enumerate(source.splitlines(), 1) if t.strip().startswith("formatter_class"))
    out = svc.prompt(CORE, "annotate", symbols=["Context.formatter_class", "Context.invoke"])
    prompt = out.promptForHostLLM or ""
    assert _keys_asked(prompt) == ["Context.formatter_class", "Context.invoke"]
    assert source.splitlines()[line - 1] in prompt and "class Context:" in prompt  # the field, its class's head
    answer = {"symbols": {"Context.formatter_class": {"description": "The help formatter's class."}}}
    stored = svc.store_result(**(out.callbackArgs or {}), result=json.dumps(answer), model="t")
    assert stored.status == "success" and (stored.data or {})["stored"] == ["Context.formatter_class"]
    # a field inside a class asked too: asked by name, shown by the class's own source
    both = svc.prompt(CORE, "annotate", symbols=["ParameterSource", "ParameterSource.PROMPT"])
    assert _keys_asked(both.promptForHostLLM or "") == ["ParameterSource", "ParameterSource.PROMPT"]


def test_the_cap_never_falls_on_the_answer_format(click_src_ws: Path) -> None:
    # A cap smaller than one part's source: the context is cut, said, and the answer format whole.
    svc = _svc(click_src_ws, Limits(answer_chars=9_000))
    cap = svc.notes.callback.prompt_chars
    for out in (svc.prompt(CORE, "annotate"), svc.prompt(CORE, "document")):
        prompt, data = out.promptForHostLLM or "", out.data or {}
        assert len(prompt) <= cap and data["prompt_cut"]["chars_left_out"] > 0
        assert f"{data['prompt_cut']['chars_left_out']} characters of the context above are left out" in prompt
    annotate = svc.prompt(CORE, "annotate")
    text = annotate.promptForHostLLM or ""
    assert _keys_asked(text) == (annotate.data or {}).get("only_symbols", _keys_asked(text))
    assert len(_keys_asked(text)) == (annotate.data or {})["asked"]  # every key asked, listed
    assert (svc.prompt(CORE, "document").promptForHostLLM or "").endswith(
        "Answer with the Markdown only (no preamble)."
    )


def test_fit_prompt_keeps_the_tail_whole() -> None:
    body = "".join(f"line {i}\n" for i in range(1_000))
    tail = "\n## Answer format\nJSON: " + "x" * 300 + "\n"
    fitted, cut = fit_prompt(body, tail, 2_000)
    assert len(fitted) <= 2_000 and fitted.endswith(tail) and cut is not None
    assert fitted.startswith("line 0\n") and body.startswith(fitted.split("\n[…", 1)[0])
    assert cut["chars_left_out"] == len(body) - len(fitted.split("\n[…", 1)[0])
    assert fit_prompt("short\n", tail, 2_000) == ("short\n" + tail, None)


def _pending(svc: Llmem) -> set[str]:
    return {str(t["ticket"]) for t in svc.store.pending("llmem")}


def test_a_newer_prompt_replaces_the_older_ticket_asking_the_same_symbols(click_src_ws: Path) -> None:
    svc = _svc(click_src_ws)
    part1 = svc.prompt(CORE, "annotate")
    part2 = svc.prompt(CORE, "annotate", part=2)
    t1, t2 = (part1.callbackArgs or {})["ticket"], (part2.callbackArgs or {})["ticket"]
    assert (part2.data or {})["still_pending"] == [t1]  # another part: still answerable
    one_of_part1 = _keys_asked(part1.promptForHostLLM or "")[0]
    chosen = svc.prompt(CORE, "annotate", symbols=[one_of_part1])
    t3 = (chosen.callbackArgs or {})["ticket"]
    assert (chosen.data or {})["superseded_tickets"] == [t1] and (chosen.data or {})["still_pending"] == [t2]
    assert _pending(svc) == {t2, t3}
    with pytest.raises(TicketError, match="superseded"):
        svc.store_result(**(part1.callbackArgs or {}), result='{"symbols": {}}', model="t")


@pytest.mark.anyio
async def test_symbols_left_through_the_server(click_src_client: Client, click_src_ws: Path) -> None:
    wanted = [n for n in methods_of(click_src_ws, CORE) if n.startswith("Context.")][:40]
    err, out = await call(click_src_client, "generate_prompt", path=CORE, task="annotate", symbols=wanted)
    data: dict[str, Any] = out["data"]
    assert not err and data["symbols_left"]["count"] == len(wanted) - data["asked"] > 0
    assert data["symbols_left"]["with"] in out["nextAction"]


@pytest.mark.anyio
async def test_symbols_left_over_stdio(click_src_ws: Path) -> None:
    wanted = [n for n in methods_of(click_src_ws, CORE) if n.startswith("Context.")][:40]
    with anyio.fail_after(120):
        async with llmem_stdio_client(click_src_ws) as c:
            err, out = await call(c, "generate_prompt", path=CORE, task="annotate", symbols=wanted)
            left = out["data"]["symbols_left"]
            assert not err and left["count"] == len(wanted) - out["data"]["asked"] > 0
            err, again = await call(c, "generate_prompt", path=CORE, task="annotate", symbols=left["names"])
            assert not err and again["data"]["still_pending"] == [out["callbackArgs"]["ticket"]]
