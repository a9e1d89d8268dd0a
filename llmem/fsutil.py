"""File primitives every writer of the suite uses: atomic replace and cross-process locks.

A reader never sees half a file, whatever kills the writer: the bytes go to a temporary file
in the same folder, are flushed and fsynced, then ``os.replace`` swaps them in and the folder
is fsynced so the rename itself survives a crash. Read-modify-write cycles on shared files
run under :func:`locked`, an OS-level lock (``fcntl``/``msvcrt`` through ``filelock``) that
other processes honour, and re-read the file once the lock is held.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic_core import from_json

__all__ = ["atomic_write_bytes", "atomic_write_json", "dumps_readable", "loads_json", "locked", "read_json"]

#: How long a writer waits for another process's lock before giving up.
LOCK_TIMEOUT_S = 30.0


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":  # Windows cannot open a directory for fsync
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that readers see the old or the new file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp_name).unlink()
        raise
    _fsync_dir(path.parent)


def dumps_readable(value: Any) -> str:
    """JSON with one top-level member per line: readable metadata, compact (C-encoded) values.

    ``indent=`` would force Python's pure-Python encoder, several times slower on big content.
    """
    if not isinstance(value, dict) or not value:
        return json.dumps(value, ensure_ascii=False) + "\n"
    members = (f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    return "{\n" + ",\n".join(members) + "\n}\n"


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_bytes(path, dumps_readable(value).encode("utf-8"))


def loads_json(raw: bytes) -> Any:
    """Parse a stored JSON document: pydantic-core's parser (about twice as fast as ``json``),
    with ``json`` as the judge of what it refuses (lone surrogate escapes, say)."""
    try:
        return from_json(raw)
    except ValueError:
        return json.loads(raw)


def read_json(path: Path) -> Any:
    return loads_json(path.read_bytes())


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the cross-process lock that guards ``path`` (a sibling ``.lock`` file)."""
    from filelock import FileLock  # only writers pay for it

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path.with_name(path.name + ".lock")), timeout=timeout, thread_local=False)
    with lock:
        yield
