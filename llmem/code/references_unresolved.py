"""``find_references`` of a name nothing defines: which of its uses no longer resolve, and where it was.

The files holding its uses in code are checked (:func:`llmem.code.check.check_files`, the judge
of ``check_references``); each use a finding names gets ``unresolved: true`` and why, the uses of
a broken import's name go with it, and the answer says where the name was last defined when the
store remembers (:mod:`llmem.code.symbol_history`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmem.code.check import GoneSymbol, check_files
from llmem.code.references_files import SourceFile, Use, WorkspaceFiles
from llmem.code.references_parse import language_of

if TYPE_CHECKING:
    from llmem.code.symbol_history import SymbolHistory

_IMPORTING = frozenset({"python", "typescript", "tsx", "javascript"})

__all__ = ["broken_imports", "gone_symbol_of", "subclass_only_uses", "unresolved_uses"]


def subclass_only_uses(
    src: WorkspaceFiles, symbol: str, files: dict[str, SourceFile], uses: list[Use], history: SymbolHistory | None
) -> dict[tuple[str, int, int], str]:
    """``self.symbol`` / ``cls.symbol`` in a class where neither it nor its bases define the name,
    only a subclass does (a method renamed in its class only, or a template method): by place,
    with why. Only the Python files holding such uses are checked."""
    code = sorted({u.path for u in uses if u.qualifier in ("self", "cls") and u.path.endswith((".py", ".pyi"))})
    if not code:
        return {}
    run = check_files(src, files, code, gone_symbol=gone_symbol_of(src, history))
    places = {u.key() for u in uses}
    return {
        (f.path, f.line, f.column): f.why
        for f in run.subclass_only
        if f.missing == symbol and (f.path, f.line, f.column) in places
    }


def broken_imports(
    src: WorkspaceFiles, symbol: str, files: dict[str, SourceFile], uses: list[Use], history: SymbolHistory | None
) -> tuple[dict[tuple[str, int, int], str], dict[str, Any] | None]:
    """Python imports of ``symbol`` from a module of the workspace that no longer defines it
    (moved, renamed, removed) and the uses of the name each binds: by place, with why; and where
    the store saw the name last defined (None when it does not know). Only the Python files
    holding such imports are checked (as ``check_references`` judges them)."""
    code = sorted({u.path for u in uses if u.kind == "import" and language_of(u.path) in _IMPORTING})
    if not code:
        return {}, None
    run = check_files(src, files, code, gone_symbol=gone_symbol_of(src, history))
    places = {u.key() for u in uses}
    mine = [
        f
        for f in [*run.findings, *run.known_gone]
        if f.kind == "import" and f.missing == symbol and (f.path, f.line, f.column) in places
    ]
    broken = {(f.path, f.line, f.column): f.why for f in mine}
    for f in mine:
        lines = set(f.uses)
        for u in uses:
            if u.path == f.path and u.line in lines and u.key() not in broken:
                broken[u.key()] = f"uses the import on line {f.line}, which does not resolve ({f.why})"
    last = None
    if mine and history is not None:
        where = next((f.defined_in[0] for f in mine if f.defined_in), None)
        last = history.last_defined(symbol, where, src.outline_content(where) if where else None)
    return broken, last


def gone_symbol_of(src: WorkspaceFiles, history: SymbolHistory | None) -> GoneSymbol | None:
    """What the store remembers of a symbol gone from a file, asked with the file's outline as ``src`` has it."""
    if history is None:
        return None
    return lambda path, symbol: history.gone(path, symbol, src.outline_content(path))


def unresolved_uses(
    src: WorkspaceFiles,
    symbol: str,
    files: dict[str, SourceFile],
    uses: list[Use],
    out: dict[str, Any],
    history: SymbolHistory | None,
) -> dict[tuple[str, int, int], str]:
    """The uses that no longer resolve, by place, with why; ``out`` gains ``unresolved``,
    ``unresolved_total``, a note and ``last_defined`` when there are any."""
    code = sorted({u.path for u in uses if u.kind in ("import", "call", "reference")})
    if not code:
        return {}
    run = check_files(
        src,
        files,
        code,
        history.remembered if history is not None else None,
        history.gone_member if history is not None else None,
        gone_symbol_of(src, history),
    )
    places = {u.key() for u in uses}
    # A method's uses on values of known type are findings; on values of unknown type, by name
    # (nothing in the workspace defines the name now, and a parse saw it go).
    mine = [
        f
        for f in [*run.findings, *run.by_name, *run.known_gone]
        if f.missing == symbol and (f.path, f.line, f.column) in places
    ]
    broken = {(f.path, f.line, f.column): f.why for f in mine}
    if not broken:
        return {}
    out["unresolved"] = True
    out["unresolved_total"] = len(broken)
    # The uses of a broken import's name go with it.
    for f in mine:
        lines = set(f.uses)
        for u in uses:
            if u.path == f.path and u.line in lines and u.key() not in broken:
                broken[u.key()] = f"uses the import on line {f.line}, which does not resolve"
    if "note" not in out:
        out["note"] = (
            f"no definition of {symbol} in the workspace, and {len(mine)} of its uses no longer resolve "
            "(unresolved: true on each, with why): renamed or removed?"
        )
    if history is not None:
        where = next((f.defined_in[0] for f in mine if f.defined_in), None)
        last = history.last_defined(symbol, where, src.outline_content(where) if where else None)
        if last is not None:
            out["last_defined"] = last
    return broken
