"""``debrief-state-mcp``: the plot methods of :class:`~debrief_calc.Workspace` served as MCP tools
(:mod:`debrief_calc._mcp_tools`), and the plot resources and live view.

Answers: success ``{success: true, filename, revision, ...}`` (the seed's ``selectedIds``,
``timeState``, ``viewportState`` at the top level); failure ``{success: false, error: {code,
message, details: {rpc_code, ...}}, nextAction}`` with ``isError``, the callback pair's too (its
successes are the suite's envelope). Resources ``plots://list`` and
``plot://{filename}/features|selection|time|viewport`` are notified after every write made
through this server: on ``subscriptions/listen`` streams (2026-07-28) and to sessions that sent
``resources/subscribe`` (handshake era).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context

from debrief_calc._mcp_tools import SCRIPTS, Tool, add_workspace_tools, workspace_of
from debrief_calc._workspace import Change, Workspace
from debrief_calc.plots.cmdcheck import ALIASES, PAYLOAD_SHAPES
from debrief_calc.state._resources import LegacySubscribers, add_resources, plot_uri
from debrief_calc.state.answers import envelope_error, state_error
from debrief_calc.state.view import MIME_TYPE, VIEW_META, VIEW_URI, view_html
from llmem import __version__
from llmem.core.config import ServerConfig
from llmem.core.serve import Runtime, SuiteServer, tool_annotations

__all__ = ["build_server"]

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
    "opens it and sets its time window and viewport to the tracks' period and bounds, its current time at the "
    "window's end so that a picture drawn at once shows every track solid (or add them to an existing "
    "plot with debrief_apply_command(command=<the import's addFeatures command>)). Then analyse on debrief-calc "
    "with run_tool(tool, plot={'filename': …, 'feature_ids': [...]}) (ids from debrief_get_features), look with "
    "debrief_render_plot (fit='all' shows everything without changing the saved viewport; cpa=[a, b] draws the "
    "range between two tracks at `time` (default the plot's current time, which debrief_set_time(timeState="
    "{'current': …}) moves); "
    "the tracks are drawn over the plot's saved window (debrief_set_time's start/end) or time_start/time_end, cut as "
    "every tool cuts them; fit='window' frames them and the zones they were in (framed); the answer's window "
    "{start, end, source: asked|plot|data} says which, span what the tracks drawn cover; a series against time, or "
    "the relative-motion plot (parameters.picture='relative-motion'), is debrief-calc's render_series; in hosts with MCP "
    "Apps the live view beside these answers shows the plot's time, one time (to show a moment there set it with "
    "debrief_set_time; a picture's time argument draws the picture only), frames the plot's saved window, zooms with "
    "ctrl/⌘ + wheel or pinch (a plain wheel scrolls the page), and reads out the tote's range and bearing from the "
    "primary (the plot's first track, or the one the person picks) to each selected track, every pass marked), and "
    "keep a narrative in the plot with generate_prompt (its prompt includes debrief-calc's analyses of the plot's "
    "features) + store_llm_result(add_annotation=true). Sensor cuts (.dsf files, ;SENSOR: lines) need their host "
    "track: run_tool(tool='import-rep', parameters={'paths': ['track.rep', 'cuts.dsf'], 'host': 'SENSOR'}) or, for a "
    "plot that holds the track, run_tool(tool='import-rep', plot={'filename': …}, parameters={'path': 'cuts.dsf', "
    "'host': 'SENSOR'}) and apply its addFeatures command here. A legacy .dpf plot (dpf_files): "
    "run_tool(tool='import-dpf', parameters={'path': 'old.dpf'}) then debrief_create_plot(features=[{'ref': …}])."
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
    "A sensor feature (kind 'sensor') is the cuts of one sensor on one host track: geometry a MultiPoint of each "
    "cut's origin; properties name, host (the host track's id), hostName, timestamps, bearings (true degrees), "
    "ambiguousBearings, frequencies (Hz), rangesYd, bearingAccuracies, frequencyAccuracies, originGiven, labels, "
    "comments, lineTypes, symbols, colours, cutsVisible (one item per cut), stroke, visible, arrayOffsetM, arrayMode, "
    "baseFrequency; its summary counts cut_count and names host and platform, and a window keeps the cuts inside it. "
    "Pictures and the live view draw each cut as a line from its origin along its bearing, to its range or, with "
    "none, to the plot's no-range length (the diagonal of its data, 1 to 300 nm), the ambiguous bearing dashed; a cut "
    "shows from its time for 30 minutes after it (at the plot's time; with time_start/time_end, the cuts inside), "
    "beyond 60 at once every n-th and the newest; debrief_render_plot's cuts counts them per sensor (active, drawn) "
    "and lists a selected sensor's cut times, also labelled on the picture. visible: false (debrief_set_properties; "
    "the view's legend toggles it) hides any feature. "
    "A target solution is a track with trackType 'tma-solution', host, courses, speeds, depths and ellipses "
    "[{orientation_deg, semiMajorYd, semiMinorYd} | null], drawn at its fixes. "
    "debrief_undo's remaining counts the changes left to undo. Features move between plots by reference: "
    "every feature listed has its ref, {'ref': 'debrief-state:plots/<file>#<id>'} (add 'id': <new id> to copy it "
    "under another id), and {'ref': 'debrief-state:plots/<file>', 'ids'?: [...]} is a plot's features (its "
    "time/viewport metadata left out); pass them to debrief_create_plot, addFeatures or debrief-calc's run_tool. A ref may "
    "carry a window, {'ref': …, 'time_start': …, 'time_end': …}: it stands for its features cut to it (tracks with a fix "
    "interpolated at each edge, window_edges saying so); debrief_create_plot(filename, features, time_start, time_end) cuts "
    "everything it copies and saves the window as the new plot's. debrief_get_features(detail='full') gives whole features "
    "(time_start/time_end: cut so; its window says which; a note names the plot's saved window when it is narrower): a "
    "track too large for one answer comes in parts of its points (part.points [a, b) of N, every per-point array sliced "
    "alike) behind next_cursor. Times in answers are to the millisecond and mean that instant when passed back; "
    "pictures and the live view show the nearest second (10:45:08.902 is 10:45:09 everywhere)."
)
PROTOCOL = (
    "The server never calls a model. generate_prompt(task, target?) answers status 'prompt_ready' with "
    "promptForHostLLM (a summary of the plot: each feature's kind, name, point count, time span and bounding box, "
    "cut to the plot's saved window as its picture is (the prompt says so, and what the whole data spans), the selection and the figures of debrief-calc's newest analyses of its features; never the "
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
            ("From Python scripts", SCRIPTS),
        ],
    )
    subscribers = LegacySubscribers()
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribers.subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, subscribers.unsubscribe)
    workspace = workspace_of(runtime)

    async def notify(ctx: Context[Any, Any] | None, change: Change) -> None:
        filename, aspects = change
        for aspect in dict.fromkeys(aspects):
            uri = "plots://list" if aspect == "list" else plot_uri(filename, aspect)
            if ctx is not None:
                await ctx.notify_resource_updated(uri)
            await subscribers.send(uri)

    read, write = tool_annotations(read_only=True), tool_annotations(read_only=False, idempotent=True)
    change = tool_annotations(read_only=False, destructive=True, idempotent=True)
    once = tool_annotations(read_only=False, destructive=True, idempotent=False)
    additive = tool_annotations(read_only=False)  # never overwrites: an existing plot is refused
    shows_the_plot = {"ui": {"resourceUri": VIEW_URI}}  # hosts with MCP Apps show the live view beside
    ws = Workspace
    tools = [
        Tool(
            "debrief_list_plots",
            ws.list_plots,
            read,
            "List open plots (filename, title), other .plot.json and REP files.",
        ),
        Tool(
            "debrief_create_plot",
            ws.create_plot,
            additive,
            "Create a plot file from features or debrief-calc refs and open it; its time and view fit them.",
            meta=shows_the_plot,
        ),
        Tool(
            "debrief_open_plot",
            ws.open_plot,
            write,
            "Mark a plot open for every client; calls without filename then use it.",
            meta=shows_the_plot,
        ),
        Tool("debrief_close_plot", ws.close_plot, write, "Mark a plot closed (the file is untouched)."),
        Tool(
            "debrief_get_features",
            ws.get_features,
            read,
            "A plot's features: summaries (id, kind, name, points, time span, bounds) or whole GeoJSON; paged.",
        ),
        Tool("debrief_get_selection", ws.get_selection, read, "The selected feature ids of a plot."),
        Tool(
            "debrief_set_selection",
            ws.set_selection,
            change,
            "Select features by id, replacing the selection ([] clears it).",
        ),
        Tool("debrief_get_time", ws.get_time, read, "The plot's time state {current, start, end}, ISO-8601."),
        Tool(
            "debrief_set_time",
            ws.set_time,
            change,
            "Set the plot's time: current alone moves it within the window; start/end change the window.",
        ),
        Tool(
            "debrief_get_viewport",
            ws.get_viewport,
            read,
            "The plot's viewport {bounds: [west, south, east, north]}.",
        ),
        Tool("debrief_set_viewport", ws.set_viewport, change, "Set the plot's viewport bounds, written into the file."),
        Tool(
            "debrief_zoom_to_selection",
            ws.zoom_to_selection,
            change,
            "Set the saved viewport to the padded bounds of the selection (or of ids).",
        ),
        Tool(
            "debrief_set_properties",
            ws.set_properties,
            change,
            "Change features' properties (rename, recolour): a merge patch, null deletes; undoable.",
        ),
        Tool(
            "debrief_apply_command",
            ws.apply_command,
            once,
            "Apply a DebriefCommand (or a list) to a plot, all or nothing; show*/logMessage come back in display.",
        ),
        Tool(
            "debrief_render_plot",
            ws.render_plot,
            read,
            "A PNG of the plot at a time as Debrief draws it (ships, past/future, DTGs, zones, cuts); fit picks the area.",
            meta=shows_the_plot,
        ),
        Tool(
            "debrief_undo",
            ws.undo,
            once,
            "Undo the last change made through this server (refused if the plot changed since).",
        ),
        Tool(
            "generate_prompt",
            ws.generate_plot_prompt,
            read,
            "A bounded prompt about a plot for your model: summarize-plot, describe-selection, narrate-timeline.",
            error_payload=envelope_error,
        ),
        Tool(
            "store_llm_result",
            ws.store_plot_llm_result,
            tool_annotations(read_only=False),
            "Store your model's answer to a generate_prompt ticket; add_annotation puts it in the plot too.",
            error_payload=envelope_error,
        ),
        Tool(
            "debrief_view_data",
            ws.view_data,
            read,
            "The live plot view's drawing data (MCP Apps; tracks thinned).",
            meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
            answer_chars=max(config.limits.result_chars, config.limits.answer_chars),
        ),
    ]
    add_workspace_tools(server, workspace, tools, notify)

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

    add_resources(server, lambda: workspace()._state)
    return server
