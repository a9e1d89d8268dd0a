"""Notes after a half-done rename (issue 23, trial t23c), on real code of pallets/click
(tests/data/click) copied to tmp_path and edited by the tests as the trial's agent did:
``Parameter.value_from_envvar`` renamed to ``envvar_value`` where it is defined only, its caller
``self.value_from_envvar(ctx)`` left as it was. A refresh prompt must not say "write the new name"
while code still names the old one; a stale file's refresh asks for its stale and new symbols only;
a note naming what the file imports follows that import."""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests._servers import parsed_client
from tests.conftest import MODES, ROOT, call, console_script, subprocess_env

pytestmark = pytest.mark.anyio

CORE = "src/click/core.py"
UTILS = "src/click/_utils.py"
NOTES = {
    "Parameter.consume_value": {
        "description": "Picks the raw value: command line > environment variable (via "
        "`Parameter.value_from_envvar`) > default_map > default; returns `UNSET` when none is found."
    },
    "Option.value_from_envvar": {"description": "Override for options: reads via `Option.resolve_envvar_value`."},
    "Option.consume_value": {"description": "Calls `Parameter.consume_value`, then resolves `FLAG_NEEDS_VALUE`."},
}


@pytest.fixture
def click_ws(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tests" / "data" / "click", tmp_path / "ws")
    return tmp_path / "ws"


@pytest.fixture(params=MODES)
async def click_client(click_ws: Path, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with parsed_client(click_ws, request.param) as c:
        yield c


def _rename_definition(ws: Path) -> None:
    """The trial's edit: the base class's method renamed in its ``def`` line only."""
    core = ws / CORE
    text = core.read_text(encoding="utf-8")
    old = "    def value_from_envvar(self, ctx: Context) -> str | cabc.Sequence[str] | None:\n"
    assert text.count(old) == 1
    core.write_text(text.replace(old, old.replace("value_from_envvar", "envvar_value")), encoding="utf-8")


async def _noted_then_half_renamed(c: Client, ws: Path) -> None:
    """The notes stored, then the trial's edit, then the parse that sees the method go."""
    await _store(c, NOTES)
    _rename_definition(ws)
    err, _ = await call(c, "generate_artifact", path=CORE)
    assert not err


def _calls_of_old_name_in_parameter(ws: Path) -> list[int]:
    """The truth, by ast: the lines inside class Parameter that call ``self.value_from_envvar``."""
    tree = ast.parse((ws / CORE).read_text(encoding="utf-8"))
    param = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Parameter")
    assert not any(isinstance(n, ast.FunctionDef) and n.name == "value_from_envvar" for n in param.body)
    return sorted(
        n.lineno
        for n in ast.walk(param)
        if isinstance(n, ast.Attribute)
        and n.attr == "value_from_envvar"
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
    )


async def _store(c: Client, notes: dict[str, Any]) -> dict[str, Any]:
    err, out = await call(c, "generate_prompt", path=CORE, task="annotate", symbols=list(notes))
    assert not err, out
    err, stored = await call(c, "store_llm_result", **out["callbackArgs"], result=json.dumps({"symbols": notes}))
    assert not err and stored["status"] == "success", stored
    return dict(stored["data"])


def _asked(prompt: str) -> list[str]:
    return [line[2:] for line in prompt.split("these qualified names:", 1)[1].splitlines() if line[:2] == "- "]


def _named_section(prompt: str) -> str:
    return prompt.split("## Code named in what was written", 1)[1].split("\n## ", 1)[0]


async def test_a_half_done_rename_is_said_unfinished_until_no_use_of_the_old_name_remains(
    click_client: Client, click_ws: Path
) -> None:
    await _noted_then_half_renamed(click_client, click_ws)
    left = _calls_of_old_name_in_parameter(click_ws)
    assert len(left) == 1
    err, out = await call(
        click_client, "generate_prompt", path=CORE, task="annotate", symbols=["Parameter.consume_value"]
    )
    assert not err
    named = _named_section(out["promptForHostLLM"])
    assert "write the new name" not in named
    assert "the rename is not finished" in named and "`Parameter.envvar_value`" in named
    assert re.findall(r"src/click/core\.py:(\d+) `", named) == [str(n) for n in left]
    assert "envvar_value = self.value_from_envvar(ctx)" in named
    # The prompt's list of what no longer resolves is check_references' own (with what the store
    # remembers): the call only a subclass still answers, the rename offered first.
    broken = out["promptForHostLLM"].split("## Broken around it", 1)[1].split("\n## ", 1)[0]
    assert f"- line {left[0]}: `self.value_from_envvar` (call)" in broken
    assert "did you mean `envvar_value`" in broken

    # The rename finished (the call too): only now does the prompt say to write the new name.
    core = click_ws / CORE
    core.write_text(
        core.read_text(encoding="utf-8").replace("self.value_from_envvar(ctx)\n", "self.envvar_value(ctx)\n", 1),
        encoding="utf-8",
    )
    assert _calls_of_old_name_in_parameter(click_ws) == []
    err, out = await call(
        click_client, "generate_prompt", path=CORE, task="annotate", symbols=["Parameter.consume_value"]
    )
    assert not err
    named = _named_section(out["promptForHostLLM"])
    assert "no use of the old name remains; write the new name" in named and "not finished" not in named
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err
    gone = next(d for d in out["data"]["stale_dependencies"] if d["symbol"] == "Parameter.value_from_envvar")
    assert gone["renamed_to"] == "Parameter.envvar_value" and "rename_unfinished" not in gone


async def test_a_stale_files_refresh_asks_for_its_stale_and_new_symbols_wherever_it_is_suggested(
    click_client: Client, click_ws: Path
) -> None:
    await _noted_then_half_renamed(click_client, click_ws)
    suggested: list[str] = []
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    suggested.append(re.search(r"generate_prompt\([^)]*\)", out["nextAction"]).group())  # type: ignore[union-attr]
    err, out = await call(click_client, "search_artifacts", query="raw value command line", scope="notes")
    assert not err
    suggested += [h["refresh_with"] for h in out["data"]["results"] if "refresh_with" in h]
    err, out = await call(click_client, "list_artifacts", directory="src/click", status="stale")
    assert not err and CORE in [e["path"] for f in out["data"]["folders"] for e in f["entries"]]
    assert "generate_prompt(path, task)" in out["nextAction"]
    suggested.append(f"generate_prompt({CORE!r}, 'annotate')")
    assert len(suggested) >= 3
    for text in suggested:  # each suggestion is the plain call, no part: the one the tests make next
        assert re.fullmatch(r"generate_prompt\((path=)?'src/click/core\.py', (task=)?'annotate'\)", text), text

    err, out = await call(click_client, "generate_prompt", path=CORE, task="annotate")
    assert not err
    data = out["data"]
    # Asked, in source order: the note naming the gone method and the note of its override (stale),
    # and the renamed method (new since the notes); Option.consume_value's note is kept.
    assert _asked(out["promptForHostLLM"]) == [
        "Parameter.consume_value",
        "Parameter.envvar_value",
        "Option.value_from_envvar",
    ]
    assert data["parts"] == 1 and data["described_but_stale"] == 2 and data["already_described"] == 1
    # The never-described rest is counted with the call that asks for it; that call asks for none
    # of the notes already written.
    assert data["never_described"] > 100
    call_text = data["never_described_with"]
    k = int(re.fullmatch(r"generate_prompt\(path='src/click/core\.py', task='annotate', part=(\d+)\)", call_text)[1])  # type: ignore[index]
    err, more = await call(click_client, "generate_prompt", path=CORE, task="annotate", part=k)
    assert not err
    assert not set(_asked(more["promptForHostLLM"])) & set(NOTES)


async def test_a_name_the_notes_file_imports_follows_that_import(click_client: Client, click_ws: Path) -> None:
    # The truth: core.py imports UNSET and FLAG_NEEDS_VALUE from ._utils, which defines each twice
    # (a Sentinel member and the module-level name).
    core = ast.parse((click_ws / CORE).read_text(encoding="utf-8"))
    imported = {a.name for n in core.body if isinstance(n, ast.ImportFrom) and n.module == "_utils" for a in n.names}
    assert {"UNSET", "FLAG_NEEDS_VALUE"} <= imported
    utils = (click_ws / UTILS).read_text(encoding="utf-8")
    assert re.search(r"^UNSET\b", utils, re.M) and re.search(r"^    UNSET = ", utils, re.M)
    stored = await _store(click_client, NOTES)
    deps = {(d["name"], d["symbol"], d["path"]) for d in stored["depends_on"]}
    assert {("UNSET", "UNSET", UTILS), ("FLAG_NEEDS_VALUE", "FLAG_NEEDS_VALUE", UTILS)} <= deps
    assert "names_not_followed" not in stored


async def test_over_stdio_a_half_done_rename_refresh_names_the_broken_call(click_ws: Path) -> None:
    server = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(click_ws)], env=subprocess_env()
    )
    async with Client(server, mode="legacy") as c:  # type: ignore[arg-type]
        err, _ = await call(c, "generate_artifact", path=".")
        assert not err
        await _noted_then_half_renamed(c, click_ws)
        err, out = await call(c, "generate_prompt", path=CORE, task="annotate")
        assert not err and out["data"]["parts"] == 1
        named = _named_section(out["promptForHostLLM"])
        assert "the rename is not finished" in named
        assert f"core.py:{_calls_of_old_name_in_parameter(click_ws)[0]} `" in named


async def test_a_doc_hit_shows_the_docstring_and_a_note_hit_the_note_each_once(
    click_client: Client, click_ws: Path
) -> None:
    await _store(click_client, NOTES)
    tree = ast.parse((click_ws / CORE).read_text(encoding="utf-8"))
    param = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Parameter")
    fn = next(n for n in param.body if isinstance(n, ast.FunctionDef) and n.name == "consume_value")
    doc_first = (ast.get_docstring(fn) or "").splitlines()[0]
    assert doc_first == "Returns the parameter value produced by the parser."
    note = NOTES["Parameter.consume_value"]["description"]
    err, out = await call(click_client, "search_artifacts", query="parameter value default", scope="notes")
    assert not err
    hits = [h for h in out["data"]["results"] if h["symbol"] == "Parameter.consume_value"]
    assert sorted((h["from"], h["match"]) for h in hits) == [("annotate", "note"), ("outline", "doc")]
    by = {h["from"]: h for h in hits}
    assert doc_first.startswith(by["outline"]["snippet"].rstrip("…")) and by["outline"]["why"]["field"] == "doc"
    assert note.startswith(by["annotate"]["snippet"].rstrip("…"))
    seen = [(h["path"], h["symbol"], h["from"]) for h in out["data"]["results"]]
    assert len(seen) == len(set(seen))
    # Found by name: the outline's hit shows the docstring, the note beside it.
    err, out = await call(click_client, "search_artifacts", query="Parameter.consume_value", scope="symbols")
    assert not err
    (named,) = out["data"]["results"]
    assert doc_first.startswith(named["snippet"].rstrip("…")) and note.startswith(named["note"].rstrip("…"))


async def test_a_stale_annotate_answer_counts_the_undescribed_and_names_a_few(
    click_client: Client, click_ws: Path
) -> None:
    await _noted_then_half_renamed(click_client, click_ws)
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    content = out["data"]["content"]
    # The truth, by ast: every function, method and class of core.py, and the module's names.
    tree = ast.parse((click_ws / CORE).read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.ClassDef)
    tops = [n for n in tree.body if isinstance(n, kinds)]
    defs = [n.name for n in tops] + [
        f"{c.name}.{m.name}" for c in tops if isinstance(c, ast.ClassDef) for m in c.body if isinstance(m, kinds)
    ]
    assert len(defs) > 150 and "Parameter.envvar_value" in defs
    assert content["undescribed_total"] >= len(set(defs)) - len(NOTES)
    assert len(content["undescribed"]) == 10 and content["undescribed"][0] == "Parameter.envvar_value"  # new first
    assert f"{content['undescribed_total'] - 10} more: get_artifact('src/click/core.py')" in content["undescribed_rest"]
    assert len(json.dumps(content["undescribed"])) < 400


async def test_an_overrides_note_goes_stale_when_the_member_it_overrode_goes(
    click_client: Client, click_ws: Path
) -> None:
    # The truth, by ast: Option derives from Parameter, and both define value_from_envvar.
    tree = ast.parse((click_ws / CORE).read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    assert [b.id for b in classes["Option"].bases if isinstance(b, ast.Name)] == ["Parameter"]
    for name in ("Parameter", "Option"):
        assert any(isinstance(m, ast.FunctionDef) and m.name == "value_from_envvar" for m in classes[name].body)
    stored = await _store(click_client, NOTES)
    assert "names_not_followed" not in stored
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "fresh"
    await _noted_then_half_renamed(click_client, click_ws)  # noted again: the same notes
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "stale"
    gone = [d for d in out["data"]["stale_dependencies"] if d["symbol"] == "Parameter.value_from_envvar"]
    assert len(gone) == 1 and gone[0]["change"] == "gone" and gone[0]["renamed_to"] == "Parameter.envvar_value"
    assert set(gone[0]["named_in"]) == {"Parameter.consume_value", "Option.value_from_envvar"}
    assert gone[0]["overridden_by"] == ["Option.value_from_envvar"]
    left = _calls_of_old_name_in_parameter(click_ws)
    assert gone[0]["rename_unfinished"]["uses"] == len(left)
    assert gone[0]["rename_unfinished"]["at"] == [f"{CORE}:{n}" for n in left]
    assert "Option.value_from_envvar" in out["data"]["content"]["naming_changed_code"]
    err, out = await call(click_client, "generate_prompt", path=CORE, task="annotate")
    assert not err
    assert {"Parameter.consume_value", "Option.value_from_envvar"} <= set(_asked(out["promptForHostLLM"]))
    assert "which `Option.value_from_envvar` overrode" in _named_section(out["promptForHostLLM"])


async def test_an_overrides_note_stays_fresh_when_the_member_it_overrides_only_changes(
    click_client: Client, click_ws: Path
) -> None:
    await _store(click_client, {"Option.value_from_envvar": NOTES["Option.value_from_envvar"]})
    core = click_ws / CORE
    text = core.read_text(encoding="utf-8")
    body = "            return self.type.split_envvar_value(rv)\n\n        return rv\n"
    assert text.count(body) == 1  # the end of Parameter.value_from_envvar
    core.write_text(text.replace(body, body.replace("return rv", "return rv or None")), encoding="utf-8")
    err, _ = await call(click_client, "generate_artifact", path=CORE)
    assert not err
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "fresh", out["data"].get("stale_dependencies")


async def test_a_refresh_of_many_stale_notes_comes_in_prompts_within_the_cap_each_note_once(
    click_client: Client, click_ws: Path
) -> None:
    # Every method of Parameter and Option (ast) gets a note naming Context.lookup_default.
    tree = ast.parse((click_ws / CORE).read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    methods = sorted(
        {f"{c}.{m.name}" for c in ("Parameter", "Option") for m in classes[c].body if isinstance(m, ast.FunctionDef)}
    )
    assert len(methods) > 30
    notes = {m: {"description": f"{m} reads defaults through `Context.lookup_default`."} for m in methods}
    stored = await _store(click_client, notes)
    assert set(stored["stored"]) == set(methods)
    core = click_ws / CORE
    body = "        if call and callable(value):\n            return value()\n"
    text = core.read_text(encoding="utf-8")
    assert text.count(body) == 1
    core.write_text(text.replace(body, body.replace("callable(value)", "callable(value) and value")), encoding="utf-8")
    err, _ = await call(click_client, "generate_artifact", path=CORE)
    assert not err
    asked_all: list[str] = []
    prompts = 0
    for _ in range(len(methods)):
        err, out = await call(click_client, "generate_prompt", path=CORE, task="annotate")
        assert not err
        asked = _asked(out["promptForHostLLM"])
        if not set(asked) & set(methods):
            break  # nothing stale left: the call asks for the never-described part
        assert "prompt truncated" not in out["promptForHostLLM"] and out["data"]["parts"] == 1
        assert set(asked) <= set(methods)  # only the stale ones, not the other symbols of the file
        asked_all += asked
        prompts += 1
        left = len(set(methods) - set(asked_all))
        assert out["data"].get("refresh_left", 0) == left
        answer = {"symbols": {n: {"description": f"{n}: defaults come from the map."} for n in asked}}
        err, done = await call(click_client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
        assert not err and done["status"] == "success"
    assert sorted(asked_all) == methods  # each stale note asked exactly once, every one of them
    assert prompts > 1  # more than one prompt's source: asked in turn
    err, out = await call(click_client, "get_artifact", path=CORE, kind="annotate")
    assert not err and out["data"]["status"] == "fresh"
