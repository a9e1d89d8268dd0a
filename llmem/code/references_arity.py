"""``find_references`` of one definition: its calls whose arguments no longer fit its signature.

The files holding the calls are checked as ``check_references`` judges them
(:func:`llmem.code.check.check_files`, whose arity judge is :mod:`llmem.code.check_arity`); a
``call-arguments`` finding at a call's place whose callee is one of the definitions asked about
marks that call (a required parameter added, one removed, a keyword renamed …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmem.code.check import check_files
from llmem.code.check_arity import KIND
from llmem.code.references_files import SourceFile, Use, WorkspaceFiles
from llmem.code.references_unresolved import gone_symbol_of

if TYPE_CHECKING:
    from llmem.code.symbol_history import SymbolHistory

__all__ = ["calls_not_fitting"]


def calls_not_fitting(
    src: WorkspaceFiles,
    files: dict[str, SourceFile],
    uses: list[Use],
    definitions: list[dict[str, Any]],
    history: SymbolHistory | None,
) -> dict[tuple[str, int, int], str]:
    """The calls among ``uses`` (Python) whose arguments do not fit the definition they reach, one
    of ``definitions`` (``{path, symbol}``): by place, with why."""
    code = sorted({u.path for u in uses if u.kind == "call" and u.path.endswith((".py", ".pyi"))})
    if not code or not definitions:
        return {}
    run = check_files(src, files, code, gone_symbol=gone_symbol_of(src, history))
    places = {u.key() for u in uses if u.kind == "call"}
    asked = {(str(d["path"]), str(d["symbol"])) for d in definitions}
    return {
        (f.path, f.line, f.column): f.why
        for f in run.findings
        if f.kind == KIND
        and (f.path, f.line, f.column) in places
        and f.defined_in is not None
        and (f.defined_in[0], f.container.split("(", 1)[0]) in asked
    }
