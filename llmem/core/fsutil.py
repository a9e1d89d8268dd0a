"""File primitives every writer of the suite uses: atomic replace and cross-process locks.

A reader never sees half a file, whatever kills the writer: the bytes go to a temporary file
in the same folder, are flushed and fsynced, then ``os.replace`` swaps them in and the folder
is fsynced so the rename itself survives a crash. Read-modify-write cycles on shared files
run under :func:`locked`, an OS-level lock (``fcntl``/``msvcrt`` through ``filelock``) that
other processes honour, and re-read the file once the lock is held.

The store's own files keep their temporary files beside them, inside the store, and their locks
in a fixed set of striped lock files (:func:`stripe_lock_file`) under the store's ``locks/``: a
store of 50,000 artifacts has 50,000 files, not 100,000. Two paths may share a stripe, so a
process takes each lock file once, whatever its threads nest (:func:`locked` is re-entrant
within a thread and exclusive between threads). A user's file (an analyst's plot) must be left as the user keeps it, so its writers leave
nothing beside it and change only its bytes:

- :func:`locked` with ``lock_dir`` keeps the lock file there, named by the hash of the file's
  resolved path, so every process that passes the same ``lock_dir`` shares the lock;
- :func:`atomic_write_user_file` and :func:`atomic_create_user_file` write the temporary file
  in a scratch folder (``temp_dir``) and rename or link it into place. The one exception: a
  scratch folder on another device than the file's folder, which no rename can cross; then the
  temporary file is a hidden one beside the file, as for the store's files. Temporary files a
  killed writer left in the scratch folder are swept when a later write starts
  (:data:`ORPHAN_AGE_S`);
- the replacement gets the replaced file's permission bits and, where allowed, its owner and
  group; a new file gets ``0o666 & ~umask`` (:func:`new_file_mode`), as ``open()`` would give it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from pydantic_core import from_json

__all__ = [
    "ORPHAN_AGE_S",
    "atomic_create_user_file",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_user_file",
    "dumps_readable",
    "hold_lock_file",
    "loads_json",
    "locked",
    "new_file_mode",
    "read_json",
    "stripe_lock_file",
]

#: How long a writer waits for another process's lock before giving up.
LOCK_TIMEOUT_S = 30.0
#: A temporary file in a scratch folder not written for this long was left by a killed writer.
ORPHAN_AGE_S = 3600.0
#: ``os.link`` errors that mean "no hard links here" (FAT, some network shares), not "no".
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK, errno.EINVAL})


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":  # Windows cannot open a directory for fsync
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix.

    ``durable=False`` skips the fsyncs: the replace stays atomic, but a power cut may lose the
    write. For files that can be derived again (outlines), never for what a model wrote.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        raise
    if durable:
        _fsync_dir(path.parent)


def _umask_from_proc() -> int | None:
    try:
        with Path("/proc/self/status").open("rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _umask_at_import() -> int:
    from_proc = _umask_from_proc()
    if from_proc is not None:
        return from_proc
    # Elsewhere the only way to read the umask is to set it and set it back, and the umask is the
    # process's, not the thread's: done once, at import, before the servers run threads, with the
    # strictest value in between should another thread create a file in that instant anyway.
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


_UMASK_AT_IMPORT: Final = _umask_at_import()


def new_file_mode() -> int:
    """The permission bits ``open()`` gives a new file: ``0o666 & ~umask`` (the umask read live from
    ``/proc/self/status`` on Linux, elsewhere as it was when this module was imported)."""
    mask = _umask_from_proc()
    return 0o666 & ~(_UMASK_AT_IMPORT if mask is None else mask)


def _sweep_orphans(temp_dir: Path) -> None:
    """Remove the temporary files a killed writer left in ``temp_dir`` (one folder listing; the
    folder normally holds only the writes in flight)."""
    cutoff = time.time() - ORPHAN_AGE_S
    try:
        entries = os.scandir(temp_dir)
    except FileNotFoundError:
        return
    with entries:
        for entry in entries:
            if entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):  # another writer swept it first
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        Path(entry.path).unlink()


def _temp_folder(temp_dir: Path, folder: Path) -> Path:
    """``temp_dir``, unless it is on another device than ``folder``: a rename cannot cross file
    systems, so the temporary file then goes beside the file (the one case anything does)."""
    temp_dir.mkdir(parents=True, exist_ok=True)
    return temp_dir if temp_dir.stat().st_dev == folder.stat().st_dev else folder


def _adopt(fd: int, like: os.stat_result | None) -> None:
    """Give the open temporary file the permission bits of the file it replaces (``like``) and,
    where allowed, its owner and group; a new file gets :func:`new_file_mode`."""
    if sys.platform == "win32":  # no owners, and mkstemp leaves the read-only flag clear
        return
    if like is not None:
        # Owner and group are best effort: only root may give a file away, and a group we are
        # not in is refused too; then keep at least the group. Before the mode, which a chown
        # may strip of its set-id bits.
        for uid in (like.st_uid, -1):
            try:
                os.fchown(fd, uid, like.st_gid)
                break
            except OSError:
                continue
    # A file system without Unix modes (FAT, SMB) may refuse a mode it cannot store.
    with contextlib.suppress(PermissionError):
        os.fchmod(fd, stat.S_IMODE(like.st_mode) if like is not None else new_file_mode())


def _write_temp(folder: Path, name: str, data: bytes, like: os.stat_result | None) -> str:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            _adopt(handle.fileno(), like)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        raise
    return tmp_name


def _put_via(
    folder: Path, path: Path, data: bytes, like: os.stat_result | None, put: Callable[[str, Path], None]
) -> None:
    tmp_name = _write_temp(folder, path.name, data, like)
    try:
        put(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        raise


def _install(
    path: Path, data: bytes, temp_dir: Path, like: os.stat_result | None, put: Callable[[str, Path], None]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_orphans(temp_dir)
    try:
        _put_via(_temp_folder(temp_dir, path.parent), path, data, like, put)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        # Same device number, yet the rename crossed a mount point (one file system mounted twice,
        # a bind mount): the temporary file goes beside the file after all.
        _put_via(path.parent, path, data, like, put)
    _fsync_dir(path.parent)


def atomic_write_user_file(path: Path, data: bytes, *, temp_dir: Path) -> None:
    """Replace (or create) ``path``, a file of the user's, so that readers see the old or the new
    file, never a mix, keeping its permission bits (and, where allowed, owner and group); the
    temporary file is made in ``temp_dir`` (see the module docstring for the one exception)."""
    try:
        like = path.stat()
    except FileNotFoundError:
        like = None
    _install(path, data, temp_dir, like, os.replace)


def _link_no_clobber(tmp_name: str, path: Path) -> None:
    try:
        os.link(tmp_name, path)  # FileExistsError if anything has the name, whoever made it
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links on this file system: look, then rename. Only writers that hold the lock
        # are kept out now, which is why the caller must hold it.
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(tmp_name, path)
        return
    Path(tmp_name).unlink()


def atomic_create_user_file(path: Path, data: bytes, *, temp_dir: Path) -> None:
    """Create ``path`` whole (readers never see a part of it), or raise ``FileExistsError`` and
    change nothing if the name is taken: the temporary file is hard-linked to ``path``, which no
    writer can race, lock or no lock. Where the file system has no hard links the check holds
    against writers of :func:`locked` only, so the caller holds ``path``'s lock. Missing parent
    folders are made; the file gets :func:`new_file_mode`."""
    _install(path, data, temp_dir, None, _link_no_clobber)


def dumps_readable(value: Any) -> str:
    """JSON with one top-level member per line: readable metadata, compact (C-encoded) values.

    ``indent=`` would force Python's pure-Python encoder, several times slower on big content.
    """
    if not isinstance(value, dict) or not value:
        return json.dumps(value, ensure_ascii=False) + "\n"
    members = (f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    return "{\n" + ",\n".join(members) + "\n}\n"


def atomic_write_json(path: Path, value: Any, *, durable: bool = True) -> None:
    atomic_write_bytes(path, dumps_readable(value).encode("utf-8"), durable=durable)


def loads_json(raw: bytes) -> Any:
    """Parse a stored JSON document: pydantic-core's parser (about twice as fast as ``json``),
    with ``json`` as the judge of what it refuses (lone surrogate escapes, say)."""
    try:
        return from_json(raw)
    except ValueError:
        return json.loads(raw)


def read_json(path: Path) -> Any:
    return loads_json(path.read_bytes())


def _lock_file(path: Path, lock_dir: Path | None) -> Path:
    if lock_dir is None:
        return path.with_name(path.name + ".lock")
    # normcase: one lock for the names Windows takes for one file
    key = os.path.normcase(path.resolve())
    return lock_dir / f"{hashlib.sha256(os.fsencode(key)).hexdigest()[:32]}.lock"


def stripe_lock_file(lock_dir: Path, stripe_set: str, key: str, stripes: int) -> Path:
    """The lock file of ``key`` among ``stripes`` lock files of ``stripe_set`` in ``lock_dir``.

    Different sets never share a file, so code that nests a lock of one set inside a lock of
    another (a ticket's, then an artifact's) cannot deadlock on a shared stripe.
    """
    stripe = int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=4).digest()) % stripes
    return lock_dir / f"{stripe_set}-{stripe:03d}.lock"


class _ProcessLock:
    """One lock file as this process holds it: its threads exclude each other through an RLock
    (a thread may nest), and the first holder takes the OS lock for the whole process."""

    __slots__ = ("depth", "file_lock", "thread_lock")

    def __init__(self, lock_file: str) -> None:
        from filelock import FileLock  # only writers pay for it

        self.thread_lock = threading.RLock()
        self.file_lock = FileLock(lock_file, thread_local=False)
        self.depth = 0


_PROCESS_LOCKS: dict[str, _ProcessLock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


def _forget_process_locks() -> None:
    """In a forked child (a parse worker, forked from a process of one thread): the parent's locks
    are not the child's to hold, and ``filelock`` refuses a lock made before the fork; the child
    makes its own as it needs them."""
    _PROCESS_LOCKS.clear()


if hasattr(os, "register_at_fork"):  # not on Windows, which never forks
    os.register_at_fork(after_in_child=_forget_process_locks)


def _process_lock(lock_file: Path) -> _ProcessLock:
    key = str(lock_file)
    with _PROCESS_LOCKS_GUARD:
        held = _PROCESS_LOCKS.get(key)
        if held is None:
            lock_file.parent.mkdir(parents=True, exist_ok=True)
            held = _PROCESS_LOCKS[key] = _ProcessLock(key)
        return held


@contextlib.contextmanager
def hold_lock_file(lock_file: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold ``lock_file`` against other processes and other threads; re-entrant in one thread."""
    from filelock import Timeout

    held = _process_lock(lock_file)
    started = time.monotonic()
    if not held.thread_lock.acquire(timeout=timeout):
        raise Timeout(str(lock_file))
    try:
        if held.depth == 0:
            try:
                held.file_lock.acquire(timeout=max(0.0, timeout - (time.monotonic() - started)))
            except FileNotFoundError:
                # The locks folder was removed under us (a user cleaning the store): make it again.
                lock_file.parent.mkdir(parents=True, exist_ok=True)
                held.file_lock.acquire(timeout=max(0.0, timeout - (time.monotonic() - started)))
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                held.file_lock.release()
    finally:
        held.thread_lock.release()


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S, *, lock_dir: Path | None = None) -> Iterator[None]:
    """Hold the cross-process lock that guards ``path``: a sibling ``.lock`` file, or with
    ``lock_dir`` a file there named by the sha256 of ``path`` resolved (nothing made beside it)."""
    with hold_lock_file(_lock_file(path, lock_dir), timeout):
        yield
