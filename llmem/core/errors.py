"""The error hierarchy of the suite's shared core.

Every failure a client can see is a :class:`SuiteError` with a stable upper-case ``code``, a
message that says what was wrong and what to do instead, and JSON ``details``::

    SuiteError                     code given per instance (INTERNAL by default)
    ├── InvalidArgument            INVALID_ARGUMENT: a tool argument broke a rule
    ├── PathOutsideWorkspace       PATH_OUTSIDE_WORKSPACE
    ├── SourceNotFound             SOURCE_NOT_FOUND
    ├── ArtifactNotFound           ARTIFACT_NOT_FOUND
    ├── UnsupportedTask            UNSUPPORTED_TASK
    ├── TicketError                TICKET_UNKNOWN / TICKET_EXPIRED / STEP_LIMIT
    ├── SourceChanged              SOURCE_CHANGED
    ├── ResultInvalid              RESULT_INVALID
    └── ResultTooLarge             RESULT_TOO_LARGE

Other packages of the suite (``debrief_calc``) subclass :class:`SuiteError` with their own
codes; the server bootstrap turns any of them into a structured tool error.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ArtifactNotFound",
    "InvalidArgument",
    "PathOutsideWorkspace",
    "ResultInvalid",
    "ResultTooLarge",
    "SourceChanged",
    "SourceNotFound",
    "SuiteError",
    "TicketError",
    "UnsupportedTask",
]


class SuiteError(Exception):
    """A failure with a stable code, a helpful message and JSON-safe details."""

    code: str = "INTERNAL"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        next_action: str | None = None,
        callback_args: dict[str, Any] | None = None,
    ):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details: dict[str, Any] = details or {}
        #: one sentence telling the host what to do instead
        self.next_action = next_action
        #: for a retryable callback failure: the arguments to call the callback with again
        self.callback_args = callback_args

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidArgument(SuiteError):
    """A tool argument broke its schema (the field, the rule and the fix in the message)."""

    code = "INVALID_ARGUMENT"


class PathOutsideWorkspace(SuiteError):
    """A path that leaves the workspace (``..``, an absolute path elsewhere, a symlink out)."""

    code = "PATH_OUTSIDE_WORKSPACE"


class SourceNotFound(SuiteError):
    """The file an artifact or a prompt is about does not exist."""

    code = "SOURCE_NOT_FOUND"


class ArtifactNotFound(SuiteError):
    """Nothing is kept in the store under that reference."""

    code = "ARTIFACT_NOT_FOUND"


class UnsupportedTask(SuiteError):
    """A callback task the server does not have (the message lists those it has)."""

    code = "UNSUPPORTED_TASK"


class TicketError(SuiteError):
    """TICKET_UNKNOWN, TICKET_EXPIRED or STEP_LIMIT (the code says which)."""

    code = "TICKET_UNKNOWN"


class SourceChanged(SuiteError):
    """The source changed since the prompt was made: ask for a new prompt."""

    code = "SOURCE_CHANGED"


class ResultInvalid(SuiteError):
    """A model's answer that fails the task's checks; send it again, corrected, on the same ticket."""

    code = "RESULT_INVALID"


class ResultTooLarge(SuiteError):
    """An answer or a result over its size cap (``details.limit``)."""

    code = "RESULT_TOO_LARGE"
