"""The files ``find_references`` reads: the workspace walk, each file's bytes and facts, kept per process.

Each file is kept while its (size, mtime_ns) is unchanged, checked with a fresh ``stat`` on
every call; its facts (:mod:`llmem.code.references_parse`) are made the first time a word asked
about stands in it, and it remembers where the last words asked about stand. The walk is kept
while no folder it walked and no ignore file changed (their mtimes). Nothing here knows about
MCP.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from posixpath import dirname
from typing import Any

from llmem.code.outline import Outline, build_outline, enclosing_symbol, is_test_path, iter_symbols
from llmem.code.references_parse import Facts, facts_of, language_of

__all__ = ["MAX_FILE_BYTES", "SourceFile", "Use", "WorkspaceFiles", "word_offsets"]

TEXT_CHARS = 200
#: At most this much of a call spread over several lines is shown (its lines joined).
CALL_CHARS = 300
MAX_FILE_BYTES = 1_000_000
#: Words whose places each file keeps (per process, while the file is unchanged).
WORDS_KEPT = 64
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_WORD_ENDS = {bytes([c]) for c in _WORD_BYTES}
_BEFORE_CLOSING = re.compile(r"\s+([)\]}])")
_INSIDE_BRACKETS = re.compile(r"([(\[{])\s+")


@dataclass
class SourceFile:
    size: int
    mtime_ns: int
    data: bytes | None  # None: binary or unreadable
    facts: Facts | None = None
    outline: Outline | None = None
    line_starts: list[int] | None = None
    words: dict[str, list[int]] = field(default_factory=dict)
    #: what check_references made of the file (its binder's answer), while the file is unchanged
    checked: Any = None
    #: what its TypeScript/JavaScript declarations say its names are (references_ts), while unchanged
    receivers: Any = None

    def offsets(self, word: str) -> list[int]:
        """Where ``word`` stands as a whole word; remembered for the words last asked about."""
        found = self.words.get(word)
        if found is None:
            if len(self.words) >= WORDS_KEPT:
                self.words.clear()
            found = self.words[word] = word_offsets(self.data, word.encode()) if self.data is not None else []
        return found

    def line_of(self, offset: int) -> tuple[int, int]:
        if self.line_starts is None:
            assert self.data is not None
            self.line_starts = [0] + [m.end() for m in re.finditer(rb"\n", self.data)]
        n = bisect.bisect_right(self.line_starts, offset)
        return n, offset - self.line_starts[n - 1]

    def span_text(self, start: tuple[int, int], end: tuple[int, int], limit: int = CALL_CHARS) -> str:
        """The text from ``start`` to ``end`` ((line, byte column)), its lines joined with their
        indentation and line breaks made one space; cut at ``limit`` characters (marked "…")."""
        if self.line_starts is None:
            self.line_of(0)
        assert self.data is not None and self.line_starts is not None
        a = self.line_starts[start[0] - 1] + start[1]
        b = self.line_starts[end[0] - 1] + end[1]
        text = " ".join(self.data[a : min(b, a + limit * 4)].decode("utf-8", "replace").split())
        text = _INSIDE_BRACKETS.sub(r"\1", _BEFORE_CLOSING.sub(r"\1", text))
        return text[:limit] + ("…" if len(text) > limit or b > a + limit * 4 else "")

    def line_text(self, line: int) -> str:
        if self.line_starts is None:
            self.line_of(0)
        assert self.data is not None and self.line_starts is not None
        start = self.line_starts[line - 1]
        end = self.data.find(b"\n", start)
        text = self.data[start : end if end >= 0 else len(self.data)].decode("utf-8", "replace").strip()
        return text[:TEXT_CHARS] + ("…" if len(text) > TEXT_CHARS else "")


@dataclass
class Use:
    path: str
    line: int
    column: int
    kind: str
    qualifier: str
    name: str  # the word found (the symbol, or a local alias of it)

    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)

    def in_tests(self) -> bool:
        return is_test_path(self.path)

    def order(self) -> tuple[bool, bool, str, int, int]:
        """Where it stands in an answer: uses in code first (those outside test files before those
        in tests), ``text`` mentions after (the same way), then by place."""
        return (self.kind == "text", self.in_tests(), self.path, self.line, self.column)


@dataclass
class _Walk:
    files: list[str] = field(default_factory=list)
    watched: dict[str, int] = field(default_factory=dict)  # folder or ignore file → mtime_ns


class WorkspaceFiles:
    """The files of one workspace and what is known of them; not thread-safe (the finder locks)."""

    def __init__(self, workspace: Path) -> None:
        self.ws = workspace
        self._files: dict[str, SourceFile] = {}
        self._walk: _Walk | None = None

    def paths(self) -> list[str]:
        walk = self._walk
        if walk is not None and all(_mtime(p) == m for p, m in walk.watched.items()):
            return walk.files
        walk = self._walk = _walk_all(self.ws)
        live = set(walk.files)
        for gone in [k for k in self._files if k not in live]:
            del self._files[gone]
        return walk.files

    def file(self, key: str) -> SourceFile | None:
        try:
            st = os.stat(os.path.join(self.ws, key))  # noqa: PTH116, PTH118 - hot path
        except OSError:
            return None
        cached = self._files.get(key)
        if cached is not None and cached.size == st.st_size and cached.mtime_ns == st.st_mtime_ns:
            return cached
        data: bytes | None = None
        if st.st_size <= MAX_FILE_BYTES:
            try:
                with open(os.path.join(self.ws, key), "rb") as handle:  # noqa: PTH123, PTH118
                    data = handle.read()
            except OSError:
                data = None
            if data is not None and b"\0" in data[:8192]:
                data = None
        entry = self._files[key] = SourceFile(st.st_size, st.st_mtime_ns, data)
        return entry

    def facts(self, key: str, f: SourceFile) -> Facts:
        if f.facts is None:
            assert f.data is not None
            try:
                f.facts = facts_of(key, f.data)
            except Exception as exc:  # a parser that fails leaves the words as text, never the call
                f.facts = Facts(language_of(key), note=f"not parsed: {type(exc).__name__}")
        return f.facts

    def outline(self, key: str, f: SourceFile) -> Outline | None:
        """The file's outline as it is now (made in memory, kept while the file is unchanged); None
        for a binary file."""
        if f.outline is None and f.data is not None:
            try:
                f.outline = build_outline(key, f.data)
            except Exception:  # an outliner that fails leaves the parser's scopes, never the call
                f.outline = Outline(path=key, language=None, mode="fallback", line_count=0, size=0, sha256="")
        return f.outline

    def outline_content(self, key: str) -> dict[str, Any] | None:
        """The outline of ``key`` as it is now, as a stored outline's content reads (plain data)."""
        f = self.file(key)
        outline = self.outline(key, f) if f is not None else None
        return outline.model_dump(mode="json") if outline is not None else None

    def enclosing(self, key: str, f: SourceFile, line: int, column: int | None = None) -> str | None:
        """The qualified name of what ``line`` lies in, as the line search names it: the outline's
        innermost symbol of code holding it (an arrow-function const, a ``registerTool`` call, a
        ``describe``/``it`` block), else of data; else the parser's innermost scope. With
        ``column``, the anonymous functions around the place inside that symbol follow its name:
        ``allowedDirectories → arrow in args.map`` (see :class:`~llmem.code.references_parse.Anonymous`)."""
        outline = self.outline(key, f)
        sym = enclosing_symbol(outline, line) if outline is not None else None
        facts = self.facts(key, f) if f.data is not None else None
        name = sym.qualified_name if sym is not None else facts.enclosing(line) if facts is not None else None
        if column is None or facts is None or not facts.anonymous:
            return name
        # The calls and declarations the outline already names (registrations, test blocks,
        # arrow-function consts) are not repeated as anonymous functions inside them.
        owners = {
            (s.start_line, s.name if s.kind not in ("registration", "test") else "")
            for s in (iter_symbols(outline) if outline is not None else ())
            if s.start_line <= line <= s.end_line
        }
        labels = [
            a.label
            for a in facts.anonymous
            if a.holds(line, column)
            and (sym is None or (sym.start_line <= a.start[0] and a.end[0] <= sym.end_line))
            and (a.owner_line, a.label if a.owner == "value" else "") not in owners
        ]
        if not labels:
            return name
        return " → ".join([name, *labels[-3:]] if name else labels[-3:])

    def occurrences(self, key: str, f: SourceFile, word: str) -> list[Use]:
        offsets = f.offsets(word)
        if not offsets:
            return []  # the file is parsed only when the word stands in it
        facts = self.facts(key, f)
        out: list[Use] = []
        for at in offsets:
            line, col = f.line_of(at)
            if line in facts.import_lines:
                kind, qual = "import", ""
            else:
                kind, qual = facts.ids.get((line, col), ("text", ""))
                if kind == "text" and line in facts.entry_lines:
                    kind = "entry-point"
            out.append(Use(key, line, col, kind, qual, word))
        return out


def word_offsets(data: bytes, word: bytes) -> list[int]:
    """Where ``word`` stands as a whole word, as ``grep -w`` (ASCII word characters) finds it; a
    plain ``find`` runs at memory speed, where a regex with a look-behind tries every offset."""
    out = []
    at = data.find(word)
    end = len(word)
    while at >= 0:
        if (at == 0 or data[at - 1] not in _WORD_BYTES) and data[at + end : at + end + 1] not in _WORD_ENDS:
            out.append(at)
        at = data.find(word, at + end)
    return out


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns  # noqa: PTH116 - hot path
    except OSError:
        return -1


def _walk_all(ws: Path) -> _Walk:
    """The files the workspace walk keeps, with the text files of no outlined language and ``.github/``."""
    from llmem.code.walk import IGNORE_FILES, walk_workspace

    out = _Walk()
    results = [walk_workspace(ws)]
    if (ws / ".github").is_dir():
        results.append(walk_workspace(ws, ws / ".github"))
    folders: set[str] = {""}
    for result in results:
        out.files += [f.rel_path for f in result.files]
        out.files += [s.rel_path for s in result.skipped if s.reason == "unsupported-language"]
        for rel in [f.rel_path for f in result.files] + [s.rel_path.rstrip("/") for s in result.skipped]:
            folder = dirname(rel)
            while folder and folder not in folders:
                folders.add(folder)
                folder = dirname(folder)
    out.files = sorted(set(out.files))
    for folder in folders:
        where = os.path.join(ws, folder) if folder else str(ws)  # noqa: PTH118
        out.watched[where] = _mtime(where)
        for name, _reason in IGNORE_FILES:
            ignore = os.path.join(where, name)  # noqa: PTH118
            if os.path.exists(ignore):  # noqa: PTH110 - a new one changes the folder's mtime
                out.watched[ignore] = _mtime(ignore)
    return out
