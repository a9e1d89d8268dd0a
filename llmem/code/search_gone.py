"""What an ``auto`` search says of an identifier no symbol is named exactly: the lines holding it
(a prefix or a docstring word must never hide its uses), and, when the store remembers it as gone
(:mod:`llmem.code.symbol_history`), where it was last defined, what it was renamed to, and how many
lines still name it (the uses a rename left behind) with the calls that list them.

``make_str`` renamed to ``to_str`` in click/utils.py while core.py still calls it: symbols match
``test_pipeline.make_strip`` by prefix, so ``auto`` never reaches the lines; this says
``gone: {name, last_defined, renamed_to, remaining_uses}`` and ``lines: {total, whole_word}``.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llmem.code.lines import LineIndex
    from llmem.core.store import ArtifactStore

__all__ = ["IDENTIFIER", "name_report"]

#: A name as code writes it, qualified or not (``make_str``, ``Parameter.value_from_envvar``).
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
#: Lines read to count whole-word uses; past this the count says it is a floor.
LINES_READ = 5_000


def name_report(
    store: ArtifactStore, lines: LineIndex, conn: sqlite3.Connection, q: str, directory: str
) -> dict[str, Any]:
    """``{"gone": …}`` when the store remembers ``q`` as a symbol a parse saw go, and ``{"lines":
    …}``: the lines under ``directory`` holding ``q`` (as scope='lines' finds them) and of those the
    ones holding it as a whole word."""
    from llmem.code.symbol_history import SymbolHistory  # only for an identifier no symbol is named

    out: dict[str, Any] = {}
    leaf = q.rsplit(".", 1)[-1]
    total, whole, capped = _count(lines, conn, q, directory)
    last = SymbolHistory(store).last_defined(leaf)
    symbol = str(last.get("symbol")) if last is not None else ""
    if last is not None and (q in (leaf, symbol) or symbol.endswith("." + q)):
        _, uses, uses_capped = (total, whole, capped) if q == leaf else _count(lines, conn, leaf, directory)
        out["gone"] = {
            "name": q,
            "last_defined": {k: last[k] for k in ("path", "line", "symbol", "kind") if k in last},
            **({"renamed_to": last["renamed_to"]} if "renamed_to" in last else {}),
            "remaining_uses": {
                "lines": uses,
                **({"lines_is_floor": True} if uses_capped else {}),
                "means": "lines still naming it as a whole word (code, docs and comments alike)",
                "list_with": [f"find_references({leaf!r})", f"check_references(path={directory!r})"],
            },
        }
    out["lines"] = {
        "total": total,
        "whole_word": whole,
        **({"whole_word_is_floor": True} if capped else {}),
        "list_with": f"search_artifacts({q!r}, scope='lines')",
    }
    return out


def _count(lines: LineIndex, conn: sqlite3.Connection, name: str, directory: str) -> tuple[int, int, bool]:
    """The lines holding ``name`` (ASCII case ignored), those holding it as a whole word, and
    whether that second count stopped at :data:`LINES_READ`."""
    total, hits, _skipped = lines.search(conn, name, directory, 0, LINES_READ)
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return total, sum(1 for h in hits if word.search(h.text)), total > LINES_READ
