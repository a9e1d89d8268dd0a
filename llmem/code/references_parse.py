"""What ``find_references`` needs to know about one file: where its identifiers are and what each is.

A file's :class:`Facts` come from its parser: Python through the standard library's ``ast``;
TypeScript, TSX, JavaScript, Go, Rust and Java through tree-sitter (the outline's grammars,
loaded the same lazy way); manifests and Dockerfiles by their few lines that name entry points.
Every identifier the parser sees is filed by its (line, byte column) with its kind — ``import``,
``call``, ``reference``, ``parameter`` (a parameter's name where a function declares it, a keyword
argument's name where a call passes it: ``Database(memory=True)``) or ``definition`` — and, for an attribute (``x.name``), the dotted text
of what it is taken from, which is how ``import x`` then ``x.name`` is resolved. A word the
parser does not see as an identifier (a comment, a string, a file of no known language) is
``text``. Nothing here knows about MCP or the store.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass, field
from posixpath import basename
from typing import Any

__all__ = ["Anonymous", "Facts", "Import", "facts_of", "language_of"]

CODE_LANGUAGES = frozenset({"python", "typescript", "tsx", "javascript", "go", "rust", "java"})


@dataclass
class Import:
    """One import statement: ``module`` (Python: dotted, ``level`` dots; others: the specifier),
    the names it binds (``(imported, local)``), the local name of a whole module it binds
    (``import x as y``, ``import * as ns``: ``alias``), and whether it re-exports (``export … from``)."""

    line: int
    module: str
    level: int = 0
    end_line: int = 0
    names: list[tuple[str, str]] = field(default_factory=list)
    alias: str | None = None
    star: bool = False


@dataclass(frozen=True)
class Anonymous:
    """A function with no name of its own (an arrow, a function expression, a lambda), and what
    it is named by where it stands: ``arrow in args.map`` (an argument of that call), ``onData``
    (the value of ``const onData = …``), ``arrow as handler`` (a property's value), else
    ``arrow at line N``. ``owner_line`` is where the call or declaration around it starts."""

    start: tuple[int, int]  # (line, byte column)
    end: tuple[int, int]
    label: str
    owner: str  # "argument", "value" (of a declaration or assignment named ``label``) or "other"
    owner_line: int

    def holds(self, line: int, column: int) -> bool:
        return self.start <= (line, column) <= self.end


@dataclass
class Facts:
    language: str
    #: (line, byte column) of an identifier → (kind, dotted text of what an attribute is taken from, "" for a name)
    ids: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)
    #: lines wholly of an import statement (Python: every word on them is an import)
    import_lines: set[int] = field(default_factory=set)
    #: (start line, end line, qualified name) of each function, class, method … in source order
    scopes: list[tuple[int, int, str]] = field(default_factory=list)
    #: (name, line, column, kind, qualified name) of each definition
    defs: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    #: manifest and Dockerfile lines naming an entry point
    entry_lines: set[int] = field(default_factory=set)
    #: pyproject entry points ``name = "module:attr"``: (line, module, attr)
    entry_refs: list[tuple[int, str, str]] = field(default_factory=list)
    #: functions without a name of their own, in source order
    anonymous: list[Anonymous] = field(default_factory=list)
    #: while a Python file is read: id(lambda) → how its parent names it
    lambda_names: dict[int, tuple[str, str, int]] = field(default_factory=dict, repr=False)
    #: (line, byte column) of a call's callee name → the whole call's (start line, start column,
    #: end line, end column): what ``find_references`` shows of a call, its arguments too
    calls: dict[tuple[int, int], tuple[int, int, int, int]] = field(default_factory=dict)
    note: str | None = None

    def enclosing(self, line: int) -> str | None:
        best: str | None = None
        for start, end, qn in self.scopes:
            if start > line:
                break
            if line <= end:
                best = qn  # scopes come in source order, so a later one that holds the line is inner
        return best


@functools.lru_cache(maxsize=65_536)
def language_of(path: str) -> str:
    from llmem.code.outline import detect_language

    lang = detect_language(path) or ""
    name = basename(path).lower()
    if lang in CODE_LANGUAGES or lang in {"pyproject", "package-json"}:
        return lang
    if name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    return "text"


def facts_of(path: str, data: bytes) -> Facts:
    lang = language_of(path)
    if lang == "python":
        return _python(data)
    if lang in CODE_LANGUAGES:
        return _treesitter(lang, data)
    if lang == "pyproject":
        return _pyproject(data)
    if lang == "package-json":
        return _package_json(data)
    if lang == "dockerfile":
        return _dockerfile(data)
    return Facts(lang)


# -- Python -------------------------------------------------------------------------------------


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return "?"


def _python(data: bytes) -> Facts:
    facts = Facts("python")
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError) as exc:
        facts.note = f"not parsed ({type(exc).__name__}); its words count as text"
        return facts
    lines = data.split(b"\n")
    ids = facts.ids

    def name_col(line: int, keyword: bytes, name: str) -> int:
        text = lines[line - 1] if line - 1 < len(lines) else b""
        m = re.search(keyword + rb"\s+(" + re.escape(name.encode()) + rb")\b", text)
        return m.start(1) if m else 0

    def visit(node: ast.AST, prefix: str, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                is_class = isinstance(child, ast.ClassDef)
                qn = prefix + child.name
                col = name_col(child.lineno, rb"class" if is_class else rb"def", child.name)
                ids[(child.lineno, col)] = ("definition", "")
                kind = "class" if is_class else "method" if prefix and not in_function else "function"
                facts.defs.append((child.name, child.lineno, col, kind, qn))
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                facts.scopes.append((start, child.end_lineno or child.lineno, qn))
                visit(child, qn + ".", in_function or not is_class)
                continue
            _python_node(child, facts, prefix, in_function)
            if isinstance(child, ast.Call | ast.Assign | ast.Lambda):
                _lambda(child, facts)
            visit(child, prefix, in_function)

    visit(tree, "", False)
    facts.scopes.sort()
    facts.anonymous.sort(key=lambda a: a.start)
    facts.lambda_names.clear()
    return facts


def _lambda(node: ast.AST, facts: Facts) -> None:
    """A lambda, named by where it stands (see :class:`Anonymous`): an argument of a call, the
    value of ``f = lambda …``. The parent is met first (the walk goes down), and leaves the name."""
    named = facts.lambda_names
    if isinstance(node, ast.Call) and any(
        isinstance(a, ast.Lambda) for a in [*node.args, *(k.value for k in node.keywords)]
    ):
        callee = _dotted(node.func)
        for arg in node.args:
            named[id(arg)] = (f"lambda in {callee}", "argument", node.lineno)
        for kw in node.keywords:
            label = f"lambda in {callee}({kw.arg}=)" if kw.arg else f"lambda in {callee}"
            named[id(kw.value)] = (label, "argument", node.lineno)
    elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda) and isinstance(node.targets[0], ast.Name):
        named[id(node.value)] = (node.targets[0].id, "value", node.lineno)
    elif isinstance(node, ast.Lambda):
        label, owner, line = named.pop(id(node), (f"lambda at line {node.lineno}", "other", node.lineno))
        end = (node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
        facts.anonymous.append(Anonymous((node.lineno, node.col_offset), end, label, owner, line))


def _python_node(node: ast.AST, facts: Facts, prefix: str, in_function: bool) -> None:
    ids = facts.ids
    if isinstance(node, ast.Name):
        if isinstance(node.ctx, ast.Store) and not in_function:
            ids[(node.lineno, node.col_offset)] = ("definition", "")
            facts.defs.append((node.id, node.lineno, node.col_offset, "variable", prefix + node.id))
        else:
            ids.setdefault((node.lineno, node.col_offset), ("reference", ""))
    elif isinstance(node, ast.Attribute) and node.end_lineno is not None and node.end_col_offset is not None:
        ids.setdefault((node.end_lineno, node.end_col_offset - len(node.attr)), ("reference", _dotted(node.value)))
    elif isinstance(node, ast.Call):
        func = node.func
        place: tuple[int, int] | None = None
        if isinstance(func, ast.Name):
            place = (func.lineno, func.col_offset)
            ids[place] = ("call", "")
        elif isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_col_offset is not None:
            place = (func.end_lineno, func.end_col_offset - len(func.attr))
            ids[place] = ("call", _dotted(func.value))
        if place is not None and node.end_lineno is not None and node.end_col_offset is not None:
            facts.calls[place] = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
    elif isinstance(node, ast.arg | ast.keyword) and getattr(node, "lineno", None) is not None:
        # A parameter's or a keyword argument's name: a name of its own, never a use of a function.
        ids.setdefault((node.lineno, node.col_offset), ("parameter", ""))
    elif isinstance(node, ast.Import | ast.ImportFrom):
        facts.import_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, ast.ImportFrom):
            names = [(a.name, a.asname or a.name) for a in node.names if a.name != "*"]
            star = any(a.name == "*" for a in node.names)
            end = node.end_lineno or node.lineno
            facts.imports.append(Import(node.lineno, node.module or "", node.level, end, names, star=star))
        else:
            for a in node.names:
                # ``import a.b`` binds ``a`` and is used as ``a.b.x``; ``import a.b as y`` as ``y.x``
                facts.imports.append(
                    Import(node.lineno, a.name, 0, node.end_lineno or node.lineno, alias=a.asname or a.name)
                )


# -- tree-sitter ----------------------------------------------------------------------------------

_IMPORT_NODES = frozenset(
    {"import_statement", "import_declaration", "use_declaration", "import_spec", "extern_crate_declaration"}
)
_CALL_NODES = {
    "call_expression": "function",
    "new_expression": "constructor",
    "method_invocation": "name",
    "macro_invocation": "macro",
    "object_creation_expression": "type",
}
_MEMBER_NODES = {
    "member_expression": ("property", "object"),
    "selector_expression": ("field", "operand"),
    "field_expression": ("field", "value"),
    "scoped_identifier": ("name", "path"),
    "method_invocation": ("name", "object"),
}
#: Declarations whose ``name`` field is what they define; those that open a scope come first.
_SCOPE_NODES = frozenset(
    {
        "function_declaration", "generator_function_declaration", "class_declaration",
        "abstract_class_declaration", "interface_declaration", "enum_declaration", "method_definition",
        "method_declaration", "constructor_declaration", "function_item", "impl_item", "trait_item",
        "struct_item", "enum_item", "mod_item", "record_declaration", "internal_module", "module", "class",
    }
)  # fmt: skip
_FUNCTION_NODES = frozenset(
    {
        "function_declaration", "generator_function_declaration", "method_definition", "method_declaration",
        "constructor_declaration", "function_item", "arrow_function", "function_expression",
    }
)  # fmt: skip
_DEF_NODES = _SCOPE_NODES | frozenset(
    {
        "type_alias_declaration", "variable_declarator", "type_item", "const_item", "static_item", "type_spec",
        "const_spec", "var_spec", "public_field_definition", "property_signature", "method_signature",
        "function_signature", "enum_constant", "field_declaration", "macro_definition", "enum_variant",
        "annotation_type_declaration",
    }
)  # fmt: skip


def _treesitter(lang: str, data: bytes) -> Facts:
    from llmem.code.outline.treesitter import parser_for

    facts = Facts(lang)
    root = parser_for(lang).parse(data).root_node
    if root.has_error:
        facts.note = "syntax errors: some words may count as text"
    ids = facts.ids
    # The path from the root: (node type, field name, node); scope names and whether in a function.
    cursor = root.walk()
    path: list[tuple[str, str | None, Any]] = []
    scope_names: list[str | None] = []
    functions = 0
    imports = 0
    while True:
        node = cursor.node
        assert node is not None
        kind, fname = node.type, cursor.field_name
        if node.child_count == 0 and "identifier" in kind:
            place = (node.start_point[0] + 1, node.start_point[1])
            ids[place] = _ts_kind(node, fname, path, functions, imports)
            if ids[place][0] == "call":
                call = _call_node(fname, path)
                if call is not None:
                    facts.calls[place] = (
                        call.start_point[0] + 1, call.start_point[1], call.end_point[0] + 1, call.end_point[1]
                    )  # fmt: skip
            if ids[(node.start_point[0] + 1, node.start_point[1])][0] == "definition":
                parent_type = path[-1][0] if path else ""
                qn = ".".join(n for n in scope_names if n)
                name = node.text.decode("utf-8", "replace") if node.text else ""
                if parent_type in _SCOPE_NODES:  # the scope's own name: its qualified name is the scope's
                    qn = qn.rsplit(".", 1)[0] if "." in qn else ""
                facts.defs.append(
                    (name, node.start_point[0] + 1, node.start_point[1], parent_type, f"{qn}.{name}" if qn else name)
                )
        if kind in ("import_statement", "export_statement") and lang in ("typescript", "tsx", "javascript"):
            _ts_import(node, facts)
        if kind in _ANONYMOUS_NODES:
            facts.anonymous.append(_anonymous(node))
        if _opens_import(node):  # every word of an import, the module's string too, is an import
            facts.import_lines.update(range(node.start_point[0] + 1, node.end_point[0] + 2))
        if cursor.goto_first_child():
            scope = _scope_name(node)
            scope_names.append(scope)
            if scope is not None:
                qn = ".".join(n for n in scope_names if n)
                facts.scopes.append((node.start_point[0] + 1, node.end_point[0] + 1, qn))
            functions += kind in _FUNCTION_NODES
            imports += _opens_import(node)
            path.append((kind, fname, node))
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                facts.scopes.sort()
                return facts
            ptype, _pfield, pnode = path.pop()
            scope_names.pop()
            functions -= ptype in _FUNCTION_NODES
            imports -= _opens_import(pnode)


_ANONYMOUS_NODES = frozenset({"arrow_function", "function_expression", "function", "generator_function", "func_literal", "closure_expression", "lambda_expression"})  # fmt: skip


def _anonymous(node: Any) -> Anonymous:
    """An anonymous function, named by where it stands (see :class:`Anonymous`)."""
    what = "arrow" if node.type == "arrow_function" else "closure" if node.type == "closure_expression" else "function"
    own = node.child_by_field_name("name")
    parent = node.parent
    start, end = (node.start_point[0] + 1, node.start_point[1]), (node.end_point[0] + 1, node.end_point[1])
    if own is not None and own.text:
        return Anonymous(start, end, own.text.decode("utf-8", "replace"), "other", start[0])
    while parent is not None and parent.type in ("parenthesized_expression", "await_expression", "as_expression"):
        parent = parent.parent
    if parent is not None and parent.type in ("arguments", "argument_list"):
        call = parent.parent
        callee = call.child_by_field_name("function") if call is not None else None
        if callee is None and call is not None:
            callee = call.child_by_field_name("name") or call.child_by_field_name("constructor")
        text = (
            " ".join(callee.text.decode("utf-8", "replace").split())[:60]
            if callee is not None and callee.text
            else "a call"
        )
        owner_line = call.start_point[0] + 1 if call is not None else start[0]
        return Anonymous(start, end, f"{what} in {text}", "argument", owner_line)
    if parent is not None and parent.type in (
        "variable_declarator",
        "assignment_expression",
        "pair",
        "public_field_definition",
        "short_var_declaration",
        "let_declaration",
    ):
        target = (
            parent.child_by_field_name("name")
            or parent.child_by_field_name("left")
            or parent.child_by_field_name("key")
            or parent.child_by_field_name("pattern")
        )
        text = target.text.decode("utf-8", "replace")[:60] if target is not None and target.text else ""
        if text and parent.type in ("variable_declarator", "short_var_declaration", "let_declaration"):
            return Anonymous(start, end, text, "value", parent.start_point[0] + 1)
        if text:
            return Anonymous(start, end, f"{what} as {text}", "value", parent.start_point[0] + 1)
    return Anonymous(start, end, f"{what} at line {start[0]}", "other", start[0])


def _opens_import(node: Any) -> bool:
    """An import, or a re-export (``export … from``): every identifier inside is an import."""
    return node.type in _IMPORT_NODES or (
        node.type == "export_statement" and node.child_by_field_name("source") is not None
    )


def _scope_name(node: Any) -> str | None:
    if node.type not in _SCOPE_NODES:
        return None
    name = node.child_by_field_name("name")
    if name is None and node.type == "impl_item":
        name = node.child_by_field_name("type")
    return name.text.decode("utf-8", "replace") if name is not None and name.text else None


def _call_node(fname: str | None, path: list[tuple[str, str | None, Any]]) -> Any:
    """The call an identifier names the callee of (``f`` of ``f(x)``, ``m`` of ``o.m(x)``)."""
    if not path:
        return None
    if fname is not None and _CALL_NODES.get(path[-1][0]) == fname:
        return path[-1][2]
    return path[-2][2] if len(path) > 1 else None


#: Where a name is a parameter's: ``(x: T)``, ``(x?)``, ``x => …``, ``function f(x)`` in JavaScript.
_PARAMETER_PARENTS = frozenset({"required_parameter", "optional_parameter", "formal_parameters"})


def _ts_kind(
    node: Any, fname: str | None, path: list[tuple[str, str | None, Any]], functions: int, imports: int
) -> tuple[str, str]:
    if imports:
        return ("import", "")
    parent_type, parent_field = (path[-1][0], path[-1][1]) if path else ("", None)
    if (parent_type in _PARAMETER_PARENTS and fname in ("pattern", None)) or (
        parent_type == "arrow_function" and fname == "parameter"
    ):
        return ("parameter", "")
    if fname == "name" and parent_type in _DEF_NODES:
        local = parent_type in {"variable_declarator", "var_spec", "const_spec"} and functions
        return ("reference" if local else "definition", "")
    if fname is not None and _CALL_NODES.get(parent_type) == fname:
        qualifier = ""
        if parent_type == "method_invocation":
            obj = path[-1][2].child_by_field_name("object")
            qualifier = obj.text.decode("utf-8", "replace") if obj is not None and obj.text else ""
        return ("call", qualifier)
    member = _MEMBER_NODES.get(parent_type)
    if member is not None and member[0] == fname:
        obj = path[-1][2].child_by_field_name(member[1])
        qualifier = obj.text.decode("utf-8", "replace")[:200] if obj is not None and obj.text else "?"
        grand_type = path[-2][0] if len(path) > 1 else ""
        is_call = parent_field is not None and _CALL_NODES.get(grand_type) == parent_field
        return ("call" if is_call else "reference", qualifier)
    return ("reference", "")


def _string_value(node: Any) -> str:
    text = node.text.decode("utf-8", "replace") if node is not None and node.text else ""
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" else text


def _ts_import(node: Any, facts: Facts) -> None:
    source = node.child_by_field_name("source")
    if source is None:
        return
    imp = Import(node.start_point[0] + 1, _string_value(source), 0, node.end_point[0] + 1)
    for child in node.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    imp.names.append(("default", part.text.decode()))
                elif part.type == "named_imports":
                    imp.names += _specifiers(part, "import_specifier")
                elif part.type == "namespace_import":
                    ident = next((c for c in part.named_children if c.type == "identifier"), None)
                    imp.alias = ident.text.decode() if ident is not None and ident.text else None
        elif child.type == "export_clause":
            imp.names += _specifiers(child, "export_specifier")
        elif child.type == "namespace_export":
            ident = next((c for c in child.named_children if "identifier" in c.type), None)
            imp.alias = ident.text.decode() if ident is not None and ident.text else None
    if node.type == "export_statement" and not imp.names and imp.alias is None:
        imp.star = any(c.type == "*" for c in node.children)
    facts.imports.append(imp)


def _specifiers(clause: Any, kind: str) -> list[tuple[str, str]]:
    out = []
    for spec in clause.named_children:
        if spec.type != kind:
            continue
        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
        if name is not None and name.text:
            out.append((name.text.decode(), (alias or name).text.decode()))
    return out


# -- manifests and Dockerfiles -------------------------------------------------------------------

_ENTRY_TABLES = re.compile(
    r"^\[\s*(project\.scripts|project\.gui-scripts|project\.entry-points\.[^\]]+|tool\.poetry\.scripts)\s*\]"
)
_ENTRY_VALUE = re.compile(r"""=\s*["']([\w.]+)\s*:\s*([\w.]+)""")


def _pyproject(data: bytes) -> Facts:
    facts = Facts("pyproject")
    in_entries = False
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        line = raw.strip()
        if line.startswith("["):
            in_entries = bool(_ENTRY_TABLES.match(line))
            continue
        if in_entries and "=" in line:
            facts.entry_lines.add(n)
            m = _ENTRY_VALUE.search(line)
            if m:
                facts.entry_refs.append((n, m.group(1), m.group(2).split(".")[0]))
    return facts


def _package_json(data: bytes) -> Facts:
    facts = Facts("package-json")
    try:
        doc = json.loads(data)
    except ValueError:
        return facts
    values: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, str):
            values.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)

    if isinstance(doc, dict):
        for key in ("main", "module", "types", "typings", "bin", "exports", "browser"):
            collect(doc.get(key))
    quoted = [f'"{v}"'.encode() for v in values if v]
    for n, line in enumerate(data.split(b"\n"), 1):
        if any(q in line for q in quoted):
            facts.entry_lines.add(n)
    return facts


def _dockerfile(data: bytes) -> Facts:
    facts = Facts("dockerfile")
    continued = False
    for n, raw in enumerate(data.split(b"\n"), 1):
        line = raw.strip()
        if continued or re.match(rb"(?i)(ENTRYPOINT|CMD)\b", line):
            facts.entry_lines.add(n)
            continued = line.endswith(b"\\")
    return facts
