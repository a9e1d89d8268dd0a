"""The search index's database: a SQLite file in the store's cache, a copy of what the artifact
files (and the workspace's text files) hold, never a second truth.

``cache/search.sqlite3``, in WAL mode so that every process of the suite reads it while one
writes. ``PRAGMA user_version`` is its schema; a file of another version, or one SQLite cannot
read (garbage, a torn copy), is rebuilt from the artifact files, never trusted. Tables:

- ``meta``: the change journal (``cache/journal.log``) the index is true to: its inode and how far
  into it the changes are applied;
- ``artifacts``: every artifact, by path and kind (counts for ``list_artifacts``), with the source
  fingerprint (size, mtime, sha256) of each outline, which :mod:`llmem.code.freshness` compares
  with the files;
- ``entries``: one searchable thing each (a symbol of an outline, a note, a summary); a rebuild
  numbers them in path order, so ids order hits of one tier;
- ``names``: FTS5 trigram over each symbol's lower-case qualified name (substrings);
- ``name_words`` and ``text_words``: FTS5 over the camelCase / snake_case words of names, and of
  docs, notes and summaries (two tables: a word common in names costs nothing to a text query);
  the text's words are stemmed (``porter`` over ``unicode61``: ``calls``, ``called`` and
  ``calling`` are one word, :mod:`llmem.code.text_query`), names' words are not;
- ``files``, ``folders``, ``lines``: the line index (:mod:`llmem.code.lines`).

Every process appends its puts and deletes to the journal (``ArtifactStore``); the next search of
any process applies the lines written since under SQLite's write lock (``BEGIN IMMEDIATE``,
re-reading where the index stands inside it), so a write made anywhere is found by the next search
everywhere. A journal that shrank or was replaced means a rebuild from the files.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llmem.core.fsutil import hold_lock_file, loads_json
from llmem.core.store import JOURNAL, ArtifactStore

__all__ = ["DB_NAME", "NAMESPACE", "SCHEMA", "Entry", "IndexDb", "read_journal", "split_words", "trigram_available"]

NAMESPACE = "llmem"
DB_NAME = "search.sqlite3"
#: The current layout; ``PRAGMA user_version`` is ``SCHEMA * 10`` plus 1 with the trigram tables
#: (0 is a new, empty file).
SCHEMA = 5
TEXT_KINDS = {"summarize": "summary", "document": "summary", "test-plan": "summary"}
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
log = logging.getLogger("llmem.search")

_TABLES = (
    "CREATE TABLE meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL)",
    """CREATE TABLE artifacts(path TEXT NOT NULL, artifact TEXT NOT NULL, size INTEGER, mtime_ns INTEGER,
        sha256 TEXT, PRIMARY KEY(path, artifact)) WITHOUT ROWID""",
    # Covering the comparison of every outline with its file (one scan, no lookups).
    "CREATE INDEX artifacts_by_kind ON artifacts(artifact, path, size, mtime_ns)",
    """CREATE TABLE entries(id INTEGER PRIMARY KEY, path TEXT NOT NULL, artifact TEXT NOT NULL, symbol TEXT,
        name TEXT NOT NULL, kind TEXT NOT NULL, start INTEGER, end_ INTEGER, signature TEXT, text TEXT NOT NULL,
        lname TEXT, lqn TEXT)""",
    "CREATE INDEX entries_by_artifact ON entries(path, artifact)",
    "CREATE INDEX entries_by_name ON entries(lname)",
    "CREATE INDEX entries_by_qn ON entries(lqn)",
    "CREATE VIRTUAL TABLE name_words USING fts5(words, tokenize='unicode61')",
    "CREATE VIRTUAL TABLE text_words USING fts5(words, tokenize='porter unicode61')",
    """CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL, isize INTEGER, imtime INTEGER)""",
    "CREATE TABLE folders(path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL) WITHOUT ROWID",
)
_FTS_TABLES = ("name_words", "text_words")
_TRIGRAM_TABLES = (
    "CREATE VIRTUAL TABLE names USING fts5(lqn, tokenize='trigram')",
    # The line as matched (ASCII lower-cased, case-sensitive trigrams: exact) and as shown.
    "CREATE VIRTUAL TABLE lines USING fts5(low, text UNINDEXED, tokenize='trigram case_sensitive 1')",
)


def split_words(text: str) -> list[str]:
    """Lower-case words of a name or a text, camelCase and snake_case split: ``validatePath`` →
    ``validate``, ``path``; ``HTTPServer_v2`` → ``http``, ``server``, ``v``, ``2``."""
    return [w.lower() for w in _WORD.findall(text)]


def _words_text(text: str) -> str:
    """``" ".join(split_words(text))``, lower-cased once (the words are ASCII: the same text)."""
    return " ".join(_WORD.findall(text)).lower()


@functools.cache
def trigram_available() -> bool:
    """Whether this Python's SQLite has FTS5 with the trigram tokenizer (SQLite ≥ 3.34)."""
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    except sqlite3.Error:
        log.warning(
            "SQLite %s has no FTS5 trigram tokenizer: substring and line searches scan instead (slower, same answers)",
            sqlite3.sqlite_version,
        )
        return False
    return True


@dataclass
class Entry:
    """One searchable thing: a symbol of an outline, a note on a symbol or a file, a summary."""

    path: str
    artifact: str  # the artifact kind it comes from ("source" for a line of a file)
    symbol: str | None
    name: str
    kind: str
    start: int | None
    end: int | None
    signature: str | None
    text: str  # doc, note, summary or line text, for words and the snippet


ENTRY_COLUMNS = "path, artifact, symbol, name, kind, start, end_, signature, text"
#: An outline's source fingerprint as the ``artifacts`` table keeps it: size, mtime_ns, sha256.
_Source = tuple[int | None, int | None, str | None]
_NO_SOURCE: _Source = (None, None, None)
_Artifact = tuple[str, str, int | None, int | None, str | None]


def entries_of(path: str, artifact: str, content: Any) -> list[Entry]:
    out: list[Entry] = []
    if artifact == "outline" and isinstance(content, dict):
        stack = list(reversed(content.get("symbols") or []))
        while stack:
            sym = stack.pop()
            if not isinstance(sym, dict):
                continue
            out.append(
                Entry(
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
            out.append(Entry(path, artifact, None, "", "file-note", None, None, None, str(file_note["description"])))
        for qn, note in (content.get("symbols") or {}).items():
            if isinstance(note, dict):
                text = " ".join(str(note.get(k) or "") for k in ("description", "inputs", "outputs")).strip()
                out.append(Entry(path, artifact, str(qn), str(qn).rsplit(".", 1)[-1], "note", None, None, None, text))
    elif artifact in TEXT_KINDS and isinstance(content, str):
        out.append(Entry(path, artifact, None, "", artifact, None, None, None, content))
    return out


class IndexDb:
    """The database of one store, opened once per process; callers serialise its use (one lock)."""

    def __init__(self, store: ArtifactStore, *, trigram: bool | None = None) -> None:
        """``trigram=False`` uses the scanning paths even where SQLite has the tokenizer."""
        self.store = store
        self.file = store.root / "cache" / DB_NAME
        self.journal = store.root / "cache" / JOURNAL
        self.trigram = trigram_available() if trigram is None else trigram and trigram_available()
        # The layout differs with and without the trigram tables: part of the version.
        self.version = SCHEMA * 10 + int(self.trigram)
        self._conn: sqlite3.Connection | None = None
        self._ino = 0

    # -- opening -------------------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """The open database, current in schema; re-opened when the file was replaced or removed."""
        try:
            ino = os.stat(self.file).st_ino  # noqa: PTH116
        except OSError:
            ino = 0
        if self._conn is not None and ino == self._ino:
            return self._conn
        self.close()
        self.file.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = self._open()
        except sqlite3.DatabaseError as exc:
            self.discard(exc)
            conn = self._open()
        self._conn, self._ino = conn, os.stat(self.file).st_ino  # noqa: PTH116
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.file, timeout=60, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            if conn.execute("PRAGMA user_version").fetchone()[0] != self.version:
                with self.writing(conn):
                    if conn.execute("PRAGMA user_version").fetchone()[0] != self.version:
                        self._create(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn, self._ino = None, 0

    def discard(self, exc: Exception) -> None:
        """Remove a database SQLite cannot read (under a cross-process lock, re-checking: another
        process may have replaced it meanwhile); the next open builds it again from the files."""
        self.close()
        log.warning("search index %s unreadable (%s): rebuilding it from the artifact files", self.file, exc)
        with hold_lock_file(self.file.with_name(DB_NAME + ".lock")):
            try:
                with contextlib.closing(sqlite3.connect(self.file)) as probe:
                    probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
                    probe.execute("PRAGMA quick_check").fetchone()
                    return
            except sqlite3.DatabaseError:
                pass
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.file}{suffix}")  # noqa: PTH108

    @contextlib.contextmanager
    def writing(self, conn: sqlite3.Connection) -> Iterator[None]:
        """One write transaction, holding SQLite's write lock from the start."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _create(self, conn: sqlite3.Connection) -> None:
        """The current layout, filled from the artifact files (inside a write transaction)."""
        old = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL%'")
        for (name,) in old.fetchall():
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for kind, name in conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'"
        ).fetchall():
            conn.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        for sql in _TABLES + (_TRIGRAM_TABLES if self.trigram else ()):
            conn.execute(sql)
        self._fill(conn)
        conn.execute(f"PRAGMA user_version={self.version}")
        with contextlib.suppress(OSError):  # the JSON snapshot earlier versions kept: replaced by this file
            os.unlink(self.file.with_name("search-index.json"))  # noqa: PTH108
        log.info("search index %s built from the artifact files", self.file)

    # -- artifacts -----------------------------------------------------------------------------

    def journal_state(self) -> tuple[int, int]:
        """The change journal's inode and size (0, 0 when there is none yet)."""
        try:
            st = os.stat(self.journal)  # noqa: PTH116
        except OSError:
            return 0, 0
        return st.st_ino, st.st_size

    def _meta(self, conn: sqlite3.Connection) -> tuple[int, int]:
        rows = dict(conn.execute("SELECT k, v FROM meta").fetchall())
        return int(rows.get("journal_ino", 0)), int(rows.get("journal_offset", 0))

    def _set_meta(self, conn: sqlite3.Connection, ino: int, offset: int) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", [("journal_ino", ino), ("journal_offset", offset)]
        )

    def _fill(self, conn: sqlite3.Connection) -> None:
        """Every artifact file, read once; the journal position taken first, so that changes made
        while reading are applied again afterwards (applying a change twice is harmless)."""
        ino, size = self.journal_state()
        for table in ("artifacts", "entries", *_FTS_TABLES, *(("names",) if self.trigram else ())):
            conn.execute(f"DELETE FROM {table}")
        rows: list[tuple[Any, ...]] = []
        arts: list[_Artifact] = []
        for key, kinds in self.store.iter_keys(NAMESPACE):
            for kind in kinds:
                found = self._entries(key, kind)
                if found is not None:
                    arts.append((key, kind, *found[1]))
                    rows.extend(_row(e) for e in found[0])
        self._insert(conn, arts, rows)
        self._set_meta(conn, ino, size)

    def _insert(self, conn: sqlite3.Connection, arts: list[_Artifact], rows: list[tuple[Any, ...]]) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO artifacts(path, artifact, size, mtime_ns, sha256) VALUES (?, ?, ?, ?, ?)", arts
        )
        if not rows:
            return
        first = (conn.execute("SELECT max(id) FROM entries").fetchone()[0] or 0) + 1
        ids = range(first, first + len(rows))
        conn.executemany(
            f"INSERT INTO entries(id, {ENTRY_COLUMNS}, lname, lqn) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [(i, *r) for i, r in zip(ids, rows, strict=True)],
        )
        name_words = []
        text_words = []
        names = []
        for i, r in zip(ids, rows, strict=True):
            outline = r[1] == "outline"
            if outline:
                name_words.append((i, _words_text(r[2] or r[3])))
            if r[8]:
                text_words.append((i, _words_text(r[8])))
            if outline and self.trigram:
                names.append((i, r[10]))
        conn.executemany("INSERT INTO name_words(rowid, words) VALUES (?, ?)", name_words)
        conn.executemany("INSERT INTO text_words(rowid, words) VALUES (?, ?)", text_words)
        if names:
            conn.executemany("INSERT INTO names(rowid, lqn) VALUES (?, ?)", names)

    def _entries(self, key: str, kind: str) -> tuple[list[Entry], _Source] | None:
        """What ``kind`` of ``key`` holds to search, and an outline's source fingerprint; ``None``
        when the artifact is gone."""
        if kind not in {"outline", "annotate"} and kind not in TEXT_KINDS:
            return ([], _NO_SOURCE) if self.store.artifact_file(NAMESPACE, key, kind).is_file() else None
        record = self.store.get_or_none(NAMESPACE, key, kind)
        if record is None:
            return None
        fp = record.source if kind == "outline" else None
        return entries_of(key, kind, record.doc.get("content")), (fp.size, fp.mtime_ns, fp.sha256) if fp else _NO_SOURCE

    def _replace(self, conn: sqlite3.Connection, changed: list[tuple[str, str]]) -> None:
        """The rows of each changed artifact anew: the old ones out, then all the new ones in one
        insert (a statement per table for the lot, not per artifact: a catch-up after a parse
        replaces hundreds)."""
        for key, kind in changed:
            ids = [r[0] for r in conn.execute("SELECT id FROM entries WHERE path = ? AND artifact = ?", (key, kind))]
            for chunk in (ids[i : i + 500] for i in range(0, len(ids), 500)):
                marks = ",".join("?" * len(chunk))
                for table in _FTS_TABLES:
                    conn.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})", chunk)
                if self.trigram:
                    conn.execute(f"DELETE FROM names WHERE rowid IN ({marks})", chunk)
                conn.execute(f"DELETE FROM entries WHERE id IN ({marks})", chunk)
            conn.execute("DELETE FROM artifacts WHERE path = ? AND artifact = ?", (key, kind))
        arts: list[_Artifact] = []
        rows: list[tuple[Any, ...]] = []
        for key, kind in changed:
            found = self._entries(key, kind)
            if found is not None:
                arts.append((key, kind, *found[1]))
                rows.extend(_row(e) for e in found[0])
        self._insert(conn, arts, rows)

    def catch_up(self, conn: sqlite3.Connection) -> None:
        """Apply the journal lines written since the index was last true (any process's writes)."""
        ino, size = self.journal_state()
        if (ino, size) == self._meta(conn):
            return
        with self.writing(conn):
            m_ino, m_offset = self._meta(conn)  # another process may have caught up meanwhile
            ino, size = self.journal_state()
            if m_ino == 0 and m_offset == 0 and ino != 0:
                m_ino = ino  # the journal began after the index was built: read it all
            if ino != m_ino or size < m_offset:
                self._fill(conn)  # another journal than the one the index followed
                return
            if size == m_offset:
                self._set_meta(conn, m_ino, m_offset)
                return
            changed, end = read_journal(self.journal, m_offset, size)
            self._replace(conn, list(changed))
            self._set_meta(conn, m_ino, end)


def read_journal(journal: Path, start: int, size: int) -> tuple[dict[tuple[str, str], None], int]:
    """The (key, kind) of llmem's artifacts put or deleted in the journal's lines from ``start``
    to ``size``, in order and once each, and where the next read starts (a line still being
    written is read next time)."""
    try:
        with journal.open("rb") as handle:
            handle.seek(start)
            raw = handle.read(size - start)
    except OSError:
        return {}, start
    end = raw.rfind(b"\n") + 1
    changed: dict[tuple[str, str], None] = {}
    for line in raw[:end].splitlines():
        with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
            item = loads_json(line)
            if item.get("ns") == NAMESPACE:
                changed[(str(item["key"]), str(item["kind"]))] = None
    return changed, start + end


def _row(e: Entry) -> tuple[Any, ...]:
    outline = e.artifact == "outline"
    return (
        e.path,
        e.artifact,
        e.symbol,
        e.name,
        e.kind,
        e.start,
        e.end,
        e.signature,
        e.text,
        e.name.lower() if outline else None,
        (e.symbol or "").lower() if outline else None,
    )


def entry_of(row: tuple[Any, ...]) -> Entry:
    """An :class:`Entry` from the columns :data:`ENTRY_COLUMNS`."""
    return Entry(*row)


def under_sql(column: str, directory: str) -> tuple[str, list[Any]]:
    """SQL (and its arguments) for ``column`` naming ``directory`` or a path below it."""
    if directory == ".":
        return "1", []
    return f"({column} = ? OR ({column} > ? AND {column} < ?))", [directory, directory + "/", directory + "0"]


def workspace_file(workspace: Path, key: str) -> str:
    return os.path.join(workspace, *key.split("/"))  # noqa: PTH118
