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
    # The contents line is the summary's first sentence of substance, not its heading.
    assert "- llmem/code/outline/: OTTER: parsers that outline source files." in code
    assert "no summary yet" not in code.split("llmem/code/outline/", 1)[1].split("\n", 1)[0]
    # Two levels up, with no summary of llmem/code yet: the one below it is used, and said so.
    top = llmem.prompt("llmem", "summarize").promptForHostLLM
    assert top is not None
    assert "- llmem/code/: no summary of its own; 1 folder(s) below it have a summary" in top
    assert "- `llmem/code/outline`: # Outlines OTTER: parsers that outline source files." in top
    assert re.search(
        r"- llmem/core/: \d+ file\(s\); no summary yet \(generate_prompt\('llmem/core', 'summarize'\)", top
    )
    # Once the child has its own, the parent shows that one.
    _summarize(llmem, "llmem/code", "# The code memory\nBADGER: outlines, notes, search.")
    top = llmem.prompt("llmem", "summarize").promptForHostLLM
    assert top is not None
    assert "- llmem/code/: BADGER: outlines, notes, search." in top
    root = llmem.prompt(".", "summarize").promptForHostLLM
    assert root is not None and "- llmem/: no summary of its own; 1 folder(s) below it have a summary" in root


def test_a_folder_prompt_draws_on_the_notes_below_a_subfolder_with_no_summary(llmem: Llmem) -> None:
    # The servers trial: src/git's prompt had none of the notes of src/git/src/mcp_server_git/server.py.
    described = annotate_all(llmem, "one/store.py", note=lambda n: f"NOTE-{n}: keeps one part.")
    root = llmem.prompt(".", "summarize").promptForHostLLM
    assert root is not None and len(root) <= llmem.notes.callback.prompt_chars
    assert "- one/: no summary of its own; 1 file(s) below it have notes or a summary" in root
    section = root.split("### one/ (summaries and notes from below it)\n", 1)[1].split("\n### ", 1)[0]
    shown = re.findall(r"^- `one/store\.py: ([^`]+)`: NOTE-", section, re.MULTILINE)
    left = re.search(
        r"\((\d+) more summaries and notes from below it of one/ left out for size: read them with "
        r"get_artifact\(path='<file>', kind='annotate'\)",
        section,
    )
    assert shown and set(shown) <= described
    assert len(shown) + (int(left.group(1)) if left else 0) == len(described)
    # The most important first: the public class before any private helper.
    assert shown[0] == "ArtifactStore" or not shown[0].startswith("_")
    assert "no summary yet" not in root.split("- one/", 1)[1].split("\n", 1)[0]


def test_a_long_summary_is_whole_when_the_budget_has_room(llmem: Llmem) -> None:
    # Room in the budget: a folder of a few files beside its subfolder (the real llmem/code has
    # dozens, whose outlines fill the prompt as the package grows).
    code = llmem.ws / "llmem" / "code"
    for extra in sorted(code.glob("*.py"))[6:]:
        extra.unlink()
    sentences = [f"Sentence {i} tells what part {i} of the outline parsers does for the reader." for i in range(40)]
    long = "# llmem/code/outline\n\n" + "\n".join(sentences) + "\nLAST: serve and call_tool are at the end."
    assert 3_000 < len(long) < 4_000
    _summarize(llmem, "llmem/code/outline", long)
    prompt = llmem.prompt("llmem/code", "summarize").promptForHostLLM
    assert prompt is not None
    assert "LAST: serve and call_tool are at the end." in prompt and "cut here" not in prompt
    assert "- llmem/code/outline/: Sentence 0 tells what part 0 of the outline parsers does for the reader." in prompt


def test_a_summary_or_readme_cut_for_size_ends_at_a_sentence_and_names_the_call() -> None:
    from llmem.code.tasks import FolderEntry, folder_summary_prompt

    long = " ".join(f"Sentence {i} of the child summary." for i in range(400))
    readme = "\n".join(f"Readme line {i} about the package." for i in range(400))
    entry = FolderEntry(
        "pkg/sub", folder=True, summary=long, read_with="get_artifact(path='pkg/sub', kind='summarize')"
    )
    prompt = folder_summary_prompt("pkg", [entry], readme, limit=6_000, readme_path="pkg/README.md")
    assert len(prompt) <= 6_000
    summary = prompt.split("### pkg/sub/ (its summary)\n", 1)[1]
    assert re.search(
        r"child summary\. …\n\[… the rest is left out for size: get_artifact\(path='pkg/sub', "
        r"kind='summarize'\) reads it whole\]",
        summary,
    )
    head = prompt.split("## README\n", 1)[1].split("## Contents", 1)[0]
    assert re.search(
        r"about the package\. …\n\[… the rest is left out for size: "
        r"get_artifact\(path='pkg/README\.md', kind='source'\) reads it whole\]",
        head,
    )
    # Shared by need: both got a fair part of the room, not a fixed small cap.
    assert len(summary) > 1_500 and len(head) > 1_500


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("# src/git/src\n\nThe package of the git server. It wires tools.", "The package of the git server."),
        ("# Title\n\n---\n**Bold** start of [the text](http://x) here", "Bold start of the text here"),
        ("# Only a heading", "Only a heading"),
        ("```\ncode\n```\nAfter the fence. More.", "After the fence."),
    ],
)
def test_first_sentence(markdown: str, expected: str) -> None:
    from llmem.code.tasks import first_sentence

    assert first_sentence(markdown) == expected
