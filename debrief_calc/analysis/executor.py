"""Running an analysis tool with every check of the contract (seed 002); never raises.

:func:`run` looks the tool up, validates the parameters (unknown names, types, ranges,
choices; defaults filled), the features (GeoJSON Features), the bounds, the context (how many
features) and the kinds, runs the handler, and then validates what the handler returned:
every result feature is a GeoJSON Feature of the tool's output kind, gets an id
(``result-<12 hex>``) when it has none and a ``properties.provenance`` stamp
``{tool, version, timestamp, sources: [{id, kind}], parameters}``; every command is
``{command: str, payload}``, and a feature a command adds is one of the stamped results.

Any failure comes back in :attr:`RunResult.error` as ``{code, message, details}``: the code of
a :class:`~llmem.core.errors.SuiteError` the handler raised, or ``EXECUTION_ERROR`` for any other
exception (its type and message, with absolute paths scrubbed; the traceback goes to the
``debrief_calc.analysis.executor`` log only).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from debrief_calc.analysis._input_checks import (
    check_context,
    check_kinds,
    safe_value,
    source_of,
    validate_bounds,
    validate_features,
    validate_parameters,
)
from debrief_calc.analysis._output_checks import output_error, provenance_value, stamp_features, validate_commands
from debrief_calc.analysis.registry import Registry, ToolInput, ToolOutput, ToolSpec
from debrief_calc.errors import ExecutionError
from debrief_calc.tracks.features import iso
from llmem.core.errors import SuiteError

__all__ = ["RunResult", "run", "validate_parameters"]

log = logging.getLogger("debrief_calc.analysis.executor")

_PATH_RE: Final = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[/\\](?:[^\s'\"/\\]+[/\\])+[^\s'\"/\\]*")


@dataclass
class RunResult:
    """The outcome of one run: results or an error, and how long it took."""

    success: bool
    tool: str
    features: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    duration_ms: float = 0.0
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None
    #: on failure, one sentence telling the caller what to do instead (when the error has one)
    next_action: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``run_tool`` answer of the contract."""
        if not self.success:
            return {"success": False, "error": self.error, "duration_ms": self.duration_ms}
        out: dict[str, Any] = {
            "success": True,
            "features": self.features,
            "commands": self.commands,
            "duration_ms": self.duration_ms,
        }
        if self.warnings:
            out["warnings"] = self.warnings
        if self.messages:
            out["messages"] = self.messages
        if self.report is not None:
            out["report"] = self.report
        return out


def run(
    registry: Registry,
    tool_name: str,
    features: Sequence[Mapping[str, Any]] | None,
    parameters: Mapping[str, Any] | None,
    *,
    bounds: Sequence[float] | None = None,
    read_text: Callable[[str], str] | None = None,
    clock: Callable[[], datetime] | None = None,
    current_time: float | None = None,
) -> RunResult:
    """Run ``tool_name`` on ``features``; a :class:`RunResult`, whatever happens. ``current_time``
    (epoch seconds): the current time of the plot the features came from, for the handler."""
    start = time.perf_counter()
    name = tool_name if isinstance(tool_name, str) else repr(tool_name)
    result = RunResult(success=False, tool=name)
    try:
        spec = registry.get(tool_name)
        output, stamped, commands = _run(spec, features, parameters, bounds, read_text, clock, current_time)
        result.success = True
        result.features = stamped
        result.commands = commands
        result.warnings = [str(w) for w in output.warnings]
        result.messages = [str(m) for m in output.messages]
        result.report = output.report
    except SuiteError as exc:
        result.error = _error_dict(exc)
        result.next_action = exc.next_action
    except Exception as exc:
        log.exception("analysis tool %s failed", name)
        result.error = {
            "code": ExecutionError.code,
            "message": f"tool {name!r} failed: {type(exc).__name__}: {_scrub(str(exc))}",
            "details": {"tool": name, "exception": type(exc).__name__},
        }
    result.duration_ms = round((time.perf_counter() - start) * 1000, 3)
    return result


def _run(
    spec: ToolSpec,
    features: object,
    parameters: object,
    bounds: object,
    read_text: Callable[[str], str] | None,
    clock: Callable[[], datetime] | None,
    current_time: float | None,
) -> tuple[ToolOutput, list[dict[str, Any]], list[dict[str, Any]]]:
    params = validate_parameters(spec, parameters)
    feats = validate_features(features)
    box = validate_bounds(bounds)
    check_context(spec, feats, box)
    check_kinds(spec, feats)
    sources = [source_of(f, i) for i, f in enumerate(feats)]

    try:
        output = spec.handler(
            ToolInput(
                features=tuple(feats), parameters=params, bounds=box, read_text=read_text, current_time=current_time
            )
        )
    except SuiteError:
        raise
    except Exception as exc:
        log.exception("analysis tool %s raised", spec.name)
        raise ExecutionError(
            f"tool {spec.name!r} failed: {type(exc).__name__}: {_scrub(str(exc))}",
            details={"tool": spec.name, "exception": type(exc).__name__},
        ) from None

    if not isinstance(output, ToolOutput):
        raise output_error(spec, "result", f"the handler returned {type(output).__name__}, not a ToolOutput")
    now = (clock or _utc_now)()
    provenance_base = {
        "tool": spec.name,
        "version": spec.version,
        "timestamp": iso(now.timestamp()),
        "parameters": {k: provenance_value(v) for k, v in params.items()},
    }
    stamped = stamp_features(spec, output, sources, provenance_base)
    commands = validate_commands(
        spec, output.commands, {id(f): s for f, s in zip(output.features, stamped, strict=True)}
    )
    return output, stamped, commands


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _scrub(text: str) -> str:
    """An exception message without absolute paths, capped."""
    return _PATH_RE.sub("<path>", text)[:500]


def _error_dict(exc: SuiteError) -> dict[str, Any]:
    details = exc.details if isinstance(exc.details, dict) else {}
    try:
        json.dumps(details, allow_nan=False)
    except (TypeError, ValueError):
        details = {k: safe_value(v) for k, v in details.items()}
    return {"code": exc.code, "message": str(exc.message), "details": details}
