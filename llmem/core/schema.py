"""What a server tells clients about its tools: honest hints and lean schemas (suite.md §9)."""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

__all__ = ["compact_schema", "tool_annotations"]


def tool_annotations(*, read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    """Honest hints: nothing here reaches outside the workspace, so ``openWorldHint`` is false."""
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive if not read_only else False,
        idempotent_hint=True if read_only else idempotent,
        open_world_hint=False,
    )


def compact_schema(schema: dict[str, Any], *, top_description: bool = True) -> dict[str, Any]:
    """A JSON Schema without what pydantic adds for humans: titles, null branches, ``$defs`` indirection."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node and isinstance(node["$ref"], str) and node["$ref"].startswith("#/$defs/"):
            return walk(defs.get(node["$ref"].rsplit("/", 1)[1], {}))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs" or (key == "title" and isinstance(value, str)):
                continue
            if key == "default" and value is None:
                continue
            if key == "additionalProperties" and value is True:
                continue
            if key == "maxLength":  # still enforced, and named in the error when broken
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
                continue
            out[key] = walk(value)
        branches = out.get("anyOf")
        if isinstance(branches, list):
            rest = [b for b in branches if b != {"type": "null"}]
            if len(rest) == 1 and len(rest) < len(branches):
                # X | None → X with "null" added to its type: same meaning, a third of the size.
                del out["anyOf"]
                merged = dict(rest[0])
                merged.update(out)
                if isinstance(merged.get("type"), str):
                    merged["type"] = [merged["type"], "null"]
                elif "enum" in merged:
                    merged["enum"] = [*merged["enum"], None]
                else:
                    merged = {"anyOf": [rest[0], {"type": "null"}], **out}
                out = merged
        return out

    result: dict[str, Any] = walk(schema)
    if not top_description:
        # Output schemas: the top-level shape is what a client checks; the guide explains the rest.
        result.pop("description", None)
        # Only the required members are spelled out; the rest are documented in tool-descriptions.
        required = set(result.get("required", []))
        props = result.get("properties", {})
        result["properties"] = {
            name: {k: v for k, v in sub.items() if k in ("type", "enum")}
            for name, sub in props.items()
            if name in required
        }
    return result
