"""Arguments checked against a function's signature, as a tool's are, without MCP.

A server's tools are checked by the SDK against a pydantic model of their signature; a Python
caller of the same function gets the same check from :func:`checked_call`: one pydantic model
per signature (the annotations, ``Field`` constraints and defaults as written), and the same
error, :func:`argument_error`, naming the field, the rule and the fix.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from llmem.core.errors import InvalidArgument, SuiteError

__all__ = ["argument_error", "checked_call", "no_schema_description", "unchecked"]

P = ParamSpec("P")
R = TypeVar("R")


def argument_error(exc: ValidationError, code: str, cls: type[SuiteError] = InvalidArgument) -> SuiteError:
    """The error for arguments that broke their schema: the first field, its rule, how many more."""
    problems = []
    for e in exc.errors(include_url=False, include_input=False):
        field = ".".join(str(p) for p in e["loc"]) or "arguments"
        problems.append({"field": field, "rule": e["type"], "message": e["msg"]})
    first = problems[0] if problems else {"field": "arguments", "message": "invalid"}
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return cls(
        f"argument {first['field']!r}: {first['message']}{more}",
        code=code,
        details={"field": first["field"], "errors": problems},
        next_action="Correct the named argument as the tool's input schema says and call again.",
    )


class _Arguments(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


def _model(fn: Callable[..., Any]) -> tuple[inspect.Signature, type[BaseModel]]:
    """The signature of ``fn`` (a method: ``self`` left out) and the model of its arguments."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name == "self":
            continue
        if hasattr(BaseModel, name):  # pragma: no cover - a guard for whoever adds such a parameter
            raise TypeError(f"{fn.__qualname__}: parameter {name!r} shadows a pydantic BaseModel attribute")
        annotation = hints.get(name, Any)
        fields[name] = (annotation, ...) if param.default is inspect.Parameter.empty else (annotation, param.default)
    return signature, create_model(f"{fn.__name__}_arguments", __base__=_Arguments, **fields)


def checked_call(code: str, cls: type[SuiteError] = InvalidArgument) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the function's arguments are checked (and converted: a dict becomes the
    pydantic model its parameter names) against its own signature before it runs, as the SDK
    checks a tool's; a failure raises ``cls`` with ``code`` (:func:`argument_error`). The model
    is made at the first call, so that importing a module of such functions stays cheap.
    :func:`unchecked` gives the function itself, for a caller that has checked them already."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        made: list[tuple[inspect.Signature, type[BaseModel]]] = []

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if not made:
                made.append(_model(fn))
            signature, model = made[0]
            bound = signature.bind(*args, **kwargs)  # a TypeError for what Python itself refuses
            given = {k: v for k, v in bound.arguments.items() if k != "self"}
            try:
                checked = model.model_validate(given)
            except ValidationError as exc:
                raise argument_error(exc, code, cls) from None
            values = {name: getattr(checked, name) for name in type(checked).model_fields}
            run: Callable[..., R] = fn
            if "self" in bound.arguments:
                return run(bound.arguments["self"], **values)
            return run(**values)

        call.__unchecked__ = fn  # type: ignore[attr-defined]
        return call

    return decorate


def unchecked(fn: Callable[..., R]) -> Callable[..., R]:
    """The function a :func:`checked_call` decorator wraps (``fn`` itself when it is not wrapped)."""
    inner: Callable[..., R] = getattr(fn, "__unchecked__", fn)
    return inner


def no_schema_description(schema: dict[str, Any]) -> None:
    """``json_schema_extra`` for an argument model whose docstring is for Python readers only: a
    tool's schema is read by a model on every turn and has no room for it."""
    schema.pop("description", None)
