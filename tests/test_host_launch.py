"""Servers that start, and say why when they do not: the environment the host passes a server
(certificates, proxies, uv's settings on top of the SDK's safe default; never a key), a server
that dies at start reported with its last stderr lines and a hint, one that dies later seen as
stopped. Real subprocesses over stdio, real failing commands."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from llmem.host import Coordinator, ServerFailed, ServerSpec
from llmem.host.launch import failure_report, server_environment

pytestmark = pytest.mark.anyio

ENV_SERVER = textwrap.dedent(
    '''
    """A server that tells its environment, says hello on stderr, and can die on request."""
    import os
    import sys

    import anyio
    from mcp.server.mcpserver import MCPServer

    srv = MCPServer("env")


    @srv.tool(description="The values of these environment variables (null when unset).")
    def environment(names: list[str]) -> dict[str, str | None]:
        return {name: os.environ.get(name) for name in names}


    @srv.tool(description="Write a last word on stderr and exit at once.")
    def die() -> str:
        print("env server: going down now", file=sys.stderr, flush=True)
        os._exit(3)


    print("env server: started", file=sys.stderr, flush=True)
    anyio.run(srv.run_stdio_async)
    '''
)

PASSED = {
    "SSL_CERT_FILE": "/etc/company/ca.pem",
    "SSL_CERT_DIR": "/etc/company/certs",
    "REQUESTS_CA_BUNDLE": "/etc/company/ca.pem",
    "HTTPS_PROXY": "http://proxy.example:3128",
    "NO_PROXY": "localhost,127.0.0.1",
    "UV_INDEX_URL": "https://pypi.example/simple",
    "UV_OFFLINE": "1",
    "LLMEM_MAX_ANSWER_CHARS": "30000",
}
KEPT_BACK = {
    "OPENAI_API_KEY": "sk-secret-never-passed",
    "LLMEM_HOST_API_KEY": "also-secret",
    "LLMEM_HOST_AUTH_TOKEN": "the-page-token",
    "LLMEM_TRANSPORT": "http",  # the host launches stdio servers
    "SOME_OTHER_SETTING": "not a server's business",
}


@pytest.fixture
def env_script(tmp_path: Path) -> Path:
    path = tmp_path / "env server.py"
    path.write_text(ENV_SERVER, encoding="utf-8")
    return path


def test_the_environment_a_server_gets() -> None:
    host = {"PATH": "/usr/bin", "HOME": "/home/analyst", "BASH_FUNC_x%%": "() { :; }", **PASSED, **KEPT_BACK}
    env = server_environment({"LLMEM_LOG_LEVEL": "debug", "HTTPS_PROXY": "http://the-configs-own:8080"}, host)
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/home/analyst"
    assert {k: env[k] for k in PASSED if k != "HTTPS_PROXY"} == {k: v for k, v in PASSED.items() if k != "HTTPS_PROXY"}
    assert env["HTTPS_PROXY"] == "http://the-configs-own:8080"  # the config's env wins
    assert env["LLMEM_LOG_LEVEL"] == "debug"
    assert not set(KEPT_BACK) & set(env) and "BASH_FUNC_x%%" not in env


async def test_a_launched_server_gets_certificates_proxies_and_uv_settings_but_no_key(
    env_script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**PASSED, **KEPT_BACK}.items():
        monkeypatch.setenv(name, value)
    spec = ServerSpec("env", sys.executable, (str(env_script),), env={"LLMEM_LOG_LEVEL": "debug"})
    with anyio.fail_after(60):
        async with Coordinator([spec]) as host:
            names = [*PASSED, *KEPT_BACK, "LLMEM_LOG_LEVEL", "PATH"]
            answer = (await host.call("env:environment", {"names": names})).structured
            seen = answer.get("result", answer)  # a dict's structured content, wrapped or not by the SDK
    assert {k: seen[k] for k in PASSED} == PASSED
    assert all(seen[k] is None for k in KEPT_BACK), seen
    assert seen["LLMEM_LOG_LEVEL"] == "debug" and seen["PATH"]


async def test_a_server_that_dies_at_start_is_reported_with_its_last_lines_and_a_hint(tmp_path: Path) -> None:
    failing = ServerSpec(
        "debrief-calc",
        sys.executable,
        (
            "-c",
            "import sys\n"
            "print('Resolved 12 packages', file=sys.stderr)\n"
            "print('error: Failed to fetch: `https://pypi.org/simple/llmem-debrief-mcp/`', file=sys.stderr)\n"
            "print('  Caused by: invalid peer certificate: UnknownIssuer', file=sys.stderr)\n"
            "sys.exit(2)",
        ),
    )
    with anyio.fail_after(60), pytest.raises(ServerFailed) as caught:
        async with Coordinator([failing]):
            pass
    report = str(caught.value)
    assert report.startswith("server 'debrief-calc' could not start: it ended before it answered")
    assert "    | error: Failed to fetch: `https://pypi.org/simple/llmem-debrief-mcp/`" in report
    assert "    |   Caused by: invalid peer certificate: UnknownIssuer" in report
    assert "hint: it could not verify a certificate: set SSL_CERT_FILE" in report


async def test_a_missing_command_says_spawn_enoent_and_asks_whether_it_is_installed(tmp_path: Path) -> None:
    missing = ServerSpec("llmem", "llmem-mcp-not-installed-here", ("--workspace", str(tmp_path)))
    with anyio.fail_after(60):
        async with Coordinator([missing], strict=False) as host:
            (state,) = host.states()
    assert state.state == "failed" and state.error is not None
    assert "spawn llmem-mcp-not-installed-here ENOENT" in state.error
    assert "is it installed in this venv" in state.error


async def test_uvx_failing_is_told_to_try_offline(tmp_path: Path) -> None:
    """A ``uvx`` that cannot reach its index: the real uvx, with an index nothing answers at."""
    uvx = Path(sys.executable).with_name("uvx")
    if not uvx.exists():
        pytest.skip("uvx is not installed in this venv")
    spec = ServerSpec(
        "llmem",
        str(uvx),
        ("--no-cache", "--from", "llmem-not-a-real-package-of-this-suite", "llmem-mcp"),
        env={"UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_HTTP_TIMEOUT": "3", "UV_PYTHON_DOWNLOADS": "never"},
    )
    with anyio.fail_after(90), pytest.raises(ServerFailed) as caught:
        async with Coordinator([spec], startup_timeout_s=60):
            pass
    report = str(caught.value)
    assert "its last lines on stderr" in report and "127.0.0.1:9" in report
    assert "uvx --offline" in report


async def test_a_server_that_dies_later_is_seen_stopped_with_its_last_words(env_script: Path) -> None:
    spec = ServerSpec("env", sys.executable, (str(env_script),))
    with anyio.fail_after(60):
        async with Coordinator([spec]) as host:
            assert [s.state for s in host.states()] == ["running"]
            with pytest.raises(ServerFailed):
                await host.call("env:die", {})
            while host.states()[0].state == "running":  # its stderr closes as it exits
                await anyio.sleep(0.05)
            (state,) = host.states()
    assert state.state == "stopped" and state.error is not None, state
    assert state.error.startswith("server 'env' stopped: its process ended")
    assert "    | env server: going down now" in state.error


def test_the_hints_of_a_failure_report() -> None:
    report = failure_report(
        "x", "tool", (), None, "it ended", ["Traceback …", "ModuleNotFoundError: No module named 'foo'"]
    )
    assert "a Python module is missing" in report
    report = failure_report("x", "tool", ("--flag",), None, "it ended", ["something odd"])
    assert "run it by hand to see it start: tool --flag" in report
    report = failure_report("x", "uvx", (), None, "it ended", ["error: Could not connect to proxy"])
    assert "HTTPS_PROXY" in report and "uvx --offline" in report
    report = failure_report("x", "/bin/tool", (), PermissionError(13, "Permission denied"), "denied", [])
    assert "not executable" in report and "wrote nothing" not in report
