"""What an analysis tool's handler returned, checked and stamped: every result feature a GeoJSON
Feature of the tool's output kind with an id and a provenance stamp; every command
``{command, payload}``, carrying only the stamped results."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any, Final

from debrief_calc.analysis.registry import ToolOutput, ToolSpec
from debrief_calc.errors import ValidationFailed
from debrief_calc.tracks._feature_parts import raw_id
from debrief_calc.tracks.features import feature_kind

__all__ = ["output_error", "provenance_value", "stamp_features", "validate_commands"]

_GEOMETRY_TYPES: Final = frozenset(
    {"Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon", "GeometryCollection"}
)
_FEATURE_COMMANDS: Final = frozenset({"addFeatures", "updateFeatures"})
# Parameter strings longer than this (import-rep's inline REP text) are recorded in
# provenance by digest and length rather than copied onto every result feature.
_PROVENANCE_STRING_MAX: Final = 256


def output_error(spec: ToolSpec, field_name: str, message: str, **extra: Any) -> ValidationFailed:
    return ValidationFailed(
        f"tool {spec.name!r} produced an invalid result: {field_name}: {message}",
        details={"field": field_name, "rule": "output", "tool": spec.name, **extra},
    )


def _check_plain_json(spec: ToolSpec, field_name: str, value: Any, index: int) -> None:
    """``value`` must serialise as plain JSON (no NaN, no cycles, no objects JSON lacks)."""
    try:
        json.dumps(value, allow_nan=False, check_circular=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise output_error(spec, field_name, f"is not plain JSON ({exc})", index=index) from None


def provenance_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _PROVENANCE_STRING_MAX:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return {"sha256": digest, "chars": len(value)}
    return value


def stamp_features(
    spec: ToolSpec, output: ToolOutput, sources: list[dict[str, Any]], base: dict[str, Any]
) -> list[dict[str, Any]]:
    results = output.features
    if not isinstance(results, list):
        raise output_error(spec, "features", "must be a list")
    per_feature = output.feature_sources
    if per_feature is not None and (not isinstance(per_feature, list) or len(per_feature) != len(results)):
        raise output_error(spec, "feature_sources", "must list the sources of each result feature")
    if results and spec.output_kind is None:
        raise output_error(spec, "features", f"the tool declares no output kind but returned {len(results)}")
    stamped = []
    for i, f in enumerate(results):
        where = f"features[{i}]"
        if not isinstance(f, dict) or f.get("type") != "Feature":
            raise output_error(spec, where, "is not a GeoJSON Feature", index=i)
        geometry = f.get("geometry")
        if geometry is not None and (not isinstance(geometry, dict) or geometry.get("type") not in _GEOMETRY_TYPES):
            raise output_error(spec, f"{where}.geometry", "is not a GeoJSON geometry", index=i)
        props = f.get("properties")
        if not isinstance(props, dict):
            raise output_error(spec, f"{where}.properties", "must be an object", index=i)
        kind = feature_kind(f)
        if kind not in spec.output_kinds:
            raise output_error(
                spec,
                f"{where}.properties.kind",
                f"is {kind!r}, the tool's output kind is {' or '.join(map(repr, spec.output_kinds))}",
                index=i,
            )
        _check_plain_json(spec, f"{where}.properties", props, i)
        fid = f.get("id")
        if raw_id(f) is None:
            fid = f"result-{uuid.uuid4().hex[:12]}"
        provenance = {**base, "sources": per_feature[i] if per_feature is not None else sources}
        rest = {k: v for k, v in f.items() if k not in ("type", "id", "properties")}
        stamped.append({"type": "Feature", "id": fid, **rest, "properties": {**props, "provenance": provenance}})
    return stamped


def validate_commands(
    spec: ToolSpec, commands: object, stamped_by_identity: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    if not isinstance(commands, list):
        raise output_error(spec, "commands", "must be a list")
    out = []
    for i, cmd in enumerate(commands):
        where = f"commands[{i}]"
        if not isinstance(cmd, dict) or not isinstance(cmd.get("command"), str) or not cmd["command"]:
            raise output_error(spec, where, "must be {command: string, payload}", index=i)
        if "payload" not in cmd:
            raise output_error(spec, f"{where}.payload", "is missing", index=i)
        payload = cmd["payload"]
        if cmd["command"] in _FEATURE_COMMANDS and isinstance(payload, dict) and "features" in payload:
            carried = payload["features"]
            if not isinstance(carried, list) or any(id(f) not in stamped_by_identity for f in carried):
                raise output_error(
                    spec, f"{where}.payload.features", "a command may only carry the tool's result features", index=i
                )
            rest = {k: v for k, v in payload.items() if k != "features"}
            payload = {**rest, "features": [stamped_by_identity[id(f)] for f in carried]}
        else:
            rest = payload
        _check_plain_json(spec, f"{where}.payload", rest, i)
        out.append({**cmd, "payload": payload})
    return out
