"""debrief_view_data's readout (issue 22 §4): ``tote_at`` adds the tote's range and bearing from the
primary to each selected track at that time, and every pass of each pair, in both protocol eras;
checked against GeographicLib between the ships' positions at a shared fix. Bad input is refused
naming the field, and changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client

from debrief_calc.formats import metadata
from debrief_calc.formats.rep import parse_rep
from debrief_calc.state.server import build_server
from debrief_calc.tracks.features import parse_iso
from llmem.core.config import Limits, ServerConfig
from tests.conftest import DATA, MODES
from tests.conftest import call as call_tool

pytestmark = pytest.mark.anyio

SHIPS = "ships.plot.json"
AT = "1995-12-12T10:30:00Z"  # a fix of both ships


def _features() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        out += parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    return out


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[Client]:
    times = {"current": AT, "start": "1995-12-12T05:00:00Z", "end": "1995-12-12T11:45:00Z"}
    plot = {"type": "FeatureCollection", "features": [*_features(), metadata.time_feature(times)]}
    (workspace / SHIPS).write_text(json.dumps(plot), encoding="utf-8")
    server = build_server(ServerConfig("debrief-state-mcp", workspace, limits=Limits()))
    async with Client(server, mode=request.param) as c:
        yield c


def _at_fix(fid: str) -> tuple[float, float]:
    f = next(x for x in _features() if x["id"] == fid)
    i = [parse_iso(t) for t in f["properties"]["timestamps"]].index(parse_iso(AT))
    lon, lat = f["geometry"]["coordinates"][i][:2]
    return lat, lon


async def test_the_readout_is_the_tote_at_the_time_asked(client: Client) -> None:
    err, _ = await call_tool(client, "debrief_set_selection", filename=SHIPS, selectedIds=["rep-collingwood"])
    assert not err
    err, out = await call_tool(client, "debrief_view_data", filename=SHIPS, max_points=100, tote_at=AT)
    assert not err, out
    tote = out["tote"]
    assert tote["time"] == AT and tote["unit"] == "yd" and tote["primary"]["id"] == "rep-nelson"
    (row,) = tote["rows"]
    (a, b) = _at_fix("rep-nelson"), _at_fix("rep-collingwood")
    line = Geodesic.WGS84.Inverse(a[0], a[1], b[0], b[1])
    assert row["range"] == pytest.approx(line["s12"] / 0.9144, abs=0.05)
    assert row["bearing"] == pytest.approx(line["azi1"] % 360, abs=0.01)
    assert row["line"] == [[a[1], a[0]], [b[1], b[0]]]
    assert [p["is_cpa"] for p in tote["passes"]].count(True) == 1
    assert all(p["label"].startswith(("CPA ", "pass ")) for p in tote["passes"])
    # unchanged since: the readout still comes, with only the revision and the selection
    err, again = await call_tool(
        client, "debrief_view_data", filename=SHIPS, since_revision=out["revision"], tote_at=AT
    )
    assert not err and again["changed"] is False and again["tote"] == tote
    # the other way round: COLLINGWOOD as primary, the selection then holds no other track
    err, other = await call_tool(
        client, "debrief_view_data", filename=SHIPS, max_points=100, tote_at=AT, tote_primary="rep-collingwood"
    )
    assert not err and other["tote"]["rows"] == [] and "no track chosen" in other["tote"]["note"]
    err, plain = await call_tool(client, "debrief_view_data", filename=SHIPS, max_points=100)
    assert not err and "tote" not in plain  # asked for only


async def test_a_bad_readout_is_refused_or_said(client: Client) -> None:
    err, out = await call_tool(client, "debrief_view_data", filename=SHIPS, max_points=100, tote_at="half past ten")
    assert err and out["error"]["code"] == "VALIDATION_FAILED" and "tote_at" in out["error"]["message"]
    err, out = await call_tool(
        client, "debrief_view_data", filename=SHIPS, max_points=100, tote_at=AT, tote_primary="nobody"
    )
    assert not err and "tote_primary 'nobody' is not a track" in out["tote"]["error"]
