"""Whether the stored outline of a file is the file as it is now, and bringing it up to date.

The one place every answer built from stored outlines asks: search hits (``search_artifacts``),
``get_artifact`` outlines and the notes' freshness resting on them, folder prompts. Whether one
file is unchanged is the store's comparison (:func:`llmem.core.store.source_status`: size and
mtime, sha256 only when the size agrees and the mtime does not); what this module adds is knowing
*which* files to compare without a ``stat`` of every outlined file per question (50,000 of them
cost about 80 ms here), and re-parsing the changed ones within a budget.

Which files are compared:

- once per process, every outlined file, a folder at a time, each folder watched first
  (:mod:`llmem.code.watch`, Linux inotify): a change made before the watch is found by the
  comparison, any later one by its event. The fingerprints come from the search database's
  ``artifacts`` table. This runs in the background from ``llmem-mcp``'s start (or the first
  question), so that no question waits for it: the first waits :data:`FIRST_WAIT_S` at most,
  which covers a workspace of some ten thousand files; until it is done, each answer compares the
  files it is about itself (a search its hits' files, a folder prompt the folder's) and says how
  many files are not compared yet (``not_yet_compared``);
- then, at each question, only the files named by the events queued since (read at that very
  moment: no change made before the question is missed), and the outlines written since by any
  process (the store's change journal), whose folders get watched too. Events the kernel dropped
  mean everything is compared again;
- without inotify (not Linux, or the watch limit reached), every question compares every outlined
  file under its folder: the same answers, at about 1.6 µs a file.

Bringing up to date: the changed files are outlined again by the parser
(:meth:`llmem.code.parsing.Parser.refresh_files`), the files of an answer's hits first, until the
read's budget (``Limits.refresh_budget_ms``) is spent; a read about one file always refreshes
that file. The parser's after-parse hook carries notes of renamed symbols and brings the search
database along. What was not reached is answered per hit (``stale: true`` and the call that
refreshes it) and counted. A file deleted since is not parsed: its outline stays (``orphaned``)
and its hits say so.

Every refresh a read makes is remembered in the store (``docs/llmem/read-refreshes.json``) until
a parse covering the file reports it (``refreshed_since``): a parse right after an edit that a
search already took in says so, instead of a bare ``unchanged``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from llmem.code.index_db import IndexDb, read_journal, under_sql
from llmem.code.watch import IN_DELETE_SELF, IN_IGNORED, IN_ISDIR, IN_MOVE_SELF, Subscription, watcher
from llmem.core.store import ArtifactStore, Fingerprint, now_iso, source_status

__all__ = ["REFRESH_LOG", "OutlineFreshness", "Refresh", "Refresher"]

NAMESPACE = "llmem"
OUTLINE = "outline"
#: The store document of the refreshes reads made, until a parse reports them.
REFRESH_LOG = "read-refreshes"
#: Refreshes remembered at most (the oldest go first).
REFRESH_LOG_KEPT = 5_000
#: Paths of files not refreshed listed in an answer (all are counted).
STALE_SHOWN = 20
#: How long a process's first question waits for the comparison of every outlined file (begun
#: in the background at start-up or by that question): a workspace of some ten thousand files
#: is done by then; a larger one answers with its hits' files checked, and says how many it has
#: not compared yet.
FIRST_WAIT_S = 0.05
#: How long the background comparison holds the lock at a time.
BACKGROUND_SHARE_S = 0.01
log = logging.getLogger("llmem.code.freshness")

Runner = Callable[[Callable[[sqlite3.Connection], Any]], Any]


class Refresher(Protocol):
    """What re-parses outlines (the code memory's service, :class:`llmem.code.artifacts.Llmem`)."""

    def refresh_outlines(self, keys: list[str], deadline: float, at_least: int) -> list[str]: ...


def refresh_call(key: str, how: str) -> str:
    """The call that brings the outline of ``key`` up to date (``how``: ``changed`` or ``deleted``)."""
    if how == "deleted":
        return f"delete_artifact(path={key!r}, kind='outline')"
    return f"generate_artifact(path={key!r})"


@dataclass
class Refresh:
    """What a read found changed (``key → "changed" | "deleted"``) and what it brought up to date."""

    changed: dict[str, str] = field(default_factory=dict)
    refreshed: list[str] = field(default_factory=list)
    tried: set[str] = field(default_factory=set)  # handed to a refresh (done or not in its time)

    @property
    def left(self) -> dict[str, str]:
        done = set(self.refreshed)
        return {k: v for k, v in self.changed.items() if k not in done}

    def mark(self, key: str) -> dict[str, Any]:
        """What a hit in ``key`` must say beside itself: nothing, or that it is stale and how to refresh it."""
        how = self.changed.get(key)
        if how is None or key in self.refreshed:
            return {}
        return {
            "stale": True,
            **({"deleted": True} if how == "deleted" else {}),
            "refresh_with": refresh_call(key, how),
        }

    def summary(self, directory: str, stale_hits: int | None = None, not_compared: int = 0) -> dict[str, Any]:
        """The answer's count: files re-parsed before answering, and those left stale (with how
        many of the answer's hits lie in them); files a new process has not compared yet."""
        left = self.left
        out: dict[str, Any] = {"refreshed": len(self.refreshed), "stale_files": len(left)}
        if not_compared:
            out["not_yet_compared"] = not_compared
            out["not_yet_compared_means"] = (
                "outlined files this server, just started, has not yet compared with their files (it "
                "does so once, in the background, in seconds at most): every hit was checked, but a "
                "symbol new in one of them may be missing; ask again in a moment"
            )
        if left:
            if stale_hits is not None:
                out["stale_hits"] = stale_hits
            out.update(
                stale_paths=sorted(left)[:STALE_SHOWN],
                stale_means="changed since outlined and not re-parsed within the time budget: their hits may "
                "be out of date, their new symbols missing",
                refresh_with=f"generate_artifact(path={directory!r})",
            )
        return out


class OutlineFreshness:
    """The outlines of one store against the files; one per store per process (its search index's)."""

    def __init__(self, store: ArtifactStore, db: IndexDb, run: Runner) -> None:
        self.store = store
        self.db = db
        self._run = run
        self._ws = str(store.workspace)
        self._lock = threading.RLock()
        self._sub: Subscription | None = None
        self._sweep = False  # every question compares every outlined file under its folder
        #: The comparison of every outlined file, once per process (again after dropped events):
        #: its generation, whether it is done, and how many files it has still to compare.
        self._generation = 0
        self._complete = False
        self._done = threading.Event()
        self._pending_files = 0
        self._watched: set[str] = set()
        self._lost: set[str] = set()  # watched folders whose watch went (removed, renamed)
        #: Files that may differ from their outline, to compare at the next question; and files
        #: compared and found to differ, in watched folders: they stay so until an event (or an
        #: outline written) names them again, so a question does not compare them again.
        self._suspects: set[str] = set()
        self._known: dict[str, str] = {}
        self._suspect_dirs: set[str] = set()
        self._journal = (0, 0)
        #: Questions under way, and those of them waiting for the comparison: the background
        #: comparison gives way to the others.
        self._asking = 0
        self._waiting = 0
        self._asking_lock = threading.Lock()
        #: Who re-parses; set by the code memory's service when it is made.
        self.refresher: Refresher | None = None

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """Around a question: the background comparison pauses meanwhile (each question compares
        the files it is about itself until that comparison is done)."""
        with self._asking_lock:
            self._asking += 1
        try:
            yield
        finally:
            with self._asking_lock:
                self._asking -= 1

    # -- which outlines differ from their files ---------------------------------------------------

    def changed(
        self, directory: str = ".", keys: Iterable[str] | None = None, *, all_under: bool = False
    ) -> dict[str, str]:
        """The outlined files under ``directory`` (among ``keys`` when given) that differ from
        what their outline was made from: ``key → "changed" | "deleted"``, in path order.

        Until this process has compared every outlined file once (:attr:`not_compared`), the files
        named in ``keys``, or with ``all_under`` every outlined file under ``directory``, are
        compared here and now: an answer checks the files it is about."""
        wanted = None if keys is None else set(keys)
        with self._lock:
            began = bool(self._run(self._track))
        if began:  # small workspaces are compared in this time; larger ones go on in the background
            with self._asking_lock:
                self._waiting += 1  # a question waiting for the comparison does not hold it up
            try:
                self._done.wait(FIRST_WAIT_S)
            finally:
                with self._asking_lock:
                    self._waiting -= 1
        with self._lock:
            found: dict[str, str] = self._run(lambda conn: self._changed(conn, directory, wanted, all_under))
            return found

    @property
    def complete(self) -> bool:
        """Whether this process has compared every outlined file with its outline once (it does,
        in the background, from its start or its first question); until then every question
        compares the files it is about itself."""
        return self._complete or self._sweep

    @property
    def not_compared(self) -> int:
        """How many outlined files this process has still to compare once (0 when :attr:`complete`)."""
        return 0 if self.complete else self._pending_files

    def _track(self, conn: sqlite3.Connection) -> bool:
        """Suspect every file that may have changed since the last question (the lock held);
        whether the comparison of every outlined file was begun (again) for it."""
        if self._sub is None and not self._sweep:
            w = watcher()
            if w is None:
                self._sweep = True
            else:
                self._sub = w.subscribe()
        if self._sweep:
            return False
        if self._generation == 0:
            self._take_events()  # what the comparison of every file covers anyway
        elif not self._take_events():
            return self._follow_journal(conn)
        self._begin(conn)  # the first time, or the kernel dropped events: compare everything (again)
        return True

    def _changed(
        self, conn: sqlite3.Connection, directory: str, wanted: set[str] | None, all_under: bool
    ) -> dict[str, str]:
        if self._sweep:  # no inotify, or the watch limit reached: compare every outlined file
            rows = [(p, size, mtime) for p, size, mtime, _ in self._outlines(conn, directory, wanted)]
            return self._verify(conn, set(_moved_files(self._ws + "/", rows)))
        if self._suspect_dirs:
            for folder in self._suspect_dirs:
                self._suspect(p for p, *_ in self._outlines(conn, folder or ".", None))
            self._suspect_dirs.clear()

        def asked(key: str) -> bool:
            return _under(key, directory) and (wanted is None or key in wanted)

        candidates = {k for k in self._suspects if asked(k)}
        if not self._complete and wanted is not None:
            candidates |= {k for k in wanted if _under(k, directory)}
        elif not self._complete and all_under:
            rows = [(p, size, mtime) for p, size, mtime, _ in self._outlines(conn, directory, None)]
            candidates |= set(_moved_files(self._ws + "/", rows))
        found = self._verify(conn, candidates)
        found.update((k, how) for k, how in self._known.items() if asked(k))
        return dict(sorted(found.items()))

    def _suspect(self, keys: Iterable[str]) -> None:
        """To be compared at the next question, whatever was known of them."""
        for key in keys:
            self._known.pop(key, None)
            self._suspects.add(key)

    def _verify(self, conn: sqlite3.Connection, candidates: set[str]) -> dict[str, str]:
        if not candidates:
            return {}
        out: dict[str, str] = {}
        fps = {p: (size, mtime, sha) for p, size, mtime, sha in self._outlines(conn, ".", candidates)}
        for key in sorted(candidates):
            fp = fps.get(key)
            status = (
                "fresh"  # no outline (any more): nothing to be stale
                if fp is None or fp[0] is None
                else source_status(self._file(key), Fingerprint(int(fp[0]), int(fp[1] or 0), str(fp[2])))
            )
            self._known.pop(key, None)
            if status == "fresh":
                self._suspects.discard(key)
                continue
            out[key] = "deleted" if status == "orphaned" else "changed"
            if not self._sweep and key.rpartition("/")[0] in self._watched:
                self._known[key] = out[key]  # its next change comes as an event
                self._suspects.discard(key)
        return out

    def _outlines(
        self, conn: sqlite3.Connection, directory: str, keys: set[str] | None
    ) -> list[tuple[str, int | None, int | None, str | None]]:
        sql = "SELECT path, size, mtime_ns, sha256 FROM artifacts WHERE artifact = 'outline'"
        if keys is None:
            where, args = under_sql("path", directory)
            return list(conn.execute(f"{sql} AND {where}", args))
        out = []
        listed = sorted(keys)
        for at in range(0, len(listed), 500):
            chunk = listed[at : at + 500]
            out += conn.execute(f"{sql} AND path IN ({','.join('?' * len(chunk))})", chunk).fetchall()
        return out

    def _begin(self, conn: sqlite3.Connection) -> None:
        """Start comparing every outlined file once, in the background: each folder holding one is
        watched, then its outlined files compared. Changes written to the journal from here on are
        followed by the questions themselves."""
        self._journal = self.db.journal_state()
        self._suspect(list(self._known))  # events may have been lost: what was known is compared again
        self._generation += 1
        self._complete = False
        self._done.clear()
        self._pending_files = int(
            conn.execute("SELECT count(*) FROM artifacts WHERE artifact = 'outline' AND size IS NOT NULL").fetchone()[0]
        )
        generation = self._generation
        threading.Thread(
            target=self._compare_all, args=(generation,), name="llmem-compare-outlines", daemon=True
        ).start()

    def _compare_all(self, generation: int) -> None:
        """The background comparison: the outlines read on a connection of its own (no lock held),
        in path order, then compared a few hundred at a time under the lock, each file's folder
        watched first, the lock yielded between shares to the questions."""
        try:
            with contextlib.closing(sqlite3.connect(self.db.file, timeout=60)) as conn:
                rows = conn.execute(
                    "SELECT path, size, mtime_ns FROM artifacts WHERE artifact = 'outline' AND size IS NOT NULL"
                    " ORDER BY path"
                ).fetchall()
        except sqlite3.Error:
            log.warning("could not read the outlines to compare; every question compares its own files", exc_info=True)
            return
        prefix = self._ws + "/"
        at = 0
        while True:
            # Give way to questions under way, 20 ms at most a share: back-to-back questions must
            # not starve it (until it is done, each of them compares its own files).
            for _ in range(10):
                if self._asking <= self._waiting:
                    break
                time.sleep(0.002)
            with self._lock:
                if generation != self._generation:
                    return  # begun again meanwhile
                self._pending_files = len(rows) - at
                deadline = time.monotonic() + BACKGROUND_SHARE_S
                while at < len(rows) and time.monotonic() < deadline:
                    chunk = rows[at : at + 256]
                    for folder in {key.rpartition("/")[0] for key, _, _ in chunk} - self._watched:
                        self._watch(folder)
                    self._suspect(_moved_files(prefix, chunk))
                    at += len(chunk)
                    self._pending_files = len(rows) - at
                if at >= len(rows) or self._sweep:
                    self._complete = True
                    self._done.set()
                    return
            time.sleep(0.001)  # let a waiting question have the lock

    def _watch(self, folder: str) -> None:
        w = watcher()
        assert w is not None and self._sub is not None
        path = self._file(folder) if folder else self._ws
        if w.add(self._sub, path, folder):
            self._watched.add(folder)
            self._lost.discard(folder)
        elif os.path.isdir(path):  # noqa: PTH112 - there, but refused: the watch limit
            log.warning("inotify refused to watch %s (max_user_watches?): comparing files on every question", path)
            self._sweep = True
        else:
            self._lost.add(folder)
            self._suspect_dirs.add(folder)

    def _take_events(self) -> bool:
        """Suspect what the events since the last question name; whether some were lost."""
        w = watcher()
        assert w is not None and self._sub is not None
        events, overflowed = w.take(self._sub)
        for e in events:
            if e.mask & IN_IGNORED or (not e.name and e.mask & (IN_DELETE_SELF | IN_MOVE_SELF)):
                self._watched.discard(e.folder)
                self._lost.add(e.folder)
                self._suspect_dirs.add(e.folder)
                continue
            key = f"{e.folder}/{e.name}" if e.folder else e.name
            if e.mask & IN_ISDIR:
                self._suspect_dirs.add(key)  # a subfolder made, removed or renamed: what was outlined under it
            else:
                self._suspect([key])
        for folder in sorted(self._lost):
            if os.path.isdir(self._file(folder) if folder else self._ws):  # noqa: PTH112 - made again
                self._watch(folder)
                self._suspect_dirs.add(folder)
        return overflowed

    def _follow_journal(self, conn: sqlite3.Connection) -> bool:
        """Outlines any process wrote since: their folders watched, the files compared once;
        whether everything is to be compared again (another journal)."""
        ino, size = self.db.journal_state()
        if (ino, size) == self._journal:
            return False
        if self._journal != (0, 0) and (ino != self._journal[0] or size < self._journal[1]):
            self._begin(conn)  # another journal: start again
            return True
        changed, end = read_journal(self.db.journal, self._journal[1], size)
        self._journal = (ino, end)
        for key, kind in changed:
            if kind != OUTLINE:
                continue
            folder = key.rpartition("/")[0]
            if folder not in self._watched and folder not in self._lost:
                self._watch(folder)
            self._suspect([key])
        return False

    def _file(self, key: str) -> str:
        return f"{self._ws}/{key}"

    # -- bringing them up to date -----------------------------------------------------------------

    def refresh(
        self,
        changed: dict[str, str],
        *,
        by: str,
        budget_s: float,
        refresher: Callable[[], Refresher] | None = None,
        first: Iterable[str] = (),
        at_least: int = 0,
    ) -> Refresh:
        """Re-parse the ``changed`` files (``first`` first) until ``budget_s`` is spent, but
        ``at_least`` of them; remember what was done as done ``by`` that read. ``refresher``
        makes the re-parser when none is attached yet (a search in a process that has not made
        the code memory's service)."""
        result = Refresh(dict(changed))
        order = [k for k in dict.fromkeys([*first, *changed]) if changed.get(k) == "changed"]
        if not order:
            return result
        worker = self.refresher or (refresher() if refresher is not None else None)
        if worker is None:
            return result
        with self._lock:  # a parse taking what reads refreshed waits for the refresh and its record
            deadline = time.monotonic() + budget_s
            result.refreshed = worker.refresh_outlines(order, deadline, at_least)
            if result.refreshed:
                self.remember(result.refreshed, by)
        return result

    def bring_up_to_date(
        self,
        directory: str = ".",
        keys: Iterable[str] | None = None,
        *,
        by: str,
        budget_s: float,
        refresher: Callable[[], Refresher] | None = None,
        at_least: int = 0,
    ) -> Refresh:
        """:meth:`changed` (every file under ``directory`` compared, if this process has not
        compared them all yet), then :meth:`refresh`."""
        with self.asking():
            return self.refresh(
                self.changed(directory, keys, all_under=True),
                by=by,
                budget_s=budget_s,
                refresher=refresher,
                at_least=at_least,
            )

    def current_outline(
        self, key: str, *, by: str, refresher: Callable[[], Refresher] | None = None
    ) -> dict[str, Any] | None:
        """The outline content of ``key`` as the file is now: the stored one while it matches the
        file, else made again (one file: whatever the budget); None for a file not there."""
        record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
        if record is not None:
            fp = record.source
            status = source_status(self._file(key), fp) if fp is not None else "fresh"
            if status == "orphaned":
                return None
            if status == "fresh":
                content = record.doc.get("content")
                return content if isinstance(content, dict) else None
        elif not os.path.isfile(self._file(key)):  # noqa: PTH113
            return None
        self.refresh({key: "changed"}, by=by, budget_s=0, refresher=refresher, at_least=1)
        record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
        content = record.doc.get("content") if record is not None else None
        return content if isinstance(content, dict) else None

    # -- what reads refreshed, for the next parse ------------------------------------------------

    def remember(self, keys: list[str], by: str) -> None:
        """Keep, for the next parse's answer, that the read ``by`` outlined ``keys`` anew."""
        when = now_iso()

        def add(current: Any) -> tuple[Any, None]:
            log_ = current if isinstance(current, dict) else {}
            for key in keys:
                log_.pop(key, None)  # re-inserted: the newest last
                log_[key] = {"when": when, "by": by}
            for old in list(log_)[: max(0, len(log_) - REFRESH_LOG_KEPT)]:
                del log_[old]
            return log_, None

        try:
            self.store.update_doc(NAMESPACE, REFRESH_LOG, {}, add)
        except OSError:  # advisory: the refresh itself is done and stored
            log.warning("could not remember the refresh of %d outline(s)", len(keys), exc_info=True)

    def take_refreshed_since(self, directory: str) -> list[dict[str, str]]:
        """The refreshes reads made under ``directory`` (a file or a folder) since a parse last
        reported them, oldest first; reported once."""
        with self._lock:
            current = self.store.read_doc(NAMESPACE, REFRESH_LOG, {})
        if not isinstance(current, dict) or not any(_under(k, directory) for k in current):
            return []

        def take(log_: Any) -> tuple[Any, list[dict[str, str]]]:
            log_ = log_ if isinstance(log_, dict) else {}
            mine = [k for k in log_ if _under(k, directory)]
            out = [{"path": k, **log_.pop(k)} for k in mine if isinstance(log_.get(k), dict)]
            return log_, out

        with self._lock:
            taken: list[dict[str, str]] = self.store.update_doc(NAMESPACE, REFRESH_LOG, {}, take)
        return taken


def _moved_files(prefix: str, rows: Sequence[tuple[str, int | None, int | None]]) -> list[str]:
    """The keys whose file's size or mtime is not what their outline recorded, or that are gone.

    This runs over every outlined file at a process's first question: one ``stat`` and two
    comparisons a file, nothing more."""
    moved = []
    stat = os.stat
    for key, size, mtime_ns in rows:
        try:
            st = stat(prefix + key)
        except OSError:
            moved.append(key)
            continue
        if st.st_size != size or st.st_mtime_ns != mtime_ns:
            moved.append(key)
    return moved


def _under(key: str, directory: str) -> bool:
    return directory in (".", key) or key.startswith(directory + "/")
