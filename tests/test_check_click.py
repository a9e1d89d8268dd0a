"""check_references on pallets/click (tests/data/click) after the half-done renames of trial t23c:
``make_str`` renamed in ``utils.py``, a module with a ``__getattr__`` (``import click`` then
fails), and ``Parameter.value_from_envvar`` renamed in its class only while ``Option`` still
overrides it (mypy: ``"Parameter" has no attribute``). Checked against Python's own import and
against ``ast``, never against the tool's earlier output."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.check import SUBCLASS_ONLY
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import DATA, MODES, call, llmem_client

UTILS = "src/click/utils.py"
CORE = "src/click/core.py"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(DATA / "click", ws)
    return ws


def _svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _edit(file: Path, old: str, new: str) -> None:
    text = file.read_text("utf-8")
    assert text.count(old) == 1, old
    file.write_text(text.replace(old, new), encoding="utf-8")


def _import_error(ws: Path) -> str:
    """What ``import click`` says, run on the workspace's files by Python itself."""
    done = subprocess.run(
        [sys.executable, "-c", "import click"], cwd=ws, env={"PYTHONPATH": str(ws / "src")},
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    return done.stderr.strip().splitlines()[-1] if done.returncode else ""


def _name_lines(ws: Path, file: str, name: str) -> set[int]:
    """Lines of ``file`` naming ``name`` (a Name or an ImportFrom alias), by ``ast``."""
    tree = ast.parse((ws / file).read_text("utf-8"))
    lines = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name}
    return lines | {
        n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and any(a.name == name for a in n.names)
    }


def _self_calls_in(ws: Path, cls: str, name: str) -> set[int]:
    """Lines of core.py calling ``self.name`` in the methods of ``cls``, by ``ast``."""
    tree = ast.parse((ws / CORE).read_text("utf-8"))
    [klass] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {
        n.lineno
        for n in ast.walk(klass)
        if isinstance(n, ast.Attribute) and n.attr == name and isinstance(n.value, ast.Name) and n.value.id == "self"
    }


def test_the_clean_package_answers_no_finding(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    answer = svc.check_references(None, 500, None)
    assert _import_error(ws) == ""
    assert answer["total"] == 0, answer["results"][:3]
    assert "known_gone" not in answer and "may_break_by_name" not in answer
    # utils.py's and __init__.py's __getattr__ are read (they serve fixed names): not "not judged"
    assert not [r for r in answer["not_checked"]["by_reason"] if "__getattr__" in r and "module" in r]


def test_a_function_renamed_in_a_module_whose_getattr_serves_fixed_names(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    _edit(ws / UTILS, "def make_str(", "def to_str(")
    assert "cannot import name 'make_str' from 'click.utils'" in _import_error(ws)
    answer = svc.check_references(None, 500, None)
    [finding] = answer["results"]
    used = _name_lines(ws, CORE, "make_str")
    assert (finding["path"], finding["kind"], finding["missing"]) == (CORE, "import", "make_str")
    assert {finding["line"], *finding["uses"]["lines"]} == used and len(used) == 2
    assert finding["renamed_to"] == "to_str" and finding["did_you_mean"][0] == "to_str"
    assert "__getattr__" in finding["why"]
    # A name its __getattr__ serves (a deprecated alias) is no finding; one it does not serve is.
    (ws / "src/click/extra.py").write_text("from .utils import LazyFile\nfrom .utils import NotServed\n")
    again = svc.check_references(None, 500, None)
    assert {(r["path"], r["line"]) for r in again["results"]} == {(CORE, finding["line"]), ("src/click/extra.py", 2)}


def test_a_name_gone_from_a_module_whose_getattr_cannot_be_read_is_listed_apart(ws: Path) -> None:
    # A __getattr__ that forwards any name it is asked: what it serves cannot be read.
    _edit(ws / UTILS, "    raise AttributeError(name)\n", "    return getattr(sys, name)\n")
    svc = _svc(ws)
    svc.parse(".")
    clean = svc.check_references(None, 500, None)
    assert clean["total"] == 0 and "known_gone" not in clean
    _edit(ws / UTILS, "def make_str(", "def to_str(")
    answer = svc.check_references(None, 500, None)
    assert answer["total"] == 0  # the code does not tell: not a finding …
    [gone] = answer["known_gone"]["results"]  # … but the store saw make_str go from utils.py
    used = _name_lines(ws, CORE, "make_str")
    assert gone["known_gone"] is True and gone["path"] == CORE and {gone["line"], *gone["uses"]["lines"]} == used
    assert gone["renamed_to"] == "to_str" and gone["last_defined"]["path"] == UTILS
    assert "known_gone" in answer["note"]
    assert answer["not_checked"]["total"] == clean["not_checked"]["total"]  # listed apart, not also counted
    # Another name of the same import (never defined there) is not judged: counted in not_checked.
    (ws / "src/click/extra.py").write_text("from .utils import NotServed\n")
    assert (
        svc.check_references(None, 500, None)["not_checked"]["by_reason"][
            "an import from a module with a module __getattr__"
        ]
        == 1
    )


def test_a_method_renamed_in_its_class_while_a_subclass_still_overrides_it(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    before = svc.check_references(None, 500, None)
    _edit(ws / CORE, "    def value_from_envvar(self, ctx: Context) -> str | cabc.Sequence[str] | None:",
          "    def envvar_value(self, ctx: Context) -> str | cabc.Sequence[str] | None:")  # fmt: skip
    answer = svc.check_references(None, 500, None)
    [finding] = answer["results"]
    assert {finding["line"]} == _self_calls_in(ws, "Parameter", "value_from_envvar")
    assert finding["in"] == "Parameter.consume_value" and finding["name"] == "self.value_from_envvar"
    assert finding["renamed_to"] == "Parameter.envvar_value" and finding["did_you_mean"][0] == "envvar_value"
    assert "Option" in finding["why"]
    assert SUBCLASS_ONLY not in before["not_checked"]["by_reason"]


def test_a_method_only_subclasses_define_is_not_an_alarm_without_a_rename(ws: Path) -> None:
    """The same tree, but the store never saw Parameter.value_from_envvar: a template method whose
    subclasses define it (no abstract declaration), counted as not judged."""
    _edit(ws / CORE, "    def value_from_envvar(self, ctx: Context) -> str | cabc.Sequence[str] | None:",
          "    def envvar_value(self, ctx: Context) -> str | cabc.Sequence[str] | None:")  # fmt: skip
    svc = _svc(ws)
    svc.parse(".")
    answer = svc.check_references(None, 500, None)
    assert answer["total"] == 0
    assert answer["not_checked"]["by_reason"][SUBCLASS_ONLY] == len(
        _self_calls_in(ws, "Parameter", "value_from_envvar")
    )


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[tuple[Client, Path]]:
    async with llmem_client(ws, request.param) as c:
        yield c, ws


@pytest.mark.anyio
async def test_known_gone_through_the_server(client: tuple[Client, Path]) -> None:
    c, ws = client
    _edit(ws / UTILS, "    raise AttributeError(name)\n", "    return getattr(sys, name)\n")
    err, out = await call(c, "generate_artifact", path=".")
    assert not err
    _edit(ws / UTILS, "def make_str(", "def to_str(")
    err, out = await call(c, "check_references")
    data: dict[str, Any] = out["data"]
    assert not err and data["total"] == 0 and data["known_gone"]["total"] == 1
    assert "known_gone" in out["nextAction"] and not out["nextAction"].startswith("Nothing broken found.")


def test_find_references_marks_a_self_call_only_a_subclass_defines_and_answers_the_renamed_away_name(
    ws: Path,
) -> None:
    svc = _svc(ws)
    svc.parse(".")
    _edit(ws / CORE, "    def value_from_envvar(self, ctx: Context) -> str | cabc.Sequence[str] | None:",
          "    def envvar_value(self, ctx: Context) -> str | cabc.Sequence[str] | None:")  # fmt: skip
    broken = _self_calls_in(ws, "Parameter", "value_from_envvar")
    option = svc.references("Option.value_from_envvar", CORE, None, 100, None)
    marked = {r["line"] for r in option["results"] if r.get("unresolved")}
    assert marked == broken and option["unresolved_total"] == len(broken)
    assert all("Option" in r["why"] for r in option["results"] if r.get("unresolved"))
    # The qualified name renamed away: its uses that no longer resolve, where it was, what it became.
    gone = svc.references("Parameter.value_from_envvar", CORE, None, 100, None)
    assert gone["unresolved"] is True and {r["line"] for r in gone["results"]} == broken
    assert gone["last_defined"]["renamed_to"] == "Parameter.envvar_value" and gone["definitions"] == []
    assert gone["path"] == CORE  # the path asked, echoed (t23f item 6)
    assert gone["other_definitions_of_the_name"] == [f"Option.value_from_envvar ({CORE})"]


def test_find_references_of_a_function_renamed_in_a_module_with_getattr(ws: Path) -> None:
    svc = _svc(ws)
    svc.parse(".")
    _edit(ws / UTILS, "def make_str(", "def to_str(")
    answer = svc.references("make_str", None, None, 100, None)
    assert answer["unresolved"] is True and answer["last_defined"]["renamed_to"] == "to_str"
    assert {r["line"] for r in answer["results"] if r.get("unresolved")} == _name_lines(ws, CORE, "make_str")


def test_did_you_mean_offers_no_name_from_future_imports(ws: Path) -> None:
    """The trial's probe: formatting.join_options renamed to join_opts (formatting.py has
    ``from __future__ import annotations``, which binds a name but is no candidate)."""
    svc = _svc(ws)
    svc.parse(".")
    _edit(ws / "src/click/formatting.py", "def join_options(", "def join_opts(")
    [finding] = svc.check_references(None, 500, None)["results"]
    assert {finding["line"], *finding["uses"]["lines"]} == _name_lines(ws, CORE, "join_options")
    assert finding["did_you_mean"][0] == "join_opts" and "annotations" not in finding["did_you_mean"]


def _super_calls(ws: Path, cls: str, name: str) -> set[int]:
    """Lines of core.py calling ``super().name`` in the methods of ``cls``, by ``ast``."""
    tree = ast.parse((ws / CORE).read_text("utf-8"))
    [klass] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {
        n.lineno
        for n in ast.walk(klass)
        if isinstance(n, ast.Attribute)
        and n.attr == name
        and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Name)
        and n.value.func.id == "super"
    }


def test_super_calls_resolve_to_the_base_that_defines_the_method(ws: Path) -> None:
    """Option(Parameter): super().consume_value in Option.consume_value is Parameter's, certain."""
    lines = _super_calls(ws, "Option", "consume_value")
    assert len(lines) == 1
    svc = _svc(ws)
    base = svc.references("Parameter.consume_value", CORE, "call", 100, None)
    hits = [r for r in base["results"] if r["line"] in lines]
    assert len(hits) == 1 and "uncertain" not in hits[0]
    sub = svc.references("Option.consume_value", CORE, "call", 100, None)
    assert not [r for r in sub["results"] if r["line"] in lines]
    tree = svc.references("Parameter.consume_value", CORE, None, 100, None, tests="exclude", depth=2)
    [node] = [c for c in tree["callers"] if c["in"] == "Option.consume_value"]
    assert "uncertain" not in node
    assert not [c for c in node.get("callers", []) if c["in"] == "Option.consume_value"]  # not its own caller


def test_super_follows_the_method_resolution_order(tmp_path: Path) -> None:
    """D(B, C), B(A), C(A): super().m in D reaches C.m (Python's own __mro__ says so)."""
    source = (
        "class A:\n    def m(self):\n        return 'A'\n\n\nclass B(A):\n    pass\n\n\n"
        "class C(A):\n    def m(self):\n        return 'C'\n\n\n"
        "class D(B, C):\n    def m(self):\n        return super().m()\n"
    )
    (tmp_path / "mro.py").write_text(source)
    space: dict[str, Any] = {}
    exec(compile(source, "mro.py", "exec"), space)
    owner = next(k.__name__ for k in space["D"].__mro__[1:] if "m" in vars(k))
    assert owner == "C"
    line = source.splitlines().index("        return super().m()") + 1
    svc = _svc(tmp_path)
    for cls in "ACD":  # the classes defining m
        answer = svc.references(f"{cls}.m", "mro.py", "call", 100, None)
        got = [r for r in answer["results"] if r["line"] == line]
        assert (len(got) == 1 and "uncertain" not in got[0]) == (cls == owner), cls


@pytest.mark.anyio
async def test_over_stdio_after_the_trials_renames(ws: Path) -> None:
    """The console script as a client launches it: both renames made between calls."""
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(180):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, out = await call(c, "generate_artifact", path=".")  # the store sees what the edits take away
            assert not err
            err, out = await call(c, "check_references")
            assert not err and out["data"]["total"] == 0
            _edit(ws / UTILS, "def make_str(", "def to_str(")
            _edit(ws / CORE, "    def value_from_envvar(self, ctx: Context) -> str | cabc.Sequence[str] | None:",
                  "    def envvar_value(self, ctx: Context) -> str | cabc.Sequence[str] | None:")  # fmt: skip
            err, out = await call(c, "check_references")
            assert not err and {r["missing"] for r in out["data"]["results"]} == {"make_str", "value_from_envvar"}
            err, out = await call(c, "find_references", symbol="Parameter.value_from_envvar", path=CORE)
            assert not err and out["data"]["unresolved"] is True
            assert out["data"]["last_defined"]["renamed_to"] == "Parameter.envvar_value"


def test_a_typescript_static_method_renamed_away_answers_like_python(tmp_path: Path) -> None:
    """The trial's ky edit in small: ``static create`` renamed to ``make`` in its class only;
    ``find_references('Ky.create')`` answers the uses grep finds, unresolved, with what it became."""
    (tmp_path / "Ky.ts").write_text(
        "export class Ky {\n\tstatic create(input: string): string {\n\t\treturn input;\n\t}\n}\n"
    )
    (tmp_path / "other.ts").write_text("export const make = {create: (x: string) => x};\n")
    index = "import {Ky} from './Ky.js';\n\nexport const a = Ky.create('a');\nexport const b = Ky.create('b');\n"
    (tmp_path / "index.ts").write_text(index)
    svc = _svc(tmp_path)
    svc.parse(".")
    _edit(tmp_path / "Ky.ts", "static create(", "static make(")
    grepped = {n for n, line in enumerate(index.splitlines(), 1) if "Ky.create(" in line}
    answer = svc.references("Ky.create", None, None, 100, None)
    assert answer["unresolved"] is True and {r["line"] for r in answer["results"]} == grepped
    assert all(r["unresolved"] and r["path"] == "index.ts" for r in answer["results"])
    assert answer["last_defined"]["renamed_to"] == "Ky.make" and answer["last_defined"]["path"] == "Ky.ts"
