"""Constructor calls as callers of ``__init__``: ``Router(...)`` runs ``Router.__init__``, and so
does ``Sub(...)`` when ``Sub`` derives from ``Router`` without defining ``__init__`` itself.

Python only: the uses of the class found as ``find_references(class, path=…)`` finds them (its
imports followed), kept when they are calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmem.code.references_receivers import Judge
from llmem.core.errors import SuiteError

if TYPE_CHECKING:
    from llmem.code.references import Found, ReferenceFinder
    from llmem.code.references_files import Use

__all__ = ["constructor_calls", "constructor_calls_beside"]

#: Constructor calls listed in a flat answer about ``__init__`` (the rest counted).
CALLS_SHOWN = 20

CONSTRUCTORS = ("__init__", "__new__")


def constructor_calls(finder: ReferenceFinder, found: Found) -> dict[tuple[str, int, int], tuple[Use, str]]:
    """Place → (the call ``C(...)``, the class it constructs) for the ``__init__`` definitions of
    ``found``: calls of the class and of its subclasses that inherit that ``__init__``."""
    out: dict[tuple[str, int, int], tuple[Use, str]] = {}
    if found.target is None or not found.target.endswith(".py"):
        return out
    judge = Judge(finder.src, found.files, found.definitions)
    for d in found.definitions:
        leaf = str(d["symbol"]).rsplit(".", 1)[-1]
        if leaf not in CONSTRUCTORS or (d["path"], str(d["symbol"]).rsplit(".", 1)[0]) not in judge.owners:
            continue
        owner = str(d["symbol"]).rsplit(".", 1)[0]
        classes = [(d["path"], owner), *_inheriting(judge, d["path"], owner, leaf)]
        for path, cls in classes:
            try:
                of_class = finder.collect(cls.rsplit(".", 1)[-1], path, only=cls)
            except SuiteError:
                continue
            for u in of_class.uses:
                if u.kind == "call":
                    out.setdefault(u.key(), (u, cls))
    return out


def _inheriting(judge: Judge, path: str, cls: str, name: str) -> list[tuple[str, str]]:
    """The subclasses of ``cls`` whose ``name`` is the one ``cls`` defines (none between overrides it)."""
    world = judge.world()
    out = []
    for key, qual in world.all_subclasses(path, cls):
        if (key, qual) == (path, cls):
            continue
        for t in world.mro(key, qual):
            info = world.info(t[1]) if t[0] == "class" else None
            c = info.classes.get(t[2]) if info is not None else None
            if t[0] != "class" or (c is not None and name in c.members):
                if t[0] == "class" and (t[1], t[2]) == (path, cls):
                    out.append((key, qual))
                break
    return out


def constructor_calls_beside(finder: ReferenceFinder, found: Found, tests: str) -> dict[str, Any]:
    """What a flat find_references answer about an ``__init__`` (``__new__``) adds: the ``C(...)``
    calls that run it, those of subclasses inheriting it too, kept as ``tests`` asks; apart from
    ``total``, which counts the name's own uses as ``grep -w __init__`` finds them."""
    from llmem.code.references import tests_kept

    built = [(u, cls) for u, cls in constructor_calls(finder, found).values() if tests_kept(u.path, tests)]
    if not built:
        return {}
    built.sort(key=lambda t: t[0].order())
    symbol = str(found.definitions[0]["symbol"]).rsplit(".", 1)[-1] if found.definitions else "__init__"
    shown = [{**finder.use_item(u, found.files[u.path], u.name), "constructs": cls} for u, cls in built[:CALLS_SHOWN]]
    return {
        "constructor_calls": {
            "total": len(built),
            "calls": shown,
            **({"more": len(built) - len(shown)} if len(built) > len(shown) else {}),
            "means": f"calls C(...) that run this {symbol} (not in total, which counts the name's own uses); "
            "depth=2 follows them as callers",
        }
    }
