"""Small helpers shared by the outline extractors: caps, whitespace folding, comment cleaning."""

from __future__ import annotations

import re

__all__ = [
    "DECORATOR_CAP",
    "DOC_CAP",
    "SIGNATURE_CAP",
    "OutlineFailure",
    "cap",
    "clean_comment",
    "count_lines",
    "one_line",
]

SIGNATURE_CAP = 200
DOC_CAP = 500
DECORATOR_CAP = 200

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
