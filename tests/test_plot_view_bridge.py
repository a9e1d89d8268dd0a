"""The live plot view under the official host side of MCP Apps: ``AppBridge`` of ``@modelcontextprotocol/ext-apps``.

``tests/test_plot_view.py`` drives the view with a host written from the specification; this
one puts the package hosts build on in its place, so a message shape, protocol version or
capability the official bridge does not take fails here. The pinned package (``tests/js``,
installed by ``npm ci``) is bundled for the browser with the pinned esbuild, served with
``tests/apps/bridge_host.html`` and the spec's sandbox proxy on two loopback origins, and the
bridge's ``tools/call`` goes to the real ``debrief-state-mcp`` over stdio. Checked: the
handshake, every message each way valid JSON-RPC that the bridge accepted, the view drawn, a
slider move setting the plot's time in the file, a theme change, a teardown answered.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests._browser import APPS, CONTEXT, browser_page, plain, serve, start_view, state_client, time_in_file, until
from tests.conftest import DATA
from tests.test_js_clients import JS, js_clients

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

__all__ = ["browser_page", "js_clients"]  # fixtures, used by name

PLOT = "large-sample.plot.json"
PACKAGE = "@modelcontextprotocol/ext-apps"
ENTRY = f'export {{ AppBridge, PostMessageTransport }} from "{PACKAGE}/app-bridge";\n'


@pytest.fixture(scope="module")
def bridge_site(js_clients: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, ...]]:
    """The AppBridge host page, the package bundled beside it, and the sandbox proxy, on two origins."""
    site = tmp_path_factory.mktemp("bridge site")
    for name in ("bridge_host.html", "sandbox.html"):
        shutil.copy(APPS / name, site / name)
    esbuild = js_clients / "node_modules" / ".bin" / "esbuild"
    built = subprocess.run(
        [
            str(esbuild),
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--log-level=warning",
            f"--outfile={site / 'bridge.js'}",
        ],
        input=ENTRY,
        cwd=js_clients,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if built.returncode != 0:  # pragma: no cover - the pinned esbuild bundles the pinned package
        pytest.fail(f"esbuild could not bundle {PACKAGE}/app-bridge:\n{built.stderr[-4000:]}")
    with serve(site) as both:
        yield both


def _version() -> str:
    manifest = JS / "node_modules" / PACKAGE / "package.json"
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def _methods(wire: list[dict[str, Any]], to: str) -> list[str]:
    return [m["message"].get("method") or f"response {m['message'].get('id')}" for m in wire if m["to"] == to]


async def test_the_official_app_bridge_hosts_the_view(
    workspace: Path, bridge_site: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, requests = browser_page
    warnings: list[str] = []  # the bridge warns ("[ext-apps] …") of a view that breaks the protocol's order
    page.on("console", lambda m: warnings.append(m.text) if "[ext-apps]" in m.text else None)
    shutil.copy(DATA / "plots" / PLOT, workspace / PLOT)
    host_origin, sandbox_origin = bridge_site
    async with state_client(workspace) as client:
        uri = {t.name: t for t in (await client.list_tools()).tools}["debrief_open_plot"].meta["ui"]["resourceUri"]
        resource = (await client.read_resource(uri)).contents[0]
        opened = plain(await client.call_tool("debrief_open_plot", {"filename": PLOT}))
        calls: list[str] = []

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            calls.append(name)
            return plain(await client.call_tool(name, arguments))

        async def read_resource(asked: str) -> dict[str, Any]:
            return plain(await client.read_resource(asked))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", read_resource)
        await page.goto(f"{host_origin}/bridge_host.html")
        await until(lambda: page.evaluate("window.hostReady === true"), "the bridge module loaded")
        context = {**CONTEXT, "availableDisplayModes": ["inline"]}
        view = await start_view(page, sandbox_origin, resource, opened, PLOT, context)
        await until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
        await until(lambda: view.evaluate("window.__plotView.names().length > 0"), "the view has the plot")

        # The handshake, as the bridge saw it.
        wire = await page.evaluate("window.wire")
        to_host, to_view = _methods(wire, "host"), _methods(wire, "view")
        assert to_host[:3] == [
            "ui/notifications/sandbox-proxy-ready",
            "ui/initialize",
            "ui/notifications/initialized",
        ], to_host
        init = next(m["message"] for m in wire if m["message"].get("method") == "ui/initialize")
        answer = next(m["message"] for m in wire if m["to"] == "view" and m["message"].get("id") == init["id"])
        assert "error" not in answer, answer
        assert init["params"]["protocolVersion"] == answer["result"]["protocolVersion"] == "2026-01-26"
        assert answer["result"]["hostInfo"]["name"] == "ext-apps-bridge-test-host"
        assert to_view.index("ui/notifications/tool-input") < to_view.index("ui/notifications/tool-result")
        assert await page.evaluate("window.appCapabilities") == {"availableDisplayModes": ["inline", "fullscreen"]}
        assert await page.evaluate("window.appInfo") == {"name": "debrief-plot-view", "version": "1.0.0"}
        assert await page.evaluate("window.sizes.length") > 0  # the bridge took its size-changed
        # Every request of the view was answered with a result, none with an error.
        answers = [
            m["message"] for m in wire if m["to"] == "view" and "id" in m["message"] and "method" not in m["message"]
        ]
        assert answers and all("result" in a for a in answers), answers
        assert calls[0] == "debrief_view_data"
        assert await view.locator("#title").inner_text() == "large-sample"

        # The slider: moved with the keyboard, released; the bridge carries debrief_set_time.
        before = time_in_file(workspace / PLOT)
        await view.locator("#slider").focus()
        for _ in range(40):
            await page.keyboard.press("ArrowRight")
        moved = await until(
            lambda: anyio.to_thread.run_sync(lambda: (t := time_in_file(workspace / PLOT)) != before and t),
            "the slider set the plot's time",
        )
        assert moved > str(before) and "debrief_set_time" in calls

        # A host context change through the bridge; then the bridge's teardown request, answered.
        await page.evaluate("(c) => window.setHostContext(c)", {**context, "theme": "dark"})
        await until(lambda: view.evaluate("document.documentElement.dataset.theme === 'dark'"), "the theme changed")
        assert await page.evaluate("window.teardown()") == {}

        assert await page.evaluate("window.bridgeErrors") == []
    assert warnings == [], f"warnings with {PACKAGE} {_version()}: {warnings}"
    assert errors == [], f"script errors with {PACKAGE} {_version()}: {errors}"
    outside = [u for u in requests if not u.startswith((host_origin, sandbox_origin, "about:", "data:"))]
    assert outside == []
