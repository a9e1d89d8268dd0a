"""The four LLM tasks of llmem: how their prompts are built and their answers checked.

Prompts carry an outline and capped excerpts, never a whole large file, and state the answer
format. Validators turn the host's answer into the artifact's content or raise
:class:`ResultInvalid` saying exactly what to fix.
"""

from __future__ import annotations

import json
import re
from typing import Any

from llmem.errors import ResultInvalid
from llmem.outline import Outline, Symbol, iter_symbols

__all__ = [
    "FILE_TASKS",
    "FOLDER_TASKS",
    "TASKS",
    "annotate_prompt",
    "file_prompt",
    "folder_summary_prompt",
    "validate_annotate",
    "validate_markdown",
]

TASKS = ("annotate", "summarize", "document", "test-plan")
FILE_TASKS = frozenset(TASKS)
FOLDER_TASKS = frozenset({"summarize"})

EXCERPT_CHARS = 6_000
OUTLINE_CHARS = 6_000
MARKDOWN_MAX_CHARS = 20_000

_INSTRUCTIONS = {
    "summarize": (
        "Summarise what this file is for and how it works, for a developer new to the codebase: "
        "its responsibility, its main symbols and how they fit together, notable dependencies. "
        "Answer in Markdown, at most about 300 words."
    ),
    "document": (
        "Write reference documentation for this file in Markdown: a short overview, then one section per "
        "public symbol with its purpose, parameters, return value and errors."
    ),
    "test-plan": (
        "Write a test plan in Markdown: for each public symbol a heading with the symbol's qualified name and "
        "a bulleted list of concrete test cases (normal cases, edge cases, error cases)."
    ),
}


def _symbol_line(sym: Symbol, depth: int) -> str:
    doc = f" — {sym.doc.splitlines()[0][:120]}" if sym.doc else ""
    return f"{'  ' * depth}- {sym.kind} `{sym.qualified_name}` (lines {sym.start_line}-{sym.end_line}): {sym.signature}{doc}"


def outline_text(outline: Outline, limit: int = OUTLINE_CHARS) -> str:
    lines: list[str] = []
    if outline.imports:
        mods = sorted({i.module for i in outline.imports})
        lines.append("Imports: " + ", ".join(mods[:40]) + (" …" if len(mods) > 40 else ""))

    def walk(symbols: list[Symbol], depth: int) -> None:
        for s in symbols:
            lines.append(_symbol_line(s, depth))
            walk(s.children, depth + 1)

    walk(outline.symbols, 0)
    if outline.mode == "fallback":
        lines.append(f"(No symbol outline: {outline.reason or 'unsupported language'}.)")
    text = "\n".join(lines) or "(no symbols)"
    return text if len(text) <= limit else text[: limit - 40] + "\n… (outline truncated)"


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-limit // 3 :]
    return f"{head}\n\n[… {len(text) - len(head) - len(tail)} characters omitted …]\n\n{tail}"


def _header(path: str, outline: Outline) -> str:
    return f"File: {path}\nLanguage: {outline.language or 'unknown'}; {outline.line_count} lines.\n"


def file_prompt(task: str, path: str, outline: Outline, source_text: str) -> str:
    lang = outline.language or ""
    return (
        f"{_INSTRUCTIONS[task]}\n\n{_header(path, outline)}\n## Outline\n{outline_text(outline)}\n\n"
        f"## Source excerpt\n```{lang}\n{excerpt(source_text)}\n```\n\n"
        "Answer with the Markdown only (no preamble)."
    )


def annotate_prompt(path: str, outline: Outline, source_text: str) -> str:
    names = [s.qualified_name for s in iter_symbols(outline)]
    listed = "\n".join(f"- {n}" for n in names[:300])
    schema = (
        '{"symbols": {"<qualified name>": {"description": "<what it does, one or two sentences>", '
        '"inputs": "<optional: parameters and their meaning>", "outputs": "<optional: return value / effects>"}}}'
    )
    return (
        "Describe each symbol of this file for a developer: what it does, its inputs and its outputs.\n\n"
        f"{_header(path, outline)}\n## Outline\n{outline_text(outline)}\n\n"
        f"## Source excerpt\n```{outline.language or ''}\n{excerpt(source_text)}\n```\n\n"
        f"## Answer format\nAnswer with JSON only, exactly of this shape:\n{schema}\n"
        "Keys must be qualified names from this list (describe as many as you can):\n"
        f"{listed}\n"
    )


def folder_summary_prompt(path: str, entries: list[dict[str, Any]], limit: int = 12_000) -> str:
    """``entries``: one per file or subfolder, with its outline symbols and/or stored summary."""
    parts: list[str] = []
    used = 0
    omitted = 0
    for e in entries:
        block = f"### {e['path']}{'/' if e.get('folder') else ''}\n"
        if e.get("summary"):
            block += excerpt(str(e["summary"]), 800) + "\n"
        elif e.get("symbols"):
            block += "Symbols: " + ", ".join(e["symbols"][:30]) + ("\n" if len(e["symbols"]) <= 30 else " …\n")
        elif e.get("note"):
            block += str(e["note"]) + "\n"
        if used + len(block) > limit:
            omitted += 1
            continue
        parts.append(block)
        used += len(block)
    tail = f"\n({omitted} more entries omitted for size.)\n" if omitted else ""
    return (
        "Summarise this folder of a codebase for a developer new to it: what it is for, how its files and "
        "subfolders divide the work, and where to start reading. Answer in Markdown, at most about 400 words.\n\n"
        f"Folder: {path}\n\n## Contents (outlines and existing summaries)\n" + "\n".join(parts) + tail
    )


def validate_markdown(result: str, max_chars: int = MARKDOWN_MAX_CHARS) -> str:
    text = result.strip()
    if not text:
        raise ResultInvalid("the answer is empty", details={"field": "result", "rule": "non-empty"})
    if len(text) > max_chars:
        raise ResultInvalid(
            f"the answer is {len(text)} characters; at most {max_chars} are kept for this task — shorten it",
            details={"field": "result", "rule": "max_length", "limit": max_chars},
        )
    return text


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.DOTALL)


def validate_annotate(result: str, known: list[str]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Return (notes by symbol, symbols left undescribed) or raise ResultInvalid."""
    text = result.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultInvalid(
            f"the answer is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            'answer with JSON only: {"symbols": {...}}',
            details={"field": "result", "rule": "json"},
        ) from None
    if not isinstance(value, dict) or not isinstance(value.get("symbols"), dict):
        raise ResultInvalid(
            'the answer must be a JSON object with a "symbols" object: {"symbols": {"<name>": {"description": "..."}}}',
            details={"field": "result", "rule": "shape"},
        )
    known_set = set(known)
    unknown = sorted(k for k in value["symbols"] if k not in known_set)
    if unknown:
        raise ResultInvalid(
            f"{len(unknown)} key(s) are not symbols of the current outline: {', '.join(unknown[:20])}; "
            "use the qualified names listed in the prompt",
            details={"field": "result.symbols", "rule": "known-symbol", "unknown": unknown[:100]},
        )
    notes: dict[str, dict[str, str]] = {}
    problems: list[str] = []
    for name, note in value["symbols"].items():
        if not isinstance(note, dict):
            problems.append(f"{name}: must be an object with a description")
            continue
        desc = note.get("description")
        if not isinstance(desc, str) or not desc.strip():
            problems.append(f"{name}: 'description' must be a non-empty string")
            continue
        clean = {"description": desc.strip()}
        for opt in ("inputs", "outputs"):
            if opt in note:
                if not isinstance(note[opt], str):
                    problems.append(f"{name}: '{opt}' must be a string")
                    continue
                clean[opt] = note[opt].strip()
        extra = sorted(set(note) - {"description", "inputs", "outputs"})
        if extra:
            problems.append(f"{name}: unexpected field(s) {', '.join(extra)}")
        notes[name] = clean
    if problems:
        raise ResultInvalid(
            "some notes are malformed: " + "; ".join(problems[:10]),
            details={"field": "result.symbols", "rule": "note-shape", "problems": problems[:50]},
        )
    if not notes:
        raise ResultInvalid("the answer describes no symbol", details={"field": "result.symbols", "rule": "non-empty"})
    missing = [n for n in known if n not in notes]
    return notes, missing
