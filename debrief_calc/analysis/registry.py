"""The registry of Debrief analysis tools: what each tool is, accepts, declares and runs.

Pure domain code: no MCP here. A :class:`ToolSpec` holds a tool's metadata (seed 002's
contract: name, description, version, input kinds, output kind, context type, parameters) and
its handler, a function from :class:`ToolInput` to :class:`ToolOutput`. :class:`Registry`
looks tools up and filters them the way ``list_tools`` does. The built-in tools live in
:mod:`debrief_calc.analysis` (its ``default_registry``); this module imports none of them.
Running a tool, with every check of the contract, is :func:`debrief_calc.analysis.executor.run`.

Contexts: ``single`` (exactly one feature), ``multi`` (two or more), ``region`` (bounds, or
one zone), ``none`` (no features). A tool that accepts more than one (``delete-features``
takes one feature or several) names its first in ``context_type`` and the others in
``also_accepts``; ``list_tools(context_type=...)`` matches any of them. ``input_kinds`` of
``("*",)`` means any kind; an empty tuple means the tool takes no features.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from debrief_calc.errors import ToolNotFound, ValidationFailed

__all__ = [
    "ANY_KIND",
    "CONTEXT_TYPES",
    "PARAMETER_TYPES",
    "Parameter",
    "Registry",
    "ToolInput",
    "ToolOutput",
    "ToolSpec",
    "normalise_kind",
]

CONTEXT_TYPES: Final[tuple[str, ...]] = ("single", "multi", "region", "none")
PARAMETER_TYPES: Final[tuple[str, ...]] = ("number", "integer", "boolean", "string", "array")
ANY_KIND: Final = "*"

#: How each context type reads in a message.
CONTEXT_MEANING: Final[dict[str, str]] = {
    "single": "exactly 1 feature",
    "multi": "2 or more features",
    "region": "bounds, or exactly 1 zone feature",
    "none": "no features",
}


def normalise_kind(kind: str) -> str:
    """A kind as :func:`debrief_calc.tracks.features.feature_kind` spells it (``TRACK`` → ``track``,
    ``reference-point`` → ``point``)."""
    k = kind.strip().lower()
    return "point" if k == "reference-point" else k


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class Parameter:
    """One parameter a tool declares. ``minimum`` is exclusive when ``exclusive_minimum``."""

    name: str
    type: str
    description: str
    required: bool = False
    default: Any = None
    choices: tuple[Any, ...] | None = None
    unit: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False

    def __post_init__(self) -> None:
        if self.type not in PARAMETER_TYPES:
            raise ValueError(f"parameter {self.name!r}: type {self.type!r} is not one of {PARAMETER_TYPES}")
        if not self.description.strip():
            raise ValueError(f"parameter {self.name!r} needs a description")
        if self.required and self.default is not None:
            raise ValueError(f"parameter {self.name!r} is required, so it cannot have a default")
        if self.default is not None and self.check(self.default) is not None:
            raise ValueError(f"parameter {self.name!r}: default {self.default!r} breaks its own rules")

    def check(self, value: Any) -> str | None:
        """The rule ``value`` breaks (``"type"``, ``"minimum"``, ``"maximum"``, ``"choices"``),
        or None when it is acceptable."""
        if self.type == "number":
            if not _is_number(value) or not math.isfinite(value):
                return "type"
        elif self.type == "integer":
            if not _is_number(value) or not math.isfinite(value) or value != int(value):
                return "type"
        elif self.type == "boolean":
            if not isinstance(value, bool):
                return "type"
        elif self.type == "string":
            if not isinstance(value, str):
                return "type"
        elif not isinstance(value, list):
            return "type"
        if self.type in ("number", "integer"):
            if self.minimum is not None and (value <= self.minimum if self.exclusive_minimum else value < self.minimum):
                return "minimum"
            if self.maximum is not None and value > self.maximum:
                return "maximum"
        if self.choices is not None and self.coerce_choice(value) is None:
            return "choices"
        return None

    def coerce_choice(self, value: Any) -> Any:
        """The choice ``value`` names (strings compare case-insensitively), or None."""
        assert self.choices is not None
        if isinstance(value, str):
            for choice in self.choices:
                if isinstance(choice, str) and choice.lower() == value.strip().lower():
                    return choice
            return None
        return value if value in self.choices else None

    def rule_text(self) -> str:
        """The rules of this parameter in words, for error messages."""
        parts = [f"a {self.type}" if self.type != "integer" else "an integer"]
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive_minimum else '>='} {self.minimum:g}")
        if self.maximum is not None:
            parts.append(f"<= {self.maximum:g}")
        if self.choices is not None:
            parts.append("one of " + ", ".join(map(str, self.choices)))
        return " ".join(parts)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "required": self.required,
            "default": self.default,
            "choices": list(self.choices) if self.choices is not None else None,
            "unit": self.unit,
            "minimum": self.minimum,
            "maximum": self.maximum,
        }
        if self.exclusive_minimum:
            out["exclusive_minimum"] = True
        return out


@dataclass(frozen=True)
class ToolInput:
    """What a handler gets: the input features (plain dicts that it must not change), the
    parameters (validated, defaults filled), the region bounds ``(w, s, e, n)`` when given,
    and a reader of workspace files (``read_text(relative_path) -> str``) when the server
    gave one; the reader enforces that the path stays inside the workspace. ``current_time``
    (epoch seconds) is the current time of the plot the features were read from, when they
    were: the time a tool that works at one instant (``tote``) takes by default."""

    features: Sequence[Mapping[str, Any]]
    parameters: Mapping[str, Any]
    bounds: tuple[float, float, float, float] | None = None
    read_text: Callable[[str], str] | None = None
    current_time: float | None = None


@dataclass
class ToolOutput:
    """What a handler returns.

    ``features`` are new result features (the executor gives each an id when it has none and
    stamps provenance on it); ``commands`` are DebriefCommands ``{command, payload}`` for the
    state server. ``feature_sources``, when given, lists for each result feature the input
    features it was computed from (``{id, kind}``); otherwise every input is a source.
    ``report`` carries a tool-specific account that is not a feature (import-rep's per-line
    report); ``warnings`` are sentences for the user.
    """

    features: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    report: dict[str, Any] | None = None
    feature_sources: list[list[dict[str, Any]]] | None = None


Handler = Callable[[ToolInput], ToolOutput]


@dataclass(frozen=True)
class ToolSpec:
    """An analysis tool: its contract metadata and its handler."""

    name: str
    description: str
    version: str
    input_kinds: tuple[str, ...]
    output_kind: str | None
    context_type: str
    parameters: tuple[Parameter, ...]
    handler: Handler = field(repr=False, compare=False)
    also_accepts: tuple[str, ...] = ()
    #: kinds a result feature may have besides ``output_kind`` (import-rep: annotation, zone)
    also_outputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for ctx in self.contexts:
            if ctx not in CONTEXT_TYPES:
                raise ValueError(f"tool {self.name!r}: context {ctx!r} is not one of {CONTEXT_TYPES}")
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"tool {self.name!r} declares a parameter twice: {names}")
        if self.output_kind is None and self.also_outputs:
            raise ValueError(f"tool {self.name!r}: also_outputs needs an output_kind")

    @property
    def contexts(self) -> tuple[str, ...]:
        return (self.context_type, *self.also_accepts)

    @property
    def output_kinds(self) -> tuple[str, ...]:
        return () if self.output_kind is None else (self.output_kind, *self.also_outputs)

    def accepts_kind(self, kind: str) -> bool:
        return ANY_KIND in self.input_kinds or normalise_kind(kind) in self.input_kinds

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def summary(self) -> dict[str, Any]:
        """The lean form ``list_tools`` returns."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "input_kinds": list(self.input_kinds),
            "output_kind": self.output_kind,
            "context_type": self.context_type,
            "parameters": [p.name for p in self.parameters],
        }
        if self.also_accepts:
            out["also_accepts"] = list(self.also_accepts)
        return out

    def describe(self) -> dict[str, Any]:
        """The full form ``describe_tool`` returns: every parameter with all its rules."""
        out = self.summary()
        out["parameters"] = [p.describe() for p in self.parameters]
        out["context_types"] = list(self.contexts)
        out["output_kinds"] = list(self.output_kinds)
        return out


class Registry:
    """Analysis tools by name."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._tools:
            raise ValueError(f"a tool named {spec.name!r} is already registered")
        self._tools[spec.name] = spec

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> ToolSpec:
        spec = self._tools.get(name) if isinstance(name, str) else None
        if spec is None:
            available = self.names()
            raise ToolNotFound(
                f"no analysis tool named {name!r}; available: {', '.join(available)}",
                details={"name": repr(name) if not isinstance(name, str) else name, "available": available},
                next_action="call list_tools to see the tools and pick one of the available names",
            )
        return spec

    def list(self, context_type: str | None = None, kinds: Iterable[str] | None = None) -> list[ToolSpec]:
        """The tools usable in ``context_type`` that accept at least one of ``kinds``
        (None or empty: no filter). A tool that takes no features matches no kinds."""
        if context_type is not None and context_type not in CONTEXT_TYPES:
            raise ValidationFailed(
                f"context_type {context_type!r} is not one of {', '.join(CONTEXT_TYPES)}",
                details={"field": "context_type", "rule": "choices", "value": repr(context_type)},
            )
        kind_list = [] if kinds is None else list(kinds)
        if any(not isinstance(k, str) for k in kind_list):
            raise ValidationFailed("kinds must be a list of strings", details={"field": "kinds", "rule": "type"})
        wanted = [normalise_kind(k) for k in kind_list]
        out = []
        for spec in self._tools.values():
            if context_type is not None and context_type not in spec.contexts:
                continue
            if wanted and not any(spec.accepts_kind(k) for k in wanted):
                continue
            out.append(spec)
        return out

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)
