"""What the third issue-22 analyst trial (t22c) found left out, each checked on the REP sample ships
(NELSON and COLLINGWOOD, tests/data/rep) against GeographicLib computations written here (each leg a
geodesic sailed at constant speed, the tote's course the leg's course at its middle), never against the
code's own earlier output.

- a track is named by its name as well as its id, one resolver for every analysis;
- bow and stern crossings: the relative bearing's roots between fixes (the trial's reference: 10:42:59.7
  387 yd 118°, 10:43:20 327 yd 111°, 10:44:14 188 yd 080°, back at 10:59:07 359 yd 096°).
"""

from __future__ import annotations

import time
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


# --- 3. both extremes of a panel, timed -------------------------------------------------------------------------


def rates(pair: Pair, when: float, h: float = 0.05) -> dict[str, float]:
    """GeographicLib's range rate (kn, + opening) and bearing rate (°/min, + right) at ``when``, each ship
    on the leg it sails then: central differences of range and azimuth."""
    legs = (pair.a.leg(when), pair.b.leg(when))

    def sight(t: float) -> tuple[float, float]:
        p, q = pair.a.position(t, legs[0]), pair.b.position(t, legs[1])
        g = GEOD.Inverse(p[0], p[1], q[0], q[1])
        return g["s12"], g["azi1"]

    (r0, b0), (r1, b1) = sight(when - h), sight(when + h)
    return {"range_rate": (r1 - r0) / (2 * h) / KNOT, "bearing_rate": wrap180(b1 - b0) / (2 * h) * 60.0}


def true_extremes(pair: Pair, name: str, start: float, end: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """(time, value) of the largest and least rate over [start, end], each second inside every minute piece."""
    t = [float(x) for lo in np.arange(start - start % 60, end, 60.0) for x in np.arange(lo + 0.05, lo + 60.0, 1.0)]
    t = [x for x in t if start <= x <= end]
    v = [rates(pair, x)[name] for x in t]
    return (t[int(np.argmax(v))], max(v)), (t[int(np.argmin(v))], min(v))


async def _import(client: Client, names: list[str]) -> list[dict[str, Any]]:
    err, out = await call(client, "run_tool", tool="import-rep", parameters={"paths": names})
    assert not err, out
    return [{"ref": f["ref"]} for f in out["features"]]


@pytest.mark.anyio
async def test_render_series_times_both_extremes_of_each_signed_panel(client: Client, pair: Pair) -> None:
    """The trial's request C: CPA +-30 min. Drawing left fastest -108.63°/min at 10:44:52.6, right +137.53 at
    11:13:33.1; range rate closing -14.58 kn at 10:36:00, opening +11.14 kn at 10:30:00."""
    refs = await _import(client, ["valid_boat1.rep", "valid_boat2.rep"])
    start, end = "10:15:08.902", "11:15:08.902"
    err, out = await call(
        client,
        "render_series",
        features=refs,
        quantities=["range", "range_rate", "bearing_rate"],
        parameters={"primary": "NELSON", "distance_unit": "yd"},
        time_start=f"{DAY}{start}Z",
        time_end=f"{DAY}{end}Z",
    )
    assert not err, out
    panels = {p["quantity"]: p for p in out["panels"]}
    for name in ("range_rate", "bearing_rate"):
        high, low = (next(e for e in panels[name]["extremes"] if e["kind"] == k) for k in ("max", "min"))
        assert high["value"] > 0 > low["value"] and high["marked"] and low["marked"]
        (t_hi, v_hi), (t_lo, v_lo) = true_extremes(pair, name, at(start), at(end))
        for got, (t_true, v_true) in ((high, (t_hi, v_hi)), (low, (t_lo, v_lo))):
            when = parse_iso(got["time"])
            side = -1e-3 if got.get("at_fix") == "leg before" else 0.0  # at a fix: which leg's value
            assert got["value"] == pytest.approx(rates(pair, when + side)[name], abs=0.02)  # the value at its time
            assert got["value"] == pytest.approx(v_true, rel=2e-3)  # the true extreme, to the curve's columns
            assert when == pytest.approx(t_true, abs=3.0)
            assert f"at {time.strftime('%H:%M:%S', time.gmtime(round(when)))}" in got["label"]  # nearest second
    assert "drawing left" in next(e for e in panels["bearing_rate"]["extremes"] if e["kind"] == "min")["label"]
    low_range = next(e for e in panels["range"]["extremes"] if e["kind"] == "min")
    assert low_range["value"] == pytest.approx(119.544, abs=1e-3) and not low_range["marked"]


@pytest.mark.anyio
async def test_one_track_draws_speed_course_and_rate_of_turn_by_default(client: Client, pair: Pair) -> None:
    """The trial's request B: NELSON turned hardest at the 09:26 fix (-88.1°/min)."""
    refs = await _import(client, ["valid_boat1.rep"])
    err, out = await call(
        client, "render_series", features=refs, time_start=f"{DAY}09:00:00Z", time_end=f"{DAY}10:00:00Z"
    )
    assert not err, out
    panels = {p["quantity"]: p for p in out["panels"]}
    assert list(panels) == ["speed", "course", "rate_of_turn"]
    low = next(e for e in panels["rate_of_turn"]["extremes"] if e["kind"] == "min")
    when = parse_iso(low["time"])
    assert low["value"] == pytest.approx(reference_turn_rate(pair.a, when), abs=0.01)
    assert low["value"] == pytest.approx(-88.1, abs=0.1) and "to port" in low["label"]


def test_track_legs_turns_give_their_peak_rate_of_turn_and_its_time(pair: Pair) -> None:
    """The trial's request B: the sharpest turn averaged 44.65°/min and peaked at 88.1°/min at the 09:26 fix."""
    nelson, _ = boats()
    found = props(run_ok("track-legs", window([nelson], "09:00:00", "10:00:00")))["manoeuvres"]
    assert found
    for m in found:
        start, end = parse_iso(m["start"]), parse_iso(m["end"])
        fixes = [float(t) for t in pair.a.t if start < t < end]
        reference = max(fixes, key=lambda t: abs(reference_turn_rate(pair.a, t)))
        assert parse_iso(m["peak_rate_of_turn_time"]) == pytest.approx(reference, abs=1e-3)
        # track-legs measures its segments' courses its own way (smoothed): within a degree a minute
        assert m["peak_rate_of_turn"] == pytest.approx(abs(reference_turn_rate(pair.a, reference)), abs=1.0)
        assert m["peak_rate_of_turn"] >= m["rate_of_turn"] - 0.01
    sharpest = max(found, key=lambda m: m["peak_rate_of_turn"])
    assert (sharpest["turn"], sharpest["peak_rate_of_turn_time"][11:19]) == ("port", "09:26:00")
    assert sharpest["peak_rate_of_turn"] == pytest.approx(-reference_turn_rate(pair.a, at("09:26:00")), abs=0.05)


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


# --- 5. the relative-motion picture suggests a closer ring; labels read as the answers ---------------------------


@pytest.mark.anyio
async def test_relative_motion_suggests_a_max_range_holding_the_close_part(client: Client, pair: Pair) -> None:
    """The trial's request A: 10:30-11:00 drew a 6,000 yd outer ring round a 119.5 yd CPA."""
    refs = await _import(client, ["valid_boat1.rep", "valid_boat2.rep"])
    args = {"time_start": f"{DAY}10:30:00Z", "time_end": f"{DAY}11:00:00Z"}
    params = {"picture": "relative-motion", "primary": "NELSON", "distance_unit": "yd"}
    err, out = await call(client, "render_series", features=refs, parameters=params, **args)
    assert not err, out
    cpa_t, cpa_r = pair.least_near(at("10:45:08.902"))
    assert out["cpa"]["label"].startswith(f"CPA {cpa_r / YD:.1f} yd")  # as the answers print it, not "120 yd"
    assert cpa_r / YD < out["scale"]["outer_ring"] / 10
    assert out["time_marks"] and all(
        parse_iso(m["time"]) < at("11:00:00") for m in out["time_marks"]
    )  # "end 11:00" alone
    ring = out["suggest"]["max_range"]
    near = max(pair.range(float(t)) for t in np.arange(cpa_t - 300, cpa_t + 300, 5.0)) / YD
    assert near <= ring < out["scale"]["outer_ring"] and ring < 2 * near  # holds the close part, and no more
    err, closer = await call(client, "render_series", features=refs, parameters={**params, "max_range": ring}, **args)
    assert not err and "suggest" not in closer and closer["scale"]["outer_ring"] == ring


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
