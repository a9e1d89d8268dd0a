"""Whether a call resolved to a function or method of the workspace passes what its definition accepts.

``check_references`` resolves each call's name (:mod:`llmem.code.check_resolve`); here the call's
arguments (:mod:`llmem.code.check_signatures`) are compared with the parameters of the one
definition it reaches: a required parameter not given, too many positional arguments, an
unknown keyword, one given twice. Only what the text settles is judged; the rest is counted in
``not_checked`` by reason: calls with ``*args``/``**kwargs``, definitions with a decorator that
may change the signature, ``@overload``, names defined more than once or under ``if``/``try``,
classes with a metaclass, ``__init_subclass__`` or a class decorator, bases from outside the
workspace before the definition, and constructors unless every class of the MRO is the
workspace's with a plain ``__init__`` and no ``__new__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmem.code.check_resolve import Finding, PythonWorld, Target
from llmem.code.check_signatures import ArityFacts, CallShape, Signature
from llmem.code.references_imports import absolute_module

if TYPE_CHECKING:
    from collections import Counter

    from llmem.code.check_python import Binding, NameUse, PyFile

__all__ = ["KIND", "check_call"]

KIND = "call-arguments"
#: Decorators that leave a function's parameters as written.
_SAFE_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod", "override", "typing.override",
     "typing_extensions.override", "final", "typing.final"}
)  # fmt: skip
#: Bases from outside the workspace whose classes' methods are as written (no metaclass rewriting them).
_PLAIN_OUTSIDE = ("builtins.", "abc.", "typing.", "typing_extensions.", "collections.abc.")
_ABC_META = frozenset({"ABCMeta", "abc.ABCMeta"})


def check_call(world: PythonWorld, key: str, info: PyFile, use: NameUse, findings: list[Finding],
               not_checked: Counter[str]) -> None:  # fmt: skip
    """Judge the arguments of the call ``use`` (of file ``key``): a finding, a reason not judged,
    or nothing (it fits, or its callee is not a function of the workspace)."""
    if use.kind != "call" or use.scope_kind not in ("local", "global") or use.guard:
        return
    call = info.arity.calls.get(use.places[-1]) if info.arity is not None else None
    if call is None:
        return
    reached = _definition(world, key, use)
    if reached is None:
        return
    if isinstance(reached, str):
        not_checked[f"call arguments: {reached}"] += 1
        return
    if call.splat:
        not_checked["call arguments: a call with *args or **kwargs"] += 1
        return
    def_key, qual, sig, bound = reached
    problem = _problem(sig, bound, call)
    if problem is None:
        return
    missing, why = problem
    line, col = use.places[-1]
    shown = qual if qual.rsplit(".", 1)[-1] == use.chain[-1] else f"{'.'.join(use.chain)} ({qual})"
    findings.append(
        Finding(key, line, col, KIND, ".".join(use.chain), missing, f"{qual}{sig.text}",
                f"{shown}{sig.text} called with {call.text}: {why}", (def_key, sig.line),
                frozenset(sig.positional[bound:] + sig.kwonly) if why.startswith("unknown keyword") else frozenset())
    )  # fmt: skip


def _problem(sig: Signature, bound: int, call: CallShape) -> tuple[str, str] | None:
    """What is wrong with passing ``call`` to ``sig`` (its first ``bound`` parameters already given)."""
    params = sig.positional[bound:]
    posonly = max(0, sig.posonly - bound)
    if call.positional > len(params) and not sig.vararg:
        return "arguments", f"{call.positional} positional arguments given, it takes at most {len(params)}"
    for kw in call.keywords:
        if kw in params[posonly:]:
            if params.index(kw) < call.positional:
                return kw, f"{kw} given both by position and by keyword"
        elif kw not in sig.kwonly and not sig.varkw:
            return kw, f"unknown keyword {kw} ({'positional-only' if kw in params else 'no such parameter'})"
    for i in range(call.positional, len(params)):
        if i + bound < sig.defaults_from and params[i] not in call.keywords:
            return params[i], f"the required parameter {params[i]} is not given"
    for kw in sig.kwonly:
        if kw in sig.kwonly_required and kw not in call.keywords:
            return kw, f"the required keyword-only parameter {kw} is not given"
    return None


#: The definition a call reaches: (file, qualified name, signature, parameters already bound).
Reached = tuple[str, str, Signature, int]


def _definition(world: PythonWorld, key: str, use: NameUse) -> Reached | str | None:
    """The one definition the call ``use`` reaches; a reason when it cannot be judged; None when it is
    not a function or class of the workspace."""
    if len(use.chain) == 1:
        if len(use.bound) != 1:
            return "a name bound several ways" if len(use.bound) > 1 else None
        return _bound(world, key, use.bound[0], 0)
    holder: Target = world.binding(key, use.bound)
    for part in use.chain[1:-1]:
        holder = world.attribute(holder, part)
    name = use.chain[-1]
    if holder[0] == "module":
        return _in_module(world, holder[1], name, 0)
    if holder[0] in ("class", "instance"):
        return _method(world, holder[1], holder[2], name, instance=holder[0] == "instance")
    return None


def _bound(world: PythonWorld, key: str, b: Binding, depth: int) -> Reached | str | None:
    """What a name bound by ``b`` in ``key`` is, when called."""
    if b.kind == "def":
        return _function(world, key, b.target, 0)
    if b.kind == "class":
        return _constructor(world, key, b.target)
    if b.kind == "from" and depth < 10:
        base = absolute_module(b.target, b.level, world.module_of.get(key, ""), key)
        return _in_module(world, base, b.name, depth + 1) if base in world.by_module else None
    return None


def _in_module(world: PythonWorld, dotted: str, name: str, depth: int) -> Reached | str | None:
    for k in world.by_module.get(dotted, [])[:1]:
        info = world.info(k)
        bindings = info.globals.get(name, []) if info is not None else []
        if len(bindings) > 1:
            return "a name defined several times (or conditionally)"
        if bindings:
            return _bound(world, k, bindings[0], depth)
    return None


def _facts(world: PythonWorld, key: str) -> ArityFacts | None:
    info = world.info(key)
    return info.arity if info is not None else None


def _function(world: PythonWorld, key: str, qual: str, bound: int, method: bool = False) -> Reached | str | None:
    facts = _facts(world, key)
    sigs = facts.signatures.get(qual) if facts is not None else None
    if not sigs:
        return None if not method else "a class attribute that is no plain def"
    if len(sigs) > 1 or sigs[0].conditional:
        return "a function defined several times (or conditionally)"
    sig = sigs[0]
    names = set(sig.decorators)
    if "overload" in names or "typing.overload" in names:
        return "an @overload-ed function"
    other = sorted(names - _SAFE_DECORATORS)
    if other:
        return "a function with a decorator that may change its signature"
    if method:
        bound = 0 if "staticmethod" in names else 1 if "classmethod" in names else bound
    if len(sig.positional) < bound:
        return None if sig.vararg else "a method without a self parameter"
    return (key, qual, sig, bound)


def _plain_mro(world: PythonWorld, key: str, qual: str) -> list[Target] | str:
    """The class's MRO when nothing may rewrite its methods; else why not."""
    mro = world.mro(key, qual)
    for i, t in enumerate(mro):
        if t[0] != "class":
            continue
        info = world.info(t[1])
        cls = info.classes.get(t[2]) if info is not None else None
        # a class's own __init_subclass__ (and what it sets on cls) acts on its subclasses only
        own_hook = i == 0 and cls is not None and str(cls.dynamic).endswith("(in __init_subclass__)")
        if cls is None or (cls.dynamic and not own_hook):
            return "a method of a class the check cannot read whole"
        if cls.metaclass and cls.metaclass not in _ABC_META:
            return "a method of a class with a metaclass"
        if i > 0 and "__init_subclass__" in cls.members:
            return "a method of a class whose base has __init_subclass__"
    return mro


def _method(world: PythonWorld, key: str, qual: str, name: str, instance: bool) -> Reached | str | None:
    mro = _plain_mro(world, key, qual)
    if isinstance(mro, str):
        return mro
    for t in mro:
        if t[0] != "class":
            if t[0] == "outside" and str(t[1]).startswith(_PLAIN_OUTSIDE):
                continue
            return "a method a base from outside the workspace may define"
        info = world.info(t[1])
        cls = info.classes.get(t[2]) if info is not None else None
        if cls is not None and name in cls.members:
            nested = f"{t[2]}.{name}"
            if info is not None and nested in info.classes:
                return _constructor(world, t[1], nested)
            return _function(world, t[1], nested, 1 if instance else 0, method=True)
    return None


def _constructor(world: PythonWorld, key: str, qual: str) -> Reached | str | None:
    """``C(…)`` against ``C.__init__``: only when every class of C's MRO is the workspace's, plain
    (no decorator, metaclass, ``__new__``), and one of them defines ``__init__``."""
    mro = _plain_mro(world, key, qual)
    if isinstance(mro, str):
        return mro.replace("a method of", "a constructor of")
    for t in mro:
        if t[0] != "class":
            return "a constructor of a class with a base from outside the workspace"
        facts = _facts(world, t[1])
        info = world.info(t[1])
        cls = info.classes.get(t[2]) if info is not None else None
        if facts is None or cls is None or facts.class_decorators.get(t[2]):
            return "a constructor of a decorated class (a dataclass …)"
        if "__new__" in cls.members:
            return "a constructor of a class with __new__"
        if "__init__" in cls.members:
            return _function(world, t[1], f"{t[2]}.__init__", 1, method=True)
    return None
