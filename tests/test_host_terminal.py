"""``llmem-host`` as a terminal program, run for real: the page's address is the first line on
stderr, plainly, and stdout stays empty; then what it runs (the stand-in named as such, no "no
model" warning), the log as human lines (``--log-format text``, the default on a terminal) or JSON
lines; a server that could not start is reported after the address with its last stderr lines;
Ctrl+C stops it cleanly."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import console_script, subprocess_env
from tests.host_harness import running_host

pytestmark = pytest.mark.slow

BROKEN = "import sys; print('broken: no such plot folder /data/plots', file=sys.stderr); sys.exit(4)"


def config(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "plots"
    ws.mkdir()
    path = tmp_path / "mcp.json"
    servers = {
        "debrief-state": {
            "command": console_script("debrief-state-mcp"),
            "args": ["--workspace", "${workspaceFolder}"],
        },
        "broken": {"command": sys.executable, "args": ["-c", BROKEN]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path, ws


def wait_for(host: object, text: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not any(text in line for line in host.stderr):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, f"{text!r} never came:\n" + "".join(host.stderr)  # type: ignore[attr-defined]
        time.sleep(0.05)


def test_the_address_first_then_human_lines_and_a_clean_stop(tmp_path: Path) -> None:
    cfg, ws = config(tmp_path)
    with running_host(cfg, ws, "--provider", "stand-in", "--log-format", "text") as host:
        wait_for(host, "Ctrl+C stops it.")
        wait_for(host, "hint:")
        host.proc.send_signal(signal.SIGINT)
        assert host.proc.wait(timeout=30) == 0
        wait_for(host, "llmem-host: stopped.")
    lines = [line.rstrip("\n") for line in host.stderr]
    assert lines[0] == f"llmem-host: chat at {host.url}"
    assert lines[1].startswith("  model    the deterministic stand-in: a script that plays a few requests through")
    assert lines[2] == "  servers  debrief-state (18 tools)"
    assert lines[3] == "  not running: broken (failed): why, below"
    assert f"  files    attached on the page are saved in {ws.resolve()}" in lines
    assert not any("no model" in line.lower() for line in lines)  # the stand-in is named, not warned about
    assert not any(line.lstrip().startswith("{") for line in lines)  # human lines, no JSON
    assert not any("Traceback" in line or "Uvicorn running" in line for line in lines)
    # the server that could not start: after the address, with its last words and a hint
    failed = next(i for i, line in enumerate(lines) if "server 'broken' could not start" in line)
    assert failed > lines.index("  Ctrl+C stops it.")
    assert any(line.endswith("| broken: no such plot folder /data/plots") for line in lines[failed:])
    assert lines[-1] == "llmem-host: stopped."


def test_json_lines_after_the_plain_address(tmp_path: Path) -> None:
    cfg, ws = config(tmp_path)
    with running_host(cfg, ws, "--provider", "stand-in") as host:  # stderr is a pipe: JSON lines
        wait_for(host, '"serving"')
    lines = [line.rstrip("\n") for line in host.stderr]
    assert lines[0] == f"llmem-host: chat at {host.url}"
    records = [json.loads(line) for line in lines[1:] if line.strip()]  # every other line is JSON
    serving = next(r for r in records if r["msg"] == "serving")
    assert serving["url"] == host.url and serving["servers"] == ["debrief-state"]
    assert serving["models"] == ["deterministic stand-in · not a model"]
    broken = next(r for r in records if r["level"] == "error")
    assert "server 'broken' could not start" in broken["msg"] and "no such plot folder" in broken["msg"]
    assert not any(r["level"] == "warning" and "stand-in" in r["msg"] for r in records)


def test_a_port_in_use_is_said_plainly_with_a_free_one_offered(tmp_path: Path) -> None:
    """Another program holds the port: llmem-host says so before starting any server, names a
    port that is free now (this test binds it to check) and --port 0, and stops with status 1."""
    cfg, ws = config(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [console_script("llmem-host"), "--config", str(cfg), "--workspace", str(ws), "--port", str(port)]
        done = subprocess.run(
            [*command, "--provider", "stand-in"], capture_output=True, text=True, timeout=60, env=subprocess_env()
        )
    assert done.returncode == 1 and done.stdout == ""
    said = done.stderr.strip().splitlines()
    assert said[-1].startswith(f"Error: port {port} on 127.0.0.1 is in use (another llmem-host, or another program)")
    assert "--port 0 for any free one" in said[-1] and "Traceback" not in done.stderr
    assert not any("debrief-state" in line for line in said)  # no server was started for nothing
    offered = re.search(r"--port (\d+) \(free now\)", said[-1])
    assert offered is not None and int(offered.group(1)) != port
    with socket.socket() as free:
        free.bind(("127.0.0.1", int(offered.group(1))))  # it was free: it binds
