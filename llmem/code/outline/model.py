"""The outline of one source file: what a parser found in it, as plain data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["ImportRef", "Outline", "OutlineMode", "Symbol", "SymbolKind"]

SymbolKind = Literal[
    "class",
    "function",
    "method",
    "interface",
    "type",
    "enum",
    "constant",
    "struct",
    "trait",
    "impl",
    "module",
    "test",
    "registration",
    "heading",
    "package",
    "script",
    "entry-point",
    "dependency",
]
OutlineMode = Literal["full", "fallback"]


class ImportRef(BaseModel):
    """One import statement: the module it names and the names it takes from it (may be empty)."""

    module: str
    names: list[str] = Field(default_factory=list)
    line: int


class Symbol(BaseModel):
    """A declaration; lines are 1-based and inclusive, ``qualified_name`` dot-joins its parents."""

    kind: SymbolKind
    name: str
    qualified_name: str
    signature: str
    start_line: int
    end_line: int
    doc: str | None = None
    decorators: list[str] = Field(default_factory=list)
    children: list[Symbol] = Field(default_factory=list)
    #: 16 hex digits over the symbol's code lines, blank and comment-only lines left out: a
    #: comment edited above or inside it changes nothing, any code change does.
    hash: str | None = None


class Outline(BaseModel):
    """Everything the parser says about one file, or, in ``fallback`` mode, why it could not."""

    path: str
    language: str | None
    mode: OutlineMode
    reason: str | None = None
    line_count: int
    size: int
    sha256: str
    imports: list[ImportRef] = Field(default_factory=list)
    symbols: list[Symbol] = Field(default_factory=list)
