"""check_references and find_references on pallets/flask (tests/data/flask) after trial t23e's
edits: ``src/flask/sansio/`` is a namespace package (no ``__init__.py``) that the package imports
from (``from .sansio.app import App``) and that imports from it (``from ..helpers import x``).
Every expected line comes from grep or ``ast`` over the edited files, never from the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.check_python import python_file
from llmem.code.references_imports import module_name
from tests._flask import APP, HELPERS, SANSIO_APP, edit, flask_workspace, lines_with, service
from tests.conftest import MODES, call, llmem_client

SCAFFOLD = "src/flask/sansio/scaffold.py"
CONFIG = "src/flask/config.py"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return flask_workspace(tmp_path)


def _lines(answer: dict[str, Any], path: str) -> set[int]:
    return {r["line"] for r in answer["results"] if r["path"] == path}


def test_a_namespace_package_inside_a_package_is_named_through_it() -> None:
    keys = {"src/flask/__init__.py", "src/flask/app.py", SANSIO_APP, "src/flask/sansio/x/__init__.py", "tests/t.py"}
    assert module_name(SANSIO_APP, keys) == "flask.sansio.app"
    assert module_name("src/flask/sansio/x/__init__.py", keys) == "flask.sansio.x"
    assert module_name("tests/t.py", keys) == "t"
    # a folder holding only packages is where imports start (an examples/ beside its packages)
    keys = {"ex/__init__.py", "ex/tutorial/flaskr/__init__.py", "ex/tutorial/flaskr/db.py"}
    assert module_name("ex/tutorial/flaskr/db.py", keys) == "flaskr.db"


def test_a_clean_package_has_nothing_broken_and_no_base_outside(ws: Path) -> None:
    answer = service(ws).check_references("src", 500, None)
    assert answer["total"] == 0, answer["results"]
    assert not [r for r in answer["not_checked"]["by_reason"] if "flask.sansio" in r]


def test_a_method_of_the_namespace_package_class_is_found_through_the_subclass(ws: Path) -> None:
    expected = lines_with(ws, APP, "self._find_error_handler(")
    assert len(expected) == 3
    answer = service(ws).references("App._find_error_handler", None, None, 100, None)
    assert _lines(answer, APP) == expected and answer["total"] == 3
    assert "left_out" not in answer


def test_a_relative_import_out_of_the_namespace_package_is_followed(ws: Path) -> None:
    answer = service(ws).references("get_root_path", HELPERS, None, 100, None)
    assert _lines(answer, SCAFFOLD) == lines_with(ws, SCAFFOLD, "get_root_path")
    assert "left_out" not in answer


def _move_get_debug_flag(ws: Path) -> None:
    """The trial's edit C1: ``get_debug_flag`` moved from helpers.py to config.py, importers left."""
    text = (ws / HELPERS).read_text("utf-8")
    start = text.index("def get_debug_flag()")
    end = text.index("\ndef ", start + 1)
    (ws / HELPERS).write_text(text[:start] + text[end + 1 :], encoding="utf-8")
    with (ws / CONFIG).open("a", encoding="utf-8") as f:
        f.write("\n\n" + text[start:end].rstrip() + "\n")


def test_a_broken_relative_import_in_the_namespace_package_is_reported(ws: Path) -> None:
    _move_get_debug_flag(ws)
    answer = service(ws).check_references("src/flask/sansio", 500, None)
    assert {(r["path"], r["line"]) for r in answer["results"]} == {
        (SANSIO_APP, line) for line in lines_with(ws, SANSIO_APP, "import get_debug_flag")
    }


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_through_the_server_in_both_eras(ws: Path, mode: str) -> None:
    async with llmem_client(ws, mode) as c:
        err, out = await call(c, "find_references", symbol="App._find_error_handler")
        assert not err and _lines(out["data"], APP) == lines_with(ws, APP, "self._find_error_handler(")
        _move_get_debug_flag(ws)
        err, out = await call(c, "check_references", path="src/flask/sansio")
        assert not err and {r["line"] for r in out["data"]["results"]} == lines_with(
            ws, SANSIO_APP, "import get_debug_flag"
        )


@pytest.mark.anyio
async def test_over_stdio(ws: Path) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    with anyio.fail_after(180):
        async with Client(params, mode="legacy") as c:  # type: ignore[arg-type]
            err, out = await call(c, "find_references", symbol="get_root_path", path=HELPERS)
            assert not err and _lines(out["data"], SCAFFOLD) == lines_with(ws, SCAFFOLD, "get_root_path")
            err, out = await call(c, "generate_artifact", path=".")  # the store sees what the edits take away
            assert not err
            edit(ws, SANSIO_APP, "def trap_http_exception(", "def should_trap_http_exception(")
            _move_get_debug_flag(ws)
            err, out = await call(c, "check_references", path=APP)
            assert not err and {r["line"] for r in out["data"]["results"]} == lines_with(
                ws, APP, "self.trap_http_exception("
            ) | lines_with(ws, APP, "import get_debug_flag")
            err, out = await call(c, "find_references", symbol="get_debug_flag")
            assert not err and out["data"]["unresolved"] is True


def test_setattr_over_fixed_names_leaves_self_uses_judged_and_a_rename_in_the_class_is_reported(ws: Path) -> None:
    """The trial's edit: ``App.trap_http_exception`` renamed in its class only; ``Flask`` (its
    subclass) runs ``setattr(cls, method.__name__, …)`` over a tuple of its own methods."""
    service(ws).parser.parse(service(ws).resolve("."))
    edit(ws, SANSIO_APP, "def trap_http_exception(", "def should_trap_http_exception(")
    answer = service(ws).check_references(APP, 500, None)
    assert {(r["path"], r["line"]) for r in answer["results"]} == {
        (APP, line) for line in lines_with(ws, APP, "self.trap_http_exception(")
    }
    assert answer["results"][0]["renamed_to"] == "App.should_trap_http_exception"
    assert not [r for r in answer["not_checked"]["by_reason"] if "setattr" in r]


def test_setattr_names_read_from_loops_over_literals() -> None:
    source = (
        "NAMES = ('a', 'b')\n"
        "class Fixed:\n"
        "    def __init__(self):\n"
        "        for n in ('x', 'y'):\n"
        "            setattr(self, n, 0)\n"
        "        for n in NAMES:\n"
        "            setattr(self, n, 1)\n"
        "    def __init_subclass__(cls):\n"
        "        for m in (cls.f, cls.g):\n"
        "            setattr(cls, m.__name__, m)\n"
        "class Computed:\n"
        "    def __init__(self, values):\n"
        "        for n in values:\n"
        "            setattr(self, n, 0)\n"
    )
    info = python_file(source.encode())
    assert info.classes["Fixed"].dynamic is None
    assert {"x", "y", "a", "b", "f", "g"} <= info.classes["Fixed"].instance
    assert info.classes["Computed"].dynamic == "setattr on self with a computed name (in __init__)"


def test_a_member_gone_from_a_class_with_computed_setattr_is_known_gone(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "class C:\n"
        "    def __init__(self, values):\n"
        "        for name, value in values.items():\n"
        "            setattr(self, name, value)\n"
        "    def old(self):\n"
        "        return 1\n"
        "    def use(self):\n"
        "        return self.old()\n"
    )
    service(tmp_path).parser.parse(service(tmp_path).resolve("."))
    edit(tmp_path, "m.py", "def old(", "def new(")
    answer = service(tmp_path).check_references(None, 500, None)
    assert answer["total"] == 0
    [gone] = answer["known_gone"]["results"]
    assert (gone["line"], gone["missing"]) == (8, "old") and gone["renamed_to"] == "C.new"


def test_imports_of_a_moved_function_are_unresolved_never_another_of_the_same_name(ws: Path) -> None:
    """The trial's edit C1: ``get_debug_flag`` moved from helpers.py to config.py, importers left."""
    svc = service(ws)
    svc.parser.parse(svc.resolve("."))
    _move_get_debug_flag(ws)
    importers = {
        p.relative_to(ws).as_posix() for p in (ws / "src").rglob("*.py") if "import get_debug_flag" in p.read_text()
    }
    answer = service(ws).references("get_debug_flag", None, None, 100, None)
    assert answer["unresolved"] is True and answer["last_defined"]["path"] == HELPERS
    unresolved = {(r["path"], r["line"]) for r in answer["results"] if r.get("unresolved")}
    assert unresolved == {(r["path"], r["line"]) for r in answer["results"]}  # every use goes through a broken import
    assert {p for p, _ in unresolved} == importers
    assert {(p, line) for p, line in unresolved if line in lines_with(ws, p, "import get_debug_flag")} == {
        (p, line) for p in importers for line in lines_with(ws, p, "import get_debug_flag")
    }
    with_path = service(ws).references("get_debug_flag", CONFIG, None, 100, None)
    assert with_path["total"] == 0
    [reason] = with_path["left_out"]["by_reason"]
    assert reason.startswith("unresolved") and with_path["left_out"]["count"] == answer["total"]


def test_imports_of_a_function_still_defined_are_not_unresolved(ws: Path) -> None:
    answer = service(ws).references("get_debug_flag", None, None, 100, None)
    assert answer["total"] > 0 and "unresolved" not in answer
    assert service(ws).references("get_debug_flag", HELPERS, None, 100, None)["total"] == answer["total"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_moved_function_through_the_server(ws: Path, mode: str) -> None:
    async with llmem_client(ws, mode) as c:
        err, out = await call(c, "generate_artifact", path=".")
        assert not err
        _move_get_debug_flag(ws)
        err, out = await call(c, "find_references", symbol="get_debug_flag")
        assert not err and out["data"]["unresolved"] is True and "import it from where" in out["nextAction"]
        assert all(r.get("unresolved") for r in out["data"]["results"])


def test_a_class_defined_several_times_in_one_function_is_not_judged_against_a_later_one(ws: Path) -> None:
    """flask's test_find_best_app redefines ``class Module`` a dozen times, each with other attributes."""
    test_cli = "tests/test_cli.py"
    assert len(lines_with(ws, test_cli, "    class Module:")) > 2
    answer = service(ws).check_references(test_cli, 500, None)
    assert answer["total"] == 0, answer["results"]
    assert answer["not_checked"]["by_reason"]["a class with several definitions in one scope"] > 0


def test_a_clean_checkout_has_nothing_broken(ws: Path) -> None:
    answer = service(ws).check_references(None, 500, None)
    assert answer["total"] == 0, answer["results"]


def test_a_class_defined_once_is_still_judged(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def f():\n    class M:\n        a = 1\n    return M.b\n")
    [finding] = service(tmp_path).check_references(None, 500, None)["results"]
    assert (finding["line"], finding["missing"]) == (4, "b")
