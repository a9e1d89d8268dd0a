"""``find_references(symbol, depth=N, tests='only')``: the tests that reach a symbol through the call
tree, at any level, each with the path of calls from the test down to the symbol.

The tree is walked with every caller kept (code and tests); each node in a test file (a test
function, a test block, a helper of the tests) is a test reaching the symbol. A node another part of
the tree already expanded (``see``) is not walked again: its tests are found once, through the
first path. What is not followed is said: nodes cut at the depth (a larger depth may reach more
tests), and tests that run the code through a CLI runner (click's ``CliRunner.invoke``, a
subprocess, a web framework's test client): those name no function of the tree, so the list is a
floor, and the tests that take a framework's fixture (``client``, ``app``, ``runner``) are counted
as those that may reach the symbol that way (:func:`through_fixtures`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from llmem.code.outline import is_test_path, iter_symbols

if TYPE_CHECKING:
    from llmem.code.references_files import WorkspaceFiles

__all__ = ["DISPATCH_FIXTURES", "NOT_FOLLOWED", "test_functions", "tests_reaching", "through_fixtures"]

NOT_FOLLOWED = (
    "tests that run the code through a CLI runner (click's CliRunner.invoke, Typer's, a subprocess) or "
    "a framework's dispatch call no function of this tree by name: they are not found here"
)

#: Fixtures through which a test drives an app or a CLI by its dispatch (pytest, flask, click, django).
DISPATCH_FIXTURES = frozenset(
    {"client", "app", "test_client", "async_client", "app_client", "runner", "cli_runner", "rf", "live_server"}
)
_PARAMS = re.compile(r"\((.*)\)", re.S)


def test_functions(src: WorkspaceFiles) -> Iterator[tuple[str, str, str]]:
    """(path, qualified name, signature) of every test function of the workspace's Python test files."""
    for key in src.paths():
        if not (key.endswith(".py") and is_test_path(key)):
            continue
        f = src.file(key)
        outline = src.outline(key, f) if f is not None else None
        for sym in iter_symbols(outline) if outline is not None else ():
            if sym.kind == "test":  # the outline's own judgement of a test function
                yield key, sym.qualified_name, sym.signature


def through_fixtures(tests: Iterable[tuple[str, str, str]], found: set[tuple[str, str]]) -> dict[str, Any]:
    """Of ``tests`` (path, qualified name, signature of each test function of the workspace), those
    not in ``found`` (path, name) that take a :data:`DISPATCH_FIXTURES` fixture: they may run the
    symbol through a framework's dispatch, which is not followed. A count and a few, by fixture."""
    maybe: list[dict[str, str]] = []
    for path, name, signature in tests:
        if (path, name) in found:
            continue
        params = _PARAMS.search(signature)
        names = {p.split(":")[0].split("=")[0].strip(" *") for p in params.group(1).split(",")} if params else set()
        fixture = sorted(names & DISPATCH_FIXTURES)
        if fixture:
            maybe.append({"path": path, "in": name, "fixture": fixture[0]})
    return {
        "count": len(maybe),
        "means": "tests taking a fixture that drives the app or CLI by its dispatch (" + ", ".join(
            sorted(DISPATCH_FIXTURES)) + "): they may reach the symbol that way; not judged",
        "first": maybe[:10],
    }  # fmt: skip


def tests_reaching(nodes: list[dict[str, Any]], symbol: str) -> list[dict[str, Any]]:
    """Each test node of the tree once (by path and ``in``), in path and line order, with
    ``calls``: the test, the functions between, then ``symbol``."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for node, chain in _walk(nodes, []):
        if not (is_test_path(node["path"]) or node.get("in_kind") == "test block"):
            continue
        key = (node["path"], str(node["in"]))
        if key in found and len(found[key]["calls"]) <= len(chain) + 2:
            continue  # the shortest path of calls is the one said
        found[key] = {
            "in": node["in"],
            **({"in_kind": node["in_kind"]} if "in_kind" in node else {}),
            "path": node["path"],
            "line": node["line"],
            "text": node["text"],
            "calls": [node["in"], *(n["in"] for n in reversed(chain)), symbol],
            "levels": len(chain) + 1,
        }
        doubtful = [n for n in [*chain, node] if n.get("uncertain")]
        if doubtful:  # a call on the way whose receiver's type is not known: the path may not be taken
            found[key]["uncertain"] = True
            found[key]["why"] = f"{doubtful[0]['in']}: {doubtful[0]['why']}"
    return sorted(found.values(), key=lambda t: (t["path"], t["line"], str(t["in"])))


def _walk(
    nodes: list[dict[str, Any]], chain: list[dict[str, Any]]
) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Every node with the nodes above it (the symbol's direct caller first)."""
    for node in nodes:
        yield node, chain
        yield from _walk(node.get("callers", []), [*chain, node])
