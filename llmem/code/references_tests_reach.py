"""``find_references(symbol, depth=N, tests='only')``: the tests that reach a symbol through the call
tree, at any level, each with the path of calls from the test down to the symbol.

The tree is walked with every caller kept (code and tests); each node in a test file (a test
function, a test block, a helper of the tests) is a test reaching the symbol. A node another part of
the tree already expanded (``see``) is not walked again: its tests are found once, through the
first path. What is not followed is said: nodes cut at the depth (a larger depth may reach more
tests), and tests that run the code through a CLI runner (click's ``CliRunner.invoke``, a
subprocess): those name no function of the tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from llmem.code.outline import is_test_path

__all__ = ["NOT_FOLLOWED", "tests_reaching"]

NOT_FOLLOWED = (
    "tests that run the code through a CLI runner (click's CliRunner.invoke, Typer's, a subprocess) or "
    "a framework's dispatch call no function of this tree by name: they are not found here"
)


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
