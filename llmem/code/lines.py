"""The line index: every line of every text file the walk keeps, so a search answers as grep would.

Which files: those ``walk_workspace(text=True)`` keeps (``.gitignore`` and ``.llmemignore``
honoured, binaries and files over the size cap left out, ``.github`` entered), remembered in
``files`` with the size and mtime seen, and the folders walked in ``folders`` with theirs. A
search stats the folders (a file added or removed changes its folder's mtime) and the files; it
walks again only when a folder or an ignore file moved. A file whose size or mtime differ from
those its lines were indexed at is read again: within a time budget per search, and the rest
scanned directly for that search, so an answer is always about the files as they are now.

Lines live in the FTS5 table ``lines`` (trigram, case-sensitive over the ASCII lower-cased line,
which is exact for a lower-cased query of three characters or more; the line itself kept beside
it for the answer). Its rowid is ``file id << 24 | line number``. Shorter queries, and a SQLite
without the trigram tokenizer, scan the files instead: slower, the same answer.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from llmem.code.index_db import IndexDb, workspace_file

__all__ = ["INDEX_BUDGET_S", "LOCK_FILES", "LineHit", "LineIndex", "is_lock_file"]

LINE_BITS = 24
_MASK = (1 << LINE_BITS) - 1
#: Seconds of indexing a search may spend on changed files before it scans the rest directly (and
#: a background thread indexes them).
INDEX_BUDGET_S = 0.25
log = logging.getLogger("llmem.search")
_SNIFF = 8192


@dataclass(frozen=True)
class _File:
    path: str
    size: int
    mtime_ns: int
    fresh: bool  # its lines are indexed for this size and mtime


@dataclass(frozen=True)
class LineHit:
    path: str
    line: int
    text: str


def _low(text: bytes) -> str:
    """What a line or a query is matched as: ASCII letters lower-cased (as ``bytes.lower``)."""
    return text.lower().decode("utf-8", "replace")


def _lines(data: bytes) -> Iterable[tuple[int, bytes]]:
    for n, raw in enumerate(data.split(b"\n"), 1):
        if raw.strip():
            yield n, raw


class LineIndex:
    def __init__(self, db: IndexDb, max_file_bytes: int = 1_000_000) -> None:
        self.db = db
        self.workspace = db.store.workspace
        self._ws = str(self.workspace)
        # A line number must fit its bits of the rowid: a file has at most one line per byte.
        self.max_file_bytes = min(max_file_bytes, _MASK - 1)
        self._thread: threading.Thread | None = None
        self._thread_guard = threading.Lock()
        store_rel = _relative(db.store.root, self.workspace)
        self._store_prefix = store_rel + "/" if store_rel else None

    # -- keeping it true -------------------------------------------------------------------------

    def refresh(self, conn: sqlite3.Connection, budget_s: float = INDEX_BUDGET_S) -> dict[int, _File]:
        """Bring ``files`` up to the workspace as it is, index changed files within the budget, and
        answer every file by id."""
        ws = self._ws
        folders = conn.execute("SELECT path, mtime_ns FROM folders").fetchall()
        walk = not folders or any(_mtime(f"{ws}/{p}" if p else ws) != m for p, m in folders)
        files = {} if walk else self._files(conn)
        moved: list[tuple[int, int, int]] = []
        for fid, f in files.items():
            try:
                st = os.stat(f"{ws}/{f.path}")  # noqa: PTH116 - keys are POSIX paths; one string is cheapest
            except OSError:
                walk = True
                break
            if st.st_size != f.size or st.st_mtime_ns != f.mtime_ns:
                from llmem.code.walk import IGNORE_FILES  # the walk (and the parsers' names) load when needed

                if f.path.rsplit("/", 1)[-1] in {name for name, _reason in IGNORE_FILES}:
                    walk = True
                    break
                moved.append((st.st_size, st.st_mtime_ns, fid))
        if walk:
            self._walk(conn)
        elif moved:
            with self.db.writing(conn):
                conn.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", moved)
        indexed = self.db.trigram and budget_s > 0 and self._index(conn, budget_s)
        files = self._files(conn) if walk or moved or indexed else files
        if self.db.trigram and budget_s > 0 and not all(f.fresh for f in files.values()):
            self._index_in_background()
        return files

    def _index_in_background(self) -> None:
        """Index the files a search left to scanning, on a thread with its own connection: the
        next searches find them indexed instead of scanning them again."""
        with self._thread_guard:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._index_rest, name="llmem-line-index", daemon=True)
            self._thread.start()

    def _index_rest(self) -> None:
        db = IndexDb(self.db.store, trigram=self.db.trigram)
        try:
            LineIndex(db, self.max_file_bytes)._index(db.connection(), None)
        except (OSError, sqlite3.Error) as exc:  # a cache left for the next search to finish
            log.info("background line indexing stopped: %s", exc)
        finally:
            db.close()

    def _files(self, conn: sqlite3.Connection) -> dict[int, _File]:
        rows = conn.execute("SELECT id, path, size, mtime_ns, isize IS size AND imtime IS mtime_ns FROM files")
        return {fid: _File(path, size, mtime, bool(fresh)) for fid, path, size, mtime, fresh in rows}

    def _walk(self, conn: sqlite3.Connection) -> None:
        from llmem.code.walk import walk_workspace

        result = walk_workspace(self.workspace, max_file_bytes=self.max_file_bytes, text=True)
        files = {
            f.rel_path: (f.size, f.mtime_ns)
            for f in result.files
            if self._store_prefix is None or not f.rel_path.startswith(self._store_prefix)
        }
        folder_rows = [(p, _mtime(workspace_file(self.workspace, p) if p else self._ws)) for p in result.folders]
        with self.db.writing(conn):
            known = {path: fid for fid, path in conn.execute("SELECT id, path FROM files")}
            for path, fid in known.items():
                if path not in files:
                    self._drop_lines(conn, fid)
                    conn.execute("DELETE FROM files WHERE id = ?", (fid,))
            conn.executemany(
                "INSERT INTO files(path, size, mtime_ns) VALUES (?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns",
                [(p, s, m) for p, (s, m) in files.items()],
            )
            conn.execute("DELETE FROM folders")
            conn.executemany("INSERT INTO folders(path, mtime_ns) VALUES (?, ?)", folder_rows)

    def _drop_lines(self, conn: sqlite3.Connection, fid: int) -> None:
        if self.db.trigram:
            conn.execute("DELETE FROM lines WHERE rowid >= ? AND rowid < ?", (fid << LINE_BITS, (fid + 1) << LINE_BITS))

    def _index(self, conn: sqlite3.Connection, budget_s: float | None) -> bool:
        """Index the lines of changed files, in path order, until ``budget_s`` (``None``: all);
        whether there were any."""
        deadline = None if budget_s is None else time.monotonic() + budget_s
        stale = conn.execute(
            "SELECT id, path, size, mtime_ns FROM files WHERE isize IS NOT size OR imtime IS NOT mtime_ns ORDER BY path"
        ).fetchall()
        at = 0
        while at < len(stale) and (deadline is None or time.monotonic() < deadline):
            batch_end = time.monotonic() + 0.1  # short transactions: other processes write too
            with self.db.writing(conn):
                while at < len(stale) and time.monotonic() < batch_end:
                    fid, path, size, mtime = stale[at]
                    at += 1
                    self._drop_lines(conn, fid)
                    data = self._read(path, size, mtime)
                    if data is None:
                        continue  # changed again while read: the next search sees it stale
                    rows = [
                        ((fid << LINE_BITS) | n, _low(raw), raw.decode("utf-8", "replace")) for n, raw in _lines(data)
                    ]
                    conn.executemany("INSERT INTO lines(rowid, low, text) VALUES (?, ?, ?)", rows)
                    conn.execute("UPDATE files SET isize = ?, imtime = ? WHERE id = ?", (size, mtime, fid))
        return bool(stale)

    def index_all(self, conn: sqlite3.Connection) -> None:
        """Every file's lines indexed (a benchmark's or a command's warm-up)."""
        self.refresh(conn, 0)
        if self.db.trigram:
            self._index(conn, None)

    def _read(self, path: str, size: int, mtime: int) -> bytes | None:
        """The file's text as of ``(size, mtime)``; ``b""`` for a binary or oversized file."""
        file = workspace_file(self.workspace, path)
        try:
            with open(file, "rb") as handle:  # noqa: PTH123
                st = os.fstat(handle.fileno())
                if (st.st_size, st.st_mtime_ns) != (size, mtime):
                    return None
                if size > self.max_file_bytes:
                    return b""
                data = handle.read()
        except OSError:
            return b""
        return b"" if b"\0" in data[:_SNIFF] else data

    # -- answering -------------------------------------------------------------------------------

    def files_named(self, conn: sqlite3.Connection, query: str, directory: str) -> list[str]:
        """The files under ``directory`` whose path holds every word of ``query`` (ASCII case
        ignored): those whose own name is the query first, then whose name holds it, then the rest."""
        words = query.lower().split()
        found = [
            f.path
            for f in self.refresh(conn, budget_s=0).values()  # names only: no line is indexed for this
            if _under(f.path, directory) and all(w in f.path.lower() for w in words)
        ]
        q = query.lower()

        def rank(path: str) -> tuple[int, str]:
            name = path.rsplit("/", 1)[-1].lower()
            return (0 if name == q else 1 if q in name else 2, path)

        return sorted(found, key=rank)

    def search(
        self, conn: sqlite3.Connection, query: str, directory: str, start: int, count: int
    ) -> tuple[int, list[LineHit], dict[str, int]]:
        """The exact number of lines under ``directory`` holding ``query`` (ASCII case ignored),
        ``count`` of them from ``start`` on, in path and line order, and the lines of lock files
        left out (``{"lock_files": …, "lines": …}``): a lock file is searched only when
        ``directory`` is that file."""
        files = self.refresh(conn)
        needle = query.encode("utf-8").lower()
        under = {fid: f for fid, f in files.items() if _under(f.path, directory)}
        inside = {fid: f for fid, f in under.items() if f.path == directory or not is_lock_file(f.path)}
        locks = [f for fid, f in under.items() if fid not in inside]
        skipped = self._scan(sorted((f.path, f.size, f.mtime_ns) for f in locks), needle) if locks else []
        left = {"lock_files": len({h.path for h in skipped}), "lines": len(skipped)} if skipped else {}
        if not self.db.trigram or len(needle.decode("utf-8", "replace")) < 3:
            hits = self._scan(sorted((f.path, f.size, f.mtime_ns) for f in inside.values()), needle)
            return len(hits), hits[start : start + count], left
        match = '"' + _low(needle).replace('"', '""') + '"'
        keyed: list[tuple[str, int, int | str]] = []  # path, line, and the rowid of the text or the text
        for (rowid,) in conn.execute("SELECT rowid FROM lines WHERE lines MATCH ?", (match,)):
            f = inside.get(rowid >> LINE_BITS)
            if f is not None and f.fresh:
                keyed.append((f.path, rowid & _MASK, rowid))
        stale = sorted((f.path, f.size, f.mtime_ns) for f in inside.values() if not f.fresh)
        keyed += [(h.path, h.line, h.text) for h in self._scan(stale, needle)]
        keyed.sort(key=lambda k: (k[0], k[1]))
        page = keyed[start : start + count]
        wanted = [k[2] for k in page if isinstance(k[2], int)]
        marks = ",".join("?" * len(wanted))
        texts = dict(conn.execute(f"SELECT rowid, text FROM lines WHERE rowid IN ({marks})", wanted)) if wanted else {}
        return len(keyed), [LineHit(p, n, texts.get(t, "") if isinstance(t, int) else t) for p, n, t in page], left

    def _scan(self, files: list[tuple[str, int, int]], needle: bytes) -> list[LineHit]:
        """The lines holding ``needle`` read from the files themselves."""
        hits: list[LineHit] = []
        for path, size, mtime in files:
            data = self._read(path, size, mtime)
            if data is None:
                try:
                    data = Path(workspace_file(self.workspace, path)).read_bytes()
                except OSError:
                    continue
                if len(data) > self.max_file_bytes or b"\0" in data[:_SNIFF]:
                    continue
            low = data.lower()
            at = low.find(needle)
            while at >= 0:
                line = low.count(b"\n", 0, at) + 1
                begin = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                end = len(data) if end < 0 else end
                hits.append(LineHit(path, line, data[begin:end].decode("utf-8", "replace")))
                at = low.find(needle, end)
        return hits


#: Files a package manager writes (thousands of lines of names and hashes): left out of a line
#: search unless asked for by path, and counted.
LOCK_FILES = frozenset(
    {
        "uv.lock",
        "poetry.lock",
        "pdm.lock",
        "Pipfile.lock",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "Cargo.lock",
        "Gemfile.lock",
        "composer.lock",
        "go.sum",
        "flake.lock",
        "packages.lock.json",
    }
)


def is_lock_file(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in LOCK_FILES


def _under(path: str, directory: str) -> bool:
    return directory in (".", path) or path.startswith(directory + "/")


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns  # noqa: PTH116
    except OSError:
        return -1


def _relative(path: Path, root: Path) -> str | None:
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return None
    return None if rel == "." else rel
