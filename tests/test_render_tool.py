"""debrief_render_plot through the real protocol, in process: fit, size (a wide or tall area
padded to 2:1, the padded bounds answered and a note saying so), the range line and what the
answer says of it (unit, inset, bounds to zoom to), the features left out as not active, the
narrative entries no track holds, and that rendering never changes the plot."""

from __future__ import annotations

import base64
import io
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PIL import Image

from debrief_calc.formats.rep import parse_rep
from debrief_calc.state.server import build_server
from debrief_calc.tracks.times import parse_iso
from llmem.core.config import Limits, ServerConfig
from tests.conftest import MODES
from tests.conftest import call as call_tool

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent / "data" / "plots"
LARGE = "large-sample.plot.json"
MIDDLE = "2024-11-14T23:00:00Z"
EARLY = "2024-11-14T16:17:00Z"


@pytest.fixture
def plots(workspace: Path) -> Path:
    shutil.copy(DATA / LARGE, workspace / LARGE)
    return workspace


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, plots: Path) -> AsyncIterator[Client]:
    server = build_server(ServerConfig("debrief-state-mcp", plots, limits=Limits()))
    async with Client(server, mode=request.param) as c:
        yield c


async def render(client: Client, **args: Any) -> tuple[dict[str, Any], tuple[int, int]]:
    result = await client.call_tool("debrief_render_plot", {"filename": LARGE, **args})
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert answer is not None
    (image,) = [b for b in result.content if isinstance(b, types.ImageContent)]
    png = base64.b64decode(image.data)
    assert len(png) == answer["bytes"]
    return answer, Image.open(io.BytesIO(png)).size


async def fails(client: Client, code: str, **args: Any) -> dict[str, Any]:
    err, out = await call_tool(client, "debrief_render_plot", filename=LARGE, **args)
    assert err, out
    assert out["error"]["code"] == code, out
    return dict(out["error"])


async def test_fit_and_size_reported_and_the_plot_untouched(client: Client, plots: Path) -> None:
    before = (plots / LARGE).read_bytes()
    saved, size = await render(client, time=MIDDLE)
    assert saved["fit"] == "viewport" and size == (saved["width"], saved["height"])
    assert size[0] == 1024 and size[1] < 768  # the viewport is wider than 4:3
    everything, size = await render(client, fit="all", width=800, height=800)
    assert everything["fit"] == "all" and size == (everything["width"], everything["height"]) == (800, size[1])
    assert everything["bounds"][0] < saved["bounds"][0] and everything["bounds"][2] > saved["bounds"][2]
    assert (800 - 24) / (size[1] - 62) == pytest.approx(2.0, rel=0.02)  # 3.8:1 padded to 2:1, not a strip
    box, size = await render(client, fit=[-4.5, 35.4, -4.0, 36.4], show_future=False)
    w, s, e, n = box["bounds"]  # 1:2.5, padded east and west about its middle
    assert box["fit"] == "bounds" and w < -4.5 and e > -4.0 and (s, n) == pytest.approx((35.4, 36.4), abs=0.01)
    assert (w + e) / 2 == pytest.approx(-4.25, abs=1e-3)
    assert size[1] == 768 and size[0] < 768  # a tall area, a tall picture
    assert (plots / LARGE).read_bytes() == before  # rendering never writes the viewport (or anything)
    viewport = await call_tool(client, "debrief_get_viewport", filename=LARGE)
    assert viewport[1]["viewportState"]["bounds"] == pytest.approx(saved["bounds"], abs=0.01)


async def test_fit_selection_needs_a_selection(client: Client) -> None:
    error = await fails(client, "VALIDATION_FAILED", fit="selection")
    assert error["details"]["field"] == "fit"
    err, _ = await call_tool(client, "debrief_set_selection", filename=LARGE, selectedIds=["p-4"])
    assert not err
    chosen, _ = await render(client, fit="selection")
    assert chosen["fit"] == "selection" and chosen["selectedIds"] == ["p-4"]
    assert chosen["bounds"][2] - chosen["bounds"][0] < 0.1
    error = await fails(client, "VALIDATION_FAILED", fit=[0, 10, 1, 5])
    assert error["details"]["field"] == "fit"


async def test_range_line_between_two_tracks(client: Client) -> None:
    drawn, _ = await render(client, time=MIDDLE, cpa=["f-1", "f-2"])
    assert drawn["time"] == MIDDLE
    ranged = drawn["range"]
    assert ranged["between"] == ["f-1", "f-2"] and ranged["time"] == MIDDLE
    assert (ranged["unit"], ranged["text"], ranged["inset"]) == ("nm", "21.75 nm", False)  # 28 nm is not in yards
    assert ranged["value"] == pytest.approx(21.752, abs=0.001)
    w, s, e, n = ranged["cpa_bounds"]
    assert w < e and s < n and (e - w) < 2 and (n - s) < 2
    zoomed, _ = await render(client, time=MIDDLE, cpa=["f-1", "f-2"], fit=ranged["cpa_bounds"])
    assert zoomed["range"]["text"] == "21.75 nm"
    plain, _ = await render(client, time=MIDDLE)
    assert "range" not in plain and "hidden_inactive" not in plain  # said only when there is something to say
    missing = await fails(client, "FEATURE_NOT_FOUND", time=MIDDLE, cpa=["f-1", "nobody"])
    assert missing["details"]["missing_ids"] == ["nobody"]
    not_tracks = await fails(client, "VALIDATION_FAILED", time=MIDDLE, cpa=["f-1", "p-4"])
    assert not_tracks["details"]["field"] == "cpa"
    too_early = await fails(client, "VALIDATION_FAILED", time="2024-11-14T17:00:00Z", cpa=["f-1", "f-2"])
    assert "no position" in too_early["message"]


async def test_features_not_active_at_the_time_are_named(client: Client) -> None:
    early, _ = await render(client, time=EARLY, fit="all")
    assert sorted(early["hidden_inactive"]) == ["bf-1", "p-2", "z-1", "z-2"]
    later, _ = await render(client, time=MIDDLE, fit="all")
    assert "hidden_inactive" not in later


async def test_size_parameters_say_the_image_takes_the_areas_shape(client: Client) -> None:
    (tool,) = [t for t in (await client.list_tools()).tools if t.name == "debrief_render_plot"]
    width = tool.input_schema["properties"]["width"]["description"]
    assert "Max px" in width and "shape (within 2:1)" in width
    assert tool.input_schema["properties"]["height"]["description"].startswith("Max px")


async def test_a_padded_area_is_noted(client: Client) -> None:
    wide, _ = await render(client, fit=[-5.5, 35.8, -2.0, 36.4])  # 4.7:1, shown 2:1
    assert "padded" in wide["note"] and "2:1" in wide["note"]
    assert wide["bounds"][1] < 35.8 and wide["bounds"][3] > 36.4  # what was shown
    saved, _ = await render(client, time=MIDDLE)
    assert "note" not in saved  # the saved viewport is 1.6:1: shown as it is


async def test_narrative_entries_no_track_holds_are_listed(client: Client, plots: Path) -> None:
    rep = Path(__file__).resolve().parent / "data" / "rep"
    features = [
        f for name in ("valid_boat1.rep", "valid_narrative.rep") for f in parse_rep((rep / name).read_text()).features
    ]
    (plots / "log.plot.json").write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    due = [f["id"] for f in features if f["properties"].get("time", "")[11:16] in ("09:57", "10:03", "10:13")]
    result = await client.call_tool(
        "debrief_render_plot", {"filename": "log.plot.json", "time": "1995-12-12T10:20:00Z"}
    )
    answer = result.structured_content
    assert not result.is_error and answer is not None, answer
    assert answer["unplaced"] == due and len(due) == 3  # COLLINGWOOD's entries: no COLLINGWOOD in this plot
    result = await client.call_tool(
        "debrief_render_plot", {"filename": "log.plot.json", "time": "1995-12-12T10:50:00Z"}
    )
    assert result.structured_content is not None and "unplaced" not in result.structured_content


async def test_a_time_window_draws_only_that_stretch(client: Client, plots: Path) -> None:
    before = (plots / LARGE).read_bytes()
    start, end = "2024-11-14T21:30:00Z", "2024-11-15T00:30:00Z"
    cut, size = await render(client, time=MIDDLE, time_start=start, time_end=end, fit="window")
    assert cut["fit"] == "window" and cut["span"] == [start, end] and cut["time"] == MIDDLE
    assert size == (cut["width"], cut["height"]) and "outside_window" not in cut
    # VAN GALEN3 was in SAP 1-1 and VAN AMSTEL in SIR 1 to 21:40 (zone-transits says so too)
    assert cut["framed"] == {"tracks": ["f-1", "f-2", "f-3"], "zones": ["z-1", "z-4"]}
    assert cut["window"] == {
        "start": start,
        "end": end,
        "source": "asked",
        "data": ["2024-11-14T16:16:53.662Z", "2024-11-15T10:17:00Z"],
    }
    whole, _ = await render(client, time=MIDDLE, fit="all")
    saved = json.loads((plots / LARGE).read_text())["features"][-2]["properties"]  # debrief-time-metadata
    assert "framed" not in whole and "data" not in whole["window"]  # the plot's saved window holds all of it
    assert whole["window"]["source"] == "plot"
    assert [parse_iso(whole["window"][k]) for k in ("start", "end")] == [parse_iso(saved[k]) for k in ("start", "end")]
    assert whole["span"] == [
        "2024-11-14T16:16:53.662Z",
        "2024-11-15T10:17:00Z",
    ]  # VAN AMSTEL's first fix, LEOPOLD's last
    assert cut["bounds"][2] - cut["bounds"][0] < whole["bounds"][2] - whole["bounds"][0]
    early, _ = await render(client, time="2024-11-14T17:00:00Z", time_end="2024-11-14T18:00:00Z", fit="window")
    assert early["outside_window"] == ["f-1"]  # VAN GALEN3 starts at 21:16
    assert early["span"] == ["2024-11-14T16:16:53.662Z", "2024-11-14T18:00:00Z"]
    assert (plots / LARGE).read_bytes() == before


async def test_the_plots_current_time_outside_the_window_is_moved_to_it(client: Client) -> None:
    err, _ = await call_tool(client, "debrief_set_time", filename=LARGE, timeState={"current": MIDDLE})
    assert not err
    moved, _ = await render(client, time_start="2024-11-15T01:00:00Z", time_end="2024-11-15T02:00:00Z")
    assert moved["time"] == "2024-11-15T01:00:00Z"
    assert "outside the window" in moved["note"] and MIDDLE in moved["note"]


async def test_bad_windows_name_the_field(client: Client) -> None:
    cases = [
        ({"time_start": "yesterday"}, "time_start"),
        ({"time_end": "2024-13-45T00:00:00Z"}, "time_end"),
        ({"time_start": "2024-11-15T02:00:00Z", "time_end": "2024-11-15T01:00:00Z"}, "time_end"),
        ({"time_start": "2024-11-20T00:00:00Z"}, "time_start"),  # after every track
        ({"time": "2024-11-14T20:00:00Z", "time_start": "2024-11-15T01:00:00Z"}, "time"),
    ]
    for args, field in cases:
        error = await fails(client, "VALIDATION_FAILED", **args)
        assert error["details"]["field"] == field, (args, error)
    late = await fails(client, "VALIDATION_FAILED", time_start="2024-11-20T00:00:00Z")
    assert "2024-11-15T10:17:00Z" in late["message"]  # the tracks' period, to choose from


async def test_a_window_without_a_time_names_what_is_not_active_in_it(client: Client) -> None:
    shown, _ = await render(client, time_start=EARLY, time_end="2024-11-14T18:00:00Z", fit="all")
    assert sorted(shown.get("hidden_inactive", [])) == ["bf-1", "p-2", "z-1", "z-2"]
