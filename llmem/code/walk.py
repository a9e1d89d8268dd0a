"""The folder walk behind a folder parse: which files of a workspace are source worth outlining.

It walks the way a developer expects: ``.gitignore`` files at every level (gitignore semantics
through ``pathspec``, negations included), ``.git/info/exclude`` and ``.llmemignore`` files (the
workspace's own exclude list for llmem, same syntax, skip reason ``llmemignored``) are honoured; version
control folders, dependency folders, virtual environments, build output, other dot-folders,
binaries, unsupported languages and files over the size cap are skipped, each with its reason.
A skipped folder is reported once (``"name/"``), not file by file.

The first check that applies gives the reason. A folder is named for what it is before the
ignore rules are asked (``vcs-dir``, ``dependency-dir``, ``build-output``, ``virtualenv``,
``hidden-dir``, then ``gitignored`` / ``llmemignored``); for a file the project's own rules come first
(``symlink-outside``, ``gitignored``, ``binary`` by extension, ``unsupported-language``,
``too-large``, ``unreadable``). The walk never reads file contents (re-runs on an unchanged tree
must stay fast): the NUL-byte sniff is :func:`is_probably_binary`, for whoever reads the file.

Symlinks are never followed out of the workspace. A file symlink whose target lies inside is
kept; a folder symlink whose target lies inside is skipped (``symlink-dir``) because its
target is walked under its own path — following it would list the same files twice or loop.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from posixpath import splitext

import pathspec

from llmem.code.outline import detect_language

__all__ = [
    "BINARY_EXTENSIONS",
    "BUILD_DIRS",
    "DEPENDENCY_DIRS",
    "LLMEMIGNORE",
    "VCS_DIRS",
    "Skipped",
    "WalkEntry",
    "WalkResult",
    "is_probably_binary",
    "walk_workspace",
]

#: The workspace's own exclude list for llmem, in gitignore syntax (any folder may hold one).
LLMEMIGNORE = ".llmemignore"
VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", "CVS"})
DEPENDENCY_DIRS = frozenset({"node_modules", "bower_components", "jspm_packages", "web_modules"})
BUILD_DIRS = frozenset(
    {
        "build",
        "dist",
        "target",
        "out",
        "__pycache__",
        ".next",
        ".nuxt",
        "coverage",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".gradle",
        ".parcel-cache",
        ".turbo",
    }
)
_VENV_NAMES = frozenset({".venv", "venv", "env"})
BINARY_EXTENSIONS = frozenset(
    {
        # images, audio, video, fonts
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".webp", ".tif", ".tiff", ".psd",
        ".mp3", ".wav", ".flac", ".ogg", ".m4a", ".mp4", ".mov", ".avi", ".mkv", ".webm",
        ".ttf", ".otf", ".woff", ".woff2", ".eot",
        # archives and packages
        ".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".tar", ".jar", ".war", ".whl", ".egg",
        # compiled code and native libraries
        ".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".exe", ".o", ".a", ".lib", ".obj",
        ".class", ".wasm", ".bin", ".dat",
        # documents and databases
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".sqlite", ".sqlite3", ".db",
        ".npy", ".npz", ".pkl", ".pickle", ".parquet", ".h5", ".onnx", ".pt",
    }
)  # fmt: skip
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class WalkEntry:
    """A file to outline: its workspace-relative POSIX path and the stat the staleness check uses."""

    rel_path: str
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skipped:
    """A file or folder (``rel_path`` ending in ``/``) left out, and why."""

    rel_path: str
    reason: str


@dataclass
class WalkResult:
    files: list[WalkEntry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def is_probably_binary(path: Path) -> bool:
    """A known binary extension, or a NUL byte in the first 8 KiB. ``False`` if unreadable."""
    if splitext(path.name)[1].lower() in BINARY_EXTENSIONS:
        return True
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(_SNIFF_BYTES)
    except OSError:
        return False


class _Ignore:
    """One ignore file's patterns, with one combined regex to dismiss most paths at once.

    ``pathspec`` tries the patterns one by one; nearly every path matches none of them, which
    the combined regex says in a single search. Only a hit goes through ``check_file``.
    """

    __slots__ = ("any_match", "base", "reason", "spec")

    def __init__(self, base: str, spec: pathspec.GitIgnoreSpec, reason: str = "gitignored") -> None:
        self.base = base
        self.spec = spec
        self.reason = reason
        regexes = [p.regex.pattern for p in spec.patterns if p.include is not None and p.regex is not None]
        try:
            combined = "|".join(f"(?:{r})" for r in regexes).replace("(?P<ps_d>", "(?:")
            self.any_match: re.Pattern[str] | None = re.compile(combined)
        except (re.error, TypeError):
            self.any_match = None

    def check(self, path: str) -> bool | None:
        if self.any_match is not None and self.any_match.search(path) is None:
            return None
        include: bool | None = self.spec.check_file(path).include
        return include


# The ignore files in force, outermost first: a later (deeper) file overrides an earlier one.
_Rules = tuple[_Ignore, ...]


#: Ignore files read in every folder, in the order they apply: a folder's ``.llmemignore`` has
#: the last word over its ``.gitignore`` (it may re-include with ``!``).
IGNORE_FILES = ((".gitignore", "gitignored"), (LLMEMIGNORE, "llmemignored"))


def _load_rules(path: Path, base: str, reason: str = "gitignored") -> _Ignore | None:
    try:
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return _Ignore(base, spec, reason) if any(p.include is not None for p in spec.patterns) else None


def _ignored(rel_path: str, is_dir: bool, rules: _Rules) -> str | None:
    """Gitignore semantics: the deepest file with a matching pattern decides, last pattern wins.

    The answer is the skip reason of the deciding file, or ``None`` when the path is kept.
    """
    verdict: str | None = None
    for rule in rules:
        base = rule.base
        if base and not rel_path.startswith(base):
            continue
        sub = rel_path[len(base) :]
        include = rule.check(sub + "/" if is_dir else sub)
        if include is not None:
            verdict = rule.reason if include else None
    return verdict


def _inside(path: str, root_real: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def _dir_reason(name: str, path: str) -> str | None:
    if name in VCS_DIRS:
        return "vcs-dir"
    folder = Path(path)
    if name in DEPENDENCY_DIRS or (name == "vendor" and (folder / "modules.txt").is_file()):
        return "dependency-dir"  # vendor/ only when Go's vendoring made it (vendor/modules.txt)
    if name in BUILD_DIRS or name.endswith(".egg-info"):
        return "build-output"
    if (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir():
        return "virtualenv"
    if name in _VENV_NAMES and ((folder / "bin" / "activate").is_file() or (folder / "Scripts" / "activate").is_file()):
        return "virtualenv"
    if name.startswith("."):
        return "hidden-dir"
    return None


def _start_rel(root_abs: Path, root_real: str, start: Path | None) -> str:
    if start is None:
        return ""
    start_path = start if start.is_absolute() else root_abs / start
    start_real = os.path.realpath(start_path)
    if not _inside(start_real, root_real):
        raise ValueError(f"{start} is not inside the workspace {root_abs}")
    if not Path(start_real).is_dir():
        raise NotADirectoryError(f"{start} is not a folder")
    rel = Path(start_real).relative_to(root_real).as_posix()
    return "" if rel == "." else rel


def _initial_rules(root_abs: Path, start_rel: str) -> _Rules:
    """``.git/info/exclude``, then the ignore files of every folder above ``start``."""
    rules: list[_Ignore] = []
    exclude = _load_rules(root_abs / ".git" / "info" / "exclude", "")
    if exclude is not None:
        rules.append(exclude)
    if start_rel:
        parts = start_rel.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            for name, reason in IGNORE_FILES:
                rule = _load_rules(root_abs.joinpath(*parts[:depth], name), base + "/" if base else "", reason)
                if rule is not None:
                    rules.append(rule)
    return tuple(rules)


def walk_workspace(root: Path, start: Path | None = None, *, max_file_bytes: int = 1_000_000) -> WalkResult:
    """The files under ``start`` (default: the whole ``root``) worth outlining, and what was skipped.

    ``start`` is a folder inside ``root`` (absolute, or relative to ``root``); paths in the result
    are relative to ``root``, POSIX-style, sorted. Raises :class:`ValueError` when ``start``
    leaves the workspace and :class:`NotADirectoryError` when it is not a folder.
    """
    root_abs = Path(os.path.abspath(root))  # noqa: PTH100 - normalise ".." but keep symlinks as given
    root_real = os.path.realpath(root_abs)
    start_rel = _start_rel(root_abs, root_real, start)
    result = WalkResult()
    files = result.files
    skipped = result.skipped
    start_dir = str(root_abs.joinpath(*start_rel.split("/"))) if start_rel else str(root_abs)
    stack: list[tuple[str, str, _Rules]] = [
        (start_dir, start_rel + "/" if start_rel else "", _initial_rules(root_abs, start_rel))
    ]
    while stack:
        dir_path, prefix, rules = stack.pop()
        try:
            with os.scandir(dir_path) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            skipped.append(Skipped(prefix or "./", "unreadable"))
            continue
        names = {e.name for e in entries}
        for ignore_name, reason in IGNORE_FILES:
            if ignore_name in names:
                rule = _load_rules(Path(dir_path, ignore_name), prefix, reason)
                if rule is not None:
                    rules = (*rules, rule)
        subdirs: list[tuple[str, str, _Rules]] = []
        for entry in entries:
            _visit(
                entry,
                prefix,
                rules,
                root_real=root_real,
                max_bytes=max_file_bytes,
                result=result,
                subdirs=subdirs,
            )
        stack.extend(reversed(subdirs))
    files.sort(key=lambda f: f.rel_path)
    skipped.sort(key=lambda s: s.rel_path)
    return result


def _visit(
    entry: os.DirEntry[str],
    prefix: str,
    rules: _Rules,
    *,
    root_real: str,
    max_bytes: int,
    result: WalkResult,
    subdirs: list[tuple[str, str, _Rules]],
) -> None:
    """Sort one directory entry into files, skipped, or folders still to walk."""
    skipped = result.skipped
    name = entry.name
    rel = prefix + name
    try:
        is_link = entry.is_symlink()
        is_dir = entry.is_dir()  # follows a symlink
    except OSError:
        skipped.append(Skipped(rel, "unreadable"))
        return
    if is_link:
        target = os.path.realpath(entry.path)
        if not _inside(target, root_real):
            skipped.append(Skipped(rel + "/" if is_dir else rel, "symlink-outside"))
            return
        if is_dir:
            skipped.append(Skipped(rel + "/", "symlink-dir"))
            return
    if is_dir:
        reason = _dir_reason(name, entry.path)
        if reason is None and rules:
            reason = _ignored(rel, True, rules)
        if reason is not None:
            skipped.append(Skipped(rel + "/", reason))
        else:
            subdirs.append((entry.path, rel + "/", rules))
        return
    dot = name.rfind(".")
    ignored = _ignored(rel, False, rules) if rules else None
    if ignored is not None:
        reason = ignored
    elif dot > 0 and name[dot:].lower() in BINARY_EXTENSIONS:
        reason = "binary"
    elif detect_language(name) is None:
        reason = "unsupported-language"
    else:
        try:
            stat = entry.stat()
        except OSError:
            skipped.append(Skipped(rel, "unreadable"))
            return
        if stat.st_size > max_bytes:
            reason = "too-large"
        else:
            result.files.append(WalkEntry(rel, Path(entry.path), stat.st_size, stat.st_mtime_ns))
            return
    skipped.append(Skipped(rel, reason))
