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
        └── PayloadTooLarge        PAYLOAD_TOO_LARGE: input beyond the accepted size
"""

from __future__ import annotations

from llmem.core.errors import SuiteError

__all__ = [
    "CalcError",
    "ExecutionError",
    "FeatureNotFound",
    "InvalidContext",
    "KindMismatch",
    "PayloadTooLarge",
    "PlotNotFound",
    "ToolNotFound",
    "ValidationFailed",
]


class CalcError(SuiteError):
    """Base of every error raised by ``debrief_calc``."""

    code = "CALC_ERROR"


class ToolNotFound(CalcError):
    code = "TOOL_NOT_FOUND"


class InvalidContext(CalcError):
    code = "INVALID_CONTEXT"


class KindMismatch(CalcError):
    code = "KIND_MISMATCH"


class ValidationFailed(CalcError):
    code = "VALIDATION_FAILED"


class ExecutionError(CalcError):
    code = "EXECUTION_ERROR"


class PlotNotFound(CalcError):
    code = "PLOT_NOT_FOUND"


class FeatureNotFound(CalcError):
    code = "FEATURE_NOT_FOUND"


class PayloadTooLarge(CalcError):
    code = "PAYLOAD_TOO_LARGE"
