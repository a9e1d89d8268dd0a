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
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from debrief_calc.formats import metadata
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import parse_iso
from tests._browser import (
    APP_TOOLS,
    APPS,
    bind_client,
    browser_page,
    plain,
    serve,
    state_client,
    time_in_file,
    until,
    view_frame,
)
from tests.conftest import DATA

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PLOT = "large-sample.plot.json"
__all__ = ["browser_page"]  # the fixture, used by name


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
        html = resource.text  # type: ignore[union-attr]
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
        view = await _start(page, origins, html, csp, {"filename": PLOT}, opened)
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
        # 40 key presses, one write once they paused (each write is a revision and an undo entry)
        writes = await page.evaluate("(window.toolCalls || []).filter((n) => n === 'debrief_set_time').length")
        assert 1 <= writes <= 3

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
        await page.keyboard.down("Control")  # ctrl + wheel zooms (a plain wheel scrolls the page)
        await page.mouse.wheel(0, -400)
        await page.keyboard.up("Control")
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


async def _start(
    page: Any, origins: tuple[str, ...], html: str, csp: Any, arguments: dict[str, Any], result: dict[str, Any]
) -> Any:
    """The host page with the view in it, given the tool's input and result; once it has drawn."""
    host_origin, sandbox_origin = origins
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
            "arguments": arguments,
            "result": result,
            "context": context,
            "appTools": APP_TOOLS,
        },
    )
    view = await view_frame(page)
    await until(lambda: view.evaluate("Number(document.body.dataset.draws || 0) > 0"), "the view drew")
    return view


async def _changed(read: Any, before: Any) -> bool:
    now = (await read("debrief_get_viewport", {"filename": PLOT}))["viewportState"]
    return bool(now != before)


async def _selected(read: Any, filename: str = PLOT) -> list[str]:
    ids: list[str] = (await read("debrief_get_selection", {"filename": filename}))["selectedIds"]
    return ids


async def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("LLMEM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / name))


# --- the two ships at their CPA: the view beside debrief_render_plot's picture -------------------

DAY = "1995-12-12T"
CPA = f"{DAY}10:45:09Z"  # NELSON and COLLINGWOOD at their closest (tests/test_analysis_tote.py)
SHIPS = "ships.plot.json"


def _ships_plot(workspace: Path) -> Path:
    """NELSON and COLLINGWOOD from the REP samples, the plot's time at the start: 05:00:00Z."""
    features: list[dict[str, Any]] = []
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        features += parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    times = {"current": f"{DAY}05:00:00Z", "start": f"{DAY}05:00:00Z", "end": f"{DAY}11:45:00Z"}
    features.append(metadata.time_feature(times))
    path = workspace / SHIPS
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}), encoding="utf-8")
    return path


def _yards_apart_at(path: Path, at: str) -> float:
    """The two ships' distance at ``at``, positions interpolated between fixes as the view does,
    measured by GeographicLib on the WGS84 ellipsoid."""
    from geographiclib.geodesic import Geodesic

    t = parse_iso(at)
    spots = []
    for f in json.loads(path.read_text(encoding="utf-8"))["features"]:
        times = [parse_iso(x) for x in (f["properties"].get("timestamps") or [])]
        if not times:
            continue
        i = max(k for k, x in enumerate(times) if x <= t)
        (lon0, lat0, *_), (lon1, lat1, *_) = f["geometry"]["coordinates"][i : i + 2]
        u = (t - times[i]) / (times[i + 1] - times[i])
        spots.append((lat0 + (lat1 - lat0) * u, lon0 + (lon1 - lon0) * u))
    (a, b) = spots
    metres: float = Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])["s12"]
    return metres / 0.9144


def _overlapping(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    ]


async def _labels_apart(view: Any) -> list[dict[str, Any]]:
    labels: list[dict[str, Any]] = await view.evaluate("window.__plotView.labels()")
    assert {"NELSON", "COLLINGWOOD"} <= {x["text"] for x in labels}, labels
    assert _overlapping(labels) == []
    for ship in ("NELSON", "COLLINGWOOD"):  # no label on either ship's marker
        x, y = await view.evaluate(f"window.__plotView.shipAt('{ship}')")
        marker = {"x": x - 8, "y": y - 8, "w": 16, "h": 16, "text": ship}
        assert [pair for pair in _overlapping([marker, *labels]) if pair[0] == ship] == []
    return labels


async def _resize(page: Any, view: Any, width: int) -> None:
    await page.evaluate(f"document.getElementById('frame').style.width = '{width}px'")
    await page.evaluate(f"window.setHostContext({{containerDimensions: {{width: {width}, maxHeight: 560}}}})")
    await until(lambda: view.evaluate(f"document.documentElement.clientWidth === {width}"), "the view took the width")


async def _header_and_axes_readable(view: Any) -> None:
    head = await view.evaluate(
        """() => { const r = (id) => document.getElementById(id).getBoundingClientRect();
        return {title: r('title'), status: r('status'), width: document.documentElement.clientWidth,
                titleCut: document.getElementById('title').scrollWidth > document.getElementById('title').clientWidth}; }"""
    )
    assert head["title"]["left"] >= 0 and head["title"]["right"] <= head["status"]["left"] + 1
    assert head["status"]["right"] <= head["width"]
    assert not head["titleCut"] and head["title"]["width"] > 20  # the title whole, first; the status gives way
    grid = await view.evaluate("window.__plotView.grid()")
    assert len(grid) >= 2 and _overlapping(grid) == []
    scale = await view.evaluate("window.__plotView.scale()")
    assert _overlapping([{**scale, "text": "scale"}, *grid]) == []


async def test_the_view_shows_the_plots_time_and_keeps_its_labels_apart(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, _ = browser_page
    path = _ships_plot(workspace)
    # the moment that matters: the ships about 119 yd apart, which the view must not smear
    assert abs(_yards_apart_at(path, CPA) - 119.5) < 1.5
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        uri = listed["debrief_render_plot"].meta["ui"]["resourceUri"]  # type: ignore[index]
        html = (await client.read_resource(uri)).contents[0].text  # type: ignore[union-attr]
        # the plot's time set to the CPA, as a model shows a moment in the view, then drawn
        set_cpa = {"filename": SHIPS, "timeState": {"current": CPA}}
        assert not plain(await client.call_tool("debrief_set_time", set_cpa)).get("isError")
        asked = {"filename": SHIPS, "cpa": ["rep-nelson", "rep-collingwood"]}
        rendered = plain(await client.call_tool("debrief_render_plot", asked))
        assert rendered["structuredContent"]["time"] == CPA
        _, read = await bind_client(page, client)
        view = await _start(page, origins, html, {}, asked, rendered)

        # One time: the plot's, which the picture drew; no second time in a note.
        assert await view.evaluate("window.__plotView.time()") == CPA
        assert await view.locator("#note").is_hidden()
        assert time_in_file(path) == CPA

        # Their labels apart at every zoom, out to where 119 yd is a few pixels.
        x, y = await view.evaluate("window.__plotView.shipAt('NELSON')")
        x2, y2 = await view.evaluate("window.__plotView.shipAt('COLLINGWOOD')")
        assert abs(x - x2) + abs(y - y2) < 20  # drawn on top of each other at the first fit
        for width in (820, 390):
            if width == 390:
                await _resize(page, view, width)
            for theme in ("light", "dark"):
                await page.evaluate(f"window.setHostContext({{theme: '{theme}'}})")
                await _labels_apart(view)
                await _header_and_axes_readable(view)
                await _shot(page, f"ships-{width}-{theme}.png")
            for _ in range(3):  # zoom in on the ships, three steps
                x, y = await view.evaluate(
                    """() => { const [x, y] = window.__plotView.shipAt('NELSON'),
                    r = document.getElementById('map').getBoundingClientRect(); return [x + r.left, y + r.top]; }"""
                )
                await view.evaluate(
                    f"""document.getElementById('map').dispatchEvent(new WheelEvent('wheel',
                    {{deltaY: -600, ctrlKey: true, clientX: {x}, clientY: {y}, bubbles: true, cancelable: true}}))"""
                )
                await _labels_apart(view)
                await _header_and_axes_readable(view)
            await _shot(page, f"ships-{width}-zoomed.png")
            await view.locator("#fit").click()
        await page.evaluate("window.setHostContext({theme: 'light'})")

        # Touch: a pinch zooms, a two-finger drag pans; one finger is the page's scroll (the map
        # stays, and says to use two fingers); none selects nor writes.
        revision = (await read("debrief_get_time", {"filename": SHIPS}))["revision"]
        k = await view.evaluate("window.__plotView.zoom()")
        box = await view.locator("#map").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        cdp = await page.context.new_cdp_session(page)

        async def touch(kind: str, points: list[tuple[float, float]]) -> None:
            await cdp.send(
                "Input.dispatchTouchEvent",
                {"type": kind, "touchPoints": [{"x": px, "y": py, "id": i} for i, (px, py) in enumerate(points)]},
            )

        await touch("touchStart", [(cx - 30, cy), (cx + 30, cy)])
        for spread in (40, 50, 60):
            await touch("touchMove", [(cx - spread, cy), (cx + spread, cy)])
        await touch("touchEnd", [])
        assert await view.evaluate("window.__plotView.zoom()") == pytest.approx(2 * k, rel=0.05)
        before = await view.evaluate("window.__plotView.shipAt('NELSON')")
        await touch("touchStart", [(cx, cy)])
        for dx in (10, 20, 30):
            await touch("touchMove", [(cx + dx, cy)])
        await touch("touchEnd", [])
        assert await view.evaluate("window.__plotView.shipAt('NELSON')") == before
        assert await view.evaluate("document.getElementById('toast').textContent") == "Use two fingers to move the map"
        await touch("touchStart", [(cx - 30, cy), (cx + 30, cy)])
        for dx in (10, 20, 30):
            await touch("touchMove", [(cx - 30 + dx, cy), (cx + 30 + dx, cy)])
        await touch("touchEnd", [])
        after = await view.evaluate("window.__plotView.shipAt('NELSON')")
        assert after[0] - before[0] == pytest.approx(30, abs=1) and after[1] == pytest.approx(before[1], abs=1)
        assert await _selected(read, SHIPS) == []
        assert (await read("debrief_get_time", {"filename": SHIPS}))["revision"] == revision

        # Moving the time writes it; the header's revision is the write's at once, and stays.
        await view.locator("#slider").focus()
        await page.keyboard.press("ArrowRight")
        moved = await until(
            lambda: anyio.to_thread.run_sync(lambda: (t := time_in_file(path)) != CPA and t),
            "the slider set the plot's time",
        )
        assert moved > CPA
        assert await view.evaluate("window.__plotView.time()") == moved
        assert await view.locator("#note").is_hidden()
        revision = (await read("debrief_get_time", {"filename": SHIPS}))["revision"]
        await until(lambda: _status_has(view, f"revision {revision}"), "the header took the write's revision")

        # Save view: a confirmation, and the new revision in the header.
        await view.locator("#save").click()
        await until(lambda: _toast(view, "View saved"), "the view said it was saved")
        revision = (await read("debrief_get_viewport", {"filename": SHIPS}))["revision"]
        await until(lambda: _status_has(view, f"revision {revision}"), "the header took the save's revision")
        polls = await view.evaluate("Number(document.body.dataset.polls)")
        await until(
            lambda: view.evaluate(f"Number(document.body.dataset.polls) >= {polls + 2}"), "two polls after our writes"
        )
        assert await _status_has(view, f"revision {revision}")
        assert await view.evaluate("window.__plotView.time()") == moved
    assert errors == []


async def test_the_view_follows_a_rendered_window(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    page, errors, _ = browser_page
    path = _ships_plot(workspace)
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        html = (await client.read_resource(listed["debrief_render_plot"].meta["ui"]["resourceUri"])).contents[0].text  # type: ignore[index,union-attr]
        asked = {"filename": SHIPS, "time_start": f"{DAY}10:00:00Z", "time_end": f"{DAY}11:00:00Z", "fit": "window"}
        rendered = plain(await client.call_tool("debrief_render_plot", asked))

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return plain(await client.call_tool(name, arguments))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", lambda asked: None)
        view = await _start(page, origins, html, {}, asked, rendered)
        # the plot's time 05:00 is outside the window: one time, the plot's; the window drawn is left
        # (the picture clipped its time to 10:00), and the note says so, naming no second time
        assert rendered["structuredContent"]["time"] == f"{DAY}10:00:00Z"
        await until(lambda: view.evaluate("window.__plotView.trackSpan('NELSON')[0] < '1995-12-12T10'"), "all read")
        assert await view.evaluate("window.__plotView.time()") == f"{DAY}05:00:00Z"
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}05:00:00Z", f"{DAY}11:45:00Z"]
        note = await view.locator("#note").inner_text()
        assert "window drawn (10:00:00Z to 11:00:00Z) does not hold the plot's time" in note, note
        assert "as drawn" not in note and "05:00" not in note
        assert await view.locator("#all-times").is_hidden()
        assert time_in_file(path) == f"{DAY}05:00:00Z"

        # The plot's time inside the window: the slider over the window drawn, the tracks cut to it
        # by the server as the picture cut them; "all times" the plot's whole period, the time kept.
        set_time = {"filename": SHIPS, "timeState": {"current": f"{DAY}10:30:00Z"}}
        assert not (await call_tool("debrief_set_time", set_time)).get("isError")
        rendered = plain(await client.call_tool("debrief_render_plot", asked))
        assert rendered["structuredContent"]["time"] == f"{DAY}10:30:00Z"
        await page.evaluate("(r) => window.sendToolResult(r)", rendered)
        await until(lambda: view.evaluate("window.__plotView.trackSpan('NELSON')[0] === '1995-12-12T10:00:00Z'"), "cut")
        assert await view.evaluate("window.__plotView.time()") == f"{DAY}10:30:00Z"
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}10:00:00Z", f"{DAY}11:00:00Z"]
        note = await view.locator("#note").inner_text()
        assert "drawn window 10:00:00Z to 11:00:00Z" in note, note
        assert await view.evaluate("window.__plotView.trackSpan('NELSON')") == [f"{DAY}10:00:00Z", f"{DAY}11:00:00Z"]
        await view.locator("#all-times").click()  # the plot's whole period again, the time kept
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}05:00:00Z", f"{DAY}11:45:00Z"]
        assert await view.evaluate("window.__plotView.time()") == f"{DAY}10:30:00Z"
        whole = await until(
            lambda: view.evaluate(
                "(s => s && s[0] < '1995-12-12T10:00:00Z' && s)(window.__plotView.trackSpan('NELSON'))"
            ),
            "the view read all again",
        )
        assert whole[1] > f"{DAY}11:00:00Z"

        # A reload hands the view the same result again after another client moved the plot's time
        # out of the window: the plot's time now, not the one drawn; the window left, all tracks.
        set_time = {"filename": SHIPS, "timeState": {"current": f"{DAY}11:20:00Z"}}
        assert not (await call_tool("debrief_set_time", set_time)).get("isError")
        await page.evaluate("(r) => window.sendToolResult(r)", rendered)
        await until(lambda: view.evaluate(f"window.__plotView.time() === '{DAY}11:20:00Z'"), "the plot's time")
        await until(
            lambda: view.evaluate("window.__plotView.trackSpan('NELSON')[1] > '1995-12-12T11:00:00Z'"), "all again"
        )
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}05:00:00Z", f"{DAY}11:45:00Z"]
        assert "does not hold the plot's time" in await view.locator("#note").inner_text()

        # A later result takes the view over; a time that is no time is ignored: the plot's time.
        draws = await view.evaluate("Number(document.body.dataset.draws)")
        later = {"structuredContent": {"filename": SHIPS, "time": "yesterday", "time_start": 7}}
        await page.evaluate("(r) => window.sendToolResult(r)", later)
        await until(
            lambda: view.evaluate(f"Number(document.body.dataset.draws) > {draws}"), "the view took the later result"
        )
        assert await view.evaluate("window.__plotView.time()") == f"{DAY}11:20:00Z"
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}05:00:00Z", f"{DAY}11:45:00Z"]
        assert await view.locator("#note").is_hidden()
    assert errors == []


async def _status_has(view: Any, text: str) -> bool:
    return text in await view.locator("#status").inner_text()


async def _toast(view: Any, text: str) -> bool:
    return bool(await view.evaluate("document.getElementById('toast').textContent") == text)


async def test_the_views_clock_reads_as_the_answers_and_pictures_do(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    """One clock (issue 22 §1): the view's JavaScript shows an instant as debrief_calc.tracks.times
    does (the nearest second, halves up; a DTG of that second; "active" read at the precision
    asked), so the slider's clock, its notes and the picture's header read alike. The large
    sample's current time is 16:16:53.661: the clock shows 16:16:54Z, as the picture would."""
    from debrief_calc.geo.dm import latitude_dm, longitude_dm
    from debrief_calc.tracks.times import active_at, dtg, iso_second, second

    page, errors, _ = browser_page
    shutil.copy(DATA / "plots" / PLOT, workspace / PLOT)
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        html = (await client.read_resource(listed["debrief_open_plot"].meta["ui"]["resourceUri"])).contents[0].text  # type: ignore[index,union-attr]
        opened = plain(await client.call_tool("debrief_open_plot", {"filename": PLOT}))

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return plain(await client.call_tool(name, arguments))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", lambda asked: None)
        view = await _start(page, origins, html, {}, {"filename": PLOT}, opened)
        assert await view.locator("#clock-time").inner_text() == "16:16:54Z"
        assert await view.evaluate("window.__plotView.time()") == "2024-11-14T16:16:54Z"
        base = parse_iso("2024-11-14T10:45:08Z")
        instants = [base + f for f in (0.0, 0.001, 0.4999, 0.5, 0.5004, 0.902, 0.999, 59.5, 59.6, 86_399.7)]
        instants += [parse_iso("2024-11-14T16:16:53.661999Z"), parse_iso("1995-12-31T23:59:59.5Z")]
        seen = await view.evaluate(
            "(ts) => ts.map((t) => { const r = window.__plotView.rule;"
            " return [r.second(t), r.isoOf(t), r.dtgOf(t), r.clockText(t)]; })",
            instants,
        )
        for t, (whole, text, group, (date, clock_text)) in zip(instants, seen, strict=True):
            assert whole == second(t), t
            assert text == iso_second(t) == f"{date}T{clock_text}", t
            assert group == dtg(t), t
        event = (base + 0.902, base + 0.902)  # a narrative entry logged at 10:45:08.902
        asked = [base, base + 1, base + 0.902, base + 0.9, base - 1]
        active = await view.evaluate(
            "([p, ts]) => ts.map((t) => window.__plotView.rule.activeAt(p, t))", [list(event), asked]
        )
        assert active == [active_at(event, t) for t in asked] == [False, True, True, False, False]

        # Degrees and minutes: the grid's text is debrief_calc.geo.dm's (the picture's axes, the
        # answers' positions), on the same values, to each step's decimals.
        values = [0.0, -0.0001, 22.141666, -21.866667, 22.999999, -0.5, 89.99999, 179.99999, -179.99999]
        values += [180.0, -180.0, 200.5, 22.0 + 7.5 / 60, -(21 + 52.25 / 60), 1 / 120, 45.00833333]
        got = await view.evaluate(
            "(vs) => vs.map((v) => [0, 1, 2].map((d) => [Math.abs(v) <= 90 ? window.__plotView.rule.latitudeDm(v, d)"
            " : null, window.__plotView.rule.longitudeDm(v, d)]))",
            values,
        )
        want = [[[latitude_dm(v, d) if abs(v) <= 90 else None, longitude_dm(v, d)] for d in (0, 1, 2)] for v in values]
        assert got == want
        grid = [g["text"] for g in await view.evaluate("window.__plotView.grid()")]
        assert grid and all(
            re.fullmatch(r"(\d{2}°\d{2}(\.\d{1,2})?'[NS])|(\d{3}°\d{2}(\.\d{1,2})?'[EW])", g) for g in grid
        )
    assert errors == []


async def test_the_views_readout_is_the_tote_and_marks_every_pass(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    """Issue 22 §4: the range and bearing from the primary to the selected track at the slider's
    time (the tote's, computed on the server through debrief_view_data), checked against
    GeographicLib; every pass of the pair marked, the CPA among them; a plain wheel leaves the zoom
    to ctrl/⌘ + wheel and says so once; a track that ended shows where, greyed."""
    from geographiclib.geodesic import Geodesic

    page, errors, _ = browser_page
    path = _ships_plot(workspace)
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        html = (await client.read_resource(listed["debrief_render_plot"].meta["ui"]["resourceUri"])).contents[0].text  # type: ignore[index,union-attr]

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return plain(await client.call_tool(name, arguments))

        for name, arguments in (
            ("debrief_set_time", {"filename": SHIPS, "timeState": {"current": CPA}}),
            ("debrief_set_selection", {"filename": SHIPS, "selectedIds": ["rep-collingwood"]}),
        ):
            assert not (await call_tool(name, arguments)).get("isError")
        rendered = plain(await client.call_tool("debrief_render_plot", {"filename": SHIPS}))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", lambda asked: None)
        view = await _start(page, origins, html, {}, {"filename": SHIPS}, rendered)
        shown = await until(
            lambda: view.evaluate("(r => r.shown && r)(window.__plotView.readout())"), "the readout shown"
        )
        tote = shown["tote"]
        assert tote["time"] == CPA and tote["primary"] == {"id": "rep-nelson", "name": "NELSON"}
        (row,) = tote["rows"]
        assert row["name"] == "COLLINGWOOD" and tote["unit"] == "yd"
        # GeographicLib between the two ships at that instant (interpolated between their fixes)
        yards = _yards_apart_at(path, CPA)
        assert row["range"] == pytest.approx(yards, abs=1.0)
        (a, b) = [(lat, lon) for lon, lat in row["line"]]
        assert Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])["azi1"] % 360 == pytest.approx(row["bearing"], abs=0.05)
        assert f"COLLINGWOOD: {row['range']:.1f} yd, {row['bearing']:05.1f}°T" in shown["shown"], shown["shown"]
        # every pass: one of them the CPA, at least as close as GeographicLib's closest second
        passes = tote["passes"]
        cpas = [p for p in passes if p["is_cpa"]]
        assert len(cpas) == 1 and cpas[0]["label"].startswith("CPA ")
        sampled = min(_yards_apart_at(path, f"{DAY}10:{m:02d}:{s:02d}Z") for m in range(40, 50) for s in range(60))
        assert sampled - 1.0 <= cpas[0]["range"] <= sampled + 0.05
        labels = {x["text"] for x in await view.evaluate("window.__plotView.labels()")}
        assert {p["label"] for p in passes if parse_iso(p["time"]) >= parse_iso(f"{DAY}05:03:00Z")} & labels
        await _shot(page, "readout-cpa.png")

        # The slider moves the readout with it (the server's tote at the new second).
        await view.locator("#slider").focus()
        await page.keyboard.press("ArrowRight")
        now = await until(
            lambda: view.evaluate("(t => t !== '" + CPA + "' && t)(window.__plotView.time())"), "the time moved"
        )
        await until(
            lambda: view.evaluate(f"(window.__plotView.readout().tote || {{}}).time === '{now}'"),
            "the readout followed",
        )
        moved = (await view.evaluate("window.__plotView.readout()"))["tote"]["rows"][0]["range"]
        assert moved == pytest.approx(_yards_apart_at(path, now), abs=1.0)

        # A plain wheel over the map scrolls the page, not the map, and says once how to zoom.
        k = await view.evaluate("window.__plotView.zoom()")
        await view.locator("#map").hover(position={"x": 300, "y": 150})
        await page.mouse.wheel(0, 300)
        assert "Ctrl + scroll, or pinch" in await view.evaluate("document.getElementById('toast').textContent")
        assert await view.evaluate("window.__plotView.zoom()") == k
        await page.keyboard.down("Control")
        await page.mouse.wheel(0, -300)
        await page.keyboard.up("Control")
        await until(lambda: view.evaluate(f"window.__plotView.zoom() > {k}"), "ctrl + wheel zoomed")

        # A track that ended before the time shown: where it ended, greyed and labelled.
        end = {"filename": SHIPS, "timeState": {"current": f"{DAY}11:43:00Z"}}
        assert not (await call_tool("debrief_set_time", end)).get("isError")
        await view.locator("#fit").click()
        await until(
            lambda: view.evaluate("window.__plotView.labels().some((l) => l.text === 'NELSON ended 121141Z')"),
            "NELSON's end shown",
        )
        said = await until(
            lambda: view.evaluate("(s => s && s.includes('has data') && s)(window.__plotView.readout().shown)"),
            "the readout said why",
        )
        assert "NELSON has data from 1995-12-12T05:00:00Z to 1995-12-12T11:41:00Z only" in said, said
        await _shot(page, "readout-ended.png")
        assert _overlapping(await view.evaluate("window.__plotView.labels()")) == []
    assert errors == []


async def test_the_view_frames_a_window_set_since(
    workspace: Path, origins: tuple[str, ...], browser_page: tuple[Any, list[str], list[str]]
) -> None:
    """A window saved in the plot after the view opened ("the last hour", by another client): the
    view cuts the tracks to it and frames what it holds, as a picture of it does, without Fit."""
    page, errors, _ = browser_page
    _ships_plot(workspace)
    async with state_client(workspace) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        html = (await client.read_resource(listed["debrief_open_plot"].meta["ui"]["resourceUri"])).contents[0].text  # type: ignore[index,union-attr]
        opened = plain(await client.call_tool("debrief_open_plot", {"filename": SHIPS}))

        async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            return plain(await client.call_tool(name, arguments))

        await page.expose_function("mcpCallTool", call_tool)
        await page.expose_function("mcpReadResource", lambda asked: None)
        view = await _start(page, origins, html, {}, {"filename": SHIPS}, opened)
        zoom = await view.evaluate("window.__plotView.zoom()")
        hour = {"current": f"{DAY}11:30:00Z", "start": f"{DAY}10:45:00Z", "end": f"{DAY}11:45:00Z"}
        assert not (await call_tool("debrief_set_time", {"filename": SHIPS, "timeState": hour})).get("isError")
        await until(lambda: view.evaluate(f"window.__plotView.trackSpan('COLLINGWOOD')[0] === '{DAY}10:45:00Z'"), "cut")
        assert await view.evaluate("window.__plotView.range()") == [f"{DAY}10:45:00Z", f"{DAY}11:45:00Z"]
        assert await view.evaluate("window.__plotView.time()") == f"{DAY}11:30:00Z"
        framed = await view.evaluate("window.__plotView.zoom()")
        assert framed > 2 * zoom  # the hour's tracks fill the map, not a cluster in the whole
        # both ships' whole hour inside the map
        for ship in ("NELSON", "COLLINGWOOD"):
            x, y = await view.evaluate(f"window.__plotView.shipAt('{ship}')")
            size = await view.evaluate(
                "[document.getElementById('map').clientWidth, document.getElementById('map').clientHeight]"
            )
            assert 0 < x < size[0] and 0 < y < size[1]
        await _shot(page, "window-framed.png")
    assert errors == []
