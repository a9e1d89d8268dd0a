"""Running an analysis tool with every check of the contract (seed 002); never raises.

:func:`run` looks the tool up, validates the parameters (unknown names, types, ranges,
choices; defaults filled), the features (GeoJSON Features), the bounds, the context (how many
features) and the kinds, runs the handler, and then validates what the handler returned:
every result feature is a GeoJSON Feature of the tool's output kind, gets an id
(``result-<12 hex>``) when it has none and a ``properties.provenance`` stamp
``{tool, version, timestamp, sources: [{id, kind}], parameters}``; every command is
``{command: str, payload}``, and a feature a command adds is one of the stamped results.

Any failure comes back in :attr:`RunResult.error` as ``{code, message, details}``: the code of
a :class:`~llmem.errors.SuiteError` the handler raised, or ``EXECUTION_ERROR`` for any other
exception (its type and message, with absolute paths scrubbed; the traceback goes to the
``debrief_calc.executor`` log only).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from debrief_calc.errors import (
    ExecutionError,
    InvalidContext,
    KindMismatch,
    ValidationFailed,
)
from debrief_calc.features import feature_kind, iso
from debrief_calc.registry import CONTEXT_MEANING, Registry, ToolInput, ToolOutput, ToolSpec
from llmem.errors import SuiteError

__all__ = ["RunResult", "run", "validate_parameters"]

log = logging.getLogger("debrief_calc.executor")

_GEOMETRY_TYPES: Final = frozenset(
    {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"}
)
_FEATURE_COMMANDS: Final = frozenset({"addFeatures", "updateFeatures"})
# Parameter strings longer than this (import-rep's inline REP text) are recorded in
# provenance by digest and length rather than copied onto every result feature.
_PROVENANCE_STRING_MAX: Final = 256
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
) -> RunResult:
    """Run ``tool_name`` on ``features``; a :class:`RunResult`, whatever happens."""
    start = time.perf_counter()
    name = tool_name if isinstance(tool_name, str) else repr(tool_name)
    result = RunResult(success=False, tool=name)
    try:
        spec = registry.get(tool_name)
        output, stamped, commands = _run(spec, features, parameters, bounds, read_text, clock)
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
) -> tuple[ToolOutput, list[dict[str, Any]], list[dict[str, Any]]]:
    params = validate_parameters(spec, parameters)
    feats = _validate_features(features)
    box = _validate_bounds(bounds)
    _check_context(spec, feats, box)
    _check_kinds(spec, feats)
    sources = [_source(f, i) for i, f in enumerate(feats)]

    try:
        output = spec.handler(ToolInput(features=tuple(feats), parameters=params, bounds=box, read_text=read_text))
    except SuiteError:
        raise
    except Exception as exc:
        log.exception("analysis tool %s raised", spec.name)
        raise ExecutionError(
            f"tool {spec.name!r} failed: {type(exc).__name__}: {_scrub(str(exc))}",
            details={"tool": spec.name, "exception": type(exc).__name__},
        ) from None

    if not isinstance(output, ToolOutput):
        raise _output_error(spec, "result", f"the handler returned {type(output).__name__}, not a ToolOutput")
    now = (clock or _utc_now)()
    provenance_base = {
        "tool": spec.name,
        "version": spec.version,
        "timestamp": iso(now.timestamp()),
        "parameters": {k: _provenance_value(v) for k, v in params.items()},
    }
    stamped = _stamp_features(spec, output, sources, provenance_base)
    commands = _validate_commands(
        spec, output.commands, {id(f): s for f, s in zip(output.features, stamped, strict=True)}
    )
    return output, stamped, commands


def _utc_now() -> datetime:
    return datetime.now(UTC)


# --- errors --------------------------------------------------------------------------------


def _scrub(text: str) -> str:
    """An exception message without absolute paths, capped."""
    return _PATH_RE.sub("<path>", text)[:500]


def _safe(value: Any) -> Any:
    """``value`` when it is a JSON scalar (strings capped), else its capped repr."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 2**63):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return value[:100]
    return repr(value)[:100]


def _error_dict(exc: SuiteError) -> dict[str, Any]:
    details = exc.details if isinstance(exc.details, dict) else {}
    try:
        json.dumps(details, allow_nan=False)
    except (TypeError, ValueError):
        details = {k: _safe(v) for k, v in details.items()}
    return {"code": exc.code, "message": str(exc.message), "details": details}


def _output_error(spec: ToolSpec, field_name: str, message: str, **extra: Any) -> ValidationFailed:
    return ValidationFailed(
        f"tool {spec.name!r} produced an invalid result: {field_name}: {message}",
        details={"field": field_name, "rule": "output", "tool": spec.name, **extra},
    )


# --- input ---------------------------------------------------------------------------------


def validate_parameters(spec: ToolSpec, parameters: object) -> dict[str, Any]:
    """``parameters`` checked against the tool's declarations, defaults filled in.

    A null value counts as not given. String choices compare case-insensitively and come
    back as declared; a whole number given for an integer parameter comes back as an int.
    """
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, Mapping):
        raise ValidationFailed(
            f"parameters must be an object, got {type(parameters).__name__}",
            details={"field": "parameters", "rule": "type"},
        )
    allowed = [p.name for p in spec.parameters]
    unknown = [k for k in parameters if k not in allowed]
    if unknown:
        listed = ", ".join(repr(str(k)) for k in unknown)
        raise ValidationFailed(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {listed} for tool {spec.name!r}; "
            f"allowed: {', '.join(allowed) or '(none)'}",
            details={
                "field": "parameters",
                "rule": "unknown",
                "unknown": [_safe(k) for k in unknown],
                "allowed": allowed,
            },
        )
    out: dict[str, Any] = {}
    for p in spec.parameters:
        value = parameters.get(p.name)
        if value is None:
            if p.required:
                raise ValidationFailed(
                    f"parameter {p.name!r} of tool {spec.name!r} is required: give {p.rule_text()}",
                    details={"field": p.name, "parameter": p.name, "rule": "required", "expected": p.rule_text()},
                )
            out[p.name] = p.default
            continue
        rule = p.check(value)
        if rule is not None:
            raise ValidationFailed(
                f"parameter {p.name!r} of tool {spec.name!r} must be {p.rule_text()}, got {_safe(value)!r} "
                f"(breaks rule: {rule})",
                details={
                    "field": p.name,
                    "parameter": p.name,
                    "rule": rule,
                    "value": _safe(value),
                    "expected": p.rule_text(),
                },
            )
        if p.choices is not None:
            value = p.coerce_choice(value)
        elif p.type == "integer":
            value = int(value)
        out[p.name] = value
    return out


def _validate_features(features: object) -> list[Mapping[str, Any]]:
    if features is None:
        return []
    if not isinstance(features, list | tuple):
        raise ValidationFailed(
            f"features must be a list of GeoJSON Features, got {type(features).__name__}",
            details={"field": "features", "rule": "type"},
        )
    for i, f in enumerate(features):
        problem = None
        if not isinstance(f, Mapping):
            problem = f"is a {type(f).__name__}, not an object"
        elif f.get("type") != "Feature":
            problem = f"has type {_safe(f.get('type'))!r}: a GeoJSON Feature has type 'Feature'"
        elif f.get("properties") is not None and not isinstance(f.get("properties"), Mapping):
            problem = "has properties that are not an object"
        elif f.get("geometry") is not None and not isinstance(f.get("geometry"), Mapping):
            problem = "has a geometry that is not an object"
        if problem:
            raise ValidationFailed(
                f"features[{i}] {problem}",
                details={"field": f"features[{i}]", "index": i, "rule": "feature"},
            )
    return list(features)


def _validate_bounds(bounds: object) -> tuple[float, float, float, float] | None:
    if bounds is None:
        return None

    def fail(message: str) -> ValidationFailed:
        return ValidationFailed(
            f"bounds {message}: give [west, south, east, north] in degrees",
            details={"field": "bounds", "rule": "bounds", "value": _safe(bounds)},
        )

    if not isinstance(bounds, list | tuple) or len(bounds) != 4:
        raise fail("must be a list of 4 numbers")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in bounds):
        raise fail("must hold finite numbers")
    w, s, e, n = (float(v) for v in bounds)
    if not (-180 <= w < e <= 180):
        raise fail("need -180 <= west < east <= 180")
    if not (-90 <= s < n <= 90):
        raise fail("need -90 <= south < north <= 90")
    return (w, s, e, n)


def _context_ok(context: str, count: int, bounds: object) -> bool:
    if context == "single":
        return count == 1
    if context == "multi":
        return count >= 2
    if context == "region":
        return count == 1 or (count == 0 and bounds is not None)
    return count == 0


def _check_context(spec: ToolSpec, feats: list[Mapping[str, Any]], bounds: object) -> None:
    if any(_context_ok(ctx, len(feats), bounds) for ctx in spec.contexts):
        return
    expected = " or ".join(f"{ctx} ({CONTEXT_MEANING[ctx]})" for ctx in spec.contexts)
    received = f"{len(feats)} feature{'s' if len(feats) != 1 else ''}"
    if "region" in spec.contexts:
        received += " and bounds" if bounds is not None else " and no bounds"
    raise InvalidContext(
        f"tool {spec.name!r} expects {expected}, received {received}",
        details={
            "expected": spec.context_type,
            "accepted": list(spec.contexts),
            "received_count": len(feats),
            "bounds_given": bounds is not None,
        },
        next_action="change the selection to fit, or call list_tools with context_type for the tools that fit it",
    )


def _check_kinds(spec: ToolSpec, feats: list[Mapping[str, Any]]) -> None:
    for i, f in enumerate(feats):
        kind = feature_kind(f)
        if not spec.accepts_kind(kind):
            fid = _raw_id(f)
            expected = ", ".join(repr(k) for k in spec.input_kinds) or "no features"
            raise KindMismatch(
                f"tool {spec.name!r} requires features of kind {expected}, got {kind!r} (features[{i}], id {fid!r})",
                details={
                    "expected_kinds": list(spec.input_kinds),
                    "received_kind": kind,
                    "feature_id": fid,
                    "index": i,
                },
                next_action=f"leave that feature out, or call list_tools with kinds=[{kind!r}] for tools that take it",
            )


def _raw_id(f: Mapping[str, Any]) -> str | None:
    fid = f.get("id")
    if isinstance(fid, bool) or not isinstance(fid, str | int | float) or fid == "":
        return None
    return str(fid)


def _source(f: Mapping[str, Any], index: int) -> dict[str, Any]:
    return {"id": _raw_id(f) or f"#{index}", "kind": feature_kind(f)}


# --- output --------------------------------------------------------------------------------


def _provenance_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _PROVENANCE_STRING_MAX:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return {"sha256": digest, "chars": len(value)}
    return value


def _stamp_features(
    spec: ToolSpec, output: ToolOutput, sources: list[dict[str, Any]], base: dict[str, Any]
) -> list[dict[str, Any]]:
    results = output.features
    if not isinstance(results, list):
        raise _output_error(spec, "features", "must be a list")
    per_feature = output.feature_sources
    if per_feature is not None and (not isinstance(per_feature, list) or len(per_feature) != len(results)):
        raise _output_error(spec, "feature_sources", "must list the sources of each result feature")
    if results and spec.output_kind is None:
        raise _output_error(spec, "features", f"the tool declares no output kind but returned {len(results)}")
    stamped = []
    for i, f in enumerate(results):
        where = f"features[{i}]"
        if not isinstance(f, dict) or f.get("type") != "Feature":
            raise _output_error(spec, where, "is not a GeoJSON Feature", index=i)
        geometry = f.get("geometry")
        if geometry is not None and (not isinstance(geometry, dict) or geometry.get("type") not in _GEOMETRY_TYPES):
            raise _output_error(spec, f"{where}.geometry", "is not a GeoJSON geometry", index=i)
        props = f.get("properties")
        if not isinstance(props, dict):
            raise _output_error(spec, f"{where}.properties", "must be an object", index=i)
        kind = feature_kind(f)
        if kind not in spec.output_kinds:
            raise _output_error(
                spec,
                f"{where}.properties.kind",
                f"is {kind!r}, the tool's output kind is {' or '.join(map(repr, spec.output_kinds))}",
                index=i,
            )
        try:
            json.dumps(props, allow_nan=False, check_circular=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise _output_error(spec, f"{where}.properties", f"is not plain JSON ({exc})", index=i) from None
        fid = f.get("id")
        if _raw_id(f) is None:
            fid = f"result-{uuid.uuid4().hex[:12]}"
        provenance = {**base, "sources": per_feature[i] if per_feature is not None else sources}
        rest = {k: v for k, v in f.items() if k not in ("type", "id", "properties")}
        stamped.append({"type": "Feature", "id": fid, **rest, "properties": {**props, "provenance": provenance}})
    return stamped


def _validate_commands(
    spec: ToolSpec, commands: object, stamped_by_identity: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    if not isinstance(commands, list):
        raise _output_error(spec, "commands", "must be a list")
    out = []
    for i, cmd in enumerate(commands):
        where = f"commands[{i}]"
        if not isinstance(cmd, dict) or not isinstance(cmd.get("command"), str) or not cmd["command"]:
            raise _output_error(spec, where, "must be {command: string, payload}", index=i)
        if "payload" not in cmd:
            raise _output_error(spec, f"{where}.payload", "is missing", index=i)
        payload = cmd["payload"]
        if cmd["command"] in _FEATURE_COMMANDS and isinstance(payload, dict) and "features" in payload:
            carried = payload["features"]
            if not isinstance(carried, list) or any(id(f) not in stamped_by_identity for f in carried):
                raise _output_error(
                    spec, f"{where}.payload.features", "a command may only carry the tool's result features", index=i
                )
            rest = {k: v for k, v in payload.items() if k != "features"}
            payload = {**rest, "features": [stamped_by_identity[id(f)] for f in carried]}
        else:
            rest = payload
        try:
            json.dumps(rest, allow_nan=False, check_circular=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise _output_error(spec, f"{where}.payload", f"is not plain JSON ({exc})", index=i) from None
        out.append({**cmd, "payload": payload})
    return out
