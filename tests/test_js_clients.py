"""The three console scripts as two real non-Python clients drive them over stdio.

* The MCP Inspector's CLI (``npx @modelcontextprotocol/inspector --cli ... --method tools/list|tools/call``):
  tools/list in its default (legacy) protocol era, tools/call in both the legacy and the modern era.
* The TypeScript SDK's ``Client`` + ``StdioClientTransport`` (``tests/js/client.mjs``).

Both come pinned from ``tests/js/package.json`` / ``package-lock.json``. Install them before pytest with::

    npm ci --prefix tests/js --ignore-scripts --no-audit --no-fund

If ``tests/js/node_modules`` is missing (or holds other versions) this module runs that once itself; it never
downloads when the pinned versions are already installed. It skips only when node, npm or npx is missing, or
when the install fails because the registry cannot be reached.

Every client runs once, concurrently, in a module fixture; the tests then read its output. Each run gets its own
workspace, with a space and a non-ASCII letter in its path, and its own log and data folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from tests.conftest import DATA, ROOT, console_script, subprocess_env

pytestmark = pytest.mark.slow

JS = ROOT / "tests" / "js"
CLIENT = JS / "client.mjs"
PINNED: dict[str, str] = json.loads((JS / "package.json").read_text(encoding="utf-8"))["devDependencies"]
INSTALL = ["npm", "ci", "--prefix", str(JS), "--ignore-scripts", "--no-audit", "--no-fund"]
INSTALL_TIMEOUT = 600
RUN_TIMEOUT = 120  # one client process: spawn the server, initialize, list, call, close
REQUEST_TIMEOUT_MS = 60_000
NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT"
    r"|network request|request to \S+ failed|FetchError|getaddrinfo|socket hang up|\bE50[234]\b",
    re.IGNORECASE,
)
ERAS = ["legacy", "modern"]
SAMPLE = "sample.plot.json"

LLMEM_TOOLS = {
    "generate_artifact",
    "list_artifacts",
    "get_artifact",
    "generate_prompt",
    "store_llm_result",
    "delete_artifact",
}
CALC_TOOLS = {"list_tools", "describe_tool", "run_tool", "generate_prompt", "store_llm_result"}
STATE_TOOLS = {
    "debrief_list_plots",
    "debrief_open_plot",
    "debrief_close_plot",
    "debrief_get_features",
    "debrief_get_selection",
    "debrief_set_selection",
    "debrief_get_time",
    "debrief_set_time",
    "debrief_get_viewport",
    "debrief_set_viewport",
    "debrief_zoom_to_selection",
    "debrief_apply_command",
    "debrief_render_plot",
    "debrief_undo",
    "generate_prompt",
    "store_llm_result",
}


@dataclass(frozen=True)
class Server:
    script: str
    tools: set[str]
    call: tuple[str, dict[str, str]]  # a real call, with string arguments the Inspector's key=value can carry
    failing_call: tuple[str, dict[str, str], str]  # a call the tool refuses (isError), and its error code


SERVERS = {
    "llmem": Server(
        "llmem-mcp",
        LLMEM_TOOLS,
        ("generate_artifact", {"path": "."}),
        ("get_artifact", {"path": "src/missing.py"}, "ARTIFACT_NOT_FOUND"),
    ),
    "calc": Server(
        "debrief-calc-mcp",
        CALC_TOOLS,
        ("describe_tool", {"name": "track-stats"}),
        ("describe_tool", {"name": "no-such-analysis"}, "TOOL_NOT_FOUND"),
    ),
    "state": Server(
        "debrief-state-mcp",
        STATE_TOOLS,
        ("debrief_list_plots", {}),
        ("debrief_get_time", {"filename": "missing.plot.json"}, "PLOT_NOT_FOUND"),
    ),
}

# Annotations each server is known to declare, as a real client must see them.
ANNOTATIONS = {
    "llmem": {
        "get_artifact": {"readOnlyHint": True},
        "generate_artifact": {"readOnlyHint": False, "idempotentHint": True},
        "delete_artifact": {"readOnlyHint": False, "destructiveHint": True},
    },
    "calc": {"describe_tool": {"readOnlyHint": True}, "store_llm_result": {"readOnlyHint": False}},
    "state": {
        "debrief_list_plots": {"readOnlyHint": True},
        "debrief_apply_command": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
    },
}

# TS SDK 1.32.2's Client.callTool and the Inspector 2.12 CLI check structuredContent against the tool's
# outputSchema even on isError results (typescript-sdk issue #1943), so every server's output schemas must admit
# its error answers: these tests prove a refusal reaches both clients as a tool error, not a schema mismatch.


# ---------------------------------------------------------------- installing the clients


def _installed() -> bool:
    for name, version in PINNED.items():
        manifest = JS / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text(encoding="utf-8")).get("version") != version:
            return False
    return True


@pytest.fixture(scope="module")
def js_clients() -> Path:
    """tests/js/node_modules with the pinned clients: used as is, or installed once with ``npm ci``."""
    for tool in ("node", "npm", "npx"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH: the Inspector CLI and TypeScript SDK client tests need Node.js")
    if _installed():
        return JS
    key = hashlib.sha256(str(JS).encode()).hexdigest()[:12]
    with FileLock(Path(tempfile.gettempdir()) / f"llmem-js-clients-{key}.lock", timeout=INSTALL_TIMEOUT + 60):
        if _installed():  # another session installed them while this one waited
            return JS
        try:
            proc = bounded([*INSTALL, "--fetch-timeout=60000", "--fetch-retries=1"], timeout=INSTALL_TIMEOUT, cwd=ROOT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{' '.join(INSTALL)} did not finish in {INSTALL_TIMEOUT}s")
        output = f"{proc.stdout}\n{proc.stderr}"
        if proc.returncode != 0:
            if NETWORK_ERRORS.search(output):
                lines = [line.strip() for line in output.splitlines() if NETWORK_ERRORS.search(line)]
                pytest.skip(
                    f"the npm registry could not be reached to install the JS clients ({' '.join(INSTALL)}): "
                    + " | ".join(lines[:3])
                )
            pytest.fail(f"{' '.join(INSTALL)} failed (exit {proc.returncode}):\n{output[-4000:]}")
    assert _installed(), f"{' '.join(INSTALL)} succeeded but {sorted(PINNED)} are not installed at {PINNED}"
    return JS


# ---------------------------------------------------------------- running the clients


@dataclass(frozen=True)
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    browser_opened: str  # what a browser launcher was asked to open: "" when nothing was
    seconds: float

    def describe(self) -> str:
        return f"argv={self.argv}\nexit={self.returncode} after {self.seconds:.1f}s\nstdout={self.stdout[-3000:]}\nstderr={self.stderr[-3000:]}"


def last_json(text: str, key: str) -> dict[str, Any] | None:
    """The last JSON object in ``text`` (whole, or on a line of its own) that has ``key``: robust to banners and logs."""
    candidates = [text.strip()] + [line.strip() for line in reversed(text.splitlines())]
    for candidate in candidates:
        if not candidate.startswith("{"):
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and key in value:
            return value
    return None


def make_workspace(base: Path, server: str) -> Path:
    ws = base / "client workspace ü"
    ws.mkdir(parents=True)
    if server == "llmem":
        (ws / "src").mkdir()
        (ws / "src" / "app.py").write_text(
            '"""The app."""\n\n\nclass Greeter:\n    def hello(self, name: str) -> str:\n        return f"hi {name}"\n',
            encoding="utf-8",
        )
    elif server == "state":
        shutil.copy(DATA / "plots" / SAMPLE, ws / SAMPLE)
    return ws.resolve()


def bounded(argv: list[str], *, timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run argv in its own process group; on timeout kill the whole group (npx, node, the server) and re-raise."""
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, **kwargs
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(argv, timeout, out, err) from exc
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run(argv: list[str], *, cwd: Path, env: dict[str, str], marker: Path) -> Run:
    start = time.monotonic()
    try:
        proc = bounded(argv, timeout=RUN_TIMEOUT, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as err:
        stderr = f"{err.stderr or ''}\n[timed out after {RUN_TIMEOUT}s; process group killed]"
        return Run(argv, -1, str(err.stdout or ""), stderr, "", time.monotonic() - start)
    opened = marker.read_text(encoding="utf-8") if marker.exists() else ""
    return Run(argv, proc.returncode, proc.stdout, proc.stderr, opened, time.monotonic() - start)


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention text (Linux /proc; [] elsewhere)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(text in a for a in args):
            found.append(" ".join(args).strip())
    return found


ArgvOf = Callable[[str, Path, dict[str, str]], list[str]]  # (server script, workspace, user folders) -> argv


@dataclass(frozen=True)
class Job:
    key: tuple[str, ...]
    server: str
    argv_of: ArgvOf


def inspector_argv(era: str, method: str, call: tuple[str, dict[str, str]] | None) -> ArgvOf:
    def argv(script: str, ws: Path, dirs: dict[str, str]) -> list[str]:
        extra: list[str] = []
        if call is not None:
            name, arguments = call
            extra = ["--tool-name", name]
            if arguments:
                extra += ["--tool-arg", *(f"{k}={v}" for k, v in arguments.items())]
        env = [x for k, v in dirs.items() for x in ("-e", f"{k}={v}")]  # the Inspector passes only a safe env on
        return [
            "npx", "--no-install", "@modelcontextprotocol/inspector", "--cli",
            *env, "--format", "json", "--protocol-era", era, "--connect-timeout", str(REQUEST_TIMEOUT_MS),
            "--method", method, *extra,
            "--", script, "--workspace", str(ws),
        ]  # fmt: skip

    return argv


def ts_argv(calls: list[tuple[str, dict[str, str]]]) -> ArgvOf:
    def argv(script: str, ws: Path, dirs: dict[str, str]) -> list[str]:
        out = ["node", str(CLIENT), script, "--workspace", str(ws)]
        for name, arguments in calls:
            out += ["--tool", name, "--args", json.dumps(arguments)]
        return [*out, "--timeout-ms", str(REQUEST_TIMEOUT_MS)]

    return argv


def jobs() -> Iterator[Job]:
    for server, spec in SERVERS.items():
        name, arguments, _ = spec.failing_call
        # tools/list in the Inspector's default era; tools/call in both (the Inspector lists the tools before it calls)
        yield Job(("inspector", server, "legacy", "list"), server, inspector_argv("legacy", "tools/list", None))
        for era in ERAS:
            yield Job(("inspector", server, era, "call"), server, inspector_argv(era, "tools/call", spec.call))
        yield Job(
            ("inspector", server, "legacy", "error"), server, inspector_argv("legacy", "tools/call", (name, arguments))
        )
        calls = [spec.call, ("no_such_tool", {"x": "1"}), (name, arguments)]
        yield Job(("ts", server), server, ts_argv(calls))


@dataclass(frozen=True)
class Runs:
    by_key: dict[tuple[str, ...], Run]
    leftovers: list[str]  # processes still running from these runs after every client had exited

    def __getitem__(self, key: tuple[str, ...]) -> Run:
        return self.by_key[key]


@pytest.fixture(scope="module")
def runs(js_clients: Path, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every client run of this module, at most a few at once, each with its own workspace and user folders."""
    base = tmp_path_factory.mktemp("js clients")
    browser = base / "fake browser"
    browser.mkdir()
    for launcher in ("xdg-open", "open", "sensible-browser", "x-www-browser", "www-browser", "gio", "wslview"):
        path = browser / launcher
        path.write_text('#!/bin/sh\necho "$0 $*" >> "$BROWSER_MARKER"\n', encoding="utf-8")
        path.chmod(0o755)

    scripts = {server: console_script(spec.script) for server, spec in SERVERS.items()}  # may skip: not in a thread

    def one(index: int, job: Job) -> tuple[tuple[str, ...], Run]:
        home = base / f"run {index}"
        ws = make_workspace(home, job.server)
        dirs = {"LLMEM_DATA_DIR": str(home / "user data"), "LLMEM_LOG_DIR": str(home / "user logs")}
        marker = home / "browser-opened.txt"
        env = subprocess_env(
            **dirs,
            PATH=f"{browser}{os.pathsep}{os.environ.get('PATH', '')}",
            BROWSER=str(browser / "xdg-open"),
            BROWSER_MARKER=str(marker),
            NO_COLOR="1",
            # The Inspector's own files (catalog, client config, OAuth and secrets stores) stay out of $HOME.
            MCP_CATALOG_PATH=str(home / "inspector" / "mcp.json"),
            MCP_CLIENT_CONFIG_PATH=str(home / "inspector" / "client.json"),
            MCP_STORAGE_DIR=str(home / "inspector" / "storage"),
            MCP_INSPECTOR_OAUTH_STATE_PATH=str(home / "inspector" / "oauth.json"),
        )
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        argv = job.argv_of(scripts[job.server], ws, dirs)
        return job.key, run(argv, cwd=JS, env=env, marker=marker)

    with ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2))) as pool:
        by_key = dict(pool.map(lambda pair: one(*pair), enumerate(jobs())))
    deadline = time.monotonic() + 10  # a server may take a moment to exit once its client closed stdin
    while (leftovers := processes_mentioning(str(base))) and time.monotonic() < deadline:
        time.sleep(0.2)
    return Runs(by_key, leftovers)


def inspector_result(r: Run) -> dict[str, Any]:
    assert r.returncode == 0, r.describe()
    out = last_json(r.stdout, "result")
    assert out is not None, f"no JSON result on the Inspector's stdout\n{r.describe()}"
    return out["result"]


def ts_output(r: Run) -> dict[str, Any]:
    assert r.returncode == 0, r.describe()
    out = last_json(r.stdout, "tools")
    assert out is not None, f"no JSON object on client.mjs's stdout\n{r.describe()}"
    return out


def check_call(server: str, result: dict[str, Any]) -> None:
    """The expected content of each server's real call, as either client delivers it."""
    assert result.get("isError") is False, result
    structured = result["structuredContent"]
    text = [c["text"] for c in result["content"] if c["type"] == "text"]
    assert text, result
    assert json.loads(text[0]) == structured  # the text block mirrors the structured result
    if server == "llmem":
        assert structured["status"] == "success"
        assert structured["data"]["parsed"] == 1
        assert structured["data"]["failed"] == 0
        assert structured["data"]["complete"] is True
    elif server == "calc":
        assert structured["name"] == "track-stats"
        assert structured["input_kinds"] == ["track"]
        assert {"distance_unit", "include_segments"} <= {p["name"] for p in structured["parameters"]}
    else:
        assert structured["success"] is True
        assert structured["other_plots"] + [p["filename"] for p in structured["open_plots"]] == [SAMPLE]


# ---------------------------------------------------------------- the Inspector CLI


@pytest.mark.parametrize("server", SERVERS)
def test_inspector_lists_tools(runs: Runs, server: str) -> None:
    result = inspector_result(runs["inspector", server, "legacy", "list"])
    tools = {t["name"]: t for t in result["tools"]}
    assert set(tools) >= SERVERS[server].tools, sorted(SERVERS[server].tools - set(tools))
    for name, hints in ANNOTATIONS[server].items():
        assert tools[name]["outputSchema"]["type"] == "object", name
        assert {k: tools[name]["annotations"].get(k) for k in hints} == hints, name


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("server", SERVERS)
def test_inspector_calls_a_tool(runs: Runs, server: str, era: str) -> None:
    result = inspector_result(runs["inspector", server, era, "call"])
    check_call(server, result)
    if era == "modern":  # proof the modern era was really used: its results name their server
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == SERVERS[server].script


def test_inspector_cli_needs_no_browser(runs: Runs) -> None:
    inspector = {key: r for key, r in runs.by_key.items() if key[0] == "inspector"}
    assert inspector
    opened = {key: r.browser_opened for key, r in inspector.items() if r.browser_opened}
    assert not opened, opened


def test_every_server_exits_when_its_client_is_done(runs: Runs) -> None:
    assert not runs.leftovers, runs.leftovers


@pytest.mark.parametrize("server", SERVERS)
def test_inspector_sees_a_tool_error_as_an_error_result(runs: Runs, server: str) -> None:
    r = runs["inspector", server, "legacy", "error"]
    out = last_json(r.stdout, "result")
    assert out is not None, r.describe()
    assert r.returncode == 5, r.describe()  # the Inspector CLI's exit code for a delivered isError result
    assert out["result"]["isError"] is True
    assert out["result"]["structuredContent"]["error"]["code"] == SERVERS[server].failing_call[2]


# ---------------------------------------------------------------- the TypeScript SDK client


@pytest.mark.parametrize("server", SERVERS)
def test_ts_client_lists_tools_with_schemas_and_annotations(runs: Runs, server: str) -> None:
    out = ts_output(runs["ts", server])
    assert out["serverInfo"]["name"] == SERVERS[server].script
    assert out["protocolVersion"]
    assert "tools" in out["capabilities"]
    tools = {t["name"]: t for t in out["tools"]["tools"]}
    assert set(tools) >= SERVERS[server].tools, sorted(SERVERS[server].tools - set(tools))
    for name, tool in tools.items():
        assert tool["inputSchema"]["type"] == "object", name
        assert tool["outputSchema"]["type"] == "object", name
        assert isinstance(tool["annotations"].get("readOnlyHint"), bool), (name, tool.get("annotations"))
    for name, hints in ANNOTATIONS[server].items():
        assert {k: tools[name]["annotations"].get(k) for k in hints} == hints, name


@pytest.mark.parametrize("server", SERVERS)
def test_ts_client_calls_a_tool_and_gets_structured_content(runs: Runs, server: str) -> None:
    out = ts_output(runs["ts", server])
    call = out["calls"][0]
    assert call["tool"] == SERVERS[server].call[0]
    # The SDK has already checked structuredContent against the outputSchema it got from tools/list.
    assert "error" not in call, call
    check_call(server, call["result"])


@pytest.mark.parametrize("server", SERVERS)
def test_ts_client_gets_invalid_params_for_an_unknown_tool(runs: Runs, server: str) -> None:
    call = ts_output(runs["ts", server])["calls"][1]
    assert call["tool"] == "no_such_tool"
    assert "result" not in call, call
    assert call["error"]["code"] == -32602, call
    assert "no_such_tool" in call["error"]["message"]


@pytest.mark.parametrize("server", SERVERS)
def test_ts_client_sees_a_tool_error_as_an_error_result(runs: Runs, server: str) -> None:
    call = ts_output(runs["ts", server])["calls"][2]
    assert call["tool"] == SERVERS[server].failing_call[0]
    assert "error" not in call, call
    assert call["result"]["isError"] is True
    assert call["result"]["structuredContent"]["error"]["code"] == SERVERS[server].failing_call[2]
