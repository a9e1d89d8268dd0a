"""Outlining files and folders into the store: incremental, honest about what it did.

A folder parse walks the workspace as a developer expects (``walk.py``), skips what is
unchanged (size and mtime, then sha256), and returns ``{parsed, unchanged, skipped, failed}``
with every skipped entry's reason — never success for work it did not do.

A first parse of a large tree uses the cores: the changed files are outlined in worker
processes (:data:`POOL_MIN_FILES` or more) while this process writes the outlines. Outlines are
derived and can be made again, so they are written without an fsync each (still atomically).

A folder parse that outlasts its budget (``Limits.parse_budget_s``) is never lost to a client
that gives up: it goes on in a background thread, its progress kept in the store's shared
``parse-jobs`` document (so ``store_status`` in any process shows it), and a second call for the
same folder waits on the running job instead of starting another.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument
from llmem.core.paths import ResolvedPath
from llmem.core.store import ArtifactStore, Fingerprint, now_iso

__all__ = ["NAMESPACE", "OUTLINE", "PRODUCER", "Parser", "Progress", "ProgressSink"]

NAMESPACE = "llmem"
PRODUCER = "llmem-mcp"
OUTLINE = "outline"
SKIPPED_SHOWN = 50
#: Changed files from which a folder parse outlines in worker processes.
POOL_MIN_FILES = 48
#: Files per task sent to a worker: large enough to pay for the round trip.
POOL_CHUNK = 16
#: What made each language's outline, for the provenance (tree-sitter for the rest).
_PARSERS = {
    "python": "ast",
    "markdown": "markdown headings",
    "package-json": "json",
    "pyproject": "tomllib",
    "cargo": "tomllib",
    "go-mod": "go.mod lines",
}
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
    #: (key, old content, new content) of outlines replaced: what they no longer list is remembered
    replaced: list[tuple[str, Any, Any]] = field(default_factory=list)


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
        #: Called with (key, old content, new content) of the outlines a parse replaced
        #: (``symbol_history.remember_replaced``: what they no longer list).
        self.after_replace: Callable[[list[tuple[str, Any, Any]]], None] | None = None

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
        outline = self._outline_if_changed(rp.key, rp.abs, counts)
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
            "reparsed": outline is not None,
            **self._after(counts),
        }

    def _outline_if_changed(
        self, key: str, abs_path: Path, counts: ParseCounts, seen: tuple[int, int] | None = None
    ) -> Any:
        """Store a fresh outline unless the stored one still matches (size+mtime, then sha256).

        ``seen`` is the (size, mtime_ns) a folder walk already read, saving a second stat.
        """
        file = self.store.artifact_file(NAMESPACE, key, OUTLINE)
        stored = _read_header_fingerprint(file)
        if seen is None:
            st = abs_path.stat()
            seen = (st.st_size, st.st_mtime_ns)
        if stored is not None and (stored.size, stored.mtime_ns) == seen:
            counts.unchanged += 1
            return None
        made = outline_file(key, str(abs_path))
        return self._store_outline(key, made, stored, counts)

    def _store_outline(self, key: str, made: _Made, stored: Fingerprint | None, counts: ParseCounts) -> Any:
        size, mtime_ns, sha, content = made
        fp = Fingerprint(size, mtime_ns, sha)
        if stored is not None and stored.sha256 == sha:
            # Same bytes, new mtime (a checkout, a touch): refresh the fingerprint so the next run is cheap.
            record = self.store.get_or_none(NAMESPACE, key, OUTLINE)
            if record is not None:
                self.store.put(
                    NAMESPACE,
                    key,
                    OUTLINE,
                    content=record.doc["content"],
                    fmt="json",
                    provenance=record.doc.get("provenance", {}),
                    source=fp,
                    durable=False,
                )
                counts.unchanged += 1
                return None
        if content.get("mode") == "fallback":
            counts.fallback += 1
        if stored is not None:  # what the old outline listed, for symbol_history (renames, removals)
            old = self.store.get_or_none(NAMESPACE, key, OUTLINE)
            if old is not None:
                counts.replaced.append((key, old.doc.get("content"), content))
        language = content.get("language")
        self.store.put(
            NAMESPACE,
            key,
            OUTLINE,
            content=content,
            fmt="json",
            provenance={
                "producer": PRODUCER,
                "tool": "generate_artifact",
                "task": "parse",
                "parser": _PARSERS.get(str(language), "tree-sitter") if language else "none",
            },
            source=fp,
            durable=False,  # derived: a parse makes it again; never worth an fsync per file
        )
        counts.parsed += 1
        counts.changed.append(key)
        return content

    # -- a folder ------------------------------------------------------------------------------

    def _parse_folder(self, rp: ResolvedPath, progress: ProgressSink) -> dict[str, Any]:
        from llmem.code.walk import walk_workspace

        walked = walk_workspace(self.ws, rp.abs, max_file_bytes=self.limits.max_file_bytes)
        skipped = [{"path": s.rel_path, "reason": s.reason} for s in walked.skipped]
        failed: list[dict[str, str]] = []
        counts = ParseCounts()
        total = len(walked.files)
        progress.report(0, total, f"outlining {total} files under {rp.key}")
        todo: list[tuple[str, Path, Fingerprint | None]] = []
        for entry in walked.files:
            stored = _read_header_fingerprint(self.store.artifact_file(NAMESPACE, entry.rel_path, OUTLINE))
            if stored is not None and (stored.size, stored.mtime_ns) == (entry.size, entry.mtime_ns):
                counts.unchanged += 1
            else:
                todo.append((entry.rel_path, entry.abs_path, stored))
        done = counts.unchanged
        step = max(1, total // 50)
        last_report = done
        if done:
            progress.report(done, total, f"{done}/{total} files ({done} unchanged)")
        for key, made, stored, error in _outline_all(todo):
            if error is not None:
                failed.append({"path": key, "reason": error})
            else:
                assert made is not None
                try:
                    self._store_outline(key, made, stored, counts)
                except OSError as exc:
                    failed.append({"path": key, "reason": f"{exc.__class__.__name__}: {exc.strerror or exc}"})
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


_Made = tuple[int, int, str, dict[str, Any]]  # size, mtime_ns, sha256, outline content


def outline_file(key: str, path: str) -> _Made:
    """Read and outline one file (in this process or a worker): its fingerprint and outline."""
    from llmem.code.outline import build_outline

    with open(path, "rb") as handle:  # noqa: PTH123 - a plain string path crosses to workers cheaply
        data = handle.read()
        mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
    outline = build_outline(key, data)
    return len(data), mtime_ns, hashlib.sha256(data).hexdigest(), outline.model_dump(mode="json")


def _outline_chunk(items: list[tuple[str, str]]) -> list[tuple[str, _Made | None, str | None]]:
    out: list[tuple[str, _Made | None, str | None]] = []
    for key, path in items:
        try:
            out.append((key, outline_file(key, path), None))
        except OSError as exc:
            out.append((key, None, f"{exc.__class__.__name__}: {exc.strerror or exc}"))
    return out


class _Workers:
    """Worker processes for outlining, made at the first large parse and kept for the next."""

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # Fork only a process with one thread: another thread (the server's) may hold a lock
                # the child would inherit held. Else a fork server, which starts clean.
                methods = multiprocessing.get_all_start_methods()
                method = (
                    "fork"
                    if "fork" in methods and threading.active_count() == 1
                    else "forkserver"
                    if "forkserver" in methods
                    else "spawn"
                )
                context = multiprocessing.get_context(method)
                if method == "forkserver":
                    context.set_forkserver_preload(
                        ["llmem.code.outline", "llmem.code.outline.python", "llmem.code.parsing"]
                    )
                self._pool = ProcessPoolExecutor(max_workers=max(1, os.cpu_count() or 1), mp_context=context)
                import atexit

                # Shut down before the interpreter tears modules down (else a noisy weakref error).
                atexit.register(self.drop)
            return self._pool

    def drop(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


_WORKERS = _Workers()


def _outline_all(
    todo: list[tuple[str, Path, Fingerprint | None]],
) -> Iterator[tuple[str, _Made | None, Fingerprint | None, str | None]]:
    """Outline ``todo`` in workers when it is worth it, else here; yields as results come in.

    A worker that dies (killed, out of memory) costs nothing but time: what it had is outlined
    here instead."""
    stored = {key: fp for key, _, fp in todo}
    if len(todo) < POOL_MIN_FILES or (os.cpu_count() or 1) < 2:
        for key, path, fp in todo:
            for k, made, error in _outline_chunk([(key, str(path))]):
                yield k, made, fp, error
        return
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    chunks = [[(k, str(p)) for k, p, _ in todo[i : i + POOL_CHUNK]] for i in range(0, len(todo), POOL_CHUNK)]
    left = dict(enumerate(chunks))
    try:
        pool = _WORKERS.get()
        futures = {pool.submit(_outline_chunk, chunk): i for i, chunk in left.items()}
        for future in as_completed(futures):
            results = future.result()
            del left[futures[future]]
            for key, made, error in results:
                yield key, made, stored.get(key), error
    except (BrokenProcessPool, OSError, RuntimeError):
        _WORKERS.drop()
        for chunk in list(left.values()):
            for key, made, error in _outline_chunk(chunk):
                yield key, made, stored.get(key), error


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
