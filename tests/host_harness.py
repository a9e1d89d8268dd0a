"""Start the real ``llmem-host`` command for a test: three real servers on a workspace of real
REP files, a plot and a little code, and a loopback fake model server speaking OpenAI's API."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import DATA, console_script, subprocess_env

KEY = "sk-fake-0123456789-never-shown-to-the-page"


def make_workspace(root: Path) -> Path:
    ws = root / "plots and code"
    ws.mkdir()
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, ws / name)
    shutil.copy(DATA / "plots" / "sample.plot.json", ws / "sample.plot.json")
    (ws / "app.py").write_text(
        'def speed_kn(metres: float, seconds: float) -> float:\n    """Knots from metres and seconds."""\n'
        "    return metres / seconds * 1.943844\n"
    )
    return ws


def two_ships(root: Path) -> Path:
    """A workspace of the two sample ships' REP files alone (the README's "try it"), in ``root``."""
    ws = root / "plots"
    ws.mkdir()
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        shutil.copy(DATA / "rep" / name, ws / name)
    return ws


def write_config(ws: Path, path: Path, **extra: dict[str, object]) -> Path:
    servers = {
        name: {"command": console_script(script), "args": ["--workspace", "${workspaceFolder}"], **extra.get(name, {})}
        for name, script in (
            ("debrief-calc", "debrief-calc-mcp"),
            ("debrief-state", "debrief-state-mcp"),
            ("llmem", "llmem-mcp"),
        )
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


class HostProcess:
    def __init__(self, proc: subprocess.Popen[str], url: str, first: list[str], workspace: Path) -> None:
        self.proc, self.url, self.workspace = proc, url, workspace
        self.stderr: list[str] = list(first)  # the lines read before, then each as it comes
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "ws"


@contextmanager
def running_host(config: Path, ws: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[HostProcess]:
    """``llmem-host --config … --port 0 …``; yields once it prints where it serves."""
    command = [console_script("llmem-host"), "--config", str(config), "--workspace", str(ws), "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--env-file", str(ws / "no.env"), *args],
        env=subprocess_env(**(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    # the first line on stderr is the page's address, plainly, whatever comes after it
    first = proc.stderr.readline()
    found = re.fullmatch(r"llmem-host: chat at (http://\S+/)\n", first)
    if found is None:
        proc.kill()
        raise AssertionError("llmem-host did not start:\n" + first + proc.stderr.read())
    seen = [first]
    url = found.group(1)
    host = HostProcess(proc, url, seen, ws)
    try:
        yield host
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        assert proc.stdout is not None
        assert proc.stdout.read() == ""  # nothing on stdout, ever


@contextmanager
def stand_in_host(root: Path, *args: str) -> Iterator[HostProcess]:
    """``llmem-host`` with the stand-in and the three real servers on :func:`two_ships`, with a
    rate limit a test's quick turns stay under."""
    ws = two_ships(root)
    config = write_config(ws, root / "mcp.json")
    with running_host(config, ws, "--provider", "stand-in", "--rate", "50", "--burst", "50", *args) as process:
        yield process
