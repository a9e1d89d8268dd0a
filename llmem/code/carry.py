"""Notes that follow their code: a symbol renamed or moved with its body unchanged keeps its note.

After a parse makes outlines anew, a note whose symbol is gone is matched with a symbol that is
new (not described) and has the same code: the same per-symbol hash (a move, or a class renamed
around unchanged methods), or — a rename — the same hash once the new symbol's name is put back
to the old one in its lines (:func:`hash_as_named`; the name is part of the hashed lines, so no
hash is stored for this: it is recomputed from the new source). A match must be unique; a note
with no match, or with several, stays where it is and reads as ``gone``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llmem.code.outline.hashes import code_lines

__all__ = ["Gone", "Move", "New", "hash_as_named", "leaf", "match", "symbol_dicts"]


def leaf(qualified: str) -> str:
    """The symbol's own name: the last part of its qualified name."""
    return qualified.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Gone:
    """A described symbol no longer in its file: where its note is and the hash it was written from."""

    path: str
    name: str
    hash: str


@dataclass(frozen=True)
class New:
    """A symbol of a re-parsed file that its file's note does not describe."""

    path: str
    name: str
    hash: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Move:
    old: Gone
    new: New


def symbol_dicts(symbols: Sequence[Any]) -> Iterator[Mapping[str, Any]]:
    """Every symbol of a stored outline's ``symbols`` (dicts), children too."""
    stack = [s for s in symbols if isinstance(s, Mapping)]
    while stack:
        sym = stack.pop()
        yield sym
        children = sym.get("children")
        if isinstance(children, list):
            stack.extend(c for c in children if isinstance(c, Mapping))


def hash_as_named(code: list[bytes | None], new: New, old_name: str) -> str:
    """The hash ``new`` would have if its own name were ``old_name`` wherever it appears in its
    lines (the definition, a recursive call): the hash :mod:`hashes` gives the code before a rename."""
    word = re.compile(rb"(?<![\w$])" + re.escape(leaf(new.name).encode()) + rb"(?![\w$])")
    old = leaf(old_name).encode()
    kept = [word.sub(lambda _m: old, line) for line in code[new.start_line - 1 : new.end_line] if line is not None]
    return hashlib.sha256(b"\n".join(kept)).hexdigest()[:16]


def match(gone: list[Gone], new: list[New], sources: Mapping[str, tuple[bytes, str | None]]) -> list[Move]:
    """Unique pairs of a gone note and a new symbol with the same code.

    Across files only the same hash counts (a move keeps the name; moved and renamed at once is
    not recognised). In one file a different name counts too when putting the old name back gives
    the old hash. Each side is matched at most once: a gone note with two equal candidates (two
    methods whose bodies are both ``pass``) stays gone rather than follow the wrong one.
    """
    by_hash: dict[str, list[New]] = {}
    for n in new:
        by_hash.setdefault(n.hash, []).append(n)
    code_cache: dict[str, list[bytes | None]] = {}

    def code_of(path: str) -> list[bytes | None]:
        if path not in code_cache:
            data, language = sources[path]
            code_cache[path] = code_lines(data, language)
        return code_cache[path]

    candidates: dict[Gone, list[New]] = {}
    for g in gone:
        same = by_hash.get(g.hash, [])
        # The same name first (a move, or a method of a renamed class), then the same file.
        found = [n for n in same if leaf(n.name) == leaf(g.name)] or [n for n in same if n.path == g.path]
        if not found and g.path in sources:
            found = [
                n
                for n in new
                if n.path == g.path
                and leaf(n.name) != leaf(g.name)
                and hash_as_named(code_of(n.path), n, g.name) == g.hash
            ]
        if len(found) > 1:
            found = [n for n in found if n.path == g.path] or found
        candidates[g] = found
    claims: dict[New, int] = {}
    for found in candidates.values():
        if len(found) == 1:
            claims[found[0]] = claims.get(found[0], 0) + 1
    return [Move(g, f[0]) for g, f in candidates.items() if len(f) == 1 and claims[f[0]] == 1]


def similar(old: Mapping[str, Any], candidates: Sequence[Mapping[str, Any]]) -> str | None:
    """The one new symbol of the same file that reads as ``old`` renamed with its code changed a
    little, judged from what both outlines keep (the old code itself is not kept): the same kind,
    the same signature once the old name is put back, a size within a quarter (at least three
    lines) of the old one. None when no candidate, or more than one, fits: a guess is never made
    between two."""
    name = leaf(str(old.get("qualified_name")))
    size = int(old.get("end_line") or 0) - int(old.get("start_line") or 0)
    signature = str(old.get("signature") or "")
    if not signature or name not in signature:
        return None
    fits = []
    for c in candidates:
        new = leaf(str(c.get("qualified_name")))
        c_size = int(c.get("end_line") or 0) - int(c.get("start_line") or 0)
        same_signature = re.sub(rf"(?<![\w$]){re.escape(new)}(?![\w$])", name, str(c.get("signature") or ""))
        if c.get("kind") == old.get("kind") and same_signature == signature and abs(c_size - size) <= max(3, size // 4):
            fits.append(str(c.get("qualified_name")))
    return fits[0] if len(fits) == 1 else None
