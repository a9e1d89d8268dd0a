"""Every pass, close quarters, range rate and rate of turn on the REP sample ships (NELSON and
COLLINGWOOD), each checked against GeographicLib computations written here: a dense range series
between fixes interpolated along their geodesic legs, the pass rule applied to it by its definition
(walk either way from each minimum until the range falls lower), minima and crossings refined by
golden-section search and bisection on GeographicLib's range; never the code's own earlier output.

The trial's complaint: an hour with two close passes was described "closing, then opening", the
second (about 180 yd near 11:23) only as a sampled value.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from debrief_calc.analysis.passes import DEFAULT_RISE, DEFAULT_RISE_M
from debrief_calc.calc.server import build_server
from debrief_calc.geo.dm import latitude_dm, longitude_dm, position_dm
from debrief_calc.tracks.features import parse_iso
from debrief_calc.tracks.times import cut_features, parse_window
from llmem.core.config import ServerConfig
from tests.conftest import DATA, MODES, call
from tests.test_analysis_support import GEOD, boats, coords, epoch, props, run_ok, track_feature

YD = 0.9144
KNOT = 1852.0 / 3600.0
DAY = "1995-12-12T"
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def at(hms: str) -> float:
    return parse_iso(f"{DAY}{hms}Z")


def wrap180(x: float) -> float:
    return 180.0 - (180.0 - x) % 360.0


class Ship:
    """A track as GeographicLib sees it: each leg a geodesic line, sailed at constant speed."""

    def __init__(self, feature: Mapping[str, Any]) -> None:
        self.t = epoch(feature)
        self.lat, self.lon = coords(feature)
        self.lines = [
            GEOD.InverseLine(self.lat[i], self.lon[i], self.lat[i + 1], self.lon[i + 1]) for i in range(self.t.size - 1)
        ]

    def leg(self, when: float) -> int:
        return min(max(int(np.searchsorted(self.t, when, side="right") - 1), 0), self.t.size - 2)

    def position(self, when: float, leg: int | None = None) -> tuple[float, float]:
        i = self.leg(when) if leg is None else leg
        line = self.lines[i]
        pos = line.Position((when - self.t[i]) / (self.t[i + 1] - self.t[i]) * line.s13)
        return pos["lat2"], pos["lon2"]

    def course(self, leg: int) -> float:
        """The leg's course at its middle (degrees)."""
        line = self.lines[leg]
        return float(line.Position(line.s13 / 2)["azi2"]) % 360.0


class Pair:
    """Two ships: GeographicLib's range between them at any time, and what the tools claim, by definition."""

    def __init__(self, a: Ship, b: Ship) -> None:
        self.a, self.b = a, b

    def range(self, when: float, legs: tuple[int, int] | None = None) -> float:
        p = self.a.position(when, None if legs is None else legs[0])
        q = self.b.position(when, None if legs is None else legs[1])
        return float(GEOD.Inverse(p[0], p[1], q[0], q[1], GEOD.DISTANCE)["s12"])

    def dense(self, start: float, end: float, step: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        t = np.append(np.arange(start, end, step), end)
        return t, np.array([self.range(float(x)) for x in t])

    def least_near(self, when: float, half: float = 1.0) -> tuple[float, float]:
        """Golden-section search of GeographicLib's range within ``half`` seconds of ``when``, to 1 ms."""
        lo, hi = when - half, when + half
        while hi - lo > 1e-3:
            c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
            if self.range(c) < self.range(d):
                hi = d
            else:
                lo = c
        return (lo + hi) / 2, self.range((lo + hi) / 2)

    def crossing(self, lo: float, hi: float, threshold: float) -> float:
        """Bisection to 1 ms for the instant GeographicLib's range crosses ``threshold`` in ``[lo, hi]``."""
        inside_lo = self.range(lo) <= threshold
        while hi - lo > 1e-3:
            mid = (lo + hi) / 2
            if (self.range(mid) <= threshold) == inside_lo:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2


def passes_by_definition(
    t: np.ndarray, r: np.ndarray, fraction: float = DEFAULT_RISE, floor_m: float = DEFAULT_RISE_M
) -> list[int]:
    """The samples that are passes by the rule as worded: a local minimum (not at either end) from
    which the range rises by max(pass_rise x its range, pass_rise_m) on both sides before falling lower
    (an end stops the walk); with ``fraction`` 0 and ``floor_m`` dip_rise_m, the minima worth telling."""
    out = []
    for i in range(1, r.size - 1):
        if not (r[i] < r[i - 1] and r[i] <= r[i + 1]):
            continue
        need = max(fraction * r[i], floor_m)
        rises = []
        for step in (-1, 1):
            j, high = i + step, r[i]
            while 0 <= j < r.size and r[j] >= r[i]:
                high = max(high, r[j])
                j += step
            rises.append(high - r[i])
        if min(rises) >= need:
            out.append(i)
    return out


@pytest.fixture(scope="module")
def ships() -> tuple[dict[str, Any], dict[str, Any], Pair]:
    nelson, collingwood = boats()
    return nelson, collingwood, Pair(Ship(nelson), Ship(collingwood))


@pytest.fixture(scope="module")
def dense(ships: Any) -> tuple[np.ndarray, np.ndarray]:
    nelson, collingwood, pair = ships
    start = max(epoch(nelson)[0], epoch(collingwood)[0])
    end = min(epoch(nelson)[-1], epoch(collingwood)[-1])
    return pair.dense(float(start), float(end))


def window(features: list[dict[str, Any]], start: str, end: str) -> list[dict[str, Any]]:
    cut, _ = cut_features(features, parse_window(f"{DAY}{start}Z", f"{DAY}{end}Z"), where="test")
    return cut


def check_passes(found: list[dict[str, Any]], pair: Pair, t: np.ndarray, r: np.ndarray) -> None:
    expected = [pair.least_near(float(t[i])) for i in passes_by_definition(t, r)]
    assert len(found) == len(expected) > 0
    for entry, (when, metres) in zip(found, expected, strict=True):
        assert parse_iso(entry["time"]) == pytest.approx(when, abs=0.01)
        assert entry["range"] == pytest.approx(metres / YD, abs=0.005)
        assert entry["closing_from"]["range"] - entry["range"] >= max(DEFAULT_RISE * entry["range"], 100 / YD) - 0.01
        assert entry["opening_to"]["range"] - entry["range"] >= max(DEFAULT_RISE * entry["range"], 100 / YD) - 0.01


# --- passes ------------------------------------------------------------------------------------------


def test_every_pass_between_fixes_matches_a_dense_geographiclib_series(ships: Any, dense: Any) -> None:
    nelson, collingwood, pair = ships
    t, r = dense
    cpa = props(run_ok("closest-approach", [nelson, collingwood], {"distance_unit": "yd"}))
    check_passes(cpa["passes"], pair, t, r)
    assert cpa["pass_count"] == len(cpa["passes"]) > 2
    # the least range is the CPA and one of the passes, with the same figures
    (lowest,) = [p for p in cpa["passes"] if p["is_cpa"]]
    assert (
        cpa["is_pass"] and cpa["at_edge"] is None and (lowest["time"], lowest["range"]) == (cpa["time"], cpa["range"])
    )
    assert lowest["range"] == min(p["range"] for p in cpa["passes"])
    # the trial's second pass: about 180 yd near 11:23, found between fixes
    (second,) = [p for p in cpa["passes"] if at("11:22:00") < parse_iso(p["time"]) < at("11:24:00")]
    assert second["between_fixes"] and 175 < second["range"] < 190
    when, metres = pair.least_near(parse_iso(second["time"]))
    assert second["range"] == pytest.approx(metres / YD, abs=0.005)
    p = pair.a.position(when)
    assert second["first_position"] == pytest.approx([p[1], p[0]], abs=1e-8)
    assert second["first_position_dm"] == f"{latitude_dm(p[0])} {longitude_dm(p[1])}"
    q = pair.b.position(when)
    assert second["bearing"] == pytest.approx(GEOD.Inverse(p[0], p[1], q[0], q[1])["azi1"] % 360, abs=1e-3)
    # range_trend tells every pass in order
    for k, entry in enumerate(cpa["passes"]):
        assert f"pass {k + 1}: {entry['range']:.4g} yd at {entry['time']}" in cpa["range_trend"]
    assert "wobble" in cpa["pass_rule"] or "falls lower" in cpa["pass_rule"]


def test_range_bearing_lists_the_same_passes(ships: Any, dense: Any) -> None:
    nelson, collingwood, pair = ships
    rb = props(run_ok("range-bearing", [nelson, collingwood], {"distance_unit": "yd"}))
    t, r = dense
    # range-bearing's span is the primary's fixes inside the overlap
    keep = (t >= parse_iso(rb["series"]["time"][0])) & (t <= parse_iso(rb["series"]["time"][-1]))
    check_passes(rb["passes"], pair, t[keep], r[keep])
    assert "primary_position_dm" in rb["passes"][0] and rb["cpa_is_pass"] and rb["cpa_at_edge"] is None


def test_a_window_edge_is_never_a_pass_or_a_cpa(ships: Any) -> None:
    nelson, collingwood, pair = ships
    cut = window([nelson, collingwood], "10:46:00", "11:00:00")
    cpa = props(run_ok("closest-approach", cut, {"distance_unit": "yd"}))
    t, r = pair.dense(at("10:46:00"), at("11:00:00"))
    assert int(np.argmin(r)) == 0  # GeographicLib: the least range is at the window's start
    assert cpa["time"] == f"{DAY}10:46:00Z" and cpa["at_edge"] == "start" and not cpa["is_pass"]
    assert cpa["range"] == pytest.approx(r[0] / YD, abs=0.005)
    assert cpa["cpa_note"].startswith("closest at the start of the window (range opening): not a CPA")
    assert all(not p["is_cpa"] and p["time"] not in (f"{DAY}10:46:00Z", f"{DAY}11:00:00Z") for p in cpa["passes"])
    check_passes(cpa["passes"], pair, t, r)
    assert cpa["range_trend"].startswith(f"{cpa['range']:.4g} yd at the start ({DAY}10:46:00Z), opening to")

    # closing into the window's end: 11:00 is no pass either
    closing = props(run_ok("closest-approach", window([nelson, collingwood], "10:00:00", "10:44:00"), {}))
    assert closing["at_edge"] == "end" and closing["cpa_note"].startswith(
        "closest at the end of the window (range closing)"
    )


def test_a_least_range_the_range_barely_rises_from_is_no_pass(ships: Any) -> None:
    """10:00-10:46: the least range is the 10:45:09 CPA, but in the window the range rises only some 87 yd
    after it (less than 100 m): not a pass by the rule, and said so."""
    nelson, collingwood, pair = ships
    cpa = props(
        run_ok("closest-approach", window([nelson, collingwood], "10:00:00", "10:46:00"), {"distance_unit": "yd"})
    )
    _, r = pair.dense(at("10:00:00"), at("10:46:00"))
    k = int(np.argmin(r))
    assert 0 < k < r.size - 1 and (r[-1] - r[k]) < DEFAULT_RISE_M  # GeographicLib: inside, and rising too little after
    assert cpa["at_edge"] is None and not cpa["is_pass"] and cpa["time"] not in [p["time"] for p in cpa["passes"]]
    assert cpa["cpa_note"].startswith("the least range, between fixes, but not a pass: the range rose only about")
    assert "to the end of the window" in cpa["cpa_note"].replace("up to the", "to the")
    assert "the least range (not a pass)" in cpa["range_trend"]
    assert cpa["name"].startswith("Least range")


def test_noise_is_no_pass_and_each_real_pass_is_one() -> None:
    """Two ships on straight courses passing at about 300 m, 1 s fixes with 3 m of noise; then one of
    them circling back for a second pass: one pass, then two, whatever the noise."""
    rng = np.random.default_rng(7)
    n = 1200
    t = 1_000_000.0 + np.arange(n, dtype=float)
    lat0, lon0 = 50.0, -4.0
    m_lat, m_lon = 1 / 111_230.0, 1 / (111_320.0 * math.cos(math.radians(lat0)))
    x_a = -3000 + 5.0 * np.arange(n) + rng.normal(0, 3, n)
    own = track_feature("own", t, lon0 + x_a * m_lon, lat0 + rng.normal(0, 3, n) * m_lat)
    x_b = 3000 - 5.0 * np.arange(n) + rng.normal(0, 3, n)
    other = track_feature("other", t, lon0 + x_b * m_lon, lat0 + (300 + rng.normal(0, 3, n)) * m_lat)
    one = props(run_ok("closest-approach", [own, other], {}))
    assert one["pass_count"] == 1 and one["is_pass"] and abs(parse_iso(one["time"]) - t[600]) < 5
    # over 25 minutes: the other ship turns back at 15:00 and overtakes at three times the speed
    k = np.arange(1500)
    t = 1_000_000.0 + k.astype(float)
    x_own = -3000 + 5.0 * k + rng.normal(0, 3, k.size)
    x_back = np.where(k <= 900, 3000 - 5.0 * k, -1500 + 15.0 * (k - 900)) + rng.normal(0, 3, k.size)
    own = track_feature("own", t, lon0 + x_own * m_lon, lat0 + rng.normal(0, 3, k.size) * m_lat)
    back = track_feature("back", t, lon0 + x_back * m_lon, lat0 + (300 + rng.normal(0, 3, k.size)) * m_lat)
    two = props(run_ok("closest-approach", [own, back], {}))
    assert two["pass_count"] == 2, two["range_trend"]
    assert [round(parse_iso(p["time"]) - t[0], -1) for p in two["passes"]] == [600, 1200]


def test_the_least_range_is_the_same_whichever_way_it_is_asked(ships: Any) -> None:
    """render_series marks the CPA from closest_approach; the tools read it from the range's profile: the
    same search on the same numbers, so the same instant and range to the last digit."""
    from debrief_calc.analysis.common import overlap
    from debrief_calc.analysis.range_profile import Profile, closest_approach
    from debrief_calc.tracks.features import iso, track_data

    nelson, collingwood, _ = ships
    for start, end in (("05:00:00", "11:45:00"), ("10:00:00", "10:46:00"), ("11:10:00", "11:30:00")):
        a, b = (track_data(f) for f in window([nelson, collingwood], start, end))
        span = overlap(a, b)
        assert span is not None
        expected = closest_approach(a, b, span)
        assert Profile(a, b, span).least() == expected
        cpa = props(run_ok("closest-approach", window([nelson, collingwood], start, end), {"distance_unit": "m"}))
        assert (cpa["time"], cpa["range"]) == (iso(expected[0]), round(expected[1], 3))


def test_a_steady_range_a_shared_instant_and_a_jump_say_what_they_are() -> None:
    still = track_feature("still", [0, 600], [0.0, 0.0], [0.0, 0.0])
    beside = track_feature("beside", [0, 600], [0.001, 0.001], [0.0, 0.0])
    steady = props(run_ok("closest-approach", [still, beside], {"distance_unit": "m"}))
    metres = GEOD.Inverse(0.0, 0.0, 0.0, 0.001)["s12"]
    assert steady["range"] == pytest.approx(metres, abs=1e-3) and not steady["is_pass"] and steady["pass_count"] == 0
    assert steady["at_edge"] is None and steady["cpa_note"].startswith("the range did not change")
    # the tracks share 00:10 only: that instant is a period within, of no duration
    later = track_feature("later", [600, 1200], [0.001, 0.002], [0.0, 0.0])
    one = props(run_ok("close-quarters", [still, later], {"threshold": 200, "distance_unit": "m"}))
    assert one["period_count"] == 1 and one["periods"][0]["duration_s"] == 0
    assert one["periods"][0]["least_range"] == pytest.approx(metres, abs=1e-3)
    # two fixes at 00:10 (the track jumps 111 m north): the least range is where it was until then
    jumpy = track_feature("jumpy", [0, 600, 600, 1200], [0.0, 0.0, 0.0, 0.0], [0.0, 0.01, 0.011, 0.02])
    across = track_feature("across", [0, 600, 1200], [0.01, 0.0, -0.01], [0.0, 0.01, 0.02])
    cpa = props(run_ok("closest-approach", [jumpy, across], {"distance_unit": "m"}))
    assert cpa["is_pass"] and cpa["pass_count"] == 1 and cpa["passes"][0]["is_cpa"]
    assert cpa["range"] < 0.01 and abs(parse_iso(cpa["time"]) - 600) < 0.01  # GeographicLib: both at 0.01 N, 0 E


# --- range rate and rate of turn ----------------------------------------------------------------------


@pytest.mark.parametrize("hms", ["10:20:30", "10:44:30", "10:45:08.9", "11:13:00", "11:22:40"])
def test_range_rate_matches_a_geographiclib_finite_difference(ships: Any, hms: str) -> None:
    nelson, collingwood, pair = ships
    when = at(hms)
    row = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}{hms}Z"}))
    legs = (pair.a.leg(when), pair.b.leg(when))
    h = 0.25
    fd = (pair.range(when + h, legs) - pair.range(when - h, legs)) / (2 * h) / KNOT
    assert row["range_rate"] == pytest.approx(fd, abs=0.01)
    # positive opening: after the 10:45:09 CPA the range opens, before it closes
    if hms == "10:44:30":
        assert row["range_rate"] < 0


def reference_turn_rate(ship: Ship, when: float) -> float:
    i = ship.leg(when)
    mid = (ship.t[i] + ship.t[i + 1]) / 2
    j = i - 1 if when < mid else i
    j = min(max(j, 0), len(ship.lines) - 2)
    m0, m1 = (ship.t[j] + ship.t[j + 1]) / 2, (ship.t[j + 1] + ship.t[j + 2]) / 2
    return wrap180(ship.course(j + 1) - ship.course(j)) / (m1 - m0) * 60.0


@pytest.mark.parametrize("hms", ["10:10:30", "10:30:20", "10:44:50", "11:00:10", "11:30:45"])
def test_rate_of_turn_of_each_ship_matches_geographiclib_courses(ships: Any, hms: str) -> None:
    nelson, collingwood, pair = ships
    when = at(hms)
    row = props(run_ok("tote", [nelson, collingwood], {"time": f"{DAY}{hms}Z"}))
    assert row["primary_rate_of_turn"] == pytest.approx(reference_turn_rate(pair.a, when), abs=1e-3)
    assert row["secondary_rate_of_turn"] == pytest.approx(reference_turn_rate(pair.b, when), abs=1e-3)
    series = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 600}))["series"]
    for k, text in enumerate(series["time"]):
        assert series["primary_rate_of_turn"][k] == pytest.approx(
            reference_turn_rate(pair.a, parse_iso(text)), abs=1e-3
        )


def test_range_rate_in_a_series_is_the_totes(ships: Any) -> None:
    nelson, collingwood, _ = ships
    series = props(run_ok("range-bearing", [nelson, collingwood], {"interval_s": 900}))["series"]
    for k, when in enumerate(series["time"][:6]):
        row = props(run_ok("tote", [nelson, collingwood], {"time": when}))
        assert row["range_rate"] == series["range_rate"][k]


# --- close quarters ---------------------------------------------------------------------------------------


def periods_by_definition(pair: Pair, t: np.ndarray, r: np.ndarray, threshold: float) -> list[tuple[float, ...]]:
    inside = r <= threshold
    edges = np.diff(np.concatenate(([False], inside, [False])).astype(int))
    out = []
    for first, last in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1, strict=True):
        start = t[0] if first == 0 else pair.crossing(float(t[first - 1]), float(t[first]), threshold)
        end = t[-1] if last == t.size - 1 else pair.crossing(float(t[last]), float(t[last + 1]), threshold)
        k = first + int(np.argmin(r[first : last + 1]))
        out.append((start, end, *pair.least_near(float(t[k]))))
    return out


@pytest.mark.parametrize("threshold_yd", [500.0, 300.0])
def test_close_quarters_periods_match_geographiclib(ships: Any, dense: Any, threshold_yd: float) -> None:
    nelson, collingwood, pair = ships
    t, r = dense
    result = props(run_ok("close-quarters", [nelson, collingwood], {"threshold": threshold_yd, "distance_unit": "yd"}))
    expected = periods_by_definition(pair, t, r, threshold_yd * YD)
    assert result["period_count"] == len(result["periods"]) == len(expected) > 0
    for period, (start, end, when, metres) in zip(result["periods"], expected, strict=True):
        assert parse_iso(period["start"]) == pytest.approx(start, abs=0.005)
        assert parse_iso(period["end"]) == pytest.approx(end, abs=0.005)
        assert period["least_range"] == pytest.approx(metres / YD, abs=0.005)
        assert parse_iso(period["least_range_time"]) == pytest.approx(when, abs=0.01)
        assert period["at_edge"] is None and "first_position_dm" in period
        assert period["duration_s"] == pytest.approx(end - start, abs=0.01)
    assert result["total_duration_s"] == pytest.approx(sum(e[1] - e[0] for e in expected), abs=0.05)
    assert result["pairs"] == "the primary against each other track"


def test_close_quarters_cut_by_a_window_and_never_within(ships: Any) -> None:
    nelson, collingwood, pair = ships
    cut = window([nelson, collingwood], "10:50:00", "11:30:00")
    result = props(run_ok("close-quarters", cut, {"threshold": 500, "distance_unit": "yd"}))
    first = result["periods"][0]
    assert pair.range(at("10:50:00")) < 500 * YD  # GeographicLib: already within at the window's start
    assert first["start"] == f"{DAY}10:50:00Z" and first["at_edge"] == "start"
    assert first["note"].startswith("already within at the start of the window")
    never = props(run_ok("close-quarters", [nelson, collingwood], {"threshold": 100, "distance_unit": "yd"}))
    assert never["period_count"] == 0 and never["note"].startswith("never within 100 yd: the least range was 119.5")


def test_close_quarters_pairs_primary_or_all() -> None:
    t = [0.0, 600.0, 1200.0]
    a = track_feature("a", t, [0.0, 0.0, 0.0], [0.0, 0.01, 0.02])
    b = track_feature("b", t, [0.001, 0.001, 0.001], [0.0, 0.01, 0.02])  # alongside a, 111 m east
    c = track_feature("c", t, [0.002, 0.002, 0.002], [0.0, 0.01, 0.02])  # 111 m further east
    primary = run_ok("close-quarters", [a, b, c], {"threshold": 0.15, "distance_unit": "km"})
    assert [(f["properties"]["first_id"], f["properties"]["second_id"]) for f in primary.features] == [
        ("a", "b"),
        ("a", "c"),
    ]
    assert [f["properties"]["period_count"] for f in primary.features] == [1, 0]
    every = run_ok(
        "close-quarters", [a, b, c], {"threshold": 0.15, "distance_unit": "km", "pairs": "all", "primary": "b"}
    )
    assert [(f["properties"]["first_id"], f["properties"]["second_id"]) for f in every.features] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]
    whole = every.features[0]["properties"]["periods"][0]
    assert whole["at_edge"] == "both" and whole["duration_s"] == 1200
    assert "start of the data" in whole["note"] and "end of the data" in whole["note"]
    assert every.features[0]["properties"]["pairs"] == "every pair of tracks"


# --- degrees and minutes ---------------------------------------------------------------------------------


def test_degrees_and_minutes_round_over_correctly() -> None:
    assert position_dm([-21.7735, 22.12350]) == "22°07.41'N 021°46.41'W"
    assert latitude_dm(22.9999999) == "23°00.00'N"  # 59.99999' is 60.00', which is the next degree
    assert longitude_dm(-0.0000001) == "000°00.00'E"  # rounds to zero: no hemisphere but the default
    assert longitude_dm(359.5) == "000°30.00'W" and longitude_dm(-180.0) == "180°00.00'E"
    assert latitude_dm(-90.0) == "90°00.00'S" and latitude_dm(12.5, 0) == "12°30'N"
    with pytest.raises(ValueError):
        latitude_dm(91.0)


@given(st.floats(-90, 90), st.floats(-540, 540))
def test_degrees_and_minutes_read_back_to_the_position(lat: float, lon: float) -> None:
    def value(text: str) -> float:
        degrees, rest = text.split("°")
        minutes = float(rest[:-2])
        assert 0 <= minutes < 60
        return (int(degrees) + minutes / 60) * (-1 if rest[-1] in "SW" else 1)

    lat_text, lon_text = position_dm([lon, lat]).split(" ")
    assert abs(value(lat_text) - lat) * 60 <= 0.005 + 1e-9
    wrapped = 180.0 - (180.0 - lon) % 360.0
    assert abs(wrap180(value(lon_text) - wrapped)) * 60 <= 0.005 + 1e-9


def test_zone_transits_and_area_summary_positions_carry_degrees_and_minutes(ships: Any) -> None:
    nelson = ships[0]
    zone = {
        "type": "Feature",
        "id": "box",
        "geometry": {
            "type": "Polygon",
            "coordinates": [[[-21.80, 22.10], [-21.74, 22.10], [-21.74, 22.14], [-21.80, 22.14], [-21.80, 22.10]]],
        },
        "properties": {"dataType": "annotation", "annotationType": "area", "name": "BOX"},
    }
    transit = props(run_ok("zone-transits", [nelson, zone]))
    stays = [s for z in transit["zones"] for s in z["transits"]] if "zones" in transit else transit["transits"]
    entered = [s for s in stays if s["entry_position"] is not None]
    assert entered and all(s["entry_position_dm"] == position_dm(s["entry_position"]) for s in entered)
    area = props(run_ok("area-summary", [zone]))
    assert area["centroid_dm"] == position_dm(area["centroid"])


# --- through the calc server, both eras -------------------------------------------------------------------


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, workspace: Path) -> AsyncIterator[Client]:
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        (workspace / name).write_text((DATA / "rep" / name).read_text(encoding="utf-8"), encoding="utf-8")
    async with Client(build_server(ServerConfig("debrief-calc-mcp", workspace)), mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_passes_close_quarters_and_range_rate_through_run_tool(client: Client, ships: Any) -> None:
    _, _, pair = ships
    refs = []
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        err, out = await call(client, "run_tool", tool="import-rep", parameters={"path": name})
        assert not err, out
        refs.append({"ref": out["stored"]["ref"]})
    window_args = {"time_start": f"{DAY}11:10:00Z", "time_end": f"{DAY}11:30:00Z"}
    err, out = await call(
        client, "run_tool", tool="closest-approach", features=refs, parameters={"distance_unit": "yd"}, **window_args
    )
    assert not err, out
    cpa = out["features"][0]["properties"]
    t, r = pair.dense(at("11:10:00"), at("11:30:00"))
    check_passes(cpa["passes"], pair, t, r)
    assert [p["pass"] for p in cpa["passes"]] == [1, 2]  # 11:13:33 and 11:23:00, both between fixes
    err, out = await call(
        client,
        "run_tool",
        tool="close-quarters",
        features=refs,
        parameters={"threshold": 300, "distance_unit": "yd"},
        **window_args,
    )
    assert not err, out
    periods = out["features"][0]["properties"]["periods"]
    assert [p["least_range"] for p in periods] == [pytest.approx(p["range"], abs=1e-6) for p in cpa["passes"]]
    err, out = await call(client, "describe_tool", name="close-quarters")
    assert not err and {p["name"] for p in out["parameters"]} == {"threshold", "pairs", "primary", "distance_unit"}
    err, out = await call(client, "run_tool", tool="tote", features=refs, parameters={"time": f"{DAY}11:13:00Z"})
    assert not err and out["features"][0]["properties"]["range_rate"] < 0  # closing to the 11:13:33 pass
    err, out = await call(
        client,
        "run_tool",
        tool="track-legs",
        features=refs[:1],
        parameters={"mark_legs": True, "marks_timed": False},
        time_start=f"{DAY}10:00:00Z",
        time_end=f"{DAY}11:00:00Z",
    )
    assert not err, out
    answer = out["features"][0]["properties"]
    assert [m["manoeuvre"] for m in answer["manoeuvres"]] == list(range(1, len(answer["manoeuvres"]) + 1))
    assert any(m["within"] == "after_last_leg" for m in answer["manoeuvres"] if m["between_legs"] is None)
    marks = [f for f in out["features"] if f["properties"]["kind"] == "annotation"]
    assert len(marks) == answer["leg_count"] and all("time" not in m["properties"] for m in marks)


# --- over stdio, through the real console script -------------------------------------------------------------


@pytest.mark.anyio
async def test_the_instruments_over_stdio_through_debrief_calc_mcp(workspace: Path, ships: Any) -> None:
    import anyio
    from mcp import StdioServerParameters

    from tests.conftest import console_script, subprocess_env

    _, _, pair = ships
    for name in ("valid_boat1.rep", "valid_boat2.rep"):
        (workspace / name).write_text((DATA / "rep" / name).read_text(encoding="utf-8"), encoding="utf-8")
    params = StdioServerParameters(
        command=console_script("debrief-calc-mcp"), args=["--workspace", str(workspace)], env=subprocess_env()
    )
    window_args = {"time_start": f"{DAY}10:00:00Z", "time_end": f"{DAY}11:30:00Z"}
    with anyio.fail_after(120):
        async with Client(params) as c:
            refs = []
            for name in ("valid_boat1.rep", "valid_boat2.rep"):
                err, out = await call(c, "run_tool", tool="import-rep", parameters={"path": name})
                assert not err, out
                refs.append({"ref": out["stored"]["ref"]})
            err, out = await call(
                c, "run_tool", tool="closest-approach", features=refs, parameters={"distance_unit": "yd"}, **window_args
            )
            assert not err, out
            cpa = out["features"][0]["properties"]
            t, r = pair.dense(at("10:00:00"), at("11:30:00"))
            check_passes(cpa["passes"], pair, t, r)
            assert cpa["is_pass"] and [p["is_cpa"] for p in cpa["passes"]].count(True) == 1
            err, out = await call(
                c,
                "run_tool",
                tool="close-quarters",
                features=refs,
                parameters={"threshold": 500, "distance_unit": "yd"},
                **window_args,
            )
            assert not err, out
            expected = periods_by_definition(pair, t, r, 500 * YD)
            periods = out["features"][0]["properties"]["periods"]
            assert [(parse_iso(p["start"]), parse_iso(p["end"])) for p in periods] == [
                (pytest.approx(s, abs=0.005), pytest.approx(e, abs=0.005)) for s, e, _, _ in expected
            ]
            err, out = await call(c, "run_tool", tool="tote", features=refs, parameters={"time": f"{DAY}10:44:30Z"})
            assert not err, out
            row = out["features"][0]["properties"]
            when, legs = at("10:44:30"), (pair.a.leg(at("10:44:30")), pair.b.leg(at("10:44:30")))
            fd = (pair.range(when + 0.25, legs) - pair.range(when - 0.25, legs)) / 0.5 / KNOT
            assert row["range_rate"] == pytest.approx(fd, abs=0.01)
            assert row["primary_rate_of_turn"] == pytest.approx(reference_turn_rate(pair.a, when), abs=1e-3)
            err, out = await call(
                c,
                "run_tool",
                tool="track-legs",
                features=refs[:1],
                time_start=f"{DAY}10:00:00Z",
                time_end=f"{DAY}11:00:00Z",
            )
            assert not err, out
            legs_answer = out["features"][0]["properties"]
            assert any(m["between_legs"] is None for m in legs_answer["manoeuvres"])
            assert legs_answer["legs"][0]["cut_by_window"] == "start"
