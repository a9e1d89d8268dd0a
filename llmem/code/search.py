"""Search over the artifact store and the workspace's text: symbols by name, the words of docs,
notes and summaries, and the lines of every text file.

The index is a SQLite database in the store's cache (:mod:`llmem.code.index_db`), a copy of the
artifact files kept true by the change journal every process writes; the lines of the workspace's
text files are in the same database (:mod:`llmem.code.lines`). Nothing is loaded into memory: the
first search of a new process costs what any other does. Hits are checked against the artifact
files before they are answered, so an artifact removed behind the journal's back (``rm``) is never
shown.

What a search covers is its ``scope``:

- ``symbols``: names of symbols, best first: the exact name (or qualified name); a prefix of it;
  all the query's words among the name's camelCase / snake_case parts; a substring of the
  qualified name;
- ``notes``: a docstring (``doc``), a note (``note``) or a summary holding every word of the
  query in one of its forms (:mod:`llmem.code.text_query`), best first by bm25 whatever its
  kind, each hit saying ``why`` (the field, the words that matched); when none holds them all,
  those lacking one of three words or more;
- ``lines``: the lines of every text file the walk keeps (source, Dockerfile, YAML, Markdown…)
  that hold the query, ASCII case ignored, as ``grep -i`` finds them (``match: "code"``), each
  naming the symbol it lies in;
- ``files``: the files whose path holds every word of the query, ASCII case ignored
  (``Dockerfile``, ``workflow``, ``.python-version``), the file named exactly so first
  (``match: "file"``);
- ``auto`` (the default): ``symbols`` then ``notes``; ``files`` when neither finds anything,
  ``lines`` when that finds nothing either, and then the notes lacking one word.

Lock files (``uv.lock``, ``package-lock.json`` … :data:`llmem.code.lines.LOCK_FILES`) are left out
of ``lines`` unless ``directory`` is the lock file itself; the answer counts what they held
(``lock_files_skipped``).

Within a tier of names, an exact-case name first, then index order (path order, then later changes). Every
answer says the exact ``total`` of its hits; pages (``cursor``) follow one order and never
repeat or skip a hit while the data stays the same.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, Protocol, get_args

from llmem.code.freshness import OutlineFreshness, Refresh, Refresher
from llmem.code.index_db import (
    ENTRY_COLUMNS,
    NAMESPACE,
    TEXT_KINDS,
    Entry,
    IndexDb,
    entry_of,
    split_words,
    under_sql,
)
from llmem.code.lines import LineIndex
from llmem.code.outline import DATA_KINDS, detect_language
from llmem.code.search_gone import IDENTIFIER
from llmem.code.text_query import MARK_END, MARK_START, QueryTerms, matched_words
from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument
from llmem.core.paths import resolve_in_workspace
from llmem.core.store import ArtifactStore

__all__ = ["MATCHES", "SCOPES", "Scope", "SearchIndex", "Searcher", "search_index_for", "split_words"]

#: The order of the tiers, best first (the ``match`` of each hit).
MATCHES = ("exact-name", "prefix", "word", "substring", "doc", "note", "summary", "file", "code")
_TIER = {m: n for n, m in enumerate(MATCHES)}
Scope = Literal["auto", "symbols", "notes", "files", "lines"]
SCOPES: tuple[str, ...] = get_args(Scope)
SNIPPET_CHARS = 160
QUERY_CHARS = 200
_NOTE_TIER = {"outline": _TIER["doc"], "annotate": _TIER["note"]}
_TEXT_MATCHES = frozenset({"doc", "note", "summary"})
#: The shortest name whose line matches an 'auto' search counts when no symbol is named so.
NAME_CHARS = 3


class SearchIndex:
    """Search one store; thread-safe, shared by every caller in this process (``search_index_for``)."""

    def __init__(self, store: ArtifactStore, max_file_bytes: int = 1_000_000, *, trigram: bool | None = None) -> None:
        self.store = store
        self.db = IndexDb(store, trigram=trigram)
        self.lines = LineIndex(self.db, max_file_bytes)
        self._lock = threading.Lock()
        self._opened = False
        #: Which outlines differ from their files, and bringing them up to date (the one place).
        self.freshness = OutlineFreshness(store, self.db, self._run)

    def _conn(self) -> sqlite3.Connection:
        conn = self.db.connection()
        self.db.catch_up(conn)
        self._opened = True
        return conn

    def _run(self, fn: Any) -> Any:
        """``fn(conn)`` on a current database; one that turns out unreadable is rebuilt, once."""
        with self._lock:
            try:
                return fn(self._conn())
            except sqlite3.DatabaseError as exc:
                if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                    raise
                self.db.discard(exc)
                return fn(self._conn())

    @property
    def loaded(self) -> bool:
        """Whether this process has the index open (counts then cost milliseconds)."""
        return self._opened

    def catch_up(self) -> None:
        """Bring the database up to the store's change journal now (a search would do it first)."""
        self._run(lambda _conn: None)

    def index_lines(self) -> None:
        """Index the lines of every text file now (what searches otherwise do bit by bit)."""
        self._run(self.lines.index_all)

    # -- answering ------------------------------------------------------------------------------

    def count(self, directory: str, kind: str | None = None) -> int:
        """Paths under ``directory`` with an artifact (of ``kind``), from the index."""
        where, args = under_sql("path", directory)

        def run(conn: sqlite3.Connection) -> int:
            if kind is not None:
                sql = f"SELECT count(*) FROM artifacts WHERE artifact = ? AND {where}"
                return int(conn.execute(sql, [kind, *args]).fetchone()[0])
            return int(conn.execute(f"SELECT count(DISTINCT path) FROM artifacts WHERE {where}", args).fetchone()[0])

        return int(self._run(run))

    def search(
        self,
        query: str,
        kind: str | None = None,
        directory: str = ".",
        limit: int = 20,
        cursor: str | None = None,
        answer_chars: int = 20_000,
        scope: str = "auto",
        mark: Callable[[str], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """One page of hits; ``mark(path)`` adds to each hit of a symbol, note or line what it
        must say beside itself (that its file changed since it was outlined)."""
        q = " ".join(query.split())
        if not q:
            raise InvalidArgument(
                "query: give at least one character (a name, words, a line's text or a file name); "
                "to list files use list_artifacts(directory=…)",
                details={"field": "query", "rule": "at least one character"},
                next_action="Pass a query, or call list_artifacts(directory='.') to list files.",
            )
        if len(q) > QUERY_CHARS:
            raise InvalidArgument(
                f"query is {len(q)} characters; at most {QUERY_CHARS}",
                details={"field": "query", "rule": f"at most {QUERY_CHARS} characters"},
            )
        if kind == "code":  # the name of the lines scope before there were scopes
            scope, kind = "lines", None
        if scope not in SCOPES:
            raise InvalidArgument(
                f"scope {scope!r} is not one of {', '.join(SCOPES)}",
                details={"field": "scope", "rule": "one of the scopes", "allowed": list(SCOPES)},
            )
        if scope in ("lines", "files") and kind is not None:
            raise InvalidArgument(
                f"kind {kind!r} filters symbols and notes; scope={scope!r} searches "
                + ("lines of files" if scope == "lines" else "file names"),
                details={"field": "kind", "rule": f"not with scope={scope!r}"},
                next_action="Drop kind, or search with scope='symbols'.",
            )
        tag = _query_tag(q, kind, directory, scope)
        start = _decode_cursor(cursor, tag) if cursor else 0
        return dict(
            self._run(lambda conn: self._answer(conn, q, kind, directory, scope, start, limit, answer_chars, mark))
        )

    def _answer(
        self,
        conn: sqlite3.Connection,
        q: str,
        kind: str | None,
        directory: str,
        scope: str,
        start: int,
        limit: int,
        answer_chars: int,
        mark: Callable[[str], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        why: Why = {}
        segments = (
            _rank(conn, q, kind, directory, scope, self.db.trigram, why)
            if scope in ("auto", "symbols", "notes")
            else []
        )
        ranked = [i for _, seg in segments for i in seg] if len(segments) > 1 else (segments or [(0, [])])[0][1]
        # Files by name or path: "Dockerfile", "workflow", ".python-version". In auto only when no
        # symbol or note matched: a search answered from the artifacts never walks the workspace.
        named = (
            self.lines.files_named(conn, q, directory)
            if kind is None and (scope == "files" or (scope == "auto" and not ranked))
            else []
        )
        lines_total = 0
        line_entries: list[Entry] = []
        skipped: dict[str, int] = {}
        searched = scope
        if scope == "lines" or (scope == "auto" and not ranked and not named and kind is None):
            searched = "lines" if scope == "lines" else "auto: lines (no symbol, doc, note or file name matched)"
            before = len(ranked) + len(named)
            lines_total, found, skipped = self.lines.search(conn, q, directory, max(0, start - before), limit)
            line_entries = [_line_entry(conn, h.path, h.line, h.text) for h in found]
        if scope == "auto" and kind is None and not ranked and not named and not lines_total:
            # The last resort: docs, notes and summaries that lack one of three words or more.
            segments = _rank(conn, q, kind, directory, "notes", self.db.trigram, why, partial=True)
            ranked = segments[0][1] if segments else []
            if ranked:
                searched = "auto: notes lacking one word (nothing matched every word, a file name or a line)"
        about_name: dict[str, Any] = {}
        if (
            scope == "auto"
            and kind is None
            and len(q) >= NAME_CHARS
            and IDENTIFIER.fullmatch(q)
            and not _exact(segments)
        ):
            # No symbol is named so: a prefix or a doc word must not hide the lines that still use
            # it (a name renamed away), nor what the store remembers of it. (A name of one or two
            # characters is in most lines: counting them would say nothing and cost a scan.)
            from llmem.code.search_gone import name_report

            about_name = name_report(self.store, self.lines, conn, q, directory)
        total = len(ranked) + len(named) + lines_total
        rows = _rows(conn, ranked[start : start + limit])
        marked = _highlighted(conn, [i for i in ranked[start : start + limit] if i in why], why)
        hits: list[dict[str, Any]] = []
        used = 0
        room = answer_chars - 1_000
        pos = start
        line_at = 0
        signed: set[tuple[str, str | None]] = set()
        signature_once = False
        while pos < total and len(hits) < limit:
            if pos < len(ranked):
                i = ranked[pos]
                if i not in rows:  # past the page's rows: hits were skipped
                    rows.update(_rows(conn, ranked[pos : pos + limit]))
                    marked.update(_highlighted(conn, [j for j in ranked[pos : pos + limit] if j in why], why))
                entry, tier = rows[i], _tier_at(segments, pos)
                match = MATCHES[_NOTE_TIER.get(entry.artifact, _TIER["summary"]) if tier == BY_ARTIFACT else tier]
                reason = _why(entry, marked.get(i, ""), why[i][1]) if i in why and match in _TEXT_MATCHES else None
            elif pos < len(ranked) + len(named):
                reason = None
                path = named[pos - len(ranked)]
                entry, match = Entry(path, "source", None, path.rsplit("/", 1)[-1], "file", 1, 1, None, path), "file"
            elif line_at < len(line_entries):
                reason = None
                entry, match = line_entries[line_at], "code"
                line_at += 1
            else:
                break
            if (
                entry.artifact != "source"
                and not self.store.artifact_file(NAMESPACE, entry.path, entry.artifact).is_file()
            ):
                # Removed behind the journal's back: skipped, the total says what the index held.
                pos += 1
                continue
            hit = _hit(conn, entry, match, reason)
            if hit["signature"] and (hit["path"], hit["symbol"]) in signed:
                del hit["signature"]  # a symbol's signature once per answer: lines in it repeat no more
                signature_once = True
            signed.add((hit["path"], hit["symbol"]))
            if mark is not None and match != "file":
                hit.update(mark(entry.path))
            size = len(json.dumps(hit, ensure_ascii=False)) + 1
            if hits and used + size > room:
                break
            hits.append(hit)
            used += size
            pos += 1
        more = pos < total
        return {
            "query": q,
            **({"gone": about_name["gone"]} if "gone" in about_name else {}),
            "scope": searched,
            **({"coverage": _coverage(conn, directory)} if searched in ("auto", "symbols", "notes") else {}),
            "total": total,
            **({"lines": about_name["lines"]} if "lines" in about_name else {}),
            "total_is_capped": False,
            "count": len(hits),
            "results": hits,
            **(
                {"signatures": "each symbol's signature is given once, at its first hit here"} if signature_once else {}
            ),
            "next_cursor": _encode_cursor(pos, _query_tag(q, kind, directory, scope)) if more else None,
            **({"left": total - pos} if more else {}),
            **(
                {
                    "lock_files_skipped": {
                        **skipped,
                        "how": "lock files are not searched by default: directory='<the lock file>' searches one",
                    }
                }
                if skipped
                else {}
            ),
        }


#: A run of hits: its tier, or BY_ARTIFACT (the ranked text matches mix doc, note and summary).
Segment = tuple[int, list[int]]
BY_ARTIFACT = -1
#: Why a text hit matched: the match expression that found it and the query words it lacks.
Why = dict[int, tuple[str, list[str]]]


def _rank(
    conn: sqlite3.Connection,
    q: str,
    kind: str | None,
    directory: str,
    scope: str,
    trigram: bool,
    why: Why,
    partial: bool | None = None,
) -> list[Segment]:
    """Every matching entry id once, at its best tier, in answer order: runs of ids by tier; the
    text matches' reasons go into ``why``. With ``partial`` (by default in scope ``notes``), docs,
    notes and summaries lacking one of three words or more come when none has them all."""
    if partial is None:
        partial = scope == "notes"
    low = q.lower()
    words = list(dict.fromkeys(split_words(q)))
    where, args = under_sql("e.path", directory)
    if kind is not None:
        where += " AND (e.kind = ? OR e.artifact = ?)"
        args += [kind, kind]
    segments: list[Segment] = []  # (tier, ids new in it), best tier first
    seen: set[int] | None = None  # made when a second tier comes: one large tier alone needs none

    def add(ids: Any, tier: int) -> None:
        nonlocal seen
        ids = list(ids)
        if not ids:
            return
        if segments:
            if seen is None:
                seen = {i for _, seg in segments for i in seg}
            ids = [i for i in ids if i not in seen]
            seen.update(ids)
        segments.append((tier, ids))

    def ids(sql: str, *params: Any) -> list[int]:
        # One string from SQLite, split here: cheaper than a row object per id on large answers.
        joined = conn.execute(f"SELECT group_concat(id) FROM ({sql})", [*params, *args]).fetchone()[0]
        return list(map(int, joined.split(","))) if joined else []

    if scope in ("auto", "symbols"):
        exact = conn.execute(
            f"SELECT e.id, e.name = ? OR e.symbol = ? FROM entries e WHERE (e.lname = ? OR e.lqn = ?) AND {where}",
            [q, q, low, low, *args],
        ).fetchall()
        exact.sort(key=lambda r: (not r[1], r[0]))
        add((r[0] for r in exact), _TIER["exact-name"])
        top = low + "\U0010ffff"
        add(
            sorted(
                ids(
                    "SELECT e.id FROM entries e WHERE ((e.lname >= ? AND e.lname < ?) OR (e.lqn >= ? AND e.lqn < ?))"
                    f" AND {where}",
                    low,
                    top,
                    low,
                    top,
                )
            ),
            _TIER["prefix"],
        )
        if words:
            match = " AND ".join(f'"{w}"' for w in words)
            add(ids(_fts("name_words", where), match), _TIER["word"])
        if " " not in low:
            if trigram and len(low) >= 3:
                found = ids(_fts("names", where), '"' + low.replace('"', '""') + '"')  # in id order
            else:
                found = ids(
                    f"SELECT e.id FROM entries e WHERE e.lqn IS NOT NULL AND instr(e.lqn, ?) > 0 AND {where} ORDER BY e.id",
                    low,
                )
            add(found, _TIER["substring"])
    terms = QueryTerms(q)
    if scope in ("auto", "notes") and terms:
        # Docs, notes and summaries with every word (in any of its forms), best first by bm25;
        # with none of those, those lacking one word of three or more (text_query.py).
        every = terms.every()
        rows = _text_hits(conn, every, where, args)
        why.update({r[0]: (every, []) for r in rows})
        if not rows and partial:
            for left_out, others in terms.all_but_one():
                lacking = [r for r in _text_hits(conn, others, where, args) if r[0] not in why]
                why.update({r[0]: (others, [left_out]) for r in lacking})
                rows += lacking
            rows.sort(key=lambda r: (r[1], r[0]))
        # One ranked run: each hit's match (doc, note or summary) is its artifact's.
        add([r[0] for r in rows], BY_ARTIFACT)
    return segments


#: The last coverage counted per connection and folder, with the database state it was counted at.
_COVERAGE: dict[tuple[int, str], tuple[tuple[int, int], dict[str, Any]]] = {}


def _coverage(conn: sqlite3.Connection, directory: str) -> dict[str, Any]:
    """What a search of symbols and notes covered under ``directory``: the files outlined, those
    with notes, and (once a search of lines or files has walked the workspace) the files there
    are, so a model knows what was not looked at. Counted again only when the database changed."""
    state = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
    kept = _COVERAGE.get((id(conn), directory))
    if kept is not None and kept[0] == state:
        return dict(kept[1])
    out = _count_coverage(conn, directory)
    _COVERAGE[(id(conn), directory)] = (state, out)
    return dict(out)


def _count_coverage(conn: sqlite3.Connection, directory: str) -> dict[str, Any]:
    where, args = under_sql("path", directory)
    outlined = conn.execute(f"SELECT count(*) FROM artifacts WHERE artifact = 'outline' AND {where}", args)
    noted = conn.execute(
        f"SELECT count(DISTINCT path) FROM artifacts WHERE artifact IN ({', '.join('?' * len(NOTE_ARTIFACTS))}) "
        f"AND {where}",
        [*sorted(NOTE_ARTIFACTS), *args],
    )
    out: dict[str, Any] = {"outlined_files": int(outlined.fetchone()[0]), "files_with_notes": int(noted.fetchone()[0])}
    if conn.execute("SELECT 1 FROM folders LIMIT 1").fetchone() is None:
        out["workspace_files"] = None
        out["means"] = "symbols and notes of outlined files only; scope='lines' searches every file"
        return out
    out["workspace_files"] = int(conn.execute(f"SELECT count(*) FROM files WHERE {where}", args).fetchone()[0])
    missing = [
        str(r[0])
        for r in conn.execute(
            f"SELECT f.path FROM files AS f WHERE {under_sql('f.path', directory)[0]} AND NOT EXISTS "
            "(SELECT 1 FROM artifacts AS a WHERE a.path = f.path AND a.artifact = 'outline')",
            args,
        )
    ]
    # A license, an .svg, a tsconfig.json: no parse outlines those, so no parse is advised for them.
    kinds = Counter(_file_kind(p) for p in missing if detect_language(p) is None)
    parsable = len(missing) - sum(kinds.values())
    # a folder's parse skips hidden folders (.github): those files are outlined one by one
    hidden = sum(1 for p in missing if detect_language(p) is not None and _in_hidden_folder(p, directory))
    out["not_outlined"] = len(missing)
    out["not_outlined_parsable"] = parsable
    if hidden:
        out["not_outlined_in_hidden_folders"] = hidden
    if kinds:
        out["not_outlined_no_outline"] = {
            "count": sum(kinds.values()),
            "by_kind": dict(kinds.most_common(KINDS_SHOWN)),
            **({"kinds_more": len(kinds) - KINDS_SHOWN} if len(kinds) > KINDS_SHOWN else {}),
        }
    out["means"] = (
        "symbols and notes of outlined files only (workspace_files: as the last search of lines or files "
        "saw them; not_outlined_parsable: not parsed yet; not_outlined_no_outline: of a kind no parse outlines, "
        "such as a license or an .svg); "
        + (
            f"generate_artifact(path={directory!r}) outlines the {parsable - hidden} parsable, "
            if parsable > hidden
            else ""
        )
        + (
            f"generate_artifact(path=<the file>) the {hidden} in hidden folders (a folder's parse skips them), "
            if hidden
            else ""
        )
        + "scope='lines' searches every file"
    )
    return out


#: Kinds of files without an outline named in coverage, the commonest first.
KINDS_SHOWN = 10


def _in_hidden_folder(path: str, directory: str) -> bool:
    """Whether a folder between ``directory`` and the file is hidden (``.github``)."""
    inner = path[len(directory) + 1 :] if directory not in ("", ".") and path.startswith(directory + "/") else path
    return any(part.startswith(".") for part in inner.split("/")[:-1])


def _file_kind(path: str) -> str:
    """What a file is for coverage: its extension (``.svg``), else its name (``LICENSE``)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else name


def _text_hits(conn: sqlite3.Connection, expression: str, where: str, args: list[Any]) -> list[tuple[int, float]]:
    """``(id, bm25)`` of the docs, notes and summaries ``expression`` matches under ``where``,
    best first. Nothing else of a hit is read here (what it is comes with the page's rows); and
    as bm25 reads every row holding the query's commonest word (its idf), one hit or none is not
    ranked at all."""
    if where == "1":
        found = [r[0] for r in conn.execute("SELECT rowid FROM text_words WHERE text_words MATCH ?", [expression])]
        ranked = "SELECT rowid, rank FROM text_words WHERE text_words MATCH ? ORDER BY rank, rowid"
    else:
        joined = f"FROM text_words JOIN entries e ON e.id = text_words.rowid WHERE text_words MATCH ? AND {where}"
        found = [r[0] for r in conn.execute(f"SELECT e.id {joined}", [expression, *args])]
        ranked = f"SELECT e.id, bm25(text_words) AS r {joined} ORDER BY r, e.id"
    if len(found) < 2:
        return [(i, 0.0) for i in found]
    return [(int(i), float(r)) for i, r in conn.execute(ranked, [expression, *([] if where == "1" else args)])]


def _exact(segments: list[Segment]) -> bool:
    """Whether a symbol is named exactly as the query (the first tier, when there is one)."""
    return bool(segments) and segments[0][0] == _TIER["exact-name"]


def _tier_at(segments: list[Segment], pos: int) -> int:
    for tier, seg in segments:
        if pos < len(seg):
            return tier
        pos -= len(seg)
    raise IndexError(pos)


def _fts(table: str, where: str) -> str:
    """The ids ``table`` matches, in id order (FTS5 answers in rowid order at no cost)."""
    if where == "1":
        return f"SELECT rowid AS id FROM {table} WHERE {table} MATCH ? ORDER BY rowid"
    return (
        f"SELECT t.rowid AS id FROM {table} t JOIN entries e ON e.id = t.rowid WHERE {table} MATCH ? AND {where}"
        " ORDER BY t.rowid"
    )


def _rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, Entry]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        r[0]: entry_of(r[1:])
        for r in conn.execute(f"SELECT id, {ENTRY_COLUMNS} FROM entries WHERE id IN ({marks})", ids)
    }


def _line_entry(conn: sqlite3.Connection, path: str, line: int, text: str) -> Entry:
    """A line of a file as an entry naming the symbol it lies in, as :func:`enclosing_symbol`
    does: the outline's innermost symbol of code holding it, else of data."""
    data = ",".join(f"'{k}'" for k in sorted(DATA_KINDS))
    inner = conn.execute(
        "SELECT symbol, name, kind, signature FROM entries WHERE path = ? AND artifact = 'outline'"
        f" AND start <= ? AND end_ >= ? ORDER BY kind IN ({data}), start DESC, id DESC LIMIT 1",
        (path, line, line),
    ).fetchone()
    symbol, name, kind, signature = inner if inner else (None, "", "line", None)
    return Entry(path, "source", symbol, name, kind, line, line, signature, text.strip())


def _highlighted(conn: sqlite3.Connection, ids: list[int], why: Why) -> dict[int, str]:
    """The indexed words of each text hit with the matched ones marked (one query per match
    expression of the page: usually one)."""
    out: dict[int, str] = {}
    by_expression: dict[str, list[int]] = {}
    for i in ids:
        by_expression.setdefault(why[i][0], []).append(i)
    for expression, group in by_expression.items():
        marks = ",".join("?" * len(group))
        out.update(
            conn.execute(
                f"SELECT rowid, highlight(text_words, 0, ?, ?) FROM text_words WHERE text_words MATCH ?"
                f" AND rowid IN ({marks})",
                [MARK_START, MARK_END, expression, *group],
            ).fetchall()
        )
    return out


def _why(e: Entry, highlighted: str, lacking: list[str]) -> dict[str, Any]:
    """Why a text hit matched: the field and the words of it that hold the query's words (in
    the forms written there), and the query words it lacks."""
    field = {"outline": "doc", "annotate": "file note" if e.kind == "file-note" else "note"}.get(e.artifact, e.artifact)
    out: dict[str, Any] = {"field": field, "terms": matched_words(highlighted, e.text)}
    if lacking:
        out["lacks"] = lacking
    return out


def _hit(conn: sqlite3.Connection, e: Entry, match: str, why: dict[str, Any] | None = None) -> dict[str, Any]:
    # A hit's snippet is its own text (an outline hit's docstring, a note hit's note); a symbol
    # found by name brings its note beside, when one is written (note: its first line).
    note = None
    if e.symbol and e.artifact == "outline" and match not in _TEXT_MATCHES:
        row = conn.execute(
            "SELECT text FROM entries WHERE path = ? AND artifact = 'annotate' AND symbol = ? AND text != '' LIMIT 1",
            (e.path, e.symbol),
        ).fetchone()
        note = next((line.strip() for line in row[0].splitlines() if line.strip()), None) if row else None
    text = e.text
    lines = [line.strip() for line in text.splitlines() if line.strip()] if text else []
    if why and why["terms"]:  # the line that holds what matched
        words = re.compile(r"(?<![\w$])(?:" + "|".join(re.escape(t) for t in why["terms"]) + r")(?![\w$])")
        lines = sorted(lines, key=lambda line: -len(set(words.findall(line))))
    first = lines[0] if lines else ""
    if first.startswith("#") and e.artifact != "source":
        first = first.lstrip("# ")
    kind, start, end, signature = e.kind, e.start, e.end, e.signature
    if e.artifact == "annotate" and e.symbol:
        # A note on a symbol: say where the symbol is, as its outline does.
        where = conn.execute(
            "SELECT kind, start, end_, signature FROM entries WHERE path = ? AND artifact = 'outline' AND symbol = ?"
            " ORDER BY id LIMIT 1",
            (e.path, e.symbol),
        ).fetchone()
        if where:
            kind, start, end, signature = where
    return {
        "path": e.path,
        "symbol": e.symbol,
        "kind": kind,
        "start_line": start,
        "end_line": end,
        "signature": signature,
        "match": match,
        "from": e.artifact,
        "snippet": _cut(first),
        **({"note": _cut(note)} if note else {}),
        **({"why": why} if why else {}),
    }


def _cut(text: str) -> str:
    return text[:SNIPPET_CHARS] + ("…" if len(text) > SNIPPET_CHARS else "")


def _query_tag(q: str, kind: str | None, directory: str, scope: str) -> str:
    return hashlib.blake2b(f"{q}\0{kind}\0{directory}\0{scope}".encode(), digest_size=6).hexdigest()


def _encode_cursor(pos: int, tag: str) -> str:
    raw = json.dumps({"at": pos, "q": tag})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_cursor(cursor: str, tag: str) -> int:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        pos, got = int(value["at"]), str(value["q"])
    except (ValueError, KeyError, TypeError):
        pos, got = -1, ""
    if pos < 0 or got != tag:
        raise InvalidArgument(
            "cursor is not one this search issued; pass next_cursor unchanged, with the same query, kind, "
            "scope and directory",
            details={"field": "cursor", "rule": "opaque cursor of the same search"},
        )
    return pos


class Searcher:
    """``search_artifacts`` on its own: its first call in a new server imports this module and the
    database's, not the parsers and models of the rest of the code memory."""

    def __init__(self, store: ArtifactStore, limits: Limits) -> None:
        self.store = store
        self.limits = limits

    def index(self) -> SearchIndex:
        return search_index_for(self.store, self.limits.max_file_bytes)

    def search(
        self,
        query: str,
        kind: str | None,
        directory: str,
        limit: int,
        cursor: str | None,
        scope: str = "auto",
        refresher: Callable[[], Refresher] | None = None,
        notes: Callable[[], NoteMarker] | None = None,
    ) -> dict[str, Any]:
        """One page of hits about the files as they are now: the outlined files under ``directory``
        that changed since they were outlined are re-parsed first (the hits' files first), within
        ``Limits.refresh_budget_ms``; the hits of those left say ``stale: true`` and how to refresh
        them, and ``freshness`` counts both. In a process still comparing its outlines with the files
        (:mod:`llmem.code.freshness`) the hits' files are compared here, and ``freshness`` says how
        many are not compared yet. ``refresher`` makes the re-parser if none is attached; ``notes``
        what marks the hits of notes written before their code changed (made only when the page
        holds a note: ``stale_notes`` counts them)."""
        rp = resolve_in_workspace(self.store.workspace, directory, field="directory")
        if kind is not None and kind not in search_kinds():
            raise InvalidArgument(
                f"kind {kind!r} is neither a symbol kind nor an artifact kind",
                details={"field": "kind", "rule": "one of the kinds", "allowed": sorted(search_kinds())},
            )
        index = self.index()
        room = self.limits.answer_chars - 300

        def answer(refresh: Refresh, reserve: int = 0) -> dict[str, Any]:
            return index.search(query, kind, rp.key, limit, cursor, room - reserve, scope, refresh.mark)

        freshness = index.freshness
        with freshness.asking():  # the background comparison of a new process gives way
            found = self._answer_fresh(freshness, rp.key, limit, answer, refresher)
        if notes is not None and any(h.get("from") in NOTE_ARTIFACTS for h in found["results"]):
            stale = notes().mark_stale_notes(found["results"])
            if stale:
                found["stale_notes"] = stale
        return found

    def _answer_fresh(
        self,
        freshness: OutlineFreshness,
        directory: str,
        limit: int,
        answer: Callable[[Refresh, int], dict[str, Any]],
        refresher: Callable[[], Refresher] | None,
    ) -> dict[str, Any]:
        """The page ``answer`` gives once the changed files it is about are re-parsed (or marked),
        and what it says of freshness."""
        refresh = Refresh(freshness.changed(directory))
        complete = freshness.complete  # whether that covered every outlined file

        def reserve() -> int:  # room for what the answer says of freshness
            if not refresh.changed and complete:
                return 0
            return len(json.dumps(refresh.summary(directory, limit, freshness.not_compared), ensure_ascii=False))

        found = answer(refresh, reserve())
        budget_s = self.limits.refresh_budget_ms / 1000
        for _round in range(2):
            marked = set(refresh.changed)
            if not complete:  # a new process still comparing: the page's files are checked here
                if freshness.complete:  # ... and done meanwhile: all it found
                    complete = True
                    refresh.changed.update(freshness.changed(directory))
                unchecked = {h["path"] for h in found["results"]} - set(refresh.changed)
                refresh.changed.update(freshness.changed(directory, unchecked) if unchecked else {})
            todo = {k: v for k, v in refresh.left.items() if k not in refresh.tried}
            if not todo:
                break
            first = [h["path"] for h in found["results"] if h["path"] in todo]
            done = freshness.refresh(todo, by="search_artifacts", budget_s=budget_s, refresher=refresher, first=first)
            refresh.refreshed += done.refreshed
            refresh.tried.update(todo)
            budget_s = 0  # a second round only checks the new page's files, and marks those changed
            if done.refreshed or set(refresh.changed) - marked:  # else the page already says it all
                found = answer(refresh, reserve())
        stale_hits = sum(1 for h in found["results"] if h.get("stale"))
        return {
            "directory": directory,
            **found,
            "freshness": refresh.summary(directory, stale_hits, freshness.not_compared),
        }


#: The artifacts a model writes (notes, summaries …): what ``stale_notes`` is about.
NOTE_ARTIFACTS = frozenset({"annotate", "summarize", "document", "test-plan"})


class NoteMarker(Protocol):
    """Marks the hits of notes whose code changed since they were written (the code memory)."""

    def mark_stale_notes(self, hits: list[dict[str, Any]]) -> int: ...


@functools.cache
def search_kinds() -> frozenset[str]:
    """Every kind ``kind`` filters by: symbol kinds, artifact kinds, notes, and ``code`` (the lines)."""
    from llmem.code.outline.model import SymbolKind

    stored = {"outline", "annotate", *TEXT_KINDS}  # the kinds the store holds, as llmem.code.artifacts.KINDS
    return frozenset(get_args(SymbolKind)) | stored | {"source", "note", "file-note", "code"}


_INDEXES: dict[str, SearchIndex] = {}
_INDEXES_GUARD = threading.Lock()


def search_index_for(store: ArtifactStore, max_file_bytes: int = 1_000_000) -> SearchIndex:
    """The one index of ``store``'s root in this process."""
    key = str(store.root)
    with _INDEXES_GUARD:
        index = _INDEXES.get(key)
        if index is None or (index.store is not store and index.store.workspace != store.workspace):
            index = _INDEXES[key] = SearchIndex(store, max_file_bytes)
        return index
