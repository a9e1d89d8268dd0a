"""Which names of one TypeScript, JavaScript or Go file resolve: the per-file half of ``check_references``.

Parsed with the outline's tree-sitter grammars. What a file binds is collected file-wide, every
scope at once (a name declared anywhere in it counts as bound everywhere in it: lenient on
purpose, so that a shadowing local never reads as broken): declarations, parameters and
destructuring patterns, ``catch`` and loop variables, import bindings. What is judged against
that, and across files by :mod:`llmem.code.check`:

- TypeScript/JavaScript: every name an ``import``/``export … from`` takes from a relative
  specifier (is it exported there?), names a local ``export {x}`` exports, ``ns.x`` of
  ``import * as ns``, ``E.x`` of an enum, class or namespace declared in the file or imported,
  and calls (``f()``, ``new F()``) of names the file does not bind;
- Go: calls of names that no file of the package (the folder) declares, the builtins aside.

Nothing here reads another file, knows about the store or about MCP.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GO_BUILTINS", "JS_GLOBALS", "Container", "TsFile", "TsImport", "treesitter_file"]

#: ECMAScript, Node, browser and test-runner globals: calls of these are not judged broken.
JS_GLOBALS = frozenset(
    (
        "globalThis", "Infinity", "NaN", "undefined", "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
        "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape", "Object",
        "Function", "Boolean", "Symbol", "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError",
        "SyntaxError", "TypeError", "URIError", "Number", "BigInt", "Math", "Date", "String", "RegExp", "Array",
        "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
        "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "Map", "Set", "WeakMap", "WeakSet",
        "WeakRef", "FinalizationRegistry", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics", "JSON", "Promise",
        "Reflect", "Proxy", "Intl", "Iterator", "structuredClone", "queueMicrotask", "setTimeout", "clearTimeout",
        "setInterval", "clearInterval", "setImmediate", "clearImmediate", "console", "require", "module", "exports",
        "process", "Buffer", "__dirname", "__filename", "global", "URL", "URLSearchParams", "TextEncoder",
        "TextDecoder", "AbortController", "AbortSignal", "fetch", "Request", "Response", "Headers", "FormData", "Blob",
        "File", "FileReader", "ReadableStream", "WritableStream", "TransformStream", "EventTarget", "Event",
        "CustomEvent", "MessageChannel", "MessagePort", "BroadcastChannel", "Worker", "performance", "crypto", "atob",
        "btoa", "WebSocket", "navigator", "window", "document", "self", "location", "history", "localStorage",
        "sessionStorage", "alert", "confirm", "prompt", "requestAnimationFrame", "cancelAnimationFrame",
        "requestIdleCallback", "getComputedStyle", "matchMedia", "MutationObserver", "ResizeObserver",
        "IntersectionObserver", "Image", "Audio", "Option", "XMLHttpRequest", "DOMParser", "XMLSerializer",
        "Notification", "postMessage", "addEventListener", "removeEventListener", "dispatchEvent", "open", "close",
        "print", "scrollTo", "scroll", "import", "describe", "it", "test", "expect", "beforeEach", "afterEach",
        "beforeAll", "afterAll", "vi", "jest", "suite", "context", "assert", "fit", "fdescribe", "xit", "xdescribe",
        "Deno", "Bun", "define", "importScripts", "arguments", "globalThis", "queueMicrotask", "reportError",
    )
)  # fmt: skip
#: Go's predeclared functions and types (a conversion ``int(x)`` is a call of a type).
GO_BUILTINS = frozenset(
    (
        "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min", "new",
        "panic", "print", "println", "real", "recover", "bool", "byte", "complex64", "complex128", "error", "float32",
        "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32",
        "uint64", "uintptr", "any", "comparable", "iota", "nil", "true", "false",
    )
)  # fmt: skip
_JS_FAMILY = frozenset({"typescript", "tsx", "javascript"})
#: Nodes whose ``name`` field declares a name.
_NAMED = frozenset(
    {
        "function_declaration", "generator_function_declaration", "function_expression", "class_declaration",
        "class", "abstract_class_declaration", "enum_declaration", "interface_declaration",
        "type_alias_declaration", "internal_module", "module", "function_signature", "type_parameter",
        "import_alias", "function_declaration_go", "type_spec", "type_alias", "const_spec", "var_spec",
        "parameter_declaration", "variadic_parameter_declaration", "type_parameter_declaration", "index_signature",
    }
)  # fmt: skip
#: Fields that hold a pattern of names being bound, per node type.
_PATTERN_FIELDS = {
    "variable_declarator": "name",
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
    "for_in_statement": "left",
    "catch_clause": "parameter",
    "arrow_function": "parameter",
    "short_var_declaration": "left",
    "range_clause": "left",
}
_PATTERNS = frozenset(
    {"object_pattern", "array_pattern", "rest_pattern", "assignment_pattern", "pair_pattern",
     "object_assignment_pattern", "expression_list"}
)  # fmt: skip
_COMMONJS = frozenset({("module", "exports")})
#: Parents under which an identifier is not a use of a bare name.
_NOT_USES = frozenset(
    {"import_specifier", "export_specifier", "namespace_import", "import_clause", "namespace_export",
     "import_require_clause", "labeled_statement", "break_statement", "continue_statement",
     "nested_type_identifier"}
)  # fmt: skip
#: Nodes whose insides hold no name to bind or judge: literals, comments, and types (not judged;
#: a type alias's or an interface's own name is bound at the node itself).
_NOT_ENTERED = frozenset(
    {"comment", "string", "number", "regex", "type_annotation", "type_arguments", "type_parameters",
     "interface_body", "object_type", "type_alias_declaration", "predefined_type", "literal_type",
     "interpreted_string_literal", "raw_string_literal", "int_literal", "float_literal"}
)  # fmt: skip
_JSX_TAGS = frozenset({"jsx_opening_element", "jsx_closing_element", "jsx_self_closing_element"})
_CONTAINERS = {"enum_declaration": "enum", "class_declaration": "class", "abstract_class_declaration": "class"}


@dataclass
class TsImport:
    """A name taken from another file: ``import {name as local} from 'spec'``, ``export {name} from``
    (``reexport``), ``import * as local`` (``name`` ``*``) or a default import (``name`` ``default``)."""

    spec: str
    name: str
    local: str
    line: int
    col: int
    reexport: bool = False


@dataclass
class Container:
    """An enum, a class or a namespace declared in the file, with the names inside it."""

    kind: str
    line: int
    members: set[str] = field(default_factory=set)
    extends: str | None = None
    #: why its members cannot all be known from its body (an index signature ``[key: string]: …``)
    open: str | None = None


@dataclass
class TsFile:
    language: str
    #: how often each name is bound in the file (any scope)
    bound: Counter[str] = field(default_factory=Counter)
    #: names the file exports, the local name of each (``export {a as b}``: b → a; declarations: itself)
    exports: dict[str, str] = field(default_factory=dict)
    #: ``export * from 'spec'``: the specifiers
    star_exports: list[str] = field(default_factory=list)
    #: why its exports cannot all be known (CommonJS ``module.exports``, ``export =``)
    dynamic_exports: str | None = None
    imports: list[TsImport] = field(default_factory=list)
    #: ``export {x}`` without ``from``: (name, line, column)
    local_exports: list[tuple[str, int, int]] = field(default_factory=list)
    #: top-level enums, classes and namespaces by name
    containers: dict[str, Container] = field(default_factory=dict)
    #: calls of a bare name: (name, line, column)
    calls: list[tuple[str, int, int]] = field(default_factory=list)
    #: TypeScript/JavaScript: every bare name used (not declared): (name, line, column, "call"|"reference")
    names: list[tuple[str, int, int, str]] = field(default_factory=list)
    #: where the file declares names: (line, column)
    declared: set[tuple[int, int]] = field(default_factory=set)
    #: ``X.y`` with ``X`` a bare name: (X, y, line, column of y, "call"|"reference")
    members: list[tuple[str, str, int, int, str]] = field(default_factory=list)
    #: Go: the package clause; whether a dot import makes bare names unjudgeable
    package: str = ""
    dot_import: bool = False
    #: whether the file is a module (has an import or export) rather than a script
    is_module: bool = False
    not_checked: Counter[str] = field(default_factory=Counter)
    error: str | None = None


def treesitter_file(language: str, data: bytes) -> TsFile:
    from llmem.code.outline.treesitter import parser_for

    out = TsFile(language)
    root = parser_for(language).parse(data).root_node
    if root.has_error:
        out.error = "syntax errors: names near them may be misread"
    _walk(root, out)
    return out


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _walk(root: Any, out: TsFile) -> None:
    """Visit every node once, without recursion (deep trees), binding and collecting as it goes."""
    stack: list[tuple[Any, int]] = [(root, 0)]  # (node, depth of enclosing top-level statement)
    while stack:
        node, depth = stack.pop()
        _node(node, out, depth)
        if node.type not in _NOT_ENTERED:
            stack.extend((c, depth + 1) for c in reversed(node.named_children))


def _node(node: Any, out: TsFile, depth: int) -> None:
    kind = node.type
    js = out.language in _JS_FAMILY
    if kind in _NAMED:
        for name in node.children_by_field_name("name"):
            if name.type != ",":
                _bind(out, name)
    if kind == "variable_declarator" and js:
        _dynamic_import(node, out)
    pattern_field = _PATTERN_FIELDS.get(kind)
    if pattern_field is not None:
        for target in node.children_by_field_name(pattern_field):
            _bind_pattern(target, out)
    if kind == "assignment_expression" and any(c.type == "using" for c in node.children):
        left = node.child_by_field_name("left")  # ``await using x = …`` declares x
        if left is not None:
            _bind_pattern(left, out)
    if kind == "formal_parameters":  # JavaScript: plain identifiers, defaults, rests
        for child in node.named_children:
            if child.type in ("identifier", *_PATTERNS):
                _bind_pattern(child, out)
    elif kind in ("import_statement", "export_statement") and js:
        out.is_module = True
        _import_or_export(node, out)
    elif kind == "import_spec":  # Go
        name = node.child_by_field_name("name")
        if name is not None and name.type == "dot":
            out.dot_import = True
        elif name is not None:
            _bind(out, name)
    elif kind == "package_clause":
        out.package = _text(next((c for c in node.named_children if c.type == "package_identifier"), None))
    elif kind in ("labeled_statement",) and not js:
        _bind(out, node.child_by_field_name("label"))
    elif kind in ("identifier", "shorthand_property_identifier") and js:
        _name_use(node, out)
    elif kind in ("call_expression", "new_expression"):
        func = node.child_by_field_name("function" if kind == "call_expression" else "constructor")
        if func is not None and func.type == "identifier":
            out.calls.append((_text(func), func.start_point[0] + 1, func.start_point[1]))
    elif kind == "member_expression" and js:
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is not None and prop is not None and obj.type == "identifier":
            parent = node.parent
            called = (
                parent is not None
                and parent.type == "call_expression"
                and parent.child_by_field_name("function") == node
            )
            use = "call" if called else "reference"
            out.members.append((_text(obj), _text(prop), prop.start_point[0] + 1, prop.start_point[1], use))
        if obj is not None and prop is not None and (_text(obj), _text(prop)) in _COMMONJS | {("exports", _text(prop))}:
            out.dynamic_exports = out.dynamic_exports or "CommonJS exports (module.exports)"
    elif kind == "import_require_clause":
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        if ident is not None:
            _bind(out, ident)
    if (
        js
        and depth == 1
        and kind in ("enum_declaration", "class_declaration", "abstract_class_declaration", "internal_module")
    ):
        _container(node, out)
    elif (
        js
        and depth == 2
        and kind in ("enum_declaration", "class_declaration", "abstract_class_declaration", "internal_module")
    ):
        parent = node.parent
        if parent is not None and parent.type in ("export_statement", "ambient_declaration"):
            _container(node, out)
    if js and kind == "method_definition":
        for param in (
            node.child_by_field_name("parameters").named_children if node.child_by_field_name("parameters") else []
        ):
            if param.type == "required_parameter" and any(c.type == "accessibility_modifier" for c in param.children):
                _class_member(node, _text(param.child_by_field_name("pattern")), out)


def _dynamic_import(node: Any, out: TsFile) -> None:
    """``const { a, b: c } = await import('./x.js')`` takes a and b from ./x.js, as an import does;
    ``const m = await import('./x.js')`` binds m to the module, as ``import * as m`` does."""
    value = node.child_by_field_name("value")
    if value is not None and value.type == "await_expression":
        value = next((c for c in value.named_children), None)
    if value is None or value.type != "call_expression":
        return
    func = value.child_by_field_name("function")
    args = value.child_by_field_name("arguments")
    source = args.named_children[0] if args is not None and args.named_children else None
    if func is None or func.type != "import" or source is None or source.type != "string":
        return
    spec = _text(source)[1:-1]
    target = node.child_by_field_name("name")
    if target is None:
        return
    if target.type == "identifier":
        out.imports.append(TsImport(spec, "*", _text(target), target.start_point[0] + 1, target.start_point[1]))
        return
    for part in target.named_children if target.type == "object_pattern" else []:
        key = part if part.type == "shorthand_property_identifier_pattern" else part.child_by_field_name("key")
        if part.type in ("shorthand_property_identifier_pattern", "pair_pattern") and key is not None:
            local = part if part.type == "shorthand_property_identifier_pattern" else part.child_by_field_name("value")
            if local is not None and local.type in ("identifier", "shorthand_property_identifier_pattern"):
                at = (key.start_point[0] + 1, key.start_point[1])
                out.imports.append(TsImport(spec, _text(key), _text(local), at[0], at[1]))


def _bind(out: TsFile, node: Any) -> None:
    """``node`` (an identifier) declares its name here."""
    if node is None:
        return
    out.bound[_text(node)] += 1
    out.declared.add((node.start_point[0] + 1, node.start_point[1]))


def _bind_pattern(node: Any, out: TsFile) -> None:
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        _bind(out, node)
        return
    if node.type == "pair_pattern":
        value = node.child_by_field_name("value")
        if value is not None:
            _bind_pattern(value, out)
        return
    if node.type in ("assignment_pattern", "object_assignment_pattern"):
        left = node.child_by_field_name("left")
        if left is not None:
            _bind_pattern(left, out)
        return
    for child in node.named_children:
        if child.type in ("identifier", "shorthand_property_identifier_pattern", *_PATTERNS):
            _bind_pattern(child, out)


def _name_use(node: Any, out: TsFile) -> None:
    """A bare name used here, unless it is declared here, named by an import or export clause, or
    an intrinsic JSX tag (``<div>``)."""
    at = (node.start_point[0] + 1, node.start_point[1])
    parent = node.parent
    if at in out.declared or parent is None or parent.type in _NOT_USES:
        return
    name = _text(node)
    if parent.type in _JSX_TAGS and name[:1].islower():
        return
    called = parent.type in ("call_expression", "new_expression") and node in (
        parent.child_by_field_name("function"),
        parent.child_by_field_name("constructor"),
    )
    out.names.append((name, at[0], at[1], "call" if called else "reference"))


def _container(node: Any, out: TsFile) -> None:
    name = _text(node.child_by_field_name("name"))
    if not name:
        return
    kind = _CONTAINERS.get(node.type, "namespace")
    box = out.containers.setdefault(name, Container(kind, node.start_point[0] + 1))
    body = node.child_by_field_name("body")
    if body is None:
        return
    if kind == "enum":
        for child in body.named_children:
            target = child.child_by_field_name("name") if child.type == "enum_assignment" else child
            text = _text(target)
            box.members.add(text[1:-1] if text[:1] in "'\"" else text)
    elif kind == "class":
        heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
        extends = next((c for c in heritage.named_children if c.type == "extends_clause"), None) if heritage else None
        if extends is not None:
            box.extends = _text(extends.child_by_field_name("value")) or "?"
        for child in body.named_children:
            name_node = child.child_by_field_name("name")
            if name_node is not None:
                box.members.add(_text(name_node))
            elif child.type == "index_signature":
                box.open = "a class with an index signature"
    else:
        for child in body.named_children:
            if child.type == "export_statement":
                for decl in child.named_children:
                    box.members |= _declared_names(decl)


def _class_member(method: Any, name: str, out: TsFile) -> None:
    cls = method.parent.parent if method.parent is not None else None
    if cls is not None and cls.type in ("class_declaration", "abstract_class_declaration"):
        box = out.containers.get(_text(cls.child_by_field_name("name")))
        if box is not None:
            box.members.add(name)


def _declared_names(decl: Any) -> set[str]:
    """The names a declaration binds: a function's, a class's, each declarator's."""
    if decl.type in ("lexical_declaration", "variable_declaration"):
        names: set[str] = set()
        for d in decl.named_children:
            if d.type == "variable_declarator":
                probe = TsFile("typescript")
                _bind_pattern(d.child_by_field_name("name"), probe)
                names |= set(probe.bound)
        return names
    name = decl.child_by_field_name("name")
    return {_text(name)} if name is not None else set()


def _import_or_export(node: Any, out: TsFile) -> None:
    source = node.child_by_field_name("source")
    spec = _text(source)[1:-1] if source is not None else None
    line = node.start_point[0] + 1
    if node.type == "import_statement":
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        for part in clause.named_children if clause is not None else []:
            if part.type == "identifier":
                _bind(out, part)
                if spec is not None:
                    out.imports.append(TsImport(spec, "default", _text(part), line, part.start_point[1]))
            elif part.type == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), None)
                if ident is not None:
                    _bind(out, ident)
                    if spec is not None:
                        out.imports.append(TsImport(spec, "*", _text(ident), line, ident.start_point[1]))
            elif part.type == "named_imports":
                for s in part.named_children:
                    if s.type != "import_specifier":
                        continue
                    name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
                    local = alias or name
                    _bind(out, local)
                    if spec is not None and name is not None:
                        out.imports.append(
                            TsImport(spec, _text(name), _text(local), name.start_point[0] + 1, name.start_point[1])
                        )
        return
    # export_statement
    declaration = node.child_by_field_name("declaration")
    if any(c.type == "default" for c in node.children):
        out.exports["default"] = "default"
    elif declaration is not None:
        for name in _declared_names(declaration):
            out.exports[name] = name
    if any(c.type == "=" for c in node.children):
        out.dynamic_exports = out.dynamic_exports or "export ="
    clause = next((c for c in node.named_children if c.type == "export_clause"), None)
    for s in clause.named_children if clause is not None else []:
        if s.type != "export_specifier":
            continue
        name, alias = s.child_by_field_name("name"), s.child_by_field_name("alias")
        if name is None:
            continue
        exported = _text(alias or name)
        out.exports[exported] = _text(name)
        at = (name.start_point[0] + 1, name.start_point[1])
        if spec is not None:
            out.imports.append(TsImport(spec, _text(name), exported, at[0], at[1], reexport=True))
        else:
            out.local_exports.append((_text(name), at[0], at[1]))
    star_as = next((c for c in node.named_children if c.type == "namespace_export"), None)
    if star_as is not None and spec is not None:
        ident = next((c for c in star_as.named_children if "identifier" in c.type), None)
        if ident is not None:
            out.exports[_text(ident)] = "*"
    elif spec is not None and clause is None and any(c.type == "*" for c in node.children):
        out.star_exports.append(spec)
    del line
