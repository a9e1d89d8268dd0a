"""The live plot view (an MCP App, SEP-1865) in a real browser, against the real server.

Debian's chromium, driven by Playwright (never a browser it downloads), loads ``tests/apps/
host.html``: a web host written from the specification, whose sandbox proxy (``sandbox.html``)
is served from another origin. The test binds the host's ``tools/call`` and ``resources/read``
to ``debrief-state-mcp`` over real stdio, hands the view the real result of
``debrief_open_plot``, and checks what an analyst does: the handshake, the drawing, the slider
moving the plot's time in the file, a click selecting a track, "save view" saving the viewport,
the view following a change made by another client; no script error and nothing requested
from outside. With ``LLMEM_SCREENSHOTS=<folder>`` it saves what it saw, light and dark.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import DATA, console_script, subprocess_env

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

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
PLOT = "large-sample.plot.json"
APP_TOOLS = ["debrief_view_data", "debrief_set_time", "debrief_set_selection", "debrief_set_viewport"]


@pytest.fixture(scope="module")
def origins() -> Iterator[tuple[str, str]]:
    """The host page and the sandbox proxy on two origins (two ports of loopback)."""
    handler = functools.partial(_Quiet, directory=str(APPS))
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield tuple(f"http://127.0.0.1:{s.server_address[1]}" for s in servers)  # type: ignore[misc]
    finally:
        for server in servers:
            server.shutdown()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _plain(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


async def _client(workspace: Path) -> Any:
    params = StdioServerParameters(
        command=console_script("debrief-state-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    return Client(params, mode="legacy")


@pytest.fixture
async def browser_page() -> AsyncIterator[tuple[Any, list[str], list[str]]]:
    if CHROMIUM is None:
        pytest.skip("no chromium on this machine (Debian: apt-get install chromium); .ci/run installs it")
    api = pytest.importorskip("playwright.async_api", reason="playwright is in the 'test' extra")
    async with api.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = await browser.new_page(viewport={"width": 860, "height": 600})
        errors: list[str] = []
        requests: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: requests.append(r.url))
        try:
            yield page, errors, requests
        finally:
            await browser.close()


async def _view_frame(page: Any) -> Any:
    with anyio.fail_after(30):
        while True:
            for frame in page.frames:
                if frame.url == "about:srcdoc":
                    return frame
            await anyio.sleep(0.05)


async def _until(check: Any, what: str, seconds: float = 30) -> Any:
    with anyio.fail_after(seconds):
        while True:
            value = await check()
            if value:
                return value
            await anyio.sleep(0.1)
    raise AssertionError(what)  # pragma: no cover


def _time_in_file(path: Path) -> str | None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for f in data["features"]:
        if f.get("id") == "debrief-time-metadata":
            return str(f["properties"].get("current"))
    return None


async def test_the_view_draws_the_plot_and_the_slider_moves_its_time(
    workspace: Path, origins: tuple[str, str], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, requests = browser_page
    shutil.copy(DATA / "plots" / PLOT, workspace / PLOT)
    host_origin, sandbox_origin = origins
    async with await _client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        uri = listed["debrief_open_plot"].meta["ui"]["resourceUri"]  # type: ignore[index]
        assert listed["debrief_view_data"].meta["ui"]["visibility"] == ["app"]  # type: ignore[index]
        resource = (await client.read_resource(uri)).contents[0]
        assert resource.mime_type == "text/html;profile=mcp-app"
        html = resource.text  # type: ignore[union-attr]
        csp = (resource.meta or {}).get("ui", {}).get("csp", {})
        assert csp == {} and "http" not in json.dumps(csp)  # nothing outside is declared
        opened = _plain(await client.call_tool("debrief_open_plot", {"filename": PLOT}))

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return _plain(await client.call_tool(name, arguments))

        async def read(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            out: dict[str, Any] = (await call_tool(name, arguments))["structuredContent"]
            return out

        async def read_resource(asked: str) -> dict[str, Any]:
            return _plain(await client.read_resource(asked))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", read_resource)
        await page.goto(f"{host_origin}/host.html")
        context = {
            "theme": "light",
            "displayMode": "inline",
            "containerDimensions": {"width": 820, "maxHeight": 560},
            "deviceCapabilities": {"touch": False, "hover": True},
        }
        await page.evaluate(
            "(v) => window.startView(v)",
            {
                "sandboxUrl": f"{sandbox_origin}/sandbox.html",
                "html": html,
                "csp": csp,
                "arguments": {"filename": PLOT},
                "result": opened,
                "context": context,
                "appTools": APP_TOOLS,
            },
        )
        view = await _view_frame(page)
        await _until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
        log = await page.evaluate("window.hostLog")
        assert log[:3] == ["ui/notifications/sandbox-proxy-ready", "ui/initialize", "ui/notifications/initialized"]
        assert await page.evaluate("window.appCapabilities.availableDisplayModes") == ["inline", "fullscreen"]
        assert await page.evaluate("window.sizes.length") > 0  # it said its size
        assert await view.locator("#title").inner_text() == "large-sample"
        await _shot(page, "plot-view-light.png")

        # The slider: moved with the keyboard, released; the plot's time changes in the file.
        before = _time_in_file(workspace / PLOT)
        slider = view.locator("#slider")
        await slider.focus()
        for _ in range(40):
            await page.keyboard.press("ArrowRight")
        moved = await _until(
            lambda: anyio.to_thread.run_sync(lambda: (t := _time_in_file(workspace / PLOT)) != before and t),
            "the slider set the plot's time",
        )
        assert moved > str(before)

        # A click on a track selects it, for every client.
        point = await view.evaluate(
            """() => { const c = document.getElementById('map'); return {w: c.clientWidth, h: c.clientHeight}; }"""
        )
        assert point["w"] > 300
        track = await view.evaluate("window.__plotView.screenOf('VANG')")
        await view.locator("#map").click(position={"x": track[0], "y": track[1]})
        selected = await _until(
            lambda: _selected(read),
            "the click selected",
        )
        assert len(selected) == 1

        # Pan changes only the view; "save view" writes the viewport.
        viewport_before = (await read("debrief_get_viewport", {"filename": PLOT}))["viewportState"]
        await view.locator("#map").hover(position={"x": 200, "y": 200})
        await page.mouse.wheel(0, -400)
        assert (await read("debrief_get_viewport", {"filename": PLOT}))["viewportState"] == viewport_before
        await view.locator("#save").click()
        await _until(
            lambda: _changed(read, viewport_before),
            "save view wrote the viewport",
        )

        # Another client changes the plot: the view follows without being reopened.
        draws = await view.evaluate("Number(document.body.dataset.draws)")
        renamed = {"filename": PLOT, "ids": selected, "properties": {"name": "RENAMED", "shortName": None}}
        assert not (await call_tool("debrief_set_properties", renamed)).get("isError")
        await _until(
            lambda: view.evaluate("window.__plotView.names().includes('RENAMED')"),
            "the view followed another client's change",
        )
        assert await view.evaluate("Number(document.body.dataset.draws)") > draws

        # Dark theme from the host.
        await page.evaluate("window.setHostContext({theme: 'dark'})")
        assert await view.evaluate("document.documentElement.dataset.theme") == "dark"
        await _shot(page, "plot-view-dark.png")

    assert errors == []
    outside = [u for u in requests if not u.startswith((host_origin, sandbox_origin, "about:", "data:"))]
    assert outside == []


async def _changed(read: Any, before: Any) -> bool:
    now = (await read("debrief_get_viewport", {"filename": PLOT}))["viewportState"]
    return bool(now != before)


async def _selected(read: Any) -> list[str]:
    ids: list[str] = (await read("debrief_get_selection", {"filename": PLOT}))["selectedIds"]
    return ids


async def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("LLMEM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / name))
