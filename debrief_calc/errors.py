"""The errors of Debrief analysis, each with a stable code that clients can act on.

Every error is a :class:`llmem.core.errors.SuiteError`, so the server bootstrap turns it into a
structured tool error ``{code, message, details}``::

    SuiteError (llmem.core.errors)
    └── CalcError                  CALC_ERROR: base of everything below
        ├── ToolNotFound           TOOL_NOT_FOUND: no analysis tool by that name
        ├── InvalidContext         INVALID_CONTEXT: wrong number or sort of features for the tool
        ├── KindMismatch           KIND_MISMATCH: a feature of a kind the tool does not accept
        ├── ValidationFailed       VALIDATION_FAILED: input or output broke a rule (names the field)
        ├── ExecutionError         EXECUTION_ERROR: the tool itself failed
        ├── PlotNotFound           PLOT_NOT_FOUND: no such plot file in the workspace
        ├── FeatureNotFound        FEATURE_NOT_FOUND: no feature with that id in the plot
        ├── PayloadTooLarge        PAYLOAD_TOO_LARGE: input beyond the accepted size
        └── StateError             STATE_ERROR: base of the plot-state errors below
            ├── InvalidFilename    INVALID_FILENAME: not a .plot.json file inside the workspace
            ├── InvalidCommand     INVALID_COMMAND: a DebriefCommand of the wrong shape or name
            ├── Conflict           CONFLICT: expected_revision no longer matches the file
            ├── PlotUnreadable     PLOT_UNREADABLE: the file is not a FeatureCollection
            ├── MultiplePlots      MULTIPLE_PLOTS: several plots open and no filename given
            └── PlotExists         PLOT_EXISTS: a new plot's file name is taken

The plot-state errors carry their seed JSON-RPC number in ``details.rpc_code``::

    MULTIPLE_PLOTS      -32001   PLOT_NOT_FOUND   -32002   FEATURE_NOT_FOUND  -32003
    INVALID_FILENAME    -32602   INVALID_COMMAND  -32602   VALIDATION_FAILED  -32602
    CONFLICT            -32009   PLOT_UNREADABLE  -32010   PLOT_EXISTS        -32011

Errors of the first level raised for the plot state are built through :func:`plot_not_found`,
:func:`feature_not_found` and :func:`validation_failed`, so they carry the number too.

:func:`error_from` turns an error object ``{code, message, details}`` back into the exception of
that code (a Python caller catches ``Conflict``, not a dict saying ``CONFLICT``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from llmem.core import errors as core
from llmem.core.errors import SuiteError

__all__ = [
    "RPC_CODES",
    "CalcError",
    "Conflict",
    "ExecutionError",
    "FeatureNotFound",
    "InvalidCommand",
    "InvalidContext",
    "InvalidFilename",
    "KindMismatch",
    "MultiplePlots",
    "PayloadTooLarge",
    "PlotExists",
    "PlotNotFound",
    "PlotUnreadable",
    "StateError",
    "ToolNotFound",
    "ValidationFailed",
    "error_from",
    "feature_not_found",
    "plot_not_found",
    "validation_failed",
]


class CalcError(SuiteError):
    """Base of every error raised by ``debrief_calc``."""

    code = "CALC_ERROR"


class ToolNotFound(CalcError):
    """No analysis tool by that name (the message lists them)."""

    code = "TOOL_NOT_FOUND"


class InvalidContext(CalcError):
    """The wrong number or sort of features for the tool."""

    code = "INVALID_CONTEXT"


class KindMismatch(CalcError):
    """A feature of a kind the tool does not take."""

    code = "KIND_MISMATCH"


class ValidationFailed(CalcError):
    """An input (or a tool's output) broke a rule: ``details.field`` names it."""

    code = "VALIDATION_FAILED"


class ExecutionError(CalcError):
    """The analysis tool itself failed."""

    code = "EXECUTION_ERROR"


class PlotNotFound(CalcError):
    """No such plot file in the workspace (``details.plot_files`` lists those there are)."""

    code = "PLOT_NOT_FOUND"


class FeatureNotFound(CalcError):
    """No feature with that id in the plot (``details.missing_ids``)."""

    code = "FEATURE_NOT_FOUND"


class PayloadTooLarge(CalcError):
    """An input beyond the accepted size: pass a reference instead."""

    code = "PAYLOAD_TOO_LARGE"


RPC_CODES: dict[str, int] = {
    "MULTIPLE_PLOTS": -32001,
    "PLOT_NOT_FOUND": -32002,
    "FEATURE_NOT_FOUND": -32003,
    "INVALID_FILENAME": -32602,
    "INVALID_COMMAND": -32602,
    "VALIDATION_FAILED": -32602,
    "CONFLICT": -32009,
    "PLOT_UNREADABLE": -32010,
    "PLOT_EXISTS": -32011,
}


def _with_rpc(code: str, details: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(details or {})
    out.setdefault("rpc_code", RPC_CODES.get(code, -32603))
    return out


class StateError(CalcError):
    """Base of the plot-state errors; puts ``rpc_code`` into the details."""

    code = "STATE_ERROR"

    def __init__(self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message, code=code, details=_with_rpc(code or self.code, details))

    @property
    def rpc_code(self) -> int:
        return int(self.details["rpc_code"])


class InvalidFilename(StateError):
    """Not a ``.plot.json`` file inside the workspace."""

    code = "INVALID_FILENAME"


class InvalidCommand(StateError):
    """A DebriefCommand of the wrong name or shape (``details.at``, ``details.expected``)."""

    code = "INVALID_COMMAND"


class Conflict(StateError):
    """The plot is not at ``expected_revision`` (someone changed it): read it again and retry."""

    code = "CONFLICT"


class PlotUnreadable(StateError):
    """The plot file is not a GeoJSON FeatureCollection."""

    code = "PLOT_UNREADABLE"


class MultiplePlots(StateError):
    """Several plots are open and no filename was given (``details.available_plots``)."""

    code = "MULTIPLE_PLOTS"


class PlotExists(StateError):
    """A new plot's file name is taken; nothing was changed."""

    code = "PLOT_EXISTS"


def plot_not_found(filename: str, message: str | None = None, **details: Any) -> PlotNotFound:
    msg = message or f"plot file {filename!r} does not exist in the workspace"
    return PlotNotFound(msg, details=_with_rpc("PLOT_NOT_FOUND", {"filename": filename, **details}))


def feature_not_found(missing: Iterable[str], *, filename: str | None = None) -> FeatureNotFound:
    ids = list(dict.fromkeys(missing))
    shown = ", ".join(repr(i) for i in ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
    where = f" in {filename!r}" if filename else ""
    details: dict[str, Any] = {"missing_ids": ids}
    if filename:
        details["filename"] = filename
    return FeatureNotFound(
        f"no feature{'s' if len(ids) != 1 else ''} with id {shown}{where}; "
        "list the plot's features to see the ids it has",
        details=_with_rpc("FEATURE_NOT_FOUND", details),
    )


def validation_failed(field: str, message: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(f"{field}: {message}", details=_with_rpc("VALIDATION_FAILED", {"field": field, **details}))


def _classes(base: type[SuiteError]) -> list[type[SuiteError]]:
    out = [base]
    for sub in base.__subclasses__():
        out += _classes(sub)
    return out


#: codes a class of the core answers besides its own (TicketError is three)
_ALSO = {"TICKET_EXPIRED": core.TicketError, "STEP_LIMIT": core.TicketError}


def error_from(error: Mapping[str, Any]) -> SuiteError:
    """The exception an error object ``{code, message, details}`` stands for: the class of the
    hierarchy (this module's, or the core's) whose code it is, carrying that code, the message
    and the details; a plain :class:`SuiteError` for a code no class has."""
    code = str(error.get("code") or "INTERNAL")
    known = {cls.code: cls for cls in _classes(SuiteError) if cls.__module__ in (__name__, core.__name__)}
    cls = known.get(code) or _ALSO.get(code) or SuiteError
    details = error.get("details")
    return cls(
        str(error.get("message") or code), code=code, details=dict(details) if isinstance(details, Mapping) else {}
    )
