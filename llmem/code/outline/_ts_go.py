"""Go outlines from a tree-sitter tree; methods are attached to their receiver's type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmem.code.outline._ts_common import Member, Source, members
from llmem.code.outline.model import ImportRef, Symbol, SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["extract"]

_COMMENTS = frozenset({"comment"})
_TYPE_KINDS: dict[str, SymbolKind] = {"struct_type": "struct", "interface_type": "interface"}


def _receiver_type(src: Source, receiver: Node | None) -> str:
    """``(s *Server)`` → ``Server``; ``(l *List[T])`` → ``List``."""
    if receiver is None:
        return ""
    for param in receiver.named_children:
        node = param.child_by_field_name("type")
        while node is not None:
            if node.type == "type_identifier":
                return src.text(node)
            if node.type == "pointer_type":
                node = node.named_children[0] if node.named_child_count else None
            elif node.type == "generic_type":
                node = node.child_by_field_name("type")
            else:
                return src.text(node)
    return ""


class _Extractor:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.imports: list[ImportRef] = []
        self.types: dict[str, Symbol] = {}

    def run(self, root: Node) -> list[Symbol]:
        items: list[tuple[Symbol, str]] = []
        for member in members(root.children, self.src, _COMMENTS):
            self.declaration(member, member.node, items)
        out: list[Symbol] = []
        for symbol, receiver in items:
            owner = self.types.get(receiver) if receiver else None
            if owner is not None:
                owner.children.append(symbol)
            else:
                out.append(symbol)
        return out

    def declaration(self, member: Member, node: Node, items: list[tuple[Symbol, str]]) -> None:
        t = node.type
        src = self.src
        if t == "import_declaration":
            for spec in _specs(node, "import_spec", "import_spec_list"):
                path = spec.child_by_field_name("path")
                if path is not None:
                    module = src.text(path).strip('"`')
                    self.imports.append(ImportRef(module=module, names=[], line=spec.start_point.row + 1))
        elif t == "function_declaration":
            sig = src.signature(node.start_byte, node.child_by_field_name("body"), node.end_byte)
            name = _name(src, node)
            items.append((src.symbol("function", name, "", sig, node.start_point.row, node=node, member=member), ""))
        elif t == "method_declaration":
            receiver = _receiver_type(src, node.child_by_field_name("receiver"))
            sig = src.signature(node.start_byte, node.child_by_field_name("body"), node.end_byte)
            prefix = receiver + "." if receiver else ""
            symbol = src.symbol("method", _name(src, node), prefix, sig, node.start_point.row, node=node, member=member)
            items.append((symbol, receiver))
        elif t == "type_declaration":
            for spec_member in self._grouped(member, node, ("type_spec", "type_alias")):
                symbol = self.type_spec(spec_member)
                self.types.setdefault(symbol.name, symbol)
                items.append((symbol, ""))
        elif t in ("const_declaration", "var_declaration"):
            keyword = "const" if t == "const_declaration" else "var"
            for spec_member in self._grouped(member, node, ("const_spec", "var_spec")):
                spec = spec_member.node
                sig = keyword + " " + src.span(spec.start_byte, spec.end_byte)
                for name_node in spec.children_by_field_name("name"):
                    name = src.text(name_node)
                    symbol = src.symbol("constant", name, "", sig, spec.start_point.row, node=spec, member=spec_member)
                    items.append((symbol, ""))
        elif t == "ERROR":
            for child in members(node.children, src, _COMMENTS):
                self.declaration(child, child.node, items)

    def _grouped(self, member: Member, node: Node, spec_types: tuple[str, ...]) -> list[Member]:
        """The specs of ``type``/``const``/``var``; a lone spec takes the doc above the keyword."""
        lists = [c for c in node.named_children if c.type.endswith("_list")]
        if lists:  # var ( ... ) parses to a var_spec_list
            children = [c for group in lists for c in group.children]
        elif any(c.type == "(" for c in node.children):
            children = node.children
        else:
            return [Member(c, member.doc, []) for c in node.named_children if c.type in spec_types]
        return [m for m in members(children, self.src, _COMMENTS) if m.node.type in spec_types]

    def type_spec(self, member: Member) -> Symbol:
        spec = member.node
        src = self.src
        name = _name(src, spec)
        type_node = spec.child_by_field_name("type")
        kind: SymbolKind = _TYPE_KINDS.get(type_node.type, "type") if type_node is not None else "type"
        if spec.type == "type_alias":
            kind = "type"
        children: list[Symbol] = []
        if kind in ("struct", "interface") and type_node is not None:
            sig = "type " + src.span(spec.start_byte, type_node.start_byte) + " " + type_node.type[:-5]
            if kind == "struct":
                children = self.fields(type_node, name + ".")
            if kind == "interface":
                for m in members(type_node.children, src, _COMMENTS):
                    if m.node.type in ("method_elem", "method_spec"):
                        msig = src.span(m.node.start_byte, m.node.end_byte)
                        children.append(
                            src.symbol(
                                "method",
                                _name(src, m.node),
                                name + ".",
                                msig,
                                m.node.start_point.row,
                                node=m.node,
                                member=m,
                            )
                        )
        else:
            sig = "type " + src.span(spec.start_byte, spec.end_byte)
        return src.symbol(kind, name, "", sig, spec.start_point.row, node=spec, member=member, children=children)

    def fields(self, struct: Node, prefix: str) -> list[Symbol]:
        """A struct's fields, ``A, B int `json:"a"```, one symbol per name; an embedded type is
        named by its type (``*pkg.Reader`` → ``Reader``)."""
        src = self.src
        body = next((c for c in struct.named_children if c.type == "field_declaration_list"), None)
        out: list[Symbol] = []
        if body is None:
            return out
        for m in members(body.children, src, _COMMENTS):
            field = m.node
            if field.type != "field_declaration":
                continue
            sig = src.span(field.start_byte, field.end_byte)
            names = [src.text(n) for n in field.children_by_field_name("name")]
            if not names:
                type_node = field.child_by_field_name("type")
                names = [src.text(type_node).rsplit(".", 1)[-1].lstrip("*")] if type_node is not None else []
            for name in names:
                out.append(src.symbol("field", name, prefix, sig, field.start_point.row, node=field, member=m))
        return out


def _name(src: Source, node: Node) -> str:
    name = node.child_by_field_name("name")
    return src.text(name) if name is not None else ""


def _specs(node: Node, spec_type: str, list_type: str) -> list[Node]:
    out: list[Node] = []
    for child in node.named_children:
        if child.type == spec_type:
            out.append(child)
        elif child.type == list_type:
            out += [c for c in child.named_children if c.type == spec_type]
    return out


def extract(root: Node, src: Source) -> tuple[list[ImportRef], list[Symbol]]:
    extractor = _Extractor(src)
    symbols = extractor.run(root)
    return extractor.imports, symbols
