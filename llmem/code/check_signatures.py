"""What one Python file's functions accept and its calls pass, found with ``ast``: the per-file half of the arity check.

Only functions defined in the module body or in class bodies (nested classes too) are kept, by
the qualified name :mod:`llmem.code.check_python` gives them; each call's arguments are kept by
where its callee's last name is, the place a :class:`~llmem.code.check_python.NameUse` has. The
judging across files is :mod:`llmem.code.check_arity`'s.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["ArityFacts", "CallShape", "Signature", "arity_facts"]

#: Longest text of a call's arguments shown in a finding.
_SHOWN = 80


@dataclass(frozen=True)
class Signature:
    line: int
    #: positional-only then positional-or-keyword parameters
    positional: tuple[str, ...]
    posonly: int
    #: index in ``positional`` from which parameters have defaults
    defaults_from: int
    vararg: bool
    kwonly: tuple[str, ...]
    kwonly_required: frozenset[str]
    varkw: bool
    decorators: tuple[str, ...]
    #: defined under ``if``/``try``/``with`` (which definition runs is not known from the text)
    conditional: bool
    text: str


@dataclass(frozen=True)
class CallShape:
    positional: int
    keywords: tuple[str, ...]
    splat: bool
    text: str


@dataclass
class ArityFacts:
    #: qualified name → each definition of it (several: redefined)
    signatures: dict[str, list[Signature]] = field(default_factory=dict)
    #: class qualified name → its decorators (dotted text)
    class_decorators: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: (line, byte column of the callee's last name) → what the call passes
    calls: dict[tuple[int, int], CallShape] = field(default_factory=dict)


def arity_facts(tree: ast.Module) -> ArityFacts:
    out = ArityFacts()
    _body(tree.body, "", False, out)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            place = _callee_place(node.func)
            if place is not None:
                out.calls[place] = _shape(node)
    return out


def _body(stmts: list[ast.stmt], prefix: str, conditional: bool, out: ArityFacts) -> None:
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            out.signatures.setdefault(prefix + stmt.name, []).append(_signature(stmt, conditional))
        elif isinstance(stmt, ast.ClassDef):
            qual = prefix + stmt.name
            out.class_decorators[qual] = tuple(_text(d) for d in stmt.decorator_list)
            _body(stmt.body, qual + ".", False, out)
        elif isinstance(stmt, ast.If | ast.Try | ast.TryStar | ast.With | ast.AsyncWith | ast.For | ast.While):
            for part in ("body", "orelse", "finalbody"):
                _body(getattr(stmt, part, []), prefix, True, out)
            for handler in getattr(stmt, "handlers", []):
                _body(handler.body, prefix, True, out)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, conditional: bool) -> Signature:
    a = node.args
    positional = tuple(p.arg for p in a.posonlyargs + a.args)
    required_kw = frozenset(p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is None)
    params = ast.unparse(a)
    return Signature(
        line=node.lineno,
        positional=positional,
        posonly=len(a.posonlyargs),
        defaults_from=len(positional) - len(a.defaults),
        vararg=a.vararg is not None,
        kwonly=tuple(p.arg for p in a.kwonlyargs),
        kwonly_required=required_kw,
        varkw=a.kwarg is not None,
        decorators=tuple(_text(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list),
        conditional=conditional,
        text=f"({params})",
    )


def _shape(node: ast.Call) -> CallShape:
    splat = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
    text = ", ".join([ast.unparse(a) for a in node.args] + [ast.unparse(k) for k in node.keywords])
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    return CallShape(len(node.args), tuple(k.arg for k in node.keywords if k.arg is not None), splat, f"({text})")


def _callee_place(func: ast.expr) -> tuple[int, int] | None:
    """Where the callee's last name is, as :mod:`llmem.code.check_python` places a use's last part."""
    if isinstance(func, ast.Name):
        return (func.lineno, func.col_offset)
    if isinstance(func, ast.Attribute) and func.end_lineno is not None and func.end_col_offset is not None:
        return (func.end_lineno, func.end_col_offset - len(func.attr))
    return None


def _text(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # an expression ast cannot print back: named as unknown
        return "?"
