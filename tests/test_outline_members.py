"""Data members in outlines: enum members, fields, attributes, module variables and ``__all__``.

Checked on real code nobody here wrote (the MCP git server's ``server.py`` and the filesystem
server's ``lib.ts``, copied into ``tests/data/llmem``), on this repository's own dataclasses and
pydantic models, and on small snippets per language; each figure against an independent route
(``ast.walk``, ``dataclasses.fields``, pydantic's ``model_fields``, a line pattern).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from llmem.code.artifacts import Llmem
from llmem.code.outline import (
    DATA_KINDS,
    Outline,
    Symbol,
    SymbolKind,
    build_outline,
    iter_symbols,
    symbol_hashes,
)
from llmem.code.tasks import annotate_parts
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

REPO = Path(__file__).resolve().parents[1]
#: Real files of modelcontextprotocol/servers (tests/data/README.md names their source and licence).
SERVERS = Path(__file__).resolve().parent / "data" / "servers" / "src"
GIT_SERVER = SERVERS / "git" / "src" / "mcp_server_git" / "server.py"
FS_LIB = SERVERS / "filesystem" / "lib.ts"
_SCOPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _outline(path: str, data: bytes | str) -> Outline:
    outline = build_outline(path, data.encode() if isinstance(data, str) else data)
    assert outline.mode == "full", outline.reason
    return outline


def _by_name(outline: Outline) -> dict[str, Symbol]:
    return {s.qualified_name: s for s in iter_symbols(outline)}


def _flat(outline: Outline, kinds: frozenset[str] | set[str] = DATA_KINDS) -> list[tuple[str, str, int, int]]:
    return [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in iter_symbols(outline) if s.kind in kinds]


# -- the MCP git server (Python, MIT) -------------------------------------------------------


def test_the_git_servers_tool_enum_has_its_members_with_values_and_lines() -> None:
    data = GIT_SERVER.read_bytes()
    tools = _by_name(_outline("src/mcp_server_git/server.py", data))["GitTools"]
    assert tools.kind == "enum"
    members = [c for c in tools.children if c.kind == "enum_member"]
    # independently: the class's assignments as ast sees them
    tree = ast.parse(data)
    enum = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "GitTools")
    expected = [
        (f"GitTools.{t.id}", a.lineno, ast.literal_eval(a.value))
        for a in enum.body
        if isinstance(a, ast.Assign)
        for t in a.targets
        if isinstance(t, ast.Name)
    ]
    assert len(expected) == 12
    assert [(m.qualified_name, m.start_line) for m in members] == [(q, line) for q, line, _ in expected]
    for member, (_, _, value) in zip(members, expected, strict=True):
        assert member.signature == f'{member.name} = "{value}"'
    status = members[0]
    assert (status.name, status.start_line, status.signature) == ("STATUS", 97, 'STATUS = "git_status"')
    # grep agrees on how many tool names the enum lists
    text = data.decode()
    assert len(re.findall(r'^    [A-Z_]+ = "git_\w+"$', text, re.MULTILINE)) == len(members)


def test_the_git_servers_pydantic_models_have_their_fields() -> None:
    data = GIT_SERVER.read_bytes()
    outline = _outline("src/mcp_server_git/server.py", data)
    symbols = _by_name(outline)
    tree = ast.parse(data)
    models = [
        n for n in tree.body if isinstance(n, ast.ClassDef) and any(ast.unparse(b) == "BaseModel" for b in n.bases)
    ]
    assert len(models) == 12
    for model in models:
        expected = [
            (f"{model.name}.{s.target.id}", s.lineno, s.end_lineno)
            for s in model.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        got = [(c.qualified_name, c.start_line, c.end_line) for c in symbols[model.name].children]
        assert got == expected, model.name
        assert all(c.kind == "field" for c in symbols[model.name].children)
    assert symbols["GitDiff.context_lines"].signature == "context_lines: int = DEFAULT_CONTEXT_LINES"
    assert symbols["GitLog.max_count"].signature == "max_count: int = 10"
    assert symbols["GitCreateBranch.base_branch"].signature == "base_branch: str | None = None"
    # a multi-line Field(...) is one field over its lines, its value cut short on one line
    branch_type = symbols["GitBranch.branch_type"]
    assert (branch_type.start_line, branch_type.end_line) == (82, 85)
    assert branch_type.signature.startswith('branch_type: str = Field(..., description="Whether to list')
    assert branch_type.signature.endswith("…") and len(branch_type.signature) <= len("branch_type: str = ") + 80


def test_annotate_asks_notes_per_class_and_function_with_fields_shown_for_context() -> None:
    data = GIT_SERVER.read_bytes()
    outline = _outline("server.py", data)
    parts = annotate_parts(outline, data.decode())
    asked = [n for part in parts for unit in part for n in unit.names]
    everything = {s.qualified_name: s.kind for s in iter_symbols(outline)}
    assert set(asked) == {n for n, kind in everything.items() if kind not in DATA_KINDS}
    assert "GitTools" in asked and "GitStatus" in asked and "GitTools.STATUS" not in asked
    # the enum's members are in the source shown with it
    shown = "".join(unit.text for part in parts for unit in part)
    assert 'STATUS = "git_status"' in shown


# -- the MCP filesystem server's lib.ts (TypeScript) -------------------------------------------


def test_the_filesystem_servers_module_variable_and_interfaces() -> None:
    data = FS_LIB.read_bytes()
    outline = _outline("src/filesystem/lib.ts", data)
    symbols = _by_name(outline)
    allowed = symbols["allowedDirectories"]
    assert (allowed.kind, allowed.start_line, allowed.end_line) == ("variable", 11, 11)
    assert allowed.signature == "let allowedDirectories: string[] = []"
    # every top-level const/let/var the line pattern finds is a symbol on its line, reported once
    pattern = re.compile(r"^(?:export\s+)?(const|let|var)\s+([A-Za-z_$][\w$]*)")
    top = {s.name: s for s in outline.symbols}
    lines = data.decode().splitlines()
    found = [(m.group(2), n) for n, line in enumerate(lines, 1) if (m := pattern.match(line))]
    assert found
    for name, line in found:
        assert top[name].start_line == line, name
        assert top[name].kind in ("variable", "constant", "function"), name
    assert len([s for s in outline.symbols if s.name in dict(found)]) == len(found)
    info = symbols["FileInfo"]
    assert info.kind == "interface"
    assert [(c.kind, c.name) for c in info.children] == [
        ("field", "size"),
        ("field", "created"),
        ("field", "modified"),
        ("field", "accessed"),
        ("field", "isDirectory"),
        ("field", "isFile"),
        ("field", "permissions"),
    ]
    assert symbols["FileInfo.size"].signature == "size: number"


# -- this repository's own dataclasses and pydantic models -------------------------------------


def test_this_repositorys_dataclasses_have_exactly_their_fields() -> None:
    from debrief_calc.analysis import registry

    outline = _outline(
        "debrief_calc/analysis/registry.py", (REPO / "debrief_calc" / "analysis" / "registry.py").read_bytes()
    )
    symbols = _by_name(outline)
    lines = (REPO / "debrief_calc" / "analysis" / "registry.py").read_text().splitlines()
    for cls in (registry.Parameter, registry.ToolInput, registry.ToolOutput, registry.ToolSpec):
        fields = [c for c in symbols[cls.__name__].children if c.kind == "field"]
        assert [f.name for f in fields] == [f.name for f in dataclasses.fields(cls)], cls.__name__
        for f in fields:
            assert lines[f.start_line - 1].lstrip().startswith(f"{f.name}:"), f.qualified_name
    assert symbols["Parameter.required"].signature == "required: bool = False"
    assert symbols["ToolOutput.features"].signature == "features: list[dict[str, Any]] = field(default_factory=list)"


def test_this_repositorys_pydantic_models_have_exactly_their_fields() -> None:
    from llmem.code.outline import model

    outline = _outline("llmem/code/outline/model.py", (REPO / "llmem" / "code" / "outline" / "model.py").read_bytes())
    symbols = _by_name(outline)
    for cls in (model.ImportRef, model.Symbol, model.Outline):
        fields = [c.name for c in symbols[cls.__name__].children if c.kind == "field"]
        assert fields == list(cls.model_fields), cls.__name__
    # the model's own attribute comment is the field's doc
    assert symbols["Symbol.hash"].doc is not None and "16 hex digits" in symbols["Symbol.hash"].doc
    assert symbols["SymbolKind"].kind == "variable"  # ``SymbolKind = Literal[...]``: a plain module assignment
    assert symbols["DATA_KINDS"].kind == "constant"


# -- Python: every class-level and module-level name, against an independent ast walk ----------


def _python_files() -> list[Path]:
    return sorted(p for d in ("llmem", "debrief_calc") for p in (REPO / d).rglob("*.py"))


def _expected_members(tree: ast.Module) -> set[tuple[str, str, int, int]]:
    """(kind, qualified name, first line, last line) of each name bound by an assignment directly
    in a class body (``if``/``try`` blocks included), found through parent links over ``ast.walk``."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    taken: dict[str, set[str]] = {}  # class qualified name → names of its methods and classes
    out: dict[str, tuple[str, str, int, int]] = {}

    def owners(node: ast.AST) -> tuple[ast.AST | None, list[str]]:
        names: list[str] = []
        nearest = None
        parent = parents.get(node)
        while parent is not None:
            if isinstance(parent, _SCOPES):
                nearest = nearest or parent
                if not isinstance(parent, ast.Lambda):
                    names.append(parent.name)
            parent = parents.get(parent)
        return nearest, list(reversed(names))

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            nearest, names = owners(node)
            if isinstance(nearest, ast.ClassDef):
                taken.setdefault(".".join(names), set()).add(node.name)
    assigns = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AnnAssign)), key=lambda n: (n.lineno, n.col_offset)
    )
    for node in assigns:
        nearest, names = owners(node)
        if not isinstance(nearest, ast.ClassDef):
            continue
        is_enum = any(
            (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")).endswith(("Enum", "Flag"))
            for b in nearest.bases
        )
        targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
        for target in targets:
            for name in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
                if not isinstance(name, ast.Name):
                    continue
                owner = ".".join(names)
                qualified = f"{owner}.{name.id}"
                if qualified in out or name.id in taken.get(owner, set()):
                    continue
                kind = "field" if isinstance(node, ast.AnnAssign) else "attribute"
                sunder = name.id.startswith("_") and name.id.endswith("_") and len(name.id) > 2
                if is_enum and not sunder and (isinstance(node, ast.Assign) or node.value is not None):
                    kind = "enum_member"
                out[qualified] = (kind, qualified, node.lineno, node.end_lineno or node.lineno)
    return set(out.values())


def test_every_class_level_name_of_this_repository_is_a_member_symbol() -> None:
    total = 0
    for path in _python_files():
        data = path.read_bytes()
        outline = _outline(path.name, data)
        got = set(_flat(outline, {"field", "attribute", "enum_member"}))
        expected = _expected_members(ast.parse(data))
        # ``x = field(...)``-style calls make a plain assignment a field: compare kinds loosely there
        loose = {(q, a, b) for _, q, a, b in got}
        assert loose == {(q, a, b) for _, q, a, b in expected}, path
        for kind, qualified, *_ in expected:
            if kind != "attribute":
                assert (kind, qualified) in {(k, q) for k, q, _, _ in got}, (path, qualified)
        total += len(expected)
    assert total > 300


def test_every_module_level_name_is_a_symbol_once() -> None:
    for path in _python_files():
        data = path.read_bytes()
        outline = _outline(path.name, data)
        top: dict[str, list[Symbol]] = {}
        for s in outline.symbols:
            top.setdefault(s.name, []).append(s)
        tree = ast.parse(data)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
                        if isinstance(name, ast.Name):
                            assert name.id in top, (path, name.id)
                            assert any(s.start_line <= node.lineno for s in top[name.id]), (path, name.id)
        for bound, symbols in top.items():
            data_symbols = [s for s in symbols if s.kind in DATA_KINDS]
            assert len(data_symbols) <= 1, (path, bound)
            assert not data_symbols or len(symbols) == 1, (path, bound)  # never beside a def of the name


# -- Python snippets ------------------------------------------------------------------------------

PY_SNIPPET = '''\
"""Module."""
import attr
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import NamedTuple, TypedDict

__all__ = ["Point", "Color", "load"]
MAX = 3
registry = {}
registry = {"again": 1}
a, b = 1, 2
handler: object = None


def load(): ...


load = staticmethod(load)


class Color(Enum):
    RED = auto()
    GREEN = "g"
    _ignore_ = ["x"]
    label: str

    def describe(self) -> str:
        return self.name


@dataclass
class Point:
    x: int
    y: int = 0
    """The height."""
    tags: list[str] = field(default_factory=list)
    KIND = "point"

    @property
    def norm(self) -> float:
        return 0.0


@attr.s
class Legacy:
    name = attr.ib(default="n")
    count = attr.ib()


class Row(NamedTuple):
    id: int
    # the row's label
    label: str = ""


class Movie(TypedDict, total=False):
    title: str
    year: int

    if True:
        rating: float
'''


def test_python_members_kinds_lines_and_signatures() -> None:
    outline = _outline("pkg/shapes.py", PY_SNIPPET)
    assert _flat(outline, DATA_KINDS | {"constant"}) == [
        ("variable", "__all__", 7, 7),
        ("constant", "MAX", 8, 8),
        ("variable", "registry", 9, 9),  # the first binding only
        ("variable", "a", 11, 11),
        ("variable", "b", 11, 11),
        ("constant", "handler", 12, 12),  # module-level annotated names keep their older kind
        ("enum_member", "Color.RED", 22, 22),
        ("enum_member", "Color.GREEN", 23, 23),
        ("attribute", "Color._ignore_", 24, 24),
        ("field", "Color.label", 25, 25),
        ("field", "Point.x", 33, 33),
        ("field", "Point.y", 34, 34),
        ("field", "Point.tags", 36, 36),
        ("attribute", "Point.KIND", 37, 37),
        ("field", "Legacy.name", 46, 46),
        ("field", "Legacy.count", 47, 47),
        ("field", "Row.id", 51, 51),
        ("field", "Row.label", 53, 53),
        ("field", "Movie.title", 57, 57),
        ("field", "Movie.year", 58, 58),
        ("field", "Movie.rating", 61, 61),
    ]
    symbols = _by_name(outline)
    assert "load" in symbols and symbols["load"].kind == "function"  # ``load = staticmethod(load)`` is not a 2nd
    assert symbols["__all__"].signature == '__all__ = ["Point", "Color", "load"]'
    assert symbols["__all__"].doc == "3 exported name(s): Point, Color, load"
    assert symbols["Point.y"].doc == "The height."
    assert symbols["Point.y"].signature == "y: int = 0"
    assert symbols["Row.label"].doc == "the row's label"
    assert symbols["Color.RED"].signature == "RED = auto()"
    assert symbols["Legacy.name"].signature == 'name = attr.ib(default="n")'
    assert symbols["a"].signature == "a, b = 1, 2"
    assert [c.kind for c in symbols["Point"].children] == ["field", "field", "field", "attribute", "method"]


def test_a_long_all_lists_what_fits_and_says_how_many_more() -> None:
    names = [f"name_number_{i}" for i in range(200)]
    source = "__all__ = [\n" + "".join(f'    "{n}",\n' for n in names) + "]\n"
    symbol = _by_name(_outline("m.py", source))["__all__"]
    assert (symbol.kind, symbol.start_line, symbol.end_line) == ("variable", 1, 202)
    assert symbol.doc is not None and len(symbol.doc) <= 500
    shown = symbol.doc.split(": ", 1)[1].split(" …", 1)[0].split(", ")
    assert shown == names[: len(shown)]
    assert symbol.doc.startswith("200 exported name(s): ")
    assert symbol.doc.endswith(f"… and {200 - len(shown)} more (lines 1-202)")
    # annotated, it keeps the older kind and gains the same listing
    annotated = _by_name(_outline("m.py", '__all__: list[str] = ["a", "b"]\n'))["__all__"]
    assert (annotated.kind, annotated.doc) == ("constant", "2 exported name(s): a, b")
    # not a literal list: the source is all there is to show
    computed = _by_name(_outline("m.py", "__all__ = base.__all__ + ['x']\n"))["__all__"]
    assert computed.doc is None and computed.signature == "__all__ = base.__all__ + ['x']"


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("big.py", "TABLE = {{\n{rows}}}\ntable = {{\n{rows}}}\n\n\ndef after():\n    pass\n"),
        ("big.ts", "export const TABLE = {{\n{rows}}};\nconst table = {{\n{rows}}};\n\nfunction after() {{}}\n"),
        ("big.js", "var TABLE = {{\n{rows}}};\nlet table = {{\n{rows}}};\n\nfunction after() {{}}\n"),
    ],
)
def test_a_huge_literal_is_one_symbol_with_its_span(path: str, template: str) -> None:
    rows = "".join(f'  "key{i}": {{"a": [{i}, {i + 1}], "b": "v{i}"}},\n' for i in range(5_000))
    outline = _outline(path, template.format(rows=rows))
    top = [(s.name, s.start_line, s.end_line, len(s.children)) for s in outline.symbols]
    assert top == [
        ("TABLE", 1, 5_002, 0),
        ("table", 5_003, 10_004, 0),
        ("after", *((10_007, 10_008) if path == "big.py" else (10_006, 10_006)), 0),
    ]
    assert len(list(iter_symbols(outline))) == 3
    for symbol in outline.symbols[:2]:
        assert len(symbol.signature) <= 200
    assert len(outline.symbols[1].signature) <= len("const table = ") + 80


def test_a_name_bound_beside_a_def_leaves_that_defs_hash_alone() -> None:
    alone = _outline("m.py", "def load():\n    return 1\n")
    shadowed = _outline("m.py", "def load():\n    return 1\nload = wrap(load)\n")
    assert [s.kind for s in shadowed.symbols] == ["function"]
    assert symbol_hashes(shadowed)["load"] == symbol_hashes(alone)["load"]


def test_a_members_hash_moves_with_its_code_not_its_comments() -> None:
    base = "class P:\n    x: int = 1\n    y: int = 2\n"
    hashes = symbol_hashes(_outline("m.py", base))
    commented = symbol_hashes(_outline("m.py", "class P:\n    # the x\n    x: int = 1  # one\n    y: int = 2\n"))
    changed = symbol_hashes(_outline("m.py", "class P:\n    x: int = 5\n    y: int = 2\n"))
    assert commented["P.x"] == hashes["P.x"] and commented["P.y"] == hashes["P.y"]
    assert changed["P.x"] != hashes["P.x"] and changed["P.y"] == hashes["P.y"]
    assert len(hashes["P.x"]) == 16


# -- the other languages ----------------------------------------------------------------------------


TS_SNIPPET = """\
export enum Level {
  Low,
  /** The middle. */
  Mid = "mid",
  "High" = 3,
}

export interface Options {
  readonly path: string;
  depth?: number;
  visit(node: Node): void;
}

class Walker {
  static count = 0;
  #seen = new Set<string>();
  private readonly opts: Options;
  run = () => this.opts;

  constructor(
    @Inject("ROOT") private readonly root: string,
    plain: number,
  ) {}
}

export let current: Walker | null = null;
var legacy = 1, other;
const cache = new Map();
const f = () => 1;
export const DEFAULTS = { depth: 3 };
"""


def test_typescript_members_and_module_variables() -> None:
    outline = _outline("src/walk.ts", TS_SNIPPET)
    assert _flat(outline, DATA_KINDS | {"constant", "function", "method"}) == [
        ("enum_member", "Level.Low", 2, 2),
        ("enum_member", "Level.Mid", 4, 4),
        ("enum_member", "Level.High", 5, 5),
        ("field", "Options.path", 9, 9),
        ("field", "Options.depth", 10, 10),
        ("method", "Options.visit", 11, 11),
        ("field", "Walker.count", 15, 15),
        ("field", "Walker.#seen", 16, 16),
        ("field", "Walker.opts", 17, 17),
        ("method", "Walker.run", 18, 18),
        ("method", "Walker.constructor", 20, 23),
        ("field", "Walker.root", 21, 21),  # a parameter property; ``plain`` is only a parameter
        ("variable", "current", 26, 26),
        ("variable", "legacy", 27, 27),
        ("variable", "other", 27, 27),
        ("variable", "cache", 28, 28),
        ("function", "f", 29, 29),  # a function value stays a function, not also a variable
        ("constant", "DEFAULTS", 30, 30),
    ]
    symbols = _by_name(outline)
    assert symbols["Level.Mid"].doc == "The middle."
    assert symbols["Level.Mid"].signature == 'Mid = "mid"'
    assert symbols["Options.path"].signature == "readonly path: string"
    assert symbols["Walker.opts"].signature == "private readonly opts: Options"
    assert symbols["current"].signature == "let current: Walker | null = null"
    assert symbols["other"].signature == "var other"
    assert symbols["Walker.root"].signature == "private readonly root: string"


def test_javascript_class_fields_and_variables() -> None:
    source = "class A {\n  static n = 1;\n  m = 2;\n  go() {}\n}\nlet state = {};\nmodule.exports = A;\n"
    assert _flat(_outline("a.js", source), DATA_KINDS | {"method"}) == [
        ("field", "A.n", 2, 2),
        ("field", "A.m", 3, 3),
        ("method", "A.go", 4, 4),
        ("variable", "state", 6, 6),
    ]


def test_go_struct_fields_and_const_var_blocks() -> None:
    source = """\
package store

const (
\tModeRead = iota
\tModeWrite
)

var defaultStore *Store

// Store keeps things.
type Store struct {
\t// Path is where.
\tPath   string `json:"path"`
\tA, B   int
\tio.Reader
\t*Cache
}

func (s *Store) Open() error { return nil }
"""
    outline = _outline("store.go", source)
    assert _flat(outline, DATA_KINDS | {"constant", "method"}) == [
        ("constant", "ModeRead", 4, 4),
        ("constant", "ModeWrite", 5, 5),
        ("constant", "defaultStore", 8, 8),  # Go's var keeps its older kind
        ("field", "Store.Path", 13, 13),
        ("field", "Store.A", 14, 14),
        ("field", "Store.B", 14, 14),
        ("field", "Store.Reader", 15, 15),
        ("field", "Store.Cache", 16, 16),
        ("method", "Store.Open", 19, 19),
    ]
    symbols = _by_name(outline)
    assert symbols["Store.Path"].doc == "Path is where."
    assert symbols["Store.Path"].signature == 'Path string `json:"path"`'


def test_rust_struct_fields_enum_variants_and_consts() -> None:
    source = """\
pub struct Config {
    /// Where to listen.
    pub addr: String,
    #[serde(default)]
    retries: u32,
}

pub struct Pair(u8, u8);

pub enum Event {
    Start,
    Data(Vec<u8>),
    Stop { code: i32 },
}

pub const LIMIT: usize = 10;
static mut COUNTER: u32 = 0;
"""
    outline = _outline("lib.rs", source)
    assert _flat(outline, DATA_KINDS | {"constant", "struct", "enum"}) == [
        ("struct", "Config", 1, 6),
        ("field", "Config.addr", 3, 3),
        ("field", "Config.retries", 5, 5),
        ("struct", "Pair", 8, 8),
        ("enum", "Event", 10, 14),
        ("enum_member", "Event.Start", 11, 11),
        ("enum_member", "Event.Data", 12, 12),
        ("enum_member", "Event.Stop", 13, 13),
        ("constant", "LIMIT", 16, 16),
        ("constant", "COUNTER", 17, 17),
    ]
    symbols = _by_name(outline)
    assert symbols["Config.addr"].doc == "Where to listen."
    assert symbols["Config.addr"].signature == "pub addr: String"
    assert symbols["Config.retries"].decorators == ["serde(default)"]
    assert symbols["Event.Stop"].signature == "Stop { code: i32 }"


def test_java_fields_and_enum_constants() -> None:
    source = """\
public class Account {
    /** The owner. */
    private final String owner;
    private int a = 1, b;
    public static final Map<String, Integer> LIMITS = Map.of("x", 1, "y", 2, "z", 3, "w", 4, "v", 5, "u", 6, "t", 7, "s", 8, "r", 9, "q", 10, "p", 11);

    enum State {
        OPEN,
        CLOSED("c") {
            void close() {}
        };
        private final String code = "";
    }

    interface Rates {
        double BASE = 0.5;
    }
}
"""
    outline = _outline("Account.java", source)
    assert _flat(outline, DATA_KINDS) == [
        ("field", "Account.owner", 3, 3),
        ("field", "Account.a", 4, 4),
        ("field", "Account.b", 4, 4),
        ("field", "Account.LIMITS", 5, 5),
        ("enum_member", "Account.State.OPEN", 8, 8),
        ("enum_member", "Account.State.CLOSED", 9, 11),
        ("field", "Account.State.code", 12, 12),
        ("field", "Account.Rates.BASE", 16, 16),
    ]
    symbols = _by_name(outline)
    assert symbols["Account.owner"].doc == "The owner."
    assert symbols["Account.owner"].signature == "private final String owner"
    assert symbols["Account.a"].signature == "private int a = 1"
    assert symbols["Account.b"].signature == "private int b"
    assert symbols["Account.State.CLOSED"].signature == 'CLOSED("c")'
    limits = symbols["Account.LIMITS"].signature
    assert limits.startswith("public static final Map<String, Integer> LIMITS = Map.of(") and limits.endswith("…")


# -- kinds through the tools ----------------------------------------------------------------------


def test_new_kinds_are_searchable_and_readable_as_source(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    shutil.copyfile(GIT_SERVER, ws / "src" / "server.py")
    shutil.copyfile(FS_LIB, ws / "src" / "lib.ts")
    llmem = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    llmem.parse(".")
    kinds: tuple[SymbolKind, ...] = ("enum_member", "field", "variable")
    for kind in kinds:
        answer = llmem.search(
            "git_status" if kind == "enum_member" else "allowedDirectories" if kind == "variable" else "repo_path",
            kind,
            ".",
            50,
            None,
        )
        assert answer["results"], kind
        assert {hit["kind"] for hit in answer["results"] if "kind" in hit} <= {kind}
    source = llmem.get("src/server.py", "source", 0, None, "GitTools.STATUS")
    assert 'STATUS = "git_status"' in str(source)
    variable = llmem.get("src/lib.ts", "source", 0, None, "allowedDirectories")
    assert "let allowedDirectories: string[] = [];" in str(variable)


def test_a_plain_name_keeps_naming_the_method_it_named_before_fields_were_outlined(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.py").write_text("class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    run: int = 0\n")
    llmem = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    assert "def run(self):" in str(llmem.get("m.py", "source", 0, None, "run"))
    assert "run: int = 0" in str(llmem.get("m.py", "source", 0, None, "B.run"))
