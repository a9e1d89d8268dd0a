"""Outlines for TypeScript, TSX, JavaScript, Go, Rust and Java through py-tree-sitter.

Only :mod:`llmem.code.outline` imports this module, and only when it first meets such a file; each
grammar wheel is imported the first time a file of its language is outlined. Parsers are not
safe to share between threads, so each thread keeps its own per language.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from tree_sitter import Language, Node, Parser

from llmem.code.outline import _ts_go, _ts_java, _ts_javascript, _ts_rust
from llmem.code.outline._common import OutlineFailure
from llmem.code.outline._ts_common import Source
from llmem.code.outline.model import ImportRef, Symbol

__all__ = ["LANGUAGES", "outline_treesitter", "parser_for"]

Extractor = Callable[[Node, Source], tuple[list[ImportRef], list[Symbol]]]

#: language → (grammar module, function returning the grammar, extractor)
LANGUAGES: dict[str, tuple[str, str, Extractor]] = {
    "typescript": ("tree_sitter_typescript", "language_typescript", _ts_javascript.extract),
    "tsx": ("tree_sitter_typescript", "language_tsx", _ts_javascript.extract),
    "javascript": ("tree_sitter_javascript", "language", _ts_javascript.extract),
    "go": ("tree_sitter_go", "language", _ts_go.extract),
    "rust": ("tree_sitter_rust", "language", _ts_rust.extract),
    "java": ("tree_sitter_java", "language", _ts_java.extract),
}

_languages: dict[str, Language] = {}
_languages_lock = threading.Lock()
_local = threading.local()


def _language(name: str) -> Language:
    language = _languages.get(name)
    if language is None:
        with _languages_lock:
            language = _languages.get(name)
            if language is None:
                module_name, function, _ = LANGUAGES[name]
                module = importlib.import_module(module_name)
                language = Language(getattr(module, function)())
                _languages[name] = language
    return language


def parser_for(name: str) -> Parser:
    """This thread's parser for ``name`` (a key of :data:`LANGUAGES`), made on first use."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(name)
    if parser is None:
        parser = parsers[name] = Parser(_language(name))
    return parser


def _first_error_line(node: Node) -> int:
    while not (node.is_error or node.is_missing):
        child = next((c for c in node.children if c.has_error or c.is_missing), None)
        if child is None:
            break
        node = child
    return node.start_point.row + 1


def outline_treesitter(language: str, data: bytes) -> tuple[list[ImportRef], list[Symbol], str | None]:
    """Imports, symbols and a note on syntax errors; raises :class:`OutlineFailure` if unreadable.

    Syntax errors do not fail: tree-sitter recovers, and whatever declarations it still
    recognises are returned, with a note saying where the first error is.
    """
    if language not in LANGUAGES:
        raise OutlineFailure(f"unsupported language {language}")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OutlineFailure(f"undecodable: not valid UTF-8 at byte {exc.start}") from None
    root = parser_for(language).parse(data).root_node
    imports, symbols = LANGUAGES[language][2](root, Source(data))
    note = None
    if root.has_error:
        note = f"syntax errors (the first near line {_first_error_line(root)}); the outline may be incomplete"
    return imports, symbols, note
