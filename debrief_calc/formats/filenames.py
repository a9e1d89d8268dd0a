"""Which names a client may give for a plot, and which plot files a workspace holds.

The rule: a workspace-relative POSIX path of a ``.plot.json`` file, subfolders allowed
(``mission1.plot.json``, ``exercise/day 2/run.plot.json``). Refused, before anything is read:
NUL bytes, backslashes (Windows separators and UNC), drive letters, absolute paths, empty,
``.`` and ``..`` segments, hidden (dot) segments (the store lives in ``.llmem/``), any other
extension, and a path that, once symlinks are resolved, leaves the workspace or stops being a
``.plot.json`` file. Containment is checked on resolved paths with ``Path.is_relative_to``,
never by string prefix, so ``/ws`` does not admit ``/ws_other``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from debrief_calc.errors import InvalidFilename
from llmem.core.paths import MAX_DEPTH, NAME_MAX

__all__ = ["PLOT_SUFFIX", "list_plot_files", "list_workspace_files", "relative_name", "validate_plot_filename"]

PLOT_SUFFIX = ".plot.json"
MAX_FILENAME_CHARS = 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
_SKIP_DIRS = {"node_modules", "__pycache__"}
_TEMP_EXTRA = len(".") + len(".12345678.tmp")  # what a temporary file's name adds to the plot's
_EXAMPLE = "e.g. 'mission1.plot.json' or 'exercise/run.plot.json'"


def _refuse(filename: object, rule: str, why: str, fix: str | None = None) -> InvalidFilename:
    return InvalidFilename(
        f"filename {filename!r} is refused: {why}. "
        f"{fix or 'Give the name of a .plot.json file relative to the workspace'}, {_EXAMPLE}.",
        details={"filename": filename if isinstance(filename, str) else repr(filename), "rule": rule},
    )


def validate_plot_filename(workspace: Path, filename: str) -> Path:
    """The resolved path of the plot ``filename`` names, or :class:`InvalidFilename` saying why not."""
    if not isinstance(filename, str) or not filename:
        raise _refuse(filename, "empty", "it is not a non-empty string")
    if len(filename) > MAX_FILENAME_CHARS:
        raise _refuse(filename[:80] + "…", "too_long", f"it is longer than {MAX_FILENAME_CHARS} characters")
    if "\x00" in filename:
        raise _refuse(filename, "nul", "it contains a NUL byte")
    if "\\" in filename:
        raise _refuse(filename, "backslash", "it contains a backslash (Windows or UNC path)", "Use '/' between folders")
    if _DRIVE.match(filename):
        raise _refuse(filename, "drive", "it names a Windows drive")
    if filename.startswith("/"):
        raise _refuse(filename, "absolute", "it is an absolute path")
    parts = filename.split("/")
    if ".." in parts:
        raise _refuse(filename, "parent", "'..' segments are not allowed")
    if any(p in ("", ".") for p in parts):
        raise _refuse(filename, "empty_segment", "it has an empty or '.' segment")
    if any(p.startswith(".") for p in parts):
        raise _refuse(filename, "hidden", "hidden (dot) files and folders are not plots")
    # Folders need only fit the file system's name limit; the file's own name leaves room for the
    # hidden temporary file a rewrite makes beside it when the store is on another device
    # (".<name>.<8 random characters>.tmp"). Lock files live in the store, named by a hash.
    sizes = [len(p.encode("utf-8", "surrogatepass")) for p in parts]
    if max(sizes[:-1], default=0) > NAME_MAX:
        raise _refuse(filename, "name_max", f"a folder name is over {NAME_MAX} bytes, too long for a file name")
    if sizes[-1] > NAME_MAX - _TEMP_EXTRA:
        raise _refuse(filename, "name_max", f"the file name is over {NAME_MAX - _TEMP_EXTRA} bytes, too long")
    if len(parts) > MAX_DEPTH:
        raise _refuse(filename, "max_depth", f"it is more than {MAX_DEPTH} folders deep")
    if not parts[-1].endswith(PLOT_SUFFIX) or parts[-1] == PLOT_SUFFIX:
        raise _refuse(filename, "extension", f"only {PLOT_SUFFIX} files are plots")
    root = workspace.resolve()
    try:
        resolved = root.joinpath(*parts).resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops, names too long for the OS
        raise _refuse(filename, "unresolvable", f"it cannot be resolved ({exc.__class__.__name__})") from None
    if not resolved.is_relative_to(root):
        raise _refuse(filename, "outside", "it resolves (through a symlink) to a file outside the workspace")
    if not resolved.name.endswith(PLOT_SUFFIX):
        raise _refuse(filename, "extension", f"it is a symlink to a file that is not a {PLOT_SUFFIX} file")
    return resolved


def relative_name(workspace: Path, path: Path) -> str:
    """The workspace-relative POSIX name of a plot path inside the workspace."""
    root = workspace.resolve()
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.resolve().relative_to(root).as_posix()


def list_plot_files(workspace: Path, *, limit: int = 10_000) -> list[str]:
    """Workspace-relative names of the ``.plot.json`` files (subfolders too; dot folders and
    ``node_modules`` skipped; symlinks are not followed into folders), sorted, at most ``limit``."""
    return list_workspace_files(workspace, (PLOT_SUFFIX,), limit=limit)


def list_workspace_files(workspace: Path, suffixes: tuple[str, ...], *, limit: int = 10_000) -> list[str]:
    """Workspace-relative names of the files ending in one of ``suffixes`` (case-insensitive), as
    :func:`list_plot_files` walks: a symlink counts only when it stays in the workspace."""
    root = workspace.resolve()
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        base = Path(folder)
        for fname in files:
            if not fname.lower().endswith(suffixes) or fname.startswith("."):
                continue
            full = base / fname
            if full.is_symlink():
                target = full.resolve()
                if not (target.is_relative_to(root) and target.name.lower().endswith(suffixes)):
                    continue
            found.append(full.relative_to(root).as_posix())
            if len(found) >= limit:
                return sorted(found)
    return sorted(found)
