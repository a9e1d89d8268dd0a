"""Outlining files and folders into the store: incremental, honest about what it did.

A folder parse walks the workspace as a developer expects (``walk.py``), skips what is
unchanged (size and mtime, then sha256), and returns ``{parsed, unchanged, skipped, failed}``
with every skipped entry's reason — never success for work it did not do.

A first parse of a large tree uses the cores: the changed files are outlined and stored in
worker processes and in this one (``parse_pool.py``). Outlines are derived and can be made
again, so they are written without an fsync each (still atomically).

A folder parse that outlasts its budget (``Limits.parse_budget_s``) is never lost to a client
that gives up: it goes on in a background thread, its progress kept in the store's shared
``parse-jobs`` document (so ``store_status`` in any process shows it), and a second call for the
same folder waits on the running job instead of starting another.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from llmem.code.parse_pool import (
    NAMESPACE,
    OUTLINE,
    PRODUCER,
    Item,
    Outcome,
    Replaced,
    outline_file,
    outline_many,
    store_outline,
)
from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument
from llmem.core.paths import ResolvedPath
from llmem.core.store import ArtifactStore, Fingerprint, now_iso

__all__ = ["NAMESPACE", "OUTLINE", "PRODUCER", "Parser", "Progress", "ProgressSink"]

SKIPPED_SHOWN = 50
#: Finished parse jobs kept in the shared document (the newest).
JOBS_KEPT = 10
#: How often a running job writes its progress to the shared document, at most.
JOB_WRITE_EVERY_S = 0.5


class ProgressSink(Protocol):
    """Where long work reports progress; the server adapts it to MCP progress notifications."""

    def report(self, done: int, total: int | None, message: str) -> None: ...


class Progress:
    """A sink that drops progress (direct callers that do not watch)."""

    def report(self, done: int, total: int | None, message: str) -> None:
        return None


def _read_header_fingerprint(file: Path) -> Fingerprint | None:
    """The stored source fingerprint, read from the head of the artifact file without parsing it all."""
    try:
        with file.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "ignore")
    except OSError:
        return None
    at = head.find('"source": ')
    if at < 0:
        return None
    try:
        raw, _ = json.JSONDecoder().raw_decode(head, at + len('"source": '))
    except ValueError:
        return None
    return Fingerprint.from_dict(raw) if isinstance(raw, dict) else None


@dataclass
class ParseCounts:
    parsed: int = 0
    unchanged: int = 0
    fallback: int = 0
    changed: list[str] = field(default_factory=list)  # keys whose outline was made anew
    #: outlines replaced, what each listed before and after: what they no longer list is remembered
    replaced: list[Replaced] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        key, state, fallback, _reason, replaced = outcome
        if state == "parsed":
            self.parsed += 1
            self.fallback += fallback
            self.changed.append(key)
            if replaced is not None:
                self.replaced.append(replaced)
        elif state == "unchanged":
            self.unchanged += 1


class Parser:
    """Outlines into ``store``; ``parse`` takes a path already resolved inside the workspace."""

    def __init__(self, store: ArtifactStore, limits: Limits):
        self.store = store
        self.ws = store.workspace
        self.limits = limits
        self._jobs: dict[str, _Job] = {}
        self._jobs_lock = threading.Lock()
        #: Called with the keys whose outline a parse made anew; what it returns joins the answer
        #: (notes carried over renamed and moved symbols: ``Notes.carry_notes``).
        self.after_parse: Callable[[list[str]], dict[str, Any]] | None = None
        #: Called with (key, old content, new content) of the outlines a parse replaced, cut to
        #: their symbols' names and hashes (``symbol_history.remember_replaced``: what they no
        #: longer list); a worker process that stored an outline sends that back with its outcome.
        self.after_replace: Callable[[list[Replaced]], None] | None = None
        #: Called now and then while a large parse goes on (the search index catching up).
        self.while_parsing: Callable[[], None] | None = None
        #: Seconds the after-parse hook takes a file (for :meth:`refresh_files`), as last measured.
        self._after_s = 0.005

    def _after(self, counts: ParseCounts) -> dict[str, Any]:
        if counts.replaced and self.after_replace is not None:
            self.after_replace(counts.replaced)
        if self.after_parse is None or not counts.changed:
            return {}
        return self.after_parse(counts.changed)

    def parse(
        self, rp: ResolvedPath, progress: ProgressSink | None = None, budget_s: float | None = None
    ) -> dict[str, Any]:
        """Outline a file, or a folder. With ``budget_s``, a folder parse not done by then goes on
        in the background and the answer says so (``complete: false``, ``job``, ``state``)."""
        if rp.abs.is_file():
            return self._parse_one_file(rp)
        if budget_s is None:
            return self._parse_folder(rp, progress or Progress())
        return self._parse_in_job(rp, progress or Progress(), budget_s)

    # -- one file ------------------------------------------------------------------------------

    def _parse_one_file(self, rp: ResolvedPath) -> dict[str, Any]:
        from llmem.code.outline import detect_language

        if rp.abs.stat().st_size > self.limits.max_file_bytes:
            raise InvalidArgument(
                f"{rp.key!r} is over the {self.limits.max_file_bytes}-byte file cap; it is not outlined",
                details={"path": rp.key, "rule": "max_file_bytes", "limit": self.limits.max_file_bytes},
            )
        counts = ParseCounts()
        reparsed = self._outline_if_changed(rp.key, rp.abs, counts)
        record = self.store.get(NAMESPACE, rp.key, OUTLINE)
        content = record.doc["content"]
        return {
            "path": rp.key,
            "parsed": counts.parsed,
            "unchanged": counts.unchanged,
            "skipped": 0,
            "failed": 0,
            "language": detect_language(rp.key),
            "mode": content.get("mode"),
            "symbols": _count_symbols(content.get("symbols", [])),
            "reparsed": reparsed,
            **self._after(counts),
        }

    def refresh_files(self, keys: list[str], deadline: float, at_least: int = 0) -> list[str]:
        """Outline the files ``keys`` anew where they changed, in order, until ``deadline`` (a
        ``time.monotonic()`` value) but ``at_least`` of them whatever the time; the keys brought up
        to date. A file gone or grown past the file cap meanwhile is left out. One after-parse
        hook for them all (notes carried, the search database caught up): its time, learnt from
        the last ones, is counted in, so the whole ends near ``deadline``."""
        counts = ParseCounts()
        done: list[str] = []
        for key in keys:
            if len(done) >= at_least and time.monotonic() + self._after_s * (len(counts.changed) + 1) >= deadline:
                break
            path = self.ws.joinpath(*key.split("/"))
            try:
                st = path.stat()
                if st.st_size > self.limits.max_file_bytes:
                    continue
                self._outline_if_changed(key, path, counts, (st.st_size, st.st_mtime_ns))
            except OSError:
                continue
            done.append(key)
        started = time.monotonic()
        self._after(counts)
        if counts.changed:  # what the hook took a file, smoothed: the next refresh plans with it
            took = (time.monotonic() - started) / len(counts.changed)
            self._after_s = (self._after_s + took) / 2
        return done

    def _outline_if_changed(
        self, key: str, abs_path: Path, counts: ParseCounts, seen: tuple[int, int] | None = None
    ) -> bool:
        """Store a fresh outline unless the stored one still matches (size+mtime, then sha256);
        whether an outline was made anew. In this process: one file never starts workers.

        ``seen`` is the (size, mtime_ns) the caller already read, saving a second stat.
        """
        stored = _read_header_fingerprint(self.store.artifact_file(NAMESPACE, key, OUTLINE))
        if seen is None:
            st = abs_path.stat()
            seen = (st.st_size, st.st_mtime_ns)
        if stored is not None and (stored.size, stored.mtime_ns) == seen:
            counts.unchanged += 1
            return False
        made = outline_file(key, str(abs_path))
        state, replaced = store_outline(self.store, key, made, stored)
        counts.add((key, state, state == "parsed" and made[3].get("mode") == "fallback", None, replaced))
        return state == "parsed"

    # -- a folder ------------------------------------------------------------------------------

    def _parse_folder(self, rp: ResolvedPath, progress: ProgressSink) -> dict[str, Any]:
        from llmem.code.walk import walk_workspace

        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        skipped = [{"path": s.rel_path, "reason": s.reason} for s in walked.skipped]
        failed: list[dict[str, str]] = []
        counts = ParseCounts()
        total = len(walked.files)
        progress.report(0, total, f"outlining {total} files under {rp.key}")
        todo: list[Item] = []
        for entry in walked.files:
            stored = _read_header_fingerprint(self.store.artifact_file(NAMESPACE, entry.rel_path, OUTLINE))
            if stored is not None and (stored.size, stored.mtime_ns) == (entry.size, entry.mtime_ns):
                counts.unchanged += 1
            else:
                todo.append((entry.rel_path, str(entry.abs_path), stored))
        done = counts.unchanged
        step = max(1, total // 50)
        last_report = done
        if done:
            progress.report(done, total, f"{done}/{total} files ({done} unchanged)")
        for outcome in outline_many(self.store, todo, self.while_parsing):
            if outcome[1] == "failed":
                failed.append({"path": outcome[0], "reason": str(outcome[3])})
            counts.add(outcome)
            done += 1
            if done - last_report >= step or done == total:
                last_report = done
                progress.report(done, total, f"{done}/{total} files")
        by_reason: dict[str, int] = {}
        for s in skipped:
            by_reason[s["reason"]] = by_reason.get(s["reason"], 0) + 1
        # Paths listed in .llmemignore after they were parsed keep their artifacts until deleted:
        # say so, rather than let them linger in searches unnoticed.
        leftovers = [s["path"] for s in skipped if s["reason"] == "llmemignored" and self._has_artifacts(s["path"])]
        return {
            "path": rp.key,
            "parsed": counts.parsed,
            "unchanged": counts.unchanged,
            "skipped": len(skipped),
            "failed": len(failed),
            "fallback_outlines": counts.fallback,
            "complete": not failed,
            "skipped_by_reason": by_reason,
            "skipped_files": skipped[:SKIPPED_SHOWN],
            "skipped_truncated": len(skipped) > SKIPPED_SHOWN,
            "failed_files": failed[:SKIPPED_SHOWN],
            **({"ignored_with_artifacts": leftovers[:SKIPPED_SHOWN]} if leftovers else {}),
            **self._after(counts),
        }

    def _has_artifacts(self, skipped_path: str) -> bool:
        key = skipped_path.rstrip("/")
        if self.store.kinds(NAMESPACE, key):
            return True
        return skipped_path.endswith("/") and next(iter(self.store.iter_keys(NAMESPACE, key)), None) is not None

    # -- background jobs -----------------------------------------------------------------------

    def _parse_in_job(self, rp: ResolvedPath, progress: ProgressSink, budget_s: float) -> dict[str, Any]:
        with self._jobs_lock:
            job = self._jobs.get(rp.key)
            attached = job is not None and not job.finished.is_set()
            if not attached:
                job = _Job(self, rp)
                self._jobs[rp.key] = job
                job.start()
        assert job is not None
        job.watch(progress)
        try:
            finished = job.finished.wait(budget_s)
        finally:
            job.watch(None)
        if finished:
            if job.error is not None:
                raise job.error
            assert job.result is not None
            return {**job.result, "job": job.id, "state": "done", **({"attached": True} if attached else {})}
        return {
            "path": rp.key,
            "complete": False,
            "job": job.id,
            "state": "running",
            "attached": attached,
            "done": job.done,
            "total": job.total,
            "started_at": job.started_at,
            "note": (
                f"Still parsing after {budget_s:g} s; it goes on in the background. "
                "store_status shows its progress, and outlines read meanwhile are made on demand."
            ),
        }

    def jobs(self) -> list[dict[str, Any]]:
        """Folder parse jobs of every process, running first; a running one whose process is gone
        is ``interrupted``."""
        raw = self.store.read_doc(NAMESPACE, "parse-jobs", {})
        out = []
        for job_id, job in raw.items() if isinstance(raw, dict) else []:
            if not isinstance(job, dict):
                continue
            item = {"job": job_id, **job}
            if item.get("state") == "running" and not _alive(int(item.get("pid") or 0)):
                item["state"] = "interrupted"
            out.append(item)
        out.sort(key=lambda j: (j.get("state") != "running", str(j.get("started_at")) or ""), reverse=False)
        return out


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return True  # no cheap check: trust the state
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Job:
    """One folder parse running in a background thread of this process."""

    def __init__(self, parser: Parser, rp: ResolvedPath) -> None:
        self.parser = parser
        self.rp = rp
        self.id = uuid.uuid4().hex[:12]
        self.finished = threading.Event()
        self.result: dict[str, Any] | None = None
        self.error: Exception | None = None
        self.done = 0
        self.total: int | None = None
        self.started_at = now_iso()
        self._sink: ProgressSink | None = None
        self._written = 0.0

    def watch(self, sink: ProgressSink | None) -> None:
        """Forward progress to ``sink`` (the waiting client's), or to nobody."""
        self._sink = sink

    def start(self) -> None:
        self._write("running", force=True)
        threading.Thread(target=self._run, name=f"llmem-parse-{self.id}", daemon=True).start()

    def report(self, done: int, total: int | None, message: str) -> None:
        self.done, self.total = done, total
        sink = self._sink
        if sink is not None:
            sink.report(done, total, message)
        self._write("running")

    def _run(self) -> None:
        try:
            self.result = self.parser._parse_folder(self.rp, self)
            self._write("done", force=True)
        except Exception as exc:  # kept for the caller that waits; the job ends either way
            self.error = exc
            self._write("failed", force=True)
        finally:
            self.finished.set()

    def _write(self, state: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._written < JOB_WRITE_EVERY_S:
            return
        self._written = now
        result = self.result or {}
        entry = {
            "path": self.rp.key,
            "state": state,
            "done": self.done,
            "total": self.total,
            "parsed": result.get("parsed"),
            "unchanged": result.get("unchanged"),
            "skipped": result.get("skipped"),
            "failed": result.get("failed"),
            "started_at": self.started_at,
            "updated_at": now_iso(),
            "finished_at": now_iso() if state != "running" else None,
            "pid": os.getpid(),
        }

        def put(jobs: Any) -> tuple[Any, None]:
            jobs = jobs if isinstance(jobs, dict) else {}
            jobs[self.id] = entry
            finished = sorted(
                (k for k, v in jobs.items() if isinstance(v, dict) and v.get("state") != "running"),
                key=lambda k: str(jobs[k].get("finished_at") or ""),
            )
            for old in finished[: max(0, len(finished) - JOBS_KEPT)]:
                del jobs[old]
            return jobs, None

        try:
            self.parser.store.update_doc(NAMESPACE, "parse-jobs", {}, put)
        except OSError:
            pass  # progress is advisory: never fail the parse over it


def _count_symbols(symbols: list[dict[str, Any]]) -> int:
    return sum(1 + _count_symbols(s.get("children", [])) for s in symbols)
