"""Folder summary prompts that drop nothing silently, on copies of this repository's own code:
every note is shown or counted with the call that reads it, the most important first, long
notes cut at a word with "…", and a folder's prompt built on its subfolders' summaries."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from llmem.code.artifacts import Llmem
from llmem.code.outline import build_outline, iter_symbols
from llmem.code.tasks import cut_at_word
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.test_llmem_notes_follow import annotate_all

REPO = Path(__file__).resolve().parents[1]
BIG = ["llmem/core/store.py", "llmem/code/artifacts.py", "llmem/code/search.py"]
LONG = (
    "It reads the artifact, checks it against the file it was made from, and answers with what the "
    "caller asked for; on the way it keeps the store's locks in one order so that two processes never "
    "wait on each other, and it says what it left out when the answer would be too long to send whole."
)


@pytest.fixture
def llmem(workspace: Path) -> Llmem:
    shutil.copytree(REPO / "llmem", workspace / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    (workspace / "big").mkdir()
    for rel in BIG:
        shutil.copy2(REPO / rel, workspace / "big" / Path(rel).name)
    (workspace / "one").mkdir()
    shutil.copy2(REPO / "llmem/core/store.py", workspace / "one" / "store.py")
    svc = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    svc.parse(".")
    return svc


def _left_out(prompt: str, path: str) -> int:
    found = re.search(
        rf"\((\d+) (?:more )?notes of {re.escape(path)} left out for size: read them with "
        rf"get_artifact\(path='{re.escape(path)}', kind='annotate'\)\)",
        prompt,
    )
    return int(found.group(1)) if found else 0


def _shown(prompt: str, path: str) -> list[str]:
    section = (
        prompt.split(f"### {path} (notes)\n", 1)[1].split("\n### ", 1)[0] if f"### {path} (notes)" in prompt else ""
    )
    return re.findall(r"^- `([^`]+)`: ", section, re.MULTILINE)


def test_a_folder_prompt_with_every_note_fitting_carries_them_all_whole(llmem: Llmem) -> None:
    described = annotate_all(llmem, "one/store.py", note=lambda n: f"NOTE-{n}: keeps one part of the store.")
    assert len(described) >= 33
    out = llmem.prompt("one", "summarize")
    prompt = out.promptForHostLLM
    assert prompt is not None
    for name in described:
        assert f"- `{name}`: NOTE-{name}: keeps one part of the store." in prompt
    assert "left out" not in prompt
    assert len(prompt) <= llmem.notes.callback.prompt_chars


def test_a_folder_prompt_too_big_for_all_notes_counts_what_it_left_out(llmem: Llmem) -> None:
    described = {rel: annotate_all(llmem, f"big/{Path(rel).name}", note=lambda n: f"{n}: {LONG}") for rel in BIG}
    out = llmem.prompt("big", "summarize")
    prompt = out.promptForHostLLM
    assert prompt is not None and len(prompt) <= llmem.notes.callback.prompt_chars
    assert "prompt truncated" not in prompt
    total_left = 0
    for rel, names in described.items():
        key = f"big/{Path(rel).name}"
        shown, left = _shown(prompt, key), _left_out(prompt, key)
        assert shown, key  # every file gets some of its notes: the budget is shared fairly
        assert set(shown) <= names and len(shown) + left == len(names), key
        total_left += left
        # The most important first: no public top-level class or function is left out for a
        # private or nested one (constants come after code).
        outline = build_outline(key, (llmem.ws / key).read_bytes())
        tops = {s.qualified_name for s in outline.symbols if not s.name.startswith("_") and s.kind != "constant"}
        minor = {s.qualified_name for s in iter_symbols(outline) if s.name.startswith("_") or "." in s.qualified_name}
        if set(shown) & (minor - tops):
            assert tops & names <= set(shown), key
        for name in shown:  # a long note is cut at a word, marked
            line = next(ln for ln in prompt.splitlines() if ln.startswith(f"- `{name}`: "))
            text = line.split(": ", 1)[1]
            assert text == f"{name}: {LONG}" or (
                text.endswith("…") and f"{name}: {LONG}".startswith(text[:-1].rstrip())
            )
    assert total_left > 0


def test_a_long_note_is_cut_at_a_word_with_a_marker(llmem: Llmem) -> None:
    words = " ".join(f"word{i}" for i in range(300))
    annotate_all(llmem, "one/store.py", note=lambda n: words if n == "ArtifactStore" else "short.")
    prompt = llmem.prompt("one", "summarize").promptForHostLLM
    assert prompt is not None
    line = next(ln for ln in prompt.splitlines() if ln.startswith("- `ArtifactStore`: "))
    text = line.split(": ", 1)[1]
    assert text.endswith("…") and len(text) <= 400
    kept = text[:-1]
    assert words.startswith(kept) and words[len(kept)] == " "  # cut between two words


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short enough.", 40, "Short enough."),
        ("First sentence here. Second sentence goes on and on.", 40, "First sentence here. …"),
        ("one two three four five six seven", 20, "one two three four…"),
        ("  spaced\n  over lines  ", 40, "spaced over lines"),
        ("averyveryverylongwordwithoutspaces", 10, "averyvery…"),
    ],
)
def test_cut_at_word(text: str, limit: int, expected: str) -> None:
    assert cut_at_word(text, limit) == expected
    assert len(cut_at_word(text, limit)) <= limit + 1


def _summarize(llmem: Llmem, path: str, text: str) -> None:
    out = llmem.prompt(path, "summarize")
    assert out.callbackArgs is not None
    assert llmem.store_result(**out.callbackArgs, result=text, model="t").status == "success"


def test_a_parent_folder_prompt_uses_its_subfolders_summaries(llmem: Llmem) -> None:
    _summarize(llmem, "llmem/code/outline", "# Outlines\nOTTER: parsers that outline source files.")
    code = llmem.prompt("llmem/code", "summarize").promptForHostLLM
    assert code is not None
    assert "- llmem/code/outline/: Outlines" in code and "OTTER: parsers that outline source files." in code
    assert "no summary yet" not in code.split("llmem/code/outline/", 1)[1].split("\n", 1)[0]
    # Two levels up, with no summary of llmem/code yet: the one below it is used, and said so.
    top = llmem.prompt("llmem", "summarize").promptForHostLLM
    assert top is not None
    assert "- llmem/code/: no summary of its own; 1 folder(s) below it have one" in top
    assert "- `llmem/code/outline`: # Outlines OTTER: parsers that outline source files." in top
    assert re.search(
        r"- llmem/core/: \d+ file\(s\); no summary yet \(generate_prompt\('llmem/core', 'summarize'\)", top
    )
    # Once the child has its own, the parent shows that one.
    _summarize(llmem, "llmem/code", "# The code memory\nBADGER: outlines, notes, search.")
    top = llmem.prompt("llmem", "summarize").promptForHostLLM
    assert top is not None
    assert "- llmem/code/: The code memory" in top and "BADGER: outlines, notes, search." in top
    root = llmem.prompt(".", "summarize").promptForHostLLM
    assert root is not None and "- llmem/: no summary of its own; 1 folder(s) below it have one" in root
