"""``find_references(symbol, depth=N)``: incoming calls as a tree, callers then their callers.

Level 1 is the uses of the symbol that call it or pass it on (kinds ``call`` and ``reference``:
``args.map(normalizePath)`` hands it to a caller too), grouped by the symbol they lie in — each
node is a caller: ``in`` (as ``find_references`` names it, anonymous functions included),
``path``, ``line`` (its first use) and ``lines`` (every use in it). A node is expanded by asking
the same question of the function it lies in (the named part of ``in``: ``allowedDirectories →
arrow in args.map`` is expanded as ``allowedDirectories``): through its imports when it is a
function or class, by name (any ``x.name()``) when it is a method. A node is not expanded, and
says why (``cut``), when it is not a function anyone calls by name (module level, a module
variable, a registered handler, a test block), when it is already above it (a cycle), at the
depth asked, or when the answer's node budget is spent. Level 1 is paged with ``cursor``; below
it, each node lists at most :data:`CALLERS_SHOWN` callers and counts them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llmem.code.answer_pages import cursor_after, fill_page, question_tag, start_after
from llmem.code.outline import DATA_KINDS, iter_symbols
from llmem.code.references import DEFINITIONS_SHOWN, by_file, tests_kept
from llmem.core.errors import InvalidArgument, SuiteError

if TYPE_CHECKING:
    from llmem.code.references import ReferenceFinder
    from llmem.code.references_files import Use

__all__ = ["caller_tree"]

MAX_DEPTH = 5
CALLERS_SHOWN = 20
LINES_SHOWN = 20
#: Nodes in one answer, every level together.
MAX_NODES = 400
_EDGE_KINDS = ("call", "reference")


@dataclass
class _Caller:
    """The uses of one symbol inside one caller."""

    path: str
    named: str | None  # the outline symbol (the part of ``where`` before the anonymous functions)
    where: str | None
    in_tests: bool
    uses: list[Use] = field(default_factory=list)

    def order(self) -> tuple[bool, str, int, str]:
        return (self.in_tests, self.path, self.uses[0].line, self.where or "")


@dataclass
class _Budget:
    nodes: int = 0
    cycles: int = 0
    at_depth: int = 0
    over_budget: int = 0


def caller_tree(
    finder: ReferenceFinder,
    symbol: str,
    path: str | None,
    depth: int,
    tests: str,
    limit: int,
    cursor: str | None,
    answer_chars: int,
) -> dict[str, Any]:
    """Call with the finder's lock held."""
    symbol = finder.validate(symbol, None, tests)
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidArgument(
            f"depth {depth} is out of range",
            details={"field": "depth", "rule": f"1..{MAX_DEPTH}: 1 lists the uses, 2 and more the callers as a tree"},
        )
    found = finder.collect(symbol, path)
    uses = [u for u in found.uses if u.kind in _EDGE_KINDS and tests_kept(u.path, tests)]
    callers = _group(finder, uses)
    tag = question_tag("callers", symbol, found.target, tests, depth)
    start = start_after(cursor, tag, [c.order() for c in callers], "symbol, path, tests and depth") if cursor else 0
    budget = _Budget()
    root = (found.target or "", symbol)
    out: dict[str, Any] = {
        "symbol": symbol,
        "path": found.target,
        "resolution": found.resolution,
        "depth": depth,
        "definitions": found.definitions[:DEFINITIONS_SHOWN],
        "definitions_total": len(found.definitions),
        "total": len(uses),
        "by_kind": {k: sum(1 for u in uses if u.kind == k) for k in _EDGE_KINDS},
        **by_file(uses),
        "tests": tests,
        "callers_total": len(callers),
    }
    room = answer_chars - len(json.dumps(out, ensure_ascii=False)) - 800
    nodes, pos = fill_page(
        len(callers), start, limit, room, lambda i: _node(finder, callers[i], depth - 1, tests, {root}, budget)
    )
    out["count"] = len(nodes)
    out["callers"] = nodes
    out["nodes"] = budget.nodes
    cut = {
        "cycles": budget.cycles,
        "at_depth": budget.at_depth,
        "over_node_budget": budget.over_budget,
    }
    out["cut"] = {k: v for k, v in cut.items() if v}
    if budget.at_depth:
        out["note"] = (
            f"{budget.at_depth} caller(s) at depth {depth} are not expanded: ask "
            "find_references(<their in>, path=<their path>, depth=…) to go further."
        )
    if not callers:
        out["note"] = (
            f"Nothing calls or passes on {symbol} (in code{'' if tests == 'include' else ', ' + tests + ' tests'})."
        )
    out["next_cursor"] = cursor_after(tag, callers[pos - 1].order()) if pos < len(callers) and nodes else None
    return out


def _group(finder: ReferenceFinder, uses: list[Use]) -> list[_Caller]:
    """The uses by the caller they lie in, callers in answer order (code before tests)."""
    groups: dict[tuple[str, str | None], _Caller] = {}
    for u in uses:
        f = finder.src.file(u.path)
        if f is None:
            continue
        where = finder.src.enclosing(u.path, f, u.line, u.column)
        named = finder.src.enclosing(u.path, f, u.line)
        group = groups.get((u.path, where))
        if group is None:
            group = groups[(u.path, where)] = _Caller(u.path, named, where, u.in_tests())
        group.uses.append(u)
    return sorted(groups.values(), key=_Caller.order)


def _node(
    finder: ReferenceFinder,
    caller: _Caller,
    levels: int,
    tests: str,
    above: set[tuple[str, str]],
    budget: _Budget,
) -> dict[str, Any]:
    budget.nodes += 1
    lines = sorted({u.line for u in caller.uses})
    node: dict[str, Any] = {
        "in": caller.where,
        "path": caller.path,
        "line": lines[0],
        "lines": lines[:LINES_SHOWN],
        "kind": "call" if any(u.kind == "call" for u in caller.uses) else "reference",
    }
    if len(lines) > LINES_SHOWN:
        node["lines_total"] = len(lines)
    why_not = _not_callable(finder, caller)
    if why_not is not None:
        node["cut"] = why_not
        return node
    assert caller.named is not None
    me = (caller.path, caller.named)
    if me in above:
        budget.cycles += 1
        node["cut"] = f"cycle: {caller.named} is already above in this branch"
        return node
    if levels <= 0:
        budget.at_depth += 1
        node["cut"] = "depth reached"
        return node
    if budget.nodes >= MAX_NODES:
        budget.over_budget += 1
        node["cut"] = f"node budget ({MAX_NODES} per answer) spent: ask about it on its own"
        return node
    leaf = caller.named.rsplit(".", 1)[-1]
    method = _kind(finder, caller) == "method"
    try:
        found = finder.collect(leaf, None if method else caller.path)
    except SuiteError as exc:  # a caller the finder cannot take as a definition: said, not raised
        node["cut"] = f"not followed: {exc.message}"
        return node
    uses = [
        u
        for u in found.uses
        if u.kind in _EDGE_KINDS and tests_kept(u.path, tests) and (not method or u.qualifier or u.path == caller.path)
    ]
    callers = _group(finder, uses)
    if method:
        node["resolution"] = "by-name (a method: any x." + leaf + "() counts)"
    node["callers_total"] = len(callers)
    node["callers"] = [_node(finder, c, levels - 1, tests, above | {me}, budget) for c in callers[:CALLERS_SHOWN]]
    return node


def _kind(finder: ReferenceFinder, caller: _Caller) -> str | None:
    f = finder.src.file(caller.path)
    outline = finder.src.outline(caller.path, f) if f is not None else None
    if outline is None:
        return None
    for sym in iter_symbols(outline):
        if sym.qualified_name == caller.named:
            return sym.kind
    return None


def _not_callable(finder: ReferenceFinder, caller: _Caller) -> str | None:
    """Why a caller is a leaf of the tree: nothing calls it by name."""
    if caller.named is None:
        return "module level (runs when the module is loaded)"
    kind = _kind(finder, caller)
    if kind == "registration":
        return "a registered handler (called by the framework, not by name)"
    if kind == "test":
        return "a test block"
    if kind in DATA_KINDS or kind == "constant":
        return f"a {kind} (module level: runs when the module is loaded)"
    if kind in ("heading", "script", "entry-point", "dependency", "package"):
        return f"a {kind}"
    return None
