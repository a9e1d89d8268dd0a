"""The names a module-level ``__getattr__`` serves, read from its code when they can be.

PEP 562's ``def __getattr__(name)`` makes ``from m import x`` work for names ``m`` does not
bind. Most such functions serve a fixed list (deprecated aliases, lazy imports) and raise
``AttributeError`` for the rest; when that list can be read, a name neither bound nor served is
as broken as in a module without ``__getattr__``. The list is read from string constants
compared with the parameter (``name == "x"``, ``name in ("x", "y")``, ``name in _DEPRECATED``
of a module-level literal), the keys of a dict literal the function indexes or ``.get``s with
it, and ``match name: case "x" | "y"``. Any other use of the parameter outside the code those
tests guard (``getattr(other, name)``, ``import_module(name)``), or a ``return`` no test guards,
means the names cannot be read: :func:`served_names` answers None.
"""

from __future__ import annotations

import ast

__all__ = ["module_literals", "served_names", "strings_of"]


def module_literals(body: list[ast.stmt]) -> dict[str, frozenset[str]]:
    """Module-level names bound once to a literal of strings: a dict's keys, a set's, a tuple's or a list's items."""
    seen: dict[str, int] = {}
    found: dict[str, frozenset[str]] = {}
    for stmt in body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name):
                seen[t.id] = seen.get(t.id, 0) + 1
                value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
                strings = strings_of(value) if value is not None else None
                if strings is not None:
                    found[t.id] = strings
    return {k: v for k, v in found.items() if seen[k] == 1}


def strings_of(node: ast.expr) -> frozenset[str] | None:
    """The strings of a literal: a dict's keys, a set's / tuple's / list's items, ``frozenset({…})``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set"):
        return strings_of(node.args[0]) if len(node.args) == 1 and not node.keywords else None
    items: list[ast.expr | None]
    if isinstance(node, ast.Dict):
        items = list(node.keys)
    elif isinstance(node, ast.Set | ast.Tuple | ast.List):
        items = list(node.elts)
    else:
        return None
    if all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return frozenset(str(i.value) for i in items if isinstance(i, ast.Constant))
    return None


def served_names(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, literals: dict[str, frozenset[str]]
) -> frozenset[str] | None:
    """The names ``fn`` (a module ``__getattr__``) serves, or None when its code does not say them all."""
    params = fn.args.posonlyargs + fn.args.args
    if len(params) != 1 or fn.args.vararg or fn.args.kwarg:
        return None
    reader = _Reader(params[0].arg, literals)
    if not reader.block(fn.body):
        return None
    loads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == reader.param]
    if not reader.served or any(id(n) not in reader.safe for n in loads):
        return None
    return frozenset(reader.served)


class _Reader:
    def __init__(self, param: str, literals: dict[str, frozenset[str]]) -> None:
        self.param = param
        self.literals = literals
        self.served: set[str] = set()
        self.safe: set[int] = set()  # ids of the parameter's Name nodes accounted for
        self.from_dict = False  # a dict lookup serves the names: a plain return is its value

    def block(self, body: list[ast.stmt]) -> bool:
        """Read an unguarded block; False when it serves names the code does not list."""
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.If):
                test = self._test(stmt.test)
                if test == "positive":
                    self._guarded([*stmt.body])
                    if not self.block(stmt.orelse):
                        return False
                    continue
                if test == "negative" and stmt.body and isinstance(stmt.body[-1], ast.Raise | ast.Return):
                    self._guarded([*stmt.body, *body[i + 1 :]])
                    return True
                if self._uses(stmt.test) or not (self.block(stmt.body) and self.block(stmt.orelse)):
                    return False
            elif isinstance(stmt, ast.Match) and self._is_param(stmt.subject):
                self.safe.add(id(stmt.subject))
                for case in stmt.cases:
                    names = _pattern_strings(case.pattern)
                    if names is not None and case.guard is None:
                        self.served |= names
                        self._guarded(case.body)
                    elif not self.block(case.body):
                        return False
            elif isinstance(stmt, ast.Try):
                if not all(
                    self.block(b) for b in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody)
                ):
                    return False
            elif isinstance(stmt, ast.Raise):
                self._guarded([stmt])  # the message may name it
            elif isinstance(stmt, ast.Return):
                self._lookups(stmt)
                if not self.from_dict:
                    return False
            elif isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign | ast.Import | ast.ImportFrom | ast.Pass):
                self._lookups(stmt)
            else:
                return False
        return True

    def _guarded(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            for node in ast.walk(stmt):
                if self._is_param(node):
                    self.safe.add(id(node))

    def _lookups(self, stmt: ast.stmt) -> None:
        """``D[name]`` and ``D.get(name)`` of a dict literal (inline or a module-level name)."""
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and self._is_param(node.slice):
                keys = self._collection(node.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
                and self._is_param(node.args[0])
            ):
                keys = self._collection(node.func.value)
            else:
                continue
            if keys is not None:
                self.served |= keys
                self.from_dict = True
                self.safe.add(id(node.slice if isinstance(node, ast.Subscript) else node.args[0]))

    def _test(self, test: ast.expr) -> str | None:
        """``positive`` (``name == "x"``, ``name in {…}``), ``negative`` (``!=``, ``not in``), or None."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            kinds = {self._test(v) for v in test.values}
            return "positive" if kinds == {"positive"} else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, ast.Eq | ast.NotEq) and self._is_param(right):
            left, right = right, left
        if not self._is_param(left):
            return None
        if isinstance(op, ast.Eq | ast.NotEq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
            names: frozenset[str] | None = frozenset({right.value})
        elif isinstance(op, ast.In | ast.NotIn):
            names = self._collection(right)
        else:
            return None
        if names is None:
            return None
        self.served |= names
        self.safe.add(id(left))
        return "positive" if isinstance(op, ast.Eq | ast.In) else "negative"

    def _collection(self, node: ast.expr) -> frozenset[str] | None:
        if isinstance(node, ast.Name):
            return self.literals.get(node.id)
        return strings_of(node)

    def _is_param(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == self.param

    def _uses(self, node: ast.AST) -> bool:
        return any(self._is_param(n) for n in ast.walk(node))


def _pattern_strings(pattern: ast.pattern) -> frozenset[str] | None:
    if isinstance(pattern, ast.MatchValue) and isinstance(pattern.value, ast.Constant):
        return frozenset({pattern.value.value}) if isinstance(pattern.value.value, str) else None
    if isinstance(pattern, ast.MatchOr):
        parts = [_pattern_strings(p) for p in pattern.patterns]
        return frozenset().union(*parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    return None
