"""``debrief-calc-mcp``: wires the analysis registry (``service.py``) to MCP tools."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from debrief_calc.calc.service import CalcService
from llmem import __version__
from llmem.config import ServerConfig
from llmem.envelope import Envelope, error_envelope
from llmem.errors import SuiteError
from llmem.serve import Runtime, SuiteServer, tool_annotations

__all__ = ["build_server"]

INSTRUCTIONS = (
    "debrief-calc runs maritime analysis tools (track statistics, range and bearing, closest approach, zone "
    "transits, speed filter, area summary, resampling, deletion, REP import) on Debrief GeoJSON features given "
    "inline or by plot reference. Discover tools with list_tools/describe_tool and run them with run_tool; "
    "changes to plots come back as DebriefCommands for debrief-state-mcp to apply."
)

PURPOSE = (
    "Maritime analysis for analysts replaying exercises, on WGS84 geodesy (within 0.5 m of GeographicLib). "
    "Units: distances in nautical miles unless distance_unit says otherwise (m, km, yd, kyd, mi), speeds in "
    "knots, bearings in true degrees, times ISO-8601 UTC. Features come inline (features) or from a .plot.json "
    "of the workspace (plot: {filename, feature_ids} or {filename, selection: true}, the selection being the "
    "one debrief-state-mcp keeps). Tools that change a plot return commands instead of writing it. Every "
    "result feature carries properties.provenance and is kept in the store for narration."
)

PROTOCOL = (
    "The server never calls a model. generate_prompt(target=<result id or ids>, task='narrate-result' or "
    "'summarize-analysis') answers 'prompt_ready' with promptForHostLLM and callbackArgs; run the prompt with "
    "your model and call store_llm_result(**callbackArgs, result=<Markdown>). A bad answer can be retried on the "
    "same ticket (MAX_STEPS times); if the results changed meanwhile it is refused with SOURCE_CHANGED."
)

ContextType = Literal["single", "multi", "region", "none"]


class ToolList(BaseModel):
    tools: list[dict[str, Any]]


class ToolDescription(BaseModel):
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

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


class PlotRef(BaseModel):
    filename: str
    feature_ids: list[str | int] | None = None
    selection: bool = False


def _contract_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    return {"success": False, "error": err.to_dict(), "duration_ms": duration_ms}


def _envelope_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The callback pair's failure: ``{success: false, …}`` like the other tools, in the envelope."""
    return error_envelope(err).with_success().model_dump(mode="json")


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="debrief-calc-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=PURPOSE,
        protocol_notes=PROTOCOL,
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
        features: list[dict[str, Any]] | None = None,
        plot: PlotRef | None = None,
        bounds: Annotated[list[float] | None, Field(min_length=4, max_length=4)] = None,
        parameters: dict[str, Any] | None = None,
    ) -> RunAnswer:
        answer = svc().run(tool, features, plot.model_dump() if plot else None, bounds, parameters)
        if not answer["success"]:
            error = answer["error"]
            raise SuiteError(error["message"], code=error["code"], details=error.get("details"))
        return RunAnswer(**answer)

    def generate_prompt(
        target: Annotated[str | list[str], Field(description="A result id, or several")],
        task: Literal["narrate-result", "summarize-analysis"],
    ) -> Envelope:
        return svc().prompt(target, task).with_success()

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
        description="The analysis tools, optionally only those for a context or accepting given kinds.",
    )
    server.add_suite_tool(
        describe_tool,
        name="describe_tool",
        annotations=read,
        description="One analysis tool's metadata with every parameter (type, default, choices, unit).",
    )
    server.add_suite_tool(
        run_tool,
        name="run_tool",
        annotations=read,
        description="Run an analysis tool on inline features or a plot reference; returns result features "
        "and DebriefCommands (never edits a plot).",
    )
    server.add_suite_tool(
        generate_prompt,
        name="generate_prompt",
        annotations=read,
        error_payload=_envelope_error,
        description="A bounded prompt for your model to narrate one result or summarise several.",
    )
    server.add_suite_tool(
        store_llm_result,
        name="store_llm_result",
        error_payload=_envelope_error,
        annotations=tool_annotations(read_only=False),
        description="Validate and store your model's narrative for a generate_prompt ticket.",
    )
    return server
