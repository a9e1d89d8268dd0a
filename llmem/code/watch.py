"""Which files of watched folders changed, known at the moment of asking: Linux inotify.

The kernel queues an inotify event inside the very ``write``, ``rename`` or ``unlink`` that makes
a change, before that call returns; reading the queue when a question comes (no thread, no
debounce) therefore sees every change made before it. Changes made while nothing watched (before
this process started) are another matter: :mod:`llmem.code.freshness` compares the files with
their outlines once, after the watches are in place.

One inotify instance serves the whole process (Linux allows 128 per user by default, and tests
open hundreds of workspaces); each folder is one watch, shared by every owner that asked for it.
Where inotify is missing (not Linux) or refused (``max_user_watches`` reached), :func:`watcher`
answers ``None`` or :meth:`Inotify.add` ``False``, and the caller falls back to ``stat``.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from dataclasses import dataclass, field

__all__ = ["Event", "Inotify", "Subscription", "watcher"]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
#: What a folder's watch reports: a file in it written, touched, made, removed or renamed, and
#: the folder itself removed or renamed.
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
#: Events kept for one owner between its questions; past that they are dropped and the owner told
#: (as when the kernel drops them): comparing every file once is then cheaper than reading them.
EVENTS_KEPT = 50_000


@dataclass(frozen=True)
class Event:
    folder: str  # the owner's name of the watched folder (workspace-relative, "" for the root)
    name: str  # the entry of the folder the event is about; "" for the folder itself
    mask: int


@dataclass
class Subscription:
    """One owner's events, kept until it takes them; ``overflowed`` when the kernel dropped some."""

    events: list[Event] = field(default_factory=list)
    overflowed: bool = False


class Inotify:
    """The process's inotify instance: folders watched for owners, events read on demand."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self._lock = threading.Lock()
        self._by_wd: dict[int, list[tuple[Subscription, str]]] = {}
        self._subscriptions: list[Subscription] = []

    def subscribe(self) -> Subscription:
        sub = Subscription()
        with self._lock:
            self._subscriptions.append(sub)
        return sub

    def add(self, sub: Subscription, path: str, folder: str) -> bool:
        """Watch the folder at ``path`` for ``sub``, which names it ``folder``; False when refused
        (gone, not a folder, the watch limit reached)."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), MASK)
        if wd < 0:
            return False
        with self._lock:
            owners = self._by_wd.setdefault(wd, [])
            if not any(s is sub and f == folder for s, f in owners):
                owners.append((sub, folder))
        return True

    def take(self, sub: Subscription) -> tuple[list[Event], bool]:
        """Every event queued for ``sub`` up to now, and whether the kernel dropped some (then
        everything may have changed); both cleared."""
        with self._lock:
            self._read()
            events, sub.events = sub.events, []
            overflowed, sub.overflowed = sub.overflowed, False
        return events, overflowed

    def _read(self) -> None:
        """Move every queued event to its owners' subscriptions (the lock held)."""
        while True:
            try:
                raw = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            at = 0
            while at + _HEADER.size <= len(raw):
                wd, mask, _cookie, size = _HEADER.unpack_from(raw, at)
                name = raw[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
                at += _HEADER.size + size
                if mask & IN_Q_OVERFLOW:
                    for sub in self._subscriptions:
                        sub.overflowed = True
                    continue
                text = os.fsdecode(name)
                for sub, folder in self._by_wd.get(wd, ()):
                    if len(sub.events) >= EVENTS_KEPT:  # nobody asked for a long while: compare all instead
                        sub.events.clear()
                        sub.overflowed = True
                    sub.events.append(Event(folder, text, mask))
                if mask & IN_IGNORED:  # the watch is gone (its folder removed): the number may be reused
                    self._by_wd.pop(wd, None)


_MADE: dict[str, Inotify | None] = {}  # "watcher" → the instance, once tried
_MADE_GUARD = threading.Lock()


def watcher() -> Inotify | None:
    """The process's inotify instance, made at first use; None where there is none to be had
    (not Linux, ``LLMEM_NO_INOTIFY`` set, or the kernel refused one)."""
    with _MADE_GUARD:
        if "watcher" not in _MADE:
            _MADE["watcher"] = _make()
        return _MADE["watcher"]


def _make() -> Inotify | None:
    if not sys.platform.startswith("linux") or os.environ.get("LLMEM_NO_INOTIFY"):
        return None
    try:
        # The process's own symbols hold libc's (find_library would run ldconfig: a process).
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
    except (OSError, AttributeError):
        return None
    return Inotify(libc, fd) if fd >= 0 else None
