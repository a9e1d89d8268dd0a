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
qualified name; then all the query's words in a docstring, a note or a summary; and when all
that finds nothing (or ``kind="code"`` asks for it), the lines of code that hold the query
(``match: "code"``, as grep would find them, each naming the symbol it lies in). Within a tier,
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

from llmem.core.errors import InvalidArgument
from llmem.core.fsutil import atomic_write_json, loads_json, read_json
from llmem.core.store import JOURNAL, ArtifactStore

__all__ = ["MATCHES", "SearchIndex", "search_index_for", "split_words"]

NAMESPACE = "llmem"
FORMAT = 1
CACHE_NAME = "search-index.json"
#: The order of the tiers, best first (the ``match`` of each hit).
MATCHES = ("exact-name", "prefix", "word", "substring", "doc", "note", "summary", "code")
_TIER = {m: n for n, m in enumerate(MATCHES)}
#: Candidates ranked per query: enough for many pages, bounded for speed.
CANDIDATE_CAP = 5_000
SNIPPET_CHARS = 160
QUERY_CHARS = 200
#: Lines a code search answers at most, from one file at most, and how long it may read files.
CODE_HITS = 100
CODE_HITS_PER_FILE = 5
CODE_SECONDS = 1.0
#: Journal lines applied before the cache file is written again.
PERSIST_EVERY = 2_000
#: Changed artifacts past which catching up builds the lookups once instead of change by change.
BULK_CHANGES = 1_000

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

    def order(self) -> tuple[Any, ...]:
        """How it ranks among hits of one tier: definitions first, then shallow and short paths."""
        return (
            0 if self.artifact == "outline" else 1,
            self.path.count("/"),
            len(self.path),
            self.path,
            self.start or 0,
        )


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


#: Entries added since the last full build, past which the lookups are built again from scratch.
DELTA_REBUILD = 20_000


@dataclass
class _Index:
    """The in-memory index: entries by artifact, and lookups kept up to date entry by entry.

    An artifact that changes marks its old entries dead (``None``) and appends new ones; the
    lookups take the new ids at once (sets, sorted lists kept sorted, a small ``delta`` scanned
    for substrings), so a change costs about its own size. Dead ids are skipped when read; the
    lookups are built again from scratch when the dead or the delta grow large.
    """

    by_artifact: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    entries: list[_Entry | None] = field(default_factory=list)
    journal_ino: int = 0
    journal_offset: int = 0
    applied: int = 0
    dead: int = 0
    exact: dict[str, list[int]] = field(default_factory=dict)
    sorted_names: list[str] = field(default_factory=list)
    sorted_ids: list[int] = field(default_factory=list)
    name_words: dict[str, set[int]] = field(default_factory=dict)
    text_words: dict[str, set[int]] = field(default_factory=dict)
    joined: str = ""
    starts: list[int] = field(default_factory=list)  # offset in ``joined`` of each id in ``joined_ids``
    joined_ids: list[int] = field(default_factory=list)
    delta: list[tuple[str, int]] = field(default_factory=list)  # outline entries added since ``joined``
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    path_counts: dict[str, int] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)  # the keys of ``path_counts``, sorted

    def set(self, path: str, artifact: str, entries: list[_Entry] | None) -> None:
        old = self.by_artifact.pop((path, artifact), None)
        if old is not None:
            for i in old:
                self._forget(i)
            self._count_path(path, -1)
        if entries is not None:  # an artifact with nothing to search still counts as a path's
            self.by_artifact[(path, artifact)] = [self._add(e) for e in entries]
            self._count_path(path, +1)
        if self.dead > max(50_000, len(self.entries) // 3) or len(self.delta) > DELTA_REBUILD:
            self.build_lookups()

    def _count_path(self, path: str, step: int) -> None:
        n = self.path_counts.get(path, 0) + step
        if n > 0:
            if path not in self.path_counts:
                bisect.insort(self.paths, path)
            self.path_counts[path] = n
        elif path in self.path_counts:
            del self.path_counts[path]
            at = bisect.bisect_left(self.paths, path)
            if at < len(self.paths) and self.paths[at] == path:
                del self.paths[at]

    def _forget(self, i: int) -> None:
        e = self.entries[i]
        if e is None:
            return
        self.entries[i] = None
        self.dead += 1
        if e.artifact == "outline":
            for w in set(split_words(e.symbol or e.name)):
                self.name_words.get(w, set()).discard(i)
        if e.text:
            for w in set(split_words(e.text)):
                self.text_words.get(w, set()).discard(i)
        if e.artifact == "annotate" and e.symbol:
            self.notes.pop((e.path, e.symbol), None)

    def _add(self, e: _Entry, *, bulk: bool = False) -> int:
        i = len(self.entries)
        self.entries.append(e)
        if e.artifact == "annotate" and e.symbol and e.text:
            self.notes[(e.path, e.symbol)] = e.text
        if e.artifact == "outline":
            low_name, low_qn = e.name.lower(), (e.symbol or "").lower()
            self.exact.setdefault(low_name, []).append(i)
            if low_qn != low_name:
                self.exact.setdefault(low_qn, []).append(i)
            if not bulk:
                for low in {low_name, low_qn}:
                    at = bisect.bisect_left(self.sorted_names, low)
                    self.sorted_names.insert(at, low)
                    self.sorted_ids.insert(at, i)
                self.delta.append((low_qn, i))
            for w in split_words(e.symbol or e.name):
                self.name_words.setdefault(w, set()).add(i)
        if e.text:
            for w in split_words(e.text):
                self.text_words.setdefault(w, set()).add(i)
        return i

    def build_lookups(self) -> None:
        """Every lookup from the live entries, from scratch (renumbering them)."""
        live = [(key, [self.entries[i] for i in ids]) for key, ids in sorted(self.by_artifact.items())]
        self.entries, self.dead, self.by_artifact = [], 0, {}
        self.exact, self.name_words, self.text_words, self.notes, self.delta = {}, {}, {}, {}, []
        names: list[tuple[str, int]] = []
        joined: list[str] = []
        starts: list[int] = []
        joined_ids: list[int] = []
        at = 0
        for key, group in live:
            ids = []
            for e in group:
                if e is None:
                    continue
                i = self._add(e, bulk=True)
                ids.append(i)
                if e.artifact == "outline":
                    low_name, low_qn = e.name.lower(), (e.symbol or "").lower()
                    names.append((low_name, i))
                    if low_qn != low_name:
                        names.append((low_qn, i))
                    starts.append(at)
                    joined_ids.append(i)
                    joined.append(low_qn)
                    at += len(low_qn) + 1
            self.by_artifact[key] = ids
        names.sort()
        self.sorted_names = [n for n, _ in names]
        self.sorted_ids = [i for _, i in names]
        self.joined = "\n".join(joined)
        self.starts = starts
        self.joined_ids = joined_ids
        self.path_counts = {}
        for path, _artifact in self.by_artifact:
            self.path_counts[path] = self.path_counts.get(path, 0) + 1
        self.paths = sorted(self.path_counts)

    def to_json(self) -> dict[str, Any]:
        rows = [
            [p, a, [e.to_row() for e in (self.entries[i] for i in ids) if e is not None]]
            for (p, a), ids in self.by_artifact.items()
        ]
        return {
            "format": FORMAT,
            "journal": {"ino": self.journal_ino, "offset": self.journal_offset},
            "artifacts": rows,
        }

    def load_group(self, path: str, artifact: str, group: list[_Entry]) -> None:
        """Add one artifact's entries before :meth:`build_lookups` (a bulk load)."""
        self.by_artifact[(path, artifact)] = list(range(len(self.entries), len(self.entries) + len(group)))
        self.entries.extend(group)

    @classmethod
    def from_json(cls, raw: Any) -> _Index | None:
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            return None
        try:
            index = cls(journal_ino=int(raw["journal"]["ino"]), journal_offset=int(raw["journal"]["offset"]))
            for path, artifact, rows in raw["artifacts"]:
                index.load_group(path, artifact, [_Entry(path, artifact, *row) for row in rows])
        except (KeyError, TypeError, ValueError):
            return None
        index.build_lookups()
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
                group = self._entries(key, kind)
                if group is not None:
                    index.load_group(key, kind, group)
        index.build_lookups()
        return index

    def _entries(self, key: str, kind: str) -> list[_Entry] | None:
        """What ``kind`` of ``key`` holds to search; ``None`` when the artifact is gone."""
        if kind not in {"outline", "annotate"} and kind not in _TEXT_KINDS:
            return [] if self.store.artifact_file(NAMESPACE, key, kind).is_file() else None
        record = self.store.get_or_none(NAMESPACE, key, kind)
        return _entries_of(key, kind, record.doc.get("content")) if record else None

    def _load(self, index: _Index, key: str, kind: str) -> None:
        index.set(key, kind, self._entries(key, kind))

    def _current(self) -> _Index:
        index = self._index
        persist = False
        if index is None:
            cached = self._from_cache()
            index = self._index = cached or self._rebuild()
            persist = self._catch_up(index) > 0 or cached is None
        else:
            persist = self._catch_up(index) >= PERSIST_EVERY
        current = self._index or index  # catching up may have replaced it (another journal: a rebuild)
        if persist:
            self._persist(current)
        return current

    def _from_cache(self) -> _Index | None:
        try:
            return _Index.from_json(read_json(self._cache_file))
        except (OSError, ValueError):
            return None

    def _catch_up(self, index: _Index) -> int:
        """Apply the journal lines written since the index was last true; the count applied."""
        ino, size = _journal_state(self._journal)
        if index.journal_ino == 0 and ino != 0 and index.journal_offset == 0:
            index.journal_ino = ino  # the journal began after the index was built: read it all
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
        if len(changed) > BULK_CHANGES:
            # A parse of a large folder: load every changed artifact, then build the lookups once.
            for key, kind in changed:
                index.by_artifact.pop((key, kind), None)
                group = self._entries(key, kind)
                if group is not None:
                    index.load_group(key, kind, group)
            index.build_lookups()
        else:
            for key, kind in changed:
                self._load(index, key, kind)
        index.journal_offset += end
        index.applied += len(changed)
        return index.applied

    def _persist(self, index: _Index) -> None:
        with contextlib.suppress(OSError):
            atomic_write_json(self._cache_file, index.to_json(), durable=False)
        index.applied = 0

    @property
    def loaded(self) -> bool:
        """Whether this process holds the index already (answers then cost milliseconds)."""
        return self._index is not None

    # -- answering ------------------------------------------------------------------------------

    def count(self, directory: str, kind: str | None = None) -> int:
        """Paths under ``directory`` with an artifact (of ``kind``), from the index."""
        with self._lock:
            index = self._current()
            if kind is not None:
                return sum(1 for p, a in index.by_artifact if a == kind and _under(p, directory))
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
            ranked = [] if kind == "code" else _rank(index, q, kind, directory)
            code: list[_Entry] = []
            if (not ranked and kind is None) or kind == "code":
                # Nothing by name or words (or code asked for): look in the code itself, as grep
                # would, and name the symbol each line is in.
                code = self._grep(index, q, directory)
            total = len(ranked) + len(code)
            hits: list[dict[str, Any]] = []
            used = 0
            room = answer_chars - 1_000
            pos = start
            while pos < total and len(hits) < limit:
                if pos < len(ranked):
                    tier, i = ranked[pos]
                    entry = index.entries[i]
                    assert entry is not None  # ranked ids are live
                else:
                    tier, entry = _TIER["code"], code[pos - len(ranked)]
                if (
                    entry.artifact != "source"
                    and not self.store.artifact_file(NAMESPACE, entry.path, entry.artifact).is_file()
                ):
                    pos += 1  # removed behind the journal's back: never answered
                    continue
                hit = _hit(index, entry, MATCHES[tier])
                size = len(json.dumps(hit, ensure_ascii=False)) + 1
                if hits and used + size > room:
                    break
                hits.append(hit)
                used += size
                pos += 1
        more = pos < total
        return {
            "query": q,
            "total": total,
            "total_is_capped": len(ranked) >= CANDIDATE_CAP or len(code) >= CODE_HITS,
            "count": len(hits),
            "results": hits,
            "next_cursor": _encode_cursor(pos, q, kind, directory) if more else None,
        }

    def _grep(self, index: _Index, q: str, directory: str) -> list[_Entry]:
        """Lines of the outlined files under ``directory`` that hold ``q`` (any case), each as an
        entry naming the innermost symbol it lies in; bounded by :data:`CODE_HITS` and time."""
        import time

        needle = q.lower().encode("utf-8")
        found: list[_Entry] = []
        deadline = time.monotonic() + CODE_SECONDS
        lo = 0 if directory == "." else bisect.bisect_left(index.paths, directory)
        for path in index.paths[lo:]:
            if directory != "." and not _under(path, directory):
                if path > directory + "/":
                    break
                continue
            ids = index.by_artifact.get((path, "outline"))
            if ids is None:
                continue
            try:
                data = (self.store.workspace / path).read_bytes()
            except OSError:
                continue
            low = data.lower()
            at = low.find(needle)
            shown = 0
            while at >= 0 and shown < CODE_HITS_PER_FILE:
                line = low.count(b"\n", 0, at) + 1
                start = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                text = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace").strip()
                inner = _innermost(index, ids, line)
                found.append(
                    _Entry(
                        path,
                        "source",
                        inner.symbol if inner else None,
                        inner.name if inner else "",
                        inner.kind if inner else "line",
                        line,
                        line,
                        inner.signature if inner else None,
                        text,
                    )
                )
                shown += 1
                at = low.find(needle, end if end >= 0 else len(low))
            if len(found) >= CODE_HITS or time.monotonic() > deadline:
                break
        return found


def _innermost(index: _Index, ids: list[int], line: int) -> _Entry | None:
    best: _Entry | None = None
    for i in ids:
        e = index.entries[i]
        if e is None or e.start is None or e.end is None or not e.start <= line <= e.end:
            continue
        if best is None or (e.start or 0) >= (best.start or 0):
            best = e
    return best


def _rank(index: _Index, q: str, kind: str | None, directory: str) -> list[tuple[int, int]]:
    low = q.lower()
    words = split_words(q)
    best: dict[int, int] = {}
    entries = index.entries

    def add(ids: Any, tier: int) -> None:
        for i in ids:
            if entries[i] is None:
                continue
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
            found.append(index.joined_ids[n])
            at = index.joined.find(low, index.starts[n + 1] if n + 1 < len(index.starts) else len(index.joined))
        found += [i for name, i in index.delta if low in name]
        add(found, _TIER["substring"])
    if words:
        for i in _all_words(index.text_words, words):
            e = entries[i]
            if e is None:
                continue
            tier = "doc" if e.artifact == "outline" else "note" if e.artifact == "annotate" else "summary"
            add((i,), _TIER[tier])
    keyed: list[tuple[int, int, int, int]] = []
    for i, tier_of_i in best.items():
        e = entries[i]
        if e is None:
            continue
        if directory != "." and not _under(e.path, directory):
            continue
        if kind is not None and kind not in (e.kind, e.artifact):
            continue
        # Ids follow path order (entries made since the last build come after): a cheap, stable
        # tie-break that keeps a file's symbols together in line order.
        keyed.append((tier_of_i, 0 if q in (e.name, e.symbol) else 1, 0 if e.artifact == "outline" else 1, i))
    keyed.sort()
    return [(tier, i) for tier, _, _, i in keyed]


def _all_words(table: dict[str, set[int]], words: list[str]) -> list[int]:
    """Ids holding every word (at most :data:`CANDIDATE_CAP`, the lowest first)."""
    sets = [table.get(w) for w in dict.fromkeys(words)]
    if not sets or any(not found for found in sets):
        return []
    present = sorted((found for found in sets if found), key=len)
    common = present[0].intersection(*present[1:]) if len(present) > 1 else present[0]
    return sorted(common)[:CANDIDATE_CAP]


def _hit(index: _Index, e: _Entry, match: str) -> dict[str, Any]:
    note = index.notes.get((e.path, e.symbol)) if e.symbol and e.artifact == "outline" else None
    text = note or e.text
    first = next((line.strip() for line in text.splitlines() if line.strip()), "") if text else ""
    if first.startswith("#"):
        first = first.lstrip("# ")
    where = e
    if e.artifact == "annotate" and e.symbol:
        # A note on a symbol: say where the symbol is, as its outline does.
        for i in index.by_artifact.get((e.path, "outline"), ()):
            candidate = index.entries[i]
            if candidate is not None and candidate.symbol == e.symbol:
                where = candidate
                break
    return {
        "path": e.path,
        "symbol": e.symbol,
        "kind": where.kind if where is not e else e.kind,
        "start_line": where.start,
        "end_line": where.end,
        "signature": where.signature,
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
