"""What a TypeScript or JavaScript receiver ``x`` of ``x.name`` is: the class itself, an instance of a
class or type, another object, or unknown — the TypeScript half of
:mod:`llmem.code.references_receivers`.

Per file (kept on the file while it is unchanged, :func:`ts_types`): the names each scope declares
with their type annotation or what they are set to (``new C()``, a call, a literal, another name),
the declared return type of each named function, the classes (base, implemented types, static
members) and interfaces, and the local name ``export default`` exports. A receiver is followed
through its binding: a local (annotation first, then value), an import (``import X``, ``import {X
as Y}`` into the file it resolves to, one hop at a time), a class of the file, or a global
(``Object``, ``JSON``, ``console`` …). Generic wrappers that keep a type's members
(``Partial<T>``, ``Readonly<T>``, ``Mutable<T>`` …) are seen through; ``T | undefined`` is ``T``.
Nothing here knows about MCP or the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llmem.code.check_treesitter import JS_GLOBALS
from llmem.code.references_imports import ts_resolve
from llmem.code.references_parse import language_of

if TYPE_CHECKING:
    from llmem.code.references_files import SourceFile, WorkspaceFiles

__all__ = ["Binding", "ClassInfo", "Kind", "TsTypes", "TypeWorld", "ts_types"]

#: Generic types whose values have the members of their first type argument.
_WRAPPERS = frozenset({"Partial", "Readonly", "Required", "NonNullable", "Mutable", "Writable", "Pick", "Omit"})
_SCOPES = frozenset(
    {"program", "statement_block", "function_declaration", "function_expression", "arrow_function",
     "method_definition", "generator_function_declaration", "for_statement", "for_in_statement", "class_body"}
)  # fmt: skip
_LITERALS = {
    "object": "an object literal", "array": "an array", "string": "a string", "template_string": "a string",
    "number": "a number", "arrow_function": "a function", "function_expression": "a function", "regex": "a RegExp",
    "true": "a boolean", "false": "a boolean",
}  # fmt: skip
_DEPTH = 6


@dataclass(frozen=True)
class Binding:
    """A name declared in a scope (lines ``scope``): its type annotation's node text and what it is
    set to (``("new", "C")``, ``("call", "f")``, ``("name", "y")``, ``("literal", what)``)."""

    line: int
    scope: tuple[int, int]
    annotation: Any = None  # the type node (kept with the file's tree)
    value: tuple[str, str] | None = None


@dataclass
class ClassInfo:
    line: int
    extends: str | None = None
    implements: list[str] = field(default_factory=list)
    static: set[str] = field(default_factory=set)


@dataclass
class TsTypes:
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    returns: dict[str, Any] = field(default_factory=dict)  # function name → its return type node
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    #: interfaces and type aliases declared at the top level
    types: set[str] = field(default_factory=set)
    default_export: str | None = None
    #: (line, byte column) of ``name`` in ``x.name = …``: an attribute set, not a use
    stored: set[tuple[int, int]] = field(default_factory=set)


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def ts_types(src: WorkspaceFiles, key: str, f: SourceFile) -> TsTypes:
    """The declarations of one TypeScript/JavaScript file that say what its names are (kept on the file)."""
    if f.receivers is None:
        out = TsTypes()
        if f.data is not None:
            try:
                from llmem.code.outline.treesitter import parser_for

                _collect(parser_for(language_of(key)).parse(f.data).root_node, out)
            except Exception:  # a parser that fails leaves every receiver unknown, never the call
                out = TsTypes()
        f.receivers = out
    return f.receivers  # type: ignore[no-any-return]


def _scope_of(node: Any) -> tuple[int, int]:
    up = node.parent
    while up is not None and up.type not in _SCOPES:
        up = up.parent
    if up is None or up.type == "program":
        return (0, 1 << 30)  # the file's top level: what an import of it finds (line 0)
    return (up.start_point[0] + 1, up.end_point[0] + 1)


def _value(node: Any) -> tuple[str, str] | None:
    while node is not None and node.type in ("await_expression", "parenthesized_expression", "non_null_expression"):
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return None
    if node.type == "new_expression":
        ctor = node.child_by_field_name("constructor")
        return ("new", _text(ctor)) if ctor is not None and ctor.type == "identifier" else None
    if node.type == "call_expression":
        func = node.child_by_field_name("function")
        return ("call", _text(func)) if func is not None and func.type == "identifier" else None
    if node.type == "identifier":
        return ("name", _text(node))
    if node.type in _LITERALS:
        return ("literal", _LITERALS[node.type])
    return None


def _collect(root: Any, out: TsTypes) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "variable_declarator":
            name = node.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                typ = node.child_by_field_name("type")
                value = node.child_by_field_name("value")
                out.bindings.setdefault(_text(name), []).append(
                    Binding(name.start_point[0] + 1, _scope_of(node), _type_node(typ), _value(value))
                )
                if value is not None and value.type in ("arrow_function", "function_expression"):
                    ret = _type_node(value.child_by_field_name("return_type"))
                    if ret is not None:
                        out.returns[_text(name)] = ret
        elif kind in ("required_parameter", "optional_parameter"):
            pattern = node.child_by_field_name("pattern")
            if pattern is not None and pattern.type == "identifier":
                func = node.parent.parent if node.parent is not None else None
                scope = (func.start_point[0] + 1, func.end_point[0] + 1) if func is not None else (1, 1 << 30)
                typ = _type_node(node.child_by_field_name("type"))
                value = node.child_by_field_name("value")
                out.bindings.setdefault(_text(pattern), []).append(
                    Binding(pattern.start_point[0] + 1, scope, typ, _value(value) if typ is None else None)
                )
        elif kind in ("assignment_expression", "augmented_assignment_expression"):
            left = node.child_by_field_name("left")
            prop = (
                left.child_by_field_name("property") if left is not None and left.type == "member_expression" else None
            )
            if prop is not None:
                out.stored.add((prop.start_point[0] + 1, prop.start_point[1]))
        elif kind in ("function_declaration", "generator_function_declaration"):
            ret = _type_node(node.child_by_field_name("return_type"))
            if ret is not None:
                out.returns[_text(node.child_by_field_name("name"))] = ret
        elif kind in ("class_declaration", "abstract_class_declaration", "class"):
            _class(node, out)
        elif kind in ("interface_declaration", "type_alias_declaration") and _top(node):
            out.types.add(_text(node.child_by_field_name("name")))
        elif kind == "export_statement" and any(c.type == "default" for c in node.children):
            value = node.child_by_field_name("value") or node.child_by_field_name("declaration")
            if value is not None and value.type == "identifier":
                out.default_export = _text(value)
            elif value is not None and value.child_by_field_name("name") is not None:
                out.default_export = _text(value.child_by_field_name("name"))
        if kind not in ("comment", "string", "template_string", "type_annotation"):
            stack.extend(reversed(node.named_children))


def _top(node: Any) -> bool:
    parent = node.parent
    return parent is not None and (
        parent.type == "program" or (parent.type == "export_statement" and parent.parent.type == "program")
    )


def _type_node(annotation: Any) -> Any:
    if annotation is None:
        return None
    return annotation.named_children[0] if annotation.type == "type_annotation" and annotation.named_children else None


def _class(node: Any, out: TsTypes) -> None:
    name = _text(node.child_by_field_name("name"))
    if not name:
        return
    info = out.classes.setdefault(name, ClassInfo(node.start_point[0] + 1))
    heritage = next((c for c in node.named_children if c.type == "class_heritage"), None)
    for clause in heritage.named_children if heritage is not None else []:
        if clause.type == "extends_clause":
            base = clause.child_by_field_name("value")
            info.extends = _text(base) if base is not None and base.type == "identifier" else None
        elif clause.type == "implements_clause":
            info.implements += [_type_name(t) for t in clause.named_children if _type_name(t)]
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else []:
        if any(c.type == "static" for c in member.children):
            info.static.add(_text(member.child_by_field_name("name")))


def _type_name(node: Any) -> str:
    if node.type == "generic_type":
        return _text(node.child_by_field_name("name"))
    return _text(node) if node.type == "type_identifier" else ""


#: What a name is where it is used: ("class", file, name) — the class itself; ("type", file, name) —
#: an interface or type alias; ("instance", file, name) — a value of that class, interface or type;
#: ("other", why) — something else, known; ("unknown", why).
Kind = tuple[str, ...]


class TypeWorld:
    """Follows names through the TypeScript/JavaScript files of one question."""

    def __init__(self, src: WorkspaceFiles, files: dict[str, SourceFile]) -> None:
        self.src = src
        self.files = files
        self.keys = set(files)

    def types(self, key: str) -> TsTypes | None:
        f = self.files.get(key)
        if f is None or f.data is None or language_of(key) not in ("typescript", "tsx", "javascript"):
            return None
        return ts_types(self.src, key, f)

    def value(self, key: str, name: str, line: int, depth: int = 0) -> Kind:
        """What the value named ``name`` at ``line`` of ``key`` is."""
        t = self.types(key)
        if t is None or depth > _DEPTH:
            return ("unknown", f"{name} is not followed further")
        local = _innermost(t.bindings.get(name, []), line)
        if local is not None:
            return self._binding(key, name, local, depth)
        declared = self._declared(key, t, name, depth)
        if declared is not None:
            return declared
        if name in JS_GLOBALS:
            return ("other", f"{name} is a global ({name})")
        return ("unknown", f"{name} is not bound where it is used")

    def _binding(self, key: str, name: str, b: Binding, depth: int) -> Kind:
        if b.annotation is not None:
            return self.instance_of(key, b.annotation, depth)
        if b.value is None:
            return ("unknown", f"the type of {name} is not known (no type annotation)")
        how, what = b.value
        if how == "new":
            got = self.type_named(key, what, b.line, depth + 1)
            return ("instance", *got[1:]) if got[0] in ("class", "type") else got
        if how == "call":
            t = self.types(key)
            ret = t.returns.get(what) if t is not None else None
            if ret is not None:
                return self.instance_of(key, ret, depth)
            return ("unknown", f"{name} is the result of {what}(), whose type is not declared")
        if how == "name":
            return self.value(key, what, b.line, depth + 1)
        return ("other", f"{name} is {what}")

    def _import(self, key: str, name: str, depth: int) -> Kind | None:
        f = self.files[key]
        for imp in self.src.facts(key, f).imports:
            if imp.alias == name:
                return ("other", f"{name} is the module {imp.module}")
            for imported, local in imp.names:
                if local != name:
                    continue
                target = ts_resolve(key, imp.module, self.keys)
                if target is None:
                    return ("other", f"{name} is imported from {imp.module}, outside the workspace")
                t = self.types(target)
                if t is None:
                    return ("unknown", f"{name} is imported from {target}, which is not read")
                there = t.default_export if imported == "default" else imported
                if there is None:
                    return ("unknown", f"{name} is the default export of {target}, which is not followed")
                return self.value(target, there, 0, depth + 1)
        return None

    def type_named(self, key: str, name: str, line: int, depth: int) -> Kind:
        """What the type (or class) named ``name`` at ``line`` of ``key`` is: ("class"|"instance", file, name) or other."""
        t = self.types(key)
        if t is None or depth > _DEPTH:
            return ("unknown", f"the type {name} is not followed")
        return self._declared(key, t, name, depth) or ("other", f"a {name}")

    def _declared(self, key: str, t: TsTypes, name: str, depth: int) -> Kind | None:
        """``name`` as the file declares or imports it: a class, a type, or what its import is."""
        if name in t.classes:
            return ("class", key, name)
        if name in t.types:
            return ("type", key, name)
        return self._import(key, name, depth)

    def instance_of(self, key: str, node: Any, depth: int) -> Kind:
        """The values a type node stands for."""
        kind = node.type
        if kind in ("parenthesized_type", "readonly_type"):
            return self.instance_of(key, node.named_children[0], depth) if node.named_children else ("unknown", "")
        if kind == "union_type":
            parts = [
                c
                for c in node.named_children
                if not (c.type == "literal_type" and _text(c) in ("undefined", "null"))
                and not (c.type == "predefined_type" and _text(c) in ("undefined", "null", "void"))
            ]
            got = [self.instance_of(key, c, depth) for c in parts]
            if len(got) == 1 or (got and all(g[0] == "other" for g in got)):
                return got[0]
            return ("unknown", f"a value of {_text(node)[:60]}")
        if kind == "generic_type":
            name = _text(node.child_by_field_name("name"))
            args = node.child_by_field_name("type_arguments")
            if name in _WRAPPERS and args is not None and args.named_children:
                return self.instance_of(key, args.named_children[0], depth)
            kind, node = "type_identifier", node.child_by_field_name("name")
        if kind == "type_identifier":
            named = self.type_named(key, _text(node), node.start_point[0] + 1, depth + 1)
            return ("instance", *named[1:]) if named[0] in ("class", "type") else named
        if kind in ("predefined_type", "array_type", "tuple_type", "function_type", "literal_type", "object_type"):
            return ("other", f"a {_text(node)[:40]}")
        return ("unknown", f"a value of {_text(node)[:60]}")

    def class_info(self, key: str, name: str) -> ClassInfo | None:
        t = self.types(key)
        return t.classes.get(name) if t is not None else None


def _innermost(bindings: list[Binding], line: int) -> Binding | None:
    best: Binding | None = None
    for b in bindings:
        if b.scope[0] <= line <= b.scope[1] and (
            best is None or (b.scope[1] - b.scope[0], -b.line) < (best.scope[1] - best.scope[0], -best.line)
        ):
            best = b
    return best
