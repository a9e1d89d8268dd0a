"""Notes that follow their code, on a copy of this repository's own ``llmem`` package: a rename
with the body unchanged keeps the note (``renamed``), a move takes it to the other file
(``moved``), a body change makes only that note stale, a refresh prompt asks only for the stale
and new symbols and the answer merges with the notes that stayed fresh."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.outline import DATA_KINDS, build_outline, iter_symbols
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, call

REPO = Path(__file__).resolve().parents[1]
PATHS = "llmem/core/paths.py"
ERRORS = "llmem/core/errors.py"
APP_JS = "llmem/host/page/app.js"


@pytest.fixture
def llmem(package_llmem: Llmem) -> Llmem:
    """This repository's ``llmem`` package, outlined once, copied per test (``conftest.py``)."""
    return package_llmem


def asked_names(prompt: str) -> list[str]:
    return [line[2:] for line in prompt.split("qualified names", 1)[1].splitlines() if line[:2] == "- "]


def annotate_all(llmem: Llmem, path: str, note: Any = lambda n: f"NOTE-{n} does its part.") -> set[str]:
    """Answer annotate prompts for ``path`` until every symbol is described; the names described."""
    described: set[str] = set()
    for _ in range(50):
        out = llmem.prompt(path, "annotate")
        assert out.promptForHostLLM is not None and out.callbackArgs is not None
        names = asked_names(out.promptForHostLLM)
        answer = {"symbols": {n: {"description": note(n)} for n in names}}
        stored = llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
        assert stored.status == "success", stored
        described |= set(names)
        if not stored.data or stored.data.get("next_part") is None:
            return described
    raise AssertionError("annotate never finished")


def top_level(llmem: Llmem, path: str, kind: str = "function") -> list[Any]:
    outline = build_outline(path, (llmem.ws / path).read_bytes())
    return [s for s in outline.symbols if s.kind == kind]


def biggest_public_function(llmem: Llmem, path: str) -> str:
    return max((s for s in top_level(llmem, path) if not s.name.startswith("_")), key=lambda s: s.end_line).name


def edit(llmem: Llmem, path: str, old: str, new: str) -> None:
    file = llmem.ws / path
    text = file.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    file.write_text(text.replace(old, new), encoding="utf-8")


def test_a_renamed_function_keeps_its_note_under_the_new_name(llmem: Llmem) -> None:
    described = annotate_all(llmem, PATHS)
    old = biggest_public_function(llmem, PATHS)
    assert old in described
    edit(llmem, PATHS, f"def {old}(", f"def {old}_renamed(")
    parsed = llmem.parse(".")
    assert parsed["renamed"] == {PATHS: {old: f"{old}_renamed"}} and parsed["notes_carried"] == 1
    got = llmem.get(PATHS, "annotate", 0, None)
    assert got["status"] == "fresh" and "stale_symbols" not in got
    assert got["renamed"] == {old: f"{old}_renamed"}
    notes = got["content"]["symbols"]
    assert notes[f"{old}_renamed"] == {"description": f"NOTE-{old} does its part."}
    assert old not in notes and set(notes) == (described - {old}) | {f"{old}_renamed"}
    # Nothing left to describe: the next prompt asks for nothing new, it re-describes part 1.
    out = llmem.prompt(PATHS, "annotate")
    assert out.data is not None and out.data["already_described"] == 0


def test_a_rename_read_before_any_parse_is_carried_too(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS)
    old = biggest_public_function(llmem, PATHS)
    edit(llmem, PATHS, f"def {old}(", f"def {old}2(")
    got = llmem.get(PATHS, "annotate", 0, None)  # the outline is made again on this read
    assert got["status"] == "fresh" and got["renamed"] == {old: f"{old}2"}
    assert f"{old}2" in got["content"]["symbols"]
    assert llmem.parse(".").get("renamed") is None  # carried once, not again


def test_search_forgets_the_old_name_once_the_note_moved(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS, note=lambda n: f"Resolves things; WOMBAT-{n}.")
    old = biggest_public_function(llmem, PATHS)
    before = llmem.search(f"WOMBAT-{old}", "annotate", ".", 20, None)
    assert [(h["path"], h["symbol"]) for h in before["results"]] == [(PATHS, old)]
    edit(llmem, PATHS, f"def {old}(", "def locate_in_workspace(")
    llmem.parse(".")
    after = llmem.search(f"WOMBAT-{old}", "annotate", ".", 20, None)
    assert [(h["path"], h["symbol"]) for h in after["results"]] == [(PATHS, "locate_in_workspace")]
    by_name = llmem.search(old, None, ".", 50, None)
    assert all(h["symbol"] != old for h in by_name["results"] if h["path"] == PATHS)


def test_a_renamed_class_keeps_the_notes_of_its_methods(llmem: Llmem) -> None:
    described = annotate_all(llmem, PATHS)
    cls = top_level(llmem, PATHS, "class")[0]
    methods = [c.name for c in cls.children if c.kind not in DATA_KINDS]  # fields get no notes of their own
    assert methods and cls.qualified_name in described
    edit(llmem, PATHS, f"class {cls.name}", "class WorkspacePath")
    parsed = llmem.parse(".")
    expected = {cls.name: "WorkspacePath", **{f"{cls.name}.{m}": f"WorkspacePath.{m}" for m in methods}}
    assert parsed["renamed"] == {PATHS: expected}
    got = llmem.get(PATHS, "annotate", 0, None)
    assert got["status"] == "fresh"
    assert {f"WorkspacePath.{m}" for m in methods} <= set(got["content"]["symbols"])


def test_a_body_change_makes_only_that_note_stale_and_the_refresh_asks_only_for_it(llmem: Llmem) -> None:
    described = annotate_all(llmem, PATHS)
    name = biggest_public_function(llmem, PATHS)
    fn = next(s for s in top_level(llmem, PATHS) if s.name == name)
    lines = (llmem.ws / PATHS).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(fn.end_line, "    pass\n")
    (llmem.ws / PATHS).write_text("".join(lines), encoding="utf-8")
    llmem.parse(".")
    got = llmem.get(PATHS, "annotate", 0, None)
    assert got["status"] == "stale" and got["stale_symbols"] == [{"symbol": name, "change": "changed"}]
    assert "renamed" not in got
    out = llmem.prompt(PATHS, "annotate")
    assert out.promptForHostLLM is not None and out.callbackArgs is not None and out.data is not None
    assert asked_names(out.promptForHostLLM) == [name]
    assert out.data["symbols"] == 1 and out.data["already_described"] == len(described) - 1
    assert out.data["described_but_stale"] == 1 and out.data["not_yet_described"] == 0
    assert "Already described" in out.promptForHostLLM
    # what its note said is in the prompt: what the model does not write again would be lost
    assert f"- `{name}`: NOTE-{name} does its part." in out.promptForHostLLM.split("What their notes said before")[1]
    answer = {"symbols": {name: {"description": "Rewritten after the change."}}}
    stored = llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
    assert stored.data is not None and stored.data["notes_in_file"] == len(described)
    got = llmem.get(PATHS, "annotate", 0, None)
    assert got["status"] == "fresh"
    assert got["content"]["symbols"][name] == {"description": "Rewritten after the change."}
    assert len(got["content"]["symbols"]) == len(described)


def test_a_refresh_keeps_an_unanswered_stale_note_stale_and_drops_gone_ones(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS)
    funcs = [s for s in top_level(llmem, PATHS) if s.end_line - s.start_line > 3]
    changed, removed = funcs[0], funcs[1]
    lines = (llmem.ws / PATHS).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(changed.end_line, "    pass\n")
    del lines[removed.start_line - 1 : removed.end_line]
    lines.append("\n\ndef brand_new() -> int:\n    return 42\n")
    (llmem.ws / PATHS).write_text("".join(lines), encoding="utf-8")
    llmem.parse(".")
    out = llmem.prompt(PATHS, "annotate")
    assert out.promptForHostLLM is not None and out.callbackArgs is not None
    assert sorted(asked_names(out.promptForHostLLM)) == sorted([changed.name, "brand_new"])
    answer = {"symbols": {"brand_new": {"description": "Answers 42."}}}  # the changed one left out
    stored = llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
    assert stored.data is not None
    assert stored.data["missing_symbols"] == [changed.name]
    assert stored.data["dropped_gone_notes"] == [removed.name]
    got = llmem.get(PATHS, "annotate", 0, None)
    assert got["status"] == "stale" and got["stale_symbols"] == [{"symbol": changed.name, "change": "changed"}]
    assert set(got["content"]["changed_symbols"]) == {changed.name}
    assert got["content"]["symbols"]["brand_new"] == {"description": "Answers 42."}
    assert removed.name not in json.dumps(got["content"])


def _move(llmem: Llmem, name: str, source: str, target: str) -> None:
    fn = next(s for s in top_level(llmem, source) if s.name == name)
    lines = (llmem.ws / source).read_text(encoding="utf-8").splitlines(keepends=True)
    body = "".join(lines[fn.start_line - 1 : fn.end_line])
    del lines[fn.start_line - 1 : fn.end_line]
    (llmem.ws / source).write_text("".join(lines), encoding="utf-8")
    with (llmem.ws / target).open("a", encoding="utf-8") as handle:
        handle.write("\n\n" + body)


@pytest.mark.parametrize("order", ["one parse", "old file read first"])
def test_a_moved_function_takes_its_note_to_the_other_file(llmem: Llmem, order: str) -> None:
    annotate_all(llmem, PATHS)
    annotate_all(llmem, ERRORS)
    name = "_refuse_symlink_loop"
    assert name in {s.name for s in top_level(llmem, PATHS)}
    _move(llmem, name, PATHS, ERRORS)
    if order == "old file read first":
        got = llmem.get(PATHS, "annotate", 0, None)
        assert got["content"]["gone_symbols"] == {name: {"description": f"NOTE-{name} does its part."}}
    parsed = llmem.parse(".")
    assert parsed["moved"] == {f"{PATHS}#{name}": f"{ERRORS}#{name}"}
    target = llmem.get(ERRORS, "annotate", 0, None)
    assert target["status"] == "fresh" and target["moved"] == {f"{PATHS}#{name}": f"{ERRORS}#{name}"}
    assert target["content"]["symbols"][name] == {"description": f"NOTE-{name} does its part."}
    assert PATHS in target["provenance"]["carried_from"]
    source = llmem.get(PATHS, "annotate", 0, None)
    assert name not in json.dumps(source["content"]["symbols"])
    assert source["moved"] == {f"{PATHS}#{name}": f"{ERRORS}#{name}"}


def test_a_symbol_back_in_its_file_keeps_its_note_there_when_a_copy_appears_elsewhere(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS)
    name = "_refuse_symlink_loop"
    original = (llmem.ws / PATHS).read_bytes()
    fn = next(s for s in top_level(llmem, PATHS) if s.name == name)
    body = "".join(original.decode().splitlines(keepends=True)[fn.start_line - 1 : fn.end_line])
    _move(llmem, name, PATHS, "llmem/core/runtime.py")
    (llmem.ws / "llmem/core/runtime.py").write_bytes((REPO / "llmem/core/runtime.py").read_bytes())
    assert llmem.get(PATHS, "annotate", 0, None)["content"]["gone_symbols"]  # remembered as gone
    (llmem.ws / PATHS).write_bytes(original)  # back where it was
    assert "moved" not in llmem.parse(".")
    with (llmem.ws / ERRORS).open("a", encoding="utf-8") as handle:
        handle.write("\n\n" + body)  # a copy elsewhere takes nothing
    assert "moved" not in llmem.parse(".")
    assert name in llmem.get(PATHS, "annotate", 0, None)["content"]["symbols"]


def test_a_move_to_a_file_without_notes_makes_its_note(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS)
    name = "_refuse_symlink_loop"
    _move(llmem, name, PATHS, "llmem/core/runtime.py")
    parsed = llmem.parse("llmem/core")
    assert parsed["moved"] == {f"{PATHS}#{name}": f"llmem/core/runtime.py#{name}"}
    got = llmem.get("llmem/core/runtime.py", "annotate", 0, None)
    assert got["status"] == "fresh" and list(got["content"]["symbols"]) == [name]


def test_a_rename_with_a_changed_body_is_not_carried(llmem: Llmem) -> None:
    annotate_all(llmem, PATHS)
    name = biggest_public_function(llmem, PATHS)
    fn = next(s for s in top_level(llmem, PATHS) if s.name == name)
    lines = (llmem.ws / PATHS).read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(fn.end_line, "    pass\n")
    lines[fn.start_line - 1 :] = [ln.replace(f"def {name}(", "def other_name(") for ln in lines[fn.start_line - 1 :]]
    (llmem.ws / PATHS).write_text("".join(lines), encoding="utf-8")
    parsed = llmem.parse(".")
    assert "renamed" not in parsed
    got = llmem.get(PATHS, "annotate", 0, None)
    # Not carried (its code changed), but read as renamed, not merely gone: same signature and size.
    assert got["stale_symbols"] == [{"symbol": name, "change": "gone", "renamed_to": "other_name"}]
    assert "other_name" in got["content"]["undescribed"]


@pytest.mark.parametrize(
    ("before", "after", "renamed"),
    [
        # Recursive: the name inside the body is renamed too, and it still counts as the same code.
        (
            "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n",
            "def factorial(n):\n    return 1 if n <= 1 else n * factorial(n - 1)\n",
            {"fact": "factorial"},
        ),
        # Two equal bodies renamed at once: which note goes where is not guessed.
        (
            "def a(x):\n    return x\n\n\ndef b(x):\n    return x\n",
            "def c(x):\n    return x\n\n\ndef d(x):\n    return x\n",
            None,
        ),
    ],
)
def test_renames_in_a_small_file(llmem: Llmem, before: str, after: str, renamed: dict[str, str] | None) -> None:
    file = llmem.ws / "llmem/small.py"
    file.write_text(before, encoding="utf-8")
    llmem.parse("llmem/small.py")
    described = annotate_all(llmem, "llmem/small.py")
    file.write_text(after, encoding="utf-8")
    assert llmem.parse("llmem/small.py").get("renamed") == ({"llmem/small.py": renamed} if renamed else None)
    got = llmem.get("llmem/small.py", "annotate", 0, None)
    assert set(got["content"].get("gone_symbols") or {}) == (set() if renamed else described)


def test_a_renamed_javascript_function_keeps_its_note(llmem: Llmem) -> None:
    outline = build_outline(APP_JS, (llmem.ws / APP_JS).read_bytes())
    text = (llmem.ws / APP_JS).read_text(encoding="utf-8")
    lines = text.splitlines()
    fn = next(
        s
        for s in iter_symbols(outline)
        if s.kind == "function"
        and "." not in s.qualified_name
        and text.count(f"function {s.name}(") == 1
        and len(re.findall(rf"\b{s.name}\b", "\n".join(lines[s.start_line - 1 : s.end_line]))) == 1
    )
    annotate_all(llmem, APP_JS)
    edit(llmem, APP_JS, f"function {fn.name}(", f"function {fn.name}Renamed(")
    parsed = llmem.parse(".")
    assert parsed["renamed"] == {APP_JS: {fn.name: f"{fn.name}Renamed"}}
    got = llmem.get(APP_JS, "annotate", 0, None)
    assert got["status"] == "fresh" and f"{fn.name}Renamed" in got["content"]["symbols"]


LIB_TS = Path(__file__).resolve().parent / "data" / "servers" / "src" / "filesystem" / "lib.ts"


@pytest.fixture
def ts(workspace: Path) -> Llmem:
    """A real TypeScript module of another project (tests/data/README.md), outlined."""
    (workspace / "src").mkdir()
    (workspace / "src" / "lib.ts").write_bytes(LIB_TS.read_bytes())
    svc = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    svc.parse(".")
    return svc


def test_a_typescript_refresh_asks_only_for_the_changed_functions_in_one_prompt(ts: Llmem) -> None:
    described = annotate_all(ts, "src/lib.ts")
    assert len(described) >= 15
    edit(ts, "src/lib.ts", "return text.replace(/\\r\\n/g, '\\n');", "return text.replace(/\\r\\n?/g, '\\n');")
    edit(ts, "src/lib.ts", "return [...allowedDirectories];", "return allowedDirectories.slice();")
    edit(ts, "src/lib.ts", "const CHUNK_SIZE = 1024;", "const CHUNK_SIZE = 4096;")  # in part 2
    ts.parse(".")
    got = ts.get("src/lib.ts", "annotate", 0, None)
    assert got["status"] == "stale"
    assert {s["symbol"] for s in got["stale_symbols"]} == {"normalizeLineEndings", "getAllowedDirectories", "tailFile"}
    # One prompt for the stale notes of both parts of the file (no part asked for): the rest kept.
    out = ts.prompt("src/lib.ts", "annotate")
    assert out.promptForHostLLM is not None and out.callbackArgs is not None and out.data is not None
    assert out.data["parts"] == 1 and out.data["file_parts"] == 2 and out.data["never_described"] == 0
    assert sorted(asked_names(out.promptForHostLLM)) == ["getAllowedDirectories", "normalizeLineEndings", "tailFile"]
    assert "return allowedDirectories.slice();" in out.promptForHostLLM
    assert "export function formatSize" not in out.promptForHostLLM  # fresh ones are only named
    assert "`formatSize`" in out.promptForHostLLM and "`applyFileEdits`" in out.promptForHostLLM
    answer = {"symbols": {n: {"description": f"NEW-{n}"} for n in asked_names(out.promptForHostLLM)}}
    stored = ts.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
    assert stored.data is not None and stored.data["notes_in_file"] == len(described)
    assert stored.data.get("next_part") is None
    got = ts.get("src/lib.ts", "annotate", 0, None)
    assert got["status"] == "fresh" and set(got["content"]["symbols"]) == described
    assert got["content"]["symbols"]["normalizeLineEndings"] == {"description": "NEW-normalizeLineEndings"}
    assert got["content"]["symbols"]["formatSize"] == {"description": "NOTE-formatSize does its part."}


def test_a_renamed_typescript_function_keeps_its_note(ts: Llmem) -> None:
    annotate_all(ts, "src/lib.ts")
    edit(ts, "src/lib.ts", "export async function readFileContent(", "export async function readTextFile(")
    assert ts.parse(".")["renamed"] == {"src/lib.ts": {"readFileContent": "readTextFile"}}
    got = ts.get("src/lib.ts", "annotate", 0, None)
    assert got["status"] == "fresh" and got["renamed"] == {"readFileContent": "readTextFile"}
    assert got["content"]["symbols"]["readTextFile"] == {"description": "NOTE-readFileContent does its part."}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_rename_through_the_server_says_renamed_and_the_guide_says_so(workspace: Path, mode: str) -> None:
    (workspace / "geo.py").write_text(
        "def bearing(a, b):\n    return (b - a) % 360\n\n\ndef span(a, b):\n    return abs(b - a)\n", encoding="utf-8"
    )
    server = build_server(ServerConfig("llmem-mcp", workspace, limits=Limits()))
    async with Client(server, mode=mode) as client:
        err, out = await call(client, "generate_artifact", path=".")
        assert not err
        err, out = await call(client, "generate_prompt", path="geo.py", task="annotate")
        assert not err and sorted(asked_names(out["promptForHostLLM"])) == ["bearing", "span"]
        answer = {"symbols": {"bearing": {"description": "Bearing from a to b."}, "span": {"description": "Gap."}}}
        err, _ = await call(client, "store_llm_result", **out["callbackArgs"], result=json.dumps(answer))
        assert not err
        text = (workspace / "geo.py").read_text(encoding="utf-8")
        (workspace / "geo.py").write_text(
            text.replace("def bearing(", "def heading(").replace("abs(b - a)", "abs(a - b)"), encoding="utf-8"
        )
        err, out = await call(client, "generate_artifact", path=".")
        assert not err and out["data"]["renamed"] == {"geo.py": {"bearing": "heading"}}
        err, out = await call(client, "get_artifact", path="geo.py", kind="annotate")
        assert not err and out["data"]["renamed"] == {"bearing": "heading"}
        assert out["data"]["status"] == "stale"
        assert out["data"]["stale_symbols"] == [{"symbol": "span", "change": "changed"}]
        assert out["data"]["content"]["symbols"] == {"heading": {"description": "Bearing from a to b."}}
        err, out = await call(client, "generate_prompt", path="geo.py", task="annotate")
        assert not err and asked_names(out["promptForHostLLM"]) == ["span"]
        guide = (await client.get_prompt("tool-descriptions")).messages[0].content.text  # type: ignore[union-attr]
        assert "renamed {path: {old: new}}" in guide and "moved {'old_path#old': 'new_path#new'}" in guide
