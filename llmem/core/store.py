"""The file-based artifact store shared by every server and every process of the suite.

Layout under the store root::

    artifacts/<namespace>/<workspace-relative path>/<kind>.json   one artifact per file
    pending/<ticket>.json                                          open prompt tickets
    docs/<namespace>/<name>.json                                   small shared state documents
    scratch/<name>/                                                lock and temporary files of
                                                                   files outside the store (plots)
    locks/artifact-NNN.lock, locks/ticket-NNN.lock                 striped cross-process locks
    cache/                                                         rebuildable caches (search)
    .gitignore                                                     ``*``: all of the above

A store inside a repository stays out of ``git status`` (an agent's ``git add -A`` would commit
hundreds of files otherwise): the store writes its own ``.gitignore`` holding ``*`` at its first
write (and never rewrites one a user wrote or edited: one that keeps only the housekeeping out
makes the notes reviewable). Locks are striped (:data:`LOCK_STRIPES` files per kind of lock), not one
per artifact.

Listing walks the files themselves (sorted, lazily, resuming after a cursor), so there is no
index that could drift. Every write is atomic; every read-modify-write holds a cross-process
lock and re-reads under it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from llmem.core._readcache import ReadCache, Signature
from llmem.core.errors import ArtifactNotFound, InvalidArgument, SuiteError
from llmem.core.fsutil import (
    atomic_write_bytes,
    atomic_write_json,
    hold_lock_file,
    loads_json,
    locked,
    read_json,
    stripe_lock_file,
)

__all__ = [
    "JOURNAL",
    "ArtifactStore",
    "Fingerprint",
    "Status",
    "fingerprint_file",
    "now_iso",
]

Status = Literal["fresh", "stale", "orphaned"]
T = TypeVar("T")
SCHEMA_VERSION = 1
_HASH_CHUNK = 1 << 20
#: How often a write retries after a concurrent delete pruned the folder it was writing into.
_PRUNE_RACE_RETRIES = 5
#: The change journal under ``cache/``: one JSON line per put or delete, appended after the change,
#: for caches (the search index) to catch up with what any process changed.
JOURNAL = "journal.log"
#: Lock files per set (artifacts, tickets): enough that unrelated writers rarely wait on each other.
LOCK_STRIPES = 64
STORE_GITIGNORE = """\
# Written by llmem when it made this folder: nothing of the store shows in git status, nor
# goes in with `git add -A` (nor out with `git clean -fd`, untracked files only). To commit the
# notes, replace `*` by the housekeeping only: /locks/ /pending/ /scratch/ /cache/ /docs/ *.tmp
# *.lock. This file is never rewritten.
*
"""


def now_iso(ts: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if ts is None else ts, UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Fingerprint:
    size: int
    mtime_ns: int
    sha256: str

    def to_dict(self) -> dict[str, Any]:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Fingerprint:
        return cls(int(raw["size"]), int(raw["mtime_ns"]), str(raw["sha256"]))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fingerprint_file(path: Path, data: bytes | None = None) -> Fingerprint:
    st = path.stat()
    sha = hashlib.sha256(data).hexdigest() if data is not None else sha256_file(path)
    return Fingerprint(st.st_size, st.st_mtime_ns, sha)


def source_status(path: str | Path, fp: Fingerprint) -> Status:
    """Cheap first (size and mtime), sha256 only when they moved."""
    try:
        st = os.stat(path)  # noqa: PTH116 - a string path is cheaper than building a Path per read
    except FileNotFoundError:
        return "orphaned"
    except OSError:
        return "stale"
    if not stat.S_ISREG(st.st_mode):
        return "orphaned"
    if st.st_size == fp.size and st.st_mtime_ns == fp.mtime_ns:
        return "fresh"
    if st.st_size != fp.size:
        return "stale"
    try:
        return "fresh" if sha256_file(Path(path)) == fp.sha256 else "stale"
    except OSError:
        return "stale"


def _key_parts(key: str) -> tuple[str, ...]:
    if key in ("", "."):
        return ()
    if "\x00" in key or "\\" in key or key.startswith("/"):
        raise InvalidArgument(f"store key {key!r} is not a relative POSIX path", details={"key": key})
    parts = tuple(key.split("/"))
    if any(p in ("", "..", ".") for p in parts):
        raise InvalidArgument(f"store key {key!r} may not contain empty, '.' or '..' segments", details={"key": key})
    return parts


def _key_of(parts: tuple[str, ...]) -> str:
    return "/".join(parts) if parts else "."


def _check_name(name: str, what: str) -> None:
    if not name or "/" in name or "\\" in name or "\x00" in name or name.startswith("."):
        raise InvalidArgument(f"{what} {name!r} is not a plain name", details={what: name})


@dataclass
class ArtifactRecord:
    """One artifact as stored: the JSON document plus where it lives."""

    namespace: str
    key: str
    kind: str
    doc: dict[str, Any]
    file: Path
    size: int = 0  # bytes of the artifact file as read (an upper bound of its content's JSON)
    #: the file's stat signature when it is known to tell this version from any later one
    version: Signature | None = None

    @property
    def source(self) -> Fingerprint | None:
        raw = self.doc.get("source")
        return Fingerprint.from_dict(raw) if isinstance(raw, dict) else None


class ArtifactStore:
    """The store rooted at ``root`` for the (resolved) ``workspace``."""

    def __init__(self, root: Path, workspace: Path):
        self.root = root
        self.workspace = workspace
        self._read_cache = ReadCache()
        self._artifacts = str(root / "artifacts")
        self._locks = root / "locks"
        self._gitignore_written = False
        self._journal_file = root / "cache" / JOURNAL

    def _journal(self, op: str, namespace: str, key: str, kind: str) -> None:
        """Append one change to the journal (a single ``write`` of one short line: O_APPEND keeps
        lines of concurrent writers whole). A failure here costs a cache its freshness, never the write."""
        line = json.dumps({"op": op, "ns": namespace, "key": key, "kind": kind}, ensure_ascii=False) + "\n"
        for _attempt in range(2):
            try:
                fd = os.open(self._journal_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            except FileNotFoundError:
                self._journal_file.parent.mkdir(parents=True, exist_ok=True)
                continue
            except OSError:
                return
            try:
                os.write(fd, line.encode("utf-8"))
            except OSError:
                pass
            finally:
                os.close(fd)
            return

    def _ensure_gitignore(self) -> None:
        """Write the store's ``.gitignore`` once, before its first housekeeping file appears."""
        if self._gitignore_written:
            return
        file = self.root / ".gitignore"
        if not file.exists():
            with contextlib.suppress(FileExistsError):
                # Several processes may race here: whichever lands first wins, all write the same.
                atomic_write_bytes(file, STORE_GITIGNORE.encode("utf-8"), durable=False)
        self._gitignore_written = True

    @contextlib.contextmanager
    def lock(self, file: Path, stripe_set: str = "artifact") -> Iterator[None]:
        """The cross-process lock of one of the store's files: a stripe of ``stripe_set``."""
        self._ensure_gitignore()
        with hold_lock_file(stripe_lock_file(self._locks, stripe_set, str(file), LOCK_STRIPES)):
            yield

    # -- artifacts -----------------------------------------------------------------------

    def _dir_text(self, namespace: str, key: str) -> str:
        # Strings joined once: building Paths part by part costs more than the read they lead to.
        _check_name(namespace, "namespace")
        return os.path.join(self._artifacts, namespace, *_key_parts(key))  # noqa: PTH118

    def _dir(self, namespace: str, key: str) -> Path:
        return Path(self._dir_text(namespace, key))

    def artifact_file(self, namespace: str, key: str, kind: str) -> Path:
        _check_name(kind, "kind")
        return Path(os.path.join(self._dir_text(namespace, key), f"{kind}.json"))  # noqa: PTH118

    def put(
        self,
        namespace: str,
        key: str,
        kind: str,
        *,
        content: Any,
        fmt: str,
        provenance: dict[str, Any],
        source: Fingerprint | None = None,
        extra: dict[str, Any] | None = None,
        durable: bool = True,
    ) -> ArtifactRecord:
        """Write one artifact atomically under its lock (keeping ``created_at`` of a rewrite).

        ``durable=False`` (outlines: derived, rebuildable) skips the fsyncs, never the atomicity.
        """
        file = self.artifact_file(namespace, key, kind)
        if file.is_dir():
            raise SuiteError(
                f"cannot store kind {kind!r} for {key!r}: {file} is a folder of another artifact path",
                details={"key": key, "kind": kind},
            )
        for attempt in range(_PRUNE_RACE_RETRIES):
            try:
                with self.lock(file):
                    created = now_iso()
                    if file.exists():
                        with contextlib.suppress(OSError, ValueError):
                            created = str(read_json(file).get("created_at", created))
                    doc: dict[str, Any] = {
                        "schema": SCHEMA_VERSION,
                        "namespace": namespace,
                        "path": key,
                        "kind": kind,
                        "format": fmt,
                        "created_at": created,
                        "updated_at": now_iso(),
                        "provenance": provenance,
                        "source": source.to_dict() if source else None,
                        **(extra or {}),
                        "content": content,
                    }
                    atomic_write_json(file, doc, durable=durable)
                    self._journal("put", namespace, key, kind)
                break
            except (FileNotFoundError, FileExistsError):
                # A delete in another thread or process pruned the folder, now empty, between its
                # making and the lock or temporary file landing in it (or while ``mkdir`` looked at
                # it, which then reports it as existing but not a folder): make it again and retry.
                if attempt == _PRUNE_RACE_RETRIES - 1:
                    raise
        return ArtifactRecord(namespace, key, kind, doc, file)

    def get(self, namespace: str, key: str, kind: str, *, shared: bool = False) -> ArtifactRecord:
        """One artifact. With ``shared``, its document may be the one other readers of the same
        unchanged file get too (a warm read is then one ``stat``): the caller must not change it.
        """
        file = self.artifact_file(namespace, key, kind)
        try:
            version = None
            if shared:
                doc, size, version = self._read_cache.read(str(file), loads_json)
            else:
                raw = file.read_bytes()
                doc, size = loads_json(raw), len(raw)
        except FileNotFoundError:
            raise ArtifactNotFound(
                f"no {kind!r} artifact for {key!r}",
                details={"path": key, "kind": kind, "available_kinds": self.kinds(namespace, key)},
            ) from None
        except (OSError, ValueError) as exc:
            raise ArtifactNotFound(
                f"the {kind!r} artifact for {key!r} is unreadable ({exc}); regenerate it",
                details={"path": key, "kind": kind, "reason": "unreadable"},
            ) from None
        if not isinstance(doc, dict):
            raise ArtifactNotFound(f"the {kind!r} artifact for {key!r} is not a JSON object")
        return ArtifactRecord(namespace, key, kind, doc, file, size, version)

    def get_or_none(self, namespace: str, key: str, kind: str) -> ArtifactRecord | None:
        try:
            return self.get(namespace, key, kind)
        except ArtifactNotFound:
            return None

    def kinds(self, namespace: str, key: str) -> list[str]:
        folder = self._dir(namespace, key)
        try:
            with os.scandir(folder) as it:
                return sorted(
                    e.name[:-5] for e in it if e.name.endswith(".json") and not e.name.startswith(".") and e.is_file()
                )
        except (FileNotFoundError, NotADirectoryError):
            return []

    def status_of(self, record: ArtifactRecord) -> Status | None:
        """Freshness against the source file; None when the artifact has no source."""
        fp = record.source
        if fp is None:
            return None
        src = self.workspace.joinpath(*_key_parts(record.key))
        return source_status(src, fp)

    def delete(self, namespace: str, key: str, kind: str | None = None, *, recursive: bool = False) -> int:
        """Delete one kind, all kinds of ``key``, or (``recursive``) everything below it; count files."""
        if kind is not None:
            file = self.artifact_file(namespace, key, kind)
            if not file.is_file():
                return 0  # nothing to delete: take no lock, make no folder
            try:
                with self.lock(file):
                    file.unlink()
                    self._journal("delete", namespace, key, kind)
            except (FileNotFoundError, FileExistsError):
                # Deleted meanwhile, or its folder pruned (empty, so without it) by another delete.
                return 0
            finally:
                self._remove_lock(file)
                self._prune(file.parent, namespace)
            return 1
        count = 0
        for k, kinds in list(self.iter_keys(namespace, key)) if recursive else [(key, self.kinds(namespace, key))]:
            for kd in kinds:
                count += self.delete(namespace, k, kd)
        return count

    def _remove_lock(self, file: Path) -> None:
        """Remove the sibling ``.lock`` file earlier versions left beside ``file``, if any."""
        with contextlib.suppress(OSError):
            file.with_name(file.name + ".lock").unlink()

    def _prune(self, folder: Path, namespace: str) -> None:
        top = self.root / "artifacts" / namespace
        while folder != top and folder.is_relative_to(top):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    def iter_keys(
        self, namespace: str, directory: str = ".", after: str | None = None
    ) -> Iterator[tuple[str, list[str]]]:
        """Yield ``(key, kinds)`` below ``directory`` in path order, starting after ``after``."""
        start = _key_parts(directory)
        cursor = _key_parts(after) if after else None
        yield from self._walk(self._dir(namespace, directory), start, cursor)

    def _walk(
        self, folder: Path, parts: tuple[str, ...], cursor: tuple[str, ...] | None
    ) -> Iterator[tuple[str, list[str]]]:
        try:
            with os.scandir(folder) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it if not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return
        kinds = sorted(n[:-5] for n, is_dir in entries if not is_dir and n.endswith(".json"))
        if kinds and (cursor is None or parts > cursor):
            yield _key_of(parts), kinds
        for name in sorted(n for n, is_dir in entries if is_dir):
            child = (*parts, name)
            if cursor is not None and cursor[: len(child)] > child:
                continue  # the whole subtree lies before the cursor
            yield from self._walk(folder / name, child, cursor if cursor and cursor[: len(child)] == child else None)

    # -- scratch -------------------------------------------------------------------------

    def scratch_dir(self, name: str) -> Path:
        """``scratch/<name>``: where writers of files outside the store (the analyst's plots) keep
        their lock and temporary files, so that nothing is made beside those files and every
        process of the workspace shares the locks. Made by its first user."""
        _check_name(name, "scratch")
        return self.root / "scratch" / name

    # -- tickets ------------------------------------------------------------------------

    def ticket_file(self, ticket: str) -> Path:
        if not ticket or not all(c.isalnum() or c in "-_" for c in ticket) or len(ticket) > 64:
            raise InvalidArgument(
                f"ticket {ticket[:80]!r} is malformed: use the ticket from callbackArgs unchanged",
                details={"field": "ticket", "rule": "format"},
            )
        return self.root / "pending" / f"{ticket}.json"

    def lock_ticket(self, file: Path) -> contextlib.AbstractContextManager[None]:
        return self.lock(file, "ticket")

    def write_ticket(self, ticket: str, doc: dict[str, Any]) -> None:
        file = self.ticket_file(ticket)
        with self.lock_ticket(file):
            atomic_write_json(file, doc)

    def pending(self, namespace: str | None = None, directory: str = ".") -> list[dict[str, Any]]:
        """Open (unused, unexpired) tickets, sweeping the expired ones on the way."""
        folder = self.root / "pending"
        prefix = _key_parts(directory)
        out: list[dict[str, Any]] = []
        now = time.time()
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        except FileNotFoundError:
            return out
        for name in names:
            file = folder / name
            try:
                doc = read_json(file)
            except (OSError, ValueError):
                continue
            if float(doc.get("expires_at_ts", 0)) < now:
                self._sweep(file)
                continue
            if doc.get("state") != "open":
                continue
            if namespace is not None and doc.get("namespace") != namespace:
                continue
            if _key_parts(str(doc.get("path", ".")))[: len(prefix)] != prefix:
                continue
            out.append(doc)
        return out

    def _sweep(self, file: Path) -> None:
        with self.lock_ticket(file):
            try:
                doc = read_json(file)
                if float(doc.get("expires_at_ts", 0)) < time.time():
                    file.unlink()
            except (OSError, ValueError):
                pass
        self._remove_lock(file)

    # -- small shared documents (selection, open plots, undo history) ---------------------

    def doc_file(self, namespace: str, name: str) -> Path:
        _check_name(namespace, "namespace")
        return self.root.joinpath("docs", namespace, *_key_parts(name)).with_suffix(".json")

    def read_doc(self, namespace: str, name: str, default: T) -> Any:
        try:
            return read_json(self.doc_file(namespace, name))
        except (FileNotFoundError, NotADirectoryError):
            return default
        except ValueError:
            return default

    def update_doc(self, namespace: str, name: str, default: Any, fn: Callable[[Any], tuple[Any, T]]) -> T:
        """Read-modify-write a shared document under its lock; ``fn`` returns (new value, result)."""
        file = self.doc_file(namespace, name)
        self._ensure_gitignore()
        with locked(file):
            current = self.read_doc(namespace, name, default)
            new, result = fn(json.loads(json.dumps(current)))
            atomic_write_json(file, new)
        return result
