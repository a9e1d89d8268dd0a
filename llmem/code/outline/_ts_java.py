"""Java outlines from a tree-sitter tree: types, nested types, methods and constructors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmem.code.outline._common import SIGNATURE_CAP, VALUE_CAP, cap, drop_shadowed, one_line
from llmem.code.outline._ts_common import Member, Source, members
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["extract"]

_COMMENTS = frozenset({"line_comment", "block_comment"})
_ANNOTATIONS = frozenset({"annotation", "marker_annotation"})
_TYPES: dict[str, SymbolKind] = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
}
_METHODS = frozenset(
    {
        "method_declaration",
        "constructor_declaration",
        "compact_constructor_declaration",
        "annotation_type_element_declaration",
    }
)


class _Extractor:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.imports: list[ImportRef] = []

    def members(self, children: list[Node], prefix: str) -> list[Symbol]:
        out: list[Symbol] = []
        for member in members(children, self.src, _COMMENTS):
            self.declaration(member, member.node, prefix, out)
        return drop_shadowed(out)

    def declaration(self, member: Member, node: Node, prefix: str, out: list[Symbol]) -> None:
        t = node.type
        if t in _TYPES:
            out.append(self.type_(member, node, prefix, _TYPES[t]))
        elif t in _METHODS:
            out.append(self.method(member, node, prefix))
        elif t in ("field_declaration", "constant_declaration"):
            self.fields(member, node, prefix, out)
        elif t == "enum_constant":
            name = _name(self.src, node)
            body = node.child_by_field_name("body")  # B("x") { … }: the constant's own class body
            sig = self.src.signature(node.start_byte, body, node.end_byte)
            member = Member(node, member.doc, member.decorators)
            out.append(
                self.src.symbol("enum_member", name, prefix, sig, node.start_point.row, node=node, member=member)
            )
        elif t == "enum_body_declarations":
            out += self.members(node.children, prefix)
        elif t == "import_declaration":
            self.import_(node)
        elif t == "ERROR":
            out += self.members(node.children, prefix)

    def header(self, node: Node, body: Node | None) -> tuple[str, int, list[str]]:
        """Signature without annotations, its first row, and the annotations as decorators."""
        src = self.src
        decorators: list[str] = []
        words: list[str] = []
        start_row = -1
        rest_start = node.start_byte
        for child in node.children:
            if child.type == "modifiers":
                for mod in child.children:
                    if mod.type in _ANNOTATIONS:
                        decorators.append(src.decorator(mod))
                    else:
                        words.append(src.text(mod))
                        if start_row < 0:
                            start_row = mod.start_point.row
                rest_start = child.end_byte
                continue
            if start_row < 0:
                start_row = child.start_point.row
            break
        rest = src.signature(rest_start, body, node.end_byte)
        sig = one_line(" ".join([*words, rest]), SIGNATURE_CAP)
        return sig, max(start_row, node.start_point.row), decorators

    def type_(self, member: Member, node: Node, prefix: str, kind: SymbolKind) -> Symbol:
        name = _name(self.src, node)
        body = node.child_by_field_name("body")
        sig, start_row, decorators = self.header(node, body)
        children = self.members(body.children, prefix + name + ".") if body is not None else []
        member = Member(node, member.doc, member.decorators + decorators)
        return self.src.symbol(kind, name, prefix, sig, start_row, node=node, member=member, children=children)

    def fields(self, member: Member, node: Node, prefix: str, out: list[Symbol]) -> None:
        """``private int x = 1, y;``: one ``field`` per declarator, its value cut short."""
        src = self.src
        type_node = node.child_by_field_name("type")
        if type_node is None:
            return
        head, start_row, decorators = self.header(node, type_node)
        member = Member(node, member.doc, member.decorators + decorators)
        kind: SymbolKind = "field"
        for declarator in node.children_by_field_name("declarator"):
            name = _name(src, declarator)
            value = declarator.child_by_field_name("value")
            text = src.span(declarator.start_byte, value.start_byte if value is not None else declarator.end_byte)
            if value is not None:
                text = text.rstrip(" =") + " = " + cap(src.span(value.start_byte, value.end_byte, VALUE_CAP), VALUE_CAP)
            sig = one_line(f"{head} {src.text(type_node)} {text}".strip(), SIGNATURE_CAP)
            out.append(src.symbol(kind, name, prefix, sig, start_row, node=node, member=member))

    def method(self, member: Member, node: Node, prefix: str) -> Symbol:
        body = node.child_by_field_name("body")
        sig, start_row, decorators = self.header(node, body)
        member = Member(node, member.doc, member.decorators + decorators)
        return self.src.symbol("method", _name(self.src, node), prefix, sig, start_row, node=node, member=member)

    def import_(self, node: Node) -> None:
        text = one_line(self.src.text(node)).removeprefix("import").removesuffix(";").strip()
        text = text.removeprefix("static ").strip().replace(" ", "")
        module, _, name = text.rpartition(".")
        ref = ImportRef(module=module, names=[name], line=node.start_point.row + 1)
        if not module:
            ref = ImportRef(module=name, names=[], line=node.start_point.row + 1)
        self.imports.append(ref)


def _name(src: Source, node: Node) -> str:
    name = node.child_by_field_name("name")
    return src.text(name) if name is not None else ""


def extract(root: Node, src: Source) -> tuple[list[ImportRef], list[Symbol]]:
    extractor = _Extractor(src)
    symbols = extractor.members(root.children, "")
    return extractor.imports, symbols
