"""The PNG picture of a plot: size, colours, the selection halo, the time marks, the cost."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from debrief_calc.errors import ValidationFailed
from debrief_calc.features import parse_iso
from debrief_calc.state.render import HIGHLIGHT, render_plot_png

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "plots"
BLUE = (0, 0, 255)  # the stroke of track f-2 in large-sample


@pytest.fixture(scope="module")
def large() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "large-sample.plot.json").read_bytes())
    return data


def only(data: dict[str, Any], *keep: str) -> dict[str, Any]:
    return {**data, "features": [f for f in data["features"] if f["id"] in keep]}


def image(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def count(png: bytes, colour: tuple[int, int, int]) -> int:
    img = image(png)
    return sum(n for n, c in img.getcolors(img.width * img.height) if c == colour)


def test_png_of_the_requested_size(large: dict[str, Any]) -> None:
    png = render_plot_png(large)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert image(png).size == (1024, 768)
    assert image(render_plot_png(large, width=300, height=200)).size == (300, 200)


def test_tracks_are_drawn_in_their_colour(large: dict[str, Any]) -> None:
    with_track = count(render_plot_png(only(large, "f-2", "p-4")), BLUE)
    without = count(render_plot_png(only(large, "f-1", "p-4")), BLUE)
    assert with_track > 500
    assert without == 0


def test_selection_is_highlighted(large: dict[str, Any]) -> None:
    assert count(render_plot_png(large), HIGHLIGHT) == 0
    assert count(render_plot_png(large, selection=["f-1"]), HIGHLIGHT) > 500
    assert count(render_plot_png(large, selection=["p-3"]), HIGHLIGHT) > 50


def test_current_time_marks_each_track(large: dict[str, Any]) -> None:
    tracks = only(large, "f-2")
    plain = render_plot_png(tracks)
    t = parse_iso("2024-11-14T23:00:00Z")
    timed = render_plot_png(tracks, current_time=t)
    assert timed != plain
    assert count(timed, BLUE) > count(plain, BLUE) + 40  # the filled marker
    outside = render_plot_png(tracks, current_time=parse_iso("2030-01-01T00:00:00Z"))
    assert count(outside, BLUE) == count(plain, BLUE)  # no position outside the track's span


def test_viewport_changes_the_picture(large: dict[str, Any]) -> None:
    zoomed = render_plot_png(large, viewport={"bounds": [-5.0, 35.5, -4.0, 36.0]})
    assert zoomed != render_plot_png(large)
    assert render_plot_png(large, viewport=[-5.0, 35.5, -4.0, 36.0]) == zoomed
    across = render_plot_png(large, viewport=[170.0, -10.0, -170.0, 10.0])  # over the date line
    assert image(across).size == (1024, 768)
    with pytest.raises(ValidationFailed):
        render_plot_png(large, viewport=[0, 10, 1, 5])


def test_backdrops_metadata_and_broken_geometry_are_skipped(large: dict[str, Any]) -> None:
    data = only(large, "back-1", "back-2", "debrief-time-metadata", "debrief-viewport-metadata")
    data["features"].append({"type": "Feature", "id": "bad", "geometry": {"type": "LineString", "coordinates": 5}})
    data["features"].append("not a feature")
    png = render_plot_png(data)
    img = image(png)
    colours = {c for _, c in img.getcolors(img.width * img.height)}
    assert BLUE not in colours and HIGHLIGHT not in colours


def test_render_of_large_sample_is_quick(large: dict[str, Any]) -> None:
    t = parse_iso("2024-11-14T23:00:00Z")
    best = min(_timed(lambda: render_plot_png(large, selection=["f-1"], current_time=t)) for _ in range(3))
    assert best < 1.0  # the budget is 300 ms (see benchmarks/bench_state_domain.py); this catches blunders


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def test_importing_render_does_not_import_pillow() -> None:
    code = "import sys, debrief_calc.state.render; print('PIL' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
