"""Search over the artifact store: symbols by name, and the words of docs, notes and summaries.

The index is a cache, never a second truth. It is built from the artifact files, kept in memory
per process, and brought up to date before every search from the store's change journal
(``cache/journal.log``: one line per put or delete, appended after the change, by every
process). A process starts warm from ``cache/search-index.json`` (JSON, never pickle: the store
may sit in a repository someone else wrote), which records how far into the journal it is true.
A journal that shrank or was replaced, or a cache that is unreadable or of another format,
means a rebuild from the files. Hits are checked against the artifact files before they are
answered, so an artifact removed behind the journal's back (``rm``) is never shown.

How a query matches, best first: the exact name (or qualified name) of a symbol; a prefix of
it; all the query's words among the name's camelCase / snake_case parts; a substring of the
qualified name; then all the query's words in a docstring, a note or a summary. Within a tier,
definitions come before mentions (a symbol before a note about it), then shorter paths, then
line order.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llmem.errors import InvalidArgument
from llmem.fsutil import atomic_write_json, loads_json, read_json
from llmem.store import JOURNAL, ArtifactStore

__all__ = ["MATCHES", "SearchIndex", "search_index_for", "split_words"]

NAMESPACE = "llmem"
FORMAT = 1
CACHE_NAME = "search-index.json"
#: The order of the tiers, best first (the ``match`` of each hit).
MATCHES = ("exact-name", "prefix", "word", "substring", "doc", "note", "summary")
_TIER = {m: n for n, m in enumerate(MATCHES)}
#: Candidates ranked per query: enough for many pages, bounded for speed.
CANDIDATE_CAP = 5_000
SNIPPET_CHARS = 160
QUERY_CHARS = 200
#: Journal lines applied before the cache file is written again.
PERSIST_EVERY = 2_000

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_TEXT_KINDS = {"summarize": "summary", "document": "summary", "test-plan": "summary"}


def split_words(text: str) -> list[str]:
    """Lower-case words of a name or a text, camelCase and snake_case split: ``validatePath`` →
    ``validate``, ``path``; ``HTTPServer_v2`` → ``http``, ``server``, ``v``, ``2``."""
    return [w.lower() for w in _WORD.findall(text)]


@dataclass
class _Entry:
    """One searchable thing: a symbol of an outline, a note on a symbol or a file, a summary."""

    path: str
    artifact: str  # the artifact kind it comes from
    symbol: str | None
    name: str
    kind: str
    start: int | None
    end: int | None
    signature: str | None
    text: str  # doc, note or summary text, for words and the snippet

    def to_row(self) -> list[Any]:
        return [self.symbol, self.name, self.kind, self.start, self.end, self.signature, self.text]


def _entries_of(path: str, artifact: str, content: Any) -> list[_Entry]:
    out: list[_Entry] = []
    if artifact == "outline" and isinstance(content, dict):
        stack = list(reversed(content.get("symbols") or []))
        while stack:
            sym = stack.pop()
            if not isinstance(sym, dict):
                continue
            out.append(
                _Entry(
                    path,
                    artifact,
                    str(sym.get("qualified_name") or sym.get("name") or ""),
                    str(sym.get("name") or ""),
                    str(sym.get("kind") or "symbol"),
                    sym.get("start_line"),
                    sym.get("end_line"),
                    sym.get("signature"),
                    str(sym.get("doc") or ""),
                )
            )
            stack.extend(reversed(sym.get("children") or []))
    elif artifact == "annotate" and isinstance(content, dict):
        file_note = content.get("file")
        if isinstance(file_note, dict) and file_note.get("description"):
            out.append(_Entry(path, artifact, None, "", "file-note", None, None, None, str(file_note["description"])))
        for qn, note in (content.get("symbols") or {}).items():
            if isinstance(note, dict):
                text = " ".join(str(note.get(k) or "") for k in ("description", "inputs", "outputs")).strip()
                out.append(_Entry(path, artifact, str(qn), str(qn).rsplit(".", 1)[-1], "note", None, None, None, text))
    elif artifact in _TEXT_KINDS and isinstance(content, str):
        out.append(_Entry(path, artifact, None, "", artifact, None, None, None, content))
    return out


@dataclass
class _Index:
    """The in-memory index: entries by artifact, and the lookups built over them."""

    by_artifact: dict[tuple[str, str], list[_Entry]] = field(default_factory=dict)
    journal_ino: int = 0
    journal_offset: int = 0
    applied: int = 0
    # Lookups, rebuilt lazily after changes (``dirty``).
    dirty: bool = True
    entries: list[_Entry] = field(default_factory=list)
    exact: dict[str, list[int]] = field(default_factory=dict)
    sorted_names: list[str] = field(default_factory=list)
    sorted_ids: list[int] = field(default_factory=list)
    name_words: dict[str, list[int]] = field(default_factory=dict)
    text_words: dict[str, list[int]] = field(default_factory=dict)
    joined: str = ""
    starts: list[int] = field(default_factory=list)  # offset in ``joined`` of each outline entry
    outline_ids: list[int] = field(default_factory=list)  # the entry id of each offset in ``starts``
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)

    def set(self, path: str, artifact: str, entries: list[_Entry] | None) -> None:
        if entries is None:
            self.by_artifact.pop((path, artifact), None)
        else:
            self.by_artifact[(path, artifact)] = entries
        self.dirty = True

    def build_lookups(self) -> None:
        entries: list[_Entry] = []
        exact: dict[str, list[int]] = {}
        name_words: dict[str, list[int]] = {}
        text_words: dict[str, list[int]] = {}
        notes: dict[tuple[str, str], str] = {}
        names: list[tuple[str, int]] = []
        joined: list[str] = []
        starts: list[int] = []
        outline_ids: list[int] = []
        at = 0
        for (path, _artifact), group in sorted(self.by_artifact.items()):
            for e in group:
                i = len(entries)
                entries.append(e)
                if e.artifact == "annotate" and e.symbol and e.text:
                    notes[(path, e.symbol)] = e.text
                if e.artifact == "outline":
                    low_name, low_qn = e.name.lower(), (e.symbol or "").lower()
                    exact.setdefault(low_name, []).append(i)
                    if low_qn != low_name:
                        exact.setdefault(low_qn, []).append(i)
                    names.append((low_name, i))
                    if low_qn != low_name:
                        names.append((low_qn, i))
                    for w in set(split_words(e.symbol or e.name)):
                        name_words.setdefault(w, []).append(i)
                    starts.append(at)
                    outline_ids.append(i)
                    joined.append(low_qn)
                    at += len(low_qn) + 1
                if e.text:
                    for w in set(split_words(e.text)):
                        text_words.setdefault(w, []).append(i)
        names.sort()
        self.entries = entries
        self.exact = exact
        self.sorted_names = [n for n, _ in names]
        self.sorted_ids = [i for _, i in names]
        self.name_words = name_words
        self.text_words = text_words
        self.joined = "\n".join(joined)
        self.starts = starts
        self.outline_ids = outline_ids
        self.notes = notes
        self.paths = sorted({p for p, _ in self.by_artifact})
        self.dirty = False

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "journal": {"ino": self.journal_ino, "offset": self.journal_offset},
            "artifacts": [[p, a, [e.to_row() for e in es]] for (p, a), es in self.by_artifact.items()],
        }

    @classmethod
    def from_json(cls, raw: Any) -> _Index | None:
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            return None
        try:
            index = cls(journal_ino=int(raw["journal"]["ino"]), journal_offset=int(raw["journal"]["offset"]))
            for path, artifact, rows in raw["artifacts"]:
                index.by_artifact[(path, artifact)] = [_Entry(path, artifact, *row) for row in rows]
        except (KeyError, TypeError, ValueError):
            return None
        return index


class SearchIndex:
    """Search one store; thread-safe, shared by every caller in this process (``search_index_for``)."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._cache_file = store.root / "cache" / CACHE_NAME
        self._journal = store.root / "cache" / JOURNAL
        self._index: _Index | None = None
        self._lock = threading.Lock()

    # -- keeping the index true ---------------------------------------------------------------

    def _rebuild(self) -> _Index:
        """Every artifact file, read once; the journal position taken first, so that changes made
        while reading are applied again afterwards (applying a change twice is harmless)."""
        ino, size = _journal_state(self._journal)
        index = _Index(journal_ino=ino, journal_offset=size)
        for key, kinds in self.store.iter_keys(NAMESPACE):
            for kind in kinds:
                self._load(index, key, kind)
        return index

    def _load(self, index: _Index, key: str, kind: str) -> None:
        if kind not in {"outline", "annotate"} and kind not in _TEXT_KINDS:
            return
        record = self.store.get_or_none(NAMESPACE, key, kind)
        index.set(key, kind, _entries_of(key, kind, record.doc.get("content")) if record else None)

    def _current(self) -> _Index:
        index = self._index
        if index is None:
            index = self._from_cache() or self._rebuild()
            self._index = index
            self._catch_up(index)
            self._persist(index)
            return index
        if self._catch_up(index) >= PERSIST_EVERY:
            self._persist(index)
        return self._index or index

    def _from_cache(self) -> _Index | None:
        try:
            return _Index.from_json(read_json(self._cache_file))
        except (OSError, ValueError):
            return None

    def _catch_up(self, index: _Index) -> int:
        """Apply the journal lines written since the index was last true; the count applied."""
        ino, size = _journal_state(self._journal)
        if ino != index.journal_ino or size < index.journal_offset:
            if ino == 0 and index.journal_ino == 0:
                return 0
            # Another journal than the one this index followed: start again from the files.
            fresh = self._rebuild()
            self._index = fresh
            self._persist(fresh)
            return 0
        if size == index.journal_offset:
            return 0
        with self._journal.open("rb") as handle:
            handle.seek(index.journal_offset)
            raw = handle.read(size - index.journal_offset)
        end = raw.rfind(b"\n") + 1  # a line still being written is read next time
        changed: set[tuple[str, str]] = set()
        for line in raw[:end].splitlines():
            with contextlib.suppress(ValueError, TypeError, KeyError):
                item = loads_json(line)
                if item.get("ns") == NAMESPACE:
                    changed.add((str(item["key"]), str(item["kind"])))
        for key, kind in changed:
            self._load(index, key, kind)
        index.journal_offset += end
        index.applied += len(changed)
        return index.applied

    def _persist(self, index: _Index) -> None:
        with contextlib.suppress(OSError):
            atomic_write_json(self._cache_file, index.to_json(), durable=False)
        index.applied = 0

    # -- answering ------------------------------------------------------------------------------

    def count(self, directory: str, kind: str | None = None) -> int:
        """Paths under ``directory`` with an artifact (of ``kind``), from the index."""
        with self._lock:
            index = self._current()
            if kind is not None:
                return sum(1 for p, a in index.by_artifact if a == kind and _under(p, directory))
            if index.dirty:
                index.build_lookups()
            if directory == ".":
                return len(index.paths)
            lo = bisect.bisect_left(index.paths, directory)
            hi = bisect.bisect_left(index.paths, directory + "0")  # "/" < "0": every "dir/…" lies before
            return hi - lo

    def search(
        self,
        query: str,
        kind: str | None = None,
        directory: str = ".",
        limit: int = 20,
        cursor: str | None = None,
        answer_chars: int = 20_000,
    ) -> dict[str, Any]:
        q = " ".join(query.split())
        if not q:
            raise InvalidArgument(
                "query is empty: give a symbol name or some words",
                details={"field": "query", "rule": "non-empty"},
            )
        if len(q) > QUERY_CHARS:
            raise InvalidArgument(
                f"query is {len(q)} characters; at most {QUERY_CHARS}",
                details={"field": "query", "rule": f"at most {QUERY_CHARS} characters"},
            )
        start = _decode_cursor(cursor, q, kind, directory) if cursor else 0
        with self._lock:
            index = self._current()
            if index.dirty:
                index.build_lookups()
            ranked = _rank(index, q, kind, directory)
            hits: list[dict[str, Any]] = []
            used = 0
            room = answer_chars - 1_000
            pos = start
            while pos < len(ranked) and len(hits) < limit:
                tier, i = ranked[pos]
                entry = index.entries[i]
                if not self.store.artifact_file(NAMESPACE, entry.path, entry.artifact).is_file():
                    pos += 1  # removed behind the journal's back: never answered
                    continue
                hit = _hit(index, entry, MATCHES[tier])
                size = len(json.dumps(hit, ensure_ascii=False)) + 1
                if hits and used + size > room:
                    break
                hits.append(hit)
                used += size
                pos += 1
        more = pos < len(ranked)
        return {
            "query": q,
            "total": len(ranked),
            "total_is_capped": len(ranked) >= CANDIDATE_CAP,
            "count": len(hits),
            "results": hits,
            "next_cursor": _encode_cursor(pos, q, kind, directory) if more else None,
        }


def _rank(index: _Index, q: str, kind: str | None, directory: str) -> list[tuple[int, int]]:
    low = q.lower()
    words = split_words(q)
    best: dict[int, int] = {}

    def add(ids: Any, tier: int) -> None:
        for i in ids:
            if len(best) >= CANDIDATE_CAP and i not in best:
                return
            if best.get(i, 99) > tier:
                best[i] = tier

    add(index.exact.get(low, ()), _TIER["exact-name"])
    lo = bisect.bisect_left(index.sorted_names, low)
    hi = bisect.bisect_left(index.sorted_names, low + "\uffff")
    add(index.sorted_ids[lo : min(hi, lo + CANDIDATE_CAP)], _TIER["prefix"])
    if words:
        add(_all_words(index.name_words, words), _TIER["word"])
    if " " not in low:
        found: list[int] = []
        at = index.joined.find(low)
        while at >= 0 and len(found) < CANDIDATE_CAP:
            n = bisect.bisect_right(index.starts, at) - 1
            found.append(n)
            at = index.joined.find(low, index.starts[n + 1] if n + 1 < len(index.starts) else len(index.joined))
        add((index.outline_ids[n] for n in found), _TIER["substring"])
    if words:
        for i in _all_words(index.text_words, words):
            e = index.entries[i]
            tier = "doc" if e.artifact == "outline" else "note" if e.artifact == "annotate" else "summary"
            add((i,), _TIER[tier])
    out: list[tuple[int, int]] = []
    for i, tier_of_i in best.items():
        e = index.entries[i]
        if directory != "." and not _under(e.path, directory):
            continue
        if kind is not None and kind not in (e.kind, e.artifact):
            continue
        out.append((tier_of_i, i))
    out.sort(key=lambda t: _order(index.entries[t[1]], t[0], q))
    return out


def _order(e: _Entry, tier: int, q: str) -> tuple[Any, ...]:
    definition = 0 if e.artifact == "outline" else 1
    exact_case = 0 if q in (e.name, e.symbol) else 1
    return (tier, definition, exact_case, e.path.count("/"), len(e.path), e.path, e.start or 0, e.symbol or "")


def _all_words(table: dict[str, list[int]], words: list[str]) -> list[int]:
    lists = [table.get(w) for w in dict.fromkeys(words)]
    if not lists or any(lst is None for lst in lists):
        return []
    present = sorted((lst for lst in lists if lst is not None), key=len)
    found = set(present[0])
    for lst in present[1:]:
        found.intersection_update(lst)
        if not found:
            break
    return sorted(found)


def _hit(index: _Index, e: _Entry, match: str) -> dict[str, Any]:
    note = index.notes.get((e.path, e.symbol)) if e.symbol and e.artifact == "outline" else None
    text = note or e.text
    first = next((line.strip() for line in text.splitlines() if line.strip()), "") if text else ""
    if first.startswith("#"):
        first = first.lstrip("# ")
    return {
        "path": e.path,
        "symbol": e.symbol,
        "kind": e.kind,
        "start_line": e.start,
        "end_line": e.end,
        "signature": e.signature,
        "match": match,
        "from": e.artifact,
        "snippet": first[:SNIPPET_CHARS] + ("…" if len(first) > SNIPPET_CHARS else ""),
    }


def _under(path: str, directory: str) -> bool:
    return directory in (".", path) or path.startswith(directory + "/")


def _journal_state(journal: Path) -> tuple[int, int]:
    try:
        st = journal.stat()
    except OSError:
        return 0, 0
    return st.st_ino, st.st_size


def _query_tag(q: str, kind: str | None, directory: str) -> str:
    return hashlib.blake2b(f"{q}\0{kind}\0{directory}".encode(), digest_size=6).hexdigest()


def _encode_cursor(pos: int, q: str, kind: str | None, directory: str) -> str:
    raw = json.dumps({"at": pos, "q": _query_tag(q, kind, directory)})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_cursor(cursor: str, q: str, kind: str | None, directory: str) -> int:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        pos, tag = int(value["at"]), str(value["q"])
    except (ValueError, KeyError, TypeError):
        pos, tag = -1, ""
    if pos < 0 or tag != _query_tag(q, kind, directory):
        raise InvalidArgument(
            "cursor is not one this search issued; pass next_cursor unchanged, with the same query, kind and directory",
            details={"field": "cursor", "rule": "opaque cursor of the same search"},
        )
    return pos


_INDEXES: dict[str, SearchIndex] = {}
_INDEXES_GUARD = threading.Lock()


def search_index_for(store: ArtifactStore) -> SearchIndex:
    """The one index of ``store``'s root in this process."""
    key = str(store.root)
    with _INDEXES_GUARD:
        index = _INDEXES.get(key)
        if index is None or (index.store is not store and index.store.workspace != store.workspace):
            index = _INDEXES[key] = SearchIndex(store)
        return index
