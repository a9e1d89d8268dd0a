"""Parsed files kept while they are unchanged, so a warm read of an artifact costs one ``stat``.

Every write to the store is an atomic replace: a changed artifact file is a new inode with a new
change time. An entry is trusted on the file's stat signature alone (device, inode, size, mtime,
ctime) only when the file last changed well before the moment the signature was taken
(:data:`RACY_NS`): any later change then carries a later ctime, even on a clock whose ticks are
coarse. A file that changed just before it was read is "racily clean", as git calls it, and is
read and parsed again each time until it has aged.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["RACY_NS", "ReadCache", "Signature"]

#: How long after its last change a file's stat signature is trusted to tell every later change:
#: longer than the coarsest timestamps in use (FAT's two seconds), far shorter than a session.
RACY_NS = 3_000_000_000

#: (device, inode, size, mtime_ns, ctime_ns)
Signature = tuple[int, int, int, int, int]


class ReadCache:
    """A bounded LRU of ``path → parse(bytes)`` for files replaced atomically, never edited in place.

    The values are shared between callers: treat them as read-only.
    """

    def __init__(self, max_entries: int = 256, max_bytes: int = 64 << 20):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Signature, int, Any]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # tools run in worker threads, several at once

    def read(self, path: str, parse: Callable[[bytes], Any]) -> tuple[Any, int, Signature | None]:
        """``(parse(content of path), its size in bytes, its version)``; ``OSError`` as ``open`` raises it.

        The version is the stat signature the content is known to match, or None for a file
        that changed too recently to be told apart from its next change by its signature.
        """
        observed = time.time_ns()  # before the stat: the signature is at least this recent
        st = os.stat(path)  # noqa: PTH116 - a string path, on the hot path
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None and entry[0] == signature:
                self._entries.move_to_end(path)
                return entry[2], entry[1], signature
        with open(path, "rb") as handle:  # noqa: PTH123 - a string path, on the hot path
            raw = handle.read()
        value = parse(raw)
        if observed - st.st_ctime_ns > RACY_NS and len(raw) == st.st_size:
            self._keep(path, signature, len(raw), value)
            return value, len(raw), signature
        return value, len(raw), None

    def _keep(self, path: str, signature: Signature, size: int, value: Any) -> None:
        if size > self.max_bytes // 4:
            return
        with self._lock:
            old = self._entries.pop(path, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[path] = (signature, size, value)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_sig, dropped, _value) = self._entries.popitem(last=False)
                self._bytes -= dropped
