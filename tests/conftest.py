"""Fixtures shared by the suite's tests: real folders, isolated user dirs, both protocol eras."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
BIN = Path(sys.executable).parent

MODES = ["legacy", "auto"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Logs and user-level stores go to temp folders, never to the developer's home."""
    base = tmp_path_factory.mktemp("userdirs")
    monkeypatch.setenv("LLMEM_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("LLMEM_LOG_DIR", str(base / "logs"))
    for name in ("LLMEM_WORKSPACE", "LLMEM_STORE", "LLMEM_TRANSPORT", "LLMEM_LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace whose path has a space and a non-ASCII letter in it, as users' do."""
    ws = tmp_path / "my project ü"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture(scope="module")
def parsed_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's ``llmem`` package, outlined once per test module into a store."""
    from llmem.code.artifacts import Llmem
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    ws = tmp_path_factory.mktemp("packagews")
    shutil.copytree(ROOT / "llmem", ws / "llmem", ignore=shutil.ignore_patterns("__pycache__"))
    Llmem(ArtifactStore(ws / ".llmem", ws), Limits()).parse(".")
    return ws


@pytest.fixture
def package_llmem(parsed_package: Path, tmp_path: Path) -> Any:
    """An ``Llmem`` on a copy of :func:`parsed_package` of this test's own (mtimes kept: nothing to parse)."""
    from llmem.code.artifacts import Llmem
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    ws = tmp_path / "ws"
    shutil.copytree(parsed_package, ws)
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits())


@pytest.fixture
def sample_project(workspace: Path) -> Path:
    """A small real-looking project: Python, TypeScript, a .gitignore'd folder, a node_modules."""
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(
        '"""The app."""\nimport os\nfrom typing import Any\n\nMAX_ITEMS = 3\n\n\n'
        "class Greeter:\n"
        '    """Says hello."""\n\n'
        "    def hello(self, name: str) -> str:\n"
        '        return f"hi {name}"\n\n\n'
        "def main(argv: list[str] | None = None) -> int:\n"
        "    return 0\n",
        encoding="utf-8",
    )
    (workspace / "src" / "util.ts").write_text(
        "import { readFile } from 'fs';\n\n"
        "/** Adds two numbers. */\n"
        "export function add(a: number, b: number): number {\n  return a + b;\n}\n\n"
        "export interface Shape {\n  area(): number;\n}\n\n"
        "export class Box implements Shape {\n  area(): number {\n    return 1;\n  }\n}\n",
        encoding="utf-8",
    )
    (workspace / ".gitignore").write_text("generated/\n*.log\n", encoding="utf-8")
    (workspace / "generated").mkdir()
    (workspace / "generated" / "big.py").write_text("X = 1\n", encoding="utf-8")
    (workspace / "debug.log").write_text("noise\n", encoding="utf-8")
    (workspace / "node_modules" / "lib").mkdir(parents=True)
    (workspace / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n", encoding="utf-8")
    return workspace


@pytest.fixture
def mcp_source(tmp_path: Path) -> Path:
    """A real codebase nobody here wrote: the installed ``mcp`` package, copied into the workspace."""
    import mcp

    ws = tmp_path / "third party"
    shutil.copytree(Path(mcp.__file__).parent, ws / "mcp", ignore=shutil.ignore_patterns("__pycache__"))
    return ws.resolve()


def console_script(name: str) -> str:
    path = BIN / name
    if not path.exists():  # pragma: no cover - an environment without the installed scripts
        pytest.skip(f"{name} is not installed next to {sys.executable}")
    return str(path)


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMEM_")}
    env.update({k: v for k, v in os.environ.items() if k in ("LLMEM_DATA_DIR", "LLMEM_LOG_DIR")})
    env.update(extra)
    return env


async def call(client: Any, tool_name: str, /, **args: Any) -> tuple[bool, dict[str, Any]]:
    """Call a tool; check what every answer of the suite promises; return (isError, structuredContent).

    The structured content is there, the first text block is the same JSON, the answer is within
    the default cap, and an error carries a stable upper-case code and a message.
    """
    result = await client.call_tool(tool_name, args)
    assert result.structured_content is not None, result
    first = result.content[0] if result.content else None
    if first is not None and getattr(first, "type", None) == "text":
        assert json.loads(first.text) == result.structured_content
        assert len(first.text) <= 20_000
    if result.is_error:
        error = result.structured_content["error"]
        assert error["code"].isupper() and error["message"], error
    return bool(result.is_error), result.structured_content


@pytest.fixture(scope="module")
def browser() -> Any:
    """Debian's chromium under Playwright's sync API (never a browser Playwright downloads), one
    per test module; the test is skipped, with the reason, where there is none."""
    from tests._browser import CHROMIUM, FLAGS

    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the 'test' extra")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def servers_ws(tmp_path: Path) -> Path:
    """A copy of tests/data/servers (real code of modelcontextprotocol/servers) of this test's own."""
    from tests._servers import copy_servers

    return copy_servers(tmp_path)


@pytest.fixture(params=MODES)
async def servers_client(servers_ws: Path, request: pytest.FixtureRequest) -> Any:
    """An in-process llmem-mcp client on :func:`servers_ws`, everything outlined, in each protocol era."""
    from tests._servers import parsed_client

    async with parsed_client(servers_ws, request.param) as c:
        yield c


SQLITE_UTILS = ROOT / "tests" / "data" / "sqlite-utils"


@pytest.fixture
def sqlite_utils_ws(tmp_path: Path) -> Path:
    """A copy of tests/data/sqlite-utils (an excerpt of simonw/sqlite-utils) of this test's own."""
    ws = tmp_path / "ws"
    shutil.copytree(SQLITE_UTILS, ws)
    return ws


@pytest.fixture
def click_src_ws(tmp_path: Path) -> Path:
    """A copy of tests/data/click (pallets/click's src/click) of this test's own."""
    ws = tmp_path / "ws"
    shutil.copytree(DATA / "click", ws)
    return ws


@contextlib.asynccontextmanager
async def llmem_client(ws: Path, mode: str, answer_chars: int = 20_000) -> AsyncIterator[Any]:
    """An in-process llmem-mcp client on ``ws`` in protocol era ``mode`` (nothing parsed)."""
    from mcp import Client

    from llmem.code.server import build_server
    from llmem.core.config import Limits, ServerConfig

    server = build_server(ServerConfig("llmem-mcp", ws, limits=Limits(answer_chars=answer_chars)))
    async with Client(server, mode=mode) as c:
        yield c


@pytest.fixture(params=MODES)
async def click_src_client(request: pytest.FixtureRequest, click_src_ws: Path) -> AsyncIterator[Any]:
    """An llmem client (each protocol era) on a copy of tests/data/click."""
    async with llmem_client(click_src_ws, request.param) as c:
        yield c


@contextlib.asynccontextmanager
async def llmem_stdio_client(ws: Path) -> AsyncIterator[Any]:
    """A client of the real llmem-mcp console script on ``ws`` over stdio (the current protocol era)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=console_script("llmem-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
    )
    async with Client(params) as c:  # type: ignore[arg-type]
        yield c
