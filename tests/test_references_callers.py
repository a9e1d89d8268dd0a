"""find_references an agent reads in one page: tests left out or kept apart (code first), counts per
file, incoming calls as a tree (depth=N), and the anonymous function a use sits in, on real files
of modelcontextprotocol/servers (tests/data/servers, with their tests), checked against grep."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.code.outline import is_test_path
from llmem.code.references import ReferenceFinder
from llmem.code.server import build_server
from llmem.core.config import Limits, ServerConfig
from llmem.core.errors import InvalidArgument
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call

SERVERS = ROOT / "tests" / "data" / "servers"
FS = "src/filesystem"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("callers") / "ws"
    shutil.copytree(SERVERS, ws)
    return ws


@pytest.fixture(scope="module")
def svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=200_000))


def _grep(ws: Path, pattern: str) -> dict[tuple[str, int], str]:
    """Lines of the code files matching ``pattern`` (``grep -rn``): (path, line) → text."""
    found = {}
    for file in sorted(ws.rglob("*")):
        if file.suffix not in (".ts", ".py") or ".llmem" in file.parts:
            continue
        for n, line in enumerate(file.read_text("utf-8").splitlines(), 1):
            if re.search(pattern, line):
                found[(file.relative_to(ws).as_posix(), n)] = line
    return found


def _uses(answer: dict[str, Any]) -> list[tuple[str, int]]:
    return [(r["path"], r["line"]) for r in answer["results"]]


def test_tests_left_out_kept_apart_and_counted_per_file(svc: Llmem, ws: Path) -> None:
    """normalizePath: its 56 mentions in path-utils.test.ts used to fill page 1 before any caller."""
    grep = _grep(ws, r"\bnormalizePath\b")
    code_lines = {k for k, text in grep.items() if not is_test_path(k[0]) and "export function" not in text}
    test_lines = {k for k in grep if is_test_path(k[0])}
    every = svc.references("normalizePath", None, None, 500, None)
    first = svc.references("normalizePath", None, None, 10, None)
    assert set(_uses(first)) <= code_lines  # page 1: code, no test
    assert every["in_tests"] == sum(every["by_file"][p] for p in {p for p, _ in test_lines})
    order = [is_test_path(p) for p, _ in _uses(every) if p]
    assert order == sorted(order)  # code before tests
    assert every["by_file"] == {
        p: sum(1 for r in every["results"] if r["path"] == p)
        for p in dict.fromkeys(r["path"] for r in every["results"])
    }
    out = svc.references("normalizePath", None, None, 500, None, tests="exclude")
    assert {(p, n) for p, n in _uses(out)} == code_lines
    assert out["tests_left_out"] == every["in_tests"] and out["total"] == every["total"] - every["in_tests"]
    only = svc.references("normalizePath", None, None, 500, None, tests="only")
    assert {(p, n) for p, n in _uses(only)} <= test_lines and only["total"] == every["in_tests"]
    assert only["non_tests_left_out"] == out["total"]
    # A cursor belongs to its question: tests= is part of it.
    page = svc.references("normalizePath", None, None, 2, None, tests="exclude")
    with pytest.raises(InvalidArgument) as bad:
        svc.references("normalizePath", None, None, 2, page["next_cursor"], tests="include")
    assert bad.value.details["field"] == "cursor"
    with pytest.raises(InvalidArgument) as wrong:
        svc.references("normalizePath", None, None, 2, None, tests="skip")
    assert wrong.value.details["field"] == "tests"


def test_a_use_in_an_anonymous_function_names_it(tmp_path: Path) -> None:
    finder = ReferenceFinder(SERVERS)
    answer = finder.find("normalizePath", path=f"{FS}/path-utils.ts", limit=500)
    where = {(r["path"], r["line"]): r["in"] for r in answer["results"]}
    assert where[(f"{FS}/index.ts", 49)] == where[(f"{FS}/index.ts", 54)] == "allowedDirectories → arrow in args.map"
    assert where[(f"{FS}/lib.ts", 105)] == "validatePath"  # a named function: as before
    calls = finder.find("validatePath", path=f"{FS}/lib.ts", limit=500)
    named = {r["line"]: r["in"] for r in calls["results"] if r["path"] == f"{FS}/index.ts"}
    assert named[340] == "read_multiple_files → arrow in args.paths.map"  # inside a registered handler
    assert named[280] == "read_media_file"  # the handler itself is the registration, not repeated
    (tmp_path / "m.py").write_text(
        "def check(x):\n    return x\n\n"
        "def rank(items):\n    by = sorted(items, key=lambda i: check(i))\n    f = lambda j: check(j)\n    return by, f\n"
    )
    py = ReferenceFinder(tmp_path).find("check", limit=50)
    assert [r["in"] for r in py["results"]] == ["rank → lambda in sorted(key=)", "rank → f"]


def _tree_lines(nodes: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(n["path"], line) for n in nodes for line in n["lines"]}


def test_callers_of_callers_match_grep(svc: Llmem, ws: Path) -> None:
    """normalizePath to depth 2, tests left out: level 1 is every line grep finds calling it, grouped
    by the function they lie in; level 2 the lines calling those functions."""
    answer = svc.references("normalizePath", f"{FS}/path-utils.ts", None, 50, None, tests="exclude", depth=2)
    calls = {k for k, t in _grep(ws, r"\bnormalizePath\(").items() if not is_test_path(k[0]) and "function" not in t}
    assert _tree_lines(answer["callers"]) == calls
    assert answer["callers_total"] == answer["count"] == 4
    by_in = {n["in"]: n for n in answer["callers"]}
    assert by_in["allowedDirectories → arrow in args.map"]["cut"].startswith("a variable")
    validate = by_in["validatePath"]
    grep = {k for k, t in _grep(ws, r"\bvalidatePath\(").items() if not is_test_path(k[0]) and "function" not in t}
    assert _tree_lines(validate["callers"]) == grep and validate["callers_total"] == len(validate["callers"])
    # index.ts calls it in ten server.registerTool handlers (leaves: the framework calls them) and in
    # two functions, readTextFileHandler and directory_tree's buildTree (followed: at the depth asked).
    handlers = [n for n in validate["callers"] if n.get("cut", "").startswith("a registered handler")]
    registered = re.findall(r"server\.registerTool\(\s*\"(\w+)\"", (ws / FS / "index.ts").read_text("utf-8"))
    assert {n["in"].split(" → ")[0] for n in handlers} <= set(registered) and len(handlers) == 10
    functions = {n["in"]: n.get("cut") for n in validate["callers"] if n not in handlers}
    assert functions == {
        "readTextFileHandler": "depth reached",
        "directory_tree.buildTree": "depth reached",
        "searchFilesWithValidation.search": "depth reached",
    }
    assert by_in["parseRootUri"]["callers"][0]["in"] == "getValidRootDirectories"
    relative = by_in["resolveRelativePathAgainstAllowedDirectories"]["callers"]
    assert [(n["in"], n["lines"]) for n in relative] == [("validatePath", [103])]
    assert answer["cut"]["depth_reached_nodes"] >= 3 and "depth" in answer["note"]


def test_python_method_callers_and_a_cycle_cut(svc: Llmem, tmp_path: Path) -> None:
    answer = svc.references("get_zoneinfo", "src/time/src/mcp_server_time/server.py", None, 50, None, depth=3)
    methods = {n["in"]: n for n in answer["callers"]}
    assert set(methods) == {"TimeServer.get_current_time", "TimeServer.convert_time"}
    assert methods["TimeServer.convert_time"]["lines"] == [77, 78]
    for name, line in (("get_current_time", 194), ("convert_time", 203)):
        [up] = methods[f"TimeServer.{name}"]["callers"]
        assert (up["in"], up["lines"]) == ("serve.call_tool", [line]) and up["cut"].startswith("a registered handler")
        assert methods[f"TimeServer.{name}"]["resolution"].startswith("receivers")
    (tmp_path / "loop.py").write_text(
        "def ping(n):\n    return pong(n - 1)\n\ndef pong(n):\n    return ping(n) if n else 0\n"
    )
    loop = Llmem(ArtifactStore(tmp_path / ".llmem", tmp_path), Limits())
    tree = loop.references("ping", "loop.py", None, 50, None, depth=4)
    [pong] = tree["callers"]
    [ping] = pong["callers"]
    assert (pong["in"], ping["in"]) == ("pong", "ping")  # ping, the question itself: a cycle, cut and said
    assert ping["cut"].startswith("cycle") and "callers" not in ping and tree["cut"]["cycle_nodes"] == 1
    with pytest.raises(InvalidArgument) as deep:
        loop.references("ping", "loop.py", None, 50, None, depth=9)
    assert deep.value.details["field"] == "depth"


def test_callers_page_by_cursor(svc: Llmem) -> None:
    whole = svc.references("validatePath", f"{FS}/lib.ts", None, 500, None, depth=2)
    seen: list[tuple[str, int]] = []
    page = svc.references("validatePath", f"{FS}/lib.ts", None, 3, None, depth=2)
    while True:
        seen += [(n["path"], n["line"]) for n in page["callers"]]
        if not page["next_cursor"]:
            break
        page = svc.references("validatePath", f"{FS}/lib.ts", None, 3, page["next_cursor"], depth=2)
    assert seen == [(n["path"], n["line"]) for n in whole["callers"]] and len(seen) == whole["callers_total"]


# -- through the server ----------------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=20_000)))
    async with Client(server, mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_tests_and_depth_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="normalizePath", tests="exclude", limit=500)
    assert not err and out["data"]["tests_left_out"] > 50 and out["data"]["in_tests"] == out["data"]["tests_left_out"]
    err, out = await call(client, "find_references", symbol="normalizePath", path=f"{FS}/path-utils.ts", depth=2)
    assert not err and {n["in"] for n in out["data"]["callers"]} >= {"validatePath", "parseRootUri"}
    err, out = await call(client, "find_references", symbol="normalizePath", tests="some")
    assert err and out["error"]["details"]["field"] == "tests"
    err, out = await call(client, "find_references", symbol="normalizePath", depth=0)
    assert err and "depth" in out["error"]["message"]
