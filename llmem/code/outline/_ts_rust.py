"""Rust outlines from a tree-sitter tree: items, impl blocks with their methods, nested modules."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from llmem.code.outline._common import one_line
from llmem.code.outline._ts_common import Member, Source, members
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["extract"]

_COMMENTS = frozenset({"line_comment", "block_comment"})
_ATTRIBUTES = frozenset({"attribute_item"})
_KINDS: dict[str, SymbolKind] = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "type_item": "type",
    "const_item": "constant",
    "static_item": "constant",
}
_WHOLE = frozenset({"type_item", "const_item", "static_item"})
#: Bodies whose items are outlined as children: ``struct P { x: i32 }``, ``enum E { A, B(i32) }``
#: (a tuple struct's ``(i32, u8)`` has no names to give).
_MEMBER_LISTS = frozenset({"field_declaration_list", "enum_variant_list"})
_MEMBERS: dict[str, SymbolKind] = {"field_declaration": "field", "enum_variant": "enum_member"}
_FUNCTIONS = frozenset({"function_item", "function_signature_item"})
_IDENT = re.compile(r"'?[A-Za-z_][A-Za-z0-9_]*")
_NOT_TYPE = frozenset({"mut", "dyn", "const", "impl"})


def _base_type(text: str) -> str:
    """The bare name of an impl's self type: ``&'a mut fmt::Foo<T>`` → ``Foo``."""
    head = text.split("<", 1)[0]
    names = [m for m in _IDENT.findall(head) if not m.startswith("'") and m not in _NOT_TYPE]
    return names[-1] if names else one_line(text)


class _Extractor:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.imports: list[ImportRef] = []

    def items(self, children: list[Node], prefix: str, kind: SymbolKind = "function") -> list[Symbol]:
        out: list[Symbol] = []
        for member in members(children, self.src, _COMMENTS, _ATTRIBUTES, "#["):
            self.item(member, member.node, prefix, out, kind)
        return out

    def item(self, member: Member, node: Node, prefix: str, out: list[Symbol], fn_kind: SymbolKind) -> None:
        t = node.type
        src = self.src
        if t in _FUNCTIONS:
            sig = src.signature(node.start_byte, node.child_by_field_name("body"), node.end_byte)
            out.append(
                src.symbol(fn_kind, _name(src, node), prefix, sig, node.start_point.row, node=node, member=member)
            )
        elif t in _KINDS:
            body = None if t in _WHOLE else node.child_by_field_name("body")
            sig = src.signature(node.start_byte, body, node.end_byte)
            kind = _KINDS[t]
            name = _name(src, node)
            symbol = src.symbol(kind, name, prefix, sig, node.start_point.row, node=node, member=member)
            if body is not None and body.type in _MEMBER_LISTS:
                symbol.children = self.members(body, prefix + name + ".")
            out.append(symbol)
        elif t == "trait_item":
            name = _name(src, node)
            body = node.child_by_field_name("body")
            children = self.items(body.children, prefix + name + ".", "method") if body is not None else []
            sig = src.signature(node.start_byte, body, node.end_byte)
            out.append(
                src.symbol(
                    "trait",
                    name,
                    prefix,
                    sig,
                    node.start_point.row,
                    node=node,
                    member=member,
                    children=children,
                )
            )
        elif t == "impl_item":
            out.append(self.impl(member, node, prefix))
        elif t == "mod_item":
            name = _name(src, node)
            body = node.child_by_field_name("body")
            children = self.items(body.children, prefix + name + ".") if body is not None else []
            sig = src.signature(node.start_byte, body, node.end_byte)
            out.append(
                src.symbol(
                    "module",
                    name,
                    prefix,
                    sig,
                    node.start_point.row,
                    node=node,
                    member=member,
                    children=children,
                )
            )
        elif t == "use_declaration":
            argument = node.child_by_field_name("argument")
            if argument is not None:
                self.use(argument, "", node.start_point.row + 1)
        elif t == "extern_crate_declaration":
            self.imports.append(ImportRef(module=_name(src, node), names=[], line=node.start_point.row + 1))
        elif t == "ERROR":
            for child in members(node.children, src, _COMMENTS, _ATTRIBUTES, "#["):
                self.item(child, child.node, prefix, out, fn_kind)

    def members(self, body: Node, prefix: str) -> list[Symbol]:
        """A struct's named fields (``field``) or an enum's variants (``enum_member``)."""
        src = self.src
        out: list[Symbol] = []
        for m in members(body.children, src, _COMMENTS, _ATTRIBUTES, "#["):
            item = m.node
            kind = _MEMBERS.get(item.type)
            if kind is not None:
                sig = src.span(item.start_byte, item.end_byte).rstrip(" ,")
                out.append(src.symbol(kind, _name(src, item), prefix, sig, item.start_point.row, node=item, member=m))
        return out

    def impl(self, member: Member, node: Node, prefix: str) -> Symbol:
        src = self.src
        trait = node.child_by_field_name("trait")
        self_type = node.child_by_field_name("type")
        type_text = one_line(src.text(self_type)) if self_type is not None else "?"
        name = "impl " + (one_line(src.text(trait)) + " for " if trait is not None else "") + type_text
        body = node.child_by_field_name("body")
        owner = prefix + _base_type(type_text) + "."
        children = self.items(body.children, owner, "method") if body is not None else []
        sig = src.signature(node.start_byte, body, node.end_byte)
        return src.symbol("impl", name, prefix, sig, node.start_point.row, node=node, member=member, children=children)

    def use(self, node: Node, base: str, line: int) -> None:
        """Flatten a ``use`` tree into one import per module path: ``a::{b::{C, D}, E}``."""
        src = self.src

        def join(path: str) -> str:
            return base + "::" + path if base else path

        t = node.type
        if t == "scoped_use_list":
            path = node.child_by_field_name("path")
            inner = join(src.text(path)) if path is not None else base
            use_list = node.child_by_field_name("list")
            if use_list is not None:
                self.use(use_list, inner, line)
        elif t == "use_list":
            items = [c for c in node.named_children if c.type not in _COMMENTS]
            plain = ("identifier", "self", "crate", "super")
            names = [src.text(c) for c in items if c.type in plain]
            if names:
                self.imports.append(ImportRef(module=base, names=names, line=line))
            for child in items:
                if child.type not in plain:
                    self.use(child, base, line)
        elif t == "use_as_clause":
            path = node.child_by_field_name("path")
            if path is not None:
                self.use(path, base, line)
        elif t == "use_wildcard":
            prefix = src.text(node).removesuffix("*").removesuffix("::")
            self.imports.append(ImportRef(module=join(prefix) if prefix else base, names=["*"], line=line))
        else:  # a plain path: std::fmt, crate::a::B, serde
            module, _, name = join(src.text(node)).rpartition("::")
            if module:
                self.imports.append(ImportRef(module=module, names=[name], line=line))
            else:
                self.imports.append(ImportRef(module=name, names=[], line=line))


def _name(src: Source, node: Node) -> str:
    name = node.child_by_field_name("name")
    return src.text(name) if name is not None else ""


def extract(root: Node, src: Source) -> tuple[list[ImportRef], list[Symbol]]:
    extractor = _Extractor(src)
    symbols = extractor.items(root.children, "")
    return extractor.imports, symbols
