"""What the browser tests of the live plot view share: loopback origins, Debian's chromium under
Playwright (never a browser it downloads), the view's frame, waits, the real server over stdio.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import console_script, subprocess_env

__all__ = [
    "APPS",
    "APP_TOOLS",
    "CHROMIUM",
    "CONTEXT",
    "FLAGS",
    "bind_client",
    "browser_page",
    "plain",
    "serve",
    "shot",
    "start_view",
    "state_client",
    "time_in_file",
    "until",
    "view_frame",
]

APPS = Path(__file__).resolve().parent / "apps"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APP_TOOLS = [
    "debrief_view_data",
    "debrief_set_time",
    "debrief_set_selection",
    "debrief_set_viewport",
    "debrief_set_properties",
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(folder: Path, count: int = 2) -> Iterator[tuple[str, ...]]:
    """``folder`` served on ``count`` origins (ports of loopback): the host page's and the sandbox proxy's."""
    handler = functools.partial(_Quiet, directory=str(folder))
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(count)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield tuple(f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def plain(result: Any) -> dict[str, Any]:
    """A tool or resource result as the JSON a host passes on."""
    out: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


async def bind_client(page: Any, client: Any) -> tuple[Any, Any]:
    """The page's host bound to ``client`` (its ``tools/call``; no resources); returns
    ``call_tool(name, arguments)`` (the result as a host passes it on) and ``read(name,
    arguments)`` (its structured content)."""

    async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return plain(await client.call_tool(name, arguments))

    async def read(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = (await call_tool(name, arguments))["structuredContent"]
        return out

    await page.expose_function("mcpCallTool", call_tool)
    await page.expose_function("mcpReadResource", lambda asked: None)
    return call_tool, read


def state_client(workspace: Path) -> Any:
    """``debrief-state-mcp`` on ``workspace`` over real stdio."""
    params = StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    return Client(params, mode="legacy")


@pytest.fixture
async def browser_page() -> AsyncIterator[tuple[Any, list[str], list[str]]]:
    """A chromium page, the script errors it logs and the URLs it requests."""
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium); .ci/run installs it")
    api = pytest.importorskip("playwright.async_api", reason="playwright is in the 'test' extra")
    async with api.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = await browser.new_page(viewport={"width": 860, "height": 600}, has_touch=True)
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: requests.append(r.url))
        try:
            yield page, errors, requests
        finally:
            await browser.close()


#: The host context the tests' hosts give the view.
CONTEXT: dict[str, Any] = {
    "theme": "light",
    "displayMode": "inline",
    "containerDimensions": {"width": 820, "maxHeight": 560},
    "deviceCapabilities": {"touch": False, "hover": True},
}


async def start_view(
    page: Any, sandbox_origin: str, resource: Any, result: dict[str, Any], filename: str, context: dict[str, Any]
) -> Any:
    """The host page (loaded in ``page``) shows the view ``resource`` (its ``ui://`` contents)
    given the tool's ``result`` for ``filename``; the view's frame."""
    await page.evaluate(
        "(v) => window.startView(v)",
        {
            "sandboxUrl": f"{sandbox_origin}/sandbox.html",
            "html": resource.text,
            "csp": (resource.meta or {}).get("ui", {}).get("csp", {}),
            "arguments": {"filename": filename},
            "result": result,
            "context": context,
            "appTools": APP_TOOLS,
        },
    )
    return await view_frame(page)


async def view_frame(page: Any) -> Any:
    """The view's frame: the sandbox proxy's inner ``srcdoc`` iframe."""
    with anyio.fail_after(30):
        while True:
            for frame in page.frames:
                if frame.url == "about:srcdoc":
                    return frame
            await anyio.sleep(0.05)


async def until(check: Any, what: str, seconds: float = 30) -> Any:
    """The first truthy value of ``await check()``, polled; fails naming ``what`` after ``seconds``."""
    with anyio.fail_after(seconds):
        while True:
            value = await check()
            if value:
                return value
            await anyio.sleep(0.1)
    raise AssertionError(what)  # pragma: no cover


def time_in_file(path: Path) -> str | None:
    """The plot's current time as its file holds it."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for f in data["features"]:
        if f.get("id") == "debrief-time-metadata":
            return str(f["properties"].get("current"))
    return None


def shot(page: Any, name: str) -> None:
    """With ``LLMEM_SCREENSHOTS=<folder>``, what the page shows now, saved there as ``name``."""
    folder = os.environ.get("LLMEM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=False)
