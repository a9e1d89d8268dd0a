"""MCP tools made from :class:`~debrief_calc.Workspace` methods: the servers' only wiring.

A tool is a Workspace method under the tool's name: its input schema is the method's signature
(the annotations, constraints, descriptions and defaults written there), its answer the
method's answer model (pictures sent as image content), its errors the method's exceptions. A
parameter added to a method is a parameter of its tool, and of nothing else to edit.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context

from debrief_calc._workspace import Change, Workspace, recording_changes
from llmem.core.arguments import unchecked
from llmem.core.images import WithImages
from llmem.core.serve import ErrorPayload, Runtime, SuiteServer, with_images

__all__ = ["SCRIPTS", "Notify", "Tool", "add_workspace_tools", "workspace_of"]

#: The guides' section on the Python API (both servers: a model that writes code for the analyst
#: should know the tools are a library too).
SCRIPTS = (
    "The same tools are a Python API, for scripts in the workspace and code you write for the analyst: "
    "`import debrief_calc as dc; ws = dc.Workspace(<the workspace above>)` (and `store=` as this server's "
    "--store, if not the default), one method per tool with the same arguments (required ones in order, the "
    "others by name) and the same answers, as pydantic models (`.model_dump()` is the tool's JSON; pictures in "
    "`.images`, `.save_image(path)`). The state tools drop `debrief_`: "
    "`ws.apply_command(command, filename=..., expected_revision=...)`, `ws.render_plot(...)`; the callback "
    "pairs are `generate_analysis_prompt`/`store_analysis_llm_result` (debrief-calc) and "
    "`generate_plot_prompt`/`store_plot_llm_result` (debrief-state). Errors are exceptions carrying the tools' "
    "codes (`dc.Conflict` is CONFLICT). A script's writes take the same locks; this server's next read and the "
    "live view's next poll see them (resource subscribers are notified only of writes made through a server)."
)

#: sends the notifications of one change a call made (``ctx`` is the call's own context)
Notify = Callable[[Context[Any, Any] | None, Change], Awaitable[None]]


@dataclass(frozen=True)
class Tool:
    """One tool of a server: its name, the Workspace method it is, and what the server says of it."""

    name: str
    method: Callable[..., Any]
    annotations: types.ToolAnnotations
    description: str
    meta: dict[str, Any] | None = None
    error_payload: ErrorPayload | None = None
    answer_chars: int | None = None


def workspace_of(runtime: Runtime) -> Callable[[], Workspace]:
    """The server's one Workspace, on the workspace and store the runtime settles (at first use)."""

    def make(store: Any, limits: Any) -> Workspace:
        return Workspace._over(store, limits)

    return lambda: runtime.service(make)


def add_workspace_tools(
    server: SuiteServer, workspace: Callable[[], Workspace], tools: Sequence[Tool], notify: Notify | None = None
) -> None:
    """Register each of ``tools`` on ``server``; ``notify`` is told of every plot change a call made."""
    for tool in tools:
        server.add_suite_tool(
            _tool_function(tool, workspace, notify),
            name=tool.name,
            description=tool.description,
            annotations=tool.annotations,
            error_payload=tool.error_payload,
            meta=tool.meta,
            answer_chars=tool.answer_chars,
        )


def _tool_function(
    tool: Tool, workspace: Callable[[], Workspace], notify: Notify | None
) -> Callable[..., Awaitable[Any]]:
    """An async function with the method's parameters (``self`` left out, ``ctx`` added), which
    runs the method in a worker thread, notifies the changes it made, and answers its model."""
    method = unchecked(tool.method)  # the SDK checks the arguments against the same signature
    hints = typing.get_type_hints(method, include_extras=True)
    params = [
        p.replace(annotation=hints.get(name, p.annotation))
        for name, p in inspect.signature(method).parameters.items()
        if name != "self"
    ]
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context | None)
    signature = inspect.Signature([*params, ctx_param], return_annotation=hints["return"])
    # a write is not abandoned half way on a timeout: it finishes, atomically, and says so
    abandon = bool(tool.annotations.read_only_hint)

    async def call(ctx: Context[Any, Any] | None = None, **arguments: Any) -> Any:
        ws = workspace()

        def run() -> tuple[Any, list[Change]]:
            with recording_changes() as changes:
                return method(ws, **arguments), changes

        answer, changes = await anyio.to_thread.run_sync(run, abandon_on_cancel=abandon)
        if notify is not None:
            for change in changes:
                await notify(ctx, change)
        return with_images(answer) if isinstance(answer, WithImages) else answer

    functools.update_wrapper(call, method)
    call.__name__ = tool.name
    call.__qualname__ = tool.name
    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {
        "return": signature.return_annotation
    }
    del call.__wrapped__  # type: ignore[attr-defined]  # the signature above is the tool's, not the method's (no ``self``)
    call.__workspace_method__ = tool.method  # type: ignore[attr-defined]  # which method a tool is (tests read it)
    return call
