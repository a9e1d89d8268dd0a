"""The outline of one source file: what a parser found in it, as plain data."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["DATA_KINDS", "ImportRef", "Outline", "OutlineMode", "Symbol", "SymbolKind"]

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
    # Data members (third round): listed under their class/enum/struct (or at module level) for
    # context; see DATA_KINDS.
    "field",
    "attribute",
    "enum_member",
    "variable",
]
#: The kinds that describe data rather than behaviour: a class's fields (annotated or declared by
#: a field call) and attributes, an enum's members, a module's variables. They are outlined,
#: hashed and searchable like any symbol, but notes are asked per class/function, not per field:
#: annotate prompts leave them out of the names to describe (their class's note covers them).
#: Module constants keep their older kind ``constant`` and are described as before.
DATA_KINDS: frozenset[str] = frozenset({"field", "attribute", "enum_member", "variable"})
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
