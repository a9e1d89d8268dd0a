"""Per-symbol hashes that a comment edit leaves alone and any code change moves.

A symbol's hash is the first 16 hex digits of sha256 over its own lines (``start_line`` to
``end_line``) with blank lines, comment-only lines and trailing comments dropped and trailing
whitespace stripped. Leading whitespace stays: in Python, indentation is code.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmem.code.outline.model import Symbol

__all__ = ["code_lines", "combine_hashes", "fill_hashes", "hashes_of_symbol_dicts", "hashes_of_symbols"]

#: The comment style of each outline language: "hash" (``#``), "c" (``//``, ``/* */``), or none.
_STYLES = {
    "python": "hash",
    "pyproject": "hash",
    "cargo": "hash",
    "typescript": "c",
    "tsx": "c",
    "javascript": "c",
    "go": "c",
    "rust": "c",
    "java": "c",
    "go-mod": "slash",
}
# Code up to the first comment marker that is not inside a one-line string literal.
_HASH_CODE = re.compile(rb"""(?:[^#'"]|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")*""")
# Comments and the string literals a comment marker may hide in (which stay), in one pass.
_C_TOKENS = re.compile(
    rb"""//[^\r\n]*|/\*.*?(?:\*/|\Z)|'(?:\\.|[^'\\\r\n])*'|"(?:\\.|[^"\\\r\n])*"|`(?:\\.|[^`\\])*`""", re.DOTALL
)


def code_lines(data: bytes, language: str | None) -> list[bytes | None]:
    """Each line of ``data`` as it counts for a hash: comments and trailing whitespace gone,
    ``None`` when no code is left."""
    style = _STYLES.get(language or "")
    if style == "c" and (b"//" in data or b"/*" in data):
        data = _C_TOKENS.sub(_keep_strings, data)
    elif style == "hash" and b"#" in data:
        return [_strip_hash(line) for line in data.splitlines()]
    elif style == "slash":
        return [line.split(b"//", 1)[0].rstrip() or None for line in data.splitlines()]
    return [line.rstrip() or None for line in data.splitlines()]


def _strip_hash(line: bytes) -> bytes | None:
    if b"#" in line:
        match = _HASH_CODE.match(line)
        end = match.end() if match is not None else 0
        if end < len(line) and line[end : end + 1] == b"#":
            line = line[:end]
    return line.rstrip() or None


_ALL_BUT_LINE_BREAKS = bytes(b for b in range(256) if b not in b"\r\n")


def _keep_strings(match: re.Match[bytes]) -> bytes:
    """A string literal stays; a comment goes, all but its line breaks (line numbers must not move)."""
    text = match.group()
    if text[0] != 47:  # not "/": a string literal
        return text
    return text.translate(None, _ALL_BUT_LINE_BREAKS) if text[1] == 42 else b""  # "/*" may span lines


def fill_hashes(symbols: list[Symbol], code: list[bytes | None]) -> None:
    """Give every symbol (children too) the hash of its code lines, ``code`` as :func:`code_lines` made it."""
    stack = list(symbols)
    while stack:
        symbol = stack.pop()
        kept = [line for line in code[symbol.start_line - 1 : symbol.end_line] if line is not None]
        symbol.hash = hashlib.sha256(b"\n".join(kept)).hexdigest()[:16]
        stack.extend(symbol.children)


def combine_hashes(hashes: Iterable[str]) -> str:
    """One hash for a name several symbols share (overloads), whatever order they come in."""
    return hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()[:16]


def _collect(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    grouped: dict[str, list[str]] = {}
    for name, digest in pairs:
        grouped.setdefault(name, []).append(digest)
    return {name: hs[0] if len(hs) == 1 else combine_hashes(hs) for name, hs in grouped.items()}


def hashes_of_symbols(symbols: Iterable[Symbol]) -> dict[str, str]:
    return _collect((s.qualified_name, s.hash) for s in symbols if s.hash is not None)


def hashes_of_symbol_dicts(symbols: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """:func:`llmem.code.outline.symbol_hashes` of a stored outline's ``symbols`` (plain dicts)."""
    pairs: list[tuple[str, str]] = []
    stack = list(symbols)
    while stack:
        sym = stack.pop()
        children = sym.get("children")
        if isinstance(children, list):
            stack.extend(c for c in children if isinstance(c, Mapping))
        digest, name = sym.get("hash"), sym.get("qualified_name")
        if isinstance(digest, str) and isinstance(name, str):
            pairs.append((name, digest))
    return _collect(pairs)
