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

from llmem.code.outline._common import OutlineFailure, cap, one_line
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

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


_JSON_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|[{}\[\]:,\n]')


def _json_key_lines(text: str, max_depth: int = 3) -> dict[tuple[str, ...], tuple[int, int]]:
    """``(key, subkey, …)`` → (1-based line of the key, last line of its value), for keys in
    nested objects up to ``max_depth`` deep: exact lines, whatever order or repetition."""
    out: dict[tuple[str, ...], tuple[int, int]] = {}
    frames: list[list[Any]] = []  # [bracket, key path of this container or None, current key or None]
    line = 1
    candidate: str | None = None
    for match in _JSON_TOKEN.finditer(text):
        part = match.group()
        if part == "\n":
            line += 1
        elif part[0] == '"':
            candidate = part
        elif part == ":":
            top = frames[-1] if frames else None
            if top is not None and top[0] == "{" and top[1] is not None and candidate is not None:
                try:
                    key = json.loads(candidate)
                except ValueError:
                    key = candidate.strip('"')
                top[2] = (*top[1], key)
                if len(top[2]) <= max_depth:
                    out[top[2]] = (line, line)
            candidate = None
        elif part in "{[":
            parent = frames[-1] if frames else None
            path = () if parent is None else parent[2] if parent[0] == "{" else None
            frames.append([part, path, None])
        elif part in "}]":
            if frames:
                closed = frames.pop()
                if closed[1] and closed[1] in out:
                    out[closed[1]] = (out[closed[1]][0], line)
        else:  # ","
            candidate = None
    return out


def _package_json(text: str, lines: list[str]) -> _Result:
    del lines
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise OutlineFailure(f"invalid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise OutlineFailure("package.json is not a JSON object")
    keys = _json_key_lines(text)

    def at(*path: str) -> int:
        return keys.get(path, (1, 1))[0]

    def end(*path: str) -> int:
        return keys.get(path, (1, 1))[1]

    out: list[Symbol] = []
    imports: list[ImportRef] = []
    if isinstance(doc.get("name"), str):
        version = doc.get("version")
        sig = f"{doc['name']}@{version}" if isinstance(version, str) else doc["name"]
        desc = doc.get("description") if isinstance(doc.get("description"), str) else None
        out.append(_sym("package", doc["name"], "", sig, at("name"), doc=desc))
    bins = doc.get("bin")
    if isinstance(bins, str):
        out.append(_sym("entry-point", "bin", "", f"bin: {bins}", at("bin")))
    elif isinstance(bins, dict):
        kids = [
            _sym("entry-point", str(k), "", f"{k}: {v}", at("bin", str(k)))
            for k, v in bins.items()
            if isinstance(v, str)
        ]
        out.append(_group("bin", at("bin"), end("bin"), kids))
    for field in ("main", "module", "types", "typings", "browser"):
        if isinstance(doc.get(field), str):
            out.append(_sym("entry-point", field, "", f"{field}: {doc[field]}", at(field)))
    exports = doc.get("exports")
    if isinstance(exports, str):
        out.append(_sym("entry-point", "exports", "", f"exports: {exports}", at("exports")))
    elif isinstance(exports, dict):
        kids = [
            _sym("entry-point", str(k), "", f"{k}: {json.dumps(v)}", at("exports", str(k)), end("exports", str(k)))
            for k, v in exports.items()
        ]
        out.append(_group("exports", at("exports"), end("exports"), kids))
    scripts = doc.get("scripts")
    if isinstance(scripts, dict):
        kids = [
            _sym("script", str(k), "", f"{k}: {v}", at("scripts", str(k)))
            for k, v in scripts.items()
            if isinstance(v, str)
        ]
        out.append(_group("scripts", at("scripts"), end("scripts"), kids))
    for field in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        deps = doc.get(field)
        if not isinstance(deps, dict):
            continue
        kids = []
        for k, v in deps.items():
            dep_line = at(field, str(k))
            kids.append(_sym("dependency", str(k), "", f"{k}@{v}", dep_line))
            imports.append(ImportRef(module=str(k), names=[], line=dep_line))
        out.append(_group(field, at(field), end(field), kids))
    if isinstance(doc.get("workspaces"), list):
        names = ", ".join(map(str, doc["workspaces"]))
        out.append(_sym("module", "workspaces", "", "workspaces: " + names, at("workspaces"), end("workspaces")))
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
    groups = doc.get("dependency-groups")  # PEP 735
    s0, s1 = at.section("dependency-groups")
    if isinstance(groups, dict) and s0 >= 0:
        for group, specs in groups.items():
            line = at.key(str(group), s0, s1, quoted=False)
            kids = [
                _sym("dependency", _requirement_name(spec), "", spec, at.find(f'"{spec}"', line - 1, s1))
                for spec in (specs if isinstance(specs, list) else [])
                if isinstance(spec, str)
            ]
            end = max([line, *(k.start_line for k in kids)])
            out.append(_group(f"dependency-groups.{group}", line, end, kids))
    poetry_name = _dig(doc, "tool.poetry.name")
    s0, s1 = at.section("tool.poetry")
    if not isinstance(project, dict) and isinstance(poetry_name, str) and s0 >= 0:
        version = _dig(doc, "tool.poetry.version")
        sig = f"{poetry_name} {version}" if isinstance(version, str) else poetry_name
        out.insert(0, _sym("package", poetry_name, "", sig, at.key("name", s0, s1, quoted=False)))
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
    bin_headers = [i for i, line in enumerate(lines) if re.match(r"^\s*\[\[bin\]\]", line)]
    for n, binary in enumerate(doc.get("bin") or []):
        if isinstance(binary, dict) and "name" in binary:
            if n < len(bin_headers):
                head = bin_headers[n]
                stop = bin_headers[n + 1] if n + 1 < len(bin_headers) else None
                line = at.key("name", head, stop, quoted=False)
            else:
                line = at.find(f'"{binary["name"]}"', 0)
            sig = f"bin {binary['name']} = {binary.get('path', '')}"
            out.append(_sym("entry-point", str(binary["name"]), "", sig, line))
    lib = doc.get("lib")
    s0, s1 = at.section("lib")
    if isinstance(lib, dict) and s0 >= 0:
        name = str(lib.get("name", package.get("name", "lib") if isinstance(package, dict) else "lib"))
        out.append(_sym("entry-point", "lib", "", f"lib {name} = {lib.get('path', 'src/lib.rs')}", s0))
    members = _dig(doc, "workspace.members")
    s0, s1 = at.section("workspace")
    if isinstance(members, list) and s0 >= 0:
        line = at.key("members", s0, s1, quoted=False)
        out.append(_sym("module", "workspace", "", "workspace: " + ", ".join(map(str, members)), line))
    for table in ("dependencies", "dev-dependencies", "build-dependencies", "workspace.dependencies"):
        deps = _dig(doc, table)
        s0, s1 = at.section(table)
        if not isinstance(deps, dict) or not deps:
            continue
        kids = []
        for k, v in deps.items():
            own = at.section(f"{table}.{k}")[0]  # [dependencies.serde] written as its own table
            line = own if own > 0 else at.key(str(k), max(s0, 0), s1 if s0 >= 0 else None, quoted=False)
            version = v if isinstance(v, str) else v.get("version", "") if isinstance(v, dict) else ""
            kids.append(_sym("dependency", str(k), "", f"{k} {version}".strip(), line))
            imports.append(ImportRef(module=str(k), names=[], line=line))
        first = s0 if s0 >= 0 else min(k.start_line for k in kids)
        out.append(_group(table, first, max([s1 if s0 >= 0 else 0, *(k.start_line for k in kids)]), kids))
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
_NOT_PARAGRAPH = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\||>|<!--)")


def _front_matter_end(lines: list[str]) -> int:
    """The first line after a YAML (``---``) or TOML (``+++``) front matter block, else 0."""
    if not lines or lines[0].strip() not in ("---", "+++"):
        return 0
    closer = lines[0].strip()
    for i in range(1, len(lines)):
        if lines[i].strip() in (closer, "..."):
            return i + 1
    return 0


def outline_markdown(data: bytes) -> _Result:
    """Headings (ATX and setext, none inside fenced code), nested by level, each spanning its section."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OutlineFailure(f"undecodable: not valid UTF-8 at byte {exc.start}") from None
    lines = text.splitlines()
    found: list[tuple[int, str, int]] = []  # (level, title, 1-based line)
    fence: str | None = None
    first = _front_matter_end(lines)
    for i in range(first, len(lines)):
        line = lines[i]
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
        if setext and i > first and lines[i - 1].strip() and not _ATX.match(lines[i - 1]):
            if found and found[-1][2] == i:  # the previous line is already a heading
                continue
            if _NOT_PARAGRAPH.match(lines[i - 1]):  # "- item" or "| a | b |" over "---": a rule, not a heading
                continue
            level = 1 if setext.group(1)[0] == "=" else 2
            found.append((level, lines[i - 1].strip(), i))
    roots: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []
    for level, title, at_line in found:
        while stack and stack[-1][0] >= level:
            closed = stack.pop()[1]
            closed.end_line = max(closed.start_line, at_line - 1)
        prefix = stack[-1][1].qualified_name + "." if stack else ""
        name = title or "(untitled)"
        symbol = _sym("heading", name, prefix, f"{'#' * level} {name}", at_line, len(lines))
        (stack[-1][1].children if stack else roots).append(symbol)
        stack.append((level, symbol))
    return [], roots
