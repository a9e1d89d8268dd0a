"""Whether a Python use that is not a call hands the object on (an argument, a returned or stored
value: ``sorted(xs, key=f)``, ``return wrapped``, ``self.stack = self.app``) or only reads it (a
comparison ``self.app == other.app``, a truth test, an attribute of it): only the former is an edge
of a caller tree.
"""

from __future__ import annotations

import ast
from functools import lru_cache

__all__ = ["passed_on"]

#: parents whose child is a value handed on: an argument, a returned, yielded, stored or listed value
_HANDING = (ast.Call, ast.keyword, ast.Return, ast.Yield, ast.YieldFrom, ast.Assign, ast.AnnAssign, ast.NamedExpr)
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred, ast.IfExp, ast.Lambda, ast.Await)


def passed_on(text: str, line: int, column: int) -> bool:
    """Whether the name at 1-based ``line`` and 0-based ``column`` (its last part: ``y`` of ``x.y``) is
    handed on; True when the file does not parse (not judged)."""
    parents = _parents(text)
    if parents is None:
        return True
    node = parents[1].get((line, column))
    if node is None:
        return True
    while True:
        parent = parents[0].get(id(node))
        if parent is None:
            return False
        if isinstance(parent, ast.Call):
            return node is not parent.func  # f(x): handed on; x.y(...) is a call, judged elsewhere
        if isinstance(parent, _HANDING):
            return not isinstance(parent, (ast.Assign, ast.AnnAssign)) or node is parent.value
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node in parent.decorator_list
        if not isinstance(parent, _CONTAINERS):
            return False  # a comparison, a truth test, an operand, an attribute or subscript of it
        node = parent


@lru_cache(maxsize=32)
def _parents(text: str) -> tuple[dict[int, ast.AST], dict[tuple[int, int], ast.AST]] | None:
    """Each node's parent, and the Name or Attribute nodes by where their name's last part starts."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    parents: dict[int, ast.AST] = {}
    names: dict[tuple[int, int], ast.AST] = {}
    lines = text.splitlines()
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name):
            names[(node.lineno, node.col_offset)] = node
        elif isinstance(node, ast.Attribute) and node.end_lineno is not None and node.end_col_offset is not None:
            # the attribute's name ends the node; its column is in characters of the line
            end = len(lines[node.end_lineno - 1].encode()[: node.end_col_offset].decode(errors="replace"))
            names[(node.end_lineno, end - len(node.attr))] = node
    return parents, names
