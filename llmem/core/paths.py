"""Workspace containment: every path a client sends must stay inside the workspace.

Paths are resolved against the workspace with symlinks followed, then compared by
containment (``Path.is_relative_to`` on resolved paths), never by string prefix, so
``/ws`` does not admit ``/ws_secret`` and a symlink pointing out is caught. Nothing is
opened or read before the check passes.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from llmem.core.errors import InvalidArgument, PathOutsideWorkspace

__all__ = ["MAX_DEPTH", "MAX_PATH_CHARS", "NAME_MAX", "ResolvedPath", "relative_key", "resolve_in_workspace"]

MAX_PATH_CHARS = 4096
#: the longest file name POSIX systems and Windows allow (bytes / UTF-16 units)
NAME_MAX = 255
MAX_DEPTH = 256
_DRIVE = re.compile(r"^[A-Za-z]:")


class ResolvedPath:
    """An absolute path known to lie inside the workspace, with its workspace-relative key."""

    __slots__ = ("_abs", "_text", "key")

    def __init__(self, abs_path: Path | str, key: str):
        self._text = str(abs_path)
        self._abs = abs_path if isinstance(abs_path, Path) else None
        self.key = key  # POSIX, relative to the workspace; "." for the workspace itself

    @property
    def abs(self) -> Path:
        # Made when first asked for: a read that needs only the key never pays for the Path.
        if self._abs is None:
            self._abs = Path(self._text)
        return self._abs

    def __repr__(self) -> str:
        return f"ResolvedPath({self.key!r})"


def _refuse(path: str, rule: str) -> PathOutsideWorkspace:
    return PathOutsideWorkspace(
        f"path {path!r} is refused: {rule}. Give a path relative to the workspace, e.g. 'src/app.py'.",
        details={"field": "path", "path": path, "rule": rule},
    )


def relative_key(workspace: Path | str, resolved: Path | str) -> str:
    """The POSIX key of ``resolved``, known to lie inside ``workspace`` (both resolved); "." for itself."""
    ws, target = str(workspace), str(resolved)
    if len(target) == len(ws):
        return "."
    # Containment was checked by parts, so the workspace is a prefix of the same length here
    # (up to case on Windows); skip it and the separator after it (none after a root like "/").
    start = len(ws) if ws.endswith(os.sep) else len(ws) + 1
    rel = target[start:]
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


def resolve_in_workspace(workspace: Path, path: str, *, field: str = "path") -> ResolvedPath:
    """Resolve a client-supplied path; raise :class:`PathOutsideWorkspace` if it leaves ``workspace``.

    ``workspace`` must already be resolved. The path may be relative (the usual form) or absolute
    inside the workspace. Backslashes are read as separators, because clients on Windows send them.
    """
    if not isinstance(path, str):
        raise InvalidArgument(f"{field} must be a string", details={"field": field, "rule": "type"})
    if len(path) > MAX_PATH_CHARS:
        raise InvalidArgument(
            f"{field} is {len(path)} characters long; at most {MAX_PATH_CHARS} are accepted",
            details={"field": field, "rule": "max_length", "limit": MAX_PATH_CHARS},
        )
    if "\x00" in path:
        raise _refuse(path, "it contains a NUL byte")
    text = path.strip() or "."
    if text.startswith(("\\\\", "//")):
        raise _refuse(path, "UNC network paths are outside the workspace")
    if _DRIVE.match(text) and not (Path(text).is_absolute() and Path(text).drive):
        raise _refuse(path, "Windows drive paths are outside the workspace")
    text = text.replace("\\", "/")
    # Split by hand, as PurePosixPath would ("a//b/./c" is a, b, c): parsing a path object costs
    # more than the system calls below, and this runs on every call.
    absolute = text.startswith("/")
    parts = tuple(p for p in text.split("/") if p and p != ".")
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in parts):
        raise InvalidArgument(
            f"{field} has a segment over {NAME_MAX} bytes, longer than any file name can be",
            details={"field": field, "rule": "name_max", "limit": NAME_MAX},
        )
    if len(parts) + absolute > MAX_DEPTH:
        raise InvalidArgument(
            f"{field} is {len(parts) + absolute} segments deep; at most {MAX_DEPTH} are accepted",
            details={"field": field, "rule": "max_depth", "limit": MAX_DEPTH},
        )
    ws = str(workspace)
    if absolute or os.path.isabs(text):  # noqa: PTH117
        target = text
    else:
        plain = _plain_below(ws, parts)
        if plain is not None:
            return ResolvedPath(plain, relative_key(ws, plain))
        target = os.path.join(ws, *parts) if parts else ws  # noqa: PTH118
    try:
        resolved_text = os.path.realpath(target)
        _refuse_symlink_loop(resolved_text)
    except (OSError, RuntimeError, ValueError) as exc:  # symlink loops, over-long names
        raise _refuse(path, f"it cannot be resolved ({exc.__class__.__name__})") from None
    resolved = Path(resolved_text)
    if not resolved.is_relative_to(workspace):
        if ".." in parts:
            raise _refuse(path, "'..' leads outside the workspace")
        if absolute:
            raise _refuse(path, "absolute paths must lie inside the workspace")
        raise _refuse(path, "it resolves (through a symlink) to a place outside the workspace")
    return ResolvedPath(resolved, relative_key(ws, resolved_text))


def _plain_below(ws: str, parts: tuple[str, ...]) -> str | None:
    """``parts`` joined below the resolved workspace when each is an existing entry that is no symlink.

    Such a path is its own real path and lies inside the workspace by construction, so the common
    case costs one ``lstat`` per segment instead of ``realpath``'s walk from the root. Anything
    else (a symlink, ``..``, a missing entry, another OS's separators) returns None and goes the
    long way.
    """
    if os.name != "posix" or not parts:
        return None
    path = ws.rstrip("/")
    for part in parts:
        if part == "..":
            return None
        path = f"{path}/{part}"
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):
            return None
        if stat.S_ISLNK(mode):
            return None
    return path


def _refuse_symlink_loop(resolved: str) -> None:
    """Raise on a symlink loop, which ``realpath`` leaves in place without a word (as pathlib does)."""
    try:
        os.stat(resolved)  # noqa: PTH116
    except OSError as exc:
        # ELOOP on POSIX; Windows says ERROR_CANT_RESOLVE_FILENAME (1921)
        if exc.errno == errno.ELOOP or getattr(exc, "winerror", None) == 1921:
            raise RuntimeError(f"symlink loop at {resolved!r}") from None
