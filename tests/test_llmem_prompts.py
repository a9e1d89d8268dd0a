"""Prompts that show whole symbols, big files annotated in parts, folder summaries built on what
is known, and one pending ticket per path and task — on this repository's own largest modules."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmem.code.artifacts import Llmem
from llmem.code.outline import DATA_KINDS, build_outline, iter_symbols
from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument, TicketError
from llmem.core.store import ArtifactStore

REPO = Path(__file__).resolve().parents[1]
BIG = ["llmem/core/serve.py", "llmem/code/artifacts.py", "llmem/core/stdio.py", "debrief_calc/calc/service.py"]


def _ts_module(classes: int = 12, methods: int = 8) -> str:
    """A TypeScript file of some 900 lines, shaped like a real server's library module."""
    out = ['import { promises as fs } from "fs";\nimport path from "path";\n\n']
    for c in range(classes):
        out.append(f"/** Handles resources of kind {c}. */\nexport class Handler{c} {{\n")
        out.append("  private cache = new Map<string, string>();\n\n")
        for m in range(methods):
            out.append(
                f"  /** Step {m}: validates and reads. */\n"
                f"  async step{m}(target: string, depth = {m}): Promise<string> {{\n"
                f"    const full = path.resolve(target);\n"
                f'    if (!full.startsWith("/srv")) {{\n      throw new Error("outside {c}.{m}");\n    }}\n'
                f'    const text = await fs.readFile(full, "utf-8");\n'
                f"    this.cache.set(full, text.slice(0, depth));\n    return text;\n  }}\n\n"
            )
        out.append("}\n\n")
    out.append("export function main(): void {\n  new Handler0();\n}\n")
    return "".join(out)


@pytest.fixture
def llmem(workspace: Path) -> Llmem:
    for rel in BIG:
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, workspace / rel)
    (workspace / "src").mkdir()
    (workspace / "src" / "lib.ts").write_text(_ts_module(), encoding="utf-8")
    (workspace / "src" / "README.md").write_text("# src\n\nThe KIWI-MARKER library of handlers.\n")
    svc = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    svc.parse(".")
    return svc


def _symbol_sources(ws: Path, rel: str) -> dict[str, str]:
    data = (ws / rel).read_bytes()
    lines = data.decode("utf-8").splitlines(keepends=True)
    return {
        s.qualified_name: "".join(lines[s.start_line - 1 : s.end_line]).rstrip()
        for s in iter_symbols(build_outline(rel, data))
        if s.kind not in DATA_KINDS  # fields, members, variables: context, not asked for notes
    }


def _answer_part(llmem: Llmem, out: Any, tag: str) -> dict[str, Any]:
    names = [line[2:] for line in out.promptForHostLLM.split("qualified names", 1)[1].splitlines() if line[:2] == "- "]
    answer = {"symbols": {n: {"description": f"{tag} {n}"} for n in names}}
    stored = llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")
    return {"names": names, "stored": stored}


@pytest.mark.parametrize("rel", [*BIG, "src/lib.ts"])
def test_annotate_parts_show_whole_symbols_and_cover_each_exactly_once(llmem: Llmem, rel: str) -> None:
    sources = _symbol_sources(llmem.ws, rel)
    first = llmem.prompt(rel, "annotate")
    assert first.data is not None
    parts = first.data["parts"]
    covered: list[str] = []
    for k in range(1, parts + 1):
        out = llmem.prompt(rel, "annotate", part=k)
        assert out.data is not None and out.promptForHostLLM is not None
        prompt = out.promptForHostLLM
        assert len(prompt) <= llmem.limits.answer_chars - 3_000
        assert "omitted" not in prompt and "truncated" not in prompt
        names = [line[2:] for line in prompt.split("qualified names", 1)[1].splitlines() if line[:2] == "- "]
        assert names and len(names) == out.data["symbols"]
        for name in names:
            body = sources[name]
            # Every symbol asked about is shown whole, or (a container too big for one prompt) by
            # its head while each of its children is shown whole in some part.
            assert body in prompt or sources[name].splitlines()[0].strip()[:60] in prompt, (rel, k, name)
        if parts > 1:
            assert f"part {k} of {parts}" in prompt
        covered += names
    assert sorted(covered) == sorted(sources), rel
    assert len(covered) == len(set(covered))


def test_parts_merge_into_one_artifact_and_each_answer_names_the_next(llmem: Llmem) -> None:
    rel = "src/lib.ts"
    out = llmem.prompt(rel, "annotate")
    assert out.data is not None and out.data["parts"] > 1 and out.data["part"] == 1
    parts = out.data["parts"]
    described: list[str] = []
    for k in range(1, parts + 1):
        out = llmem.prompt(rel, "annotate")  # no part given: the first one still to do
        assert out.data is not None and out.data["part"] == k
        got = _answer_part(llmem, out, f"p{k}")
        described += got["names"]
        stored = got["stored"]
        assert stored.data["part"] == k
        assert stored.data["next_part"] == (k + 1 if k < parts else None)
        if k < parts:
            assert f"part={k + 1}" in stored.nextAction
    notes = llmem.get(rel, "annotate", 0, 100_000)
    text = notes["content"] if not notes["paged"] else None
    assert text is not None and set(text["symbols"]) == set(described) == set(_symbol_sources(llmem.ws, rel))


PART_WRITER = r"""
import json, sys
from pathlib import Path
from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
ws, ticket, names = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
answer = {"symbols": {n: {"description": "from " + ticket} for n in names}}
svc.store_result(ticket, "src/lib.ts", "annotate", json.dumps(answer), "t")
"""


def test_parts_stored_by_two_processes_at_once_lose_nothing(llmem: Llmem) -> None:
    rel = "src/lib.ts"
    parts = llmem.prompt(rel, "annotate").data["parts"]  # type: ignore[index]
    jobs = []
    for k in range(1, parts + 1):
        out = llmem.prompt(rel, "annotate", part=k)
        assert out.promptForHostLLM is not None and out.callbackArgs is not None
        names = [ln[2:] for ln in out.promptForHostLLM.split("qualified names", 1)[1].splitlines() if ln[:2] == "- "]
        jobs.append((out.callbackArgs["ticket"], names))
    procs = [
        subprocess.Popen([sys.executable, "-c", PART_WRITER, str(llmem.ws), t, json.dumps(n)], cwd=REPO)
        for t, n in jobs
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    notes = llmem.get(rel, "annotate", 0, 100_000)["content"]
    assert set(notes["symbols"]) == {n for _, names in jobs for n in names}


def test_a_file_note_is_kept(llmem: Llmem) -> None:
    out = llmem.prompt("llmem/core/stdio.py", "annotate", part=1)
    assert out.promptForHostLLM is not None and '"file"' in out.promptForHostLLM
    answer = {"file": {"description": "The stdio transport, served from the event loop."}, "symbols": {}}
    llmem.store_result(**out.callbackArgs, result=json.dumps(answer), model="t")  # type: ignore[arg-type]
    got = llmem.get("llmem/core/stdio.py", "annotate", 0, None)
    assert got["content"]["file"] == {"description": "The stdio transport, served from the event loop."}


def test_file_prompts_show_whole_symbols_never_cut(llmem: Llmem) -> None:
    sources = _symbol_sources(llmem.ws, "llmem/core/serve.py")
    for task in ("summarize", "document", "test-plan"):
        prompt = llmem.prompt("llmem/core/serve.py", task).promptForHostLLM
        assert prompt is not None and "omitted" not in prompt
        shown = [n for n, body in sources.items() if body in prompt]
        assert shown, task
        assert len(prompt) <= llmem.limits.answer_chars - 3_000


def test_folder_summary_prompt_carries_notes_docs_and_the_readme(llmem: Llmem) -> None:
    out = llmem.prompt("src/lib.ts", "annotate", part=1)
    _answer_part(llmem, out, "ZEBRA-NOTE")
    prompt = llmem.prompt("src", "summarize").promptForHostLLM
    assert prompt is not None
    assert "KIWI-MARKER" in prompt  # the README
    assert "ZEBRA-NOTE" in prompt  # the notes just stored
    out = llmem.prompt("llmem/core/stdio.py", "summarize")
    llmem.store_result(**out.callbackArgs, result="# stdio\nPELICAN summary.", model="t")  # type: ignore[arg-type]
    llm_prompt = llmem.prompt("llmem/core", "summarize").promptForHostLLM
    assert llm_prompt is not None and "PELICAN summary." in llm_prompt
    # Files without notes show their doc comments.
    assert "Start the server" in llm_prompt or "docs" in llm_prompt or "doc comments" in llm_prompt


def test_one_pending_ticket_per_path_and_task_and_cancel(llmem: Llmem) -> None:
    first = llmem.prompt("llmem/core/stdio.py", "summarize")
    second = llmem.prompt("llmem/core/stdio.py", "summarize")
    assert second.data is not None and second.data["superseded_tickets"] == [first.callbackArgs["ticket"]]  # type: ignore[index]
    pending = llmem.list("llmem", None, "pending", 50, None)
    tickets = [k["ticket"] for f in pending["folders"] for e in f["entries"] for k in e["kinds"]]
    assert tickets == [second.callbackArgs["ticket"]]  # type: ignore[index]
    with pytest.raises(TicketError) as old:
        llmem.store_result(**first.callbackArgs, result="late", model="t")  # type: ignore[arg-type]
    assert "superseded" in old.value.message
    assert llmem.cancel(None, "llmem/core/stdio.py", None) == {
        "cancelled": 1,
        "tickets": [second.callbackArgs["ticket"]],
    }  # type: ignore[index]
    assert llmem.cancel(None, "llmem/core/stdio.py", None)["cancelled"] == 0
    with pytest.raises(TicketError):
        llmem.store_result(**second.callbackArgs, result="late", model="t")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        llmem.cancel(None, None, None)
    # Different parts of one file are different prompts: both stay pending.
    one = llmem.prompt("src/lib.ts", "annotate", part=1)
    two = llmem.prompt("src/lib.ts", "annotate", part=2)
    assert "superseded_tickets" not in (two.data or {}) and one.callbackArgs != two.callbackArgs
