"""The workspace half of ``check_references`` for TypeScript, JavaScript and Go.

TypeScript/JavaScript: what each file exports (through ``export *`` too, unless CommonJS or
``export =`` make it unknowable), the enums, classes and namespaces behind an imported name and
their members, the names other files export (where an unbound name may come from), and the
names script and declaration files make global. Go: the names a package (the files of one
folder) declares. Imports are resolved as ``find_references`` resolves them
(:func:`llmem.code.references_imports.ts_resolve`: relative specifiers).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from posixpath import dirname, normpath
from typing import TYPE_CHECKING

from llmem.code.check_resolve import file_analysis
from llmem.code.check_treesitter import GO_BUILTINS, JS_GLOBALS, TsFile
from llmem.code.references_files import SourceFile, WorkspaceFiles
from llmem.code.references_imports import ts_resolve
from llmem.code.references_parse import language_of

if TYPE_CHECKING:
    from llmem.code.references_ts import TypeWorld

__all__ = ["GoWorld", "ScriptWorld", "go_builtin", "js_global"]

_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})
_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")


class ScriptWorld:
    """TypeScript and JavaScript files of one workspace, their exports resolved on demand."""

    def __init__(self, src: WorkspaceFiles, files: dict[str, SourceFile]) -> None:
        self.src = src
        self.files = files
        self.keys = set(files)
        self._exports: dict[str, set[str] | str] = {}
        self._declared: dict[str, list[str]] | None = None
        self._globals: set[str] | None = None
        self._member_names: set[str] | None = None
        self._types: TypeWorld | None = None

    @property
    def types(self) -> TypeWorld:
        """What a receiver is (``new C()``, ``x: C``, an import of C …), as find_references judges it."""
        if self._types is None:
            from llmem.code.references_ts import TypeWorld

            self._types = TypeWorld(self.src, self.files)
        return self._types

    def declared_at(self, key: str, name: str) -> int | None:
        """The line where ``key`` declares ``name`` at its top level (exported or not), or None."""
        f = self.files.get(key)
        if f is None or f.data is None:
            return None
        facts = self.src.facts(key, f)
        return next((line for n, line, _col, _kind, qn in facts.defs if n == name and qn == name), None)

    def member_names(self) -> set[str]:
        """Every name a class of the workspace's TypeScript/JavaScript files has in its body."""
        if self._member_names is None:
            self._member_names = set()
            for key in self.keys:
                info = self.info(key) if language_of(key) in _JS_FAMILY else None
                for box in info.containers.values() if info is not None else ():
                    if box.kind == "class":
                        self._member_names |= box.members
        return self._member_names

    def info(self, key: str) -> TsFile | None:
        f = self.files.get(key)
        got = file_analysis(self.src, key, f) if f is not None else None
        return got if isinstance(got, TsFile) else None

    def resolve(self, importer: str, spec: str) -> str | None:
        return ts_resolve(importer, spec, self.keys)

    def exists_on_disk(self, importer: str, spec: str) -> bool:
        base = normpath(f"{dirname(importer)}/{spec}") if dirname(importer) else normpath(spec)
        where = os.path.join(self.src.ws, base)  # noqa: PTH118
        stem = where.rsplit(".", 1)[0] if where.rsplit("/", 1)[-1].count(".") else where
        return any(os.path.exists(p) for p in (where, *(stem + e for e in _TS_EXTENSIONS)))  # noqa: PTH110

    def exports(self, key: str, depth: int = 0) -> set[str] | str:
        """The names ``key`` exports (through ``export *`` too), or why they cannot be known."""
        memo = self._exports.get(key)
        if memo is not None:
            return memo
        self._exports[key] = set()  # a cycle of export * adds nothing more
        info = self.info(key)
        result: set[str] | str
        if info is None or language_of(key) not in _JS_FAMILY:
            result = "a file that is not TypeScript or JavaScript"
        elif info.dynamic_exports:
            result = f"a file with {info.dynamic_exports}"
        else:
            result = set(info.exports)
            for spec in info.star_exports:
                target = self.resolve(key, spec)
                more = self.exports(target, depth + 1) if target is not None and depth < 30 else None
                if not isinstance(more, set):
                    result = f"a file that re-exports everything of {spec}"
                    break
                result |= more - {"default"}
        self._exports[key] = result
        return result

    def container(self, key: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """Where the enum, class or namespace exported as ``name`` by ``key`` is declared."""
        info = self.info(key)
        if info is None or depth > 30:
            return None
        local = info.exports.get(name, name if name in info.containers else None)
        if local is not None and local in info.containers:
            return key, local
        for imp in info.imports:
            if imp.local == (local or name) and imp.spec.startswith("."):
                target = self.resolve(key, imp.spec)
                if target is not None:
                    return self.container(target, imp.name, depth + 1)
        for spec in info.star_exports:
            target = self.resolve(key, spec)
            found = self.container(target, name, depth + 1) if target is not None else None
            if found is not None:
                return found
        return None

    def container_members(self, key: str, name: str, depth: int = 0) -> set[str] | str:
        info = self.info(key)
        box = info.containers[name] if info is not None else None
        if box is None:
            return "a container that could not be read"
        if box.open is not None:
            return box.open
        members = set(box.members) | ({"prototype", "name", "length"} if box.kind == "class" else set())
        if box.kind == "class" and box.extends is not None:
            base = self.container(key, box.extends) if "." not in box.extends else None
            if base is None or depth > 30:
                return f"a class that extends {box.extends}"
            more = self.container_members(base[0], base[1], depth + 1)
            if isinstance(more, str):
                return more
            members |= more
        return members

    def declared_elsewhere(self, name: str, language_family: frozenset[str]) -> list[str]:
        """Files of the workspace that export ``name`` (where an unbound call may come from)."""
        if self._declared is None:
            self._declared = {}
            for key in sorted(self.keys):
                if language_of(key) in _JS_FAMILY and self.files[key].data is not None:
                    info = self.info(key)
                    for exported in info.exports if info is not None else {}:
                        self._declared.setdefault(exported, []).append(key)
        del language_family
        return self._declared.get(name, [])

    def globals_of_scripts(self) -> set[str]:
        """Names bound by script files (no import, no export) and declaration files (``.d.ts``):
        globals for the workspace (kept for the call)."""
        if self._globals is not None:
            return self._globals
        out: set[str] = set()
        for key in self.keys:
            if language_of(key) in _JS_FAMILY and self.files[key].data is not None:
                info = self.info(key)
                if info is not None and (not info.is_module or key.endswith(".d.ts")):
                    out |= set(info.bound)  # a script's names, an ambient declaration's: globals
        self._globals = out
        return out


#: The browser's classes and events by their prefixes (HTMLInputElement, SVGPathElement, KeyboardEvent …).
_DOM_CLASS = re.compile(
    r"^(HTML|SVG|CSS|DOM|Web|RTC|IDB|XML|XPath|Media|Audio|Video|Text|Keyboard|Mouse|Pointer|Touch|Drag|Focus"
    r"|Input|Wheel|Clipboard|Animation|Transition|Storage|Message|Error|Close|Progress|Performance|Intersection"
    r"|Resize|Mutation|Readable|Writable|Transform|Abort|Crypto|Subtle|Navigator|Screen|Shadow|Custom|Range"
    r"|Selection|Node|Element|Document|Window|Event|File|Blob|Image|Canvas|WebGL|GPU|Offscreen)[A-Za-z0-9]*$"
)


def js_global(name: str) -> bool:
    return name in JS_GLOBALS or bool(_DOM_CLASS.match(name))


# -- Go ----------------------------------------------------------------------------------------------


class GoWorld:
    """Go packages (the files of one folder) of one workspace."""

    def __init__(self, src: WorkspaceFiles, files: dict[str, SourceFile]) -> None:
        self.src = src
        self.files = files
        self._bound: dict[str, Counter[str]] = {}

    def package_bound(self, key: str) -> Counter[str]:
        folder = dirname(key)
        memo = self._bound.get(folder)
        if memo is None:
            memo = Counter()
            for k, f in self.files.items():
                if dirname(k) == folder and language_of(k) == "go" and f.data is not None:
                    info = file_analysis(self.src, k, f)
                    if isinstance(info, TsFile):
                        memo.update(info.bound)
            self._bound[folder] = memo
        return memo


def go_builtin(name: str) -> bool:
    return name in GO_BUILTINS
