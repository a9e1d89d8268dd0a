"""What a run of an analysis tool is given, checked against the tool's declarations before its
handler runs: parameters, features, bounds, the context (how many features) and their kinds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from debrief_calc.analysis.registry import CONTEXT_MEANING, ToolSpec
from debrief_calc.errors import InvalidContext, KindMismatch, ValidationFailed
from debrief_calc.tracks._feature_parts import raw_id
from debrief_calc.tracks.features import feature_kind

__all__ = [
    "check_context",
    "check_kinds",
    "safe_value",
    "source_of",
    "validate_bounds",
    "validate_features",
    "validate_parameters",
]


def safe_value(value: Any) -> Any:
    """``value`` when it is a JSON scalar (strings capped), else its capped repr."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 2**63):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return value[:100]
    return repr(value)[:100]


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
                "unknown": [safe_value(k) for k in unknown],
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
                f"parameter {p.name!r} of tool {spec.name!r} must be {p.rule_text()}, got {safe_value(value)!r} "
                f"(breaks rule: {rule})",
                details={
                    "field": p.name,
                    "parameter": p.name,
                    "rule": rule,
                    "value": safe_value(value),
                    "expected": p.rule_text(),
                },
            )
        if p.choices is not None:
            value = p.coerce_choice(value)
        elif p.type == "integer":
            value = int(value)
        out[p.name] = value
    return out


def validate_features(features: object) -> list[Mapping[str, Any]]:
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
            problem = f"has type {safe_value(f.get('type'))!r}: a GeoJSON Feature has type 'Feature'"
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


def validate_bounds(bounds: object) -> tuple[float, float, float, float] | None:
    if bounds is None:
        return None

    def fail(message: str) -> ValidationFailed:
        return ValidationFailed(
            f"bounds {message}: give [west, south, east, north] in degrees",
            details={"field": "bounds", "rule": "bounds", "value": safe_value(bounds)},
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


def check_context(spec: ToolSpec, feats: list[Mapping[str, Any]], bounds: object) -> None:
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


def check_kinds(spec: ToolSpec, feats: list[Mapping[str, Any]]) -> None:
    for i, f in enumerate(feats):
        kind = feature_kind(f)
        if not spec.accepts_kind(kind):
            fid = raw_id(f)
            expected = ", ".join(repr(k) for k in spec.input_kinds) or "no features"
            raise KindMismatch(
                f"tool {spec.name!r} requires features of kind {expected}, got {kind!r} (features[{i}], id {fid!r}): "
                f"pass only features (or plot.feature_ids) of kind {expected}, leaving {fid or f'features[{i}]'!r} "
                "out, or the whole plot (plot without feature_ids), from which the other kinds are left out",
                details={
                    "expected_kinds": list(spec.input_kinds),
                    "received_kind": kind,
                    "feature_id": fid,
                    "index": i,
                },
                next_action=f"leave that feature out, or call list_tools with kinds=[{kind!r}] for tools that take it",
            )


def source_of(f: Mapping[str, Any], index: int) -> dict[str, Any]:
    return {"id": raw_id(f) or f"#{index}", "kind": feature_kind(f)}
