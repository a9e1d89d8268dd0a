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

import os
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from llmem.code.index_db import IndexDb, under_sql, workspace_file

__all__ = ["INDEX_BUDGET_S", "LineHit", "LineIndex"]

LINE_BITS = 24
_MASK = (1 << LINE_BITS) - 1
#: Seconds of indexing a search may spend on changed files before it scans the rest directly.
INDEX_BUDGET_S = 0.5
_SNIFF = 8192


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
        store_rel = _relative(db.store.root, self.workspace)
        self._store_prefix = store_rel + "/" if store_rel else None

    # -- keeping it true -------------------------------------------------------------------------

    def refresh(self, conn: sqlite3.Connection, budget_s: float = INDEX_BUDGET_S) -> None:
        """Bring ``files`` up to the workspace as it is, and index changed files within the budget."""
        folders = conn.execute("SELECT path, mtime_ns FROM folders").fetchall()
        walk = not folders or any(_mtime(workspace_file(self.workspace, p) if p else self._ws) != m for p, m in folders)
        moved: list[tuple[int, int, int]] = []
        if not walk:
            for fid, path, size, mtime in conn.execute("SELECT id, path, size, mtime_ns FROM files").fetchall():
                try:
                    st = os.stat(workspace_file(self.workspace, path))  # noqa: PTH116
                except OSError:
                    walk = True
                    break
                if st.st_size != size or st.st_mtime_ns != mtime:
                    from llmem.code.walk import IGNORE_FILES  # the walk (and the parsers' names) load when needed

                    if path.rsplit("/", 1)[-1] in {name for name, _reason in IGNORE_FILES}:
                        walk = True
                        break
                    moved.append((st.st_size, st.st_mtime_ns, fid))
        if walk:
            self._walk(conn)
        elif moved:
            with self.db.writing(conn):
                conn.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", moved)
        if self.db.trigram and budget_s > 0:
            self._index(conn, budget_s)

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

    def _index(self, conn: sqlite3.Connection, budget_s: float | None) -> None:
        """Index the lines of changed files, in path order, until ``budget_s`` (``None``: all)."""
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

    def search(
        self, conn: sqlite3.Connection, query: str, directory: str, start: int, count: int
    ) -> tuple[int, list[LineHit]]:
        """The exact number of lines under ``directory`` holding ``query`` (ASCII case ignored),
        and ``count`` of them from ``start`` on, in path and line order."""
        needle = query.encode("utf-8").lower()
        where, args = under_sql("f.path", directory)
        fresh = "f.isize IS f.size AND f.imtime IS f.mtime_ns"
        stale = [
            (p, s, m)
            for p, s, m in conn.execute(
                f"SELECT path, size, mtime_ns FROM files f WHERE {where} AND NOT ({fresh}) ORDER BY path", args
            )
        ]
        if not self.db.trigram or len(needle.decode("utf-8", "replace")) < 3:
            every = conn.execute(f"SELECT path, size, mtime_ns FROM files f WHERE {where} ORDER BY path", args)
            hits = self._scan(every.fetchall(), needle)
            return len(hits), hits[start : start + count]
        match = '"' + _low(needle).replace('"', '""') + '"'
        base = (
            f"FROM lines l JOIN files f ON f.id = (l.rowid >> {LINE_BITS}) WHERE lines MATCH ? AND {fresh} AND {where}"
        )
        total = conn.execute(f"SELECT count(*) {base}", [match, *args]).fetchone()[0]
        select = f"SELECT f.path, l.rowid & {_MASK}, l.text {base} ORDER BY f.path, l.rowid"
        if not stale:
            rows = conn.execute(f"{select} LIMIT ? OFFSET ?", [match, *args, count, start]).fetchall()
            return total, [LineHit(p, n, t) for p, n, t in rows]
        found = [LineHit(p, n, t) for p, n, t in conn.execute(select, [match, *args])]
        found += self._scan(stale, needle)
        found.sort(key=lambda h: (h.path, h.line))
        return len(found), found[start : start + count]

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
