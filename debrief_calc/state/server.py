"""``debrief-state-mcp``: wires the plot-state service (``service.py``) to MCP tools and resources.

Answers: success ``{success: true, filename, revision, ...}`` (the seed's ``selectedIds``,
``timeState``, ``viewportState`` at the top level); failure ``{success: false, error: {code,
message, details: {rpc_code, ...}}, nextAction}`` with ``isError``, the callback pair's too (its
successes are the suite's envelope). Resources ``plots://list`` and
``plot://{filename}/features|selection|time|viewport`` are notified after every write made
through this server: on ``subscriptions/listen`` streams (2026-07-28) and to sessions that sent
``resources/subscribe`` (handshake era).
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context
from pydantic import Field, WithJsonSchema

from debrief_calc.plots.cmdcheck import ALIASES, COMMANDS, PAYLOAD_SHAPES
from debrief_calc.state._resources import LegacySubscribers, add_resources, plot_uri
from debrief_calc.state.answers import (
    ApplyAnswer,
    CloseAnswer,
    CreateAnswer,
    FeaturesAnswer,
    OpenAnswer,
    PlotList,
    PropertiesAnswer,
    RenderAnswer,
    SelectionAnswer,
    TimeAnswer,
    TimeChange,
    UndoAnswer,
    ViewData,
    ViewportAnswer,
    ViewportState,
    envelope_error,
    state_error,
    with_images,
)
from debrief_calc.state.service import StateService
from debrief_calc.state.tasks import PlotTasks, Task
from debrief_calc.state.view import DEFAULT_POINTS, MIME_TYPE, VIEW_META, VIEW_URI, view_html
from llmem import __version__
from llmem.core.config import Limits, ServerConfig
from llmem.core.envelope import Envelope
from llmem.core.serve import Runtime, SuiteServer, tool_annotations
from llmem.core.store import ArtifactStore

__all__ = ["build_server"]

T = TypeVar("T")

INSTRUCTIONS = (
    "debrief-state keeps the Debrief .plot.json plots of one workspace (features, selection, time, viewport) "
    "in files shared by every client and process; create one with debrief_create_plot (from features or "
    "debrief-calc import-rep references) or open one. Read a plot with the debrief_get_* tools and debrief_render_plot, and "
    "change it with debrief_set_* or debrief_apply_command."
)
PURPOSE = (
    "For an agent helping a naval analyst: the plots of the workspace, which are open, what is selected, the "
    "time window and the viewport, and one way to change a plot, the DebriefCommand (from debrief-calc's "
    "run_tool or written by you). Without filename a call uses the one open plot; with several open it answers "
    "MULTIPLE_PLOTS listing them (debrief_create_plot and debrief_open_plot answer open_plots, and open_note "
    "once more than one is open). Every write answers the plot's new revision; pass it as expected_revision to "
    "fail with CONFLICT if someone changed the plot meanwhile (the selection and the open set live in the "
    "shared store, not in the file: changing them leaves the revision as it is). debrief_undo reverts the last "
    "change made here, as one step however many features it touched."
)
START = (
    "From REP files: debrief_list_plots names them (rep_files); on debrief-calc-mcp, "
    "run_tool(tool='import-rep', parameters={'path': 'boat1.rep'}) for each file; each answer holds a reference {'ref': 'debrief-calc:runs/…'} to its tracks. Then here "
    "debrief_create_plot(filename='exercise.plot.json', features=[{'ref': …}, {'ref': …}]) makes the plot, "
    "opens it and sets its time window and viewport to the tracks' period and bounds (or add them to an existing "
    "plot with debrief_apply_command(command=<the import's addFeatures command>)). Then analyse on debrief-calc "
    "with run_tool(tool, plot={'filename': …, 'feature_ids': [...]}) (ids from debrief_get_features), look with "
    "debrief_render_plot (fit='all' shows everything without changing the saved viewport; cpa=[a, b] draws the "
    "range between two tracks at `time` (default the plot's current time, which debrief_set_time(timeState="
    "{'current': …}) moves); "
    "time_start/time_end draw the tracks over that stretch alone, fit='window' frames them and the zones they were in (framed), the answer's span "
    "says what was drawn; a series against time is debrief-calc's render_series), and "
    "keep a narrative in the plot with generate_prompt (its prompt includes debrief-calc's analyses of the plot's "
    "features) + store_llm_result(add_annotation=true)."
)
CONVENTIONS = (
    "Times are ISO-8601 UTC; bounds are [west, south, east, north] in degrees. Colours are properties, CSS "
    "colours such as '#808080' or 'grey': `stroke` for tracks and zone outlines, `fill` and `fill-opacity` for "
    "zone fill, `marker_color` for points, buoy fields and notes; `name` is the label. Narrative "
    "entries (REP ;NARRATIVE: lines) are drawn on their ship's track at their time, for 30 minutes after it (all "
    "of them when the plot has no current time); renaming a track with debrief_set_properties re-points them. debrief_set_properties changes them (a merge patch) without touching "
    "geometry. A note is an annotation feature added with addFeatures: {type: 'Feature', geometry: a Point "
    "[lon, lat] or null, properties: {dataType: 'annotation', annotationType: 'comment', name, text, time?}}. "
    "debrief_get_time's derived: true means the plot has no saved window (the answer is its features' period); "
    "debrief_undo's remaining counts the changes left to undo. Features move between plots by reference: "
    "every feature listed has its ref, {'ref': 'debrief-state:plots/<file>#<id>'} (add 'id': <new id> to copy it "
    "under another id), and {'ref': 'debrief-state:plots/<file>', 'ids'?: [...]} is a plot's features (its "
    "time/viewport metadata left out); pass them to debrief_create_plot, addFeatures or debrief-calc's run_tool. debrief_get_features(detail='full') gives whole features: a track too large for one answer comes "
    "in parts of its points (part.points [a, b) of N, every per-point array sliced alike) behind next_cursor."
)
PROTOCOL = (
    "The server never calls a model. generate_prompt(task, target?) answers status 'prompt_ready' with "
    "promptForHostLLM (a summary of the plot: each feature's kind, name, point count, time span and bounding box, "
    "the time window, the selection and the figures of debrief-calc's newest analyses of its features; never the "
    "features' coordinates) and callbackArgs. Run the prompt with "
    "your model, then call store_llm_result(**callbackArgs, result=<Markdown>); add_annotation=true also puts "
    "the text into the plot as an annotation feature. If the plot (or, for describe-selection, the selection) "
    "changed meanwhile the answer is refused with SOURCE_CHANGED: ask for a new prompt."
)


def _commands_section() -> str:
    lines = [f"- `{name}`: {shape}" for name, shape in PAYLOAD_SHAPES.items()]
    aliases = ", ".join(f"`{a}` = `{c}`" for a, c in ALIASES.items())
    return (
        "debrief_apply_command takes {command, payload}, a list of them (run in order, all or nothing), or a "
        "debrief-calc {ref}. Payloads:\n" + "\n".join(lines) + f"\nAliases: {aliases}."
    )


Filename = Annotated[str | None, Field(description="Plot file; default: the open plot")]
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


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="debrief-state-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=PURPOSE,
        protocol_notes=PROTOCOL,
        error_payload=state_error,
        argument_error_code="VALIDATION_FAILED",
        guide_sections=[
            ("Starting from REP files", START),
            ("Commands", _commands_section()),
            ("Conventions", CONVENTIONS),
        ],
    )
    subscribers = LegacySubscribers()
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribers.subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, subscribers.unsubscribe)

    def svc() -> StateService:
        return runtime.service(StateService)

    def make_tasks(_store: ArtifactStore, _limits: Limits) -> PlotTasks:
        return PlotTasks(svc())

    def tasks() -> PlotTasks:
        return runtime.service(make_tasks)

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

    async def debrief_create_plot(
        filename: Annotated[str, Field(description="New .plot.json path in the workspace, e.g. 'exercise.plot.json'")],
        title: Annotated[str | None, Field(max_length=200)] = None,
        features: FeaturesArg = None,
        ctx: Context[Any, Any] | None = None,
    ) -> CreateAnswer:
        data, aspects = await run(svc().create_plot, filename, title, features)
        await notify(ctx, filename, aspects)
        return CreateAnswer(**data)

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
        time_start: Annotated[
            str | None, Field(max_length=64, description="ISO-8601: tracks cut to this window")
        ] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> FeaturesAnswer:
        id_list = [str(i) for i in ids] if ids is not None else None
        answer = svc().get_features(filename, id_list, kinds, detail, limit, cursor, time_start, time_end)
        return FeaturesAnswer(**answer)

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
        timeState: TimeChange,
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> TimeAnswer:
        data, aspects = await run(svc().set_time, timeState.model_dump(exclude_none=True), filename, expected_revision)
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
        ids: Annotated[Ids | None, Field(description="Zoom to these instead of the selection")] = None,
        ctx: Context[Any, Any] | None = None,
    ) -> ViewportAnswer:
        id_list = [str(i) for i in ids] if ids else None
        data, aspects = await run(svc().zoom_to_selection, filename, padding, expected_revision, id_list)
        await notify(ctx, data["filename"], aspects)
        return ViewportAnswer(**data)

    async def debrief_set_properties(
        ids: Ids,
        properties: Annotated[dict[str, Any], Field(description="Merged into each feature's properties; null deletes")],
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> PropertiesAnswer:
        data, aspects = await run(svc().set_properties, [str(i) for i in ids], properties, filename, expected_revision)
        await notify(ctx, data["filename"], aspects)
        return PropertiesAnswer(**data)

    async def debrief_apply_command(
        command: CommandArg,
        filename: Filename = None,
        expected_revision: Revision = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Annotated[types.CallToolResult, ApplyAnswer]:
        data, aspects = await run(svc().apply, command, filename, expected_revision)
        await notify(ctx, data["filename"], aspects)
        images = data.pop("images")
        return with_images(ApplyAnswer(**data), images)

    def debrief_render_plot(
        filename: Filename = None,
        width: Annotated[
            int, Field(ge=64, le=2048, description="Max px; image takes the area's shape (within 2:1)")
        ] = 1024,
        height: Annotated[int, Field(ge=64, le=2048, description="Max px")] = 768,
        time: Annotated[str | None, Field(max_length=64, description="ISO-8601; default: the plot's current")] = None,
        fit: Annotated[
            Literal["viewport", "all", "selection", "window"]
            | Annotated[list[float], Field(min_length=4, max_length=4)],
            Field(description="Area shown, or [w,s,e,n]; the saved viewport is unchanged"),
        ] = "viewport",
        show_future: Annotated[bool, Field(description="Tracks after time, faint")] = True,
        cpa: Annotated[
            list[Annotated[str, Field(max_length=512)]] | None,
            Field(min_length=2, max_length=2, description="Two track ids: range line at time"),
        ] = None,
        time_start: Annotated[str | None, Field(max_length=64)] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> Annotated[types.CallToolResult, RenderAnswer]:
        data, png = svc().render(filename, width, height, time, fit, show_future, cpa, time_start, time_end)
        return with_images(RenderAnswer(**data), [{"mediaType": "image/png", "data": base64.b64encode(png).decode()}])

    def debrief_view_data(
        filename: Filename = None,
        since_revision: Annotated[str | None, Field(max_length=128, description="Only changes since")] = None,
        max_points: Annotated[int, Field(ge=100, le=50_000, description="Track points in all")] = DEFAULT_POINTS,
    ) -> ViewData:
        return ViewData(**svc().view(filename, since_revision, max_points))

    async def debrief_undo(filename: Filename = None, ctx: Context[Any, Any] | None = None) -> UndoAnswer:
        data, aspects = await run(svc().undo, filename)
        await notify(ctx, data["filename"], aspects)
        return UndoAnswer(**data)

    def generate_prompt(task: Task, target: Filename = None) -> Envelope:
        return tasks().prompt(target, task).with_success()

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
        return env.with_success()

    read, write = tool_annotations(read_only=True), tool_annotations(read_only=False, idempotent=True)
    change = tool_annotations(read_only=False, destructive=True, idempotent=True)
    once = tool_annotations(read_only=False, destructive=True, idempotent=False)
    additive = tool_annotations(read_only=False)  # never overwrites: an existing plot is refused
    tools: list[tuple[Callable[..., Any], types.ToolAnnotations, str]] = [
        (
            debrief_list_plots,
            read,
            "List open plots (filename, title), other .plot.json and REP files.",
        ),
        (
            debrief_create_plot,
            additive,
            "Create a plot file from features or debrief-calc refs and open it; its time and view fit them.",
        ),
        (debrief_open_plot, write, "Mark a plot open for every client; calls without filename then use it."),
        (debrief_close_plot, write, "Mark a plot closed (the file is untouched)."),
        (
            debrief_get_features,
            read,
            "A plot's features: summaries (id, kind, name, points, time span, bounds) or whole GeoJSON; paged.",
        ),
        (debrief_get_selection, read, "The selected feature ids of a plot."),
        (debrief_set_selection, change, "Select features by id, replacing the selection ([] clears it)."),
        (debrief_get_time, read, "The plot's time state {current, start, end}, ISO-8601."),
        (
            debrief_set_time,
            change,
            "Set the plot's time: current alone moves it within the window; start/end change the window.",
        ),
        (debrief_get_viewport, read, "The plot's viewport {bounds: [west, south, east, north]}."),
        (debrief_set_viewport, change, "Set the plot's viewport bounds, written into the file."),
        (
            debrief_zoom_to_selection,
            change,
            "Set the saved viewport to the padded bounds of the selection (or of ids).",
        ),
        (
            debrief_set_properties,
            change,
            "Change features' properties (rename, recolour): a merge patch, null deletes; undoable.",
        ),
        (
            debrief_apply_command,
            once,
            "Apply a DebriefCommand (or a list) to a plot, all or nothing; show*/logMessage come back in display.",
        ),
        (
            debrief_render_plot,
            read,
            "A PNG of the plot at a time as Debrief draws it (ships, past/future, DTGs, zones); fit picks the area.",
        ),
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
    shows_the_plot = {"ui": {"resourceUri": VIEW_URI}}  # hosts with MCP Apps show the live view beside
    for fn, hints, description in tools:
        shape = envelope_error if fn in (generate_prompt, store_llm_result) else None
        meta = shows_the_plot if fn in (debrief_create_plot, debrief_open_plot, debrief_render_plot) else None
        server.add_suite_tool(
            fn, name=fn.__name__, description=description, annotations=hints, error_payload=shape, meta=meta
        )
    server.add_suite_tool(
        debrief_view_data,
        name="debrief_view_data",
        description="The live plot view's drawing data (MCP Apps; tracks thinned).",
        annotations=read,
        meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
        answer_chars=max(config.limits.result_chars, config.limits.answer_chars),
    )

    def plot_view() -> str:  # the SDK validates a plain function's call, not a cached one's
        return view_html()

    server.resource(
        VIEW_URI,
        name="debrief_plot_view",
        title="Debrief plot (live)",
        description="The plot drawn live: a time slider that sets the plot's time, click to select, pan and zoom.",
        mime_type=MIME_TYPE,
        meta=VIEW_META,
    )(plot_view)

    add_resources(server, svc)
    return server
