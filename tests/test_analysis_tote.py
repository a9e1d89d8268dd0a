"""The tote, and range-bearing's closest approach and peak bearing rate between fixes, on the
REP sample ships (NELSON primary, COLLINGWOOD secondary), checked against GeographicLib here.

The issue's figures: the tote at 10:30 gives 4,033 yd on 112.7°; the bearing rate at 10:20:30
is -8.75°/min (drawing left); the true CPA is 119.5 yd at 10:45:09, where a 10-minute series'
least sample is 285 yd at 11:00; the peak bearing rate is -108.6°/min at 10:44:53 - in the hour
10:00 to 11:00. Over the whole shared time it is +137.5°/min at 11:13:33 (180 yd, the ships on
nearly opposite courses), which the tool reports and the scan below confirms.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client

from debrief_calc.analysis.range_bearing import COLUMNS as series_columns
from debrief_calc.calc.server import build_server
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import parse_iso
from debrief_calc.tracks.times import Window, cut_feature
from llmem.core.config import ServerConfig
from tests.conftest import DATA, MODES, call
from tests.test_analysis_support import GEOD, boats, coords, epoch, props, run_err, run_ok, track_feature

YD = 0.9144
KNOT = 1852.0 / 3600.0
DAY = "1995-12-12T"


def at(hms: str) -> float:
    return parse_iso(f"{DAY}{hms}Z")


def wrap180(x: float) -> float:
    return 180.0 - (180.0 - x) % 360.0


class Glib:
    """A track as GeographicLib sees it: positions along the geodesic legs, and the motion of the
    leg a time falls in (at a fix, the leg after it; at the last fix, the one before)."""

    def __init__(self, feature: Mapping[str, Any]) -> None:
        self.t = epoch(feature)
        self.lat, self.lon = coords(feature)

    def leg(self, when: float) -> int:
        return min(max(int(np.searchsorted(self.t, when, side="right") - 1), 0), self.t.size - 2)

    def position(self, when: float, leg: int | None = None) -> tuple[float, float]:
        i = self.leg(when) if leg is None else leg
        line = GEOD.InverseLine(self.lat[i], self.lon[i], self.lat[i + 1], self.lon[i + 1])
        pos = line.Position((when - self.t[i]) / (self.t[i + 1] - self.t[i]) * line.s13)
        return pos["lat2"], pos["lon2"]

    def motion(self, when: float) -> tuple[float, float]:
        """(course at mid-leg, degrees; speed, knots)."""
        i = self.leg(when)
        line = GEOD.InverseLine(self.lat[i], self.lon[i], self.lat[i + 1], self.lon[i + 1])
        course = line.Position(line.s13 / 2)["azi2"] % 360.0
        return course, line.s13 / (self.t[i + 1] - self.t[i]) / KNOT


def sight(a: Glib, b: Glib, when: float, legs: tuple[int, int] | None = None) -> tuple[float, float, float]:
    """Range (m), bearing of b from a, bearing of a from b (true degrees)."""
    p = a.position(when, None if legs is None else legs[0])
    q = b.position(when, None if legs is None else legs[1])
    inv = GEOD.Inverse(p[0], p[1], q[0], q[1])
    return inv["s12"], inv["azi1"] % 360.0, (inv["azi2"] + 180.0) % 360.0


def fd_rate(a: Glib, b: Glib, when: float, h: float = 0.5, *, after: bool = False) -> float:
    """Bearing rate (deg/min) by a central difference of GeographicLib bearings, both ships kept
    on the legs they are on just before ``when`` (at a leg's end, the limit from inside it), or
    just after it (``after``: at a fix, the leg that starts there)."""
    probe = when + h if after else when - h
    legs = (a.leg(probe), b.leg(probe))
    d = wrap180(sight(a, b, when + h, legs)[1] - sight(a, b, when - h, legs)[1])
    return d / (2 * h) * 60.0


@pytest.fixture(scope="module")
def ships() -> tuple[dict[str, Any], dict[str, Any], Glib, Glib]:
    nelson, collingwood = boats()
    return nelson, collingwood, Glib(nelson), Glib(collingwood)


def cut(feature: dict[str, Any], start: str, end: str) -> dict[str, Any]:
    out = cut_feature(feature, Window(at(start), at(end)))
    assert out is not None
    return out


# --- the figures ----------------------------------------------------------------------


def test_the_tote_at_1030_matches_geographiclib(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    result = run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:30:00Z"})
    (feature,) = result.features
    row = feature["properties"]
    when = at("10:30:00")
    rng, brg, back = sight(a, b, when)
    (own_course, own_speed), (her_course, her_speed) = a.motion(when), b.motion(when)
    assert round(row["range"]) == 4033 and round(row["bearing"], 1) == 112.7  # the figures
    assert row["range"] == pytest.approx(rng / YD, abs=0.01)
    assert row["distance_unit"] == "yd" and row["time"] == f"{DAY}10:30:00Z"
    assert row["bearing"] == pytest.approx(brg, abs=1e-3)
    assert row["relative_bearing"] == pytest.approx(wrap180(brg - own_course), abs=1e-3)
    assert row["relative_bearing_side"] == ("R" if row["relative_bearing"] < 0 else "G") == "G"
    assert row["atb"] == pytest.approx(wrap180(back - her_course), abs=1e-3)
    assert row["atb_side"] == "R"  # NELSON is on COLLINGWOOD's port bow
    assert row["primary_course"] == pytest.approx(own_course, abs=1e-3)
    assert row["secondary_course"] == pytest.approx(her_course, abs=1e-3)
    assert row["primary_speed"] == pytest.approx(own_speed, abs=1e-3)
    assert row["secondary_speed"] == pytest.approx(her_speed, abs=1e-3)
    assert row["speed_unit"] == "kn" and row["bearing_rate_unit"] == "deg/min"
    # 10:30 is a fix of both: the motion is the legs' after it (before it the rate was -3.6)
    assert row["bearing_rate"] == pytest.approx(fd_rate(a, b, when, after=True), abs=0.01)
    assert row["bearing_rate_side"] == "R" and row["bearing_rate"] > 0
    assert row["course_at_fix"].startswith("leg after")
    assert row["time_source"] == "parameters.time"
    assert (row["primary_id"], row["secondary_id"]) == ("rep-nelson", "rep-collingwood")
    # the line of sight is the geometry: NELSON's position, then COLLINGWOOD's
    (lon0, lat0), (lon1, lat1) = feature["geometry"]["coordinates"]
    assert (lat0, lon0) == pytest.approx(a.position(when), abs=1e-9)
    assert (lat1, lon1) == pytest.approx(b.position(when), abs=1e-9)
    assert len(json.dumps(feature)) < 2400  # a tote is a small table (here on a fix in a turn: before, note)


def test_bearing_rate_at_102030_is_drawing_left(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    row = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:20:30Z"}))
    assert round(row["bearing_rate"], 2) == -8.75 and row["bearing_rate_side"] == "L"
    assert row["bearing_rate"] == pytest.approx(fd_rate(a, b, at("10:20:30")), abs=0.01)


def test_a_ten_minute_series_gives_the_true_cpa_not_its_least_sample(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    result = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 600, "distance_unit": "yd"}))
    assert result["sample"] == "interval" and result["sample_count"] == 40
    # the least sample is 285 yd at 11:00, named for what it is
    assert result["min_sampled_range_time"] == f"{DAY}11:00:00Z" and round(result["min_sampled_range"]) == 285
    assert result["min_sampled_range"] == pytest.approx(sight(a, b, at("11:00:00"))[0] / YD, abs=0.01)
    assert "min_range" not in result and "min_range_time" not in result
    # the true CPA between fixes: 119.5 yd at 10:45:09, as a GeographicLib scan finds it
    assert round(result["cpa_range"], 1) == 119.5
    t_cpa = parse_iso(result["cpa_time"])
    assert abs(t_cpa - at("10:45:09")) < 0.5
    t_ref, r_ref = min((sight(a, b, t)[0], t) for t in np.arange(at("10:44:00"), at("10:46:00"), 0.1))[::-1]
    assert result["cpa_range"] == pytest.approx(r_ref / YD, abs=0.01)
    assert abs(t_cpa - t_ref) < 0.2
    # every sampled range is at least the CPA
    assert min(result["series"]["range"]) >= result["cpa_range"]


def test_peak_bearing_rate_between_fixes(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    # the hour 10:00 to 11:00: the issue's -108.6 deg/min at 10:44:53, drawing left
    hour = [cut(f, "10:00:00", "11:00:00") for f in (nelson, collingwood)]
    result = props(run_ok("range-bearing", hour, {"interval_s": 600}))
    assert round(result["peak_bearing_rate"], 1) == -108.6 and result["peak_bearing_rate_side"] == "L"
    t_peak = parse_iso(result["peak_bearing_rate_time"])
    assert abs(t_peak - at("10:44:53")) < 0.5
    ref = [(abs(fd_rate(a, b, t)), t) for t in np.arange(at("10:44:00") + 0.5, at("10:45:00") - 0.5, 0.25)]
    best, t_ref = max(ref)
    assert abs(result["peak_bearing_rate"]) == pytest.approx(best, abs=0.05)
    assert abs(t_peak - t_ref) < 0.5
    # the same over the whole shared time: +137.5 deg/min at 11:13:33, found by a scan too
    whole = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 600}))
    assert round(whole["peak_bearing_rate"], 1) == 137.5 and whole["peak_bearing_rate_side"] == "R"
    t_whole = parse_iso(whole["peak_bearing_rate_time"])
    assert abs(t_whole - at("11:13:33")) < 0.5
    start, end = parse_iso(whole["series"]["time"][0]), parse_iso(whole["series"]["time"][-1])
    coarse = [(abs(fd_rate(a, b, t)), t) for t in np.arange(start + 0.5, end - 0.5, 10.0)]
    top = sorted(coarse, reverse=True)[:3]
    fine = max(
        (abs(fd_rate(a, b, t)), t) for _, c in top for t in np.arange(max(start, c - 60) + 0.5, min(end, c + 60), 0.25)
    )
    assert abs(whole["peak_bearing_rate"]) == pytest.approx(fine[0], abs=0.05)
    assert abs(t_whole - fine[1]) < 0.5
    assert abs(whole["peak_bearing_rate"]) >= max(abs(r) for r in whole["series"]["bearing_rate"] if r is not None)


def test_range_bearing_columns_are_the_totes_fields(ships: Any) -> None:
    nelson, collingwood, _, _ = ships
    rb = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 1800, "distance_unit": "yd"}))
    series = rb["series"]
    assert list(series) == [
        "time",
        "range",
        "bearing",
        "relative_bearing",
        "relative_bearing_side",
        "atb",
        "atb_side",
        "bearing_rate",
        "bearing_rate_side",
        "range_rate",
        "primary_course",
        "primary_speed",
        "primary_rate_of_turn",
        "secondary_course",
        "secondary_speed",
        "secondary_rate_of_turn",
        "secondary_depth",
        "at_fix",
    ]
    assert (
        rb["course_at_fix"]
        == props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:30:00Z"}))["course_at_fix"]
    )
    for k, when in enumerate(series["time"]):
        row = props(run_ok("tote", [nelson, collingwood], {"time": when}))
        assert {name: row[name] for name in series} == {name: column[k] for name, column in series.items()}


def test_the_tote_reads_a_few_fixes_and_answers_as_the_whole_track_does(ships: Any) -> None:
    """The tote reads only the fixes around its time (bisecting the times), yet its row is the
    range-bearing row at every fix of NELSON's from 10:00 to 11:00 (range-bearing reads the whole
    tracks), and the same for a track given as positions[] or with epoch-ms times (read whole)."""
    nelson, collingwood, _, _ = ships
    series = props(run_ok("range-bearing", [nelson, collingwood], {"distance_unit": "yd"}))["series"]
    hour = [k for k, when in enumerate(series["time"]) if at("10:00:00") <= parse_iso(when) <= at("11:00:00")]
    assert len(hour) == 61
    for k in hour:
        row = props(run_ok("tote", [nelson, collingwood], {"time": series["time"][k]}))
        assert {name: row[name] for name in series} == {name: column[k] for name, column in series.items()}, k
    times = epoch(nelson)
    own = {k: v for k, v in nelson["properties"].items() if k != "timestamps"}
    positions = {
        **nelson,
        "geometry": None,
        "properties": {
            **own,
            "positions": [
                {"coordinates": c, "time": s}
                for c, s in zip(nelson["geometry"]["coordinates"], nelson["properties"]["timestamps"], strict=True)
            ],
        },
    }
    epoch_ms = {**nelson, "properties": {**own, "times": [round(t * 1000) for t in times]}}
    for when in (f"{DAY}10:30:00Z", f"{DAY}10:44:52.5Z", f"{DAY}05:03:00Z", f"{DAY}11:41:00Z"):
        want = props(run_ok("tote", [nelson, collingwood], {"time": when}))
        for other in (positions, epoch_ms):
            got = props(run_ok("tote", [other, collingwood], {"time": when}))
            assert {k: got[k] for k in series} == {k: want[k] for k in series}, (when, other["properties"].keys())


def test_course_at_a_fix_is_the_leg_after_and_at_the_last_fix_the_leg_before(ships: Any) -> None:
    nelson, collingwood, a, _ = ships
    fix = at("10:30:00")  # a fix of NELSON's where it changes course
    assert fix in a.t
    before, after = a.motion(fix - 1)[0], a.motion(fix + 1)[0]
    assert abs(wrap180(after - before)) > 1
    row = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}{_hms(fix)}Z"}))
    assert row["primary_course"] == pytest.approx(after, abs=1e-3)
    last = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}11:41:00Z"}))
    assert last["primary_course"] == pytest.approx(a.motion(float(a.t[-1]) - 1)[0], abs=1e-3)
    for description in (_description("tote"), _description("range-bearing")):
        assert "at a fix time the course and speed are the leg after's (at a track's last fix: the leg before)" in (
            description
        )


def test_at_a_fix_in_a_turn_the_tote_gives_the_legs_before_too(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    when = at("10:30:00")  # a fix of both, mid NELSON's turn
    result = run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:30:00Z"})
    row = props(result)
    assert row["at_fix"] is True and row["at_fix_of"] == ["rep-nelson", "rep-collingwood"]
    assert row["bearing_rate"] == pytest.approx(fd_rate(a, b, when, after=True), abs=0.01)  # the legs after
    before = row["before"]
    assert before["bearing_rate"] == pytest.approx(fd_rate(a, b, when), abs=0.01)  # the legs before, GeographicLib
    assert round(before["bearing_rate"], 1) == -3.6 and before["bearing_rate_side"] == "L"
    assert before["primary_course"] == pytest.approx(a.motion(when - 1)[0], abs=1e-3)
    assert before["secondary_speed"] == pytest.approx(b.motion(when - 1)[1], abs=1e-3)
    brg = sight(a, b, when)[1]
    assert before["relative_bearing"] == pytest.approx(wrap180(brg - a.motion(when - 1)[0]), abs=1e-3)
    assert set(before) == set(series_columns) - {
        "time",
        "range",
        "bearing",
        "secondary_depth",
    }  # what the motion changes
    assert "-3.61°/min L before, +0.21°/min R after" in row["note"] and "between fixes" in row["note"]
    assert any("on a fix in a turn" in w for w in result.warnings)
    # within a millisecond of the fix it is the fix; between fixes, no convention applied
    near = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:29:59.9995Z"}))
    assert near["at_fix"] is True and near["bearing_rate"] == row["bearing_rate"] and near["before"] == before
    between = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:30:30Z"}))
    assert between["at_fix"] is False and "before" not in between and "note" not in between
    assert between["bearing_rate"] == pytest.approx(fd_rate(a, b, at("10:30:30")), abs=0.01)
    # a fix on steady legs: on a fix, and nothing to add
    steady = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:06:00Z"}))
    assert steady["at_fix"] is True and "before" not in steady
    assert "at_fix says whether the time is on a fix" in _description("tote")
    assert "the tote at that time gives both sides: at_fix, before" in _description("range-bearing")


def _hms(t: float) -> str:
    return f"{int(t // 3600 % 24):02d}:{int(t // 60 % 60):02d}:{int(t % 60):02d}"


def _description(tool: str) -> str:
    from debrief_calc.analysis import default_registry

    return default_registry().get(tool).description


# --- time, and bad input ------------------------------------------------------------------------


def test_the_default_time_is_the_plots_current_time(ships: Any) -> None:
    nelson, collingwood, _, _ = ships
    row = props(run_ok("tote", [nelson, collingwood], current_time=at("10:30:00")))
    assert row["time"] == f"{DAY}10:30:00Z" and row["time_source"] == "the plot's current time"
    assert round(row["range"]) == 4033
    given = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}10:20:30Z"}, current_time=at("10:30:00")))
    assert given["time"] == f"{DAY}10:20:30Z" and given["time_source"] == "parameters.time"
    error = run_err("tote", [nelson, collingwood], current_time=at("04:00:00"))
    assert (error["code"], error["details"]["field"], error["details"]["rule"]) == (
        "VALIDATION_FAILED",
        "time",
        "within-tracks",
    )
    assert error["message"].startswith("the plot's current time 1995-12-12T04:00:00Z is outside")


def test_without_a_time_the_error_names_parameters_time_and_the_shared_span(ships: Any) -> None:
    nelson, collingwood, _, _ = ships
    error = run_err("tote", [nelson, collingwood])
    assert (error["code"], error["details"]["field"], error["details"]["rule"]) == (
        "VALIDATION_FAILED",
        "time",
        "required",
    )
    assert "give parameters.time" in error["message"]
    assert "the tracks share 1995-12-12T05:03:00Z to 1995-12-12T11:41:00Z" in error["message"]
    assert error["details"]["shared_span"] == [f"{DAY}05:03:00Z", f"{DAY}11:41:00Z"]
    assert error["details"]["spans"]["rep-collingwood"] == [f"{DAY}05:03:00Z", f"{DAY}11:45:00Z"]


@pytest.mark.parametrize(
    ("params", "field", "rule", "says"),
    [
        (
            {"time": f"{DAY}10:30:00Z", "primary": "nobody"},
            "primary",
            "exists",
            "neither the id nor the name of a given track",
        ),
        ({"time": f"{DAY}12:30:00Z"}, "time", "within-tracks", "outside the primary NELSON's track"),
        ({"time": f"{DAY}05:01:00Z"}, "time", "within-tracks", "outside every secondary's track"),
        ({"time": "half past ten"}, "time", "iso-8601", "is not an ISO-8601 time"),
        ({"time": 1030}, "time", "type", "must be a string"),
        ({"time": f"{DAY}10:30:00Z", "distance_unit": "cables"}, "distance_unit", "choices", "one of"),
    ],
)
def test_tote_bad_input(ships: Any, params: dict[str, Any], field: str, rule: str, says: str) -> None:
    nelson, collingwood, _, _ = ships
    error = run_err("tote", [nelson, collingwood], params)
    assert (error["code"], error["details"]["field"], error["details"]["rule"]) == ("VALIDATION_FAILED", field, rule)
    assert says in error["message"]
    if rule == "within-tracks":
        assert "give parameters.time from 1995-12-12T05:03:00Z to 1995-12-12T11:41:00Z" in error["message"]
    if rule == "within-tracks":  # one track is her own state (tests/test_trial22c_fixes.py), bounded the same
        assert run_err("tote", [nelson], {"time": f"{DAY}12:30:00Z"})["details"]["rule"] == rule


def test_a_secondary_with_no_data_then_says_so(ships: Any) -> None:
    nelson, collingwood, _, _ = ships
    early = cut(collingwood, "05:03:00", "08:00:00")
    result = run_ok("tote", [nelson, collingwood, early], {"time": f"{DAY}10:30:00Z"})
    full, missing = (f["properties"] for f in result.features)
    assert round(full["range"]) == 4033
    assert missing["secondary_id"] == early["id"] and "range" not in missing
    assert missing["note"].startswith("no data at 1995-12-12T10:30:00Z") and "08:00:00Z" in missing["note"]
    assert result.features[1]["geometry"] is None
    assert result.warnings == [
        "rep-collingwood: the time is on a fix in a turn; the row's note and before say more",  # 10:30 is a fix
        f"track {early['id']!r} has no data at 1995-12-12T10:30:00Z: no tote row for it",
    ]
    # NELSON named as primary, the first feature becomes a secondary
    named = run_ok("tote", [collingwood, nelson], {"time": f"{DAY}10:30:00Z", "primary": "rep-nelson"})
    assert props(named)["range"] == full["range"] and props(named)["secondary_id"] == "rep-collingwood"


def test_range_bearing_refuses_interval_s_with_another_sample(ships: Any) -> None:
    nelson, collingwood, _, _ = ships
    error = run_err("range-bearing", [nelson, collingwood], {"interval_s": 600, "sample": "all"})
    assert (error["code"], error["details"]["field"], error["details"]["rule"]) == (
        "VALIDATION_FAILED",
        "interval_s",
        "applies-to",
    )
    assert "sample is 'all'" in error["message"]


def test_a_series_closest_at_its_edge_says_so() -> None:
    own = track_feature("own", [0, 600, 1200], [0.0, 0.0, 0.0], [0.0, 0.01, 0.02])
    apart = track_feature("apart", [0, 600, 1200], [0.001, 0.011, 0.031], [0.0, 0.01, 0.02])
    result = props(run_ok("range-bearing", [own, apart], {"sample": "endpoints"}))
    assert result["cpa_time"] == result["series"]["time"][0] and result["cpa_at_edge"] == "start"
    assert result["cpa_note"].startswith("closest at the start of the data (range opening): not a CPA")
    assert result["pass_count"] == 0 and not result["cpa_is_pass"]
    still = track_feature("still", [0, 600], [0.0, 0.0], [0.0, 0.0])
    same = track_feature("same", [0, 600], [0.0, 0.0], [0.0, 0.0])
    together = props(run_ok("range-bearing", [still, same], {"sample": "endpoints"}))
    assert together["peak_bearing_rate"] is None and together["peak_bearing_rate_side"] is None
    assert together["cpa_range"] == 0


# --- through the calc server -----------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[Client]:
    ships = []
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        ships += parse_rep((DATA / "rep" / name).read_text(encoding="utf-8")).features
    time_state = {
        "type": "Feature",
        "id": "debrief-time-metadata",
        "geometry": {"type": "Polygon", "coordinates": [[]]},
        "properties": {
            "dataType": "metadata",
            "metadataType": "time",
            "current": f"{DAY}10:30:00Z",
            "start": f"{DAY}05:00:00Z",
            "end": f"{DAY}11:45:00Z",
        },
    }
    for name, features in (("timed.plot.json", [*ships, time_state]), ("untimed.plot.json", ships)):
        (workspace / name).write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    async with Client(build_server(ServerConfig("debrief-calc-mcp", workspace)), mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_the_tote_through_the_server_takes_the_plots_current_time(client: Client) -> None:
    ships = ["rep-nelson", "rep-collingwood"]
    err, out = await call(client, "run_tool", tool="tote", plot={"filename": "timed.plot.json", "feature_ids": ships})
    assert not err, out
    (feature,) = out["features"]
    row = feature["properties"]
    assert row["time"] == f"{DAY}10:30:00Z" and row["time_source"] == "the plot's current time"
    assert round(row["range"]) == 4033 and round(row["bearing"], 1) == 112.7
    assert "keep" in out  # the line of sight can go on the plot
    err, out = await call(
        client,
        "run_tool",
        tool="tote",
        plot={"filename": "timed.plot.json", "feature_ids": ["rep-collingwood", "rep-nelson"]},
        parameters={"time": f"{DAY}10:20:30Z", "primary": "rep-nelson"},
    )
    assert not err and round(out["features"][0]["properties"]["bearing_rate"], 2) == -8.75
    # no saved time: the end of the plot's timed features (11:45), when NELSON had no fix any more
    err, out = await call(client, "run_tool", tool="tote", plot={"filename": "untimed.plot.json"})
    assert err and out["error"]["details"]["field"] == "time"
    assert out["error"]["message"].startswith("the plot's current time 1995-12-12T11:45:00Z is outside")


@pytest.mark.anyio
async def test_the_tote_and_range_bearing_through_the_server_with_inline_features(client: Client) -> None:
    nelson, collingwood = boats()
    err, out = await call(client, "run_tool", tool="tote", features=[nelson, collingwood])
    assert err and out["error"]["code"] == "VALIDATION_FAILED" and out["error"]["details"]["field"] == "time"
    assert "give parameters.time" in out["error"]["message"] and "the tracks share" in out["error"]["message"]
    err, out = await call(
        client, "run_tool", tool="range-bearing", features=[nelson, collingwood], parameters={"interval_s": 600}
    )
    assert not err, out
    result = out["features"][0]["properties"]
    assert result["cpa_range"] == pytest.approx(119.544 * YD / 1852, abs=1e-5)  # nm, the tool's default
    assert result["peak_bearing_rate_time"].startswith(f"{DAY}11:13:33")
    err, out = await call(
        client,
        "run_tool",
        tool="range-bearing",
        features=[nelson, collingwood],
        parameters={"interval_s": 600, "sample": "endpoints"},
    )
    assert err and out["error"]["details"]["field"] == "interval_s"
    err, described = await call(client, "describe_tool", name="tote")
    assert not err
    params = {p["name"]: p for p in described["parameters"]}
    assert set(params) == {"primary", "time", "distance_unit"} and params["distance_unit"]["default"] == "yd"
    assert "default the current time of the plot" in described["description"]


# --- a window does not change the motion at an instant ------------------------------------------


def _row_at(features: list[dict[str, Any]], when: str, **window: str) -> dict[str, Any]:
    from debrief_calc.tracks.times import cut_features, parse_window

    windowed, _ = cut_features(features, parse_window(**window), where="test")
    series = props(run_ok("range-bearing", windowed, {"interval_s": 300, "distance_unit": "yd"}))["series"]
    i = series["time"].index(when)
    return {k: v[i] for k, v in series.items()}


def test_a_windows_last_row_moves_as_the_whole_track_and_the_tote(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    when = f"{DAY}10:50:00Z"
    short = _row_at([nelson, collingwood], when, time_start=f"{DAY}10:30:00Z", time_end=when)
    longer = _row_at([nelson, collingwood], when, time_start=f"{DAY}10:30:00Z", time_end=f"{DAY}10:55:00Z")
    assert short == longer  # 10:50 is the short window's last fix, and still the leg after it
    tote = props(run_ok("tote", [nelson, collingwood], {"time": when}))
    assert {k: tote[k] for k in short} == short
    course, speed = a.motion(at("10:50:00"))  # GeographicLib: the leg starting at 10:50
    assert short["primary_course"] == pytest.approx(course, abs=1e-3) and round(course, 1) == 185.4
    assert short["primary_speed"] == pytest.approx(speed, abs=1e-3)
    assert short["bearing_rate"] == pytest.approx(fd_rate(a, b, at("10:50:00"), after=True), abs=0.01)
    assert round(short["bearing_rate"], 2) == -52.43 and short["at_fix"] is True


def test_a_cut_track_keeps_the_fixes_beyond_its_edges_as_motion_hints(ships: Any) -> None:
    nelson = ships[0]
    t = epoch(nelson)
    piece = cut_feature(nelson, Window(at("10:30:00"), at("10:50:00")))
    assert piece is not None
    edges = piece["properties"]["window_edges"]
    before, after = edges["before"], edges["after"]
    assert before[2] == max(x for x in t if x < at("10:30:00")) and after[2] == min(x for x in t if x > at("10:50:00"))
    times = epoch(piece)
    assert times[0] >= at("10:30:00") and times[-1] <= at("10:50:00")  # samples never fall outside


def test_rows_on_a_fix_in_a_turn_are_counted_and_pointed_to_the_tote(ships: Any) -> None:
    nelson, collingwood, a, b = ships
    result = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 300}))
    series = result["series"]
    assert len(series["at_fix"]) == len(series["time"])
    fixes = set(epoch(nelson).tolist()) | set(epoch(collingwood).tolist())
    assert series["at_fix"] == [parse_iso(t) in fixes for t in series["time"]]
    # a fix in a turn: GeographicLib's courses of the legs before and after it differ by more than 2 deg
    turned = 0
    for t, on in zip(series["time"], series["at_fix"], strict=True):
        when = parse_iso(t)
        if not on or when <= max(a.t[0], b.t[0]):
            continue
        changed = any(
            abs(wrap180(g.motion(when)[0] - g.motion(when - 1)[0])) > 2
            or abs(g.motion(when)[1] - g.motion(when - 1)[1]) > 0.5
            for g in (a, b)
        )
        turned += changed
    assert turned > 0 and result["turn_fix_rows"] == turned
    assert "tote" in result["turn_fix_note"]


def test_the_tote_on_a_cut_track_is_the_tote_on_the_whole_one_at_both_edges(ships: Any) -> None:
    """10:30 and 10:50 are fixes in turns: on tracks cut to 10:30-10:50 the tote still gives the legs
    after (at 10:50, beyond the cut) and before (at 10:30, before the cut), as on the whole tracks."""
    from debrief_calc.tracks.times import cut_features, parse_window

    nelson, collingwood, _, _ = ships
    windowed, _ = cut_features([nelson, collingwood], parse_window(f"{DAY}10:30:00Z", f"{DAY}10:50:00Z"), where="test")
    for when in (f"{DAY}10:30:00Z", f"{DAY}10:50:00Z"):
        windowed_tote = props(run_ok("tote", windowed, {"time": when}))
        whole = props(run_ok("tote", [nelson, collingwood], {"time": when}))
        windowed_tote.pop("provenance"), whole.pop("provenance")
        assert windowed_tote == whole and "before" in whole
