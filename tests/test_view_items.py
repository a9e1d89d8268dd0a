"""The live view's reading of a plot: ``read_items(track_lines=False)`` leaves out only the
per-point tuples of tracks it never draws from, on every real sample plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debrief_calc.plots.render._items import read_items
from debrief_calc.state.view.data import view_data
from tests.conftest import DATA

PLOTS = sorted((DATA / "plots").glob("*.json"))


def _features(path: Path) -> list[dict[str, Any]]:
    features: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["features"]
    return features


@pytest.mark.parametrize("path", PLOTS, ids=[p.name for p in PLOTS])
def test_without_track_lines_only_the_lines_of_timed_tracks_go(path: Path) -> None:
    features = _features(path)
    full, light = read_items(features, set()), read_items(features, set(), track_lines=False)
    assert [(i.id, i.kind, i.colour, i.active, i.ship, i.at) for i in light] == [
        (i.id, i.kind, i.colour, i.active, i.ship, i.at) for i in full
    ]
    for a, b in zip(full, light, strict=True):
        assert (a.rings, a.points) == (b.rings, b.points)
        if a.track is None:
            assert b.track is None and b.lines == a.lines
        else:
            assert b.track is not None and b.lines == []
            assert np.array_equal(a.track.t, b.track.t) and np.array_equal(a.track.lon, b.track.lon)
            # what the view draws of it is what the picture's lines hold, point for point
            assert list(zip(b.track.lon.tolist(), b.track.lat.tolist(), strict=True)) == [
                p for line in a.lines for p in line
            ]


def test_a_track_without_usable_times_is_still_drawn_as_a_line() -> None:
    line = [[-4.0, 50.0], [-3.9, 50.1], [-3.8, 50.0]]
    feature = {
        "type": "Feature",
        "id": "t-1",
        "geometry": {"type": "LineString", "coordinates": line},
        "properties": {"dataType": "track", "name": "NO TIMES", "timestamps": ["not a time"] * 3},
    }
    (item,) = read_items([feature], set(), track_lines=False)
    assert item.track is None and item.lines == [[tuple(p) for p in line]]
    (drawn,) = view_data(
        [feature], filename="x.plot.json", revision="r", title="x", time_state=None, viewport=None, selection=[]
    )["features"]
    assert (drawn["lon"], drawn["lat"], drawn["t"], drawn["points_total"]) == (
        [-4.0, -3.9, -3.8],
        [50.0, 50.1, 50.0],
        None,
        3,
    )


def test_the_view_counts_every_fix_of_the_sample_plot() -> None:
    features = _features(DATA / "plots" / "large-sample.plot.json")
    data = view_data(
        features,
        filename="large-sample.plot.json",
        revision="r",
        title="t",
        time_state=None,
        viewport=None,
        selection=[],
        max_points=500,
    )
    tracks = {f["id"]: f for f in data["features"] if f["kind"] == "track"}
    in_file = {
        str(f["id"]): len(f["geometry"]["coordinates"])
        for f in features
        if (f.get("properties") or {}).get("dataType") == "track"
    }
    assert {k: v["points_total"] for k, v in tracks.items()} == in_file
    assert all(v["points_shown"] <= v["points_total"] for v in tracks.values())


def test_the_view_data_of_a_revision_is_read_once_and_the_selection_always(tmp_path: Path) -> None:
    """A second view of the same plot revision comes from memory (a million-point track is read
    once per revision), while the selection, kept in the store outside the revision, is always
    read afresh; a change to the plot is a new revision, read anew."""
    import shutil

    from debrief_calc.state import service as service_module
    from debrief_calc.state.service import StateService
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(DATA / "plots" / "large-sample.plot.json", ws / "a.plot.json")
    svc = StateService(ArtifactStore(ws / ".llmem", ws), Limits())
    first = svc.view("a.plot.json", None, 2_000)
    key = next(k for k in service_module._VIEWS if k[0].endswith("a.plot.json") and k[1] == first["revision"])
    again = svc.view("a.plot.json", None, 2_000)
    assert again == first and service_module._VIEWS[key]["features"] is not None
    track = next(f["id"] for f in first["features"] if f["kind"] == "track")
    svc.set_selection([track], "a.plot.json")
    assert svc.view("a.plot.json", None, 2_000)["selection"] == [track]  # same revision, new selection
    svc.set_properties([track], {"name": "RENAMED", "shortName": None}, "a.plot.json", None)
    changed = svc.view("a.plot.json", None, 2_000)
    assert changed["revision"] != first["revision"]
    assert "RENAMED" in {f["name"] for f in changed["features"]}
