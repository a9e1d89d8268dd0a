"""``find_references(symbol, depth=N)``: incoming calls as a tree, callers then their callers.

Level 1 is the uses of the symbol that call it or pass it on (kinds ``call`` and ``reference``:
``args.map(normalizePath)`` hands it to a caller too; a parameter's or keyword argument's name,
``Database(memory=True)``, is never one), grouped by the symbol they lie in — each node is a
caller: ``in`` (as ``find_references`` names it, anonymous functions included), ``in_kind`` (the
outline's kind of what it lies in: a function, a method, a test block …), ``path``, ``line`` (its
first use), ``lines`` (every use in it) and ``text`` (the first use's call, its arguments too).

Which uses are of the symbol is judged as ``find_references(path=…)`` judges them
(:mod:`llmem.code.references_receivers`): a method's uses are ``x.name`` wherever ``x`` may be
an instance of its class, those whose receiver is provably of another type (a list, a dict, a
module, another class) left out (counted in ``left_out``), those whose receiver's type is not known
kept and marked ``uncertain`` with why; a function's uses are its name where it is bound to it,
not a local of the same name nor another object's attribute. A node is expanded by asking the same
question of the symbol it lies in (the named part of ``in``: ``allowedDirectories → arrow in
args.map`` is expanded as ``allowedDirectories``).

Only calls are edges, and a reference that hands the symbol on (an argument, a returned or
stored value) from a receiver of known type: a comparison or a read is none (``not_in_tree``).
``C(...)`` is a caller of ``C.__init__`` (``constructs``). A node holding only uses on a receiver
of unknown type is shown with why and not expanded (``cut``: uncertain); ``tests='only'`` follows
it but lists the tests reached that way apart (``uncertain_tests``).

A node is not expanded, and says why (``cut``), when it is not a function anyone calls by name
(module level, a module variable, a registered handler, a test block), when it is already above it
(a cycle: the same definition), at the depth asked, or when the answer's node budget is spent. A
CLI command (``@cli.command()``, ``@click.command``, ``@app.command`` of Typer …) is an entry
point: ``entry_point`` says so, and its callers are still looked for (``ctx.invoke``). A node with
no caller in code but callers in tests (``tests='exclude'``) says ``only_from_tests``; the answer's
``reached_from`` counts the leaves of the tree by what they are (entry points, tests, cut at the
depth …). Level 1 is paged with ``cursor``; below it, each node lists at most :data:`CALLERS_SHOWN`
callers and counts them all.

A caller reached by several paths is expanded once: its later occurrences say ``see`` (where in the
answer its callers are: ``callers[0].callers[1]``) unless they have more levels left below them;
``distinct_callers`` counts each caller once. What depth=1 says beside the calls is counted, not
dropped: ``not_in_tree`` (text mentions, imports …) and, with ``path``, ``left_out`` by reason.
``tests='exclude'`` leaves tests out at every level (``tests_left_out_in_tree``); ``tests='only'``
walks every caller and answers the tests it reaches (:mod:`llmem.code.references_tests_reach`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llmem.code.answer_pages import cursor_after, fill_page, question_tag, start_after
from llmem.code.cli_commands import cli_command
from llmem.code.outline import DATA_KINDS, iter_symbols
from llmem.code.references import DEFINITIONS_SHOWN, NOT_IT, by_file, not_it_reason, tests_kept
from llmem.code.references_constructors import constructor_calls
from llmem.code.references_edges import passed_on
from llmem.code.references_receivers import MAYBE, NO, Judge
from llmem.core.errors import InvalidArgument, SuiteError

if TYPE_CHECKING:
    from llmem.code.outline import Symbol
    from llmem.code.references import Found, ReferenceFinder
    from llmem.code.references_files import Use

__all__ = ["caller_tree"]

MAX_DEPTH = 5
CALLERS_SHOWN = 20
LINES_SHOWN = 20
TEXT_CHARS = 200
#: Nodes in one answer, every level together.
MAX_NODES = 400
UNCERTAIN_TESTS_SHOWN = 10
_EDGE_KINDS = ("call", "reference")
NOT_EDGE = "reference read, not called nor handed on (a comparison, a truth test) or on a receiver of unknown type"


@dataclass
class _Caller:
    """The uses of one symbol inside one caller."""

    path: str
    named: str | None  # the outline symbol (the part of ``where`` before the anonymous functions)
    where: str | None
    in_tests: bool
    uses: list[Use] = field(default_factory=list)
    uncertain: dict[tuple[str, int, int], str] = field(default_factory=dict)
    #: the classes its calls construct (``Router(...)`` as a caller of ``Router.__init__``)
    constructs: set[str] = field(default_factory=set)

    def order(self) -> tuple[bool, str, int, str]:
        return (self.in_tests, self.path, self.uses[0].line, self.where or "")


@dataclass
class _Budget:
    nodes: int = 0
    cycles: int = 0
    at_depth: int = 0
    uncertain_self: int = 0
    #: nodes holding only uses on a receiver of unknown type: shown with why, not expanded
    uncertain: int = 0
    #: tests='only': uncertain nodes are followed too, the tests reached through them listed apart
    follow_uncertain: bool = False
    over_budget: int = 0
    #: nodes whose callers another node of the answer already lists (``see``)
    repeats: int = 0
    #: each caller expanded so far → where (``callers[0].callers[1]``), to how many levels, its callers_total
    expanded: dict[tuple[str, str], tuple[str, int, int]] = field(default_factory=dict)
    #: uses in tests left out below level 1 (tests='exclude')
    tests_out: int = 0
    #: every caller the answer names, once: (path, in)
    distinct: set[tuple[str, str | None]] = field(default_factory=set)
    #: the tree's leaves by what they are (entry points, tests, cut at the depth …)
    leaves: Counter[str] = field(default_factory=Counter)


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
    from llmem.code.references_qualified import qualified_target

    symbol, path, only = qualified_target(finder, finder.private_twin(finder.validate(symbol, None, tests)), path)
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidArgument(
            f"depth {depth} is out of range",
            details={"field": "depth", "rule": f"1..{MAX_DEPTH}: 1 lists the uses, 2 and more the callers as a tree"},
        )
    found = finder.collect(symbol, path, only)
    # tests='only' with depth: the tests that reach it at any level, so the tree keeps every caller
    walk = "include" if tests == "only" else tests
    uses, uncertain, left_out, tests_out = _edges(finder, found, walk)
    constructs = constructor_calls(finder, found)
    callers = _group(finder, uses, uncertain, constructs)
    tag = question_tag("callers", symbol, found.target, tests, depth, only)
    same = "symbol, path, tests and depth"
    start = start_after(cursor, tag, [c.order() for c in callers], same) if cursor and tests != "only" else 0
    budget = _Budget()
    roots = {(d["path"], d["symbol"]) for d in found.definitions}
    out: dict[str, Any] = {
        "symbol": symbol,
        **({"qualified": only} if only else {}),
        "path": found.target,
        "resolution": found.resolution,
        "depth": depth,
        "definitions": found.definitions[:DEFINITIONS_SHOWN],
        "definitions_total": len(found.definitions),
        "total": len(uses),
        "by_kind": {k: sum(1 for u in uses if u.kind == k and u.key() not in constructs) for k in _EDGE_KINDS},
        **({"constructor_calls": sum(1 for u in uses if u.key() in constructs)} if constructs else {}),
        **by_file(uses),
        "tests": tests,
        "callers_total": len(callers),
    }
    if tests_out:
        out["tests_left_out"] = tests_out
    one_level = f"find_references({symbol!r}" + (f", path={found.target!r}" if found.target else "") + ")"
    kept = {u.key() for u in uses}
    others = Counter(
        u.kind if u.kind not in _EDGE_KINDS else NOT_EDGE
        for u in found.uses
        if u.key() not in kept and tests_kept(u.path, tests)
    )
    if others:
        out["not_in_tree"] = {
            "count": sum(others.values()),
            "by_kind": dict(others.most_common()),
            "how": f"{one_level} (depth=1) lists them",
        }
    if found.target is not None:  # what grep -w finds beyond the uses, as depth=1 counts it
        whole = finder.left_out(symbol, found)
        if whole is not None:  # by file is depth=1's to say
            out["left_out"] = {
                "count": whole["count"],
                "by_reason": whole["by_reason"],
                "how": f"{one_level} (depth=1) counts them by file; without path it lists them",
            }
    elif left_out:
        out["left_out"] = {
            "count": sum(left_out.values()),
            "by_reason": dict(left_out.most_common()),
            "how": "find_references(symbol) without depth lists every occurrence of the name",
        }
    if uncertain:
        out["uncertain"] = len(uncertain)
        out["uncertain_means"] = (
            "uses whose receiver's type is not known (an unannotated parameter, a call's result): they may be of "
            "another class's member of the same name; the nodes holding only such uses say uncertain and why"
        )
    room = answer_chars - len(json.dumps(out, ensure_ascii=False)) - 1_000
    if tests == "only":
        return _tests_only(finder, out, callers, depth, roots, budget, tag, cursor, limit, room)
    nodes, pos = fill_page(
        len(callers),
        start,
        limit,
        room,
        lambda i: _node(finder, callers[i], depth - 1, tests, roots, budget, f"callers[{i - start}]"),
    )
    out["count"] = len(nodes)
    out["callers"] = nodes
    out["nodes"] = budget.nodes
    out["distinct_callers"] = len(budget.distinct)
    cut = {  # how many nodes were not expanded, by why
        "cycle_nodes": budget.cycles,
        "depth_reached_nodes": budget.at_depth,
        "uncertain_self_nodes": budget.uncertain_self,
        "uncertain_nodes": budget.uncertain,
        "over_node_budget_nodes": budget.over_budget,
        "see_nodes": budget.repeats,
    }
    out["cut"] = {k: v for k, v in cut.items() if v}
    if budget.tests_out:
        out["tests_left_out_in_tree"] = budget.tests_out
    if budget.leaves:
        out["reached_from"] = dict(budget.leaves.most_common())
        out["reached_from_means"] = (
            "the leaves of the tree on this page by what they are: an entry point (a CLI command, a registered "
            "handler, module level), a test, or not followed (the depth reached, a cycle, an uncertain receiver, the node budget)"
        )
    if budget.at_depth:
        out["note"] = (
            f"{budget.at_depth} caller(s) at depth {depth} are not expanded: ask "
            "find_references(<their in>, path=<their path>, depth=…) to go further."
        )
    if not callers:
        out["note"] = f"Nothing calls or passes on {symbol}" + (
            f" outside tests; {tests_out} use(s) in tests were left out (tests='exclude'): only tests reach it."
            if tests_out
            else " outside tests."
            if tests == "exclude"
            else "."
        )
    out["next_cursor"] = cursor_after(tag, callers[pos - 1].order()) if pos < len(callers) and nodes else None
    return out


def _tests_only(
    finder: ReferenceFinder,
    out: dict[str, Any],
    callers: list[_Caller],
    depth: int,
    roots: set[tuple[str, str]],
    budget: _Budget,
    tag: str,
    cursor: str | None,
    limit: int,
    room: int,
) -> dict[str, Any]:
    """The answer of ``tests='only'``: the tests the whole tree reaches, paged, not the tree."""
    from llmem.code.references_tests_reach import NOT_FOLLOWED, test_functions, tests_reaching, through_fixtures

    budget.follow_uncertain = True
    tree = [_node(finder, c, depth - 1, "include", roots, budget, f"callers[{i}]") for i, c in enumerate(callers)]
    every = tests_reaching(tree, out.get("qualified") or out["symbol"])
    reaching = [t for t in every if not t.get("uncertain")]
    doubtful = [t for t in every if t.get("uncertain")]
    if doubtful:
        out["uncertain_tests"] = {
            "count": len(doubtful),
            "means": "tests reaching it only through a call on a receiver of unknown type (why says which): "
            "not counted as reaching; they may not run it",
            "first": doubtful[:UNCERTAIN_TESTS_SHOWN],
        }
    orders = [(t["path"], t["line"], str(t["in"])) for t in reaching]
    start = start_after(cursor, tag, orders, "symbol, path, tests and depth") if cursor else 0
    out["tests_total"] = len(reaching)
    out["callers_followed"] = budget.nodes
    out["distinct_callers"] = len(budget.distinct)
    if budget.at_depth or budget.over_budget:
        out["not_expanded"] = {
            **({"depth_reached_nodes": budget.at_depth} if budget.at_depth else {}),
            **({"over_node_budget_nodes": budget.over_budget} if budget.over_budget else {}),
            "means": "callers not followed further: a larger depth (at most 5) may reach more tests",
        }
    out["not_followed"] = NOT_FOLLOWED
    out["tests_found_are_a_floor"] = True
    maybe = through_fixtures(test_functions(finder.src), {(t["path"], str(t["in"])) for t in reaching})
    if maybe["count"]:
        out["maybe_through_dispatch"] = maybe
    page, pos = fill_page(len(reaching), start, limit, room, lambda i: reaching[i])
    out["count"] = len(page)
    out["tests_reaching"] = page
    if not reaching:
        out["note"] = (
            f"No test reaches {out['symbol']} within depth {depth} through calls by name "
            f"({budget.nodes} caller(s) followed)"
            + (f"; {budget.at_depth} were not expanded at the depth" if budget.at_depth else "")
            + (f"; {len(doubtful)} may, through an uncertain call (uncertain_tests)." if doubtful else ".")
        )
    out["next_cursor"] = cursor_after(tag, orders[pos - 1]) if pos < len(reaching) and page else None
    return out


def _edges(
    finder: ReferenceFinder, found: Found, tests: str
) -> tuple[list[Use], dict[tuple[str, int, int], str], Counter[str], int]:
    """The uses of ``found`` that call or pass on its definitions, under ``tests``; those that may
    be (place → why); how many were judged not to be, by reason; how many were left out as tests."""
    code = [u for u in found.uses if u.kind in _EDGE_KINDS]
    left_out: Counter[str] = Counter(found.dropped.values()) if found.target is not None else Counter()
    uncertain = dict(found.uncertain)
    if found.target is None and found.definitions:  # by name: judged here against every definition
        judge = Judge(finder.src, found.files, found.definitions)
        kept = []
        for u in code:
            verdict = judge.judge(u)
            if verdict.verdict == NO:
                left_out[not_it_reason(u, verdict, judge.members_only)] += 1
                continue
            if verdict.verdict == MAYBE:
                uncertain[u.key()] = verdict.why
            kept.append(u)
        code = kept
    parameters = sum(1 for u in found.uses if u.kind == "parameter")
    if parameters and found.target is None:
        left_out[NOT_IT["parameter"]] += parameters
    code = [u for u in code if u.kind == "call" or _hands_on(finder, u, u.key() in uncertain)]
    constructs = constructor_calls(finder, found)
    code += [u for u, _cls in constructs.values()]
    tests_out = sum(1 for u in code if not tests_kept(u.path, tests)) if tests == "exclude" else 0
    code = [u for u in code if tests_kept(u.path, tests)]
    keys = {u.key() for u in code}
    return code, {k: v for k, v in uncertain.items() if k in keys}, left_out, tests_out


def _hands_on(finder: ReferenceFinder, u: Use, uncertain: bool) -> bool:
    """Whether a use that is no call is an edge: the object handed on (an argument, a returned or
    stored value) from a receiver of known type; a comparison or a read never is."""
    if uncertain:
        return False
    f = finder.src.file(u.path)
    if f is None or f.data is None or not u.path.endswith((".py", ".pyi")):
        return True
    return passed_on(f.data.decode(errors="replace"), u.line, u.column)


def _group(
    finder: ReferenceFinder,
    uses: list[Use],
    uncertain: dict[tuple[str, int, int], str],
    constructs: dict[tuple[str, int, int], tuple[Use, str]] | None = None,
) -> list[_Caller]:
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
        if constructs and u.key() in constructs:
            group.constructs.add(constructs[u.key()][1])
        if u.key() in uncertain:
            group.uncertain[u.key()] = uncertain[u.key()]
    return sorted(groups.values(), key=_Caller.order)


def _node(
    finder: ReferenceFinder,
    caller: _Caller,
    levels: int,
    tests: str,
    above: set[tuple[str, str]],
    budget: _Budget,
    at: str,
) -> dict[str, Any]:
    budget.nodes += 1
    budget.distinct.add((caller.path, caller.where))
    lines = sorted({u.line for u in caller.uses})
    sym = _symbol(finder, caller)
    node: dict[str, Any] = {
        "in": caller.where,
        **({"in_kind": "test block" if sym.kind == "test" else sym.kind} if sym is not None else {}),
        "path": caller.path,
        "line": lines[0],
        "lines": lines[:LINES_SHOWN],
        "kind": "call" if any(u.kind == "call" for u in caller.uses) else "reference",
        "text": _text(finder, caller.uses[0]),
    }
    if caller.constructs:
        node["constructs"] = sorted(caller.constructs)
    if len(lines) > LINES_SHOWN:
        node["lines_total"] = len(lines)
    if caller.uncertain and len(caller.uncertain) == len(caller.uses):
        node["uncertain"] = True
        node["why"] = next(iter(caller.uncertain.values()))
    why_not = _not_callable(caller, sym)
    if why_not is not None:
        node["cut"] = why_not
        budget.leaves[
            "a test" if caller.in_tests or (sym is not None and sym.kind == "test") else "an entry point"
        ] += 1
        return node
    assert caller.named is not None
    me = (caller.path, caller.named)
    if me in above and node.get("uncertain"):
        # x.name() inside name itself on an x of unknown type (self._pool.handle_request in
        # handle_request): another object's method as a rule, not recursion
        budget.uncertain_self += 1
        budget.leaves["not followed (an uncertain use inside the symbol itself)"] += 1
        node["cut"] = (
            f"not followed: a use inside {caller.named} itself on a receiver of unknown type "
            "(another object's method of the same name, it seems: not recursion)"
        )
        return node
    if me in above:
        budget.cycles += 1
        budget.leaves["not followed (a cycle)"] += 1
        node["cut"] = f"cycle: {caller.named} ({caller.path}) is already above in this branch"
        return node
    entry = _entry_point(sym)
    if entry is not None:
        node["entry_point"] = entry
    if node.get("uncertain") and not budget.follow_uncertain:
        budget.uncertain += 1
        budget.leaves["an entry point" if entry else "not followed (an uncertain receiver)"] += 1
        node["cut"] = "uncertain: the receiver's type is not known, so this may not call it; not followed"
        return node
    seen = budget.expanded.get(me)
    if seen is not None and (seen[1] >= levels or levels <= 0):
        # Its callers are already listed in this answer (E#2: 26 nodes, about 10 distinct): once.
        budget.repeats += 1
        node["see"] = seen[0]
        node["callers_total"] = seen[2]
        return node
    if levels <= 0:
        budget.at_depth += 1
        budget.leaves["an entry point" if entry else "not followed (the depth reached)"] += 1
        node["cut"] = "depth reached"
        return node
    if budget.nodes >= MAX_NODES:
        budget.over_budget += 1
        budget.leaves["not followed (the node budget)"] += 1
        node["cut"] = f"node budget ({MAX_NODES} per answer) spent: ask about it on its own"
        return node
    leaf = caller.named.rsplit(".", 1)[-1]
    try:
        found = finder.collect(leaf, caller.path, only=caller.named)
    except SuiteError as exc:  # a caller the finder cannot take as a definition: said, not raised
        node["cut"] = f"not followed: {exc.message}"
        budget.leaves["not followed"] += 1
        return node
    uses, uncertain, _left_out, tests_out = _edges(finder, found, tests)
    callers = _group(finder, uses, uncertain, constructor_calls(finder, found))
    if found.resolution == "receivers":
        node["resolution"] = f"receivers (a member: any x.{leaf}() where x may be of its class)"
    node["callers_total"] = len(callers)
    if callers:
        budget.expanded.setdefault(me, (at, levels, len(callers)))
    if tests_out:
        budget.tests_out += tests_out
        node["tests_left_out"] = tests_out
        if not callers:
            node["only_from_tests"] = True
    if not callers:
        budget.leaves[
            "an entry point" if entry else "a test" if tests_out or caller.in_tests else "nothing calls it by name"
        ] += 1
    node["callers"] = [
        _node(finder, c, levels - 1, tests, above | {me}, budget, f"{at}.callers[{i}]")
        for i, c in enumerate(callers[:CALLERS_SHOWN])
    ]
    return node


def _text(finder: ReferenceFinder, u: Use) -> str:
    """The use as written: the whole call (its arguments too) when it is one, else its line."""
    f = finder.src.file(u.path)
    if f is None or f.data is None:
        return ""
    span = finder.src.facts(u.path, f).calls.get((u.line, u.column)) if u.kind == "call" else None
    if span is not None:
        return f.span_text((span[0], span[1]), (span[2], span[3]), TEXT_CHARS)
    return f.line_text(u.line)[:TEXT_CHARS]


def _symbol(finder: ReferenceFinder, caller: _Caller) -> Symbol | None:
    f = finder.src.file(caller.path)
    outline = finder.src.outline(caller.path, f) if f is not None else None
    if outline is None or caller.named is None:
        return None
    return next((s for s in iter_symbols(outline) if s.qualified_name == caller.named), None)


def _entry_point(sym: Symbol | None) -> str | None:
    """Why a function is run from outside the code (a CLI command), or None."""
    return cli_command(sym.decorators, sym.qualified_name) if sym is not None else None


def _not_callable(caller: _Caller, sym: Symbol | None) -> str | None:
    """Why a caller is a leaf of the tree: nothing calls it by name."""
    if caller.named is None:
        return "module level (runs when the module is loaded)"
    kind = sym.kind if sym is not None else None
    if kind == "registration":
        return "a registered handler (called by the framework, not by name)"
    if kind == "test":
        return "a test block"
    if kind in DATA_KINDS or kind == "constant":
        return f"a {kind} (module level: runs when the module is loaded)"
    if kind in ("heading", "script", "entry-point", "dependency", "package"):
        return f"a {kind}"
    return None
