"""Small helpers shared by the outline extractors: caps, whitespace folding, comment cleaning."""

from __future__ import annotations

import re

from llmem.code.outline.model import DATA_KINDS, Symbol

__all__ = [
    "DECORATOR_CAP",
    "DOC_CAP",
    "SIGNATURE_CAP",
    "VALUE_CAP",
    "OutlineFailure",
    "cap",
    "clean_comment",
    "count_lines",
    "drop_shadowed",
    "exports_doc",
    "one_line",
]

SIGNATURE_CAP = 200
DOC_CAP = 500
DECORATOR_CAP = 200
#: What a field's, attribute's or variable's signature shows of its value: ``x = {…5,000 lines…}``
#: stays one short line.
VALUE_CAP = 80

# Leading comment markers: /** /*! /* /// //! // #, and the " * " gutter of block comments.
_LINE_MARK = re.compile(r"^\s*(?:/\*+!?|\*+(?!/)|//[/!]?|#)?\s?")
_BLOCK_END = re.compile(r"\s*\*+/\s*$")


class OutlineFailure(Exception):
    """The source cannot be outlined; the message becomes the fallback outline's ``reason``."""


def cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = SIGNATURE_CAP) -> str:
    """Fold every run of whitespace (newlines included) into one space, then cap."""
    return cap(" ".join(text.split()), limit)


def count_lines(data: bytes) -> int:
    """Lines the way editors and ``ast`` count them: ``\\n``, ``\\r\\n`` or a lone ``\\r``."""
    if not data:
        return 0
    if b"\r" in data:
        return len(data.splitlines())
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def clean_comment(raw: str) -> str | None:
    """Turn a comment block (``//``, ``///``, ``/** */``, ``#``) into its plain text, capped."""
    lines = raw.splitlines()
    if lines:
        lines[-1] = _BLOCK_END.sub("", lines[-1])
    out = [_LINE_MARK.sub("", line, count=1).rstrip() for line in lines]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    text = "\n".join(out)
    return cap(text, DOC_CAP) if text else None


def drop_shadowed(symbols: list[Symbol]) -> list[Symbol]:
    """Siblings without the data symbols (:data:`DATA_KINDS`) whose qualified name another sibling
    already holds: ``foo = wrap(foo)`` after ``def foo``, a name assigned twice. Symbols of the
    other kinds never go and keep their hashes (a shared name would merge them)."""
    if not any(s.kind in DATA_KINDS for s in symbols):
        return symbols
    taken = {s.qualified_name for s in symbols if s.kind not in DATA_KINDS}
    out: list[Symbol] = []
    for symbol in symbols:
        if symbol.kind in DATA_KINDS:
            if symbol.qualified_name in taken:
                continue
            taken.add(symbol.qualified_name)
        out.append(symbol)
    return out


def exports_doc(names: list[str], start_line: int, end_line: int) -> str:
    """The names a module exports (``__all__``), as many as fit the doc cap, and how many did not."""
    shown: list[str] = []
    size = 0
    for name in names:
        if size + len(name) + 2 > DOC_CAP - 60:
            break
        shown.append(name)
        size += len(name) + 2
    text = f"{len(names)} exported name(s): " + ", ".join(shown)
    if len(shown) < len(names):
        text += f" … and {len(names) - len(shown)} more (lines {start_line}-{end_line})"
    return text
