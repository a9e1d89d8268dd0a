"""The errors of the plot-state domain, each carrying its seed JSON-RPC code in ``details.rpc_code``.

Codes and JSON-RPC numbers (seed 000 gives the first three; the rest are ours)::

    MULTIPLE_PLOTS      -32001   several plots open and no filename given
    PLOT_NOT_FOUND      -32002   no such plot file (debrief_calc.errors.PlotNotFound)
    FEATURE_NOT_FOUND   -32003   ids missing from the plot (debrief_calc.errors.FeatureNotFound)
    INVALID_FILENAME    -32602   not the name of a .plot.json file inside the workspace
    INVALID_COMMAND     -32602   a DebriefCommand of the wrong shape or an unknown name
    VALIDATION_FAILED   -32602   a value broke a rule (debrief_calc.errors.ValidationFailed)
    CONFLICT            -32009   expected_revision no longer matches the file
    PLOT_UNREADABLE     -32010   the file exists but cannot be read as a FeatureCollection
    PLOT_EXISTS         -32011   a new plot's file name is taken (nothing was written)

Errors defined elsewhere are built through the helpers here so they carry the code too.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from debrief_calc.errors import CalcError, FeatureNotFound, PlotNotFound, ValidationFailed

__all__ = [
    "RPC_CODES",
    "Conflict",
    "InvalidCommand",
    "InvalidFilename",
    "MultiplePlots",
    "PlotExists",
    "PlotUnreadable",
    "StateError",
    "feature_not_found",
    "plot_not_found",
    "validation_failed",
]

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
    code = "INVALID_FILENAME"


class InvalidCommand(StateError):
    code = "INVALID_COMMAND"


class Conflict(StateError):
    code = "CONFLICT"


class PlotUnreadable(StateError):
    code = "PLOT_UNREADABLE"


class MultiplePlots(StateError):
    code = "MULTIPLE_PLOTS"


class PlotExists(StateError):
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
