"""debrief_render_plot through the real protocol, in process: fit, size, the range line, and
that rendering never changes the plot."""

from __future__ import annotations

import base64
import io
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from PIL import Image

from debrief_calc.state.server import build_server
from llmem.config import Limits, ServerConfig
from tests.conftest import MODES
from tests.conftest import call as call_tool

pytestmark = pytest.mark.anyio

DATA = Path(__file__).resolve().parent / "data" / "plots"
LARGE = "large-sample.plot.json"
MIDDLE = "2024-11-14T23:00:00Z"


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
    box, size = await render(client, fit=[-4.5, 35.4, -4.0, 36.4], show_future=False)
    assert box["fit"] == "bounds" and box["bounds"] == pytest.approx([-4.5, 35.4, -4.0, 36.4], abs=0.01)
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
    missing = await fails(client, "FEATURE_NOT_FOUND", time=MIDDLE, cpa=["f-1", "nobody"])
    assert missing["details"]["missing_ids"] == ["nobody"]
    not_tracks = await fails(client, "VALIDATION_FAILED", time=MIDDLE, cpa=["f-1", "p-4"])
    assert not_tracks["details"]["field"] == "cpa"
    too_early = await fails(client, "VALIDATION_FAILED", time="2024-11-14T17:00:00Z", cpa=["f-1", "f-2"])
    assert "no position" in too_early["message"]
