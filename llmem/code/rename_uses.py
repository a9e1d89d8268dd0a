"""Whether a rename is finished: the uses that still name a symbol that went.

A definition renamed where it is defined only (``Parameter.value_from_envvar`` to
``Parameter.envvar_value``, its callers unchanged) is half a rename: a note refreshed then must
describe the code as it is (a call that no longer resolves is a bug), not as it will be. A use
still names the old symbol when it is

- a use the check finds broken whose missing name is the old one (``check_references``' judge:
  an import of a function that went, an attribute its class lost);
- a use by name (not a mention in text) while nothing of the workspace defines that name now;
- ``self.old`` / ``cls.old`` inside the class that lost it, even where a subclass still has a
  member of that name (an override left behind): ``self`` there is the class itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llmem.code.references import ReferenceFinder
    from llmem.code.symbol_history import SymbolHistory

__all__ = ["OldUse", "old_name_uses", "unfinished_renames", "unfinished_section"]

#: Kinds of an occurrence that are not a use of the name (``find_references``' kinds).
_NOT_USES = frozenset({"definition", "text", "parameter"})
_OWN_RECEIVERS = frozenset({"self", "cls"})


@dataclass(frozen=True)
class OldUse:
    path: str
    line: int
    text: str


def old_name_uses(
    finder: ReferenceFinder, symbol: str, limit: int = 50, history: SymbolHistory | None = None
) -> list[OldUse]:
    """The uses of the workspace that still name ``symbol`` (a qualified name nothing defines
    now), in file and line order, at most ``limit``; ``history`` (what the store saw go) lets the
    check find uses it judges only with that evidence (``x: A | B`` where A lost the name)."""
    leaf = symbol.rsplit(".", 1)[-1]
    owner = symbol.rsplit(".", 1)[0] if "." in symbol else ""
    defined = bool(finder.definitions_of({leaf}).get(leaf))
    found: dict[tuple[str, int], OldUse] = {}
    with finder.lock:
        src = finder.src
        files = {k: f for k in src.paths() if (f := src.file(k)) is not None and f.data is not None}
        keys = sorted(k for k, f in files.items() if f.offsets(leaf))
    for key in keys:
        f = files[key]
        with finder.lock:
            uses = [u for u in src.occurrences(key, f, leaf) if u.kind not in _NOT_USES]
            for u in uses:
                inside = src.enclosing(key, f, u.line) or ""
                own = bool(owner) and u.qualifier in _OWN_RECEIVERS and inside.startswith(owner + ".")
                if not defined or own:
                    found.setdefault((key, u.line), OldUse(key, u.line, f.line_text(u.line).strip()))
        for b in finder.broken_in(key, history):
            if b.missing.lstrip(".") == leaf:
                found.setdefault((key, b.line), OldUse(key, b.line, files[key].line_text(b.line).strip()))
    return [found[k] for k in sorted(found)][:limit]


#: The places of an unfinished rename an answer shows; the rest are counted.
PLACES_SHOWN = 5


def unfinished_renames(
    finder: ReferenceFinder, renamed: dict[str, str], history: SymbolHistory | None = None
) -> list[dict[str, object]]:
    """Of the renames a note was carried by (old → new qualified name), those whose old name is
    still used somewhere in the workspace: ``{old, new, uses, at (the first few path:line), list_with}``."""
    out: list[dict[str, object]] = []
    for old, new in renamed.items():
        left = old_name_uses(finder, old, limit=100_000, history=history)
        if left:
            out.append(
                {
                    "old": old,
                    "new": new,
                    "uses": len(left),
                    "at": [f"{u.path}:{u.line}" for u in left[:PLACES_SHOWN]],
                    "list_with": "check_references()",
                }
            )
    return out


def unfinished_section(unfinished: list[dict[str, object]]) -> str:
    """A prompt's section on the notes moved by a rename whose old name is still used: the note
    must describe the code as it is (those uses fail when run)."""
    if not unfinished:
        return ""
    lines = []
    for u in unfinished:
        at = u["at"] if isinstance(u["at"], list) else []
        more = " …" if len(at) < int(str(u["uses"])) else ""
        lines.append(
            f"- `{u['old']}` → `{u['new']}`: {u['uses']} use(s) still name the old name, at {', '.join(at)}{more}"
        )
    return (
        "\n## Rename not finished (uses of the old name anywhere in the workspace — check_references() lists them)\n"
        "These notes moved with a rename, but code still calls the old name (a bug: it fails when run); "
        "say so where a note describes who uses it:\n" + "\n".join(lines) + "\n"
    )
