"""The four LLM tasks of llmem: how their prompts are built and their answers checked.

Prompts carry an outline and capped excerpts, never a whole large file, and state the answer
format. Validators turn the host's answer into the artifact's content or raise
:class:`ResultInvalid` saying exactly what to fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from llmem.code.outline import DATA_KINDS, Outline, Symbol, iter_symbols
from llmem.core.errors import InvalidArgument, ResultInvalid

__all__ = [
    "FILE_TASKS",
    "FOLDER_TASKS",
    "TASKS",
    "FolderEntry",
    "SourceUnit",
    "annotate_parts",
    "annotate_prompt",
    "cut_at_word",
    "cut_block",
    "file_prompt",
    "first_sentence",
    "folder_summary_prompt",
    "validate_annotate",
    "validate_markdown",
]

TASKS = ("annotate", "summarize", "document", "test-plan")
FILE_TASKS = frozenset(TASKS)
FOLDER_TASKS = frozenset({"summarize"})

OUTLINE_CHARS = 5_000
#: Source shown by one annotate part (whole symbols), and by a summarize/document/test-plan prompt.
ANNOTATE_SOURCE_CHARS = 11_000
FILE_SOURCE_CHARS = 7_000
MARKDOWN_MAX_CHARS = 20_000
MARKDOWN_RULE = "Answer with the Markdown only (no preamble)."

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
    doc = f" — {cut_at_word(sym.doc.splitlines()[0], 120)}" if sym.doc else ""
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
    return _cut_at_line("\n".join(lines) or "(no symbols)", limit, "… (outline cut here for size)")


def _cut_at_line(text: str, limit: int, marker: str) -> str:
    """``text`` within ``limit`` characters, cut only at a line end, never inside a line."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, max(0, limit - len(marker) - 1))
    return (text[:end] if end > 0 else "") + "\n" + marker


@dataclass(frozen=True)
class SourceUnit:
    """Whole lines of the source shown to the model, and the symbols they let it describe."""

    start_line: int
    end_line: int
    names: tuple[str, ...]  # qualified names this unit covers (a symbol and its descendants)
    text: str  # what the prompt shows: the lines, or a container's head when its body is too big


def _descendants(sym: Symbol) -> list[str]:
    """The names a unit asks notes for: the symbol and its descendants, data members left out
    (:data:`DATA_KINDS`: fields, attributes, enum members and variables are shown for context,
    and their class's or function's note covers them)."""
    out = [sym.qualified_name]
    for child in sym.children:
        if child.kind not in DATA_KINDS:
            out.extend(_descendants(child))
    return out


def _units(symbols: list[Symbol], lines: list[str], budget: int) -> list[SourceUnit]:
    """Units in source order: a symbol whole when it fits ``budget``; else its head (signature,
    doc, its children's signatures) and then each child as units of its own. No unit cuts a line."""
    out: list[SourceUnit] = []
    for sym in symbols:
        if sym.kind in DATA_KINDS:
            continue  # a data member: in its container's head or source, not a unit of its own
        body = "".join(lines[sym.start_line - 1 : sym.end_line])
        if len(body) <= budget:
            out.append(SourceUnit(sym.start_line, sym.end_line, tuple(_descendants(sym)), body))
            continue
        first_line = lines[sym.start_line - 1].rstrip() if sym.start_line <= len(lines) else sym.signature
        head = [f"{first_line}  … (lines {sym.start_line}-{sym.end_line}; its members are shown one by one)"]
        if sym.doc:
            head.append(f"    {cut_at_word(sym.doc.splitlines()[0], 200)}")
        head.extend(f"    {c.signature}  (lines {c.start_line}-{c.end_line})" for c in sym.children[:60])
        out.append(SourceUnit(sym.start_line, sym.start_line, (sym.qualified_name,), "\n".join(head) + "\n"))
        if any(c.kind not in DATA_KINDS for c in sym.children):
            out.extend(_units(sym.children, lines, budget))
        elif len(body) > budget:
            # One body larger than any prompt, with nothing inside to split on: its first lines.
            shown = _cut_at_line(body, budget, "    … (the rest of this body is left out for size)")
            out[-1] = SourceUnit(sym.start_line, sym.end_line, (sym.qualified_name,), shown + "\n")
    return out


def annotate_parts(
    outline: Outline, source_text: str, budget: int = ANNOTATE_SOURCE_CHARS, *, data_when_alone: bool = True
) -> list[list[SourceUnit]]:
    """The file's symbols as parts of whole units, each part's source within ``budget``; the
    same source always gives the same parts.

    A file of nothing but data (a settings module, a file of constants) has no class or function
    whose note would cover its variables: with ``data_when_alone`` each top-level one is a unit
    of its own, so annotating such a file asks for them rather than finding nothing to ask."""
    lines = source_text.splitlines(keepends=True)
    parts: list[list[SourceUnit]] = []
    current: list[SourceUnit] = []
    used = 0
    units = _units(outline.symbols, lines, budget)
    if not units and data_when_alone:
        units = [
            SourceUnit(s.start_line, s.end_line, (s.qualified_name,),
                       _cut_at_line("".join(lines[s.start_line - 1 : s.end_line]), budget, "… (cut here for size)"))
            for s in outline.symbols
        ]  # fmt: skip
    for unit in units:
        size = len(unit.text) + 80
        if current and used + size > budget:
            parts.append(current)
            current, used = [], 0
        current.append(unit)
        used += size
    if current:
        parts.append(current)
    return parts


def chosen_units(
    outline: Outline, source_text: str, wanted: list[str], budget: int = ANNOTATE_SOURCE_CHARS, *, fill: bool = True
) -> tuple[list[SourceUnit], list[str], list[str]]:
    """The units and names of an annotate prompt for the ``wanted`` symbols (qualified names, or a
    plain name one symbol has) and their members: as many as one part's source ``budget`` holds,
    taken in the given order (the first always; one that does not fit is left, a later smaller one
    taken) and shown in source order; the third list names, in the given order, what is left for
    the next prompt (one name a unit, so asking for them asks
    for the rest; with ``fill`` False, every unit). A field or other data member is asked alone,
    shown with its class's head (or by its class's source when that is asked too). A name the outline does not have is refused with the near names."""
    every = {s.qualified_name: s for s in iter_symbols(outline)}
    chosen: list[str] = []
    for name in wanted:
        if name in every:
            chosen.append(name)
            continue
        plain = sorted({q for q, s in every.items() if s.name == name})
        if len(plain) == 1:
            chosen.append(plain[0])
            continue
        import difflib

        near = plain or difflib.get_close_matches(name, list(every), n=5, cutoff=0.5)
        raise InvalidArgument(
            f"symbols: {name!r} is not one symbol of the file's outline"
            + (f"; did you mean {', '.join(near)}?" if near else ""),
            details={"field": "symbols", "rule": "qualified names of the outline's symbols",
                     "close_matches": near},
            next_action="get_artifact(path, symbol=...) or get_artifact(path) lists the file's qualified names.",
        )  # fmt: skip
    lines = source_text.splitlines(keepends=True)
    chosen = list(dict.fromkeys(chosen))
    # Each chosen symbol's own lines (not its class's); one inside another chosen is in it.
    tops = [
        every[c] for c in chosen if not _within(c, [o for o in chosen if o != c and every[o].kind not in DATA_KINDS])
    ]
    candidates = [u for sym in tops for u in _symbol_units(sym, every, lines, budget)]
    taken: list[SourceUnit] = []
    used = 0
    left: list[str] = []
    for unit in candidates:
        size = len(unit.text) + 80
        if fill and taken and used + size > budget:
            left.append(unit.names[0])  # a later, smaller one may still fit: the next prompt asks this
            continue
        taken.append(unit)
        used += size
    left = list(dict.fromkeys(left))
    taken.sort(key=lambda u: u.start_line)
    # a data member inside a class asked too is shown by that class's source: asked by name there
    inside = [c for c in chosen if every[c].kind in DATA_KINDS and every[c] not in tops
              and any(u.start_line <= every[c].start_line and every[c].end_line <= u.end_line for u in taken)]  # fmt: skip
    names = list(dict.fromkeys([n for u in taken for n in u.names] + inside))
    return taken, names, left


def _symbol_units(sym: Symbol, every: dict[str, Symbol], lines: list[str], budget: int) -> list[SourceUnit]:
    """The units of one chosen symbol: its own (:func:`_units`), or for a data member its lines
    under the first line of what holds it (its class's head, for context)."""
    if sym.kind not in DATA_KINDS:
        return _units([sym], lines, budget)
    own = _cut_at_line("".join(lines[sym.start_line - 1 : sym.end_line]), budget // 2, "    … (cut here for size)")
    owner = every.get(sym.qualified_name.rpartition(".")[0])
    head = ""
    if owner is not None and owner.start_line <= len(lines) and owner.start_line < sym.start_line:
        head = f"{lines[owner.start_line - 1].rstrip()}  … (lines {owner.start_line}-{owner.end_line}; this member:)\n"
    return [SourceUnit(sym.start_line, sym.end_line, (sym.qualified_name,), head + own)]


def _within(name: str, chosen: list[str]) -> bool:
    return any(name == c or name.startswith(c + ".") for c in chosen)


def _shown_source(units: list[SourceUnit], language: str) -> str:
    blocks = []
    for u in units:
        names = ", ".join(f"`{n}`" for n in u.names[:12]) + (" …" if len(u.names) > 12 else "")
        blocks.append(f"### Lines {u.start_line}-{u.end_line} ({names})\n```{language}\n{u.text.rstrip()}\n```")
    return "\n\n".join(blocks)


def _header(path: str, outline: Outline) -> str:
    return f"File: {path}\nLanguage: {outline.language or 'unknown'}; {outline.line_count} lines.\n"


def file_prompt(
    task: str, path: str, outline: Outline, source_text: str, around: str = "", changed_code: str = ""
) -> tuple[str, str]:
    """Summarise / document / test-plan: the outline, then whole symbols in source order while they
    fit; ``around`` (a section on what no longer resolves in the file) and ``changed_code`` (what
    the notes name that changed) after them. Returned as the body and the answer's rules, which
    the size cap never cuts (:class:`llmem.core.callback.PreparedPrompt`'s ``tail``)."""
    lang = outline.language or ""
    units = annotate_parts(outline, source_text, FILE_SOURCE_CHARS, data_when_alone=False)
    shown = units[0] if units else []
    rest = sum(len(p) for p in units[1:])
    lines = source_text.splitlines(keepends=True)
    # the module head runs to the first symbol with a unit (module variables stay in the head)
    first = next((s.start_line for s in outline.symbols if s.kind not in DATA_KINDS), len(lines) + 1)
    head = _cut_at_line("".join(lines[: first - 1]), 1_500, "… (module head cut here)") if first > 1 else ""
    if not units:  # nothing but data (or nothing): the file itself, as far as it fits
        head = _cut_at_line(source_text, FILE_SOURCE_CHARS, "… (the rest of the file is left out for size)")
    body = (f"```{lang}\n{head.rstrip()}\n```\n\n" if head.strip() else "") + _shown_source(shown, lang)
    tail = (
        f"\n\n({rest} more symbol(s) are listed in the outline above; their bodies are left out for size.)"
        if rest
        else ""
    )
    return (
        f"{_INSTRUCTIONS[task]}\n\n{_header(path, outline)}\n## Outline\n{outline_text(outline)}\n\n"
        f"## Source (whole symbols)\n{body}{tail}\n{around}\n{changed_code}"
    ), f"\n{MARKDOWN_RULE}"


def annotate_prompt(
    path: str,
    outline: Outline,
    units: list[SourceUnit],
    part: int,
    parts: int,
    names: list[str] | None = None,
    described: list[str] | None = None,
    changed_code: str = "",
    file_note_asked: bool = False,
    around: str = "",
    previous: str = "",
) -> tuple[str, str]:
    """The prompt for one part: the symbols its units cover (or just ``names``, a refresh), their
    whole source shown; ``described`` names the symbols whose notes are kept, for context;
    ``changed_code`` shows the code elsewhere that notes name and that changed since
    (:func:`llmem.code.note_deps.changed_code`), and ``file_note_asked`` asks for the file's note
    again (it names such code); ``around`` is a section on the file as a whole (what no longer
    resolves in it: :func:`llmem.code.check_answer.broken_around`), shown before the answer format;
    ``previous`` what the notes asked again said before (:func:`previous_notes`). Returned as the
    body and the answer format with the keys asked, which the size cap never cuts."""
    names = names if names is not None else [n for u in units for n in u.names]
    listed = "\n".join(f"- {n}" for n in names)
    schema = (
        '{"file": {"description": "<optional: what the whole file is for>"}, '
        '"symbols": {"<qualified name>": {"description": "<what it does, one or two sentences>", '
        '"inputs": "<optional: parameters and their meaning>", "outputs": "<optional: return value / effects>"}}}'
    )
    of = f" This is part {part} of {parts} of the file." if parts > 1 else ""
    file_wanted = (
        '"file" is asked for: the file\'s note names code that changed, write it again'
        if file_note_asked
        else '"file" is optional'
    )
    context = ""
    if described:
        shown: list[str] = []
        size = 0
        for n in described:
            size += len(n) + 4
            if size > 1_500:
                break
            shown.append(f"`{n}`")
        rest = len(described) - len(shown)
        kept = ", ".join(shown) + (f" … and {rest} more: get_artifact(path={path!r}, kind='annotate')" if rest else "")
        context = (
            f"\n## Already described ({len(described)}; their notes are kept — for context, do not describe them)\n"
            f"{kept}\n"
        )
    return (
        f"Describe each symbol listed below for a developer: what it does, its inputs and its outputs.{of}\n\n"
        f"{_header(path, outline)}\n## Source of the symbols to describe\n"
        f"{_shown_source(units, outline.language or '')}\n{context}{previous}{changed_code}{around}"
    ), (
        f"\n## Answer format\nAnswer with JSON only, exactly of this shape ({file_wanted}):\n{schema}\n"
        f'Keys of "symbols" are qualified names: describe every one of these you can ({len(names)}; a note on '
        f"any other symbol of the file's outline is kept too) — these qualified names:\n{listed}\n"
    )


#: At most this much of a refresh prompt goes to what the notes asked again said before.
PREVIOUS_CHARS = 4_000


def previous_notes(notes: dict[str, Any], limit: int = PREVIOUS_CHARS) -> str:
    """A refresh prompt's section: what the stored notes asked again (qualified name, or "" for
    the file's note → the stored note) said, so that what is still true is written again, not lost."""
    lines: list[str] = []
    room = limit
    for name, note in notes.items():
        if isinstance(note, dict):
            text = " ".join(
                f"{label}{note[k]}"
                for k, label in (("description", ""), ("inputs", "Inputs: "), ("outputs", "Outputs: "))
                if isinstance(note.get(k), str) and note[k].strip()
            )
        else:
            text = str(note)
        line = f"- `{name}`: {text}" if name else f"- the file: {text}"
        if len(line) + 1 > room:
            lines.append(f"- … {len(notes) - len(lines)} more (get_artifact(path, kind='annotate') reads them)")
            break
        lines.append(line)
        room -= len(line) + 1
    if not lines:
        return ""
    return (
        "\n## What their notes said before (the code or what it names changed since)\n"
        "Keep what is still true and correct the rest: what you do not write again is lost.\n" + "\n".join(lines) + "\n"
    )


#: At most this much of one note (or doc line) in a folder prompt; longer ones are cut at a word.
NOTE_CHARS = 400
_SENTENCE_END = re.compile(r"[.!?;:](?=\s)")


def cut_at_word(text: str, limit: int) -> str:
    """``text`` on one line within ``limit`` characters: whole when it fits, else cut at the last
    sentence end (or, failing that, the last space) before the limit, marked with "…"."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = max(1, limit - 1)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, room)]
    if ends and ends[-1] >= room // 2:
        return text[: ends[-1]] + " …"
    space = text.rfind(" ", 0, room)
    return (text[:space] if space > 0 else text[:room]).rstrip(",;:") + "…"


@dataclass
class FolderEntry:
    """What a folder summary prompt knows of one file or subfolder.

    ``items`` are its notes (or doc lines, or summaries of folders below it) as ``(name, text)``,
    most important first; ``read_with`` is the call that reads all of them."""

    path: str
    folder: bool = False
    summary: str | None = None
    head: str | None = None
    items: list[tuple[str, str]] = field(default_factory=list)
    items_are: str = "notes"
    read_with: str | None = None
    note: str | None = None
    #: Each note's importance (:meth:`Notes._importance`), so notes of several files rank as one list.
    ranks: dict[str, tuple[Any, ...]] | None = None


_MARKUP = re.compile(r"[*_`]+|\[([^\]]*)\]\([^)]*\)")


def first_sentence(markdown: str) -> str:
    """The first sentence of substance of a Markdown text: headings, rules, badges and fences are
    skipped (a summary's heading is often just its path); the heading when nothing else is there."""
    heading = ""
    in_fence = False
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or not line or set(line) <= set("-=*_|: "):
            continue
        if line.startswith("#"):
            heading = heading or line.strip("# ").strip()
            continue
        text = _MARKUP.sub(lambda m: m.group(1) or "", line.lstrip("-*+> ").strip()).strip()
        if not text:
            continue
        end = _SENTENCE_END.search(text + " ")
        return text[: end.end()] if end and text[end.start()] in ".!?" else text
    return heading


def cut_block(text: str, limit: int, read_with: str) -> str:
    """A Markdown block within about ``limit`` characters: whole when it fits; else cut at the last
    line or sentence end (failing that, a space) before the limit, marked "…" and followed by the
    call that reads it whole."""
    text = text.strip()
    if len(text) <= limit:
        return text
    marker = f"\n[… the rest is left out for size: {read_with} reads it whole]"
    room = max(1, limit - len(marker) - 2)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, room)]
    line_end = text.rfind("\n", 0, room)
    cut = max([*ends[-1:], line_end])
    if cut < room // 2:
        cut = text.rfind(" ", 0, room)
    if cut <= 0:
        cut = room
    return text[:cut].rstrip() + " …" + marker


def _water_fill(needs: list[int], room: int) -> list[int]:
    """Shares of ``room`` by need: each gets what it needs when that is below the fair share of
    what is left, the rest split evenly among the others."""
    shares = [0] * len(needs)
    left, todo = max(0, room), sorted(range(len(needs)), key=lambda i: needs[i])
    for n, i in enumerate(todo):
        fair = left // (len(todo) - n)
        shares[i] = min(needs[i], fair)
        left -= shares[i]
    return shares


def _entry_head(e: FolderEntry) -> str:
    name = f"{e.path}{'/' if e.folder else ''}"
    if e.summary:
        return f"- {name}: {cut_at_word(first_sentence(e.summary), 200)}"
    if e.head:
        return f"- {name}: {cut_at_word(e.head, 200)}"
    if e.items:
        return f"- {name}: {e.items_are} on {len(e.items)} symbol(s)"
    return f"- {name}: {e.note or ''}"


def _note_line(name: str, text: str) -> str:
    return f"- `{name}`: {cut_at_word(text, NOTE_CHARS)}" if name else f"- {cut_at_word(text, NOTE_CHARS)}"


def folder_summary_prompt(
    path: str, entries: list[FolderEntry], readme: str | None, limit: int = 12_000, readme_path: str | None = None
) -> str:
    """The prompt for a folder summary from what is known of each file and subfolder.

    Nothing is dropped silently: every entry gets one line before any gets more; then the README,
    the summaries and the notes share the rest by need (whole when they fit; a text cut for size
    is cut at a line, sentence or word with "…" and names the call that reads it whole); notes
    are shown fairly across entries (each one's most important first); an entry whose notes did
    not all fit says how many were left out and how to read them; entries past the budget are
    counted and the call listing them named."""
    heads = [_entry_head(e) for e in entries]
    used = 0
    shown = 0
    for h in heads:
        if used + len(h) + 1 > limit // 2:
            break
        shown += 1
        used += len(h) + 1
    omitted = len(heads) - shown
    tail = (
        f"\n({omitted} more entries left out for size: list_artifacts(directory={path!r}) lists them all.)\n"
        if omitted
        else ""
    )
    used += len(tail) + 600  # the instructions and section titles
    kept = entries[:shown]
    reserve = [len(e.path) + 40 + (len(e.read_with or "") + 90 if e.items else 0) for e in kept]
    room = limit - used - sum(reserve)
    texts: list[str] = [readme.strip() if readme else "", *(e.summary or "" for e in kept)]
    item_needs = [sum(len(_note_line(n, t)) + 1 for n, t in e.items) for e in kept]
    # Summaries and the README say more per character than notes: they share up to two thirds
    # of the room (all of it the notes do not need), the notes the rest.
    shares = _water_fill([len(t) + 40 if t else 0 for t in texts], max(room * 2 // 3, room - sum(item_needs)))
    readme_call = f"get_artifact(path={readme_path!r}, kind='source')" if readme_path else "reading the README"
    readme_block = ""
    if texts[0]:
        readme_block = (
            "## README\n" + cut_block(texts[0], max(min(200, len(texts[0])), shares[0]), readme_call) + "\n\n"
        )
    summaries: list[str | None] = [None] * len(kept)
    for i, e in enumerate(kept):
        if e.summary:
            share = shares[1 + i]
            call = e.read_with or f"get_artifact(path={e.path!r}, kind='summarize')"
            summaries[i] = cut_block(e.summary, share, call) if share >= min(200, len(e.summary.strip())) else None
    room -= len(readme_block) + sum(len(b) + 2 for b in summaries if b)
    # Notes fairly: rank 0 of every entry, then rank 1 of every entry, and so on, while they fit.
    lines: list[list[str]] = [[] for _ in kept]
    depth = max((len(e.items) for e in kept), default=0)
    full = False
    for rank in range(depth):
        for i, e in enumerate(kept):
            if rank >= len(e.items) or len(lines[i]) < rank:
                continue
            line = _note_line(*e.items[rank])
            if len(line) + 1 > room:
                full = True
                continue
            lines[i].append(line)
            room -= len(line) + 1
        if full and room < 80:
            break
    blocks: list[str] = []
    for i, e in enumerate(kept):
        name = f"{e.path}{'/' if e.folder else ''}"
        if summaries[i]:
            blocks.append(f"### {name} (its summary)\n{summaries[i]}")
        elif e.summary:
            blocks.append(f"### {name}\n(its summary is left out for size: read it with {e.read_with})")
        if not e.items:
            continue
        left = len(e.items) - len(lines[i])
        if left:
            more = "more " if lines[i] else ""
            lines[i].append(f"({left} {more}{e.items_are} of {name} left out for size: read them with {e.read_with})")
        body = "\n".join(lines[i])
        blocks.append(f"### {name} ({e.items_are})\n{body}")
    return (
        "Summarise this folder of a codebase for a developer new to it: what it is for, how its files and "
        "subfolders divide the work, and where to start reading. Answer in Markdown, at most about 400 words.\n\n"
        f"Folder: {path}\n\n{readme_block}## Contents (one line each)\n"
        + "\n".join(heads[:shown])
        + tail
        + ("\n\n## What is known of them\n" + "\n\n".join(blocks) if blocks else "")
        + "\n"
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


def validate_annotate(result: str) -> tuple[dict[str, dict[str, str]], dict[str, str] | None]:
    """Return (notes by key as the answer wrote them, the file note if any) or raise ResultInvalid.

    Only the answer's shape is checked here; which keys name symbols of the file is
    :func:`llmem.code.note_keys.sort_keys`'s question."""
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
    if not isinstance(value, dict) or not isinstance(value.get("symbols", {}), dict):
        raise ResultInvalid(
            'the answer must be a JSON object with a "symbols" object: {"symbols": {"<name>": {"description": "..."}}}',
            details={"field": "result", "rule": "shape"},
        )
    file_note: dict[str, str] | None = None
    if "file" in value:
        raw = value["file"]
        desc = raw.get("description") if isinstance(raw, dict) else None
        if not isinstance(desc, str) or not desc.strip():
            raise ResultInvalid(
                '"file" must be an object with a non-empty "description": {"file": {"description": "..."}}',
                details={"field": "result.file", "rule": "note-shape"},
            )
        file_note = {"description": desc.strip()}
    extra_keys = sorted(set(value) - {"symbols", "file"})
    if extra_keys:
        raise ResultInvalid(
            f'unexpected top-level key(s) {", ".join(extra_keys)}; only "symbols" and "file" are kept',
            details={"field": "result", "rule": "shape", "unexpected": extra_keys[:20]},
        )
    value.setdefault("symbols", {})
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
    return notes, file_note
