"""What the store remembers of symbols the code no longer defines: where each was last defined, and
what it was renamed to when that is known.

Three memories, newest first:

- the *gone-symbols* document: each time a parse replaces a file's outline, the symbols of the
  old outline missing from the new one are written down (path, qualified name, line, kind, hash),
  with the symbol they became when one in the same file has the same code once its name is put
  back (:func:`llmem.code.carry.match`: ``DIFF = "git_diff"`` → ``DIFF_REF = "git_diff"``);
- a stored outline older than its file (nothing has parsed the file since the edit): it still
  lists the old name;
- a note's ``renamed`` (the notes that followed a rename, :meth:`llmem.code.notes.Notes.carry_notes`).

``check_references`` and ``find_references`` ask it for the likely intended name of a use that no
longer resolves. Nothing here knows about MCP.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmem.code import carry
from llmem.code.parse_pool import Replaced
from llmem.code.parsing import NAMESPACE as _NAMESPACE
from llmem.code.parsing import OUTLINE as _OUTLINE
from llmem.core.store import ArtifactStore, Fingerprint, source_status

__all__ = ["GONE_SYMBOLS", "SymbolHistory", "remember_replaced"]

GONE_SYMBOLS = "gone-symbols"
#: Entries kept (the oldest go first): a few thousand renames and removals.
KEPT = 3_000


def _symbols(content: Any) -> dict[str, Mapping[str, Any]]:
    if not isinstance(content, dict):
        return {}
    return {str(s.get("qualified_name")): s for s in carry.symbol_dicts(content.get("symbols", []))}


def remember_replaced(store: ArtifactStore, replaced: list[Replaced]) -> None:
    """Write down what the outlines just replaced (``(key, old content, new content)``, whole or
    cut to their symbols' names, kinds, lines and hashes: :data:`llmem.code.parse_pool.Replaced`)
    no longer list, and what each became when the code shows it (one document update for the
    whole parse)."""
    entries: dict[str, dict[str, Any]] = {}
    back: set[str] = set()  # names defined again: no longer gone
    for key, old, new in replaced:
        before, after = _symbols(old), _symbols(new)
        back |= {f"{key}#{n}" for n in after}
        gone = [n for n in before if n not in after]
        if not gone:
            continue
        renamed = _renames(store.workspace, key, before, after, new, gone)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for name in gone:
            sym = before[name]
            entry: dict[str, Any] = {
                "path": key,
                "symbol": name,
                "line": int(sym.get("start_line") or 0),
                "kind": str(sym.get("kind") or ""),
                "gone_at": now,
            }
            if name in renamed:
                entry["renamed_to"] = renamed[name]
            entries[f"{key}#{name}"] = entry
    if not entries and not back:
        return

    def update(current: Any) -> tuple[Any, None]:
        kept = {k: v for k, v in (current if isinstance(current, dict) else {}).items() if k not in back}
        if not entries and len(kept) == len(current if isinstance(current, dict) else {}):
            return current, None
        kept.update(entries)
        return dict(list(kept.items())[-KEPT:]), None

    if entries or _any_back(store, back):
        store.update_doc(_NAMESPACE, GONE_SYMBOLS, {}, update)


def _any_back(store: ArtifactStore, back: set[str]) -> bool:
    current = store.read_doc(_NAMESPACE, GONE_SYMBOLS, {})
    return isinstance(current, dict) and any(k in back for k in current)


def _renames(
    ws: Path,
    key: str,
    before: dict[str, Mapping[str, Any]],
    after: dict[str, Mapping[str, Any]],
    new: Any,
    gone: list[str],
) -> dict[str, str]:
    """Gone symbols whose code is now under another name in the same file (unique matches only)."""
    olds = [carry.Gone(key, n, str(before[n].get("hash"))) for n in gone if before[n].get("hash")]
    news = [
        carry.New(key, n, str(s.get("hash")), int(s.get("start_line") or 0), int(s.get("end_line") or 0))
        for n, s in after.items()
        if n not in before and s.get("hash")
    ]
    if not olds or not news:
        return {}
    try:
        data = (ws / key).read_bytes()
    except OSError:
        return {}
    language = new.get("language") if isinstance(new, dict) else None
    renamed = {m.old.name: m.new.name for m in carry.match(olds, news, {key: (data, language)})}
    # Renamed with the code changed a little too: judged from the signature and the size.
    fresh = [s for n, s in after.items() if n not in before and n not in renamed.values()]
    for name in gone:
        if name not in renamed:
            guess = carry.similar(before[name], fresh)
            if guess is not None and guess not in renamed.values():
                renamed[name] = guess
    return renamed


class SymbolHistory:
    """Answers where a name was last defined, from one store."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._gone: dict[str, list[dict[str, Any]]] | None = None

    def _by_leaf(self) -> dict[str, list[dict[str, Any]]]:
        if self._gone is None:
            raw = self.store.read_doc(_NAMESPACE, GONE_SYMBOLS, {})
            self._gone = {}
            for entry in (raw if isinstance(raw, dict) else {}).values():
                if isinstance(entry, dict) and isinstance(entry.get("symbol"), str):
                    self._gone.setdefault(carry.leaf(entry["symbol"]), []).append(entry)
        return self._gone

    def version(self) -> int:
        """Changes when what the store remembers changes (the gone-symbols document's mtime)."""
        try:
            return self.store.doc_file(_NAMESPACE, GONE_SYMBOLS).stat().st_mtime_ns
        except OSError:
            return 0

    def remembered(self, name: str) -> bool:
        """Whether the store knows ``name`` as a symbol that is gone."""
        return name in self._by_leaf()

    def gone_member(self, name: str) -> tuple[str, str, int] | None:
        """The member of a class (a method, a class attribute) named ``name`` that a parse saw go,
        newest first: (path, qualified name, line); None when no such member is remembered."""
        members = [e for e in self._by_leaf().get(name, []) if "." in e["symbol"] and e.get("kind") != "function"]
        if not members:
            return None
        e = max(members, key=lambda e: str(e.get("gone_at")))
        return str(e.get("path")), e["symbol"], int(e.get("line") or 0)

    def gone(self, path: str | None, symbol: str, current: Any = None) -> dict[str, Any] | None:
        """Where ``symbol`` (its qualified name) was defined in ``path`` (any file when None) before
        it went, as :meth:`last_defined` answers; None when the store does not know it was there."""
        leaf = carry.leaf(symbol)
        for e in sorted(self._by_leaf().get(leaf, []), key=lambda e: str(e.get("gone_at")), reverse=True):
            if path is None and e.get("symbol") == symbol:
                path = str(e.get("path"))
            if e.get("path") == path and e.get("symbol") == symbol:
                best = self.last_defined(leaf, path, current)
                if best is not None and best.get("symbol") == symbol and best.get("path") == path:
                    return best
                return {k: v for k, v in e.items() if k != "gone_at"} | {"source": "parse"}
        if path is None:
            return None
        best = self.last_defined(leaf, path, current)
        return best if best is not None and best.get("symbol") == symbol and best.get("path") == path else None

    def renamed_to(self, symbol: str, path: str) -> str | None:
        """What ``symbol`` (a qualified name, gone) of ``path`` was renamed to, when a parse or a
        note saw it: the newest parse's record of that very symbol, else :meth:`last_defined`'s
        (a member of the same name elsewhere, an override, is another symbol)."""
        mine = [
            e for e in self._by_leaf().get(carry.leaf(symbol), []) if e["symbol"] == symbol and e.get("path") == path
        ]
        if mine:
            newest = max(mine, key=lambda e: str(e.get("gone_at")))
            if newest.get("renamed_to"):
                return str(newest["renamed_to"])
        last = self.last_defined(carry.leaf(symbol), path)
        if last is None or last.get("symbol") != symbol or not last.get("renamed_to"):
            return None
        return str(last["renamed_to"])

    def last_defined(self, name: str, path: str | None = None, current: Any = None) -> dict[str, Any] | None:
        """Where ``name`` (a bare name) was last defined, preferring ``path`` (the file it is looked
        for in): ``{path, line, symbol, kind, source, renamed_to?}``, or None when nothing is known.

        ``current`` (the file's outline as it is now, as the finder has it) lets a stored outline
        older than the file tell a rename too."""
        found: list[dict[str, Any]] = []
        if path is not None:
            stale = self._stale_outline(path, name, current)
            if stale is not None:
                found.append(stale)
        entries = sorted(self._by_leaf().get(name, []), key=lambda e: (e.get("path") != path, str(e.get("gone_at"))))
        found += [{**e, "source": "parse"} for e in entries[:1]]
        if path is not None:
            noted = self._noted(path, name)
            if noted is not None:
                found.append(noted)
        if not found:
            return None
        best = dict(found[0])
        for other in found[1:]:
            if "renamed_to" in other and "renamed_to" not in best and other.get("path") == best.get("path"):
                best["renamed_to"] = other["renamed_to"]
        best.pop("gone_at", None)
        return best

    def _stale_outline(self, path: str, name: str, current: Any) -> dict[str, Any] | None:
        record = self.store.get_or_none(_NAMESPACE, path, _OUTLINE)
        if record is None:
            return None
        src = record.doc.get("source")
        if isinstance(src, dict):
            status = source_status(str(self.store.workspace / path), Fingerprint.from_dict(src))
            if status == "fresh":
                return None  # the stored outline is the file as it is: nothing old in it
        before = _symbols(record.doc.get("content"))
        hits = [n for n in before if carry.leaf(n) == name]
        if not hits:
            return None
        sym = before[hits[0]]
        out: dict[str, Any] = {
            "path": path,
            "symbol": hits[0],
            "line": int(sym.get("start_line") or 0),
            "kind": str(sym.get("kind") or ""),
            "source": "stored outline (older than the file)",
        }
        if current is not None:
            after = _symbols(current)
            if hits[0] not in after:
                renamed = _renames(self.store.workspace, path, before, after, current, [hits[0]])
                if hits[0] in renamed:
                    out["renamed_to"] = renamed[hits[0]]
        return out

    def _noted(self, path: str, name: str) -> dict[str, Any] | None:
        record = self.store.get_or_none(_NAMESPACE, path, "annotate")
        renamed = record.doc.get("renamed") if record is not None else None
        for old, new in (renamed or {}).items() if isinstance(renamed, dict) else []:
            if carry.leaf(str(old)) == name:
                return {"path": path, "symbol": old, "renamed_to": new, "source": "notes that followed the rename"}
        return None
