"""Python outlines against an independent ``ast`` walk over real code, plus the edge cases."""

from __future__ import annotations

import ast
import hashlib
import shutil
import textwrap
from pathlib import Path

import pytest

from llmem.code.outline import (
    Outline,
    Symbol,
    build_outline,
    detect_language,
    iter_symbols,
    supported_languages,
)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@pytest.fixture(scope="module")
def mcp_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real codebase nobody here wrote: the installed ``mcp`` package, copied."""
    import mcp

    dest = tmp_path_factory.mktemp("third party") / "mcp"
    shutil.copytree(Path(mcp.__file__).parent, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _expected_defs(tree: ast.Module) -> set[tuple[str, str, int, int]]:
    """(qualified name, kind, lineno, end_lineno) of every class/function not inside a function.

    Built from parent links over ``ast.walk``: a different route from the outline's own walk
    over statement lists.
    """
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, _DEFS):
            continue
        owners: list[str] = []
        nearest: ast.AST | None = None
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                owners.append(parent.name)
                nearest = nearest or parent
            parent = parents.get(parent)
        # Nested functions are named under the function they are declared in (``outer.inner``).
        kind = (
            "class" if isinstance(node, ast.ClassDef) else "method" if isinstance(nearest, ast.ClassDef) else "function"
        )
        qualified = ".".join([*reversed(owners), node.name])
        out.add((qualified, kind, node.lineno, node.end_lineno or node.lineno))
    return out


def _outlined_defs(outline: Outline) -> set[tuple[str, str, int, int]]:
    kinds = {"class": "class", "enum": "class", "function": "function", "method": "method"}
    return {
        (s.qualified_name, kinds[s.kind], s.start_line, s.end_line) for s in iter_symbols(outline) if s.kind in kinds
    }


def _expected_imports(tree: ast.Module) -> list[tuple[str, tuple[str, ...], int]]:
    out: list[tuple[str, tuple[str, ...], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            out.append((module, tuple(a.name for a in node.names), node.lineno))
    return sorted(out)


def test_every_file_of_a_real_codebase_matches_an_independent_ast_walk(mcp_copy: Path) -> None:
    files = sorted(mcp_copy.rglob("*.py"))
    assert len(files) > 50
    total_defs = 0
    for path in files:
        rel = path.relative_to(mcp_copy.parent).as_posix()
        data = path.read_bytes()
        outline = build_outline(rel, data)
        tree = ast.parse(data)
        assert outline.mode == "full", (rel, outline.reason)
        assert outline.language == "python"
        assert outline.path == rel
        assert outline.sha256 == hashlib.sha256(data).hexdigest()
        assert outline.size == len(data)
        assert outline.line_count == len(data.splitlines())
        expected = _expected_defs(tree)
        assert _outlined_defs(outline) == expected, rel
        got_imports = sorted((i.module, tuple(i.names), i.line) for i in outline.imports)
        assert got_imports == _expected_imports(tree), rel
        for symbol in iter_symbols(outline):
            assert "\n" not in symbol.signature
            assert len(symbol.signature) <= 200
            assert symbol.doc is None or len(symbol.doc) <= 500
        total_defs += len(expected)
    assert total_defs > 500


SAMPLE = '''\
"""Module doc."""
from __future__ import annotations

import os.path as osp, sys
from . import sibling
from ..pkg.mod import a, b as c
from enum import Enum, IntFlag
import enum
from typing import TYPE_CHECKING, TypeAlias, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_RETRIES = 3
_PRIVATE_LIMIT: int = 10
lowercase_ignored = 1
A, B = 1, 2
timeout: float = 2.5
Json: TypeAlias = "dict[str, Json] | list[Json] | str"
T = TypeVar("T")


class Color(Enum):
    RED = 1

    def label(self) -> str:
        return self.name.lower()


class Perm(enum.IntFlag):
    R = 4


# Says hello
# to everyone.
@dataclass(frozen=True)
@other.deco("x", y=2)
class Outer(Base, metaclass=Meta):
    """Outer doc.

    More text.
    """

    class Inner:
        def deep(self) -> None:
            pass

    @staticmethod
    def helper(a: int, /, b, *args: str, key: bool = False, **kw) -> dict[str, int]:
        def hidden():
            import json
        return {}

    async def fetch(self, url: str = "http://x") -> bytes:
        """Fetch it."""
        return b""

    if sys.version_info >= (3, 12):
        def newer(self): ...
    else:
        def older(self): ...


async def main(
    argv: list[str] | None = None,
    *,
    verbose: bool = False,
) -> int:
    return 0


try:
    import ujson
except ImportError:
    def fallback_loads(s): ...


def ünïcode_naïve(ß: int) -> str:
    return "ok"
'''


def _by_name(outline: Outline) -> dict[str, Symbol]:
    return {s.qualified_name: s for s in iter_symbols(outline)}


def test_sample_kinds_names_and_lines() -> None:
    outline = build_outline("pkg/sample.py", SAMPLE.encode())
    assert outline.mode == "full"
    got = [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in iter_symbols(outline)]
    assert got == [
        ("constant", "MAX_RETRIES", 14, 14),
        ("constant", "_PRIVATE_LIMIT", 15, 15),
        ("variable", "lowercase_ignored", 16, 16),
        ("constant", "A", 17, 17),
        ("constant", "B", 17, 17),
        ("constant", "timeout", 18, 18),
        ("type", "Json", 19, 19),
        ("type", "T", 20, 20),
        ("enum", "Color", 23, 27),
        ("enum_member", "Color.RED", 24, 24),
        ("method", "Color.label", 26, 27),
        ("enum", "Perm", 30, 31),
        ("enum_member", "Perm.R", 31, 31),
        ("class", "Outer", 38, 61),
        ("class", "Outer.Inner", 44, 46),
        ("method", "Outer.Inner.deep", 45, 46),
        ("method", "Outer.helper", 49, 52),
        ("function", "Outer.helper.hidden", 50, 51),
        ("method", "Outer.fetch", 54, 56),
        ("method", "Outer.newer", 59, 59),
        ("method", "Outer.older", 61, 61),
        ("function", "main", 64, 69),
        ("function", "fallback_loads", 75, 75),
        ("function", "ünïcode_naïve", 78, 79),
    ]


def test_sample_imports_in_order_including_nested_ones() -> None:
    outline = build_outline("pkg/sample.py", SAMPLE.encode())
    got = [(i.module, i.names, i.line) for i in outline.imports]
    assert got == [
        ("__future__", ["annotations"], 2),
        ("os.path", [], 4),
        ("sys", [], 4),
        (".", ["sibling"], 5),
        ("..pkg.mod", ["a", "b"], 6),
        ("enum", ["Enum", "IntFlag"], 7),
        ("enum", [], 8),
        ("typing", ["TYPE_CHECKING", "TypeAlias", "TypeVar"], 9),
        ("collections.abc", ["Iterator"], 12),
        ("json", [], 51),
        ("ujson", [], 73),
    ]


def test_sample_signatures_docs_and_decorators() -> None:
    symbols = _by_name(build_outline("pkg/sample.py", SAMPLE.encode()))
    outer = symbols["Outer"]
    assert outer.signature == "class Outer(Base, metaclass=Meta)"
    assert outer.decorators == ["dataclass(frozen=True)", 'other.deco("x", y=2)']
    assert outer.doc == "Outer doc.\n\nMore text."
    assert symbols["Outer.helper"].signature == (
        "def helper(a: int, /, b, *args: str, key: bool = False, **kw) -> dict[str, int]"
    )
    assert symbols["Outer.helper"].decorators == ["staticmethod"]
    assert symbols["Outer.helper"].doc is None
    assert symbols["Outer.fetch"].signature == 'async def fetch(self, url: str = "http://x") -> bytes'
    assert symbols["Outer.fetch"].doc == "Fetch it."
    assert symbols["main"].signature == (
        "async def main(argv: list[str] | None = None, *, verbose: bool = False) -> int"
    )
    assert symbols["ünïcode_naïve"].signature == "def ünïcode_naïve(ß: int) -> str"
    assert symbols["MAX_RETRIES"].signature == "MAX_RETRIES = 3"
    assert symbols["_PRIVATE_LIMIT"].signature == "_PRIVATE_LIMIT: int = 10"
    assert symbols["Json"].signature.startswith("Json: TypeAlias = ")
    assert symbols["Color"].signature == "class Color(Enum)"
    assert symbols["lowercase_ignored"].kind == "variable"
    assert symbols["lowercase_ignored"].signature == "lowercase_ignored = 1"
    assert symbols["Outer.helper.hidden"].signature == "def hidden()"


def test_leading_comment_is_the_doc_when_there_is_no_docstring() -> None:
    source = b"x = 1\n\n# Adds.\n# Twice.\n@cache\ndef add(a, b):\n    return a + b\n\n# far away\n\ndef f(): pass\n"
    symbols = _by_name(build_outline("m.py", source))
    assert symbols["add"].doc == "Adds.\nTwice."
    assert symbols["add"].start_line == 6
    assert symbols["f"].doc is None


def test_long_values_and_docstrings_are_capped() -> None:
    body = ", ".join(f"'k{i}': {i}" for i in range(500))
    source = f'TABLE = {{\n{body}\n}}\n\ndef f():\n    """{"word " * 400}"""\n'.encode()
    symbols = _by_name(build_outline("m.py", source))
    assert len(symbols["TABLE"].signature) <= 200
    assert symbols["TABLE"].end_line == 3
    assert symbols["f"].doc is not None
    assert len(symbols["f"].doc) <= 500


def test_syntax_error_falls_back_with_line_count_and_reason() -> None:
    source = b"def ok():\n    pass\n\ndef broken(:\n    pass\n"
    outline = build_outline("bad.py", source)
    assert outline.mode == "fallback"
    assert outline.language == "python"
    assert outline.symbols == []
    assert outline.line_count == 5
    assert outline.reason is not None
    assert outline.reason.startswith("syntax error at line 4")


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\x00x = \x81\x82\n",  # not UTF-8
        b"# -*- coding: nonexistent-codec -*-\nx = 1\n",
        b"x = 1\n\x00\x00\x00",  # NUL bytes
    ],
)
def test_undecodable_or_binary_bytes_fall_back(data: bytes) -> None:
    outline = build_outline("weird.py", data)
    assert outline.mode == "fallback"
    assert outline.reason
    assert outline.sha256 == hashlib.sha256(data).hexdigest()
    assert outline.line_count >= 1


def test_declared_encoding_and_bom_are_honoured() -> None:
    latin = "# -*- coding: latin-1 -*-\ndef café(): pass\nclass Zoë: pass\n".encode("latin-1")
    outline = build_outline("l.py", latin)
    assert outline.mode == "full"
    assert [s.name for s in outline.symbols] == ["café", "Zoë"]
    assert outline.symbols[0].signature == "def café()"
    bom = b"\xef\xbb\xbfdef f(x: str = '\xc3\xa9'): pass\n"
    outline = build_outline("b.py", bom)
    assert outline.mode == "full"
    assert outline.symbols[0].signature == "def f(x: str = 'é')"


def test_empty_file_and_crlf_line_endings() -> None:
    empty = build_outline("empty.py", b"")
    assert (empty.mode, empty.line_count, empty.symbols, empty.imports) == ("full", 0, [], [])
    crlf = build_outline("w.py", b"import os\r\n\r\nclass A:\r\n    def m(self):\r\n        pass\r\n")
    assert crlf.line_count == 5
    assert [(s.qualified_name, s.start_line, s.end_line) for s in iter_symbols(crlf)] == [
        ("A", 3, 5),
        ("A.m", 4, 5),
    ]


def test_pep695_type_statement_when_the_interpreter_has_it() -> None:
    if not hasattr(ast, "TypeAlias"):
        pytest.skip("the type statement needs Python 3.12")
    outline = build_outline("t.py", b"type Pair[T] = tuple[T, T]\n")
    assert [(s.kind, s.name) for s in outline.symbols] == [("type", "Pair")]


def test_unknown_language_falls_back() -> None:
    outline = build_outline("notes/readme.xyz", b"hello\nworld")
    assert outline.mode == "fallback"
    assert outline.language is None
    assert outline.reason == "unsupported language .xyz"
    assert outline.line_count == 2
    assert build_outline("Makefile", b"all:\n").reason == "unsupported language (no file extension)"


def test_detect_language_and_supported_languages() -> None:
    assert detect_language("a/b.py") == "python"
    assert detect_language("stubs/x.PYI") == "python"
    assert detect_language("a.mts") == detect_language("a.cts") == detect_language("a.ts") == "typescript"
    assert detect_language("App.tsx") == "tsx"
    assert {detect_language(f"x.{e}") for e in ("js", "mjs", "cjs", "jsx")} == {"javascript"}
    assert detect_language("main.go") == "go"
    assert detect_language("lib.rs") == "rust"
    assert detect_language("A.java") == "java"
    assert detect_language(".py") is None
    assert detect_language("dir.py/README") is None
    assert detect_language("notes.txt") is None
    assert detect_language("docs/Guide.MD") == "markdown"
    assert detect_language("web/package.json") == "package-json"
    assert detect_language("pyproject.toml") == "pyproject"
    assert detect_language("crates/x/Cargo.toml") == "cargo"
    assert detect_language("go.mod") == "go-mod"
    assert detect_language("other.json") is None
    code = ["python", "typescript", "tsx", "javascript", "go", "rust", "java"]
    assert sorted(supported_languages()) == sorted([*code, "markdown", "package-json", "pyproject", "cargo", "go-mod"])


def test_iter_symbols_is_depth_first_parents_first() -> None:
    source = textwrap.dedent(
        """\
        class A:
            class B:
                def m(self): ...
            def n(self): ...
        def f(): ...
        """
    ).encode()
    assert [s.qualified_name for s in iter_symbols(build_outline("x.py", source))] == [
        "A",
        "A.B",
        "A.B.m",
        "A.n",
        "f",
    ]


def test_outline_round_trips_through_json() -> None:
    outline = build_outline("pkg/sample.py", SAMPLE.encode())
    again = Outline.model_validate_json(outline.model_dump_json())
    assert again == outline
