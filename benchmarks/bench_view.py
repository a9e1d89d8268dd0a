"""The live plot view's figures (issue 19 §5) in Debian's chromium, each beside its baseline in the same run.

    python benchmarks/bench_view.py [--quick] [--tmp DIR]

The view (``ui://debrief-state/plot-view``) runs in the spec's test host (``tests/apps/host.html``
and its sandbox proxy on a second loopback origin), driven by Playwright's Python API in the
system chromium (never a browser Playwright downloads); its ``tools/call`` goes to a live
``debrief-state-mcp`` over stdio. The plot: four generated tracks of 250,000 one-second fixes
each (``bench_calc_domain.patrol``), 1,000,000 points, about 120 MB.

1. first draw: from the host's ``ui/notifications/tool-result`` (the real ``debrief_open_plot``
   result) to the end of the view's first draw (``document.body.dataset.lastDrawAt``, both on
   the epoch clock), on a fresh page each round: the view asks ``debrief_view_data`` through
   the host, gets the plot thinned to its point budget and draws it. Baseline, alternately in
   the same rounds: ``debrief_render_plot`` of the same plot at the canvas's size, over stdio.
   One untimed round first (the server's first ``debrief_view_data`` and render, their imports;
   reported apart).
2. the ``debrief_view_data`` call's own time inside that (timed around the client's
   ``call_tool`` the host is bound to), and the first draw's canvas time (``lastDrawMs``).
3. slider moves: ``input`` events on the slider, each redrawing the plot at its new time,
   ``performance.now()`` around the event in the page; baseline, alternately, a bare canvas of
   the same size stroking the same points (one path per track, the same projection): the
   least a redraw does. Also the time to the next animation frame (the paint).
4. the same plot with a sensor of 100,000 cuts on its first ship (``--quick``: 2,000), spread over
   its period, half with an ambiguous bearing, none with a range: the first draw, its
   ``debrief_view_data`` call and the slider's redraw (the cuts of the 30 minutes up to the
   time, thinned to 60) beside the same figures of the plot without it, from the same run; and
   its ``debrief_view_data`` answer's size against the tool's answer cap (a cut weighs in the
   point budget the numbers it sends, so the cuts take the tracks' share, not more).

Skipped, with the reason as a note, where chromium or Playwright is missing.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import BASELINE_CMD, Section, checked, ms, ratio, server_cmd
from bench_calc import T0, write_plot
from bench_calc_domain import patrol

from llmem.core.config import Limits

PLOT = "million.plot.json"
TRACKS = 4
#: points in all, first-draw rounds, slider moves: full, and --quick
SIZES = {False: (1_000_000, 7, 100), True: (20_000, 1, 10)}
#: a sensor's cuts on the first ship, in the second plot measured: full, and --quick
CUTS = {False: 100_000, True: 2_000}
CUTS_PLOT = "million-cuts.plot.json"
#: the frame budget of a smooth slider (60 frames a second)
FRAME_MS = 1000 / 60

#: A bare canvas redraw of the same points: the least the view's redraw does.
BARE_DRAW = """(tracks) => {
  let c = document.getElementById('bench-bare');
  const map = document.getElementById('map');
  if (!c) {
    c = document.createElement('canvas'); c.id = 'bench-bare';
    c.style.cssText = 'position:fixed;left:0;top:0;pointer-events:none;opacity:0';
    document.body.appendChild(c);
  }
  const dpr = window.devicePixelRatio || 1, w = map.clientWidth, h = map.clientHeight;
  c.width = w * dpr; c.height = h * dpr; c.style.width = w + 'px'; c.style.height = h + 'px';
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const t of tracks) for (let k = 0; k < t.lon.length; k++) {
    x0 = Math.min(x0, t.lon[k]); x1 = Math.max(x1, t.lon[k]); y0 = Math.min(y0, t.lat[k]); y1 = Math.max(y1, t.lat[k]);
  }
  window.__bare = { ctx: c.getContext('2d'), tracks, w, h, dpr, x0, y0, sx: w / (x1 - x0 || 1), sy: h / (y1 - y0 || 1) };
}"""
SLIDER = """([n, bare]) => {
  const s = document.getElementById('slider'), out = [];
  const b = window.__bare;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    if (bare) {
      const { ctx, tracks, w, h, dpr, x0, y0, sx, sy } = b;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0); ctx.clearRect(0, 0, w, h);
      for (const t of tracks) {
        ctx.beginPath();
        for (let k = 0; k < t.lon.length; k++) ctx.lineTo((t.lon[k] - x0) * sx, h - (t.lat[k] - y0) * sy);
        ctx.strokeStyle = t.color; ctx.stroke();
      }
    } else {
      s.value = String((i * 137 + 50) % 1001);
      s.dispatchEvent(new Event('input'));
    }
    out.push(performance.now() - t0);
  }
  return out;
}"""
NEXT_FRAME = """() => new Promise((done) => {
  const s = document.getElementById('slider'), t0 = performance.now();
  s.value = String((Number(s.value) + 333) % 1001);
  s.dispatchEvent(new Event('input'));
  requestAnimationFrame(() => setTimeout(() => done(performance.now() - t0)));
})"""


def make_plot(path: Path, points: int) -> int:
    """Four patrolling ships of ``points / 4`` one-second fixes each; the file's bytes."""
    each = points // TRACKS
    tracks = [
        patrol(each, 10.0 + k, lat0=50.0 + 0.05 * k, lon0=-4.0 + 0.05 * k, t0=T0, seed=k + 1) for k in range(TRACKS)
    ]
    return write_plot(path, tracks, 50.0, -4.0)


def add_sensor(path: Path, cuts: int, seed: int = 7) -> int:
    """A copy of the plot at ``path`` with a sensor of ``cuts`` cuts on its first ship, evenly over
    its period (origins its fixes then, random bearings, half with an ambiguous bearing, no
    range), written beside it as ``CUTS_PLOT``; the copy's bytes."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    ship = next(f for f in doc["features"] if f["properties"].get("dataType") == "track")
    coords, times = ship["geometry"]["coordinates"], ship["properties"]["timestamps"]
    at = np.linspace(0, len(coords) - 1, cuts).round().astype(int).tolist()
    rng = np.random.default_rng(seed)
    bearings = rng.uniform(0, 360, cuts).round(1)
    ambiguous = [float(b) if k % 2 else None for k, b in enumerate(rng.uniform(0, 360, cuts).round(1))]
    doc["features"].append(
        {
            "type": "Feature",
            "id": "bench-sensor",
            "geometry": {"type": "MultiPoint", "coordinates": [coords[i] for i in at]},
            "properties": {
                "dataType": "sensor",
                "kind": "sensor",
                "name": "BENCH ARRAY",
                "host": ship["id"],
                "timestamps": [times[i] for i in at],
                "bearings": bearings.tolist(),
                "ambiguousBearings": ambiguous,
                "rangesYd": [None] * cuts,
                "visible": True,
            },
        }
    )
    raw = json.dumps(doc, indent=2).encode()
    (path.parent / CUTS_PLOT).write_bytes(raw)
    return len(raw)


def _missing() -> str | None:
    """Why the view cannot be measured here, or None."""
    from tests._browser import CHROMIUM

    if CHROMIUM is None:
        return "no chromium on this machine (Debian: apt-get install chromium)"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (the 'test' extra)"
    return None


async def _measure(ws: Path, rounds: int, moves: int, plot: str = PLOT) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    from tests._browser import APPS, CHROMIUM, FLAGS, plain, serve

    clock = time.perf_counter
    out: dict[str, Any] = {"first": [], "render": [], "view_data": [], "canvas": [], "echo": []}
    async with harness.connected([server_cmd("debrief-state-mcp", ws), BASELINE_CMD]) as (state, base):
        uri = {t.name: t for t in (await state.list_tools()).tools}["debrief_open_plot"].meta["ui"]["resourceUri"]
        resource = (await state.read_resource(uri)).contents[0]
        opened = plain(await state.call_tool("debrief_open_plot", {"filename": plot}))
        view_calls: list[float] = []
        answers: list[dict[str, Any]] = []

        async def call_tool(name: str, arguments: dict[str, Any]) -> str:
            # JSON text, parsed by the host page: Playwright's own encoding of a large answer
            # (every number wrapped) would cost more than anything measured here.
            start = clock()
            result = await state.call_tool(name, arguments)
            if name == "debrief_view_data" and "since_revision" not in arguments:  # not the view's polls
                view_calls.append(clock() - start)
                answers.append(checked(result, name))
                out["chars"] = len(result.content[0].text)
            return json.dumps(plain(result), ensure_ascii=False)

        async def read_resource(asked: str) -> dict[str, Any]:
            return plain(await state.read_resource(asked))

        with serve(APPS) as (host_origin, sandbox_origin):
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
                try:
                    context = await browser.new_context(viewport={"width": 860, "height": 600})
                    await context.expose_function("mcpCallTool", call_tool)
                    await context.expose_function("mcpReadResource", read_resource)
                    view = None
                    for i in range(-1, rounds):
                        page = await context.new_page()
                        first, view = await _first_draw(page, host_origin, sandbox_origin, resource, opened, plot)
                        size = await view.evaluate(
                            "[document.getElementById('map').clientWidth, document.getElementById('map').clientHeight]"
                        )
                        render = {"filename": plot, "width": size[0], "height": size[1]}
                        start = clock()
                        checked(await state.call_tool("debrief_render_plot", render), "debrief_render_plot")
                        rendered = clock() - start
                        start = clock()
                        checked(await base.call_tool("echo", {"text": "ping"}), "echo")
                        echoed = clock() - start
                        canvas = float(await view.evaluate("document.body.dataset.lastDrawMs"))
                        if i < 0:
                            out["cold"] = (first, view_calls[-1], rendered)
                        else:
                            for key, value in zip(
                                ("first", "view_data", "render", "canvas", "echo"),
                                (first, view_calls[-1], rendered, canvas / 1000, echoed),
                                strict=True,
                            ):
                                out[key].append(value)
                        if i < rounds - 1:
                            await page.close()
                    assert view is not None
                    data = answers[-1]
                    tracks = [f for f in data["features"] if f["kind"] == "track"]
                    out["shown"] = sum(f["points_shown"] for f in tracks)
                    out["total"] = sum(f["points_total"] for f in tracks)
                    out["cuts"] = [
                        (f["cuts_total"], f["cuts_shown"]) for f in data["features"] if f["kind"] == "sensor"
                    ]
                    out["size"] = size
                    bare = [{"lon": f["lon"], "lat": f["lat"], "color": f["color"]} for f in tracks]
                    await view.evaluate(BARE_DRAW, bare)
                    await view.evaluate(SLIDER, [3, False])  # warm both paths
                    await view.evaluate(SLIDER, [3, True])
                    ours: list[float] = []
                    floor: list[float] = []
                    for _ in range(moves):  # alternated move by move
                        ours += await view.evaluate(SLIDER, [1, False])
                        floor += await view.evaluate(SLIDER, [1, True])
                    out["slider"], out["bare"] = [x / 1000 for x in ours], [x / 1000 for x in floor]
                    out["frame"] = [await view.evaluate(NEXT_FRAME) / 1000 for _ in range(max(3, moves // 5))]
                finally:
                    await browser.close()
    return out


async def _first_draw(
    page: Any, host_origin: str, sandbox_origin: str, resource: Any, opened: dict[str, Any], plot: str = PLOT
) -> tuple[float, Any]:
    """A fresh host page given the tool result; seconds from its delivery to the view's first draw, and the view."""
    from tests._browser import CONTEXT, start_view, until

    await page.goto(f"{host_origin}/host.html")
    view = await start_view(page, sandbox_origin, resource, opened, plot, CONTEXT)
    drawn = await until(
        lambda: view.evaluate(
            "document.body.dataset.draws ? [Number(document.body.dataset.draws), Number(document.body.dataset.lastDrawAt)] : null"
        ),
        "the view drew",
        seconds=600,
    )
    if drawn[0] != 1:
        raise RuntimeError(f"the view drew {drawn[0]} times before it was read: the first draw's time is lost")
    sent = await page.evaluate("window.resultSentAt")
    return (drawn[1] - sent) / 1000, view


def collect(tmp: Path, quick: bool) -> Section:
    """The view's figures, each beside its baseline; the workspace under ``tmp``."""
    import anyio

    points, rounds, moves = SIZES[quick]
    section = Section("debrief-state-mcp")
    why = _missing()
    if why is not None:
        section.notes.append(f"view figures skipped: {why}")
        return section
    ws = tmp / "ws-view"
    ws.mkdir()
    plot_bytes = section.stage("million-point plot", lambda: make_plot(ws / PLOT, points))
    got = section.stage("view", lambda: anyio.run(_measure, ws, rounds, moves))
    p50 = {key: statistics.median(got[key]) for key in ("first", "view_data", "render", "canvas", "echo")}
    head = f"view first draw, {points:,}-point plot ({plot_bytes / 1e6:.0f} MB), p50 of {rounds}"
    section.add(f"{head}, vs render_plot PNG", ms(p50["first"]), ms(p50["render"]), ratio(p50["first"], p50["render"]))
    section.add(
        "  same, its debrief_view_data call, vs render_plot PNG",
        ms(p50["view_data"]),
        ms(p50["render"]),
        ratio(p50["view_data"], p50["render"]),
    )
    section.add(
        "  same, its debrief_view_data call, vs echo",
        ms(p50["view_data"]),
        ms(p50["echo"]),
        ratio(p50["view_data"], p50["echo"]),
    )
    section.add(
        "  same, its canvas draw, vs the frame budget",
        ms(p50["canvas"]),
        ms(FRAME_MS / 1000),
        ratio(p50["canvas"], FRAME_MS / 1000),
    )
    cold_first, cold_view, cold_render = got["cold"]
    section.add(
        "  first of the run (the server's first view_data and render), vs render_plot's first",
        ms(cold_first),
        ms(cold_render),
        ratio(cold_first, cold_render),
    )
    s50, s95 = harness.percentiles(got["slider"])
    b50, b95 = harness.percentiles(got["bare"])
    f50 = statistics.median(got["frame"])
    section.add(
        f"view slider move redraw p50, {moves} moves, vs bare canvas of the same points",
        ms(s50),
        ms(b50),
        ratio(s50, b50),
    )
    section.add("  same p95", ms(s95), ms(b95), ratio(s95, b95))
    section.add(
        "  slider move to the next frame painted p50, vs the frame budget",
        ms(f50),
        ms(FRAME_MS / 1000),
        ratio(f50, FRAME_MS / 1000),
    )
    section.target(
        "view slider redraw within a frame",
        s95 * 1000 < FRAME_MS,
        f"p95 {ms(s95)} (p50 {ms(s50)}; budget {FRAME_MS:.1f} ms)",
    )
    section.notes.append(
        f"view: {TRACKS} generated tracks, {got['total']:,} points, of which the view drew {got['shown']:,} "
        f"(its point budget); debrief_view_data answer {got['chars']:,} characters; canvas {got['size'][0]}x"
        f"{got['size'][1]} CSS px, render_plot at the same size; first of the run: view_data {ms(cold_view)}; "
        "the host page gets each answer as JSON text from Python through Playwright (CDP) and parses it, as a host "
        "parses its server's lines"
    )
    _cuts_figures(section, ws, points, got, quick)
    return section


def _cuts_figures(section: Section, ws: Path, points: int, plain_run: dict[str, Any], quick: bool) -> None:
    """The same view with a sensor's cuts, beside the run without them."""
    import anyio

    cuts = CUTS[quick]
    rounds, moves = max(1, SIZES[quick][1] // 2), SIZES[quick][2]
    plot_bytes = section.stage(f"plot with {cuts:,} cuts", lambda: add_sensor(ws / PLOT, cuts))
    got = section.stage("view with cuts", lambda: anyio.run(_measure, ws, rounds, moves, CUTS_PLOT))
    head = f"view with a sensor of {cuts:,} cuts ({plot_bytes / 1e6:.0f} MB)"
    for key, what in (
        ("first", "first draw"),
        ("view_data", "its debrief_view_data call"),
        ("canvas", "its canvas draw"),
    ):
        ours, base = statistics.median(got[key]), statistics.median(plain_run[key])
        section.add(f"{head}: {what} p50, vs the plot without it", ms(ours), ms(base), ratio(ours, base))
    s50, s95 = harness.percentiles(got["slider"])
    b50, b95 = harness.percentiles(plain_run["slider"])
    section.add(f"  slider move redraw p50, {moves} moves, vs without the cuts", ms(s50), ms(b50), ratio(s50, b50))
    section.add("  with the cuts: slider p95", ms(s95), ms(b95), ratio(s95, b95))
    section.target(
        f"view slider redraw with {cuts:,} cuts within a frame",
        s95 * 1000 < FRAME_MS,
        f"p95 {ms(s95)} (p50 {ms(s50)}; budget {FRAME_MS:.1f} ms)",
    )
    ((total, shown),) = got["cuts"]
    cap = max(Limits.from_env().result_chars, Limits.from_env().answer_chars)  # debrief_view_data's own cap
    section.target(
        f"the view data with {cuts:,} cuts within the answer cap",
        got["chars"] <= cap,
        f"{got['chars']:,} characters (cap {cap:,}; without the cuts {plain_run['chars']:,})",
    )
    section.notes.append(
        f"view with cuts: {points:,} points and {total:,} cuts, of which {shown:,} cuts and "
        f"{got['shown']:,} points were sent (they share the point budget, a cut weighing the numbers it sends); "
        "at a time the view draws the cuts of the 30 minutes up to it, at most 60"
    )


def main() -> None:
    harness.script_main("debrief-state-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
