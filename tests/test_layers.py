"""The layers point one way (suite.md §1): no import cycle between the suite's modules, lazy
imports and type-only imports included; the suite's core (``llmem.core``) imports neither the
code memory (``llmem.code``), the chat host (``llmem.host``) nor ``debrief_calc``;
``debrief_calc`` imports only the core of ``llmem``; domain modules import nothing of MCP."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("llmem", "debrief_calc")
#: Modules that only wire domain functions to MCP (or are MCP themselves): the rest is domain.
MCP_WIRING = {
    "llmem.core.serve",
    "llmem.code.server",
    "llmem.core.stdio",
    "llmem.core.http",
    "llmem.core.cli",
    "llmem.core.runtime",
    "llmem.core.schema",
    "llmem.host",
    "debrief_calc.cli",
    "debrief_calc._mcp_tools",
    "debrief_calc.calc.server",
    "debrief_calc.state.server",
    "debrief_calc.state._resources",
}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every suite module ``name`` imports, anywhere in it (inside functions too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for given in names:
            target = given
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root, targets in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(targets)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_cycles_and_the_core_imports_no_server() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []
    upward = sorted(
        (a, b)
        for a, targets in graph.items()
        for b in targets
        if a.startswith("llmem") and b.startswith("debrief_calc")
    )
    assert upward == []


def _room(module: str) -> str:
    """The room a module lives in: ``llmem.core``, ``llmem.code``, ``llmem.host``, ``llmem``
    (the package root, which holds only the version) or ``debrief_calc``."""
    if module == "llmem.__main__":  # ``python -m llmem`` starts the code memory's server
        return "llmem.code"
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "llmem" and len(parts) > 1 else parts[0]


#: Which rooms each room may import from.
ALLOWED_ROOMS = {
    "llmem": set(),
    "llmem.core": {"llmem"},
    "llmem.code": {"llmem", "llmem.core"},
    "llmem.host": {"llmem", "llmem.core"},
    "debrief_calc": {"llmem", "llmem.core"},
}


def test_each_room_imports_only_the_rooms_below_it() -> None:
    modules = _modules()
    assert {_room(name) for name in modules} == set(ALLOWED_ROOMS)
    crossings = sorted(
        (a, b)
        for a, path in modules.items()
        for b in _imports(a, path, modules)
        if _room(b) != _room(a) and _room(b) not in ALLOWED_ROOMS[_room(a)]
    )
    assert crossings == []


def test_the_room_check_sees_a_crossing() -> None:
    assert _room("llmem.core.store") == "llmem.core"
    assert _room("llmem.code.outline.python") == "llmem.code"
    assert _room("debrief_calc.state.server") == "debrief_calc"
    assert "llmem.code" not in ALLOWED_ROOMS["llmem.core"]
    assert "llmem.code" not in ALLOWED_ROOMS["debrief_calc"]


#: The floors of ``debrief_calc``, lowest first (issue 22 §6): a module imports only its own floor
#: and the floors below. The errors are the ground floor every floor stands on; the two servers'
#: operations (their services) are under the Python API (the Workspace), which the servers' MCP
#: wiring, the console scripts and the package root stand on, as a CLI stands on its library.
DEBRIEF_FLOORS = (
    ("debrief_calc.errors",),
    ("debrief_calc.geo",),
    ("debrief_calc.tracks",),
    ("debrief_calc.formats",),
    ("debrief_calc.analysis",),
    ("debrief_calc.plots",),
    ("debrief_calc.calc", "debrief_calc.state"),
    ("debrief_calc._workspace",),
    (
        "debrief_calc",
        "debrief_calc.cli",
        "debrief_calc._mcp_tools",
        "debrief_calc.calc.server",
        "debrief_calc.state.server",
        "debrief_calc.state._resources",
    ),
)


def _floor(module: str) -> int:
    """The floor of a ``debrief_calc`` module: the longest prefix that names one (the package
    root only by its own name); a ``__main__`` starts a console script, so it is on the top."""
    if module.endswith(".__main__"):
        return len(DEBRIEF_FLOORS) - 1
    best, level = "", -1
    for i, names in enumerate(DEBRIEF_FLOORS):
        for prefix in names:
            inside = module == prefix or (prefix != "debrief_calc" and module.startswith(prefix + "."))
            if inside and len(prefix) > len(best):
                best, level = prefix, i
    return level


def test_debrief_floors_point_down() -> None:
    """geodesy and units < tracks and time < file formats < analysis < plot state <
    the two servers' operations < the Python API < the MCP wiring and the console scripts: no
    module imports a floor above its own, and no module sits outside a floor (nothing loose at
    the top)."""
    modules = {n: p for n, p in _modules().items() if n.startswith("debrief_calc")}
    unplaced = sorted(n for n in modules if _floor(n) < 0)
    assert unplaced == []
    upward = sorted(
        (a, b)
        for a, path in modules.items()
        for b in _imports(a, path, modules)
        if b.startswith("debrief_calc") and _floor(b) > _floor(a)
    )
    assert upward == [], upward


def test_the_floor_check_sees_an_upward_import() -> None:
    assert _floor("debrief_calc.geo.geodesy") < _floor("debrief_calc.tracks.times")
    assert _floor("debrief_calc.formats.rep._parser") < _floor("debrief_calc.analysis.import_rep")
    assert _floor("debrief_calc.calc.server") == _floor("debrief_calc.state.server")
    assert _floor("debrief_calc") > _floor("debrief_calc.state.service")
    assert _floor("debrief_calc.state.service") < _floor("debrief_calc._workspace._plots")
    assert _floor("debrief_calc._workspace") < _floor("debrief_calc.state.server")
    assert _floor("debrief_calc.elsewhere") == -1


def test_domain_modules_know_nothing_about_mcp() -> None:
    offenders = []
    for name, path in _modules().items():
        if any(name == w or name.startswith(w + ".") for w in MCP_WIRING) or name.startswith("llmem"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [module or ""]
            if any(n == "mcp" or n.startswith(("mcp.", "mcp_types")) for n in names):
                offenders.append(name)
    assert offenders == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_servers_start_without_their_heavy_imports() -> None:
    """Start-up pays only for what the handshake needs (suite.md §1): numpy, Pillow, tree-sitter,
    GeographicLib and scipy come with the first call that needs them."""
    import subprocess
    import sys

    code = (
        "import sys, debrief_calc.calc.server, debrief_calc.state.server, llmem.code.server\n"
        "print(sorted(m for m in ('numpy', 'PIL', 'tree_sitter', 'geographiclib', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


#: The one time module (issue 22 §1): the public module and its private helpers.
TIME_MODULE = "debrief_calc.tracks.times"
TIME_HELPERS = ("debrief_calc.tracks._time_text", "debrief_calc.tracks._time_arrays", "debrief_calc.tracks._time_cut")
#: Who may import a helper besides the time module: the track readers below it read times with them.
TIME_READERS = {
    "debrief_calc.tracks._time_text": {"debrief_calc.tracks._track_data", "debrief_calc.tracks.features"},
    "debrief_calc.tracks._time_arrays": {"debrief_calc.tracks._track_data", "debrief_calc.tracks.features"},
    "debrief_calc.tracks._time_cut": set(),
}


def _window_bound_reads(source: str) -> list[int]:
    """The lines of ``source`` that read a window's bounds (``._start``/``._end``, private to the
    time module's :class:`Window`)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr in ("_start", "_end")
    )


def test_nothing_outside_the_time_module_computes_a_window() -> None:
    """A window's bounds are read only by debrief_calc.tracks.times: every other module asks the
    window (contains, mask, clamp, at_edge, cut_ends, answer) or the module (cut_feature(s)), so no
    other module compares fix times with a window's bounds; and the cut itself (_time_cut) is
    reached only through the time module."""
    modules = {n: p for n, p in _modules().items() if n.startswith("debrief_calc")}
    own = {TIME_MODULE, *TIME_HELPERS}
    reads = {
        name: lines
        for name, path in modules.items()
        if name not in own and (lines := _window_bound_reads(path.read_text(encoding="utf-8")))
    }
    assert reads == {}, reads
    helpers = sorted(
        (a, b)
        for a, path in modules.items()
        for b in _imports(a, path, modules)
        if b in TIME_HELPERS and a not in own and a not in TIME_READERS[b]
    )
    assert helpers == [], helpers


def test_the_window_check_sees_a_bound_read() -> None:
    assert _window_bound_reads("def f(w):\n    return t >= w._start\n") == [2]
    assert _window_bound_reads("def f(w):\n    return w.contains(t)\n") == []
