"""Every shell command of the README and the docs runs as written, in a copy of this checkout.

The fenced ``bash``/``sh``/``console`` blocks (and ``python`` ones) of ``README.md`` and of every
page of ``docs/`` are run in order, as a newcomer pastes them, in one workspace made for it: the
checkout's files (``git ls-files``) copied into ``tmp_path``, where the README's install makes
its own ``.venv`` (a real ``pip install .``: the light install must be enough for what follows).
Each block runs as one bash script in that folder, the workspace's ``.venv/bin`` first on
``PATH`` (as after ``. .venv/bin/activate``), user folders and the Inspector's files in
``tmp_path``. An HTML comment on the line before a block says what it is when it cannot simply run:

- ``<!-- needs: REASON -->``: it needs what CI has not (a provider's key, another program);
  not run, but listed and counted here (:data:`NOT_RUN`), so none is marked so by accident;
- ``<!-- ci-runs: .ci/run -->``: CI runs these very lines (each must be a line of ``.ci/run``);
- ``<!-- serves: /health -->``: its last command serves until stopped: it is started, its address
  read from what it prints, ``/health`` fetched there, and stopped with Ctrl+C (SIGINT).

A block that appears twice (the README's install and the install page's) runs once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

_FENCE = re.compile(r"^```(bash|sh|console|python)\s*$")
_MARK = re.compile(r"^<!-- (needs|ci-runs|serves): (.+?) -->$")
_URL = re.compile(r"http://(?:127\.0\.0\.1|localhost|\[::1\]):(\d+)")

#: The blocks not run in CI, by the reason their page gives: adding one means saying so here.
NOT_RUN = Counter(
    {
        "the repository on GitHub (the commands' test works in a copy of this checkout)": 1,
        "Claude Code (the claude command)": 2,
        "VS Code (the code command)": 1,
        "Ollama, running, with the model pulled": 2,
        "a provider's API key": 2,
        "uv's cache or the package index (uvx builds the package on its first run)": 1,
        "the developer install, npm and root for apt-get (.ci/run does the same)": 1,
        "the developer install (the test tools); tests/test_quality.py runs the same checks": 1,
        "many minutes of both cores (benchmarks/README.md quotes the figures)": 1,
        "the docs extra (tests/test_docs_site.py builds the site)": 1,
    }
)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    text: str
    mark: str | None = None  # needs / ci-runs / serves
    why: str = ""

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Outcome:
    ran: bool
    ok: bool
    said: str = ""
    health: dict[str, Any] = field(default_factory=dict)


def pages() -> list[str]:
    """The README, then the site's pages in the order of its navigation."""

    def walk(items: Any) -> Iterator[str]:
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                yield from walk(value) if isinstance(value, list) else [f"docs/{value}"]

    return ["README.md", *walk(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])]


def blocks() -> list[Block]:
    out: list[Block] = []
    for page in pages():
        lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            fence = _FENCE.match(lines[i])
            if not fence:
                i += 1
                continue
            end = lines.index("```", i + 1)
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            mark = _MARK.match(before.strip())
            text = "\n".join(lines[i + 1 : end])
            if fence.group(1) == "console":  # "$ command" lines; the rest is output
                text = "\n".join(line[2:] for line in text.splitlines() if line.startswith("$ "))
            out.append(Block(page, i + 1, fence.group(1), text, *(mark.groups() if mark else (None, ""))))
            i = end + 1
    return out


BLOCKS = blocks()


def _workspace(base: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the checkout's files, and the environment its commands run in."""
    ws = base / "llmem-debrief-mcp"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, ws / name)
    clients = ROOT / "tests" / "js" / "node_modules"
    if clients.is_dir():  # the pinned Inspector, where npx finds it first
        (ws / "node_modules").symlink_to(clients, target_is_directory=True)
    user = base / "user"
    here = os.environ.get("VIRTUAL_ENV")
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if not here or not p.startswith(here)]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("LLMEM_", "PYTEST", "VIRTUAL_ENV"))},
        "PATH": os.pathsep.join([str(ws / ".venv" / "bin"), *path]),
        "VIRTUAL_ENV": str(ws / ".venv"),
        "LLMEM_DATA_DIR": str(user / "data"),
        "LLMEM_LOG_DIR": str(user / "logs"),
        "LLMEM_HOST_PORT": "0",  # the host's address as printed: any free port on a shared machine
        "MCP_CATALOG_PATH": str(user / "inspector" / "mcp.json"),
        "MCP_CLIENT_CONFIG_PATH": str(user / "inspector" / "client.json"),
        "MCP_STORAGE_DIR": str(user / "inspector" / "storage"),
        "MCP_INSPECTOR_OAUTH_STATE_PATH": str(user / "inspector" / "oauth.json"),
        "NO_COLOR": "1",
        "NO_MKDOCS_2_WARNING": "1",
    }
    return ws, env


def _run(block: Block, ws: Path, env: dict[str, str]) -> Outcome:
    argv = ["python", "-"] if block.lang == "python" else ["bash", "-e", "-o", "pipefail", "-s"]
    timeout = 1200 if "pip install" in block.text else 600
    done = subprocess.run(
        argv, input=block.text, cwd=ws, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    said = f"$ {block.text}\n--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    return Outcome(True, done.returncode == 0, said)


def _serve(block: Block, ws: Path, env: dict[str, str]) -> Outcome:
    """All but the last command, then the last one started, asked for /health, and stopped."""
    *first, last = block.text.splitlines()
    if first:
        before = _run(Block(block.page, block.line, "bash", "\n".join(first)), ws, env)
        if not before.ok:
            return before
    process = subprocess.Popen(
        ["bash", "-c", f"exec {last}"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    health: dict[str, Any] = {}
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 240
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            found = _URL.search(line)
            if found and found.group(1) != "0":
                url = f"http://127.0.0.1:{found.group(1)}/health"
        if url is not None:
            for _ in range(50):
                try:
                    with urllib.request.urlopen(url, timeout=10) as answer:
                        health = json.loads(answer.read())
                    break
                except OSError:
                    time.sleep(0.2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)  # Ctrl+C, as a person stops it
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
    said = f"$ {block.text}\n--- output\n{''.join(seen)[-4000:]}\n--- /health\n{json.dumps(health)[:2000]}"
    return Outcome(True, health.get("status") == "ok", said, health)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every block's outcome, the blocks run in order in one workspace, each distinct one once."""
    ws, env = _workspace(tmp_path_factory.mktemp("newcomer"))
    js_clients = (ROOT / "tests" / "js" / "node_modules").is_dir() and shutil.which("npx")
    out: dict[str, Outcome] = {}
    done: dict[str, Outcome] = {}
    for block in BLOCKS:
        if block.mark in ("needs", "ci-runs"):
            continue
        if block.text in done:
            out[block.name] = done[block.text]
            continue
        if block.text.startswith("npx ") and not js_clients:
            out[block.name] = Outcome(False, False, "the JS clients are not installed: npm ci --prefix tests/js")
            continue
        done[block.text] = out[block.name] = _serve(block, ws, env) if block.mark == "serves" else _run(block, ws, env)
    return out


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark not in ("needs", "ci-runs")], ids=lambda b: b.name)
def test_the_command_runs_as_written(block: Block, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[block.name]
    if not outcome.ran:
        pytest.skip(outcome.said)
    assert outcome.ok, outcome.said


def test_the_shipped_config_serves_all_three_servers(outcomes: dict[str, Outcome]) -> None:
    """The README's chat page on ``mcp_config.example.json`` as shipped: every server running with
    its tools, and the prompt the README states (about N tokens) within a quarter of the real one."""
    block = next(b for b in BLOCKS if b.page == "README.md" and b.mark == "serves")
    assert "--config mcp_config.example.json" in block.text
    health = outcomes[block.name].health
    states = {s["name"]: (s["state"], s["tools"]) for s in health.get("serverStates", [])}
    assert set(states) == {"llmem", "debrief-calc", "debrief-state"}, health
    assert all(state == "running" and tools > 0 for state, tools in states.values()), states
    stated = re.search(r"about ([\d,]+) tokens", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert stated is not None
    claimed = int(stated.group(1).replace(",", ""))
    assert abs(claimed - health["promptTokens"]) <= health["promptTokens"] / 4, (claimed, health["promptTokens"])


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.mark == "ci-runs"], ids=lambda b: b.name)
def test_what_ci_runs_is_what_the_page_says(block: Block) -> None:
    ci = {line.strip() for line in (ROOT / block.why).read_text(encoding="utf-8").splitlines()}
    for line in block.text.splitlines():
        assert line.strip() in ci, f"{block.name}: {line!r} is not a line of {block.why}"


def test_the_commands_not_run_are_listed_and_counted() -> None:
    marked = Counter(b.why for b in BLOCKS if b.mark == "needs")
    assert marked == NOT_RUN, (
        f"blocks marked <!-- needs: … --> changed: {dict(marked - NOT_RUN)} added, {dict(NOT_RUN - marked)} gone"
    )
    assert all(b.mark in (None, "needs", "ci-runs", "serves") for b in BLOCKS)
    assert sum(1 for b in BLOCKS if b.mark is None) >= 8  # most of them run
