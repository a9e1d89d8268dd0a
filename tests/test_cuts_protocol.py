"""Sensor cuts through the real protocol in both eras, in process (the stdio path is the view's
test, ``tests/test_plot_view_cuts.py``): ``debrief_render_plot`` answers each sensor's cuts (in
all, active, drawn, the selected sensor's times) and draws none of a sensor hidden with
``debrief_set_properties``; ``debrief_view_data`` gives the view a sensor's cuts and lines, a
target solution's ellipses and the hidden features; the view data's budget counts cuts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from debrief_calc.state.server import build_server
from debrief_calc.state.view.data import view_data
from llmem.core.config import Limits, ServerConfig
from tests.conftest import MODES, call
from tests.test_render_cuts import CUTS, T0, host, on_host, sensor
from tests.test_render_cuts import plot as collection

pytestmark = pytest.mark.anyio

PLOT = "towed.plot.json"
SOLUTION = {
    "type": "Feature",
    "id": "tma",
    "geometry": {"type": "LineString", "coordinates": [on_host(0), on_host(600)]},
    "properties": {
        "dataType": "track",
        "trackType": "tma-solution",
        "name": "TMA",
        "timestamps": ["2024-05-01T10:00:00Z", "2024-05-01T10:10:00Z"],
        "ellipses": [None, {"orientation_deg": 10.0, "semiMajorYd": 2500.0, "semiMinorYd": 900.0}],
    },
}


@pytest.fixture
def plotted(workspace: Path) -> Path:
    doc = collection(host(), sensor(CUTS), SOLUTION)
    doc["features"].append(
        {
            "type": "Feature",
            "id": "debrief-time-metadata",
            "geometry": None,
            "properties": {
                "dataType": "metadata",
                "metadataType": "time",
                "current": "2024-05-01T10:10:00Z",
                "start": "2024-05-01T10:00:00Z",
                "end": "2024-05-01T10:20:00Z",
            },
        }
    )
    (workspace / PLOT).write_text(json.dumps(doc), encoding="utf-8")
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, plotted: Path) -> AsyncIterator[Client]:
    async with Client(
        build_server(ServerConfig("debrief-state-mcp", plotted, limits=Limits())), mode=request.param
    ) as c:
        yield c


async def test_the_render_answers_the_cuts_and_hides_a_hidden_sensor(client: Client) -> None:
    failed, answer = await call(client, "debrief_set_selection", filename=PLOT, selectedIds=["towed"])
    assert not failed, answer
    failed, answer = await call(client, "debrief_render_plot", filename=PLOT, fit="all")
    assert not failed, answer
    (cuts,) = answer["cuts"]
    assert cuts["id"] == "towed" and cuts["host"] == "own" and cuts["cuts"] == 3
    assert (cuts["active"], cuts["drawn"], cuts["every"], cuts["ambiguous_drawn"], cuts["without_range"]) == (
        3,
        3,
        1,
        1,
        1,
    )
    assert cuts["no_range_length_nm"] > 0
    assert cuts["times"] == ["2024-05-01T10:01:00Z", "2024-05-01T10:05:00Z", "2024-05-01T10:09:00Z"]
    failed, answer = await call(client, "debrief_render_plot", filename=PLOT, time="2024-05-01T10:03:00Z")
    assert not failed and answer["cuts"][0]["active"] == 1
    failed, answer = await call(
        client, "debrief_set_properties", filename=PLOT, ids=["towed"], properties={"visible": False}
    )
    assert not failed, answer
    failed, answer = await call(client, "debrief_render_plot", filename=PLOT, fit="all")
    assert not failed and "cuts" not in answer


async def test_the_view_data_has_the_cuts_the_ellipses_and_the_hidden(client: Client) -> None:
    failed, answer = await call(client, "debrief_view_data", filename=PLOT)
    assert not failed, answer
    (drawn,) = [f for f in answer["features"] if f["kind"] == "sensor"]
    assert drawn["n"] == [0, 1, 2] and drawn["cuts_total"] == drawn["cuts_shown"] == 3
    assert drawn["t"] == [T0 + 60, T0 + 300, T0 + 540] and drawn["recent"] == 1800 and drawn["limit"] == 60
    assert drawn["amb"][:2] == [None, None] and drawn["amb"][2] is not None and drawn["r"][1] is None
    assert drawn["line"][0][:2] == pytest.approx(on_host(60), abs=1e-6)
    (solution,) = [f for f in answer["features"] if f["id"] == "tma"]
    assert len(solution["ellipses"]) == 1 and solution["ellipses"][0]["t"] == T0 + 600
    failed, answer = await call(
        client, "debrief_set_properties", filename=PLOT, ids=["towed"], properties={"visible": False}
    )
    failed, answer = await call(client, "debrief_view_data", filename=PLOT)
    assert not failed, answer
    assert [f for f in answer["features"] if f["id"] == "towed"] == [
        {"id": "towed", "name": "Towed", "color": "#ff00ff", "kind": "hidden", "of": "sensor"}
    ]


def test_the_view_budget_counts_cuts_and_thins_them_as_the_picture_does() -> None:
    many = [{"s": 2 * k, "b": float(k % 360)} for k in range(3000)]
    doc = collection(host(minutes=120), sensor(many))
    data = view_data(
        doc["features"],
        filename="x",
        revision="r",
        title="t",
        time_state=None,
        viewport=None,
        selection=[],
        max_points=1000,
    )
    track, cuts = data["features"]
    assert cuts["cuts_total"] == 3000 and cuts["cuts_shown"] < 3000 and cuts["n"][-1] == 2999
    # the budget shared in numbers sent: three a track point (lon, lat, t), five a cut and two a
    # point of its lines, counted in the answer itself
    sent = 5 * cuts["cuts_shown"] + sum(len(x) for x in cuts["line"] + cuts["amb"] if x is not None)
    assert track["points_shown"] == track["points_total"] == 121  # under a track's least share, all of it
    assert 0.8 * 3 * 1000 <= sent <= 3 * 1000  # the rest of the budget, most of it used
    step = cuts["every"]
    assert all(n % step == 0 for n in cuts["n"][:-1]) and cuts["n"][:3] == [0, step, 2 * step]


def test_at_the_plots_time_the_view_gets_the_cuts_the_picture_draws() -> None:
    from debrief_calc.plots.render import render_plot
    from debrief_calc.tracks.features import iso

    many = [{"s": 2 * k, "b": float(k % 360)} for k in range(3000)]
    doc = collection(host(minutes=120), sensor(many))
    q = T0 + 4001.0
    picture = render_plot(doc, current_time=q, selection=["towed"], fit="all")
    (drawn,) = picture.cuts
    data = view_data(
        doc["features"],
        filename="x",
        revision="r",
        title="t",
        time_state={"current": iso(q)},
        viewport=None,
        selection=[],
        max_points=1000,
    )
    cuts = next(f for f in data["features"] if f["kind"] == "sensor")
    assert cuts["now"] == {"t": q, "active": drawn.active, "every": drawn.every}
    near = [t for t in cuts["t"] if q - 1800 - 0.5 <= t <= q + 0.5]  # what the page finds active then
    expected = sum(1 for k in range(3000) if q - 1800 - 0.5 <= T0 + 2 * k < q + 0.5)  # the rule, read at a second
    assert near == drawn.times and drawn.active == expected and len(near) <= 60


@pytest.mark.parametrize("mode", MODES)
async def test_the_view_data_of_a_hundred_thousand_cuts_fits_the_answer_cap(workspace: Path, mode: str) -> None:
    # a cut a second for 100,000 s, half with an ambiguous bearing, none with a range (the longest lines)
    many = [{"s": k, "b": float(k % 360), **({"amb": float((k * 7) % 360)} if k % 2 else {})} for k in range(100_000)]
    doc = collection(host(minutes=100_000 // 60 + 1), sensor(many))
    (workspace / PLOT).write_text(json.dumps(doc), encoding="utf-8")
    limits = Limits()
    async with Client(build_server(ServerConfig("debrief-state-mcp", workspace, limits=limits)), mode=mode) as c:
        result = await c.call_tool("debrief_view_data", {"filename": PLOT})
    assert not result.is_error, result.content[0].text[:500]
    text = result.content[0].text
    assert len(text) <= max(limits.result_chars, limits.answer_chars)
    answer = json.loads(text)
    track, cuts = answer["features"]
    # how many of how many, every n-th and the newest
    assert cuts["cuts_total"] == cuts["cuts_usable"] == 100_000 and 2 < cuts["cuts_shown"] < 100_000
    step = cuts["every"]
    # a plot with no saved time is at the end of its data: the cuts the picture draws there (the
    # last half hour's) come whole, and of the rest every n-th
    drawn_now = 100_000 - 30 * 60 - 60
    assert cuts["n"][-1] == 99_999 and all(n % step == 0 for n in cuts["n"][:-1] if n < drawn_now)
    assert any(n % step for n in cuts["n"] if n >= drawn_now)
    assert len(cuts["n"]) == len(cuts["line"]) == len(cuts["amb"]) == cuts["cuts_shown"]
    assert 200 <= track["points_shown"] < track["points_total"]  # the track keeps at least its least share
