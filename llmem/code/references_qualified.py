"""A qualified name asked of ``find_references``: ``Client.request`` (a class's member),
``_api.request`` or ``httpx._api.request`` (a module's function).

Two classes of one file may share a method's name (``Client.request`` and ``AsyncClient.request``):
the bare name with ``path`` cannot tell them apart, the qualified one can. It is resolved here to
the bare name, the file that defines it and the definition's qualified name, which
:meth:`llmem.code.references.ReferenceFinder.collect` keeps (``only``): the uses whose receiver
may be of that class, not of the other.
"""

from __future__ import annotations

from pathlib import Path
from posixpath import basename, splitext
from typing import Any, Protocol

from llmem.code.references_files import SourceFile, WorkspaceFiles
from llmem.code.references_imports import module_name
from llmem.core.errors import InvalidArgument
from llmem.core.paths import resolve_in_workspace

__all__ = ["qualified_target"]

SHOWN = 10


class Definitions(Protocol):
    """What is asked of the finder (:class:`llmem.code.references.ReferenceFinder`, which calls this)."""

    ws: Path
    src: WorkspaceFiles

    def definitions_named(self, symbol: str, files: dict[str, SourceFile]) -> list[dict[str, Any]]: ...


def qualified_target(finder: Definitions, symbol: str, path: str | None) -> tuple[str, str | None, str | None]:
    """(bare name, path, the definition's qualified name) for ``symbol``; a bare name as given."""
    if "." not in symbol:
        return symbol, path, None
    head, bare = symbol.rsplit(".", 1)
    files = {k: f for k in finder.src.paths() if (f := finder.src.file(k)) is not None}
    keys = set(files)
    every = finder.definitions_named(bare, files)
    matching = [d for d in every if _names(d, symbol, head, bare, keys)]
    if path is not None:
        key = resolve_in_workspace(finder.ws, path, field="path").key
        matching = [d for d in matching if d["path"] == key]
    if not matching:
        shown = sorted({f"{d['symbol']} ({d['path']})" for d in every})
        raise InvalidArgument(
            f"nothing {'in ' + path + ' ' if path else ''}defines {symbol!r}",
            details={"field": "symbol", "rule": "Class.member or module.function of a definition in the workspace"}
            | ({"definitions_of_the_name": shown[:SHOWN]} if shown else {}),
            next_action=f"Ask one of definitions_of_the_name, or symbol={bare!r} for every use of the name."
            if shown
            else f"search_artifacts(query={bare!r}) finds where it is defined now.",
        )
    where = sorted({d["path"] for d in matching})
    if len(where) > 1:
        raise InvalidArgument(
            f"{symbol!r} is defined in {len(where)} files",
            details={"field": "path", "rule": "the file of one definition", "defined_in": where[:SHOWN]},
            next_action=f"Add path=<one of defined_in>, e.g. path={where[0]!r}.",
        )
    return bare, where[0], str(matching[0]["symbol"])


def _names(d: dict[str, Any], symbol: str, head: str, bare: str, keys: set[str]) -> bool:
    """Whether definition ``d`` is the one ``symbol`` (``head.bare``) names: its qualified name
    (or the end of it: ``Outer.Inner.m`` for ``Inner.m``), or a top-level definition of a module
    (or file) ``head`` names."""
    qual = str(d["symbol"])
    if qual == symbol or qual.endswith("." + symbol):
        return True
    if qual != bare:
        return False
    key = str(d["path"])
    module = module_name(key, keys) if key.endswith((".py", ".pyi")) else splitext(key)[0].replace("/", ".")
    return module == head or module.endswith("." + head) or splitext(basename(key))[0] == head
