"""What every tree-sitter extractor needs: source slices, rows, and doc comments found in passing.

Extractors walk only the statement lists that can hold declarations (the root, class and module
bodies) child by child; doc comments and decorators are picked up on the way instead of asking
each declaration for its previous siblings.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING

from llmem.code.outline._common import DECORATOR_CAP, SIGNATURE_CAP, cap, clean_comment, one_line
from llmem.code.outline.model import Symbol, SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Member", "Source", "first_row", "last_row", "members"]


def last_row(node: Node) -> int:
    """0-based row of the node's last character (a line comment may end at column 0 of the next)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def first_row(node: Node, skip: Collection[str] = ()) -> int:
    """0-based row where the declaration proper starts, after any decorators/annotations in ``skip``."""
    if skip and node.child_count and node.child(0).type in skip:
        for child in node.children:
            if child.type not in skip:
                return child.start_point.row
    return node.start_point.row


class Source:
    """The UTF-8 bytes a tree was parsed from."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def span(self, start: int, end: int, limit: int = SIGNATURE_CAP) -> str:
        """Bytes ``start:end`` on one line, capped (reading at most a few times ``limit``)."""
        end = min(end, start + 4 * limit)
        text = " ".join(self.data[start:end].decode("utf-8", "replace").split())
        # parameters laid out one per line fold to "( a, b, )": tidy them back to "(a, b)"
        text = text.replace("( ", "(").replace(" )", ")").replace(",)", ")")
        return cap(text, limit)

    def signature(self, start: int, body: Node | None, end: int) -> str:
        """The header of a declaration: from ``start`` to its body (or ``end``), without ``;``/``=``."""
        stop = body.start_byte if body is not None else end
        return self.span(start, stop).rstrip(" ;={")

    def decorator(self, node: Node, strip: str = "@") -> str:
        text = self.text(node).strip().removeprefix(strip)
        if strip == "#[":  # a Rust attribute: #[derive(Debug)]
            text = text.removesuffix("]")
        return one_line(text, DECORATOR_CAP)

    def comments(self, nodes: list[Node]) -> str | None:
        return clean_comment("\n".join(self.text(n).rstrip() for n in nodes)) if nodes else None

    def symbol(
        self,
        kind: SymbolKind,
        name: str,
        prefix: str,
        signature: str,
        start_row: int,
        *,
        node: Node,
        member: Member | None = None,
        children: list[Symbol] | None = None,
    ) -> Symbol:
        # The optional parts are set only when there are some: most symbols (fields, members,
        # leaf functions) have none, and a model left to its defaults is cheaper to build.
        symbol = Symbol(
            kind=kind,
            name=name,
            qualified_name=prefix + name,
            signature=signature,
            start_line=start_row + 1,
            end_line=max(last_row(node), start_row) + 1,
        )
        if member is not None:
            if member.doc is not None:
                symbol.doc = member.doc
            if member.decorators:
                symbol.decorators = member.decorators
        if children:
            symbol.children = children
        return symbol


class Member:
    """One declaration-level child of a body, with the comments and decorators right above it."""

    __slots__ = ("decorators", "doc", "node")

    def __init__(self, node: Node, doc: str | None, decorators: list[str]) -> None:
        self.node = node
        self.doc = doc
        self.decorators = decorators


def members(
    children: list[Node],
    src: Source,
    comment_types: Collection[str],
    decorator_types: Collection[str] = (),
    decorator_prefix: str = "@",
) -> Iterator[Member]:
    """The named children of a body, each with its leading comment block and decorators.

    A comment belongs to the next declaration when nothing but decorators and at most line
    breaks (no blank line) separate them; a comment that starts on the row where the previous
    code ends is that code's trailing comment and is dropped.
    """
    comments: list[Node] = []
    decorators: list[Node] = []
    prev: Node | None = None  # the last code (not comment) node seen
    for child in children:
        ctype = child.type
        if ctype in comment_types:
            start = child.start_point.row
            if not comments and prev is not None and start == last_row(prev):
                continue
            if comments and start > last_row(comments[-1]) + 1:
                comments = []
            comments.append(child)
            continue
        if ctype in decorator_types:
            decorators.append(child)
            continue
        prev = child
        if not child.is_named:
            continue
        doc = None
        if comments:
            top = decorators[0].start_point.row if decorators else child.start_point.row
            if last_row(comments[-1]) >= top - 1:
                doc = src.comments(comments)
            comments = []
        if decorators:
            yield Member(child, doc, [src.decorator(d, decorator_prefix) for d in decorators])
            decorators = []
        else:
            yield Member(child, doc, [])
