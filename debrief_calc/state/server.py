"""``debrief-state-mcp``: wires the plot-state service (``service.py``) to MCP tools and resources.

Answers: success ``{success: true, filename, revision, ...}`` (the seed's ``selectedIds``,
``timeState``, ``viewportState`` at the top level); failure ``{success: false, status: "error",
error: {code, message, details: {rpc_code, ...}}, nextAction}`` with ``isError``. The callback
pair answers with the suite's envelope. Resources ``plots://list`` and
``plot://{filename}/features|selection|time|viewport`` are notified after every write made
through this server: on ``subscriptions/listen`` streams (2026-07-28) and to sessions that sent
``resources/subscribe`` (handshake era).
"""

from __future__ import annotations

import base64
import functools
import json
import weakref
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import quote

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from pydantic import BaseModel, Field

from debrief_calc.state.errors import RPC_CODES
from debrief_calc.state.service import StateService
from debrief_calc.state.tasks import PlotTasks, Task
from llmem import __version__
from llmem.config import ServerConfig
from llmem.envelope import Envelope, error_envelope
from llmem.errors import SuiteError
from llmem.serve import Runtime, SuiteServer, tool_annotations

__all__ = ["build_server"]

T = TypeVar("T")

INSTRUCTIONS = (
    "debrief-state keeps the state of the Debrief .plot.json plots of one workspace (features, selection, "
    "time, viewport) in files shared by every client and process. Open a plot (or pass filename), read it "
    "with the debrief_get_* tools, and change it with debrief_apply_command or the debrief_set_* tools."
)
PURPOSE = (
    "For an agent helping a naval analyst: the plots of the workspace, which are open, what is selected, "
    "the time window and the viewport, and one way to change a plot, the DebriefCommand (from debrief-calc's "
    "run_tool or written by you). Without filename a call uses the one open plot; with several open it answers "
    "MULTIPLE_PLOTS listing them. Every write answers the plot's new revision; pass it as expected_revision to "
    "fail with CONFLICT if someone changed the plot meanwhile. debrief_undo reverts the last change made here."
)
PROTOCOL = (
    "The server never calls a model. generate_prompt(task, target?) answers status 'prompt_ready' with "
    "promptForHostLLM (feature summaries, time window, selection; never coordinates) and callbackArgs. Run the "
    "prompt with your model, then call store_llm_result(**callbackArgs, result=<Markdown>) (add_annotation=true "
    "also puts the text into the plot). If the plot (or, for describe-selection, the selection) changed "
    "meanwhile the answer is refused with SOURCE_CHANGED: ask for a new prompt."
)

Filename = Annotated[str | None, Field(description="Plot file; default: the open plot")]
Revision = Annotated[str | None, Field(max_length=64, description="CONFLICT if the plot is not at it")]
Ids = list[Annotated[str, Field(max_length=512)] | int]
ASPECTS = ("features", "selection", "time", "viewport")
_RPC_OTHER = {"INTERNAL": -32603, "TIMEOUT": -32603}
_NEXT = {
    "MULTIPLE_PLOTS": "Call again with filename set to one of error.details.available_plots.",
    "PLOT_NOT_FOUND": "Pass one of error.details.plot_files as filename, or open it with debrief_open_plot.",
    "FEATURE_NOT_FOUND": "Look up the plot's ids with debrief_get_features and call again with ids it has.",
    "INVALID_FILENAME": "Give the name of a .plot.json file relative to the workspace (debrief_list_plots).",
    "INVALID_COMMAND": "Fix the command where error.details.at says; nothing was changed.",
    "CONFLICT": "Read the plot again (error.details.revision is its revision now) and retry.",
    "PLOT_UNREADABLE": "Fix or restore the file error.details.filename names; the other plots still work.",
    "VALIDATION_FAILED": "Correct what error.details.field names and call again; nothing was changed.",
}


class _Ok(BaseModel):
    success: bool = True


class _OnPlot(_Ok):
    filename: str
    revision: str


class PlotRef(BaseModel):
    filename: str
    title: str


class PlotList(_Ok):
    open_plots: list[PlotRef]
    other_plots: list[str] = []
    more_plots: int = 0
    closed_missing: list[str] = []


class OpenAnswer(_OnPlot):
    title: str = ""
    open_plots: list[str] = []


class CloseAnswer(_Ok):
    filename: str
    was_open: bool = False
    open_plots: list[str] = []


class FeaturesAnswer(_OnPlot):
    features: list[dict[str, Any]]
    detail: str = "summary"
    total: int = 0
    count: int = 0
    next_cursor: str | None = None
    omitted: list[dict[str, Any]] = []


class SelectionAnswer(_OnPlot):
    selectedIds: list[str]
    count: int = 0
    truncated: bool = False
    missing_ids: list[str] = []


class TimeState(BaseModel):
    current: str = Field(max_length=64)
    start: str = Field(max_length=64)
    end: str = Field(max_length=64)


class ViewportState(BaseModel):
    bounds: Annotated[list[float], Field(min_length=4, max_length=4, description="[west, south, east, north]")]


class TimeAnswer(_OnPlot):
    timeState: TimeState | None = None
    message: str | None = None


class ViewportAnswer(_OnPlot):
    viewportState: ViewportState | None = None
    message: str | None = None
    selectedIds: list[str] | None = None


class ApplyAnswer(_OnPlot):
    changed: bool
    message: str = ""
    added_ids: list[str] = []
    updated_ids: list[str] = []
    deleted_ids: list[str] = []
    selectedIds: list[str] | None = None
    display: list[dict[str, Any]] = []


class UndoAnswer(_OnPlot):
    undone: str
    remaining: int = 0
    selectedIds: list[str] | None = None


class RenderAnswer(_OnPlot):
    mediaType: str
    width: int = 0
    height: int = 0
    bytes: int = 0
    time: str | None = None
    selectedIds: list[str] = []


def _rpc(err: SuiteError) -> SuiteError:
    """The error with its JSON-RPC number in ``details.rpc_code`` and its details bounded."""
    details: dict[str, Any] = {}
    for key, value in err.details.items():
        if isinstance(value, list) and len(value) > 50:
            details[f"{key}_count"] = len(value)
            details[key] = value[:50]
        elif isinstance(value, str) and len(value) > 2_000:
            details[key] = value[:2_000] + "…"
        else:
            details[key] = value
    details.setdefault("rpc_code", RPC_CODES.get(err.code, _RPC_OTHER.get(err.code, -32602)))
    err.details = details
    if len(err.message) > 2_000:
        err.message = err.message[:2_000] + "…"
    return err


def _state_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The state tools' failure: ``{success: false, error: {code, message, details}, nextAction}``."""
    return {
        "success": False,
        "error": _rpc(err).to_dict(),
        "nextAction": err.next_action or _NEXT.get(err.code, "Read error.message, correct the call and try again."),
    }


def _envelope_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The callback pair's failure: the suite's envelope (status "error")."""
    return error_envelope(_rpc(err)).model_dump(mode="json")


def plot_uri(filename: str, aspect: str) -> str:
    return f"plot://{quote(filename, safe='/')}/{aspect}"


_PLOT_URI = UriTemplate.parse("plot://{+filename}/{aspect}")


class LegacySubscribers:
    """Connections that sent ``resources/subscribe`` (handshake era), by canonical URI.

    The SDK hands each request a fresh ``ServerSession`` around the long-lived connection; the
    connection is what is kept (weakly: a closed connection drops out by itself).
    """

    def __init__(self) -> None:
        self._by_uri: dict[str, weakref.WeakSet[Any]] = {}

    @staticmethod
    def canonical(uri: str) -> str:
        if uri == "plots://list":
            return uri
        found = _PLOT_URI.match(uri)
        if found is None or found.get("aspect") not in ASPECTS:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri!r}", data={"uri": uri})
        return plot_uri(str(found["filename"]), str(found["aspect"]))

    @staticmethod
    def _peer(ctx: Any) -> Any:
        return getattr(ctx.session, "_connection", None) or ctx.session

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self._by_uri.setdefault(self.canonical(str(params.uri)), weakref.WeakSet()).add(self._peer(ctx))
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self._by_uri.get(self.canonical(str(params.uri)), weakref.WeakSet()).discard(self._peer(ctx))
        return types.EmptyResult()

    async def send(self, uri: str) -> None:
        peers = self._by_uri.get(uri)
        for peer in list(peers or ()):
            try:
                await peer.send_resource_updated(uri)
            except Exception:  # the client went away: forget it
                peers.discard(peer)  # type: ignore[union-attr]


def _with_images(answer: BaseModel, images: list[dict[str, Any]]) -> types.CallToolResult:
    payload = answer.model_dump(mode="json")
    blocks: list[types.ContentBlock] = [types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))]
    blocks += [types.ImageContent(type="image", data=i["data"], mime_type=i["mediaType"]) for i in images]
    return types.CallToolResult(content=blocks, structured_content=payload)


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="debrief-state-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=PURPOSE,
        protocol_notes=PROTOCOL,
        error_payload=_state_error,
        argument_error_code="VALIDATION_FAILED",
    )
    subscribers = LegacySubscribers()
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribers.subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, subscribers.unsubscribe)
    cache: dict[str, Any] = {}

    def svc() -> StateService:
        if "s" not in cache:
            cache["s"] = StateService(runtime.store, runtime.limits)
        service: StateService = cache["s"]
        return service

    def tasks() -> PlotTasks:
        if "t" not in cache:
            cache["t"] = PlotTasks(svc())
        plot_tasks: PlotTasks = cache["t"]
        return plot_tasks

    async def run(fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args))

    async def notify(ctx: Context[Any, Any] | None, filename: str, aspects: list[str]) -> None:
        for aspect in dict.fromkeys(aspects):
            uri = "plots://list" if aspect == "list" else plot_uri(filename, aspect)
            if ctx is not None:
                await ctx.notify_resource_updated(uri)
            await subscribers.send(uri)

    # -- tools ------------------------------------------------------------------------------

    def debrief_list_plots() -> PlotList:
        return PlotList(**svc().list_plots())

    async def debrief_open_plot(filename: str, ctx: Context[Any, Any] | None = None) -> OpenAnswer:
        data, aspects = await run(svc().open_plot, filename)
        await notify(ctx, filename, aspects)
        return OpenAnswer(**data)

    async def debrief_close_plot(filename: str, ctx: Context[Any, Any] | None = None) -> CloseAnswer:
        data, aspects = await run(svc().close_plot, filename)
        await notify(ctx, filename, aspects)
        return CloseAnswer(**data)

    def debrief_get_features(
        filename: Filename = None,
        ids: Ids | None = None,
        kinds: list[Annotated[str, Field(max_length=40)]] | None = None,
        detail: Literal["summary", "full"] = "summary",
        limit: Annotated[int | None, Field(ge=1, le=1000)] = None,
        cursor: Annotated[str | None, Field(max_length=512)] = None,
    ) -> FeaturesAnswer:
        id_list = [str(i) for i in ids] if ids is not None else None
        return FeaturesAnswer(**svc().get_features(filename, id_list, kinds, detail, limit, cursor))

    def debrief_get_selection(filename: Filename = None) -> SelectionAnswer:
        return SelectionAnswer(**svc().get_selection(filename))

    async def debrief_set_selection(
        selectedIds: Ids, filename: Filename = None, ctx: Context[Any, Any] | None = None
    ) -> SelectionAnswer:
        data, aspects = await run(svc().set_selection, [str(i) for i in selectedIds], filename)
        await notify(ctx, data["filename"], aspects)
        return SelectionAnswer(**data)

    def debrief_get_time(filename: Filename = None) -> TimeAnswer:
        return TimeAnswer(**svc().get_time(filename))

    async def debrief_set_time(
        timeState: TimeState,
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> TimeAnswer:
        data, aspects = await run(svc().set_time, timeState.model_dump(), filename, expected_revision)
        await notify(ctx, data["filename"], aspects)
        return TimeAnswer(**data)

    def debrief_get_viewport(filename: Filename = None) -> ViewportAnswer:
        return ViewportAnswer(**svc().get_viewport(filename))

    async def debrief_set_viewport(
        viewportState: ViewportState,
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> ViewportAnswer:
        data, aspects = await run(svc().set_viewport, viewportState.model_dump(), filename, expected_revision)
        await notify(ctx, data["filename"], aspects)
        return ViewportAnswer(**data)

    async def debrief_zoom_to_selection(
        filename: Filename = None,
        padding: Annotated[float, Field(ge=0, le=10, description="Fraction of the span added on each side")] = 0.1,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> ViewportAnswer:
        data, aspects = await run(svc().zoom_to_selection, filename, padding, expected_revision)
        await notify(ctx, data["filename"], aspects)
        return ViewportAnswer(**data)

    async def debrief_apply_command(
        command: Annotated[
            dict[str, Any] | list[Any],
            Field(description="{command, payload}, a list of them, or a debrief-calc reference {ref}"),
        ],
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[types.CallToolResult, ApplyAnswer]:
        data, aspects = await run(svc().apply, command, filename, expected_revision)
        await notify(ctx, data["filename"], aspects)
        images = data.pop("images")
        return _with_images(ApplyAnswer(**data), images)

    def debrief_render_plot(
        filename: Filename = None,
        width: Annotated[int, Field(ge=64, le=2048)] = 1024,
        height: Annotated[int, Field(ge=64, le=2048)] = 768,
        time: Annotated[str | None, Field(max_length=64, description="ISO-8601; default: the plot's current")] = None,
    ) -> Annotated[types.CallToolResult, RenderAnswer]:
        data, png = svc().render(filename, width, height, time)
        return _with_images(RenderAnswer(**data), [{"mediaType": "image/png", "data": base64.b64encode(png).decode()}])

    async def debrief_undo(filename: Filename = None, ctx: Context[Any, Any] | None = None) -> UndoAnswer:
        data, aspects = await run(svc().undo, filename)
        await notify(ctx, data["filename"], aspects)
        return UndoAnswer(**data)

    def generate_prompt(task: Task, target: Filename = None) -> Envelope:
        return tasks().prompt(target, task)

    async def store_llm_result(
        ticket: Annotated[str, Field(max_length=64)],
        target: str,
        task: Task,
        result: Annotated[str, Field(description="Your model's answer (Markdown)")],
        model: Annotated[str | None, Field(max_length=200)] = None,
        add_annotation: bool = False,
        ctx: Context[Any, Any] | None = None,
    ) -> Envelope:
        env, aspects = await run(tasks().store, ticket, target, task, result, model, add_annotation)
        await notify(ctx, target, aspects)
        return env

    read, write = tool_annotations(read_only=True), tool_annotations(read_only=False, idempotent=True)
    change = tool_annotations(read_only=False, destructive=True, idempotent=True)
    once = tool_annotations(read_only=False, destructive=True, idempotent=False)
    tools: list[tuple[Callable[..., Any], types.ToolAnnotations, str]] = [
        (debrief_list_plots, read, "List the open plots (filename, title) and the other .plot.json files."),
        (debrief_open_plot, write, "Mark a plot open for every client; calls without filename then use it."),
        (debrief_close_plot, write, "Mark a plot closed (the file is untouched)."),
        (
            debrief_get_features,
            read,
            "A plot's features: summaries (id, kind, name, points, time span, bounds) or full GeoJSON; paged.",
        ),
        (debrief_get_selection, read, "The selected feature ids of a plot."),
        (debrief_set_selection, change, "Select features by id, replacing the selection ([] clears it)."),
        (debrief_get_time, read, "The plot's time state {current, start, end}, ISO-8601."),
        (debrief_set_time, change, "Set the plot's time state (start ≤ current ≤ end), written into the file."),
        (debrief_get_viewport, read, "The plot's viewport {bounds: [west, south, east, north]}."),
        (debrief_set_viewport, change, "Set the plot's viewport bounds, written into the file."),
        (debrief_zoom_to_selection, change, "Set the viewport to the bounds of the selected features, padded."),
        (
            debrief_apply_command,
            once,
            "Apply a DebriefCommand (or a list) to a plot, all or nothing; show*/logMessage come back in display.",
        ),
        (debrief_render_plot, read, "A PNG picture of the plot with the selection highlighted and the time marked."),
        (debrief_undo, once, "Undo the last change made through this server (refused if the plot changed since)."),
        (
            generate_prompt,
            read,
            "A bounded prompt about a plot for your model: summarize-plot, describe-selection, narrate-timeline.",
        ),
        (
            store_llm_result,
            tool_annotations(read_only=False),
            "Store your model's answer to a generate_prompt ticket; add_annotation puts it in the plot too.",
        ),
    ]
    for fn, hints, description in tools:
        shape = _envelope_error if fn in (generate_prompt, store_llm_result) else None
        server.add_suite_tool(fn, name=fn.__name__, description=description, annotations=hints, error_payload=shape)

    _add_resources(server, svc)
    return server


def _add_resources(server: SuiteServer, svc: Callable[[], Any]) -> None:
    def text(data: Any) -> str:
        return json.dumps(data, ensure_ascii=False)

    async def read(fn: Callable[..., Any], *args: Any) -> str:
        try:
            return text(await anyio.to_thread.run_sync(functools.partial(fn, *args)))
        except SuiteError as err:
            details = dict(err.details)
            raise MCPError(int(details.get("rpc_code", -32602)), err.message, data=err.to_dict()) from None

    @server.resource(
        "plots://list",
        name="plots",
        description="The open plots and the other plot files",
        mime_type="application/json",
    )
    async def plots_list() -> str:
        return await read(lambda: svc().list_plots())

    readers: dict[str, Callable[[str], Any]] = {
        "features": lambda f: svc().get_features(f, None, None, "summary", None, None),
        "selection": lambda f: svc().get_selection(f),
        "time": lambda f: svc().get_time(f),
        "viewport": lambda f: svc().get_viewport(f),
    }
    for aspect, reader in readers.items():

        async def resource(filename: str, reader: Callable[[str], Any] = reader) -> str:
            return await read(reader, filename)

        server.resource(
            f"plot://{{+filename}}/{aspect}",
            name=f"plot-{aspect}",
            description=f"The {aspect} of a plot (as debrief_get_{aspect} answers)",
            mime_type="application/json",
        )(_bind(resource))


def _bind(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The template function with only ``filename`` in its signature (the SDK matches names)."""

    async def resource(filename: str) -> str:
        result: str = await fn(filename)
        return result

    return resource
