"""What the third issue-22 analyst trial (t22c) found left out, each checked on the REP sample ships
(NELSON and COLLINGWOOD, tests/data/rep) against GeographicLib computations written here (each leg a
geodesic sailed at constant speed, the tote's course the leg's course at its middle), never against the
code's own earlier output.

- a track is named by its name as well as its id, one resolver for every analysis;
- bow and stern crossings: the relative bearing's roots between fixes (the trial's reference: 10:42:59.7
  387 yd 118°, 10:43:20 327 yd 111°, 10:44:14 188 yd 080°, back at 10:59:07 359 yd 096°).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client

from debrief_calc.geo.dm import position_dm
from debrief_calc.tracks.features import parse_iso
from tests import test_analysis_passes as passes_tests
from tests.conftest import call
from tests.test_analysis_passes import DAY, KNOT, YD, Pair, Ship, at, reference_turn_rate, window, wrap180
from tests.test_analysis_support import GEOD, boats, props, run_err, run_ok


@pytest.fixture(scope="module")
def pair() -> Pair:
    nelson, collingwood = boats()
    return Pair(Ship(nelson), Ship(collingwood))


# --- 1. names as well as ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "extra"),
    [("range-bearing", {}), ("close-quarters", {"threshold": 500}), ("tote", {"time": f"{DAY}10:15:30Z"})],
)
def test_the_primary_is_named_by_its_name_in_any_case_or_its_id(tool: str, extra: dict[str, Any]) -> None:
    nelson, collingwood = boats()
    by_id = props(run_ok(tool, [nelson, collingwood], {"primary": collingwood["id"], **extra}))
    by_name = props(run_ok(tool, [nelson, collingwood], {"primary": "collingwood", **extra}))
    by_id.pop("provenance"), by_name.pop("provenance")
    assert by_name == by_id
    assert by_id.get("primary_id", by_id.get("first_id")) == collingwood["id"]


def test_an_unknown_or_shared_name_is_refused_listing_names_and_ids() -> None:
    nelson, collingwood = boats()
    err = run_err("range-bearing", [nelson, collingwood], {"primary": "VICTORY"})
    assert err["details"]["field"] == "primary" and err["details"]["rule"] == "exists"
    assert "NELSON (id " + nelson["id"] in err["message"] and collingwood["id"] in err["message"]
    twin = {**collingwood, "id": "twin", "properties": {**collingwood["properties"], "name": "Nelson"}}
    err = run_err("range-bearing", [nelson, twin], {"primary": "nelson"})
    assert err["details"]["rule"] == "ambiguous" and err["details"]["ids"] == [nelson["id"], "twin"]
    # an exact id still wins over a name
    assert props(run_ok("range-bearing", [nelson, twin], {"primary": "twin"}))["primary_id"] == "twin"


# --- 2. one ship's state at a time -----------------------------------------------------------------------------


def leg_motion(ship: Ship, leg: int) -> tuple[float, float]:
    """The leg's course at its middle (degrees) and speed (kn), by GeographicLib."""
    return ship.course(leg), ship.lines[leg].s13 / (ship.t[leg + 1] - ship.t[leg]) / KNOT


@pytest.mark.parametrize("hms", ["10:15:00", "10:15:30", "09:26:00", "09:26:45"])
def test_the_tote_of_one_track_is_that_ships_position_course_speed_and_rate_of_turn(pair: Pair, hms: str) -> None:
    """The trial's request D: NELSON at 10:15 for the log (a fix: 278.05° 12.45 kn after, 277.3° 12.2 kn
    before); and in her sharpest turn (09:26, a fix)."""
    nelson, _ = boats()
    when = at(hms)
    ship = pair.a
    got = props(run_ok("tote", [nelson], {"time": f"{DAY}{hms}Z"}))
    lat, lon = ship.position(when)
    assert got["position"] == pytest.approx([lon, lat], abs=1e-9)
    assert got["position_dm"] == position_dm([lon, lat])
    leg = ship.leg(when)
    course, speed = leg_motion(ship, leg)
    assert (got["course"], got["speed"]) == (pytest.approx(course, abs=1e-3), pytest.approx(speed, abs=1e-3))
    assert got["rate_of_turn"] == pytest.approx(reference_turn_rate(ship, when), abs=1e-2)
    on_fix = when in set(ship.t.tolist())
    assert got["at_fix"] is on_fix
    if on_fix:
        before_course, before_speed = leg_motion(ship, leg - 1)
        assert got["before"]["course"] == pytest.approx(before_course, abs=1e-3)
        assert got["before"]["speed"] == pytest.approx(before_speed, abs=1e-3)
        assert "leg after" in got["note"]
    else:
        assert "before" not in got


# --- 4. bow and stern crossings ---------------------------------------------------------------------------------


def relative_bearing(pair: Pair, when: float, legs: tuple[int, int]) -> float:
    """GeographicLib's bearing of the second from the first, less the first's leg course (the tote's)."""
    p, q = pair.a.position(when, legs[0]), pair.b.position(when, legs[1])
    return wrap180(GEOD.Inverse(p[0], p[1], q[0], q[1])["azi1"] - pair.a.course(legs[0]))


def crossings_by_definition(pair: Pair, start: float, end: float) -> list[tuple[float, str, str, float, float]]:
    """(time, bow/stern, from side, range yd, bearing) for each sign change of the relative bearing inside a
    minute between fixes (both ships' fixes are on whole minutes here), scanned each 2 s, bisected to 1 ms."""
    found = []
    for lo in np.arange(start, end, 60.0):
        legs = (pair.a.leg(lo), pair.b.leg(lo))
        t = np.linspace(lo + 1e-3, lo + 60.0 - 1e-3, 31)
        rel = [relative_bearing(pair, float(x), legs) for x in t]
        for k in range(len(t) - 1):
            if np.sign(rel[k]) == np.sign(rel[k + 1]):
                continue
            stern = abs(rel[k + 1] - rel[k]) > 180
            off = 180.0 if stern else 0.0
            a, b = float(t[k]), float(t[k + 1])
            sign = np.sign(wrap180(rel[k] - off))
            while b - a > 1e-3:
                m = (a + b) / 2
                if np.sign(wrap180(relative_bearing(pair, m, legs) - off)) == sign:
                    a = m
                else:
                    b = m
            when = (a + b) / 2
            p, q = pair.a.position(when, legs[0]), pair.b.position(when, legs[1])
            g = GEOD.Inverse(p[0], p[1], q[0], q[1])
            side = "starboard" if rel[k] > 0 else "port"
            found.append((when, "stern" if stern else "bow", side, g["s12"] / YD, g["azi1"] % 360))
    return found


def check_crossings(found: list[dict[str, Any]], pair: Pair, start: float, end: float) -> None:
    expected = crossings_by_definition(pair, start, end)
    assert len(found) == len(expected) > 0
    for entry, (when, crossed, side, rng, bearing) in zip(found, expected, strict=True):
        assert parse_iso(entry["time"]) == pytest.approx(when, abs=0.01)
        assert (entry["crossed"], entry["from"]) == (crossed, side)
        assert entry["to"] == ("port" if side == "starboard" else "starboard")
        assert entry["range"] == pytest.approx(rng, abs=0.05)
        assert entry["bearing"] == pytest.approx(bearing, abs=0.01)
        assert entry["relative_bearing_before"] * entry["relative_bearing_after"] < 0


def test_the_trials_bow_crossings_are_found_between_fixes(pair: Pair) -> None:
    nelson, collingwood = boats()
    start, end = at("10:30:00"), at("11:00:00")
    found = props(
        run_ok("closest-approach", window([nelson, collingwood], "10:30:00", "11:00:00"), {"distance_unit": "yd"})
    )
    check_crossings(found["crossings"], pair, start, end)
    # the trial's own reference figures, to the second, the yard and the degree
    told = [(e["time"][11:21], round(e["range"]), round(e["bearing"])) for e in found["crossings"]]
    assert [(t[:8], r, b) for t, r, b in told] == [
        ("10:42:59", 387, 118),
        ("10:43:19", 328, 111),
        ("10:44:14", 188, 80),
        ("10:59:06", 359, 96),
    ]
    assert [e["from"] for e in found["crossings"]] == ["starboard", "starboard", "starboard", "port"]


def test_range_bearing_gives_the_same_crossings_over_its_span_with_stern_crossings_too(pair: Pair) -> None:
    """From COLLINGWOOD: NELSON crosses her stern (through 180°) as well as her bow."""
    nelson, collingwood = boats()
    start, end = at("10:00:00"), at("11:30:00")
    params = {"distance_unit": "yd", "primary": "COLLINGWOOD"}
    rb = props(run_ok("range-bearing", window([nelson, collingwood], "10:00:00", "11:30:00"), params))
    check_crossings(rb["crossings"], Pair(pair.b, pair.a), start, end)
    assert {e["crossed"] for e in rb["crossings"]} == {"bow", "stern"}


# --- through the calc server, both eras -------------------------------------------------------------------------

client = passes_tests.client


@pytest.mark.anyio
async def test_names_and_crossings_through_run_tool(client: Client, pair: Pair) -> None:
    err, out = await call(
        client, "run_tool", tool="import-rep", parameters={"paths": ["valid_boat1.rep", "valid_boat2.rep"]}
    )
    assert not err, out
    refs = [{"ref": out["stored"]["ref"]}]
    args = {"time_start": f"{DAY}10:30:00Z", "time_end": f"{DAY}11:00:00Z"}
    err, out = await call(
        client,
        "run_tool",
        tool="range-bearing",
        features=refs,
        parameters={"primary": "Nelson", "distance_unit": "yd", "sample": "interval", "interval_s": 600},
        **args,
    )
    assert not err, out
    found = out["features"][0]["properties"]
    assert found["primary_name"] == "NELSON"
    check_crossings(found["crossings"], pair, at("10:30:00"), at("11:00:00"))
    err, out = await call(
        client, "render_series", features=refs, parameters={"picture": "relative-motion", "primary": "nelson"}, **args
    )
    assert not err, out
    err, out = await call(client, "run_tool", tool="range-bearing", features=refs, parameters={"primary": "HMS X"})
    assert err and "NELSON (id " in str(out)
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": "valid_boat1.rep"})
    assert not err, out
    err, out = await call(
        client,
        "run_tool",
        tool="tote",
        features=[{"ref": out["stored"]["ref"]}],
        parameters={"time": f"{DAY}10:15:00Z"},
    )
    assert not err, out
    own = out["features"][0]["properties"]
    lat, lon = pair.a.position(at("10:15:00"))
    assert own["position_dm"] == position_dm([lon, lat]) and own["at_fix"] and "before" in own


@pytest.mark.anyio
async def test_crossings_over_stdio_through_debrief_calc_mcp(workspace: Path, pair: Pair) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import DATA, console_script, subprocess_env

    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        (workspace / name).write_text((DATA / "rep" / name).read_text(encoding="utf-8"), encoding="utf-8")
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    with anyio.fail_after(120):
        async with Client(params) as c:
            err, out = await call(
                c, "run_tool", tool="import-rep", parameters={"paths": ["valid_boat1.rep", "valid_boat2.rep"]}
            )
            assert not err, out
            err, out = await call(
                c,
                "run_tool",
                tool="closest-approach",
                features=[{"ref": out["stored"]["ref"]}],
                parameters={"distance_unit": "yd"},
                time_start=f"{DAY}10:30:00Z",
                time_end=f"{DAY}11:00:00Z",
            )
            assert not err, out
            check_crossings(out["features"][0]["properties"]["crossings"], pair, at("10:30:00"), at("11:00:00"))
