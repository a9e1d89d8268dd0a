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

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests._browser import APPS, CONTEXT, browser_page, plain, serve, start_view, state_client, time_in_file, until
from tests.conftest import DATA

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

__all__ = ["browser_page"]  # the fixture, used by name

PLOT = "large-sample.plot.json"


@pytest.fixture(scope="module")
def origins() -> Iterator[tuple[str, ...]]:
    """The host page and the sandbox proxy on two origins (two ports of loopback)."""
    with serve(APPS) as both:
        yield both


async def test_the_view_draws_the_plot_and_the_slider_moves_its_time(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, requests = browser_page
    shutil.copy(DATA / "plots" / PLOT, workspace / PLOT)
    host_origin, sandbox_origin = origins
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        uri = listed["debrief_open_plot"].meta["ui"]["resourceUri"]  # type: ignore[index]
        assert listed["debrief_view_data"].meta["ui"]["visibility"] == ["app"]  # type: ignore[index]
        resource = (await client.read_resource(uri)).contents[0]
        assert resource.mime_type == "text/html;profile=mcp-app"
        assert "<canvas" in resource.text  # type: ignore[union-attr]
        csp = (resource.meta or {}).get("ui", {}).get("csp", {})
        assert csp == {} and "http" not in json.dumps(csp)  # nothing outside is declared
        opened = plain(await client.call_tool("debrief_open_plot", {"filename": PLOT}))

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return plain(await client.call_tool(name, arguments))

        async def read(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            out: dict[str, Any] = (await call_tool(name, arguments))["structuredContent"]
            return out

        async def read_resource(asked: str) -> dict[str, Any]:
            return plain(await client.read_resource(asked))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", read_resource)
        await page.goto(f"{host_origin}/host.html")
        view = await start_view(page, sandbox_origin, resource, opened, PLOT, CONTEXT)
        await until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
        log = await page.evaluate("window.hostLog")
        assert log[:3] == ["ui/notifications/sandbox-proxy-ready", "ui/initialize", "ui/notifications/initialized"]
        assert await page.evaluate("window.appCapabilities.availableDisplayModes") == ["inline", "fullscreen"]
        assert await page.evaluate("window.sizes.length") > 0  # it said its size
        assert await view.locator("#title").inner_text() == "large-sample"
        await _shot(page, "plot-view-light.png")

        # The slider: moved with the keyboard, released; the plot's time changes in the file.
        before = time_in_file(workspace / PLOT)
        slider = view.locator("#slider")
        await slider.focus()
        for _ in range(40):
            await page.keyboard.press("ArrowRight")
        moved = await until(
            lambda: anyio.to_thread.run_sync(lambda: (t := time_in_file(workspace / PLOT)) != before and t),
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
        selected = await until(
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
        await until(
            lambda: _changed(read, viewport_before),
            "save view wrote the viewport",
        )

        # Another client changes the plot: the view follows without being reopened.
        draws = await view.evaluate("Number(document.body.dataset.draws)")
        renamed = {"filename": PLOT, "ids": selected, "properties": {"name": "RENAMED", "shortName": None}}
        assert not (await call_tool("debrief_set_properties", renamed)).get("isError")
        await until(
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
