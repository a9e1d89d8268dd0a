"""The host's coordinator (llmem/host.py): config, registry, guides, validation, timeouts, breaker.

In-process fake servers (``Attached``) do what a test asks (answer, hang on an event, fail,
refuse, explain a domain error); real stdio subprocesses cover what needs a real transport: a
server without a ``tool-descriptions`` prompt, one that dies mid-call, one that never answers.
No sleeps: a fake clock drives the breaker, every wait is bounded with ``anyio.fail_after``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from llmem.host import (
    ArgumentError,
    Attached,
    CallTimeout,
    CircuitOpen,
    ConfigError,
    Coordinator,
    NameConflict,
    ServerFailed,
    ServerSpec,
    UnknownTool,
    load_config,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.anyio

GUIDE = "# fake\n\nA fake server for the coordinator's tests. Call `echo` first."


@dataclass
class Controls:
    """What the fake server's ``flaky`` tool does next, and how often the server was reached."""

    mode: str = "ok"  # ok | hang | crash | refuse | domain
    calls: int = 0
    release: anyio.Event = field(default_factory=anyio.Event)
    hanging: anyio.Event = field(default_factory=anyio.Event)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fake_server(name: str, controls: Controls, *, guide: str | None = GUIDE, other_prompt: bool = False) -> MCPServer:
    srv: MCPServer = MCPServer(name)

    @srv.tool(description="Echo a text a number of times.")
    def echo(text: str, times: int = 1) -> str:
        controls.calls += 1
        return text * times

    @srv.tool(description="Answers, hangs, fails, refuses or explains a domain error, as the test says.")
    async def flaky() -> str:
        controls.calls += 1
        if controls.mode == "hang":
            controls.hanging.set()
            await controls.release.wait()
        elif controls.mode == "crash":
            raise MCPError(code=INTERNAL_ERROR, message="boom")
        elif controls.mode == "refuse":
            raise MCPError(code=INVALID_PARAMS, message="bad ship id")
        elif controls.mode == "domain":
            raise ToolError("no such ship")
        return "ok"

    if guide is not None:

        @srv.prompt(name="tool-descriptions")
        def tool_descriptions() -> str:
            return guide

    if other_prompt:

        @srv.prompt(name="greeting")
        def greeting() -> str:
            return "hello"

    return srv


BARE_SERVER = textwrap.dedent(
    '''
    """A bare MCPServer: two tools, no prompts at all."""
    import os

    import anyio
    from mcp.server.mcpserver import MCPServer

    srv = MCPServer("bare")


    @srv.tool(description="Count the ships of a convoy given as comma-separated names.")
    def count(convoy: str, limit: int = 10) -> int:
        return min(limit, len(convoy.split(",")))


    @srv.tool(description="Exit the process at once, as a crashing server does.")
    def die() -> str:
        os._exit(3)


    anyio.run(srv.run_stdio_async)
    '''
)


@pytest.fixture
def bare_script(tmp_path: Path) -> Path:
    path = tmp_path / "bare server.py"
    path.write_text(BARE_SERVER, encoding="utf-8")
    return path


# -- configuration ---------------------------------------------------------------------------


def test_load_the_example_config_with_substitutions() -> None:
    """``mcp_config.example.json`` launches the installed console scripts (no uvx: nothing installs
    it), each on ``${workspaceFolder}``, which ``llmem-host --workspace`` fills."""
    specs = load_config(ROOT / "mcp_config.example.json", {"${workspaceFolder}": "/home/me/my project"})
    assert [(s.name, s.command, s.args) for s in specs] == [
        (name, script, ("--workspace", "/home/me/my project"))
        for name, script in (
            ("llmem", "llmem-mcp"),
            ("debrief-calc", "debrief-calc-mcp"),
            ("debrief-state", "debrief-state-mcp"),
        )
    ]
    llmem = specs[0]
    assert llmem.env == {"LLMEM_LOG_LEVEL": "info"}
    params = llmem.parameters()
    assert params.command == "llmem-mcp" and params.args[-1] == "/home/me/my project"


def test_load_the_vscode_servers_form(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "servers": {
                    "llmem": {
                        "type": "stdio",
                        "command": "/venv/bin/llmem-mcp",
                        "args": ["--workspace", "${workspaceFolder}"],
                        "cwd": "${workspaceFolder}",
                        "timeoutMs": 2500,
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    (spec,) = load_config(config, {"${workspaceFolder}": "/work/ü project"})
    assert spec == ServerSpec(
        "llmem", "/venv/bin/llmem-mcp", ("--workspace", "/work/ü project"), None, "/work/ü project", 2.5
    )


_PLACEHOLDERS = """{"mcpServers": {"llmem": {"command": "uvx", "args":
    ["--from", "/absolute/path/to/llmem-debrief-mcp", "llmem-mcp", "--workspace", "/absolute/path/to/your/project"]}}}"""


def test_a_placeholder_left_unfilled_is_named(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(_PLACEHOLDERS, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mcpServers\.llmem\.args\[4\] still holds the placeholder"):
        load_config(config, {"/absolute/path/to/llmem-debrief-mcp": "/opt/suite"})
    config.write_text('{"servers": {"x": {"command": "x", "args": ["${workspaceFolder}"]}}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"'\$\{workspaceFolder\}'"):
        load_config(config, {})


def test_the_message_names_the_option_that_fills_a_placeholder(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(_PLACEHOLDERS, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"--set '/absolute/path/to/llmem-debrief-mcp=VALUE'"):
        load_config(config, {})


def test_set_fills_any_placeholder_and_refuses_a_malformed_one(tmp_path: Path) -> None:
    import subprocess

    from tests.conftest import console_script, subprocess_env

    config = tmp_path / "mcp.json"
    config.write_text(_PLACEHOLDERS, encoding="utf-8")

    def host(*args: str) -> subprocess.CompletedProcess[str]:
        command = [console_script("llmem-host"), "--config", str(config), *args]
        return subprocess.run(command, env=subprocess_env(), capture_output=True, text=True, timeout=60)

    bad = host("--set", "nothing")
    assert bad.returncode == 2 and "PLACEHOLDER=VALUE" in bad.stderr and bad.stdout == ""
    unfilled = host("--port", "0")
    assert unfilled.returncode == 1 and "--set '/absolute/path/to/" in unfilled.stderr


def test_two_servers_with_one_name_in_the_config(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        '{"mcpServers": {"calc": {"command": "a"}, "state": {"command": "b"}, "calc": {"command": "c"}}}',
        encoding="utf-8",
    )
    with pytest.raises(NameConflict, match="'calc' appears twice"):
        load_config(config, {})
    with pytest.raises(NameConflict, match="two servers are named 'calc'") as caught:
        Coordinator([ServerSpec("calc", "a"), ServerSpec("state", "b"), ServerSpec("calc", "c")])
    assert caught.value.candidates == ("calc",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"not valid JSON: .* line 1"),
        ("[]", "top level must be a JSON object"),
        ('{"tools": {}}', "expected an object under 'mcpServers'"),
        ('{"mcpServers": {"x": {"args": []}}}', r"mcpServers\.x has no 'command'"),
        ('{"mcpServers": {"x": {"command": "a", "args": "b"}}}', r"args must be a list"),
        ('{"servers": {"x": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}', "stdio servers only"),
        ('{"mcpServers": {"x": {"command": "a", "timeoutMs": -1}}}', "timeoutMs must be a positive number"),
    ],
)
def test_bad_configs_are_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(config, {})


def test_a_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config"):
        load_config(tmp_path / "nope.json", {})


# -- discovery, names and guides -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_under_qualified_names_and_bare_names(mode: str) -> None:
    a, b = Controls(), Controls()
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", a)), Attached("beta", fake_server("beta", b))], mode=mode
        ) as host:
            assert host.servers == ["alpha", "beta"]
            assert [e.qualified_name for e in host.tools()] == [
                "alpha:echo",
                "alpha:flaky",
                "beta:echo",
                "beta:flaky",
            ]
            result = await host.call("beta:echo", {"text": "ab", "times": 2})
            assert not result.is_error and result.text == "abab" and result.duration_ms > 0
            assert (a.calls, b.calls) == (0, 1)
            with pytest.raises(NameConflict, match="ambiguous: alpha:echo, beta:echo") as caught:
                host.resolve("echo")
            assert caught.value.candidates == ("alpha:echo", "beta:echo")
            with pytest.raises(UnknownTool, match="did you mean alpha:echo") as unknown:
                await host.call("alpha:ecko", {"text": "x"})
            assert "alpha:echo" in unknown.value.suggestions
            entry = host.tools("beta")[0]
            assert entry.calls == 1 and entry.mean_ms > 0


async def test_an_unambiguous_bare_name_resolves() -> None:
    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", fake_server("alpha", Controls()))]) as host:
            assert host.resolve("echo").qualified_name == "alpha:echo"
            assert (await host.call("echo", {"text": "hi"})).text == "hi"


async def test_a_qualified_name_claimed_twice_is_refused() -> None:
    a, b = MCPServer("a"), MCPServer("a:b")

    @a.tool(name="b:c")
    def first() -> str:
        return "1"

    @b.tool(name="c")
    def second() -> str:
        return "2"

    with anyio.fail_after(20), pytest.raises(NameConflict, match="'a:b:c' is claimed twice") as caught:
        async with Coordinator([Attached("a", a), Attached("a:b", b)]):
            pass
    assert caught.value.candidates == ("a:b:c",)


async def test_descriptions_come_from_the_servers_prompt() -> None:
    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", fake_server("alpha", Controls()))]) as host:
            assert host.descriptions("alpha") == GUIDE
            assert host.descriptions_generated("alpha") is False
            with pytest.raises(ConfigError, match="no server named 'gamma'; this host runs: alpha"):
                host.descriptions("gamma")


async def test_a_server_with_prompts_but_not_tool_descriptions_gets_a_fallback() -> None:
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", Controls(), guide=None, other_prompt=True))]
        ) as host:
            assert host.descriptions_generated("alpha") is True
            guide = host.descriptions("alpha")
            assert "no `tool-descriptions` prompt" in guide
            assert "- `echo`: Echo a text a number of times." in guide


async def test_a_tool_descriptions_prompt_of_the_wrong_shape_gets_a_fallback() -> None:
    srv = fake_server("alpha", Controls(), guide=None)

    @srv.prompt(name="tool-descriptions")
    def tool_descriptions() -> list[AssistantMessage]:
        return [AssistantMessage("I am the assistant, not the user")]

    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", srv)]) as host:
            assert host.descriptions_generated("alpha") is True
            assert "- `flaky`: Answers, hangs, fails" in host.descriptions("alpha")


async def test_the_fallback_guide_of_a_bare_stdio_server(bare_script: Path) -> None:
    spec = ServerSpec("bare", sys.executable, (str(bare_script),))
    with anyio.fail_after(60):
        async with Coordinator([spec]) as host:
            assert host.descriptions_generated("bare") is True
            guide = host.descriptions("bare")
            assert guide.startswith("# bare\n")
            assert "call them as `bare:<tool>`" in guide
            assert "- `count`: Count the ships of a convoy given as comma-separated names." in guide
            assert "`convoy` (string; required)" in guide
            assert "`limit` (integer; default 10)" in guide
            assert "- `die`: Exit the process at once" in guide
            assert (await host.call("bare:count", {"convoy": "a,b,c"})).structured == {"result": 3}


# -- arguments -------------------------------------------------------------------------------


async def test_arguments_are_checked_before_anything_is_sent() -> None:
    controls = Controls()
    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", fake_server("alpha", controls))]) as host:
            with pytest.raises(ArgumentError, match=r"at \$ \(rule 'required'\): 'text' is a required property") as e1:
                await host.call("alpha:echo", {"times": 2})
            assert (e1.value.path, e1.value.rule, e1.value.tool) == ("$", "required", "alpha:echo")
            with pytest.raises(ArgumentError, match=r"at \$\.times \(rule 'type'\)") as e2:
                await host.call("alpha:echo", {"text": "x", "times": "2"})
            assert "nothing was sent" in str(e2.value)
            with pytest.raises(ArgumentError) as e3:
                await host.call("alpha:echo", {"text": 1, "times": 2.5})
            assert {(e["path"], e["rule"]) for e in e3.value.errors} == {("$.text", "type"), ("$.times", "type")}
            assert controls.calls == 0  # the server never saw any of them
            assert host.breaker("alpha").state == "closed" and host.breaker("alpha").failures == 0


async def test_the_draft_a_schema_declares_is_the_one_used() -> None:
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["pair"],
    }

    class Draft7Server(MCPServer):
        async def list_tools(self) -> list[Any]:
            tools = await super().list_tools()
            for tool in tools:
                tool.input_schema = draft7
            return tools

    srv = Draft7Server("d7")

    @srv.tool()
    def pair(pair: list[Any]) -> str:
        return json.dumps(pair)

    with anyio.fail_after(20):
        async with Coordinator([Attached("d7", srv)]) as host:
            # draft-07 tuple validation: items[1] must be an integer (2020-12 would read `items` otherwise)
            with pytest.raises(ArgumentError, match=r"\$\.pair\[1\] \(rule 'type'\)"):
                await host.call("d7:pair", {"pair": ["a", "b"]})
            assert (await host.call("d7:pair", {"pair": ["a", 1]})).text == '["a", 1]'


async def test_a_refusal_from_the_server_is_an_argument_error_not_a_failure() -> None:
    controls = Controls(mode="refuse")
    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", fake_server("alpha", controls))], failure_threshold=1) as host:
            with pytest.raises(ArgumentError, match="refused the arguments of alpha:flaky: bad ship id") as caught:
                await host.call("alpha:flaky")
            assert caught.value.rule == f"server (JSON-RPC {INVALID_PARAMS})"
            assert host.breaker("alpha").state == "closed"


# -- timeouts --------------------------------------------------------------------------------


async def test_every_call_has_a_timeout_with_a_per_call_override() -> None:
    controls = Controls(mode="hang")
    with anyio.fail_after(20):
        async with Coordinator([Attached("alpha", fake_server("alpha", controls))], timeout_s=30.0) as host:
            with pytest.raises(CallTimeout, match=r"alpha:flaky did not answer within 0\.05 s") as caught:
                await host.call("alpha:flaky", timeout_s=0.05)
            assert caught.value.timeout_s == 0.05
            controls.release.set()
            controls.mode = "ok"
            assert (await host.call("alpha:flaky")).text == "ok"  # the connection is still usable


async def test_a_servers_own_timeout_applies_when_the_call_gives_none() -> None:
    controls = Controls(mode="hang")
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", controls), timeout_s=0.05)], timeout_s=30.0
        ) as host:
            with pytest.raises(CallTimeout, match=r"within 0\.05 s"):
                await host.call("alpha:flaky")
            controls.release.set()


# -- the circuit breaker ---------------------------------------------------------------------


async def test_the_breaker_opens_fails_fast_half_opens_and_closes() -> None:
    controls, clock = Controls(mode="crash"), FakeClock()
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", controls))], failure_threshold=2, cooldown_s=30.0, clock=clock
        ) as host:
            breaker = host.breaker("alpha")
            with pytest.raises(ServerFailed, match="internal error") as first:
                await host.call("alpha:flaky")
            assert first.value.rpc_code == INTERNAL_ERROR and breaker.state == "closed"
            with pytest.raises(ServerFailed, match="circuit of 'alpha' is now open for 30 s"):
                await host.call("alpha:flaky")
            assert breaker.state == "open" and controls.calls == 2

            with pytest.raises(CircuitOpen, match=r"after 2 consecutive failures.*in 30\.0 s") as fast:
                await host.call("alpha:echo", {"text": "x"})  # every tool of the server fails fast
            assert (fast.value.server, fast.value.failures, fast.value.retry_at) == ("alpha", 2, 1030.0)
            assert controls.calls == 2  # nothing was sent
            clock.now += 10
            with pytest.raises(CircuitOpen) as later:
                await host.call("alpha:flaky")
            assert later.value.retry_in_s == pytest.approx(20.0)

            clock.now += 20
            assert breaker.state == "half-open"
            controls.mode = "ok"
            assert (await host.call("alpha:flaky")).text == "ok"  # the one trial call
            assert breaker.state == "closed" and breaker.failures == 0
            assert controls.calls == 3


async def test_a_failed_trial_reopens_the_breaker() -> None:
    controls, clock = Controls(mode="crash"), FakeClock()
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", controls))], failure_threshold=2, cooldown_s=5.0, clock=clock
        ) as host:
            for _ in range(2):
                with pytest.raises(ServerFailed):
                    await host.call("alpha:flaky")
            clock.now += 5
            assert host.breaker("alpha").state == "half-open"
            with pytest.raises(ServerFailed):
                await host.call("alpha:flaky")  # one failure in half-open is enough
            assert host.breaker("alpha").state == "open"
            with pytest.raises(CircuitOpen) as caught:
                await host.call("alpha:flaky")
            assert caught.value.retry_at == clock.now + 5.0


async def test_half_open_lets_one_call_through_at_a_time() -> None:
    controls, clock = Controls(mode="crash"), FakeClock()
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", controls))], failure_threshold=1, cooldown_s=5.0, clock=clock
        ) as host:
            with pytest.raises(ServerFailed):
                await host.call("alpha:flaky")
            clock.now += 5
            controls.mode = "hang"
            answers: list[str] = []

            async def trial() -> None:
                answers.append((await host.call("alpha:flaky")).text)

            async with anyio.create_task_group() as tg:
                tg.start_soon(trial)
                await controls.hanging.wait()  # the trial has reached the server
                with pytest.raises(CircuitOpen, match="a trial call is in flight"):
                    await host.call("alpha:echo", {"text": "x"})
                controls.mode = "ok"
                controls.release.set()
            assert answers == ["ok"] and host.breaker("alpha").state == "closed"


async def test_timeouts_count_and_domain_errors_do_not() -> None:
    controls, clock = Controls(mode="domain"), FakeClock()
    with anyio.fail_after(20):
        async with Coordinator(
            [Attached("alpha", fake_server("alpha", controls))], failure_threshold=2, cooldown_s=5.0, clock=clock
        ) as host:
            for _ in range(4):  # a proper answer: the server explained a domain error
                result = await host.call("alpha:flaky")
                assert result.is_error and "no such ship" in result.text
            assert host.breaker("alpha").state == "closed" and host.breaker("alpha").failures == 0
            controls.mode = "hang"
            with pytest.raises(CallTimeout):
                await host.call("alpha:flaky", timeout_s=0.02)
            controls.mode = "domain"
            await host.call("alpha:flaky")  # an answer resets the count of consecutive failures
            controls.mode = "hang"
            for _ in range(2):
                with pytest.raises(CallTimeout):
                    await host.call("alpha:flaky", timeout_s=0.02)
            assert host.breaker("alpha").state == "open"
            controls.release.set()


async def test_a_server_that_dies_mid_call_opens_its_breaker(bare_script: Path) -> None:
    clock = FakeClock()
    spec = ServerSpec("bare", sys.executable, (str(bare_script),))
    other = Controls()
    with anyio.fail_after(60):
        async with Coordinator(
            [spec, Attached("alpha", fake_server("alpha", other))], failure_threshold=2, cooldown_s=60.0, clock=clock
        ) as host:
            with pytest.raises(ServerFailed, match="bare") as died:
                await host.call("bare:die", timeout_s=20)
            assert died.value.server == "bare"
            with pytest.raises(ServerFailed):
                await host.call("bare:count", {"convoy": "a"}, timeout_s=20)
            with pytest.raises(CircuitOpen, match="'bare'"):
                await host.call("bare:count", {"convoy": "a"})
            # the other server is not affected
            assert (await host.call("alpha:echo", {"text": "still here"})).text == "still here"


# -- start and stop --------------------------------------------------------------------------


async def test_a_server_that_cannot_start(tmp_path: Path) -> None:
    missing = ServerSpec("ghost", str(tmp_path / "no such server"))
    with anyio.fail_after(30), pytest.raises(ServerFailed, match="server 'ghost' could not start") as caught:
        async with Coordinator([missing, Attached("alpha", fake_server("alpha", Controls()))]):
            pass
    assert caught.value.server == "ghost"
    with anyio.fail_after(30):
        async with Coordinator([missing, Attached("alpha", fake_server("alpha", Controls()))], strict=False) as host:
            assert host.servers == ["alpha"] and list(host.failed) == ["ghost"]


async def test_a_server_that_never_answers_its_handshake() -> None:
    silent = ServerSpec("silent", sys.executable, ("-c", "import sys; sys.stdin.read()"))
    with anyio.fail_after(30), pytest.raises(ServerFailed, match=r"did not answer its handshake .* within 0\.5 s"):
        async with Coordinator([silent], startup_timeout_s=0.5):
            pass


async def test_an_error_in_the_body_propagates_as_itself() -> None:
    with anyio.fail_after(20), pytest.raises(UnknownTool):
        async with Coordinator([Attached("alpha", fake_server("alpha", Controls()))]) as host:
            await host.call("alpha:nope")
    with anyio.fail_after(20), pytest.raises(RuntimeError, match="entered once"):
        coordinator = Coordinator([Attached("alpha", fake_server("alpha", Controls()))])
        async with coordinator, coordinator:
            pass
