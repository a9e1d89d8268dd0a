"""Which names a module ``__getattr__`` serves (:func:`llmem.code.check_getattr.served_names`), on
the shapes PEP 562 code takes; each expected set is read off the snippet by hand."""

from __future__ import annotations

import ast

import pytest

from llmem.code.check_getattr import module_literals, served_names

SHAPES = [
    ('def __getattr__(name):\n    if name == "a":\n        return 1\n    if "b" == name:\n        return 2\n'
     "    raise AttributeError(name)\n", {"a", "b"}),
    ('def __getattr__(name):\n    if name in ("a", "b"):\n        return globals()[f"_{name}"]\n'
     '    raise AttributeError(f"no {name}")\n', {"a", "b"}),
    ('_OLD = {"a": 1, "b": 2}\ndef __getattr__(name):\n    if name not in _OLD:\n        raise AttributeError(name)\n'
     "    return _OLD[name]\n", {"a", "b"}),
    ('_LAZY = {"a": ".x", "c": ".y"}\ndef __getattr__(name):\n    mod = _LAZY.get(name)\n'
     "    if mod is None:\n        raise AttributeError(name)\n    return mod\n", {"a", "c"}),
    ('def __getattr__(name):\n    match name:\n        case "a" | "b":\n            return 1\n        case "c":\n'
     "            return 2\n    raise AttributeError(name)\n", {"a", "b", "c"}),
    # forwards any name, or answers every name: what it serves cannot be read
    ('def __getattr__(name):\n    if name == "a":\n        return 1\n    return getattr(other, name)\n', None),
    ('def __getattr__(name):\n    if name == "a":\n        return 1\n    return None\n', None),
    ('def __getattr__(name):\n    if name.startswith("x"):\n        return 1\n    raise AttributeError(name)\n', None),
    ("def __getattr__(name):\n    return importlib.import_module(f'.{name}', __name__)\n", None),
]  # fmt: skip


@pytest.mark.parametrize(("source", "served"), SHAPES)
def test_served_names(source: str, served: set[str] | None) -> None:
    tree = ast.parse(source)
    [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    got = served_names(fn, module_literals(tree.body))
    assert (set(got) if got is not None else None) == served
