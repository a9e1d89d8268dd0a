"""How ``find_references`` follows imports to one definition: Python modules and TypeScript/JavaScript files.

A file that imports the symbol (under any name) exports it in turn, so imports are followed to a
fixed point: ``from m import x [as y]`` (absolute or relative), ``import m [as y]`` then ``m.x``,
re-exports through a package's ``__init__``, ``from m import *``; ``import {x [as y]} from
'./rel'``, ``import * as ns``, ``export {x} from``, ``export * from`` for relative specifiers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from posixpath import basename, dirname, normpath
from typing import Any

from llmem.code.references_files import SourceFile, WorkspaceFiles
from llmem.code.references_parse import language_of

__all__ = [
    "RESOLVED",
    "Bindings",
    "absolute_module",
    "module_name",
    "project_of",
    "python_bindings",
    "stems",
    "ts_bindings",
    "ts_resolve",
]

#: The languages whose imports are followed.
RESOLVED = frozenset({"python", "typescript", "tsx", "javascript"})
_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_MANIFESTS = ("pyproject.toml", "package.json", "setup.py", "setup.cfg", "Cargo.toml", "go.mod", "pom.xml")

#: Per importing file: the local names bound to the symbol, and qualifier → module for ``m.x`` uses.
Bindings = dict[str, tuple[set[str], dict[str, str]]]


def python_bindings(
    src: WorkspaceFiles, target: str, symbol: str, files: dict[str, SourceFile]
) -> tuple[Bindings, set[tuple[str, str]]]:
    """Per importing file: the local names bound to the symbol, and the dotted qualifiers that
    denote a module exporting it; and every (module, name) under which it can be imported."""
    keys = set(files)
    module_of = {target: module_name(target, keys)}

    def read(key: str, f: SourceFile) -> list[tuple[Any, str]]:
        module_of[key] = own = module_name(key, keys)
        return [(imp, absolute_module(imp.module, imp.level, own, key)) for imp in src.facts(key, f).imports]

    def bind(key: str, imports: list[tuple[Any, str]], exports: dict[str, set[str]]) -> tuple[set[str], dict[str, str]]:
        locals_: set[str] = set()
        quals: dict[str, str] = {}
        for imp, base in imports:
            if imp.alias is not None:  # import a.b [as y]: used as a.b.x or y.x
                if imp.module in exports:
                    quals[imp.alias] = imp.module
                continue
            names = exports.get(base, set())
            for name, local in imp.names:
                if name in names:
                    locals_.add(local)
                sub = f"{base}.{name}" if base else name
                if sub in exports:  # from a import mod: used as mod.x
                    quals[local] = sub
            if imp.star:
                locals_ |= {n for n in names if not n.startswith("_")}
        return locals_, quals

    return _fixpoint(src, target, symbol, files, "python", read, bind, module_of)


def ts_bindings(
    src: WorkspaceFiles, target: str, symbol: str, files: dict[str, SourceFile]
) -> tuple[Bindings, set[tuple[str, str]]]:
    keys = set(files)
    module_of = {target: target}

    def read(key: str, f: SourceFile) -> list[tuple[Any, str]]:
        module_of[key] = key
        out = []
        for imp in src.facts(key, f).imports:
            source = ts_resolve(key, imp.module, keys)
            if source is not None:
                out.append((imp, source))
        return out

    def bind(key: str, imports: list[tuple[Any, str]], exports: dict[str, set[str]]) -> tuple[set[str], dict[str, str]]:
        locals_: set[str] = set()
        quals: dict[str, str] = {}
        for imp, source in imports:
            names = exports.get(source, set())
            locals_ |= {local for name, local in imp.names if name in names}
            if imp.alias is not None and names:
                quals[imp.alias] = source  # import * as ns: used as ns.x
            if imp.star:
                locals_ |= names
        return locals_, quals

    return _fixpoint(src, target, symbol, files, "ts", read, bind, module_of)


def _fixpoint(
    src: WorkspaceFiles,
    target: str,
    symbol: str,
    files: dict[str, SourceFile],
    family: str,
    read: Callable[[str, SourceFile], list[tuple[Any, str]]],
    bind: Callable[[str, list[tuple[Any, str]], dict[str, set[str]]], tuple[set[str], dict[str, str]]],
    module_of: dict[str, str],
) -> tuple[Bindings, set[tuple[str, str]]]:
    """Follow imports until nothing new is bound: each file that binds the symbol (under any
    name) exports it in turn. Only files where one of those names stands as a word are read
    (and TypeScript files that re-export everything, ``export *``)."""
    langs = {"python"} if family == "python" else {"typescript", "tsx", "javascript"}
    exports: dict[str, set[str]] = {module_of[target]: {symbol}}
    candidates: dict[str, list[tuple[Any, str]]] = {}
    bindings: Bindings = {}
    words: set[str] = {symbol}
    looked: set[str] = set()
    changed = True
    while changed:
        changed = False
        for word in words - looked:
            for key, f in files.items():
                if key in candidates or key == target or f.data is None or language_of(key) not in langs:
                    continue
                if f.offsets(word) or (family == "ts" and b"export *" in f.data):
                    candidates[key] = read(key, f)
        looked |= words
        for key, imports in candidates.items():
            locals_, quals = bind(key, imports, exports)
            if not (locals_ or quals):
                continue
            bindings[key] = (locals_, quals)
            if locals_ - exports.get(module_of[key], set()) or locals_ - words:
                exports.setdefault(module_of[key], set()).update(locals_)
                words |= locals_
                changed = True
    return bindings, {(m, n) for m, names in exports.items() for n in names}


def stems(key: str) -> list[str]:
    """The names a file is imported by, the usual first: ``a/mod.py`` → ``mod``;
    ``a/pkg/__init__.py`` → ``pkg``, ``__init__``; ``x/index.ts`` → ``x``, ``index``."""
    name = basename(key)
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    if stem in ("__init__", "index") and dirname(key):
        return [basename(dirname(key)), stem]
    return [stem]


def module_name(key: str, keys: set[str]) -> str:
    """The dotted module of a Python file: its folders up to the topmost with an ``__init__.py``.
    A folder without one inside a package (``flask/sansio/`` under ``flask/__init__.py``) is a
    namespace package of it (PEP 420): ``flask.sansio.app``, as the package's relative imports
    (``from .sansio.app import App``, ``from ..helpers import x``) name it."""
    parts = key[: -len(".pyi") if key.endswith(".pyi") else -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        top = len(parts)
    else:
        top = len(parts) - 1

    def package(n: int) -> bool:
        return n > 0 and "/".join(parts[:n]) + "/__init__.py" in keys

    while package(top) or (top > 1 and package(top - 1) and not _holds_package(parts[:top], keys)):
        top -= 1
    return ".".join(parts[top:])


def _holds_package(folder: list[str], keys: set[str]) -> bool:
    """A folder without ``__init__.py`` that holds regular packages and no module of its own is
    where imports start (a ``src/``, an ``examples/``), not a namespace package of the one above it."""
    prefix = "/".join(folder) + "/"
    depth = prefix.count("/")
    inside = [k for k in keys if k.startswith(prefix)]
    own = any(k.count("/") == depth and k.endswith((".py", ".pyi")) for k in inside)
    return not own and any(k.count("/") == depth + 1 and k.endswith("/__init__.py") for k in inside)


def absolute_module(module: str, level: int, own: str, key: str) -> str:
    if level == 0:
        return module
    package = own.split(".") if key.endswith("__init__.py") else own.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, module] if module else base)


def ts_resolve(importer: str, spec: str, keys: set[str]) -> str | None:
    if not spec.startswith("."):
        return None
    base = normpath(f"{dirname(importer)}/{spec}") if dirname(importer) else normpath(spec)
    stem = re.sub(r"\.(m|c)?js$", "", base)
    candidates = [base] + [stem + ext for ext in _TS_EXTENSIONS] + [f"{base}/index{ext}" for ext in _TS_EXTENSIONS]
    return next((c for c in candidates if c in keys), None)


def project_of(key: str, files: dict[str, SourceFile]) -> str:
    folder = dirname(key)
    while folder:
        if any(f"{folder}/{m}" in files for m in _MANIFESTS):
            return folder
        folder = dirname(folder)
    return ""
