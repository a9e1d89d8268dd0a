"""The orchestrator's turns, in process: a scripted provider (the model's side), real MCP servers
attached to the coordinator (a small fake one, and the real llmem server for the callback)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from llmem.code.server import build_server
from llmem.core.config import ServerConfig
from llmem.host import Attached, Coordinator
from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolCall, ToolCallEvent, ToolSpec
from llmem.host.errors import ProviderError
from llmem.host.orchestrator import Orchestrator, OrchestratorSettings
from llmem.host.providers import Provider, ProviderSettings
from llmem.host.providers.standin import StandInProvider
from llmem.host.sessions import Session, SessionManager
from tests.conftest import DATA

pytestmark = pytest.mark.anyio

Script = Callable[[Sequence[ChatMessage], Sequence[ToolSpec]], list[StreamEvent]]


class ScriptedModel(Provider):
    """The model's side of a test: ``script(history, tools)`` gives each answer's events."""

    name = "scripted"

    def __init__(self, script: Script) -> None:
        super().__init__(ProviderSettings("scripted-model"))
        self.script = script
        self.systems: list[str] = []
        self.histories: list[list[ChatMessage]] = []

    async def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        self.systems.append(system)
        self.histories.append(list(history))
        for event in self.script(history, tools):
            if isinstance(event, Exception):
                raise event
            yield event
            await anyio.sleep(0)


def calls_of(*calls: tuple[str, dict[str, Any] | None]) -> list[StreamEvent]:
    return [ToolCallEvent(ToolCall(f"c{i}", name, args, raw=json.dumps(args))) for i, (name, args) in enumerate(calls)]


def fake_server(log: list[str], gate: anyio.Event | None = None) -> MCPServer:
    srv: MCPServer = MCPServer("ships")

    @srv.tool(description="Count ships.", annotations=ToolAnnotations(read_only_hint=True))
    def count(convoy: str) -> int:
        log.append(f"count {convoy}")
        return len(convoy.split(","))

    @srv.tool(description="Sink a ship.", annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def sink(ship: str) -> str:
        log.append(f"sink {ship}")
        return f"{ship} sunk"

    @srv.tool(description="Wait for the test.", annotations=ToolAnnotations(read_only_hint=True))
    async def wait() -> str:
        log.append("wait started")
        assert gate is not None
        try:
            await gate.wait()
        except BaseException:
            log.append("wait cancelled")
            raise
        log.append("wait finished")
        return "waited"

    @srv.prompt(name="tool-descriptions")
    def guide() -> str:
        return "SHIPS GUIDE: count before you sink."

    return srv


class Page:
    """What the page receives: every frame, in order."""

    def __init__(self, session: Session) -> None:
        self.frames: list[dict[str, Any]] = []
        self.seen = anyio.Event()
        session.connections["test"] = self.send

    async def send(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        self.seen.set()

    async def confirmation(self, session: Session) -> dict[str, Any]:
        """The confirmation the turn is waiting on, once it has come."""
        with anyio.fail_after(20):
            while not session.confirms:
                await self.seen.wait()
                self.seen = anyio.Event()
        payload: dict[str, Any] = next(f for f in self.frames if f["type"] == "confirm")["payload"]
        return payload

    def kinds(self) -> list[str]:
        return [f["type"] for f in self.frames]

    def text(self) -> str:
        return "".join(f["payload"]["content"] for f in self.frames if f["type"] == "text")

    def steps(self) -> list[dict[str, Any]]:
        return [f["payload"] for f in self.frames if f["type"] == "status"]


async def run_turn(
    script: Script, text: str, *, settings: OrchestratorSettings | None = None, log: list[str] | None = None, **kw: Any
) -> tuple[Page, Session, ScriptedModel]:
    model = ScriptedModel(script)
    async with Coordinator([Attached("ships", fake_server(log if log is not None else []))]) as host:
        orchestrator = Orchestrator(model, host, settings or OrchestratorSettings(retry_delay_s=0.01))
        session = SessionManager().create()
        page = Page(session)
        await orchestrator.handle_input(session, text)
    return page, session, model


async def test_a_turn_streams_text_runs_the_tool_and_answers_from_its_result() -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if history[-1].role == "user":
            return [TextDelta("Let me "), TextDelta("count."), *calls_of(("ships:count", {"convoy": "a,b,c"}))]
        return [TextDelta(f"There are {history[-1].content} ships.")]

    log: list[str] = []
    page, session, model = await run_turn(script, "How many ships?", log=log)
    assert log == ["count a,b,c"]
    assert page.kinds() == ["text", "text", "status", "status", "text", "done"]
    first, done = page.steps()
    assert (first["state"], first["tool"], first["data"]["arguments"]) == (
        "processing",
        "ships:count",
        {"convoy": "a,b,c"},
    )
    assert done["state"] == "complete" and done["data"]["result"] == {"result": 3} and done["data"]["isError"] is False
    assert page.text() == 'Let me count.There are {"result": 3} ships.'
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]
    assert "SHIPS GUIDE" in model.systems[0] and "`ships:count`(convoy)" in model.systems[0]


async def test_a_tool_block_in_the_text_is_run_like_a_native_call() -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if history[-1].role == "user":
            return [
                TextDelta("```to"),
                TextDelta('ol\n{"tool": "count", "arguments": {"convoy": "x"}}\n``'),
                TextDelta("`"),
            ]
        return [TextDelta("one")]

    log: list[str] = []
    page, session, _ = await run_turn(script, "count x", log=log)
    assert log == ["count x"] and page.text() == "one"
    assert session.history[2].native is False  # the result goes back as text, like the call came


async def test_a_hallucinated_tool_and_a_malformed_call_are_answered_to_the_model() -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if history[-1].role == "user":
            return calls_of(("ships:launch_torpedo", {}), ("ships:count", None))
        return [TextDelta("Sorry, I can only count.")]

    page, session, _model = await run_turn(script, "attack")
    unknown, malformed = (m for m in session.history if m.role == "tool")
    assert unknown.is_error and "There is no tool named 'ships:launch_torpedo'" in unknown.content
    assert "ships:count" in unknown.content  # the model is told what there is
    assert malformed.is_error and "could not be read" in malformed.content
    assert page.text() == "Sorry, I can only count." and page.kinds()[-1] == "done"
    assert [s["data"]["isError"] for s in page.steps() if s["state"] == "complete"] == [True, True]


@pytest.mark.parametrize("approve", [True, False])
async def test_a_destructive_tool_waits_for_the_person(approve: bool) -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if history[-1].role == "user":
            return calls_of(("sink", {"ship": "Bismarck"}))
        return [TextDelta("done" if not history[-1].is_error else "not sunk")]

    log: list[str] = []
    model = ScriptedModel(script)
    async with Coordinator([Attached("ships", fake_server(log))]) as host:
        orchestrator = Orchestrator(model, host)
        session = SessionManager().create()
        page = Page(session)
        async with anyio.create_task_group() as tg:
            tg.start_soon(orchestrator.handle_input, session, "sink it")
            confirm = await page.confirmation(session)
            assert confirm["tool"] == "ships:sink" and confirm["arguments"] == {"ship": "Bismarck"}
            # what will change, in words; the arguments stay for the disclosure
            assert confirm["change"] == "run sink with ship Bismarck"
            assert confirm["message"] == "This will run sink with ship Bismarck. Allow it?"
            assert log == []  # nothing runs before the answer
            pending = session.confirms[confirm["requestId"]]
            pending.approve = approve
            pending.answered.set()
    assert log == (["sink Bismarck"] if approve else [])
    assert page.text() == ("done" if approve else "not sunk")
    done = page.steps()[-1]["data"]
    if not approve:
        assert "declined" in session.history[2].content and session.history[2].is_error
        assert session.history[2].outcome == "declined" and done["outcome"] == "declined"
        assert done["headline"] == "you said no; nothing ran" and done["title"] == "sink"
        # the person reads a neutral note; the model reads why and what not to do
        assert done["result"] == "You declined; nothing ran." and "Do not run it again" in session.history[2].content
    else:
        assert session.history[2].outcome == "" and done["outcome"] == "done"
        # one measured duration: the step's and the history's (a reload shows the same)
        assert done["durationMs"] == session.history[2].duration_ms is not None
        assert done["headline"] == "Bismarck sunk" == session.history[2].headline


async def test_the_step_limit_ends_a_turn_with_a_last_answer_in_words() -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if not tools:
            return [TextDelta("I counted enough.")]
        return calls_of(("ships:count", {"convoy": "a"}))

    log: list[str] = []
    page, _session, model = await run_turn(script, "count forever", settings=OrchestratorSettings(max_steps=3), log=log)
    assert len(log) == 3 and page.text() == "I counted enough."
    assert len(model.histories) == 4 and page.kinds()[-1] == "done"


async def test_provider_errors_are_retried_with_backoff_then_explained() -> None:
    attempts: list[int] = []

    def flaky(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[Any]:
        attempts.append(1)
        if len(attempts) < 3:
            return [ProviderError("openai: HTTP 503", "openai", retryable=True, status=503)]
        return [TextDelta("fine now")]

    page, _, _ = await run_turn(flaky, "hello")
    assert len(attempts) == 3 and page.text() == "fine now"

    def down(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[Any]:
        return [ProviderError("openai: HTTP 401 bad key", "openai", retryable=False, status=401)]

    page, _session, model = await run_turn(down, "hello")
    assert len(model.histories) == 1 and page.kinds() == ["error", "done"]
    assert "could not reach the model" in page.frames[0]["payload"]["message"]


async def test_an_answer_that_breaks_off_is_not_retried_twice_on_the_page() -> None:
    def breaks(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[Any]:
        return [TextDelta("The closest"), ProviderError("openai: connection reset", "openai", retryable=True)]

    page, _session, model = await run_turn(breaks, "cpa?")
    assert len(model.histories) == 1 and page.text() == "The closest"
    assert page.kinds()[-2:] == ["error", "done"] and "broke off" in page.frames[-2]["payload"]["message"]


async def test_cancel_stops_the_running_tool_call_and_the_turn() -> None:
    gate = anyio.Event()
    log: list[str] = []

    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        return calls_of(("ships:wait", {})) if history[-1].role == "user" else [TextDelta("never")]

    model = ScriptedModel(script)
    async with Coordinator([Attached("ships", fake_server(log, gate))]) as host:
        orchestrator = Orchestrator(model, host)
        session = SessionManager().create()
        page = Page(session)
        async with anyio.create_task_group() as tg:
            tg.start_soon(orchestrator.handle_input, session, "wait")
            with anyio.fail_after(10):
                while "wait started" not in log:
                    await anyio.sleep(0.01)
            assert session.turn is not None
            session.turn.cancel()
        assert session.turn is None and page.kinds()[-1] == "done"
        assert page.steps()[-1]["data"] == {"cancelled": True}
        stopped_step = page.steps()[-2]
        assert stopped_step["state"] == "complete" and stopped_step["data"]["outcome"] == "cancelled"
        # the stopped call stays in the history, cancelled: a reload draws it so
        stopped = [m for m in session.history if m.role == "tool"]
        assert [(m.tool_name, m.outcome, m.is_error) for m in stopped] == [("ships:wait", "cancelled", True)]
        with anyio.fail_after(10):  # the client's notifications/cancelled reaches the server
            while "wait cancelled" not in log:
                await anyio.sleep(0.01)
        gate.set()
    assert log == ["wait started", "wait cancelled"] and "never" not in page.text()


async def test_prompt_ready_is_closed_by_the_host_with_its_model(tmp_path: Path) -> None:
    """llmem's annotate: the host's model (the stand-in here) answers the prompt, the host calls
    store_llm_result with the callbackArgs, and the notes are in the store."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "fleet.py").write_text('def speed(a, b):\n    """Knots between two fixes."""\n    return 1\n')
    provider = StandInProvider()
    async with Coordinator([Attached("llmem", build_server(ServerConfig("llmem-mcp", project)))]) as host:
        orchestrator = Orchestrator(provider, host)
        session = SessionManager().create()
        page = Page(session)
        text = '/tool llmem:generate_prompt {"path": "fleet.py", "task": "annotate"}'
        await orchestrator.handle_input(session, text)
        notes = await host.call("llmem:get_artifact", {"path": "fleet.py", "kind": "annotate"})
    assert not notes.is_error, notes.text
    assert "speed" in json.dumps(notes.structured["data"]["content"])
    steps = page.steps()
    assert [s["state"] for s in steps] == ["processing", "processing", "complete", "complete"]
    assert steps[2]["message"] == "Stored through llmem:store_llm_result" and not steps[3]["data"]["isError"]
    result = session.history[2]
    assert result.role == "tool" and not result.is_error and "stored the answer" in result.content
    # the store the host ran itself is kept with the call, so a reload draws that step too
    (stored,) = result.host_steps
    assert stored["tool"] == "llmem:store_llm_result" and stored["callId"] == steps[2]["data"]["callId"]
    assert (stored["outcome"], stored["title"]) == ("done", "store_llm_result")
    # and the stand-in's report of the call reads as one line, the data's own words
    assert page.text().startswith("- `generate_prompt · annotate` answered:")


async def test_in_text_mode_the_system_prompt_teaches_the_tool_blocks() -> None:
    from llmem.host.prompting import TOOL_BLOCK_RULES

    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        return [TextDelta("hi")]

    model = ScriptedModel(script)
    model.native_tools = False
    async with Coordinator([Attached("ships", fake_server([]))]) as host:
        orchestrator = Orchestrator(model, host)
    assert TOOL_BLOCK_RULES in orchestrator.system_prompt and '"convoy"' in orchestrator.system_prompt
    assert next(t for t in orchestrator.tools if t.name == "ships:sink").destructive
    assert not next(t for t in orchestrator.tools if t.name == "ships:count").destructive


@pytest.mark.parametrize("name", ["ships:count", "count", "ships__count", "ships_count", "ships.count", "SHIPS:Count"])
async def test_the_spellings_models_use_for_a_tool_all_reach_it(name: str) -> None:
    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        return calls_of((name, {"convoy": "a,b"})) if history[-1].role == "user" else [TextDelta("two")]

    log: list[str] = []
    page, _, _ = await run_turn(script, "count", log=log)
    assert log == ["count a,b"] and page.text() == "two"


async def test_a_confirmation_names_the_features_from_the_plot_server(tmp_path: Path) -> None:
    """The host reads the names of the features a deletion names from the state server's own
    ``debrief_get_features``, so the person is asked about London and Paris, not about ids."""
    from debrief_calc.state.server import build_server as build_state

    (tmp_path / "sample.plot.json").write_bytes((DATA / "plots" / "sample.plot.json").read_bytes())
    command = {"command": "deleteFeatures", "payload": ["london_city_001", "paris_city_002"]}

    def script(history: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> list[StreamEvent]:
        if history[-1].role == "user":
            args = {"filename": "sample.plot.json", "command": command}
            return calls_of(("debrief-state:debrief_apply_command", args))
        return [TextDelta("kept")]

    state = build_state(ServerConfig("debrief-state-mcp", tmp_path))
    async with Coordinator([Attached("debrief-state", state)]) as host:
        orchestrator = Orchestrator(ScriptedModel(script), host)
        session = SessionManager().create()
        page = Page(session)
        async with anyio.create_task_group() as tg:
            tg.start_soon(orchestrator.handle_input, session, "delete London and Paris")
            confirm = await page.confirmation(session)
            assert confirm["change"] == "delete 2 features — London, Paris from sample.plot.json"
            pending = session.confirms[confirm["requestId"]]
            pending.approve = False
            pending.answered.set()
        left = await host.call("debrief-state:debrief_get_features", {"filename": "sample.plot.json"})
    assert {f["id"] for f in left.structured["features"]} >= {"london_city_001", "paris_city_002"}  # declined
