"""Plot files on disk: which names are allowed, lossless load and save, a parse cache, and
read-modify-write under a cross-process lock.

Filenames (:func:`validate_plot_filename`): a workspace-relative POSIX path of a ``.plot.json``
file, with subfolders allowed (``mission1.plot.json``, ``ex/day 2/run.plot.json``); never
absolute, never ``..``, no backslashes or drive letters, no hidden (dot) segments, and after
resolving symlinks the file must still lie inside the workspace and still be a ``.plot.json``.

Lossless: the stdlib parser keeps key order, ints as ints and floats as floats (``repr``
round-trips), and :mod:`.jsonfmt` writes the layout the file was read in, so a no-op save gives
back the same JSON value, and for files Debrief wrote the same bytes.

Revision: the first 16 hex digits of the sha256 of the file's bytes, as read or as written.

Sharing: :class:`PlotCache` parses a file once and hands the same :class:`PlotDoc` to every
reader until the file's (size, mtime_ns, inode) changes; such a doc is frozen (its mutating
helpers refuse) and callers must not change its ``data``. :func:`modify_plot` gives ``fn`` a
private draft (a pickle deep copy, ~1 ms for 577 KB, or a shallow one for commands) and
re-encodes only the features whose value changed, so a failed change never touches the cache
or the file.

The analyst's files stay theirs: every writer takes a ``scratch_dir`` (the store's
``scratch/plots``, the same for every process of the workspace), which holds the plots' lock
files (``locks/<sha256 of the plot's resolved path>.lock``) and the temporary files of their
rewrites (``tmp/``), so nothing is left beside a plot, and a rewrite keeps the file's permission
bits (:func:`llmem.core.fsutil.atomic_write_user_file`; the one exception, a scratch folder on
another device, is described there). :func:`create_plot_file` never replaces a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from debrief_calc.errors import Conflict, PlotExists, PlotUnreadable, plot_not_found
from debrief_calc.formats.filenames import PLOT_SUFFIX, list_plot_files, relative_name, validate_plot_filename
from debrief_calc.formats.jsonfmt import DEFAULT_FORMAT, JsonFormat, detect_format
from debrief_calc.formats.plotdoc import PlotDoc, no_gc
from llmem.core.errors import SuiteError
from llmem.core.fsutil import atomic_create_user_file, atomic_write_user_file, locked

__all__ = [
    "PLOT_CACHE",
    "PLOT_SUFFIX",
    "PlotCache",
    "PlotDoc",
    "create_plot_file",
    "doc_title",
    "list_plot_files",
    "load_plot",
    "modify_plot",
    "plot_lock",
    "plot_title",
    "relative_name",
    "revision_of",
    "save_plot",
    "validate_plot_filename",
]

R = TypeVar("R")
_Sig = tuple[int, int, int, int]


def revision_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def _key(path: Path) -> str:
    return str(path.absolute())


def _sig(st: os.stat_result) -> _Sig:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def _read(path: Path, name: str) -> tuple[PlotDoc, _Sig]:
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise PlotUnreadable(
                    f"plot {name!r} is not a regular file",
                    details={"filename": name, "problem": "not a file"},
                )
            raw = handle.read()
    except FileNotFoundError:
        raise plot_not_found(name) from None
    except IsADirectoryError:
        raise PlotUnreadable(
            f"plot {name!r} is a folder, not a file", details={"filename": name, "problem": "not a file"}
        ) from None
    except OSError as exc:
        raise PlotUnreadable(
            f"plot {name!r} cannot be read: {exc.strerror or exc}",
            details={"filename": name, "problem": str(exc.strerror or exc)},
        ) from None
    return parse_plot(path, raw, name), _sig(st)


def parse_plot(path: Path, raw: bytes, name: str | None = None) -> PlotDoc:
    """A frozen :class:`PlotDoc` from a file's bytes, or :class:`PlotUnreadable` saying why not."""
    name = name or path.name
    try:
        with no_gc():
            data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise PlotUnreadable(
            f"plot {name!r} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}; "
            "fix the file or restore it from a copy",
            details={
                "filename": name,
                "problem": exc.msg,
                "line": exc.lineno,
                "column": exc.colno,
                "position": exc.pos,
            },
        ) from None
    except (UnicodeDecodeError, RecursionError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else "nested too deeply"
        raise PlotUnreadable(
            f"plot {name!r} cannot be parsed: {why}", details={"filename": name, "problem": why}
        ) from None
    problem: str | None = None
    if not isinstance(data, dict) or data.get("type") != "FeatureCollection":
        problem = 'the top level is not a GeoJSON object with "type": "FeatureCollection"'
    elif not isinstance(data.get("features"), list):
        problem = 'it has no "features" list'
    else:
        bad = next((i for i, f in enumerate(data["features"]) if not isinstance(f, dict)), None)
        if bad is not None:
            problem = f"features[{bad}] is not an object"
    if problem:
        raise PlotUnreadable(
            f"plot {name!r} is not a FeatureCollection: {problem}",
            details={"filename": name, "problem": problem},
        )
    return PlotDoc(path, data, revision=revision_of(raw), fmt=detect_format(raw), size=len(raw))


def load_plot(path: Path, *, name: str | None = None) -> PlotDoc:
    """Read and parse a plot, bypassing the cache."""
    return _read(path, name or path.name)[0]


class PlotCache:
    """Parsed plots, reused until the file's (size, mtime_ns, inode, device) changes; LRU-bounded."""

    def __init__(self, *, max_entries: int = 16, max_bytes: int = 200 << 20):
        # max_bytes counts file bytes; the parsed value takes several times as much memory
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.parse_count = 0
        self._entries: OrderedDict[str, tuple[_Sig, PlotDoc]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: Path, *, name: str | None = None) -> PlotDoc:
        """The current doc of ``path`` (shared and frozen: do not change it)."""
        key = _key(path)
        name = name or path.name
        try:
            current = _sig(path.stat())
        except FileNotFoundError:
            self.invalidate(path)
            raise plot_not_found(name) from None
        except OSError:
            current = None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == current:
                self._entries.move_to_end(key)
                return entry[1]
        doc, sig = _read(path, name)
        if entry is not None:
            doc.adopt_texts(entry[1])
        with self._lock:
            self.parse_count += 1
            self._put(key, sig, doc)
        return doc

    def peek(self, path: Path) -> PlotDoc | None:
        """The cached doc if it is still current, without reading the file."""
        try:
            current = _sig(path.stat())
        except OSError:
            return None
        with self._lock:
            entry = self._entries.get(_key(path))
        return entry[1] if entry is not None and entry[0] == current else None

    def put(self, path: Path, doc: PlotDoc) -> None:
        """Record ``doc`` as the content of ``path`` as the file is now on disk. A plot not cached
        yet (one just created) comes in as the least recently used: writing a new small plot (a
        windowed copy of a big one) must not push out the big plot being read, which would then be
        parsed again on every copy."""
        try:
            sig = _sig(path.stat())
        except OSError:
            self.invalidate(path)
            return
        with self._lock:
            self._put(_key(path), sig, doc, read=False)

    def _put(self, key: str, sig: _Sig, doc: PlotDoc, *, read: bool = True) -> None:
        new = key not in self._entries
        self._entries[key] = (sig, doc)
        self._entries.move_to_end(key, last=read or not new)
        total = sum(e[1].size for e in self._entries.values())
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries or total > self.max_bytes):
            _, (_, dropped) = self._entries.popitem(last=False)
            total -= dropped.size

    def invalidate(self, path: Path) -> None:
        with self._lock:
            self._entries.pop(_key(path), None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The process-wide cache every reader and writer of this process shares.
PLOT_CACHE = PlotCache()


def plot_lock(path: Path, *, scratch_dir: Path) -> contextlib.AbstractContextManager[None]:
    """The cross-process lock of a plot, a file in ``scratch_dir/locks`` (see the module docstring)."""
    return locked(path, lock_dir=scratch_dir / "locks")


def modify_plot(
    path: Path,
    fn: Callable[[PlotDoc], R],
    expected_revision: str | None = None,
    *,
    scratch_dir: Path,
    name: str | None = None,
    cache: PlotCache | None = None,
    shallow: bool = False,
) -> tuple[PlotDoc, R]:
    """Read-modify-write ``path`` under its lock; ``fn`` changes a private draft in place.

    ``fn`` raising leaves file and cache untouched. A draft that still holds the same value is
    not written (the revision stays). ``shallow`` gives ``fn`` a :meth:`PlotDoc.draft` that
    shares the feature objects (for functions that replace features and never alter them).
    Returns the new shared doc and ``fn``'s result.
    """
    cache = cache or PLOT_CACHE
    name = name or path.name
    # A missing or unreadable plot is refused before a lock file is made for its name, so a
    # refused write leaves the store as it was too.
    cache.get(path, name=name)
    with plot_lock(path, scratch_dir=scratch_dir):
        base = cache.get(path, name=name)
        if expected_revision is not None and expected_revision != base.revision:
            raise Conflict(
                f"plot {name!r} changed since revision {expected_revision} (it is now {base.revision}); "
                "read it again and retry with the new revision",
                details={"filename": name, "expected_revision": expected_revision, "revision": base.revision},
            )
        draft = base.draft(shallow=shallow)
        result = fn(draft)
        if draft.unchanged():
            return base, result
        raw, texts = draft.to_bytes()
        revision = revision_of(raw)
        if len(raw) == base.size and revision == base.revision:
            return base, result
        atomic_write_user_file(path, raw, temp_dir=scratch_dir / "tmp")
        new = PlotDoc(path, draft.data, revision=revision, fmt=base.fmt, size=len(raw), texts=texts)
        cache.put(path, new)
        return new, result


def _whole(path: Path, data: dict[str, Any], fmt: JsonFormat) -> PlotDoc:
    """An unfrozen doc of a private copy of ``data`` (the cache keeps it, out of the caller's reach)."""
    with no_gc():
        own = pickle.loads(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301
    return PlotDoc(path, own, revision="", fmt=fmt, frozen=False)


def save_plot(
    path: Path,
    data: dict[str, Any],
    *,
    scratch_dir: Path,
    fmt: JsonFormat | None = None,
    cache: PlotCache | None = None,
) -> PlotDoc:
    """Write a whole plot (a new one, or a replacement) atomically under its lock."""
    cache = cache or PLOT_CACHE
    fmt = fmt or DEFAULT_FORMAT
    draft = _whole(path, data, fmt)
    with plot_lock(path, scratch_dir=scratch_dir):
        raw, texts = draft.to_bytes()
        atomic_write_user_file(path, raw, temp_dir=scratch_dir / "tmp")
        new = PlotDoc(path, draft.data, revision=revision_of(raw), fmt=fmt, size=len(raw), texts=texts)
        cache.put(path, new)
        return new


def create_plot_file(
    path: Path,
    data: dict[str, Any],
    *,
    scratch_dir: Path,
    name: str | None = None,
    fmt: JsonFormat | None = None,
    cache: PlotCache | None = None,
) -> PlotDoc:
    """Write a new plot atomically, or raise :class:`PlotExists` and change nothing if ``path``
    exists, whoever made it (:func:`llmem.core.fsutil.atomic_create_user_file`).

    ``path`` must be validated (:func:`validate_plot_filename`): missing parent folders are made.
    The file gets the mode any new file gets (``0o666 & ~umask``). ``name`` is the plot's name
    for the error (default: the file name).
    """
    cache = cache or PLOT_CACHE
    fmt = fmt or DEFAULT_FORMAT
    name = name or path.name
    draft = _whole(path, data, fmt)
    raw, texts = draft.to_bytes()
    with plot_lock(path, scratch_dir=scratch_dir):
        try:
            atomic_create_user_file(path, raw, temp_dir=scratch_dir / "tmp")
        except FileExistsError:
            raise PlotExists(
                f"plot file {name!r} already exists; nothing was changed. Choose another name, "
                "or change the plot with debrief_apply_command",
                details={"filename": name},
            ) from None
        new = PlotDoc(path, draft.data, revision=revision_of(raw), fmt=fmt, size=len(raw), texts=texts)
        cache.put(path, new)
        return new


#: Plots larger than this get their file name as title unless they are already parsed.
TITLE_PARSE_LIMIT = 4 << 20


def plot_title(path: Path, *, cache: PlotCache | None = None) -> str:
    """A plot's title: the collection's ``properties.name``/``title``, else the file name."""
    cache = cache or PLOT_CACHE
    doc = cache.peek(path)
    if doc is None:
        try:
            if path.stat().st_size > TITLE_PARSE_LIMIT:
                return _untitled(path)
            doc = cache.get(path)
        except (OSError, SuiteError):  # a listing never fails on one bad plot
            return _untitled(path)
    return doc_title(doc)


def _untitled(path: Path) -> str:
    return path.name[: -len(PLOT_SUFFIX)] if path.name.endswith(PLOT_SUFFIX) else path.name


def doc_title(doc: PlotDoc) -> str:
    """The title of a parsed plot (:func:`plot_title` without the cache)."""
    fallback = _untitled(doc.path)
    props = doc.data.get("properties")
    for value in ((props or {}).get("name"), (props or {}).get("title"), doc.data.get("title")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return fallback
