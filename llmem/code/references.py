"""``find_references``: every place a symbol is used across the workspace, each with its kind.

How it finds them: every file the workspace walk keeps (source, manifests, Markdown, and the
text files of no outlined language such as Dockerfiles, YAML, shell; plus ``.github/``) is
searched for the name as a whole word, exactly as ``grep -w`` would (a word character is a
letter, digit or underscore). Each occurrence is then classified by the file's parser
(:mod:`llmem.code.references_parse`): ``import``, ``call``, ``reference`` (any other identifier:
a name, an attribute, a type, a parameter, a keyword argument), ``entry-point`` (a
``pyproject.toml`` script, a ``package.json`` bin/main/exports line, a Dockerfile
ENTRYPOINT/CMD) or ``text`` (a comment, a string, a file of no parsed language). Definitions
of the name are answered apart (``definitions``) and are not uses; so every line ``grep -w``
finds is answered, as a use or a definition (without ``path``).

With ``path`` (the file that defines the symbol) only the uses of *that* definition are
answered: those in its own file, and those in files that import it — Python: ``from m import
x [as y]`` with absolute or relative module names, ``import m [as y]`` then ``m.x``,
re-exports through any module that imports it (``__init__``), ``from m import *``; TypeScript
and JavaScript: ``import {x [as y]} from './rel'``, ``import * as ns``, ``export {x} from``,
``export * from`` for relative specifiers. Text and entry-point mentions count in files under
the definition's project folder (the nearest folder above it with a manifest); a pyproject
entry point ``"m:x"`` counts wherever it is when ``m`` resolves to it. When ``symbol`` is the
name the file is imported by (``paths`` for ``llmem/core/paths.py``, the package for an
``__init__.py``, ``lib`` for ``lib.ts``) and the file defines no such symbol, the question is
who imports that module (``resolution: "module"``): the import lines of the files that import it
or anything from it, the uses of a name it is bound to (``import a.mod as m`` then ``m``), and
pyproject entry points in it; the words of its name elsewhere (a README's "server") are left
out, and so is its own file. Go, Rust and Java are not resolved: the uses of the name in code
(not ``text``) in files of the same language are answered, with ``resolution: "by-name"``. Shadowing (a local of the same name) is not followed.

The files' text and facts are cached per process, keyed by (size, mtime_ns) and checked
against a fresh ``stat`` on every call; the walk is kept while no folder it walked and no
ignore file changed.
"""

from __future__ import annotations

import base64
import bisect
import difflib
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from posixpath import basename, dirname, normpath
from typing import Any

from llmem.code.references_parse import CODE_LANGUAGES, Facts, facts_of, language_of
from llmem.core.errors import InvalidArgument, SourceNotFound
from llmem.core.paths import resolve_in_workspace

__all__ = ["KINDS", "ReferenceFinder", "finder_for"]

#: The kinds of a use, in the order ``by_kind`` lists them.
KINDS = ("import", "call", "reference", "entry-point", "text")
TEXT_CHARS = 200
DEFINITIONS_SHOWN = 50
MAX_FILE_BYTES = 1_000_000
#: Words whose places each file keeps (per process, while the file is unchanged).
WORDS_KEPT = 64
_SYMBOL = re.compile(r"^[A-Za-z_$][\w$]*$")
_MANIFESTS = ("pyproject.toml", "package.json", "setup.py", "setup.cfg", "Cargo.toml", "go.mod", "pom.xml")
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_WORD_ENDS = {bytes([c]) for c in _WORD_BYTES}
_RESOLVED = frozenset({"python", "typescript", "tsx", "javascript"})
_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


@dataclass
class _File:
    size: int
    mtime_ns: int
    data: bytes | None  # None: binary or unreadable
    facts: Facts | None = None
    line_starts: list[int] | None = None
    words: dict[str, list[int]] = field(default_factory=dict)

    def offsets(self, word: str) -> list[int]:
        """Where ``word`` stands as a whole word; remembered for the words last asked about."""
        found = self.words.get(word)
        if found is None:
            if len(self.words) >= WORDS_KEPT:
                self.words.clear()
            found = self.words[word] = _word_offsets(self.data, word.encode()) if self.data is not None else []
        return found

    def line_of(self, offset: int) -> tuple[int, int]:
        if self.line_starts is None:
            assert self.data is not None
            self.line_starts = [0] + [m.end() for m in re.finditer(rb"\n", self.data)]
        n = bisect.bisect_right(self.line_starts, offset)
        return n, offset - self.line_starts[n - 1]

    def line_text(self, line: int) -> str:
        assert self.data is not None and self.line_starts is not None
        start = self.line_starts[line - 1]
        end = self.data.find(b"\n", start)
        text = self.data[start : end if end >= 0 else len(self.data)].decode("utf-8", "replace").strip()
        return text[:TEXT_CHARS] + ("…" if len(text) > TEXT_CHARS else "")


@dataclass
class _Use:
    path: str
    line: int
    column: int
    kind: str
    qualifier: str
    name: str  # the word found (the symbol, or a local alias of it)

    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)


#: Per importing file: the local names bound to the symbol, and qualifier → module for ``m.x`` uses.
_Bindings = dict[str, tuple[set[str], dict[str, str]]]


@dataclass
class _Walk:
    files: list[str] = field(default_factory=list)
    watched: dict[str, int] = field(default_factory=dict)  # folder or ignore file → mtime_ns


class ReferenceFinder:
    """Finds references in one workspace; thread-safe, one per workspace per process (:func:`finder_for`)."""

    def __init__(self, workspace: Path) -> None:
        self.ws = workspace
        self._files: dict[str, _File] = {}
        self._walk: _Walk | None = None
        self._lock = threading.Lock()

    # -- the files -------------------------------------------------------------------------------

    def _paths(self) -> list[str]:
        walk = self._walk
        if walk is not None and all(_mtime(p) == m for p, m in walk.watched.items()):
            return walk.files
        walk = self._walk = _walk_all(self.ws)
        live = set(walk.files)
        for gone in [k for k in self._files if k not in live]:
            del self._files[gone]
        return walk.files

    def _file(self, key: str) -> _File | None:
        try:
            st = os.stat(os.path.join(self.ws, key))  # noqa: PTH116, PTH118 - hot path
        except OSError:
            return None
        cached = self._files.get(key)
        if cached is not None and cached.size == st.st_size and cached.mtime_ns == st.st_mtime_ns:
            return cached
        data: bytes | None = None
        if st.st_size <= MAX_FILE_BYTES:
            try:
                with open(os.path.join(self.ws, key), "rb") as handle:  # noqa: PTH123, PTH118
                    data = handle.read()
            except OSError:
                data = None
            if data is not None and b"\0" in data[:8192]:
                data = None
        entry = self._files[key] = _File(st.st_size, st.st_mtime_ns, data)
        return entry

    def _facts(self, key: str, f: _File) -> Facts:
        if f.facts is None:
            assert f.data is not None
            try:
                f.facts = facts_of(key, f.data)
            except Exception as exc:  # a parser that fails leaves the words as text, never the call
                f.facts = Facts(language_of(key), note=f"not parsed: {type(exc).__name__}")
        return f.facts

    def _occurrences(self, key: str, f: _File, word: str) -> list[_Use]:
        offsets = f.offsets(word)
        if not offsets:
            return []  # the file is parsed only when the word stands in it
        facts = self._facts(key, f)
        out: list[_Use] = []
        for at in offsets:
            line, col = f.line_of(at)
            if line in facts.import_lines:
                kind, qual = "import", ""
            else:
                kind, qual = facts.ids.get((line, col), ("text", ""))
                if kind == "text" and line in facts.entry_lines:
                    kind = "entry-point"
            out.append(_Use(key, line, col, kind, qual, word))
        return out

    # -- the question -----------------------------------------------------------------------------

    def find(
        self,
        symbol: str,
        path: str | None = None,
        kind: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        answer_chars: int = 20_000,
    ) -> dict[str, Any]:
        symbol = symbol.strip()
        if not _SYMBOL.match(symbol):
            last = re.findall(r"[A-Za-z_$][\w$]*", symbol)
            raise InvalidArgument(
                f"symbol {symbol[:100]!r} is not one identifier",
                details={"field": "symbol", "rule": "one identifier: letters, digits, _ or $"}
                | ({"did_you_mean": last[-1]} if last else {}),
                next_action=f"Give the bare name, e.g. symbol={last[-1]!r}." if last else "Give a bare name.",
            )
        if kind is not None and kind not in KINDS:
            raise InvalidArgument(
                f"kind {kind!r} is not a kind of use",
                details={"field": "kind", "rule": "one of the kinds", "allowed": list(KINDS)},
            )
        with self._lock:
            paths = self._paths()
            files = {k: f for k in paths if (f := self._file(k)) is not None}
            definitions = [
                d for k, f in files.items() if f.offsets(symbol)
                for d in self._definitions(k, f, symbol)
            ]  # fmt: skip
            if path is None:
                uses = [u for k, f in files.items() for u in self._occurrences(k, f, symbol)]
                resolution, target = "by-name", None
            else:
                target = self._target(path, symbol, files, definitions)
                definitions = [d for d in definitions if d["path"] == target]
                module = not definitions
                if module:
                    name = _module_name(target, set(files)) if language_of(target) == "python" else target
                    definitions = [{"path": target, "line": 1, "column": 1, "kind": "module", "symbol": name}]
                uses, resolution = self._resolved(target, symbol, files, module)
        uses = [u for u in uses if u.kind != "definition"]
        uses.sort(key=_Use.key)
        by_kind = dict.fromkeys(KINDS, 0)
        for u in uses:
            by_kind[u.kind] += 1
        chosen = [u for u in uses if kind is None or u.kind == kind]
        tag = _tag(symbol, target, kind)
        start = _decode_cursor(cursor, tag, chosen) if cursor else 0
        out: dict[str, Any] = {
            "symbol": symbol,
            "path": target,
            "resolution": resolution,
            "definitions": definitions[:DEFINITIONS_SHOWN],
            "definitions_total": len(definitions),
            "total": len(chosen),
            "by_kind": by_kind,
            "files": len({u.path for u in chosen}),
            "scanned_files": len(files),
        }
        if not chosen:
            where = f"that definition in {target}" if target else "the name"
            out["note"] = (
                f"No use of {where} in the {len(files)} files scanned"
                + (f" of kind {kind!r} ({len(uses)} of other kinds)" if kind and uses else "")
                + (f"; it is defined {len(definitions)} time(s), listed in definitions." if definitions else ".")
            )
        results: list[dict[str, Any]] = []
        room = answer_chars - len(json.dumps(out, ensure_ascii=False)) - 600
        pos = start
        while pos < len(chosen) and len(results) < limit:
            u = chosen[pos]
            f = files[u.path]
            facts = self._facts(u.path, f)
            item = {
                "path": u.path,
                "line": u.line,
                "column": u.column + 1,
                "kind": u.kind,
                "in": facts.enclosing(u.line),
                "text": f.line_text(u.line),
            }
            if u.name != symbol:
                item["as"] = u.name
            size = len(json.dumps(item, ensure_ascii=False)) + 2
            if results and size > room:
                break
            room -= size
            results.append(item)
            pos += 1
        out["count"] = len(results)
        out["results"] = results
        out["next_cursor"] = _encode_cursor(tag, chosen[pos - 1].key()) if pos < len(chosen) and results else None
        return out

    def _definitions(self, key: str, f: _File, symbol: str) -> list[dict[str, Any]]:
        facts = self._facts(key, f)
        return [
            {"path": key, "line": line, "column": col + 1, "kind": kind, "symbol": qn}
            for name, line, col, kind, qn in facts.defs
            if name == symbol
        ]

    def _target(self, path: str, symbol: str, files: dict[str, _File], definitions: list[dict[str, Any]]) -> str:
        where = sorted({d["path"] for d in definitions})
        rp = resolve_in_workspace(self.ws, path, field="path")
        if rp.key not in files:
            close = difflib.get_close_matches(rp.key, list(files), n=5, cutoff=0.5)
            reason = "is a folder" if rp.abs.is_dir() else "is not a file the workspace walk keeps"
            raise SourceNotFound(
                f"path {rp.key!r} {reason if rp.abs.exists() else 'does not exist'}: give the file that defines {symbol!r}",
                details={
                    "field": "path",
                    "rule": "a file of the workspace",
                    "close_matches": close,
                    "defined_in": where,
                },
                next_action="Call find_references without path to see where the name is defined.",
            )
        if rp.key not in where and symbol not in _stems(rp.key):
            raise InvalidArgument(
                f"{rp.key!r} does not define {symbol!r}"
                + (f"; it is defined in {', '.join(where[:5])}" if where else ""),
                details={
                    "field": "path",
                    "rule": "the file that defines the symbol, or a module named as the symbol",
                    "defined_in": where[:20],
                },
                next_action=f"Pass one of defined_in as path, or leave path out to get every use of {symbol!r}; "
                f"symbol={min(_stems(rp.key))!r} asks who imports that file.",
            )
        return rp.key

    # -- resolving one definition -------------------------------------------------------------------

    def _resolved(self, target: str, symbol: str, files: dict[str, _File], module: bool) -> tuple[list[_Use], str]:
        lang = language_of(target)
        # A module's own file does not use it; the words of its name elsewhere are mostly not about it.
        uses = [] if module else self._occurrences(target, files[target], symbol)
        if module:
            found, importers, entry = self._module_uses(target, symbol, files)
            resolution = "module"
        else:
            found, importers, entry = self._symbol_uses(target, symbol, files)
            resolution = "imports" if lang in _RESOLVED else "by-name"
        uses += found
        seen = {u.key() for u in uses}
        project = _project_of(target, files)
        for key, f in files.items():
            if key in importers or key == target or language_of(key) in CODE_LANGUAGES or f.data is None:
                continue
            facts = self._facts(key, f)
            lines = {line for line, mod, attr in facts.entry_refs if entry(mod, attr)}
            for word in {attr if not module else symbol for line, _mod, attr in facts.entry_refs if line in lines}:
                uses += [u for u in self._occurrences(key, f, word) if u.line in lines and u.key() not in seen]
            if not module and (project == "" or key.startswith(project + "/")):
                # an entry point naming another module's attribute of the same name is not a use
                other = {line for line, mod, attr in facts.entry_refs if not entry(mod, attr)}
                uses += [u for u in self._occurrences(key, f, symbol) if u.key() not in seen and u.line not in other]
        return _unique(uses), resolution

    def _symbol_uses(
        self, target: str, symbol: str, files: dict[str, _File]
    ) -> tuple[list[_Use], set[str], Callable[[str, str], bool]]:
        """The uses of the symbol defined in ``target`` outside it, the files that import it, and
        which pyproject entry points (module, attribute) name it."""
        lang = language_of(target)
        uses: list[_Use] = []
        if lang == "python":
            bindings, modules = self._python_bindings(target, symbol, files)
        elif lang in _RESOLVED:
            bindings, modules = self._ts_bindings(target, symbol, files)
        else:
            for key, f in files.items():
                if key != target and language_of(key) == lang:
                    uses += [u for u in self._occurrences(key, f, symbol) if u.kind != "text"]
            bindings, modules = {}, set()
        names = {n for _, n in modules}
        for key, (locals_, quals) in bindings.items():
            if key == target:
                continue
            f = files[key]
            for word in locals_ | names:
                uses += [
                    u
                    for u in self._occurrences(key, f, word)
                    if u.kind == "import"  # in a file that binds it: ``x as y`` names both
                    or (word in locals_ and u.qualifier == "")
                    or (u.qualifier in quals and (quals[u.qualifier], word) in modules)
                    or (word == symbol and u.kind == "text")
                ]
        return uses, set(bindings), lambda mod, attr: (mod, attr) in modules

    def _module_uses(
        self, target: str, symbol: str, files: dict[str, _File]
    ) -> tuple[list[_Use], set[str], Callable[[str, str], bool]]:
        """Who imports the module ``target`` (``symbol`` is its name): the import lines, and the
        uses of the name it is bound to (``import a.mod``, ``from a import mod [as m]``, ``import * as m``)."""
        keys = set(files)
        lang = language_of(target)
        own = _module_name(target, keys) if lang == "python" else target
        parent = own.rpartition(".")[0]
        uses: list[_Use] = []
        importers: set[str] = set()
        for key, f in files.items():
            if key == target or f.data is None or language_of(key) not in (_RESOLVED if lang != "python" else {lang}):
                continue
            if lang == "python" and not f.offsets(symbol):
                continue  # every way of importing a Python module names it
            ranges: list[tuple[int, int]] = []
            locals_: set[str] = set()
            for imp in self._facts(key, f).imports:
                span = (imp.line, imp.end_line or imp.line)
                if lang != "python":
                    if _ts_resolve(key, imp.module, keys) == target:
                        ranges.append(span)
                        locals_ |= {imp.alias} if imp.alias else set()
                    continue
                if imp.alias is not None:  # import a.b.mod [as m]
                    if imp.module == own or imp.module.startswith(own + "."):
                        ranges.append(span)
                        if imp.module == own and imp.alias != own:
                            locals_.add(imp.alias)
                    continue
                base = _absolute(imp.module, imp.level, _module_name(key, keys), key)
                if base == own or base.startswith(own + "."):
                    ranges.append(span)
                for name, local in imp.names:
                    if (f"{base}.{name}" if base else name) == own:
                        ranges.append(span)
                        locals_.add(local)
            if not ranges:
                continue
            importers.add(key)
            for word in locals_ | {symbol}:
                for u in self._occurrences(key, f, word):
                    if any(a <= u.line <= b for a, b in ranges):
                        uses.append(_Use(u.path, u.line, u.column, "import", u.qualifier, u.name))
                    elif (word in locals_ and u.qualifier == "") or (word == symbol and u.qualifier == parent):
                        uses.append(u)
        return uses, importers, lambda mod, attr: mod == own

    def _python_bindings(
        self, target: str, symbol: str, files: dict[str, _File]
    ) -> tuple[_Bindings, set[tuple[str, str]]]:
        """Per importing file: the local names bound to the symbol, and the dotted qualifiers that
        denote a module exporting it; and every (module, name) under which it can be imported."""
        keys = set(files)
        module_of = {target: _module_name(target, keys)}

        def read(key: str, f: _File) -> list[tuple[Any, str]]:
            module_of[key] = own = _module_name(key, keys)
            return [(imp, _absolute(imp.module, imp.level, own, key)) for imp in self._facts(key, f).imports]

        def bind(
            key: str, imports: list[tuple[Any, str]], exports: dict[str, set[str]]
        ) -> tuple[set[str], dict[str, str]]:
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

        return self._fixpoint(target, symbol, files, "python", read, bind, module_of)

    def _ts_bindings(self, target: str, symbol: str, files: dict[str, _File]) -> tuple[_Bindings, set[tuple[str, str]]]:
        keys = set(files)
        module_of = {target: target}

        def read(key: str, f: _File) -> list[tuple[Any, str]]:
            module_of[key] = key
            out = []
            for imp in self._facts(key, f).imports:
                source = _ts_resolve(key, imp.module, keys)
                if source is not None:
                    out.append((imp, source))
            return out

        def bind(
            key: str, imports: list[tuple[Any, str]], exports: dict[str, set[str]]
        ) -> tuple[set[str], dict[str, str]]:
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

        return self._fixpoint(target, symbol, files, "ts", read, bind, module_of)

    def _fixpoint(
        self,
        target: str,
        symbol: str,
        files: dict[str, _File],
        family: str,
        read: Callable[[str, _File], list[tuple[Any, str]]],
        bind: Callable[[str, list[tuple[Any, str]], dict[str, set[str]]], tuple[set[str], dict[str, str]]],
        module_of: dict[str, str],
    ) -> tuple[_Bindings, set[tuple[str, str]]]:
        """Follow imports until nothing new is bound: each file that binds the symbol (under any
        name) exports it in turn. Only files where one of those names stands as a word are read
        (and TypeScript files that re-export everything, ``export *``)."""
        langs = {"python"} if family == "python" else {"typescript", "tsx", "javascript"}
        exports: dict[str, set[str]] = {module_of[target]: {symbol}}
        candidates: dict[str, list[tuple[Any, str]]] = {}
        bindings: _Bindings = {}
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


def _word_offsets(data: bytes, word: bytes) -> list[int]:
    """Where ``word`` stands as a whole word, as ``grep -w`` (ASCII word characters) finds it; a
    plain ``find`` runs at memory speed, where a regex with a look-behind tries every offset."""
    out = []
    at = data.find(word)
    end = len(word)
    while at >= 0:
        if (at == 0 or data[at - 1] not in _WORD_BYTES) and data[at + end : at + end + 1] not in _WORD_ENDS:
            out.append(at)
        at = data.find(word, at + end)
    return out


def _unique(uses: list[_Use]) -> list[_Use]:
    seen: dict[tuple[str, int, int], _Use] = {}
    for u in uses:
        seen.setdefault(u.key(), u)
    return list(seen.values())


def _stems(key: str) -> set[str]:
    """The names a file is imported by: ``a/mod.py`` → ``mod``; ``a/pkg/__init__.py`` → ``pkg``
    (and ``__init__``); ``x/index.ts`` → ``index`` and ``x``."""
    name = basename(key)
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    if stem in ("__init__", "index") and dirname(key):
        return {stem, basename(dirname(key))}
    return {stem}


def _module_name(key: str, keys: set[str]) -> str:
    """The dotted module of a Python file: its folders up to the topmost with an ``__init__.py``."""
    parts = key[: -len(".pyi") if key.endswith(".pyi") else -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        top = len(parts)
    else:
        top = len(parts) - 1
    while top > 0 and "/".join(parts[:top]) + "/__init__.py" in keys:
        top -= 1
    return ".".join(parts[top:])


def _absolute(module: str, level: int, own: str, key: str) -> str:
    if level == 0:
        return module
    package = own.split(".") if key.endswith("__init__.py") else own.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, module] if module else base)


def _ts_resolve(importer: str, spec: str, keys: set[str]) -> str | None:
    if not spec.startswith("."):
        return None
    base = normpath(f"{dirname(importer)}/{spec}") if dirname(importer) else normpath(spec)
    stem = re.sub(r"\.(m|c)?js$", "", base)
    candidates = [base] + [stem + ext for ext in _TS_EXTENSIONS] + [f"{base}/index{ext}" for ext in _TS_EXTENSIONS]
    return next((c for c in candidates if c in keys), None)


def _project_of(key: str, files: dict[str, _File]) -> str:
    folder = dirname(key)
    while folder:
        if any(f"{folder}/{m}" in files for m in _MANIFESTS):
            return folder
        folder = dirname(folder)
    return ""


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns  # noqa: PTH116 - hot path
    except OSError:
        return -1


def _walk_all(ws: Path) -> _Walk:
    """The files the workspace walk keeps, with the text files of no outlined language and ``.github/``."""
    from llmem.code.walk import IGNORE_FILES, walk_workspace

    out = _Walk()
    results = [walk_workspace(ws)]
    if (ws / ".github").is_dir():
        results.append(walk_workspace(ws, ws / ".github"))
    folders: set[str] = {""}
    for result in results:
        out.files += [f.rel_path for f in result.files]
        out.files += [s.rel_path for s in result.skipped if s.reason == "unsupported-language"]
        for rel in [f.rel_path for f in result.files] + [s.rel_path.rstrip("/") for s in result.skipped]:
            folder = dirname(rel)
            while folder and folder not in folders:
                folders.add(folder)
                folder = dirname(folder)
    out.files = sorted(set(out.files))
    for folder in folders:
        where = os.path.join(ws, folder) if folder else str(ws)  # noqa: PTH118
        out.watched[where] = _mtime(where)
        for name, _reason in IGNORE_FILES:
            ignore = os.path.join(where, name)  # noqa: PTH118
            if os.path.exists(ignore):  # noqa: PTH110 - a new one changes the folder's mtime
                out.watched[ignore] = _mtime(ignore)
    return out


def _tag(symbol: str, path: str | None, kind: str | None) -> str:
    return hashlib.blake2b(f"{symbol}\0{path}\0{kind}".encode(), digest_size=6).hexdigest()


def _encode_cursor(tag: str, after: tuple[str, int, int]) -> str:
    raw = json.dumps({"q": tag, "after": list(after)})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_cursor(cursor: str, tag: str, uses: list[_Use]) -> int:
    """Where the next page starts: after the last use answered, so a file changed between pages
    shifts nothing before it (the cursor names a place, not a count)."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        after = (str(value["after"][0]), int(value["after"][1]), int(value["after"][2]))
        ok = value["q"] == tag
    except (ValueError, KeyError, TypeError, IndexError):
        ok = False
    if not ok:
        raise InvalidArgument(
            "cursor is not one this question issued; pass next_cursor unchanged with the same symbol, path and kind",
            details={"field": "cursor", "rule": "opaque cursor of the same question"},
        )
    return bisect.bisect_right([u.key() for u in uses], after)


_FINDERS: dict[str, ReferenceFinder] = {}
_FINDERS_GUARD = threading.Lock()


def finder_for(workspace: Path) -> ReferenceFinder:
    """The one finder of ``workspace`` in this process (its caches warm across calls)."""
    key = str(workspace)
    with _FINDERS_GUARD:
        finder = _FINDERS.get(key)
        if finder is None:
            finder = _FINDERS[key] = ReferenceFinder(workspace)
        return finder
