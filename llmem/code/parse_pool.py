"""Outlining files into the store, one at a time or many at once in worker processes.

The unit of work is :func:`outline_batch`: read each file, outline it and store the outline (or,
when its bytes are those already outlined, only refresh the stored fingerprint). A folder parse
of many changed files (:data:`POOL_MIN_FILES` or more) hands batches to worker processes, which
store what they make themselves: encoding and writing are spread over the cores with the
parsing, and only a few words per file come back (with, for an outline that replaced an older one,
the names and hashes of both: :data:`Replaced`, what ``symbol_history`` remembers of renames). This process takes batches too, the next one
no worker has started (it cancels that batch's future and does it here), so a fresh server's
first parse does not wait for its workers to start; batches shrink towards the end, so that
the last ones end together.

The workers start at the first large parse and stay for the next. They are forked from a
process with one thread, else from a fork server (another thread may hold a lock that a fork
would copy held), else spawned (Windows). Their stdout is their stderr (a stdio server's stdout
is the protocol) and their stdin is empty. While a batch is outlined, the cyclic garbage
collector rests: an AST is hundreds of thousands of objects without a cycle, and collecting
passes over them cost a fifth of the parse.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llmem.core.store import ArtifactStore, Fingerprint

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "NAMESPACE",
    "OUTLINE",
    "POOL_CHUNK",
    "POOL_MIN_FILES",
    "PRODUCER",
    "Item",
    "Outcome",
    "Replaced",
    "outline_batch",
    "outline_file",
    "outline_many",
    "store_outline",
    "usable_cores",
]

NAMESPACE = "llmem"
PRODUCER = "llmem-mcp"
OUTLINE = "outline"
#: Changed files from which a folder parse outlines in worker processes.
POOL_MIN_FILES = 48
#: Files per batch at most, and at least: batches shrink towards the end of the list (guided
#: scheduling), so that the last ones, which this process may take too, end together.
POOL_CHUNK = 16
POOL_CHUNK_MIN = 2
#: What made each language's outline, for the provenance (tree-sitter for the rest).
_PARSERS = {
    "python": "ast",
    "markdown": "markdown headings",
    "package-json": "json",
    "pyproject": "tomllib",
    "cargo": "tomllib",
    "go-mod": "go.mod lines",
}

#: An outline replaced by a new one: (key, old content, new content), each content cut to its
#: language and its symbols' names, kinds, lines and hashes, flat (``symbol_history.remember_replaced``
#: needs no more, and a worker sends back no more).
Replaced = tuple[str, dict[str, Any], dict[str, Any]]
#: One file's fate: its key, "parsed" | "unchanged" | "failed", whether its new outline is a
#: fallback one, why it failed, and what it replaced (None for a file outlined the first time).
Outcome = tuple[str, str, bool, str | None, Replaced | None]
#: A file to outline: its key, its absolute path, and the fingerprint stored for it (if any).
Item = tuple[str, str, Fingerprint | None]
Made = tuple[int, int, str, dict[str, Any]]  # size, mtime_ns, sha256, outline content


def outline_file(key: str, path: str) -> Made:
    """Read and outline one file: its fingerprint and its outline's content."""
    from llmem.code.outline import build_outline

    with open(path, "rb") as handle:  # noqa: PTH123 - a plain string path crosses to workers cheaply
        data = handle.read()
        mtime_ns = os.fstat(handle.fileno()).st_mtime_ns
    outline = build_outline(key, data)
    return len(data), mtime_ns, hashlib.sha256(data).hexdigest(), outline.model_dump(mode="json")


_SYMBOL_FIELDS = ("qualified_name", "kind", "start_line", "end_line", "hash", "signature")


def _names_and_hashes(content: Any) -> dict[str, Any]:
    """``content`` cut to what :data:`Replaced` keeps."""
    from llmem.code.carry import symbol_dicts

    if not isinstance(content, dict):
        return {"language": None, "symbols": []}
    symbols = [{f: s.get(f) for f in _SYMBOL_FIELDS} for s in symbol_dicts(content.get("symbols", []))]
    return {"language": content.get("language"), "symbols": symbols}


def store_outline(
    store: ArtifactStore, key: str, made: Made, stored: Fingerprint | None
) -> tuple[str, Replaced | None]:
    """Store ``made`` as ``key``'s outline: "parsed", or "unchanged" when its bytes are those the
    stored outline was made from (then only the fingerprint is refreshed: a checkout, a touch);
    and, when it replaced an older outline, what both listed (:data:`Replaced`)."""
    size, mtime_ns, sha, content = made
    fp = Fingerprint(size, mtime_ns, sha)
    old: Any = None
    if stored is not None:
        record = store.get_or_none(NAMESPACE, key, OUTLINE)
        if record is not None and stored.sha256 == sha:
            store.put(
                NAMESPACE,
                key,
                OUTLINE,
                content=record.doc["content"],
                fmt="json",
                provenance=record.doc.get("provenance", {}),
                source=fp,
                durable=False,
            )
            return "unchanged", None
        old = record.doc.get("content") if record is not None else None
    language = content.get("language")
    store.put(
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
    replaced = (key, _names_and_hashes(old), _names_and_hashes(content)) if old is not None else None
    return "parsed", replaced


def _reason(exc: OSError) -> str:
    return f"{exc.__class__.__name__}: {exc.strerror or exc}"


def outline_batch(store: ArtifactStore, items: list[Item]) -> list[Outcome]:
    """Outline and store each of ``items`` (here or in a worker); a file that cannot be read or
    whose outline cannot be written is "failed", with the reason, and costs the others nothing."""
    out: list[Outcome] = []
    with _gc_resting:
        for key, path, stored in items:
            try:
                made = outline_file(key, path)
                state, replaced = store_outline(store, key, made, stored)
            except OSError as exc:
                out.append((key, "failed", False, _reason(exc), None))
                continue
            out.append((key, state, state == "parsed" and made[3].get("mode") == "fallback", None, replaced))
    return out


# -- the cyclic garbage collector, resting while ASTs are built ----------------------------------


class _GcRest:
    """No cyclic collection inside (re-entrant, and across threads: the last one out restores it).
    Reference counting still frees every AST when its file is done; only cycles wait."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._guard:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1

    def __exit__(self, *exc: object) -> None:
        with self._guard:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()


_gc_resting = _GcRest()


# -- worker processes ------------------------------------------------------------------------------

_STORES: dict[tuple[str, str], ArtifactStore] = {}


def _worker_init() -> None:
    """A worker's stdout goes to stderr and its stdin reads nothing: a stdio server's stdout and
    stdin are the protocol, which a stray print or read in a worker would corrupt."""
    import sys

    with contextlib.suppress(OSError):
        os.dup2(2, 1)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    sys.stdout = sys.stderr


def _imported_from() -> str:
    """Where a worker's ``llmem`` and ``json`` came from (the test of the fork server's path)."""
    import json

    import llmem

    return f"{Path(llmem.__file__).resolve()} {Path(json.__file__).resolve()}"


def _worker_batch(root: str, workspace: str, items: list[Item]) -> list[Outcome]:
    """:func:`outline_batch` in a worker, on its own handle of the store (kept for the next batch)."""
    store = _STORES.get((root, workspace))
    if store is None:
        store = _STORES[(root, workspace)] = ArtifactStore(Path(root), Path(workspace))
    return outline_batch(store, items)


def usable_cores() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on macOS / Windows
        return os.cpu_count() or 1


class _Workers:
    """The worker processes, made at the first large parse and kept for the next: one per core
    but one (this process outlines too)."""

    def __init__(self) -> None:
        self._pool: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

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
                        ["llmem.code.parse_pool", "llmem.code.outline", "llmem.code.outline.python"]
                    )
                    _start_fork_server()
                self._pool = ProcessPoolExecutor(
                    max_workers=max(1, usable_cores() - 1), mp_context=context, initializer=_worker_init
                )
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


def _start_fork_server() -> None:
    """Start the fork server importing what this process imports. On Python 3.11 it runs as
    ``python -c …`` and ignores the ``sys.path`` it is given, so the server's working folder (the
    user's project, where an IDE starts it) would come first: a ``json.py`` or ``llmem/`` there
    would be imported instead. ``PYTHONSAFEPATH`` leaves the working folder out, and the folder
    this ``llmem`` was imported from goes first on ``PYTHONPATH``."""
    from multiprocessing import forkserver

    import llmem

    home = str(Path(llmem.__file__).resolve().parents[1])
    saved = {k: os.environ.get(k) for k in ("PYTHONSAFEPATH", "PYTHONPATH")}
    os.environ["PYTHONSAFEPATH"] = "1"
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (home, saved["PYTHONPATH"]) if p)
    try:
        forkserver.ensure_running()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _batches(todo: list[Item], takers: int) -> list[list[Item]]:
    """``todo`` in batches of a quarter of what is left per taker, within the bounds."""
    out: list[list[Item]] = []
    start = 0
    while start < len(todo):
        size = min(POOL_CHUNK, max(POOL_CHUNK_MIN, (len(todo) - start) // (4 * takers)))
        out.append(todo[start : start + size])
        start += size
    return out


def _next_unstarted(futures: list[Future[list[Outcome]]], front: int) -> tuple[int, Future[list[Outcome]] | None]:
    """The first batch from ``front`` on that no worker has taken, cancelled for this process to
    do (a cancelled future is never run), and where to look next time."""
    while front < len(futures):
        future = futures[front]
        front += 1
        if future.cancel():
            return front, future
    return front, None


def outline_many(
    store: ArtifactStore, todo: list[Item], between: Callable[[], None] | None = None
) -> Iterator[Outcome]:
    """Outline and store ``todo``: in workers and here when it is worth it, else here; yields each
    file's outcome as it comes in. ``between`` is called here between batches while workers go
    on (the search index catching up with what they wrote, so that little is left at the end).

    A worker that dies (killed, out of memory) costs nothing but time: what it had is done here."""
    if len(todo) < POOL_MIN_FILES or usable_cores() < 2:
        for item in todo:
            yield from outline_batch(store, [item])
        return
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    chunks = _batches(todo, max(1, usable_cores() - 1) + 1)
    left = dict(enumerate(chunks))
    root, workspace = str(store.root), str(store.workspace)
    try:
        pool = _WORKERS.get()
        futures = [pool.submit(_worker_batch, root, workspace, chunk) for chunk in chunks]
        which = {future: i for i, future in enumerate(futures)}
        pending = set(futures)
        front = 0  # batches go to workers in order: this process takes the next one none has started
        while pending:
            done, pending = wait(pending, timeout=0, return_when=FIRST_COMPLETED)
            if not done:
                front, mine = _next_unstarted(futures, front)
                if mine is not None:
                    pending.discard(mine)
                    yield from outline_batch(store, left.pop(which[mine]))
                if between is not None:
                    between()
                if mine is None:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                outcomes = future.result()
                del left[which[future]]
                yield from outcomes
    except (BrokenProcessPool, OSError, RuntimeError):
        _WORKERS.drop()
        for chunk in list(left.values()):
            yield from outline_batch(store, chunk)
