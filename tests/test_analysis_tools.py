"""The analysis tools on made-up tracks whose answers are known: every parameter honoured."""

from __future__ import annotations

import numpy as np
import pytest

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.cpa import closest_approach
from debrief_calc.analysis.track_stats import statistics
from debrief_calc.tracks.features import iso_many, parse_iso, track_data
from debrief_calc.tracks.paging import slice_points
from tests.test_analysis_support import (
    GEOD,
    boats,
    coords,
    epoch,
    glib_range_bearing,
    load_json,
    plot_tracks,
    props,
    run_err,
    run_ok,
    track_feature,
)

T0 = parse_iso("2024-03-01T12:00:00Z")
METRES = {"nm": 1852.0, "m": 1.0, "km": 1000.0, "yd": 0.9144, "kyd": 914.4, "mi": 1609.344}


def straight(
    fid: str, lat0: float, lon0: float, course: float, knots: float, n: int, dt: float, t0: float = T0
) -> dict:
    """A platform on a steady geodesic course, fixes every ``dt`` seconds."""
    line = GEOD.DirectLine(lat0, lon0, course, knots * 1852 / 3600 * dt * (n - 1))
    pts = [line.Position(line.s13 * k / (n - 1)) for k in range(n)]
    return track_feature(fid, t0 + dt * np.arange(n), [p["lon2"] for p in pts], [p["lat2"] for p in pts])


# --- track-stats -----------------------------------------------------------------------------


def test_track_without_times_is_validation_failed_naming_the_field() -> None:
    feature = {
        "type": "Feature",
        "id": "nt",
        "geometry": {"type": "LineString", "coordinates": [[0, 0], [0.1, 0.1]]},
        "properties": {"kind": "track"},
    }
    for tool, params in (
        ("track-stats", {}),
        ("speed-filter", {"threshold_kn": 5}),
        ("resample-track", {"interval_s": 5}),
    ):
        error = run_err(tool, [feature], params)
        assert error["code"] == "VALIDATION_FAILED"
        assert error["details"]["field"] == "properties.timestamps"
        assert "no times" in error["message"]


def test_track_stats_says_it_takes_several_tracks() -> None:
    spec = default_registry().get("track-stats")
    assert spec.description.startswith("One track or several (one result per track):")
    assert spec.summary()["context_type"] == "single" and spec.summary()["also_accepts"] == ["multi"]
    assert spec.describe()["context_types"] == ["single", "multi"]
    result = run_ok("track-stats", list(boats()))
    assert [props(result, i)["track_name"] for i in range(2)] == ["NELSON", "COLLINGWOOD"]


def test_track_stats_segments_and_zero_time_legs() -> None:
    feature = track_feature("z", [0, 60, 60, 120, 180], [0, 0.01, 0.011, 0.02, 0.03], [0, 0, 0, 0, 0])
    result = run_ok("track-stats", [feature], {"include_segments": True, "max_segments": 3})
    stats = props(result)["statistics"]
    assert stats["zero_time_legs_ignored"] == 1 and any("take no time" in w for w in result.warnings)
    assert len(stats["segments"]) == 3 and stats["segments_truncated"] and stats["segment_count"] == 4
    first, second = stats["segments"][:2]
    assert (first["from"], first["to"]) == ("1970-01-01T00:00:00Z", "1970-01-01T00:01:00Z")
    assert second["speed_kn"] is None  # a leg that takes no time has no speed
    assert first["course"] == pytest.approx(90.0, abs=1e-6)
    assert first["distance"] * 1852 == pytest.approx(GEOD.Inverse(0, 0, 0, 0.01)["s12"], abs=1e-3)
    legs_kn = [
        GEOD.Inverse(0, a, 0, b)["s12"] / 60 / (1852 / 3600) for a, b in ((0, 0.01), (0.011, 0.02), (0.02, 0.03))
    ]
    assert stats["max_speed_kn"] == pytest.approx(max(legs_kn), abs=1e-4)
    assert "segments" not in props(run_ok("track-stats", [feature]))["statistics"]


def test_track_stats_of_a_motionless_instant_says_so() -> None:
    feature = track_feature("still", [5, 5], [1, 1], [2, 2])
    result = run_ok("track-stats", [feature])
    stats = props(result)["statistics"]
    assert stats["duration_s"] == 0 and stats["mean_speed_kn"] is None and stats["max_speed_kn"] is None
    assert stats["mean_course"] is None and stats["distance"] == 0
    assert any("spans no time" in w for w in result.warnings)


def test_track_stats_mean_course_and_geometry() -> None:
    feature = straight("s", 50, -4, 30, 12, 61, 60)
    result = run_ok("track-stats", [feature])
    stats = props(result)["statistics"]
    lat, lon = coords(feature)
    line = GEOD.InverseLine(lat[0], lon[0], lat[-1], lon[-1])  # the mean course is mid-path's
    assert stats["mean_course"] == pytest.approx(line.Position(line.s13 / 2)["azi2"], abs=0.002)
    assert stats["course_steadiness"] == pytest.approx(1.0, abs=1e-6)
    assert stats["mean_speed_kn"] == pytest.approx(12.0, abs=1e-4)
    assert result.features[0]["geometry"] == {"type": "Point", "coordinates": [lon[-1], lat[-1]]}


def test_track_stats_says_when_the_mean_course_of_a_turning_track_says_little() -> None:
    b1, _ = boats()
    result = run_ok("track-stats", [b1])
    stats = props(result)["statistics"]
    assert stats["mean_course"] == pytest.approx(225.4457) and stats["course_steadiness"] == pytest.approx(0.056315)
    assert stats["mean_course_note"] == "the track turns a lot: its mean course says little"
    assert list(stats).index("mean_course_note") == list(stats).index("course_steadiness") + 1
    assert any("rep-nelson" in w and "course_steadiness 0.06" in w for w in result.warnings)
    steady = run_ok("track-stats", [straight("s", 50, -4, 30, 12, 61, 60)])
    assert "mean_course_note" not in props(steady)["statistics"] and not steady.warnings
    description = default_registry().get("track-stats").description
    assert "course_steadiness (resultant / distance: 1 is a straight line" in description


def test_track_stats_bbox_across_the_antimeridian() -> None:
    feature = track_feature("am", [0, 600, 1200], [179.9, -179.95, -179.8], [10, 10.01, 10.02])
    stats = props(run_ok("track-stats", [feature]))["statistics"]
    assert stats["bbox"] == pytest.approx([179.9, 10.0, -179.8, 10.02])
    assert stats["distance_nm"] < 20


# --- distance_unit everywhere ----------------------------------------------------------------


@pytest.mark.parametrize("unit", ["m", "km", "yd", "kyd", "mi"])
def test_distance_unit_is_honoured_by_every_tool_that_has_it(unit: str) -> None:
    b1, b2 = boats()
    zone = load_json("calc-zone-region.geojson")

    def figures(u: str) -> list[float]:
        stats = props(run_ok("track-stats", [b1], {"distance_unit": u}))
        rb = props(run_ok("range-bearing", [b1, b2], {"distance_unit": u, "sample": "endpoints"}))
        cpa = props(run_ok("closest-approach", [b1, b2], {"distance_unit": u}))
        area = props(run_ok("area-summary", [zone], {"distance_unit": u}))
        tote = props(run_ok("tote", [b1, b2], {"distance_unit": u, "time": "1995-12-12T10:30:00Z"}))
        for p in (stats["statistics"], rb, cpa, area, tote):
            assert p["distance_unit"] == u
        return [
            stats["statistics"]["distance"],
            rb["series"]["range"][0],
            rb["min_sampled_range"],
            rb["cpa_range"],
            cpa["range"],
            area["perimeter"],
            tote["range"],
        ]

    for nm_value, value in zip(figures("nm"), figures(unit), strict=True):
        assert value * METRES[unit] == pytest.approx(nm_value * METRES["nm"], abs=0.002)  # rounded to the mm
        assert value != pytest.approx(nm_value, rel=1e-3)


# --- range-bearing ---------------------------------------------------------------------------


def test_relative_bearing_angle_on_bow_and_bearing_rate_signs() -> None:
    own = straight("own", 50, -4, 0, 10, 11, 60)  # heading north
    east = straight("east", 50, -3.95, 0, 10, 11, 60)  # abeam to starboard, same course
    west = straight("west", 50, -4.05, 180, 10, 11, 60)  # to port, opposite course
    rb = props(run_ok("range-bearing", [own, east], {"sample": "endpoints"}))["series"]
    assert rb["relative_bearing"][0] == pytest.approx(90.0, abs=0.05) and rb["relative_bearing_side"][0] == "G"
    assert rb["atb"][0] == pytest.approx(-90.0, abs=0.05)  # own is on east's port beam
    assert rb["atb_side"][0] == "R"
    assert abs(rb["bearing_rate"][0]) < 0.01
    rb = props(run_ok("range-bearing", [own, west], {"sample": "endpoints"}))["series"]
    assert rb["relative_bearing"][0] == pytest.approx(-90.0, abs=0.05)  # port: negative, red
    assert rb["relative_bearing_side"][0] == "R"
    assert rb["atb"][0] == pytest.approx(-90.0, abs=0.05) and rb["atb_side"][0] == "R"
    # west goes south while own goes north: the bearing of west draws left (decreasing 270 -> 260...)
    assert rb["bearing_rate"][0] < -0.5 and rb["bearing_rate_side"][0] == "L"
    # the tote at the same instant says the same, by the same names
    tote = props(run_ok("tote", [own, west], {"time": iso_many(np.array([T0]))[0], "distance_unit": "nm"}))
    assert {k: tote[k] for k in rb} == {k: v[0] for k, v in rb.items()}
    in_yards = props(run_ok("tote", [own, west], {"time": iso_many(np.array([T0]))[0]}))
    assert in_yards["distance_unit"] == "yd" and in_yards["range"] == pytest.approx(tote["range"] * 1852 / 0.9144)
    ahead = straight("ahead", 50.05, -4, 0, 10, 11, 60)  # dead ahead, same course: on neither side
    row = props(run_ok("tote", [own, ahead], {"time": iso_many(np.array([T0]))[0]}))
    assert (row["relative_bearing"], row["relative_bearing_side"]) == (0.0, None)  # dead ahead
    assert (row["atb"], row["atb_side"]) == (180.0, None)  # she sees own dead astern
    assert (row["bearing_rate"], row["bearing_rate_side"]) == (0.0, None)  # steady bearing


def test_range_bearing_sampling_modes_and_cap() -> None:
    b1, b2 = boats()
    every = props(run_ok("range-bearing", [b1, b2]))
    assert every["sample"] == "all" and every["sample_count"] == 399  # NELSON's fixes from 05:03 to 11:41
    interval = props(run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 600}))
    assert interval["sample_count"] == 40 and interval["interval_s"] == 600
    times = [parse_iso(t) for t in interval["series"]["time"]]
    assert np.allclose(np.diff(times), 600)
    # on round multiples of the interval, not on the overlap's start (05:03)
    assert interval["overlap_start"] == "1995-12-12T05:03:00Z"
    assert interval["series"]["time"][:2] == ["1995-12-12T05:10:00Z", "1995-12-12T05:20:00Z"]
    assert interval["series"]["time"][-1] == "1995-12-12T11:40:00Z"
    hourly = props(run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 3600}))
    assert hourly["series"]["time"] == [f"1995-12-12T{h:02d}:00:00Z" for h in range(6, 12)]
    spec = default_registry().get("range-bearing").describe()
    (param,) = [p for p in spec["parameters"] if p["name"] == "interval_s"]
    assert "round multiples" in param["description"] and "round multiples" in spec["description"]
    # a span shorter than the interval with no multiple inside: no samples, and a note says why
    short = [slice_points(b, 4, 8) for b in (b1, b2)]  # 05:04 to 05:07 and 05:07 to 05:10 -> 05:07 only
    none = props(run_ok("range-bearing", short, {"sample": "interval", "interval_s": 600}))
    assert none["sample_count"] == 0 and "no multiple of interval_s=600 s" in none["note"]
    capped = props(run_ok("range-bearing", [b1, b2], {"max_samples": 10}))
    assert capped["sample_count"] == 10 and capped["samples_total"] == 399 and capped["samples_capped"]
    assert capped["series"]["time"][0] == every["series"]["time"][0]
    assert capped["series"]["time"][-1] == every["series"]["time"][-1]
    tiny = run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 0.001, "max_samples": 100})
    assert props(tiny)["samples_total"] == 23_880_001 and props(tiny)["sample_count"] == 100
    assert tiny.warnings


def test_range_bearing_interval_s_alone_means_interval_sampling() -> None:
    b1, b2 = boats()
    alone = props(run_ok("range-bearing", [b1, b2], {"interval_s": 600}))
    named = props(run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 600}))
    assert alone["sample"] == "interval" and alone["interval_s"] == 600 and alone["series"] == named["series"]
    assert props(run_ok("range-bearing", [b1, b2], {"sample": "interval"}))["interval_s"] == 60
    assert props(run_ok("range-bearing", [b1, b2]))["sample"] == "all"
    spec = default_registry().get("range-bearing").describe()
    (sample,) = [p for p in spec["parameters"] if p["name"] == "sample"]
    assert "'interval' when interval_s is given, else 'all'" in sample["description"]


def test_range_bearing_rejections() -> None:
    b1, b2 = boats()
    for mode in ("all", "endpoints", "ALL"):
        error = run_err("range-bearing", [b1, b2], {"interval_s": 30, "sample": mode})
        assert (error["code"], error["details"]["field"]) == ("VALIDATION_FAILED", "interval_s")
        assert error["details"]["rule"] == "applies-to" and error["details"]["sample"] == mode.lower()
        assert "drop interval_s, or drop sample" in error["message"]
    error = run_err("range-bearing", [b1, b2], {"primary": "nobody"})
    assert (error["details"]["field"], error["details"]["ids"]) == ("primary", ["rep-nelson", "rep-collingwood"])
    later = straight("later", 22, -21.7, 0, 10, 5, 60, t0=parse_iso("1995-12-13T00:00:00Z"))
    error = run_err("range-bearing", [b1, later])
    assert (error["code"], error["details"]["rule"]) == ("VALIDATION_FAILED", "overlap")
    assert "no time overlap" in error["message"]


def test_range_bearing_one_result_per_secondary() -> None:
    b1, b2 = boats()
    later = straight("later", 22, -21.7, 0, 10, 5, 60, t0=parse_iso("1995-12-13T00:00:00Z"))
    result = run_ok("range-bearing", [b1, b2, later], {"sample": "endpoints"})
    assert [p["secondary_id"] for p in (props(result, 0), props(result, 1))] == ["rep-collingwood", "later"]
    assert props(result, 1)["sample_count"] == 0 and "no time overlap" in props(result, 1)["note"]
    assert result.features[1]["geometry"] is None and result.warnings


# --- closest-approach ------------------------------------------------------------------------


def test_cpa_is_found_between_sparse_fixes() -> None:
    # crossing courses with fixes every 10 minutes: the CPA falls between fixes
    a = straight("a", 50.0, -4.0, 45, 12, 7, 600)
    b = straight("b", 50.0, -3.9, 315, 9, 7, 600, t0=T0 + 120)
    result = props(run_ok("closest-approach", [a, b], {"distance_unit": "m"}))
    t_cpa = parse_iso(result["time"])
    fine = np.arange(T0 + 120, T0 + 3600, 0.5)
    scan = [glib_range_bearing(a, b, float(t))[0] for t in fine]
    k = int(np.argmin(scan))
    assert result["range"] == pytest.approx(scan[k], abs=0.5)
    assert abs(t_cpa - fine[k]) < 2
    assert result["between_fixes"]
    at_fixes = min(glib_range_bearing(a, b, float(t))[0] for t in epoch(a) if T0 + 120 <= t <= T0 + 3600)
    assert result["range"] < at_fixes - 500  # a fix-time-only answer would be far off
    assert np.min(np.abs(np.union1d(epoch(a), epoch(b)) - t_cpa)) > 200
    assert result["first_speed_kn"] == pytest.approx(12, abs=1e-3) and result["second_course"] == pytest.approx(
        315, abs=0.05
    )


def test_cpa_at_the_edge_of_the_overlap_and_pairs() -> None:
    a = straight("a", 50, -4, 0, 10, 10, 60)
    b = straight("b", 50.01, -4, 0, 20, 10, 60)  # ahead and pulling away: closest at the start
    c = straight("c", 50, -4, 0, 10, 10, 60, t0=T0 + 86400)
    result = run_ok("closest-approach", [a, b, c])
    first = props(result, 0)
    assert first["at_edge"] == "start" and first["time"] == iso_many(np.array([T0]))[0]
    assert (
        not first["is_pass"]
        and first["pass_count"] == 0
        and result.features[0]["properties"]["name"].startswith("Least range")
    )
    assert [(p["first_id"], p["second_id"]) for p in (props(result, i) for i in range(3))] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]
    assert props(result, 1)["note"] == "no time overlap" and result.features[1]["geometry"] is None
    assert len(result.warnings) == 2
    error = run_err("closest-approach", [a, c])
    assert (error["code"], error["details"]["rule"]) == ("VALIDATION_FAILED", "overlap")


def test_cpa_names_the_bearing_and_says_what_an_edge_means_on_the_real_ships() -> None:
    nelson, collingwood = boats()
    cpa = props(run_ok("closest-approach", [nelson, collingwood], {"distance_unit": "yd"}))
    assert cpa["bearing_of"] == "COLLINGWOOD from NELSON"
    assert cpa["is_pass"] and cpa["at_edge"] is None and "cpa_note" not in cpa
    # the bearing runs from the first to the second: the other way round it is the reciprocal
    back = props(run_ok("closest-approach", [collingwood, nelson], {"distance_unit": "yd"}))
    assert back["bearing_of"] == "NELSON from COLLINGWOOD"
    assert (back["bearing"] - cpa["bearing"]) % 360 == pytest.approx(180, abs=0.01)

    times = collingwood["properties"]["timestamps"]
    before = slice_points(collingwood, 0, times.index("1995-12-12T10:40:00Z") + 1)  # ends before the CPA
    closing = props(run_ok("closest-approach", [nelson, before], {"distance_unit": "yd"}))
    assert closing["at_edge"] == "end" and closing["time"] == "1995-12-12T10:40:00Z" and not closing["is_pass"]
    assert closing["cpa_note"].startswith("closest at the end of the data (range closing): not a CPA")
    assert closing["range_trend"].endswith(f"closing to {closing['range']:.4g} yd at the end (1995-12-12T10:40:00Z)")
    after = slice_points(collingwood, times.index("1995-12-12T10:46:00Z"), times.index("1995-12-12T10:56:00Z"))
    opening = props(run_ok("closest-approach", [nelson, after], {"distance_unit": "yd"}))
    assert opening["at_edge"] == "start" and opening["time"] == "1995-12-12T10:46:00Z" and not opening["is_pass"]
    assert opening["cpa_note"].startswith("closest at the start of the data (range opening): not a CPA")
    assert opening["range_trend"].startswith(
        f"{opening['range']:.4g} yd at the start (1995-12-12T10:46:00Z), opening to"
    )
    described = default_registry().get("closest-approach").description
    assert "bearing_of" in described and "at_edge" in described and "cpa_note" in described


def test_cpa_of_two_100k_point_tracks_is_quick() -> None:
    n = 100_000
    t = T0 + np.arange(n, dtype=float)
    a = {
        "type": "Feature",
        "id": "a",
        "geometry": {
            "type": "LineString",
            "coordinates": np.column_stack((np.linspace(-4, -3, n), np.full(n, 50.0), np.zeros(n), t * 1000)).tolist(),
        },
        "properties": {"kind": "track"},
    }
    b = {
        "type": "Feature",
        "id": "b",
        "geometry": {
            "type": "LineString",
            "coordinates": np.column_stack(
                (np.full(n, -3.3), np.linspace(49.3, 50.3, n), np.zeros(n), (t + 0.5) * 1000)
            ).tolist(),
        },
        "properties": {"kind": "track"},
    }
    ta, tb = track_data(a), track_data(b)
    when, rng = closest_approach(ta, tb, (float(tb.t[0]), float(ta.t[-1])))
    assert abs(when - (T0 + 70_000)) < 5  # both at (3.3 W, 50 N) 70 % of the way along
    assert rng < 50  # they cross


def test_track_stats_on_a_million_points_is_vectorised() -> None:
    n = 1_000_000
    t = T0 + np.arange(n, dtype=float)
    lon = np.cumsum(np.full(n, 8e-5)) % 2 - 4  # wraps back: a ship going round the box
    f = {
        "type": "Feature",
        "id": "big",
        "geometry": {
            "type": "LineString",
            "coordinates": np.column_stack((lon, np.full(n, 50.0), np.zeros(n), t * 1000)).tolist(),
        },
        "properties": {"kind": "track"},
    }
    track = track_data(f)
    stats, _ = statistics(track, "nm")
    assert stats["point_count"] == n


# --- speed-filter ----------------------------------------------------------------------------


def test_speed_filter_modes_and_zero_time_legs() -> None:
    # 4 legs of 60 s: fast, fast, (no time), fast, slow
    lons = [0, 0.01, 0.02, 0.0201, 0.03, 0.0305]
    feature = track_feature("sf", [0, 60, 120, 120, 180, 240], lons, [0] * 6)
    above = props(run_ok("speed-filter", [feature], {"threshold_kn": 5}))
    assert above["period_count"] == 1  # the zero-time leg does not split the run
    (period,) = above["periods"]
    assert (period["start"], period["end"], period["duration_s"]) == (
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:03:00Z",
        180,
    )
    assert period["fix_count"] == 5
    below = props(run_ok("speed-filter", [feature], {"threshold_kn": 5, "mode": "below"}))
    assert [p["start"] for p in below["periods"]] == ["1970-01-01T00:03:00Z"]
    assert props(run_ok("speed-filter", [feature], {"threshold_kn": 0, "mode": "below"}))["period_count"] == 0
    assert (
        props(run_ok("speed-filter", [feature], {"threshold_kn": 5, "min_duration_s": 200}))["periods_too_short"] == 1
    )
    result = run_ok("speed-filter", [feature], {"threshold_kn": 5})
    assert result.features[0]["geometry"]["type"] == "MultiLineString"
    assert len(result.features[0]["geometry"]["coordinates"][0]) == 5


def test_speed_filter_merges_periods_split_by_short_dips() -> None:
    b1, _ = boats()
    split = props(run_ok("speed-filter", [b1], {"threshold_kn": 11}))
    spans = [(p["start"][11:16], p["end"][11:16]) for p in split["periods"]]
    assert split["period_count"] == 11 and ("07:59", "08:22") in spans and ("08:23", "08:38") in spans
    assert split["min_gap_s"] == 0 and split["gaps_closed"] == 0
    assert split["total_duration_s"] == pytest.approx(sum(p["duration_s"] for p in split["periods"]))
    merged = props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_gap_s": 90}))
    assert merged["period_count"] == 10 and merged["gaps_closed"] == 1
    (run,) = [p for p in merged["periods"] if p["start"].startswith("1995-12-12T07:59")]
    assert run["end"].startswith("1995-12-12T08:38") and run["duration_s"] == 39 * 60
    # the dip counts in the merged period: its distance, its mean speed, its fixes
    first, second = (p for p in split["periods"] if p["start"][11:16] in ("07:59", "08:23"))
    assert run["distance_nm"] > first["distance_nm"] + second["distance_nm"]
    assert run["fix_count"] == first["fix_count"] + second["fix_count"]
    assert run["max_speed_kn"] == max(first["max_speed_kn"], second["max_speed_kn"])
    assert merged["total_duration_s"] == split["total_duration_s"] + 60
    # a 2-minute gap (07:57 to 07:59) is not shorter than 120 s; 121 s closes it too
    assert props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_gap_s": 120}))["gaps_closed"] == 1
    assert props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_gap_s": 121}))["gaps_closed"] == 2
    # merging comes before min_duration_s: the merged run is long enough where its halves were not
    long = props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_gap_s": 90, "min_duration_s": 1800}))
    assert any(p["start"].startswith("1995-12-12T07:59") for p in long["periods"])
    assert not any(
        p["start"].startswith("1995-12-12T07:59")
        for p in props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_duration_s": 1800}))["periods"]
    )
    error = run_err("speed-filter", [b1], {"threshold_kn": 11, "min_gap_s": -1})
    assert error["details"]["field"] == "min_gap_s"


# --- resample-track --------------------------------------------------------------------------


def test_resample_counts_names_and_command() -> None:
    b1, _ = boats()
    result = run_ok("resample-track", [b1], {"interval_s": 60})
    (track,) = result.features
    assert track["id"] == "rep-nelson-resampled-60" and track["properties"]["name"] == "NELSON (every 1 min)"
    assert track["properties"]["kind"] == track["properties"]["dataType"] == "track"
    assert len(track["geometry"]["coordinates"]) == len(track["properties"]["timestamps"]) == 402
    assert "speeds" not in track["properties"] and "courses" not in track["properties"]
    assert result.commands == [{"command": "addFeatures", "payload": {"features": [track]}}]
    # at the original fix times the resampled track is the original track
    assert np.allclose(track["geometry"]["coordinates"], b1["geometry"]["coordinates"], atol=1e-9)
    odd = run_ok("resample-track", [b1], {"interval_s": 7}).features[0]
    assert len(odd["properties"]["timestamps"]) == 24060 // 7 + 1
    assert np.allclose(np.diff([parse_iso(s) for s in odd["properties"]["timestamps"]]), 7)
    half = run_ok("resample-track", [b1], {"interval_s": 0.5}).features[0]
    assert half["id"] == "rep-nelson-resampled-0.5" and half["properties"]["name"] == "NELSON (every 0.5 s)"


def test_resample_methods_and_style() -> None:
    track = plot_tracks()[0]
    geo = run_ok("resample-track", [track], {"interval_s": 100}).features[0]
    lin = run_ok("resample-track", [track], {"interval_s": 100, "method": "linear"}).features[0]
    assert geo["properties"]["stroke"] == "#ff7373"  # VAN GALEN's #F00, lightened to tell them apart
    assert geo["properties"]["resample_method"] == "geodesic" and lin["properties"]["resample_method"] == "linear"
    a, b = np.array(geo["geometry"]["coordinates"]), np.array(lin["geometry"]["coordinates"])
    assert a.shape == b.shape and np.max(np.abs(a - b)) < 1e-5  # ~1 m apart on short legs
    assert np.max(np.abs(a - b)) > 0  # but not the same computation


def test_a_resampled_track_is_told_apart_from_its_original() -> None:
    """LEOPOLD I resampled every 5 minutes: on the picture the two tracks coincide, so the new
    one says what it is in its name and label and is drawn in a noticeably other shade."""
    leopold = next(t for t in plot_tracks() if t["properties"]["name"] == "LEOPOLD I")
    (new,) = run_ok("resample-track", [leopold], {"interval_s": 300}).features
    before, after = leopold["properties"], new["properties"]
    assert after["name"] == "LEOPOLD I (every 5 min)" and after["shortName"] == "LEOP 5m"
    assert before["stroke"] == "#0F0" and after["stroke"] == "#008c00"  # bright green darkened
    changed = {k for k in after if after.get(k) != before.get(k)}
    assert changed <= {
        "name",
        "shortName",
        "stroke",
        "timestamps",
        "kind",
        "resampled_from",
        "resample_interval_s",
        "resample_method",
        "provenance",
    }, changed
    assert set(before) - set(after) <= {"timestamps", "times", "positions", "courses", "speeds", "labels"}
    # dark colours are lightened, words for hours and odd intervals, a track with no short name
    b1, _ = boats()
    assert b1["properties"]["stroke"] == "#e01c3e"  # REP symbol C: a dark red
    hourly = run_ok("resample-track", [b1], {"interval_s": 3600}).features[0]["properties"]
    assert (hourly["name"], hourly["shortName"], hourly["stroke"]) == ("NELSON (every 1 h)", "NELSON 1h", "#ee8295")
    odd = run_ok("resample-track", [b1], {"interval_s": 90}).features[0]["properties"]
    assert (odd["name"], odd["shortName"]) == ("NELSON (every 90 s)", "NELSON 90s")
    unstyled = {**b1, "properties": {k: v for k, v in b1["properties"].items() if k != "stroke"}}
    assert "stroke" not in run_ok("resample-track", [unstyled], {"interval_s": 60}).features[0]["properties"]


def test_resample_limits() -> None:
    b1, _ = boats()
    error = run_err("resample-track", [b1], {"interval_s": 0.01})
    assert (error["details"]["field"], error["details"]["rule"]) == ("interval_s", "max-points")
    error = run_err("resample-track", [b1], {"interval_s": 30000})
    assert (error["details"]["field"], error["details"]["rule"]) == ("interval_s", "min-points")


# --- delete-features -------------------------------------------------------------------------


def test_delete_features_command() -> None:
    doc = load_json("plots/large-sample.plot.json")
    by_id = {str(f["id"]): f for f in doc["features"]}
    result = run_ok("delete-features", [by_id["z-1"], by_id["f-1"], by_id["z-1"]])
    assert result.features == []
    assert result.commands == [{"command": "deleteFeatures", "payload": {"ids": ["z-1", "f-1"]}}]
    numbered = {"type": "Feature", "id": 7, "geometry": None, "properties": {}}
    assert run_ok("delete-features", [numbered]).commands[0]["payload"] == {"ids": ["7"]}
    error = run_err("delete-features", [{"type": "Feature", "geometry": None, "properties": {"name": "anon"}}])
    assert (error["code"], error["details"]["field"]) == ("VALIDATION_FAILED", "id")


def test_range_bearing_when_the_ships_are_together() -> None:
    a = track_feature("a", [0, 60], [0, 0.01], [0, 0])
    b = track_feature("b", [0, 60], [0, 0.02], [0, 0])
    series = props(run_ok("range-bearing", [a, b], {"sample": "endpoints"}))["series"]
    assert series["range"][0] == 0
    assert series["bearing"][0] is None and series["relative_bearing"][0] is None
    assert series["bearing_rate"][0] is None and series["atb"][0] is None
    assert series["relative_bearing_side"][0] is None and series["atb_side"][0] is None
    assert series["bearing_rate_side"][0] is None
    assert series["bearing"][1] == pytest.approx(90.0)
