"""The annotated argument types of the Workspace methods. They are the tools' input schemas too
(the servers build their tools from the methods' signatures), so a description or a constraint
written here is what a model reads in ``tools/list`` and what a script is checked against."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from debrief_calc.plots.cmdcheck import ALIASES, COMMANDS

__all__ = [
    "CommandArg",
    "ContextType",
    "FeaturesArg",
    "Filename",
    "Ids",
    "ResultTask",
    "Revision",
    "Time",
]

Time = Annotated[str | None, Field(max_length=64)]
ContextType = Literal["single", "multi", "region", "none"]
ResultTask = Literal["narrate-result", "summarize-analysis"]
Filename = Annotated[str | None, Field(description="Default: the open plot")]
Revision = Annotated[str | None, Field(max_length=64, description="CONFLICT if the plot is not at it")]
Ids = list[Annotated[str, Field(max_length=512)] | int]
#: The command's schema names every type and alias, so a model never has to guess one; the
#: payloads are in the guide and in every INVALID_COMMAND answer (``details.expected``).
CommandArg = Annotated[
    dict[str, Any] | list[Any],
    WithJsonSchema(
        {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"command": {"enum": [*COMMANDS, *ALIASES]}, "payload": {}},
                    "required": ["command"],
                },
                {"type": "array", "items": {"type": "object"}},
                {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]},
            ],
            "description": "{command, payload}, a list of them (run in order), or a debrief-calc {ref}; "
            "payloads: the guide's Commands, or details.expected of an INVALID_COMMAND answer",
        }
    ),
]
FeaturesArg = Annotated[
    list[dict[str, Any]] | dict[str, Any] | None,
    Field(description="GeoJSON Features and/or {ref} items (import-rep's, a plot feature's), or one {ref}"),
]
