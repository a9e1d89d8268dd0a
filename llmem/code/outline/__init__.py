"""Code outlines: the symbols, line ranges and imports of a source file, made by a parser.

Python goes through the standard library's ``ast``; TypeScript, TSX, JavaScript, Go, Rust and
Java through tree-sitter, whose grammars are imported only when a file of their language is
first outlined. Nothing here knows about MCP.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator
from posixpath import splitext

from llmem.code.outline._common import OutlineFailure, count_lines
from llmem.code.outline.hashes import code_lines, fill_hashes, hashes_of_symbol_dicts, hashes_of_symbols
from llmem.code.outline.model import DATA_KINDS, ImportRef, Outline, OutlineMode, Symbol, SymbolKind

__all__ = [
    "DATA_KINDS",
    "ImportRef",
    "Outline",
    "OutlineMode",
    "Symbol",
    "SymbolKind",
    "build_outline",
    "detect_language",
    "enclosing_symbol",
    "hashes_of_symbol_dicts",
    "is_test_path",
    "iter_symbols",
    "supported_languages",
    "symbol_hashes",
]

_EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
_LANGUAGES = [
    "python",
    "typescript",
    "tsx",
    "javascript",
    "go",
    "rust",
    "java",
    "markdown",
    "package-json",
    "pyproject",
    "cargo",
    "go-mod",
]
_MANIFESTS = frozenset({"package-json", "pyproject", "cargo", "go-mod"})


_FILE_NAMES = {
    "package.json": "package-json",
    "pyproject.toml": "pyproject",
    "cargo.toml": "cargo",
    "go.mod": "go-mod",
}
_DOC_EXTENSIONS = {".md": "markdown", ".markdown": "markdown"}


def detect_language(path: str) -> str | None:
    """The language of a file, judged by its name (manifests) or extension (case-insensitive), or ``None``."""
    start = max(path.rfind("/"), path.rfind("\\")) + 1
    by_name = _FILE_NAMES.get(path[start:].lower())
    if by_name is not None:
        return by_name
    dot = path.rfind(".")
    if dot <= start or not path[start:dot].strip("."):  # as os.path.splitext: ".py" has no extension
        return None
    ext = path[dot:].lower()
    return _EXTENSIONS.get(ext) or _DOC_EXTENSIONS.get(ext)


def supported_languages() -> list[str]:
    return list(_LANGUAGES)


def build_outline(rel_path: str, data: bytes) -> Outline:
    """The outline of ``data`` (the bytes of ``rel_path``). Never raises for bad source.

    An unknown language, undecodable bytes or a failing parser give ``mode="fallback"`` with
    the line count and the reason; Python syntax errors too. Tree-sitter languages recover from
    syntax errors and keep ``mode="full"`` with whatever declarations they still recognise, and
    a ``reason`` that says where the first error is.
    """
    language = detect_language(rel_path)
    size = len(data)
    digest = hashlib.sha256(data).hexdigest()
    lines = count_lines(data)
    if language is None:
        ext = splitext(rel_path)[1]
        reason = f"unsupported language {ext}" if ext else "unsupported language (no file extension)"
        return _fallback(rel_path, None, reason, lines=lines, size=size, digest=digest)
    note = None
    try:
        if language == "python":
            from llmem.code.outline.python import outline_python

            imports, symbols = outline_python(data, is_test_path(rel_path))
        elif language == "markdown":
            from llmem.code.outline.manifests import outline_markdown

            imports, symbols = outline_markdown(data)
        elif language in _MANIFESTS:
            from llmem.code.outline.manifests import outline_manifest

            imports, symbols = outline_manifest(language, data)
        else:
            from llmem.code.outline.treesitter import outline_treesitter

            imports, symbols, note = outline_treesitter(language, data)
    except OutlineFailure as exc:
        return _fallback(rel_path, language, str(exc), lines=lines, size=size, digest=digest)
    except Exception as exc:  # a parser bug must cost one file its symbols, never the whole parse
        reason = f"parser error: {type(exc).__name__}: {exc}"
        return _fallback(rel_path, language, reason, lines=lines, size=size, digest=digest)
    if symbols:
        fill_hashes(symbols, code_lines(data, language))
    return Outline(
        path=rel_path,
        language=language,
        mode="full",
        reason=note,
        line_count=lines,
        size=size,
        sha256=digest,
        imports=imports,
        symbols=symbols,
    )


#: Folders whose files are tests (any segment of the path): pytest's, Jest's, Java's src/test, Rust's.
TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "spec", "specs"})
_TEST_FILE = re.compile(
    r"^(test_.*\.py|.*_test\.py|conftest\.py|.*_test\.go|.*\.(test|spec)\.[cm]?[jt]sx?|.*Tests?\.java)$"
)


@functools.lru_cache(maxsize=65_536)
def is_test_path(path: str) -> bool:
    """Whether a workspace path holds tests, by the usual conventions: a file ``test_*.py``,
    ``*_test.py``, ``conftest.py``, ``*_test.go``, ``*.test.ts``/``*.spec.ts`` (and .js, .tsx, .mjs
    …), ``*Test.java``; or any file under a folder named ``tests``, ``test``, ``__tests__``,
    ``spec`` or ``specs``."""
    *folders, name = path.split("/")
    return bool(_TEST_FILE.match(name)) or any(f in TEST_FOLDERS for f in folders)


def _fallback(path: str, language: str | None, reason: str, *, lines: int, size: int, digest: str) -> Outline:
    return Outline(
        path=path,
        language=language,
        mode="fallback",
        reason=reason,
        line_count=lines,
        size=size,
        sha256=digest,
    )


def symbol_hashes(outline: Outline) -> dict[str, str]:
    """Qualified name → hash of every symbol; a name several symbols share (overloads) gets one
    hash of all of them, the same whatever their order."""
    return hashes_of_symbols(iter_symbols(outline))


def enclosing_symbol(outline: Outline, line: int) -> Symbol | None:
    """The symbol a line lies in: the innermost one of code (function, class, registration, test
    …) that holds it, else the innermost data symbol (a module variable, a field) that does."""
    code: Symbol | None = None
    data: Symbol | None = None
    for sym in iter_symbols(outline):  # parents before children: a later holder is inner
        if sym.start_line <= line <= sym.end_line:
            if sym.kind in DATA_KINDS:
                data = sym
            else:
                code = sym
    return code or data


def iter_symbols(outline: Outline) -> Iterator[Symbol]:
    """Every symbol of the outline, depth first, parents before their children."""
    stack = list(reversed(outline.symbols))
    while stack:
        symbol = stack.pop()
        yield symbol
        stack.extend(reversed(symbol.children))
