"""The analysis tools on the real sample data, checked against GeographicLib computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from debrief_calc.tracks.features import parse_iso
from tests.test_analysis_support import (
    GEOD,
    boats,
    coords,
    epoch,
    glib_length,
    glib_position,
    glib_range_bearing,
    load_json,
    plot_tracks,
    props,
    run_ok,
)

NM = 1852.0
KNOT = NM / 3600.0


def wrap180(x: float) -> float:
    return (x + 180.0) % 360.0 - 180.0


def glib_mid_course(feature: dict, when: float) -> float:
    """Course of the leg ``when`` falls in (the leg starting there at a fix), at mid-leg."""
    t = epoch(feature)
    lat, lon = coords(feature)
    i = min(int(np.searchsorted(t, when, side="right") - 1), t.size - 2)
    line = GEOD.InverseLine(lat[i], lon[i], lat[i + 1], lon[i + 1])
    return float(line.Position(line.s13 / 2)["azi2"] % 360.0)


def brute_force_cpa(a: dict, b: dict, step: float = 1.0) -> tuple[float, float]:
    """(time, range) of the least range, scanning with GeographicLib: every 20 s over the whole
    overlap, then every ``step`` seconds around the three best coarse samples."""
    ta, tb = epoch(a), epoch(b)
    start, end = max(ta[0], tb[0]), min(ta[-1], tb[-1])

    def rng(t: float) -> float:
        return glib_range_bearing(a, b, t)[0]

    coarse = np.arange(start, end + 1e-9, 20.0)
    ranges = np.array([rng(t) for t in coarse])
    best = (math.inf, math.nan)
    for k in np.argsort(ranges)[:3]:
        for t in np.arange(max(start, coarse[k] - 30), min(end, coarse[k] + 30) + 1e-9, step):
            best = min(best, (rng(float(t)), float(t)))
    return best[1], best[0]


# --- track-stats ---------------------------------------------------------------------------


@pytest.mark.parametrize("index", [0, 1])
def test_track_stats_of_the_rep_boats_match_geographiclib(index: int) -> None:
    boat = boats()[index]
    lat, lon = coords(boat)
    t = epoch(boat)
    stats = props(run_ok("track-stats", [boat]))["statistics"]
    expected_m = glib_length(lat, lon)
    assert stats["point_count"] == [402, 403][index]
    assert stats["distance"] * NM == pytest.approx(expected_m, abs=0.01)
    assert stats["duration_s"] == t[-1] - t[0] == [24060, 24120][index]
    assert stats["start"] == ["1995-12-12T05:00:00Z", "1995-12-12T05:03:00Z"][index]
    assert stats["mean_speed_kn"] == pytest.approx(expected_m / (t[-1] - t[0]) / KNOT, abs=1e-4)
    legs = [GEOD.Inverse(lat[i], lon[i], lat[i + 1], lon[i + 1])["s12"] / (t[i + 1] - t[i]) for i in range(t.size - 1)]
    assert stats["max_speed_kn"] == pytest.approx(max(legs) / KNOT, abs=1e-4)
    # the REP's speed column says 2.0 and 3.5 kn; the positions say otherwise
    stored = boat["properties"]["speeds"]
    assert abs(stats["mean_speed_kn"] - float(np.mean(stored))) > 0.5


def test_track_stats_of_the_large_plot_tracks_are_honest() -> None:
    tracks = plot_tracks()
    assert [f["id"] for f in tracks] == ["f-1", "f-2", "f-3"]
    for feature, count in zip(tracks, [781, 1081, 1081], strict=True):
        lat, lon = coords(feature)
        t = epoch(feature)
        stats = props(run_ok("track-stats", [feature], {"distance_unit": "km"}))["statistics"]
        assert stats["point_count"] == count
        expected = glib_length(lat, lon)
        assert stats["distance"] * 1000 == pytest.approx(expected, abs=0.01)
        assert stats["distance_unit"] == "km"
        assert stats["duration_s"] == pytest.approx(t[-1] - t[0], abs=1e-3)
        mean_kn = expected / (t[-1] - t[0]) / KNOT
        assert stats["mean_speed_kn"] == pytest.approx(mean_kn, abs=1e-3)
        stored = feature["properties"]["speeds"]
        assert abs(stats["mean_speed_kn"] - float(np.mean(stored))) > 1.0
        assert stats["max_speed_kn"] > max(stored)
        w, s, e, n = stats["bbox"]
        assert (w, s, e, n) == (lon.min(), lat.min(), lon.max(), lat.max())


def test_calc_single_track_times_come_from_its_coordinates() -> None:
    feature = load_json("calc-track-single.geojson")
    stats = props(run_ok("track-stats", [feature]))["statistics"]
    assert stats["start"] == "2024-01-15T08:00:00Z"  # not start_time's 2026
    assert stats["end"] == "2024-01-15T16:00:00Z"
    assert stats["duration_hours"] == 8
    assert stats["point_count"] == 9
    lat, lon = coords(feature)
    assert stats["distance_nm"] * NM == pytest.approx(glib_length(lat, lon), abs=0.01)
    assert stats["time_source"] == "geometry.coordinates[][3]"
    assert 20 < stats["mean_course"] < 40  # steadily north-east


# --- closest approach ------------------------------------------------------------------------


def test_cpa_of_the_two_rep_ships_matches_a_brute_force_scan() -> None:
    b1, b2 = boats()
    result = props(run_ok("closest-approach", [b1, b2], {"distance_unit": "m"}))
    t_ref, r_ref = brute_force_cpa(b1, b2)
    t_cpa = parse_iso(result["time"])
    assert result["range"] == pytest.approx(r_ref, abs=1.0)
    assert result["range"] <= r_ref + 1e-3  # never worse than the scan
    assert abs(t_cpa - t_ref) < 3.0
    assert result["between_fixes"] and result["at_edge"] is None and result["is_pass"]
    # the reported range is the geodesic distance between the reported positions
    (lon1, lat1), (lon2, lat2) = result["first_position"], result["second_position"]
    inv = GEOD.Inverse(lat1, lon1, lat2, lon2)
    assert inv["s12"] == pytest.approx(result["range"], abs=1e-3)
    assert result["bearing"] == pytest.approx(inv["azi1"] % 360, abs=1e-3)
    assert (lat1, lon1) == pytest.approx(glib_position(epoch(b1), *coords(b1), t_cpa), abs=1e-8)
    assert result["first_course"] == pytest.approx(glib_mid_course(b1, t_cpa), abs=1e-3)


def test_cpa_of_the_upstream_pair_fixture() -> None:
    alpha, bravo = load_json("calc-tracks-pair.geojson")["features"]
    result = props(run_ok("closest-approach", [alpha, bravo], {"distance_unit": "m"}))
    t_ref, r_ref = brute_force_cpa(alpha, bravo, step=1.0)
    assert result["range"] == pytest.approx(r_ref, abs=1.0)
    assert abs(parse_iso(result["time"]) - t_ref) < 3.0
    # head-on along the same line: they meet half-way, at 10:30
    assert result["range"] < 300
    assert abs(parse_iso(result["time"]) - parse_iso("2024-01-15T10:30:00Z")) < 120


# --- range and bearing -------------------------------------------------------------------------


def test_range_bearing_of_the_rep_ships_matches_geographiclib() -> None:
    b1, b2 = boats()
    result = props(run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 997, "distance_unit": "m"}))
    series = result["series"]
    assert result["sample_count"] == len(series["time"]) == 24
    assert result["overlap_start"] == "1995-12-12T05:03:00Z"
    for k in range(0, 24, 5):
        when = parse_iso(series["time"][k])
        rng, brg = glib_range_bearing(b1, b2, when)
        assert series["range"][k] == pytest.approx(rng, abs=0.01)
        assert series["bearing"][k] == pytest.approx(brg, abs=1e-3)
        own = glib_mid_course(b1, when)
        assert series["primary_course"][k] == pytest.approx(own, abs=1e-3)
        assert series["relative_bearing"][k] == pytest.approx(wrap180(brg - own), abs=1e-3)
        back = glib_range_bearing(b2, b1, when)[1]
        assert series["atb"][k] == pytest.approx(wrap180(back - glib_mid_course(b2, when)), abs=1e-3)
        assert -180 < series["relative_bearing"][k] <= 180


def test_bearing_rate_agrees_with_finite_differences_of_the_bearing() -> None:
    b1, b2 = boats()
    result = props(run_ok("range-bearing", [b1, b2], {"sample": "interval", "interval_s": 1, "max_samples": 100_000}))
    series = result["series"]
    t = np.array([parse_iso(s) for s in series["time"]])
    bearing = np.unwrap(np.radians(series["bearing"]))
    rate = np.array(series["bearing_rate"])
    fd = np.degrees(np.gradient(bearing, t)) * 60.0
    fixes = np.union1d(epoch(b1), epoch(b2))  # boat2's fixes are not all on the minute
    nearest = np.min(np.abs(t[:, None] - fixes[None, :]), axis=1)
    clear = nearest > 1.5  # a central difference across a change of leg measures both legs
    clear[[0, -1]] = False
    err = np.abs(rate[clear] - fd[clear])
    # allowance: bearings are rounded to 1e-4 degrees (0.003 deg/min over 2 s) and the planar
    # formula leaves out the convergence of the meridians (about 0.001 deg/min here)
    assert np.all(err <= 0.006 + 0.01 * np.abs(fd[clear])), float(err.max())
    assert float(np.median(err)) < 0.002
    assert np.ptp(rate) > 10  # a real test: the rate swings through the close pass
    # positive when drawing right: where the bearing increases, the rate is positive
    assert np.all(np.sign(rate[clear & (np.abs(fd) > 0.05)]) == np.sign(fd[clear & (np.abs(fd) > 0.05)]))


def test_range_bearing_of_the_upstream_pair_at_its_endpoints() -> None:
    alpha, bravo = load_json("calc-tracks-pair.geojson")["features"]
    result = props(run_ok("range-bearing", [alpha, bravo], {"sample": "endpoints", "distance_unit": "km"}))
    series = result["series"]
    assert series["time"] == ["2024-01-15T08:00:00Z", "2024-01-15T12:00:00Z"]
    inv = GEOD.Inverse(50.0, -5.0, 50.5, -4.0)
    assert series["range"][0] * 1000 == pytest.approx(inv["s12"], abs=0.01)
    assert series["bearing"][0] == pytest.approx(inv["azi1"] % 360, abs=1e-3)
    # Bravo is the primary when named
    swapped = props(run_ok("range-bearing", [alpha, bravo], {"sample": "endpoints", "primary": "track-bravo"}))
    assert swapped["primary_id"] == "track-bravo" and swapped["secondary_id"] == "track-alpha"
    assert swapped["series"]["bearing"][0] == pytest.approx(
        inv["azi2"] % 360 - 180 if inv["azi2"] % 360 >= 180 else inv["azi2"] % 360 + 180, abs=1e-3
    )


# --- zones ---------------------------------------------------------------------------------


def test_area_summary_of_the_upstream_zone_matches_geographiclib() -> None:
    zone = load_json("calc-zone-region.geojson")
    result = props(run_ok("area-summary", [zone], {"area_unit": "km2", "distance_unit": "km"}))
    poly = GEOD.Polygon()
    for lon, lat in zone["geometry"]["coordinates"][0][:-1]:
        poly.AddPoint(lat, lon)
    _, perimeter, area = poly.Compute(False, True)
    assert result["area_m2"] == pytest.approx(abs(area), rel=1e-9)
    assert result["area"] == pytest.approx(abs(area) / 1e6, rel=1e-9)
    assert result["perimeter"] * 1000 == pytest.approx(perimeter, abs=0.01)
    assert result["bounds"] == [-5.0, 49.5, -3.0, 51.0]
    assert result["centroid"] == pytest.approx([-4.0, 50.25], abs=0.01)
    by_bounds = props(
        run_ok("area-summary", [], {"area_unit": "km2", "distance_unit": "km"}, bounds=[-5, 49.5, -3, 51])
    )
    assert by_bounds["area_m2"] == pytest.approx(result["area_m2"], rel=1e-12)


def test_zone_transit_of_a_track_crossing_the_upstream_zone() -> None:
    from tests.test_analysis_support import track_feature

    zone = load_json("calc-zone-region.geojson")
    t0 = parse_iso("2024-01-15T08:00:00Z")
    # due east along 50.25 N from 6 W to 2 W in 4 hours, fixes every 30 minutes
    lons = np.linspace(-6.0, -2.0, 9)
    track = track_feature("crosser", t0 + 1800.0 * np.arange(9), lons, np.full(9, 50.25))
    result = props(run_ok("zone-transits", [track, zone]))
    assert result["transit_count"] == 1
    (transit,) = result["transits"]
    assert transit["entry_time"] == "2024-01-15T09:00:00Z"  # crosses 5 W after 1 h
    assert transit["exit_time"] == "2024-01-15T11:00:00Z"
    assert transit["entry_position"] == pytest.approx([-5.0, 50.25])
    assert transit["exit_position"] == pytest.approx([-3.0, 50.25])
    assert transit["duration_s"] == 7200
    assert result["total_inside_s"] == 7200 and not result["inside_at_start"]


def test_plot_tracks_and_zones_transits_run_on_real_features() -> None:
    doc = load_json("plots/large-sample.plot.json")
    features = [f for f in doc["features"] if f["id"] in ("f-1", "f-2", "f-3") or f["id"].startswith("z-")]
    result = run_ok("zone-transits", features, {"include_geometry": True})
    assert len(result.features) == 3 * 6
    for f in result.features:
        p = f["properties"]
        for transit in p["transits"]:
            if transit["entry_time"] and transit["exit_time"]:
                assert parse_iso(transit["exit_time"]) >= parse_iso(transit["entry_time"])
        assert len(f["geometry"]["coordinates"]) == p["transit_count"]


# --- speed filter on a real track --------------------------------------------------------------


def test_speed_filter_on_boat1() -> None:
    b1, _ = boats()
    above = props(run_ok("speed-filter", [b1], {"threshold_kn": 11}))
    below = props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "mode": "below"}))
    assert above["period_count"] > 0 and below["period_count"] > 0
    assert above["total_duration_s"] + below["total_duration_s"] == 24060
    t = epoch(b1)
    lat, lon = coords(b1)
    for period in above["periods"]:
        i, j = (int(np.searchsorted(t, parse_iso(period[k]))) for k in ("start", "end"))
        speeds = [
            GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["s12"] / (t[k + 1] - t[k]) / KNOT for k in range(i, j)
        ]
        assert min(speeds) > 11
        assert period["max_speed_kn"] == pytest.approx(max(speeds), abs=1e-3)
        if i > 0:
            k = i - 1
            assert GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["s12"] / 60 / KNOT <= 11
    longest = max(p["duration_s"] for p in above["periods"])
    filtered = props(run_ok("speed-filter", [b1], {"threshold_kn": 11, "min_duration_s": longest}))
    assert filtered["period_count"] == 1
    assert filtered["periods_too_short"] == above["period_count"] - 1
