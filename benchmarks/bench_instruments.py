"""debrief-calc-mcp's analyst's instruments (issue 17), each beside its baseline in the same run.

    python benchmarks/bench_instruments.py [--quick] [--tmp DIR]

One plot of two 1,000,000-fix ships (``bench_calc_domain.patrol``: 1 s fixes, ISO-8601
``properties.timestamps``, 12 kn and 10 kn box patrols with GPS-like noise; 240 MB with Debrief's
two-space indent), its current time half-way through. Every call goes to the real
``debrief-calc-mcp`` over stdio (the first call reads and parses the plot, then warm calls
alternate with the bare ``MCPServer`` echo); the figures beside their baselines:

1. ``tote`` at one time (the plot's current time) on both tracks by plot reference: warm p50 vs
   ONE ``Geodesic.WGS84.Inverse`` (the median of 2,000 single calls, positions at that time): the
   tote answers one time, so it should cost that plus a run's fixed costs, not a pass over the
   tracks. Also ``CalcService.run`` in this process (no MCP, no stdio; it keeps the result in the
   store, with an fsync) and the tote's own work (``executor.run`` on the plot's features) against
   that inverse; and the tote's own work against what it no longer does: reading both whole tracks
   (``track_data`` + legs), 2.3 s on this machine before it bisected the times.
2. ``track-legs`` on one 1,000,000-fix track by plot reference, at its defaults (``smoothing_s``
   reads the noisy 1 s fixes over about a minute): warm p50 vs a bare numpy pass over
   the same arrays (``np.diff`` of times and positions, local east/north metres, ``hypot`` and
   ``arctan2``: every leg's course and speed, no legs found, no reading of the plot).
3. ``range-bearing`` on both tracks by plot-feature refs (``{"ref":
   "debrief-state:plots/<file>#<id>"}``) windowed to one hour (``time_start``/``time_end``):
   3,600 samples at the primary's fixes, warm p50 vs a bare GeographicLib loop over the same
   sample times (each ship interpolated on its geodesic leg, then ``Inverse``).
4. ``render_series`` of a stored 10,000-sample range-bearing result (``{"ref":
   "debrief-calc:results/<id>"}``; three panels, 900 px): warm p50 vs a bare Pillow drawing of the
   same points (three polylines in panels of the same size, PNG-encoded; no axes, labels or CPA).
5. ``render_series`` with ``parameters.picture: "relative-motion"`` of the two ships by plot-feature
   refs windowed to 10,000 of the primary's fixes (issue 22 §4: range-bearing run, the curve between
   fixes of both ships, passes and the CPA, the 800 x 800 picture): warm p50, and the same in process
   (no MCP), vs a bare Pillow drawing of the same 10,000 segments (the relative positions of the
   series' samples, one ``ImageDraw.line`` on a canvas of the same size, PNG-encoded).
6. ``closest-approach`` (the least range and every pass, between fixes) and ``close-quarters``
   (every period within 2 nm, entry and exit between fixes) on both whole tracks by plot reference
   (issue 22): warm p50 vs ONE ``Geodesic.WGS84.Inverse`` per fix time of either ship (2,000,000),
   the least any GeographicLib loop over the fixes costs (no interpolation, no search), timed over
   20,000 of them and extrapolated; and the tools' own work on the tracks already read (the range's
   shape over every fix, the passes and the periods solved on the geodesic) against the same.

Results are ratios (ours / baseline time): these machines are shared and noisy. ``--quick``
shrinks every size for a smoke run; its figures mean nothing.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from geographiclib.geodesic import Geodesic

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section, ms, ratio, s
from bench_calc import T0, RunTimes, inprocess_runs, service, succeeded, tool_runs_async, write_plot
from bench_calc_domain import best_of, glib_position, patrol

from debrief_calc.analysis import executor
from debrief_calc.analysis.common import Legs, read_tracks
from debrief_calc.tracks.features import TrackData, iso, track_data

GEOD = Geodesic.WGS84
PLOT = "instruments.plot.json"
SHIPS = ["ship-2", "ship-3"]  # as bench_calc_domain.patrol names them by seed
RB_SAMPLES = 3_600  # range-bearing's window: this many of the primary's 1 s fixes
CLOSE_NM = 2.0  # close-quarters' threshold: the patrols come within it a few times a day
INVERSE_SAMPLE = 20_000  # fixes timed for the one-Inverse-per-fix baseline (then extrapolated)
SERIES_SAMPLES = 10_000  # render_series's series
#: track-legs at its defaults: at 1 s fixes 0.5 m of noise swings a segment's course ~7 degrees, but
#: smoothing_s (60 s) reads the motion over a minute, where it is a tenth of a degree
LEGS: dict[str, Any] = {}


@dataclass(frozen=True)
class Sizes:
    quick: bool = False
    points: int = 1_000_000
    calls: int = 7  # warm calls timed after the first
    inverses: int = 2_000
    passes: int = 5  # numpy / Pillow baseline runs


FULL = Sizes()
QUICK = Sizes(True, points=24_000, calls=2, inverses=200, passes=2)


def _median_of(fn: Callable[[], Any], runs: int) -> float:
    return statistics.median(best_of(fn, runs)[0])


# -- the plot -------------------------------------------------------------------------------------


@dataclass
class Plot:
    ws: Path
    bytes: int
    tracks: list[dict[str, Any]]  # the two track features, as written
    mid: float  # the plot's current time: the tote's


def make_plot(tmp: Path, sizes: Sizes) -> Plot:
    ws = tmp / "ws_instruments"
    ws.mkdir()
    a = patrol(sizes.points, 12.0, lat0=50.0, lon0=-4.0, t0=T0, seed=2, box_s=3600)
    b = patrol(sizes.points, 10.0, lat0=50.05, lon0=-3.95, t0=T0 + 0.5, seed=3, box_s=5400)
    mid = T0 + sizes.points // 2 + 0.25  # between fixes of both ships
    size = write_plot(ws / PLOT, [a, b], 50.0, -4.0, current=iso(mid))
    return Plot(ws, size, [a, b], mid)


def _window(center: float, samples: int) -> tuple[float, float]:
    """A window around ``center`` holding ``samples`` of the primary's 1 s fixes, edges on fixes."""
    start = float(round(center) - samples // 2)
    return start, start + samples - 1


def _iso_window(center: float, samples: int) -> tuple[str, str]:
    start, end = _window(center, samples)
    return iso(start), iso(end)


# -- the calls, over stdio ------------------------------------------------------------------------


def _calls(plot: Plot) -> list[tuple[str, dict[str, Any]]]:
    refs = [{"ref": f"debrief-state:plots/{PLOT}#{fid}"} for fid in SHIPS]
    start, end = _iso_window(plot.mid, RB_SAMPLES)
    both = {"filename": PLOT, "feature_ids": SHIPS}
    return [
        ("run_tool", {"tool": "tote", "plot": both}),
        ("run_tool", {"tool": "track-legs", "plot": {"filename": PLOT, "feature_ids": SHIPS[:1]}, "parameters": LEGS}),
        ("run_tool", {"tool": "range-bearing", "features": refs, "time_start": start, "time_end": end}),
        ("run_tool", {"tool": "closest-approach", "plot": both}),
        ("run_tool", {"tool": "close-quarters", "plot": both, "parameters": {"threshold": CLOSE_NM}}),
    ]


def _relative_args(plot: Plot) -> dict[str, Any]:
    """render_series's relative-motion picture of the two ships over 10,000 of the primary's fixes."""
    start, end = _iso_window(plot.mid, SERIES_SAMPLES)
    refs = [{"ref": f"debrief-state:plots/{PLOT}#{fid}"} for fid in SHIPS]
    return {"features": refs, "time_start": start, "time_end": end, "parameters": {"picture": "relative-motion"}}


async def _stdio_runs(plot: Plot, n: int) -> tuple[list[RunTimes], tuple[RunTimes, RunTimes], dict[str, Any]]:
    """The run_tool calls, then a 10,000-sample range-bearing kept by the server and its picture, and
    the relative-motion picture of the same 10,000 fixes."""
    calls = _calls(plot)
    start, end = _iso_window(plot.mid, SERIES_SAMPLES)
    series_args = {
        "tool": "range-bearing",
        "plot": {"filename": PLOT, "feature_ids": SHIPS},
        "time_start": start,
        "time_end": end,
        "parameters": {"max_samples": SERIES_SAMPLES},
    }
    runs = await tool_runs_async(plot.ws, [*calls, ("run_tool", series_args)], n)
    series = runs.pop()
    result = series.answer["features"][0]
    ref = {"ref": f"debrief-calc:results/{result['id']}"}
    render, relative = await tool_runs_async(
        plot.ws, [("render_series", {"features": [ref]}), ("render_series", _relative_args(plot))], n
    )
    return runs, (render, relative), result


# -- the baselines ----------------------------------------------------------------------------------


def one_inverse(a: TrackData, b: TrackData, when: float, n: int) -> float:
    """The median of ``n`` single ``Geodesic.WGS84.Inverse`` calls between the ships at ``when``."""
    (lat1, lon1), (lat2, lon2) = glib_position(a, when), glib_position(b, when)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        GEOD.Inverse(lat1, lon1, lat2, lon2)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def inverse_per_fix(a: TrackData, b: TrackData, sample: int) -> tuple[float, int]:
    """Seconds for one ``Geodesic.WGS84.Inverse`` (distance only) per fix time of either ship, timed
    over ``sample`` pairs of fixes spread over the tracks and extrapolated; and how many fix times."""
    fixes = int(np.union1d(a.t, b.t).size)
    n = min(len(a), len(b))
    idx = np.linspace(0, n - 1, min(sample, n)).astype(int).tolist()
    lat_a, lon_a, lat_b, lon_b = a.lat.tolist(), a.lon.tolist(), b.lat.tolist(), b.lon.tolist()
    t0 = time.perf_counter()
    for i in idx:
        GEOD.Inverse(lat_a[i], lon_a[i], lat_b[i], lon_b[i], Geodesic.DISTANCE)
    return (time.perf_counter() - t0) * fixes / len(idx), fixes


def own_passes_work(a: TrackData, b: TrackData) -> Callable[[], Any]:
    """closest-approach's and close-quarters' own work on the tracks already read: the range's shape
    over every fix time, the least range, every pass and every period within CLOSE_NM, solved."""
    from debrief_calc.analysis.close_quarters import within
    from debrief_calc.analysis.common import overlap
    from debrief_calc.analysis.passes import PassRule, pass_entries, range_shape
    from debrief_calc.analysis.range_profile import Profile

    span = overlap(a, b)
    assert span is not None

    def work() -> tuple[int, int]:
        profile = Profile(a, b, span)
        entries, _ = pass_entries(range_shape(profile, PassRule()), profile.least(), "nm")
        return len(entries), len(within(profile, CLOSE_NM * 1852.0))

    return work


def numpy_legs(track: TrackData) -> tuple[np.ndarray, np.ndarray]:
    """Every leg's course (degrees) and speed (m/s): a bare local-metres numpy pass."""
    lat, lon, t = track.lat, track.lon, track.t
    north = np.diff(lat) * 111_132.0
    east = np.diff(lon) * (111_320.0 * np.cos(np.radians((lat[:-1] + lat[1:]) * 0.5)))
    course = np.degrees(np.arctan2(east, north)) % 360.0
    with np.errstate(divide="ignore", invalid="ignore"):
        speed = np.hypot(east, north) / np.diff(t)
    return course, speed


def glib_series(a: TrackData, b: TrackData, start: float, end: float) -> tuple[float, int]:
    """Seconds for GeographicLib at every fix of ``a`` from ``start`` to ``end``; how many."""
    times = a.t[(a.t >= start) & (a.t <= end)].tolist()
    t0 = time.perf_counter()
    for when in times:
        p, q = glib_position(a, when), glib_position(b, when)
        GEOD.Inverse(p[0], p[1], q[0], q[1])
    return time.perf_counter() - t0, len(times)


def pillow_series(result: dict[str, Any], width: int, height: int) -> Callable[[], bytes]:
    """A bare Pillow drawing of the result's range, bearing and bearing rate: three polylines in
    panels of ``width`` x ``height`` / 3, PNG-encoded."""
    from PIL import Image, ImageDraw

    from debrief_calc.tracks.features import parse_times

    series = result["properties"]["series"]
    t = parse_times(series["time"])
    columns = [np.array(series[q], dtype=float) for q in ("range", "bearing", "bearing_rate")]
    panel = height // len(columns)
    x = (t - t[0]) / max(float(t[-1] - t[0]), 1.0) * (width - 1)
    lines = []
    for k, v in enumerate(columns):
        low, high = float(np.nanmin(v)), float(np.nanmax(v))
        y = k * panel + (panel - 1) * (1.0 - (v - low) / max(high - low, 1e-9))
        lines.append(np.column_stack((x, y)).ravel().tolist())

    def draw() -> bytes:
        img = Image.new("RGB", (width, height), (255, 255, 255))
        pen = ImageDraw.Draw(img)
        for line in lines:
            pen.line(line, fill=(0, 0, 160), width=1)
        out = io.BytesIO()
        img.save(out, format="PNG")
        return out.getvalue()

    return draw


def pillow_relative(result: dict[str, Any], width: int, height: int) -> Callable[[], bytes]:
    """A bare Pillow drawing of the series' relative track: the secondary's east and north of the
    primary (range x sin and cos of the bearing) at each sample, scaled to the canvas, one
    ``ImageDraw.line`` through them, PNG-encoded."""
    from PIL import Image, ImageDraw

    series = result["properties"]["series"]
    rng = np.array(series["range"], dtype=float)
    brg = np.radians(np.array(series["bearing"], dtype=float))
    east, north = rng * np.sin(brg), rng * np.cos(brg)
    k = (min(width, height) / 2 - 10) / max(float(np.nanmax(rng)), 1e-9)
    line = np.column_stack((width / 2 + east * k, height / 2 - north * k)).ravel().tolist()

    def draw() -> bytes:
        img = Image.new("RGB", (width, height), (255, 255, 255))
        ImageDraw.Draw(img).line(line, fill=(0, 0, 160), width=2)
        out = io.BytesIO()
        img.save(out, format="PNG")
        return out.getvalue()

    return draw


def relative_in_process(svc: Any, args: dict[str, Any]) -> Callable[[], Any]:
    """render_series's relative-motion picture in this process (CalcService, no MCP, no stdio)."""
    from debrief_calc.calc.series import render_series

    return lambda: render_series(svc, **args)


# -- the figures -----------------------------------------------------------------------------------


def bench(tmp: Path, sizes: Sizes, plot: Plot, section: Section) -> None:
    import anyio

    n = sizes.calls
    (tote, legs, rb, cpa, close), (render, relative), series = anyio.run(_stdio_runs, plot, n)
    a, b = (track_data(f) for f in plot.tracks)
    mb = f"plot {plot.bytes / 1e6:.0f} MB"

    inverse = one_inverse(a, b, plot.mid, sizes.inverses)
    svc = service(plot.ws, tmp / "store_inproc")
    tote_ref = {"filename": PLOT, "feature_ids": SHIPS}
    tote_inproc = statistics.median(inprocess_runs(svc, "tote", tote_ref, n))
    features = svc.plot_features(tote_ref)
    own = _median_of(
        lambda: executor.run(svc.registry, "tote", features, {}, current_time=plot.mid), max(5, sizes.calls)
    )
    whole = _median_of(lambda: [Legs(t) for t in read_tracks(plot.tracks)], max(1, sizes.passes // 2))
    label = f"tote 2 x {sizes.points:,} fixes at one time ({mb})"
    _add_run(section, label, tote, "one GeographicLib Inverse *1", inverse)
    section.add(
        "  tote in process (CalcService.run), vs one Inverse", ms(tote_inproc), ms(inverse), ratio(tote_inproc, inverse)
    )
    section.add(
        "  the tote's own work (executor.run: no store, no MCP), vs one Inverse",
        ms(own),
        ms(inverse),
        ratio(own, inverse),
    )
    section.add(
        "  the tote's own work, vs reading both whole tracks (the tote before)", ms(own), s(whole), ratio(own, whole)
    )

    bare = _median_of(lambda: numpy_legs(a), sizes.passes)
    _add_run(section, f"track-legs {sizes.points:,} fixes", legs, "numpy diff/arctan2 pass *2", bare)

    glib, samples = glib_series(a, b, *_window(plot.mid, RB_SAMPLES))
    _add_run(section, f"range-bearing on refs, windowed to {samples:,} samples", rb, "GeographicLib loop *3", glib)

    shown = render.answer
    series_run = svc.run(
        "range-bearing", None, tote_ref, None, {"max_samples": SERIES_SAMPLES}, *_iso_window(plot.mid, SERIES_SAMPLES)
    )
    (full,) = svc.expand_refs([{"ref": f"debrief-calc:results/{series_run['features'][0]['id']}"}])
    check = full["properties"]["sample_count"], series["properties"]["sample_count"], shown["samples"]
    if len(set(check)) != 1:
        raise RuntimeError(f"the series drawn and the one in process differ: {check} samples")
    pillow = _median_of(pillow_series(full, shown["width"], shown["height"]), sizes.passes)
    _add_run(section, f"render_series {shown['samples']:,} samples", render, "bare Pillow lines *4", pillow)

    drawn = relative.answer
    bare_relative = _median_of(pillow_relative(full, drawn["width"], drawn["height"]), sizes.passes)
    label = f"render_series relative-motion, {SERIES_SAMPLES:,} fixes by ref"
    _add_run(section, label, relative, "bare Pillow lines *6", bare_relative)
    inproc = _median_of(relative_in_process(svc, _relative_args(plot)), max(3, sizes.passes))
    section.add(
        "  same in process (no MCP), vs bare Pillow lines *6",
        ms(inproc),
        ms(bare_relative),
        ratio(inproc, bare_relative),
    )

    per_fix, fixes = inverse_per_fix(a, b, min(INVERSE_SAMPLE, sizes.points))
    base_name = f"one GeographicLib Inverse per fix ({fixes:,}) *5"
    _add_run(section, f"closest-approach 2 x {sizes.points:,} fixes, every pass", cpa, base_name, per_fix)
    _add_run(section, f"close-quarters 2 x {sizes.points:,} fixes within {CLOSE_NM:g} nm", close, base_name, per_fix)
    own_time, (pass_count, period_count) = best_of(own_passes_work(a, b), sizes.passes)
    own_passes = statistics.median(own_time)
    section.add(
        "  the passes' and close quarters' own work (tracks read), vs one Inverse per fix *5",
        s(own_passes),
        s(per_fix),
        ratio(own_passes, per_fix),
    )
    cpa_props = cpa.answer["features"][0]["properties"]
    close_props = close.answer["features"][0]["properties"]
    if (cpa_props["pass_count"], close_props["period_count"]) != (pass_count, period_count):
        raise RuntimeError("the passes or periods over stdio differ from those in process")

    t1 = tote.answer["features"][0]["properties"]
    legs_found = legs.answer["features"][0]["properties"]
    rb_props = rb.answer["features"][0]["properties"]
    section.notes += [
        f"results: tote {t1['range']} yd on {t1['bearing']} deg at {t1['time']}; track-legs "
        f"{legs_found['leg_count']} legs ({LEGS}); range-bearing "
        f"{rb_props['sample_count']} samples, window {rb.answer.get('window', {}).get('start')} to "
        f"{rb.answer.get('window', {}).get('end')}; render_series {shown['width']}x{shown['height']} px, "
        f"{shown['bytes']:,} bytes",
        f"*1 the median of {sizes.inverses:,} single Geodesic.WGS84.Inverse calls between the two ships' positions "
        "at the tote's time (the positions found beforehand, untimed)",
        "*2 courses and speeds of every leg in local metres (np.diff, cos, hypot, arctan2) over the arrays already "
        "read: no geodesics, no legs found, no reading of the plot",
        "*3 both ships interpolated on their geodesic legs (InverseLine.Position) and Inverse, at each of the same "
        "sample times, in a Python loop",
        "*4 three polylines of the same points in panels of the same size, PNG-encoded: no axes, ticks, labels, "
        "title or CPA mark",
        f"*6 one ImageDraw.line through the {SERIES_SAMPLES:,} relative positions of the series' samples "
        f"(range x sin, cos bearing) on a {drawn['width']}x{drawn['height']} canvas, PNG-encoded: no rings, ticks, "
        f"labels, marks, nor the range-bearing run and the {drawn['curve']['samples']:,}-point curve between fixes "
        "that render_series computes first",
        f"*5 Geodesic.WGS84.Inverse (distance only) between the ships' fixes in a Python loop over "
        f"{min(INVERSE_SAMPLE, sizes.points):,} evenly spread pairs, extrapolated to all {fixes:,} fix times of either "
        "ship: the least a GeographicLib pass over the fixes costs, without interpolating between them or searching",
        f"results: least range {cpa_props['range']} nm at {cpa_props['time']}, {cpa_props['pass_count']} passes; "
        f"{close_props['period_count']} periods within {CLOSE_NM:g} nm, {close_props['total_duration_s']} s in all",
    ]


def _add_run(section: Section, label: str, run: RunTimes, base_name: str, base: float) -> None:
    echo = statistics.median(run.echo)
    warm = statistics.median(run.warm)
    section.add(f"{label}: first call, vs echo", s(run.first), ms(echo), ratio(run.first, echo))
    section.add(f"{label}: warm p50, vs echo", ms(warm), ms(echo), ratio(warm, echo))
    section.add(f"  same warm p50, vs {base_name}", ms(warm), ms(base), ratio(warm, base))
    _ = succeeded(run.answer, label)


def collect(tmp: Path, quick: bool) -> Section:
    """The instruments' figures, each beside its baseline; the plot under ``tmp``."""
    sizes = QUICK if quick else FULL
    section = Section("debrief-calc-mcp")
    plot: Plot = section.stage("instruments plot", lambda: make_plot(tmp, sizes))
    section.stage("instruments", lambda: bench(tmp, sizes, plot, section))
    return section


def main() -> None:
    harness.script_main("debrief-calc-mcp", __doc__, collect)


if __name__ == "__main__":
    main()
