"""Outlines of the files an agent reads first: package manifests and Markdown.

A manifest's outline says what the project is and where it starts: its name, its entry points
(``bin``, ``main``, ``exports``, ``[project.scripts]``, ``[[bin]]``), its scripts and its
dependencies, each with the line it is declared on. A Markdown file's outline is its headings,
nested by level, each with the line range of its section. No parser beyond the standard
library's ``json`` and ``tomllib`` is needed: line numbers come from a light scan of the text.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from llmem.outline._common import OutlineFailure, cap, one_line
from llmem.outline.model import ImportRef, Symbol, SymbolKind

__all__ = ["outline_manifest", "outline_markdown"]

_Result = tuple[list[ImportRef], list[Symbol]]


def outline_manifest(language: str, data: bytes) -> _Result:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OutlineFailure(f"undecodable: not valid UTF-8 at byte {exc.start}") from None
    lines = text.splitlines()
    if language == "package-json":
        return _package_json(text, lines)
    if language == "go-mod":
        return _go_mod(lines)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OutlineFailure(f"invalid TOML: {exc}") from None
    return _pyproject(doc, lines) if language == "pyproject" else _cargo(doc, lines)


class _Lines:
    """Finds the line a key or value is declared on, searching forward from a section's start."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def find(self, needle: str, start: int = 0, stop: int | None = None) -> int:
        """1-based line of the first line at or after 0-based ``start`` holding ``needle``, else ``start + 1``."""
        end = len(self.lines) if stop is None else min(stop, len(self.lines))
        for i in range(start, end):
            if needle in self.lines[i]:
                return i + 1
        return start + 1

    def key(self, name: str, start: int = 0, stop: int | None = None, quoted: bool = True) -> int:
        pattern = re.compile((rf'"{re.escape(name)}"\s*:') if quoted else rf"^\s*\"?{re.escape(name)}\"?\s*=")
        end = len(self.lines) if stop is None else min(stop, len(self.lines))
        for i in range(start, end):
            if pattern.search(self.lines[i]):
                return i + 1
        return start + 1

    def block_end(self, start_line: int) -> int:
        """The last line of the JSON object or array that opens on 1-based ``start_line``."""
        depth = 0
        opened = False
        in_string = False
        escaped = False
        for i in range(start_line - 1, len(self.lines)):
            for ch in self.lines[i]:
                if in_string:
                    if escaped:
                        escaped = False
                    elif ch == "\\":
                        escaped = True
                    elif ch == '"':
                        in_string = False
                elif ch == '"':
                    in_string = True
                elif ch in "{[":
                    depth += 1
                    opened = True
                elif ch in "}]":
                    depth -= 1
                    if opened and depth == 0:
                        return i + 1
        return start_line

    def section(self, header: str) -> tuple[int, int]:
        """0-based first line after a TOML ``[header]`` line, and the next header's line (or the end)."""
        pattern = re.compile(rf"^\s*\[{re.escape(header)}\]\s*(#.*)?$")
        for i, line in enumerate(self.lines):
            if pattern.match(line):
                for j in range(i + 1, len(self.lines)):
                    if re.match(r"^\s*\[", self.lines[j]):
                        return i + 1, j
                return i + 1, len(self.lines)
        return -1, -1


def _sym(
    kind: SymbolKind,
    name: str,
    prefix: str,
    signature: str,
    start: int,
    end: int | None = None,
    doc: str | None = None,
    children: list[Symbol] | None = None,
) -> Symbol:
    return Symbol(
        kind=kind,
        name=name,
        qualified_name=prefix + name,
        signature=one_line(signature),
        start_line=start,
        end_line=max(start, end or start),
        doc=cap(doc, 500) if doc else None,
        children=children or [],
    )


def _group(name: str, line: int, end: int, children: list[Symbol]) -> Symbol:
    for c in children:
        c.qualified_name = f"{name}.{c.name}"
    return _sym("module", name, "", f"{name} ({len(children)})", line, end, children=children)


def _package_json(text: str, lines: list[str]) -> _Result:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise OutlineFailure(f"invalid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise OutlineFailure("package.json is not a JSON object")
    at = _Lines(lines)
    out: list[Symbol] = []
    imports: list[ImportRef] = []
    if isinstance(doc.get("name"), str):
        version = doc.get("version")
        sig = f"{doc['name']}@{version}" if isinstance(version, str) else doc["name"]
        desc = doc.get("description") if isinstance(doc.get("description"), str) else None
        out.append(_sym("package", doc["name"], "", sig, at.key("name"), doc=desc))
    bins = doc.get("bin")
    if isinstance(bins, str):
        out.append(_sym("entry-point", "bin", "", f"bin: {bins}", at.key("bin")))
    elif isinstance(bins, dict):
        line = at.key("bin")
        kids = [
            _sym("entry-point", str(k), "", f"{k}: {v}", at.key(str(k), line - 1), doc=None)
            for k, v in bins.items()
            if isinstance(v, str)
        ]
        out.append(_group("bin", line, at.block_end(line), kids))
    for field in ("main", "module", "types", "typings", "browser"):
        if isinstance(doc.get(field), str):
            out.append(_sym("entry-point", field, "", f"{field}: {doc[field]}", at.key(field)))
    exports = doc.get("exports")
    if isinstance(exports, str):
        out.append(_sym("entry-point", "exports", "", f"exports: {exports}", at.key("exports")))
    elif isinstance(exports, dict):
        line = at.key("exports")
        kids = [
            _sym("entry-point", str(k), "", f"{k}: {json.dumps(v)}", at.key(str(k), line - 1))
            for k, v in exports.items()
        ]
        out.append(_group("exports", line, at.block_end(line), kids))
    scripts = doc.get("scripts")
    if isinstance(scripts, dict):
        line = at.key("scripts")
        kids = [
            _sym("script", str(k), "", f"{k}: {v}", at.key(str(k), line - 1))
            for k, v in scripts.items()
            if isinstance(v, str)
        ]
        out.append(_group("scripts", line, at.block_end(line), kids))
    for field in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = doc.get(field)
        if not isinstance(deps, dict):
            continue
        line = at.key(field)
        kids = []
        for k, v in deps.items():
            dep_line = at.key(str(k), line - 1)
            kids.append(_sym("dependency", str(k), "", f"{k}@{v}", dep_line))
            imports.append(ImportRef(module=str(k), names=[], line=dep_line))
        out.append(_group(field, line, at.block_end(line), kids))
    if isinstance(doc.get("workspaces"), list):
        line = at.key("workspaces")
        out.append(_sym("module", "workspaces", "", "workspaces: " + ", ".join(map(str, doc["workspaces"])), line))
    return imports, out


def _requirement_name(spec: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return match.group(1) if match else spec.strip()


def _pyproject(doc: dict[str, Any], lines: list[str]) -> _Result:
    at = _Lines(lines)
    out: list[Symbol] = []
    imports: list[ImportRef] = []
    project = doc.get("project")
    start, stop = at.section("project")
    if isinstance(project, dict) and start >= 0:
        name = str(project.get("name", "(unnamed)"))
        version = project.get("version")
        desc = project.get("description") if isinstance(project.get("description"), str) else None
        sig = f"{name} {version}" if isinstance(version, str) else name
        out.append(_sym("package", name, "", sig, at.key("name", start, stop, quoted=False), doc=desc))
        deps = project.get("dependencies")
        if isinstance(deps, list):
            line = at.key("dependencies", start, stop, quoted=False)
            kids = []
            for spec in deps:
                dep = _requirement_name(str(spec))
                dep_line = at.find(f'"{spec}"', line - 1, stop) if line else line
                kids.append(_sym("dependency", dep, "", str(spec), dep_line))
                imports.append(ImportRef(module=dep, names=[], line=dep_line))
            out.append(_group("dependencies", line, max(k.start_line for k in kids) if kids else line, kids))
    for table, label in (("project.scripts", "scripts"), ("project.gui-scripts", "gui-scripts")):
        values = _dig(doc, table)
        s0, s1 = at.section(table)
        if isinstance(values, dict) and s0 >= 0:
            kids = [
                _sym("entry-point", str(k), "", f"{k} = {v}", at.key(str(k), s0, s1, quoted=False))
                for k, v in values.items()
            ]
            out.append(_group(label, s0, s1, kids))
    entry_points = _dig(doc, "project.entry-points")
    if isinstance(entry_points, dict):
        for group, values in entry_points.items():
            s0, s1 = at.section(f"project.entry-points.{group}")
            if not isinstance(values, dict):
                continue
            if s0 < 0:
                s0, s1 = at.section(f'project.entry-points."{group}"')
            kids = [
                _sym(
                    "entry-point",
                    str(k),
                    "",
                    f"{k} = {v}",
                    at.key(str(k), max(s0, 0), s1 if s1 > 0 else None, quoted=False),
                )
                for k, v in values.items()
            ]
            out.append(_group(f"entry-points.{group}", max(s0, 1), max(s1, s0, 1), kids))
    extras = _dig(doc, "project.optional-dependencies")
    s0, s1 = at.section("project.optional-dependencies")
    if isinstance(extras, dict) and s0 >= 0:
        for extra, specs in extras.items():
            line = at.key(str(extra), s0, s1, quoted=False)
            kids = []
            for spec in specs if isinstance(specs, list) else []:
                dep = _requirement_name(str(spec))
                kids.append(_sym("dependency", dep, "", str(spec), at.find(f'"{spec}"', line - 1, s1)))
            out.append(_group(f"optional-dependencies.{extra}", line, max([line, *(k.start_line for k in kids)]), kids))
    poetry = _dig(doc, "tool.poetry.dependencies")
    s0, s1 = at.section("tool.poetry.dependencies")
    if isinstance(poetry, dict) and s0 >= 0:
        kids = [
            _sym("dependency", str(k), "", f"{k} = {json.dumps(v)}", at.key(str(k), s0, s1, quoted=False))
            for k, v in poetry.items()
        ]
        imports += [ImportRef(module=k.name, names=[], line=k.start_line) for k in kids if k.name != "python"]
        out.append(_group("tool.poetry.dependencies", s0, s1, kids))
    scripts = _dig(doc, "tool.poetry.scripts")
    s0, s1 = at.section("tool.poetry.scripts")
    if isinstance(scripts, dict) and s0 >= 0:
        kids = [
            _sym("entry-point", str(k), "", f"{k} = {v}", at.key(str(k), s0, s1, quoted=False))
            for k, v in scripts.items()
        ]
        out.append(_group("tool.poetry.scripts", s0, s1, kids))
    return imports, out


def _cargo(doc: dict[str, Any], lines: list[str]) -> _Result:
    at = _Lines(lines)
    out: list[Symbol] = []
    imports: list[ImportRef] = []
    package = doc.get("package")
    s0, s1 = at.section("package")
    if isinstance(package, dict) and s0 >= 0:
        name = str(package.get("name", "(unnamed)"))
        version = package.get("version")
        desc = package.get("description") if isinstance(package.get("description"), str) else None
        sig = f"{name} {version}" if isinstance(version, str) else name
        out.append(_sym("package", name, "", sig, at.key("name", s0, s1, quoted=False), doc=desc))
    for binary in doc.get("bin") or []:
        if isinstance(binary, dict) and "name" in binary:
            line = at.find(f'"{binary["name"]}"', 0)
            sig = f"bin {binary['name']} = {binary.get('path', '')}"
            out.append(_sym("entry-point", str(binary["name"]), "", sig, line))
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        deps = doc.get(table)
        s0, s1 = at.section(table)
        if not isinstance(deps, dict) or s0 < 0:
            continue
        kids = []
        for k, v in deps.items():
            line = at.key(str(k), s0, s1, quoted=False)
            version = v if isinstance(v, str) else v.get("version", "") if isinstance(v, dict) else ""
            kids.append(_sym("dependency", str(k), "", f"{k} {version}".strip(), line))
            imports.append(ImportRef(module=str(k), names=[], line=line))
        out.append(_group(table, s0, s1, kids))
    return imports, out


def _go_mod(lines: list[str]) -> _Result:
    out: list[Symbol] = []
    imports: list[ImportRef] = []
    requires: list[Symbol] = []
    block_start = 0
    in_block = False
    for i, raw in enumerate(lines, 1):
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if in_block:
            if line == ")":
                in_block = False
                continue
            parts = line.split()
            requires.append(_sym("dependency", parts[0], "", " ".join(parts), i))
            imports.append(ImportRef(module=parts[0], names=[], line=i))
            continue
        word, _, rest = line.partition(" ")
        if word == "module":
            out.append(_sym("package", rest.strip(), "", line, i))
        elif word == "go":
            out.append(_sym("module", "go", "", line, i))
        elif word == "require":
            if rest.strip() == "(":
                in_block = True
                block_start = block_start or i
            else:
                parts = rest.split()
                if parts:
                    requires.append(_sym("dependency", parts[0], "", " ".join(parts), i))
                    imports.append(ImportRef(module=parts[0], names=[], line=i))
    if requires:
        out.append(_group("require", block_start or requires[0].start_line, requires[-1].end_line, requires))
    return imports, out


def _dig(doc: dict[str, Any], dotted: str) -> Any:
    value: Any = doc
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def outline_markdown(data: bytes) -> _Result:
    """Headings (ATX and setext, none inside fenced code), nested by level, each spanning its section."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OutlineFailure(f"undecodable: not valid UTF-8 at byte {exc.start}") from None
    lines = text.splitlines()
    found: list[tuple[int, str, int]] = []  # (level, title, 1-based line)
    fence: str | None = None
    for i, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        atx = _ATX.match(line)
        if atx:
            found.append((len(atx.group(1)), (atx.group(2) or "").strip(), i + 1))
            continue
        setext = _SETEXT.match(line)
        if setext and i > 0 and lines[i - 1].strip() and not _ATX.match(lines[i - 1]):
            if found and found[-1][2] == i:  # the previous line is already a heading
                continue
            level = 1 if setext.group(1)[0] == "=" else 2
            if level == 2 and (i < 1 or not lines[i - 1].strip()):
                continue
            found.append((level, lines[i - 1].strip(), i))
    total = len(lines)
    roots: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []
    for n, (level, title, at_line) in enumerate(found):
        end = total
        for later_level, _, later_line in found[n + 1 :]:
            if later_level <= level:
                end = later_line - 1
                break
        while stack and stack[-1][0] >= level:
            stack.pop()
        prefix = stack[-1][1].qualified_name + "." if stack else ""
        name = title or "(untitled)"
        symbol = _sym("heading", name, prefix, f"{'#' * level} {name}", at_line, max(at_line, end))
        (stack[-1][1].children if stack else roots).append(symbol)
        stack.append((level, symbol))
    return [], roots
