"""The response envelope of the callback protocol (seed 001), shared by the suite's servers."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from llmem.core.errors import SuiteError

__all__ = ["Envelope", "ErrorInfo", "error_envelope", "failure_answer"]


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable upper-case error code")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class Envelope(BaseModel):
    """``status`` says which of the other fields are set; ``nextAction`` always says what to do next.

    ``success`` is set only by servers whose other tools answer ``{success: ...}`` (the Debrief
    servers), so that their callback pair answers in the same shape: see :meth:`with_success`.
    """

    success: bool | None = None
    status: Literal["success", "error", "prompt_ready"]
    data: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    promptForHostLLM: str | None = None
    callbackTool: str | None = None
    callbackArgs: dict[str, Any] | None = None
    nextAction: str | None = None

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        # Unset optional fields are left out of the wire form: they only cost the host context.
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)

    def wire_content(self) -> dict[str, Any]:
        """What ``model_dump(mode="json")`` gives, without copying ``data`` and ``callbackArgs``.

        The answer is serialised for the wire right after, so a deep copy of what the tool built
        would be one more walk of it on every call. The dicts are shared: do not change them.
        """
        out: dict[str, Any] = {} if self.success is None else {"success": self.success}
        out["status"] = self.status
        if self.data is not None:
            out["data"] = self.data
        if self.error is not None:
            out["error"] = self.error.model_dump(mode="json")
        for name in ("promptForHostLLM", "callbackTool", "callbackArgs", "nextAction"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    def with_success(self) -> Envelope:
        """This envelope with ``success`` set from ``status`` (false only for an error)."""
        return self.model_copy(update={"success": self.status != "error"})


def error_envelope(err: SuiteError) -> Envelope:
    return Envelope(
        status="error",
        error=ErrorInfo(code=err.code, message=err.message, details=err.details),
        callbackTool="store_llm_result" if err.callback_args else None,
        callbackArgs=err.callback_args,
        nextAction=err.next_action or "Read error.message, correct the call and try again.",
    )


def failure_answer(err: SuiteError) -> dict[str, Any]:
    """A callback tool's failure in the one shape every tool of a ``{success}`` server answers:
    ``{success: false, error, nextAction}`` (with ``callbackTool``/``callbackArgs`` when the
    answer can be sent again), without the envelope's ``status``."""
    out = error_envelope(err).with_success().model_dump(mode="json")
    del out["status"]
    return out
