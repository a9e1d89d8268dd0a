"""``debrief-calc-mcp``: wires the analysis registry (``service.py``) to MCP tools."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field

from debrief_calc.calc.service import CalcService
from llmem import __version__
from llmem.core.config import Limits, ServerConfig
from llmem.core.envelope import Envelope, failure_answer
from llmem.core.errors import SuiteError
from llmem.core.serve import Runtime, SuiteServer, tool_annotations

__all__ = ["build_server"]

INSTRUCTIONS = (
    "debrief-calc runs maritime analysis tools (track statistics, range and bearing, closest approach and every "
    "pass, close quarters, zone transits, speed filter, area summary, resampling, deletion, REP import) on Debrief "
    "GeoJSON features given "
    'inline, as {"ref"} items from earlier answers, or by plot reference. Discover tools with '
    "list_tools/describe_tool, run them with run_tool, read stored results with get_result; changes to plots "
    "come back as DebriefCommands for debrief-state-mcp to apply."
)


def _purpose(limits: Limits) -> str:
    return f"""Maritime analysis for analysts replaying exercises, on WGS84 geodesy (within 0.5 m of GeographicLib). \
Units: distances in nautical miles unless parameters.distance_unit says m, km, yd (yards), kyd or mi; speeds in \
knots; bearings in true degrees; times ISO-8601 UTC.

Where features come from (run_tool takes one of them):
- features: a list of GeoJSON Features and/or references {{"ref": "debrief-calc:runs/<run id>"}} (all the \
features of an earlier run), {{"ref": "debrief-calc:results/<result id>"}} (one result), \
{{"ref": "debrief-state:plots/<file>.plot.json#<feature id>"}} (one feature of a plot, as debrief_get_features \
gives its ref) or {{"ref": "debrief-state:plots/<file>.plot.json", "ids": [...]}} (a plot's features, all without \
ids), mixed freely;
- plot: {{"filename": "x.plot.json", "feature_ids": [...]}} or {{"filename": ..., "selection": true}} (the selection \
debrief-state-mcp keeps), read from the workspace. From a whole plot (plot without feature_ids or selection, or a \
debrief-state:plots/<file> ref without ids) the features of kinds the tool does not take, metadata and backdrops \
are left out and the answer says so (skipped: {{kind: [ids]}} and a warning); a feature named by id of a kind it \
does not take is refused (KIND_MISMATCH, naming the kinds to pass).

A window: time_start/time_end (ISO-8601, either may be left out) cut every input, however given, to that span: \
tracks keep their fixes inside it plus a fix interpolated exactly at each edge (so 10:00-11:00 is analysed over \
exactly 10:00-11:00), zones, points and notes are kept while active; the answer's window lists what it left \
out and every result's provenance.window states it (plot.time_start/time_end still work; a different pair \
in both places is refused).

From REP files: run_tool(tool="import-rep", parameters={{"path": "boat1.rep"}}) answers one track per platform \
and stored: {{"ref": "debrief-calc:runs/<run id>", "use": ...}}, the reference of the whole run, which its \
addFeatures command carries too (every import and resample-track answer has one). A result over the answer cap \
({limits.answer_chars} characters; a track of a few hundred fixes is) comes as summaries, each with the ref of its \
one result. Then either analyse at once, e.g. \
run_tool(tool="closest-approach", features=[{{"ref": <boat1 ref>}}, {{"ref": <boat2 ref>}}], \
parameters={{"distance_unit": "yd"}}), or make a plot on debrief-state-mcp with \
debrief_create_plot(filename, features=[{{"ref": ...}}, ...]) or debrief_apply_command(<the import's addFeatures \
command>) and analyse it with run_tool(tool, plot={{"filename": ..., "feature_ids": [...]}}).

Tools: track-stats (per track: distance, duration, mean and max speed, mean course), closest-approach (the least \
range of each pair and every pass: each local range minimum worth the name, between fixes, by a stated rule; a \
least range at the start or end of the data or window is never a CPA: at_edge, cpa_note), close-quarters (the \
periods two tracks were within parameters.threshold, entry and exit between fixes, the least range in each), \
range-bearing (a series with range_rate and rates of turn; its cpa_range is the least range, its passes as \
closest-approach's), tote (range in yd, bearings, bearing rate, range_rate (kn, + opening), courses, speeds and \
rates of turn of a primary against each other track at one time: parameters.time, else the plot's current time), \
speed-filter (periods above or below threshold_kn), track-legs (steady legs, each within its course_tolerance, and \
every turn as a manoeuvre with its rate of turn, per track; mark_legs, marks_timed=false to show every mark at once), \
zone-transits, zone-overlaps (who was in one zone while another was in another), area-summary, resample-track, \
delete-features, import-rep; describe_tool(name) gives every parameter. Positions in answers also come in degrees and \
minutes (*_dm: 22°07.41'N 021°46.41'W). Tools that change a plot return DebriefCommands for debrief_apply_command \
instead of writing it.

Pictures (no plot-state server needed): render_series(features=[{{"ref": <a range-bearing result>}}]) draws its properties.series as stacked panels against time, Debrief's time-variable plots: quantities (default range, bearing, bearing_rate; any numeric column; an unknown one is refused with the list), the CPA marked (cpa_time, else the sampled min_range_time, which the answer says). Given tracks instead (features, or plot as for run_tool), with time_start/time_end to cut them, it runs range-bearing on the primary's fixes (parameters: primary, secondary, distance_unit), keeps that result (answer.source.ref) and marks the CPA found between fixes; one track gives its speed and course. narratives=[annotations with a time, or {{"ref"}}] (by default the plot's narrative entries and notes, timed annotations with no geometry or a point, of the plot read: plot, or debrief-state:plots refs to one plot) are marked and labelled where they fit; parameters.width/height in pixels (900 wide). The answer: the PNG, and panels (label with unit, axis, min, max; extrema "sampled": the samples' min and max, and beside them the true ones between fixes where the result has them: true_min of range (the CPA), true_peak of bearing_rate {{value, time, label, between_samples}}, drawn as a red diamond and labelled; outside_span: true when the span drawn leaves it out), span, samples, cpa {{time, range, unit, label, source}}, narratives {{given, marked, marked_at, labelled, outside_span, untimed, untimed_ids, from_plot}}: every entry given is marked, outside_span or untimed, others (the other secondaries' result refs).

Results: every result feature carries properties.provenance and is kept in the store as \
{{"ref": "debrief-calc:results/<its id>"}}. get_result(ref, cursor?) reads any reference back (or a result id), \
in pages within the cap (kinds=["annotation"]: only annotations, such as an import's narratives); a feature \
too big for one answer comes in parts of its points (part: {{"points": [a, b], "of": N}}) or of its longest list \
of figures (part: {{"items": [a, b], "of": N, "at": ...}}), to be concatenated in order. \
get_result(ref, format="csv"|"tsv"|"markdown") gives range-bearing results as legacy Debrief's copied table, \
Time, Depth, Speed, Course (the secondary's), Range (yd), Bearing, Brg Rate, in pages cut between rows (csv/tsv: \
one result). An analysis answer's keep spells out the debrief_apply_command call that adds its results to a plot."""


def _protocol(limits: Limits) -> str:
    return (
        "The server never calls a model. generate_prompt(target=<a result id, or a list of ids>, "
        "task='narrate-result' (one result) or 'summarize-analysis' (several), time_start?/time_end? (a window to "
        "tell about: the prompt says it and keeps only the series rows inside it)) answers 'prompt_ready' with "
        "promptForHostLLM (the results' figures: a short series as a table of every row, a long one summarised "
        "with the rows left out counted) and callbackArgs; run the prompt with your model and "
        "call store_llm_result(**callbackArgs, result=<Markdown>). A rejected answer can be corrected and sent again "
        f"on the same ticket, {limits.max_steps} attempts in all, within {limits.ticket_ttl_s} s; if the results "
        "changed meanwhile it is refused with SOURCE_CHANGED. store_llm_result answers the narrative's ref "
        "(debrief-calc:results/<id>/narrative, or debrief-calc:analyses/<hash>/summary); get_result(ref) reads it back."
    )


ContextType = Literal["single", "multi", "region", "none"]


class ToolList(BaseModel):
    success: bool = True
    tools: list[dict[str, Any]]


class ToolDescription(BaseModel):
    success: bool = True
    name: str
    description: str = ""
    version: str = ""
    input_kinds: list[str] = []
    output_kind: str | None = None
    context_type: str = ""
    parameters: list[dict[str, Any]] = []
    context_types: list[str] = []
    output_kinds: list[str] = []


class RunAnswer(BaseModel):
    success: bool
    features: list[dict[str, Any]] = []
    commands: list[dict[str, Any]] = []
    duration_ms: float
    error: dict[str, Any] | None = None
    warnings: list[str] | None = None
    report: dict[str, Any] | None = None
    stored: dict[str, Any] | None = None
    keep: str | None = None
    window: dict[str, Any] | None = None
    narratives: dict[str, Any] | None = None
    skipped: dict[str, list[str]] | None = None  # features of a whole plot left out, ids by kind

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


class StoredAnswer(BaseModel):
    success: bool
    ref: str = ""
    kind: str = ""
    total: int | None = None
    features: list[dict[str, Any]] | None = None
    format: str | None = None
    chars: int | None = None
    text: str | None = None
    next_cursor: str | None = None
    note: str | None = None
    narrative: dict[str, str] | None = None
    kinds: list[str] | None = None

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        out = super().model_dump(**kwargs)
        out["next_cursor"] = self.next_cursor  # null says "that was the last page"
        return out


class PlotRef(BaseModel):
    # time_start/time_end are read here too (the service refuses any other member), but left
    # out of the schema: the run's own time_start/time_end is the one window to advertise
    model_config = ConfigDict(extra="allow")
    filename: str
    feature_ids: list[str | int] | None = None
    selection: bool = False


class SeriesAnswer(BaseModel):
    success: bool = True
    mediaType: str
    title: str  # from the quantities drawn
    width: int
    height: int
    bytes: int
    span: list[str]  # [first, last] sample drawn, ISO-8601
    samples: int
    panels: list[dict[str, Any]]  # quantity, label, axis [low, high], min, max, extrema, true_min, true_peak
    source: dict[str, Any]  # where the series is: a result's ref (get_result reads its numbers) or the track
    cpa: dict[str, Any] | None = None  # time, label, source (cpa_time, closest-approach, min_range_time), range, unit
    # given, marked, marked_at, labelled, outside_span, untimed, untimed_ids, untimed_note, from_plot
    narratives: dict[str, Any] | None = None
    others: list[dict[str, Any]] | None = None  # the other secondaries' results, to plot with result=<ref>

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


def _contract_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    return {"success": False, "error": err.to_dict(), "duration_ms": duration_ms}


def _envelope_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The callback pair's failure: ``{success: false, error, nextAction}`` like the other tools."""
    return failure_answer(err)


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="debrief-calc-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=_purpose(runtime.limits),
        protocol_notes=_protocol(runtime.limits),
        error_payload=_contract_error,
        argument_error_code="VALIDATION_FAILED",
    )

    def svc() -> CalcService:
        return runtime.service(CalcService)

    def list_tools(context_type: ContextType | None = None, kinds: list[str] | None = None) -> ToolList:
        return ToolList(tools=svc().list_tools(context_type, kinds))

    def describe_tool(name: Annotated[str, Field(max_length=200)]) -> ToolDescription:
        return ToolDescription(**svc().describe(name))

    def run_tool(
        tool: Annotated[str, Field(max_length=200)],
        features: Annotated[
            list[dict[str, Any]] | None, Field(description='GeoJSON Features and/or {"ref": ...} items')
        ] = None,
        plot: PlotRef | None = None,
        bounds: Annotated[list[float] | None, Field(min_length=4, max_length=4)] = None,
        parameters: dict[str, Any] | None = None,
        time_start: Annotated[str | None, Field(max_length=64)] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> RunAnswer:
        plot_ref = plot.model_dump() if plot else None
        answer = svc().run(tool, features, plot_ref, bounds, parameters, time_start, time_end)
        if not answer["success"]:
            error = answer["error"]
            raise SuiteError(error["message"], code=error["code"], details=error.get("details"))
        return RunAnswer(**answer)

    def get_result(
        ref: Annotated[str, Field(max_length=300, description="A ref or a result id")],
        cursor: Annotated[str | None, Field(max_length=1000)] = None,
        kinds: Annotated[
            list[str] | None, Field(max_length=10, description="Only these kinds, e.g. [annotation]")
        ] = None,
        format: Annotated[
            Literal["csv", "tsv", "markdown"] | None,
            Field(description="range-bearing results as a report table"),
        ] = None,
    ) -> StoredAnswer:
        return StoredAnswer(**svc().get_result(ref, cursor, kinds, format))

    def render_series(
        features: list[Any] | None = None,
        plot: dict[str, Any] | None = None,
        time_start: str | None = None,
        time_end: str | None = None,
        quantities: list[str] | None = None,
        narratives: list[Any] | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> Annotated[types.CallToolResult, SeriesAnswer]:
        from debrief_calc.calc.series import render_series as draw
        from debrief_calc.state.answers import with_images

        data, png = draw(
            svc(),
            features=features,
            plot=plot,
            time_start=time_start,
            time_end=time_end,
            quantities=quantities,
            narratives=narratives,
            parameters=parameters,
        )
        image = {"mediaType": "image/png", "data": base64.b64encode(png).decode()}
        return with_images(SeriesAnswer(**data), [image])

    def generate_prompt(
        target: Annotated[str | list[str], Field(description="Result id(s) or ref(s) (a run ref: all its results)")],
        task: Literal["narrate-result", "summarize-analysis"],
        time_start: Annotated[str | None, Field(max_length=64)] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> Envelope:
        return svc().prompt(target, task, time_start, time_end).with_success()

    def store_llm_result(
        ticket: Annotated[str, Field(max_length=64)],
        target: str,
        task: Literal["narrate-result", "summarize-analysis"],
        result: str,
        model: Annotated[str | None, Field(max_length=200)] = None,
    ) -> Envelope:
        return svc().store_result(ticket, target, task, result, model).with_success()

    read = tool_annotations(read_only=True)
    server.add_suite_tool(
        list_tools,
        name="list_tools",
        annotations=read,
        description="The analysis tools, optionally filtered by context or input kinds.",
    )
    server.add_suite_tool(
        describe_tool,
        name="describe_tool",
        annotations=read,
        description="One analysis tool with every parameter (type, default, choices, unit).",
    )
    server.add_suite_tool(
        run_tool,
        name="run_tool",
        annotations=read,
        description="Run an analysis tool on features (inline or {ref} items) or a plot, within "
        "time_start/time_end (ISO) if given; answers results and DebriefCommands.",
    )
    server.add_suite_tool(
        get_result,
        name="get_result",
        annotations=read,
        description="Read any ref an answer gave (a run, a result, a narrative) or a result id, paged: pass "
        "next_cursor for the next page.",
    )
    server.add_suite_tool(
        render_series,
        name="render_series",
        annotations=read,
        description="PNG time plot of a range-bearing result or of tracks, CPA and narratives marked.",
    )
    server.add_suite_tool(
        generate_prompt,
        name="generate_prompt",
        annotations=read,
        error_payload=_envelope_error,
        description="A prompt for your model to narrate one result or summarise several.",
    )
    server.add_suite_tool(
        store_llm_result,
        name="store_llm_result",
        error_payload=_envelope_error,
        annotations=tool_annotations(read_only=False),
        description="Check and store your model's narrative for a generate_prompt ticket.",
    )
    return server
