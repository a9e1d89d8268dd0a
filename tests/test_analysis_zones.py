"""``zone-transits`` and ``area-summary`` on shapes whose answers are known."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from debrief_calc.analysis.zones import TRANSITS_SPEC
from debrief_calc.tracks.features import parse_iso
from tests.test_analysis_support import GEOD, coords, load_json, props, run_err, run_ok, track_feature

T0 = parse_iso("2024-05-01T00:00:00Z")


def zone(fid: str, *rings: list[list[float]], multi: list[list[list[list[float]]]] | None = None) -> dict[str, Any]:
    geometry = (
        {"type": "MultiPolygon", "coordinates": multi} if multi else {"type": "Polygon", "coordinates": list(rings)}
    )
    return {"type": "Feature", "id": fid, "geometry": geometry, "properties": {"kind": "zone", "name": fid}}


def square(w: float, s: float, e: float, n: float) -> list[list[float]]:
    return [[w, s], [e, s], [e, n], [w, n], [w, s]]


def along(fid: str, lons: list[float], lats: list[float], dt: float = 600.0) -> dict[str, Any]:
    return track_feature(fid, T0 + dt * np.arange(len(lons)), lons, lats)


def transits(track: dict[str, Any], z: dict[str, Any]) -> dict[str, Any]:
    return props(run_ok("zone-transits", [track, z]))


def at(k: float) -> str:
    from debrief_calc.tracks.features import iso

    return iso(T0 + k)


def test_inside_at_start_and_at_end() -> None:
    box = zone("box", square(0, 0, 1, 1))
    starts_in = transits(along("a", [0.5, 1.5], [0.5, 0.5]), box)
    (t,) = starts_in["transits"]
    assert t["entry_time"] is None and t["note"] == "already inside at start"
    assert t["exit_time"] == at(300) and t["exit_position"] == pytest.approx([1.0, 0.5])
    assert starts_in["inside_at_start"] and not starts_in["inside_at_end"]
    ends_in = transits(along("b", [-0.5, 0.5], [0.5, 0.5]), box)
    (t,) = ends_in["transits"]
    assert t["entry_time"] == at(300) and t["exit_time"] is None and t["note"] == "still inside at end"
    assert t["duration_s"] == 300
    whole = transits(along("c", [0.2, 0.8], [0.5, 0.5]), box)
    assert whole["transits"][0]["note"] == "inside for the whole track" and whole["total_inside_s"] == 600


def test_a_leg_clipping_a_corner_between_outside_fixes_is_a_transit() -> None:
    box = zone("box", square(0, 0, 1, 1))
    result = transits(along("clip", [-0.5, 0.5], [0.3, 1.3]), box)  # in through x=0, out through y=1
    (t,) = result["transits"]
    assert t["entry_position"] == pytest.approx([0.0, 0.8]) and t["exit_position"] == pytest.approx([0.2, 1.0])
    assert (t["entry_time"], t["exit_time"]) == (at(300), at(420))
    touching = transits(along("touch", [-0.5, 0.5], [0.5, 1.5]), box)  # grazes the corner (0, 1)
    assert touching["transit_count"] == 0
    never = transits(along("miss", [-0.5, -0.1], [0.5, 1.5]), box)
    assert never["transit_count"] == 0 and never["transits"] == []


def test_holes_count() -> None:
    donut = zone("donut", square(0, 0, 3, 3), square(1, 1, 2, 2))
    result = transits(along("d", [-1, 0.5, 1.5, 2.5, 4], [1.5] * 5), donut)
    assert result["transit_count"] == 2
    first, second = result["transits"]
    assert first["exit_position"] == pytest.approx([1.0, 1.5])
    assert second["entry_position"] == pytest.approx([2.0, 1.5])
    in_hole = transits(along("h", [1.2, 1.8], [1.5, 1.5]), donut)
    assert in_hole["transit_count"] == 0


def test_multipolygons_and_concave_zones() -> None:
    two = zone("two", multi=[[square(0, 0, 1, 1)], [square(2, 0, 3, 1)]])
    result = transits(along("m", [-1, 4], [0.5, 0.5], dt=5000), two)
    assert result["transit_count"] == 2
    assert [t["entry_position"][0] for t in result["transits"]] == pytest.approx([0.0, 2.0])
    assert [t["duration_s"] for t in result["transits"]] == pytest.approx([1000, 1000])
    u_shape = zone("u", [[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3], [0, 0]])
    # both fixes inside the arms, the leg between them leaves through the notch
    result = transits(along("n", [0.5, 2.5], [2, 2]), u_shape)
    assert result["transit_count"] == 2
    assert result["transits"][0]["exit_position"] == pytest.approx([1.0, 2.0])
    assert result["transits"][1]["entry_position"] == pytest.approx([2.0, 2.0])
    assert len(props(run_ok("zone-transits", [along("n", [0.5, 2.5], [2, 2]), u_shape]))["transits"]) == 2


def test_through_a_vertex() -> None:
    diamond = zone("diamond", [[0, -1], [1, 0], [0, 1], [-1, 0], [0, -1]])
    result = transits(along("v", [-2, -0.5, 0.5, 2], [0, 0, 0, 0]), diamond)
    assert result["transit_count"] == 1
    (t,) = result["transits"]
    assert t["entry_position"][0] == pytest.approx(-1.0, abs=1e-6)
    assert t["exit_position"][0] == pytest.approx(1.0, abs=1e-6)


def test_every_track_against_every_zone_with_stretches() -> None:
    a, b = along("a", [-1, 0.5, 2], [0.5] * 3), along("b", [5, 6], [5, 5])
    z1, z2 = zone("z1", square(0, 0, 1, 1)), zone("z2", square(1.5, 0, 2.5, 1))
    result = run_ok("zone-transits", [a, z1, b, z2], {"include_geometry": True})
    pairs = [(f["properties"]["track_id"], f["properties"]["zone_id"]) for f in result.features]
    assert pairs == [("a", "z1"), ("a", "z2"), ("b", "z1"), ("b", "z2")]
    stretch = result.features[0]["geometry"]["coordinates"]
    assert stretch == [[[0.0, 0.5], [0.5, 0.5], [1.0, 0.5]]]  # entry, the fix inside, exit
    assert result.features[2]["geometry"] == {"type": "MultiLineString", "coordinates": []}
    assert [s["id"] for s in result.features[1]["properties"]["provenance"]["sources"]] == ["a", "z2"]
    compact = run_ok("zone-transits", [a, z1, b, z2])
    assert compact.features[0]["geometry"] == {"type": "MultiPoint", "coordinates": [[0.0, 0.5], [1.0, 0.5]]}
    assert [f["geometry"] for f in compact.features[2:]] == [None, None]
    assert [f["properties"]["transits"] for f in compact.features] == [
        f["properties"]["transits"] for f in result.features
    ]
    assert compact.features[2]["properties"]["note"] == "never inside the zone"


def test_a_bad_zone_is_named() -> None:
    broken = {
        "type": "Feature",
        "id": "zz",
        "geometry": {"type": "Polygon", "coordinates": [square(0, 0, 1, 1), [[0, 0], "x"]]},
        "properties": {"kind": "zone"},
    }
    error = run_err("zone-transits", [along("a", [0, 1], [0, 0]), broken])
    assert error["code"] == "VALIDATION_FAILED" and error["details"]["feature_id"] == "zz"


# --- active periods (properties.time / timeEnd) -------------------------------------------------


def sap_1_1_and_van_galen() -> tuple[dict[str, Any], dict[str, Any]]:
    """The real plot's zone SAP 1-1 (a 21,000 m circle, active 2024-11-14T19:10Z to
    2024-11-15T04:10Z) and the track that crosses it, VAN GALEN3 (inside the circle from about
    21:43Z to 23:06Z; its stored polygon is an oval it crosses from 21:50Z to 23:02Z)."""
    doc = load_json("plots/large-sample.plot.json")
    by_id = {f["id"]: f for f in doc["features"]}
    return by_id["z-1"], by_id["f-1"]


def with_period(z: dict[str, Any], start: str | None, end: str | None) -> dict[str, Any]:
    properties = {k: v for k, v in z["properties"].items() if k not in ("time", "timeEnd")}
    properties |= {k: v for k, v in (("time", start), ("timeEnd", end)) if v is not None}
    return {**z, "properties": properties}


def test_a_real_zone_reports_its_active_period_and_counts_inside_it() -> None:
    sap, van_galen = sap_1_1_and_van_galen()
    assert (sap["properties"]["time"], sap["properties"]["timeEnd"]) == (
        "2024-11-14T19:10:00.000Z",
        "2024-11-15T04:10:00.000Z",
    )
    result = run_ok("zone-transits", [van_galen, sap])
    whole = props(result)
    assert whole["zone_active"] == ["2024-11-14T19:10:00Z", "2024-11-15T04:10:00Z"]
    (t,) = whole["transits"]  # wholly inside the active period: as if always active
    always = props(run_ok("zone-transits", [van_galen, with_period(sap, None, None)]))
    assert always["zone_active"] == "always" and always["transits"] == whole["transits"]
    assert '"always" for a zone with neither time nor timeEnd' in TRANSITS_SPEC.description
    assert "only while active" in TRANSITS_SPEC.description and "zone_active" in TRANSITS_SPEC.description
    entry, exit_ = parse_iso(t["entry_time"]), parse_iso(t["exit_time"])

    # the zone stops being active mid-transit: only the time inside while active counts
    ends = props(run_ok("zone-transits", [van_galen, with_period(sap, "2024-11-14T19:10:00Z", "2024-11-14T22:30:00Z")]))
    (cut,) = ends["transits"]
    assert (cut["entry_time"], cut["exit_time"]) == (t["entry_time"], "2024-11-14T22:30:00Z")
    assert cut["duration_s"] == pytest.approx(parse_iso("2024-11-14T22:30:00Z") - entry, abs=1e-3)
    assert cut["note"] == "still inside when the zone stopped being active"
    assert ends["total_inside_s"] == cut["duration_s"] and ends["zone_active"][1] == "2024-11-14T22:30:00Z"

    # a zone with only a time is active from then on
    starts = run_ok(
        "zone-transits", [van_galen, with_period(sap, "2024-11-14T22:00:00Z", None)], {"include_geometry": True}
    )
    (late,) = props(starts)["transits"]
    assert props(starts)["zone_active"] == ["2024-11-14T22:00:00Z", None]
    assert late["entry_time"] == "2024-11-14T22:00:00Z" and late["exit_time"] == t["exit_time"]
    assert late["note"] == "inside when the zone became active"
    assert late["duration_s"] == pytest.approx(exit_ - parse_iso("2024-11-14T22:00:00Z"), abs=1e-3)
    # the stretch drawn starts where the track was when the zone became active, and ends at the exit
    (stretch,) = starts.features[0]["geometry"]["coordinates"]
    lats, lons = coords(van_galen)
    stamps = van_galen["properties"]["timestamps"]
    k = stamps.index("2024-11-14T21:59:58.277384Z")  # the fix before 22:00Z
    f = (parse_iso("2024-11-14T22:00:00Z") - parse_iso(stamps[k])) / (parse_iso(stamps[k + 1]) - parse_iso(stamps[k]))
    assert stretch[0] == pytest.approx([lons[k] + f * (lons[k + 1] - lons[k]), lats[k] + f * (lats[k + 1] - lats[k])])
    assert stretch[0] == late["entry_position"] and stretch[1] == pytest.approx([lons[k + 1], lats[k + 1]])
    assert stretch[-1] == t["exit_position"]

    # not active during the transit at all
    never = props(run_ok("zone-transits", [van_galen, with_period(sap, "2024-11-15T00:00:00Z", None)]))
    assert never["transit_count"] == 0 and never["total_inside_s"] == 0
    # inside while the zone was not active is told apart from never inside
    assert (
        never["note"] == "inside only while the zone was not active (inside_while_inactive); that time is not counted"
    )
    assert never["inside_while_inactive"] == [
        {"from": t["entry_time"], "to": t["exit_time"], "duration_s": t["duration_s"]}
    ]
    assert ends["inside_while_inactive"] == [
        {
            "from": "2024-11-14T22:30:00Z",
            "to": t["exit_time"],
            "duration_s": pytest.approx(exit_ - parse_iso("2024-11-14T22:30:00Z"), abs=2e-3),
        }
    ]
    assert ends["note"].startswith("also inside while the zone was not active")
    off = props(run_ok("zone-transits", [van_galen, with_period(sap, "2024-11-16T00:00:00Z", None)]))
    assert off["note"] == (
        "the zone is not active at any time of the track; "
        "inside only while the zone was not active (inside_while_inactive); that time is not counted"
    )


def test_a_start_only_zone_is_active_from_then_on_here_and_in_a_time_window() -> None:
    """LEOPOLD I crosses SAP 1-2 (time 18:10Z on the 14th, no timeEnd) the next morning: counted,
    and a window around the crossing keeps the zone (one meaning of active, shared with
    the time module's cut and the picture)."""
    from debrief_calc.tracks.features import active_period
    from debrief_calc.tracks.times import cut_feature, parse_window

    by_id = {str(f["id"]): f for f in load_json("plots/large-sample.plot.json")["features"]}
    leopold, sap = by_id["f-3"], by_id["z-2"]
    assert "timeEnd" not in sap["properties"] and active_period(sap) == (parse_iso("2024-11-14T18:10:00Z"), np.inf)
    whole = props(run_ok("zone-transits", [leopold, sap]))
    assert whole["zone_active"] == ["2024-11-14T18:10:00Z", None]
    (crossing,) = whole["transits"]
    assert (crossing["entry_time"], crossing["exit_time"]) == ("2024-11-15T08:58:36.243Z", "2024-11-15T09:47:09.559Z")
    window = parse_window("2024-11-15T08:00:00Z", "2024-11-15T10:00:00Z")
    clipped = [c for f in (leopold, sap) if (c := cut_feature(f, window)) is not None]
    assert [f["id"] for f in clipped] == ["f-3", "z-2"]
    assert props(run_ok("zone-transits", clipped))["transits"] == whole["transits"]


def test_a_bad_active_period_is_named() -> None:
    sap, van_galen = sap_1_1_and_van_galen()
    error = run_err("zone-transits", [van_galen, with_period(sap, "tomorrow", None)])
    assert error["details"] == {"feature_id": "z-1", "field": "properties.time", "rule": "iso-time"}
    error = run_err("zone-transits", [van_galen, with_period(sap, "2024-11-15T00:00:00Z", "2024-11-14T00:00:00Z")])
    assert error["details"]["rule"] == "order" and "SAP 1-1" in error["message"]


# --- area-summary ----------------------------------------------------------------------------


def glib_area(ring: list[list[float]]) -> tuple[float, float]:
    poly = GEOD.Polygon()
    for lon, lat in ring[:-1]:
        poly.AddPoint(lat, lon)
    _, perimeter, area = poly.Compute(False, True)
    return abs(area), perimeter


def test_area_with_a_hole_and_units() -> None:
    outer, hole = square(0, 50, 1, 51), square(0.25, 50.25, 0.75, 50.75)
    result = props(run_ok("area-summary", [zone("d", outer, hole)], {"area_unit": "m2", "distance_unit": "m"}))
    (a_out, p_out), (a_hole, p_hole) = glib_area(outer), glib_area(hole)
    assert result["area"] == pytest.approx(a_out - a_hole, rel=1e-9)
    assert result["perimeter"] == pytest.approx(p_out + p_hole, abs=0.01)
    assert result["hole_count"] == 1 and result["polygon_count"] == 1
    assert result["centroid"] == pytest.approx([0.5, 50.5], abs=0.01)
    for unit, m2 in (("km2", 1e6), ("nm2", 1852.0**2), ("ha", 1e4)):
        other = props(run_ok("area-summary", [zone("d", outer, hole)], {"area_unit": unit}))
        assert other["area"] == pytest.approx(result["area"] / m2, rel=1e-8) and other["area_unit"] == unit


def test_area_of_bounds_and_of_zone_with_bounds() -> None:
    result = run_ok("area-summary", [], {}, bounds=[10, -1, 11, 1])
    p = props(result)
    assert p["zone_id"] is None and p["bounds"] == [10, -1, 11, 1]
    assert p["area_m2"] == pytest.approx(glib_area(square(10, -1, 11, 1))[0], rel=1e-9)
    assert result.features[0]["properties"]["provenance"]["sources"] == []
    z = load_json("calc-zone-region.geojson")
    both = run_ok("area-summary", [z], {}, bounds=[10, -1, 11, 1])
    assert props(both)["zone_id"] == "zone-001" and "bounds ignored" in both.warnings[0]


def test_area_of_a_real_plot_zone() -> None:
    doc = load_json("plots/large-sample.plot.json")
    z = next(f for f in doc["features"] if f["id"] == "z-3")
    p = props(run_ok("area-summary", [z], {"area_unit": "km2"}))
    assert p["area_m2"] == pytest.approx(glib_area(z["geometry"]["coordinates"][0])[0], rel=1e-9)
    w, s, e, n = p["bounds"]
    assert w <= p["centroid"][0] <= e and s <= p["centroid"][1] <= n


# --- circle zones (properties.specifics) -----------------------------------------------------


def circle_zone(fid: str, lon: float, lat: float, radius_m: float, stored: list[list[float]]) -> dict[str, Any]:
    """A zone stored as ``stored`` (any polygon: Debrief's drawing of it) with circle specifics."""
    z = zone(fid, stored)
    z["properties"]["specifics"] = {"shapeType": "circle", "origin": [lon, lat], "radiusM": radius_m}
    return z


def test_a_circle_zone_is_the_true_circle_not_its_stored_polygon() -> None:
    # a track north along the meridian 10.5E through a 30 km circle at (10.5, 0.5); the stored
    # polygon is a far bigger square, which must not count
    circle = circle_zone("c", 10.5, 0.5, 30_000, square(9, -1, 12, 2))
    lats = [-0.5, 0.0, 0.5, 1.0, 1.5]
    track = along("m", [10.5] * 5, lats, dt=1000.0)
    (t,) = transits(track, circle)["transits"]
    south = GEOD.Direct(0.5, 10.5, 180.0, 30_000)["lat2"]  # where the meridian meets the rim
    north = GEOD.Direct(0.5, 10.5, 0.0, 30_000)["lat2"]
    # fixes every 0.5 degrees, 1000 s apart, linear in latitude between them
    assert parse_iso(t["entry_time"]) == pytest.approx(T0 + (south + 0.5) / 0.5 * 1000, abs=1e-3)
    assert parse_iso(t["exit_time"]) == pytest.approx(T0 + (north + 0.5) / 0.5 * 1000, abs=1e-3)
    assert t["entry_position"] == pytest.approx([10.5, south], abs=1e-9)
    assert transits(track, circle)["zone_shape"] == "circle"

    # a leg between two fixes outside that cuts through the rim is a transit too
    clip = along("k", [10.5, 10.5], [0.0, 1.0], dt=1000.0)
    (t,) = transits(clip, circle)["transits"]
    assert parse_iso(t["entry_time"]) == pytest.approx(T0 + south * 1000, abs=1e-3)
    assert parse_iso(t["exit_time"]) == pytest.approx(T0 + north * 1000, abs=1e-3)
    # passing outside the rim (31 km east of the origin at its closest) is no transit
    east = GEOD.Direct(0.5, 10.5, 90.0, 31_000)["lon2"]
    assert transits(along("e", [east, east], [0.0, 1.0], dt=1000.0), circle)["transit_count"] == 0


def test_sap_1_1_is_measured_as_a_21000_m_circle() -> None:
    sap, van_galen = sap_1_1_and_van_galen()
    (lon0, lat0), radius = sap["properties"]["specifics"]["origin"], sap["properties"]["specifics"]["radiusM"]
    (t,) = props(run_ok("zone-transits", [van_galen, with_period(sap, None, None)]))["transits"]
    lats, lons = coords(van_galen)
    times = np.array([parse_iso(s) for s in van_galen["properties"]["timestamps"]])
    for key in ("entry", "exit"):
        when = parse_iso(t[f"{key}_time"])
        lon, lat = (float(np.interp(when, times, v)) for v in (lons, lats))
        assert t[f"{key}_position"] == pytest.approx([lon, lat], abs=1e-6)  # times are to the ms
        assert GEOD.Inverse(lat0, lon0, lat, lon)["s12"] == pytest.approx(radius, abs=0.05)
        k = int(np.searchsorted(times, when))  # the fixes either side: one in, one out
        sides = [GEOD.Inverse(lat0, lon0, lats[i], lons[i])["s12"] <= radius for i in (k - 1, k)]
        assert sides == ([False, True] if key == "entry" else [True, False])
    assert (t["entry_time"][:16], t["exit_time"][:16]) == ("2024-11-14T21:42", "2024-11-14T23:06")

    # area-summary: the circle's area and perimeter, against GeographicLib on a 20,000-gon
    area = props(run_ok("area-summary", [sap], {"area_unit": "m2", "distance_unit": "m"}))
    poly = GEOD.Polygon()
    for az in np.linspace(0.0, 360.0, 20_000, endpoint=False):
        d = GEOD.Direct(lat0, lon0, float(az), radius)
        poly.AddPoint(d["lat2"], d["lon2"])
    _, perimeter, ref_area = poly.Compute(False, True)
    assert area["area_m2"] == pytest.approx(abs(ref_area), rel=2e-7)
    assert area["perimeter"] == pytest.approx(perimeter, rel=2e-7)
    assert area["centroid"] == [lon0, lat0] and area["shape"] == "circle"
    assert area["circle"] == {"origin": [lon0, lat0], "radius_m": radius}
    stored = props(run_ok("area-summary", [{**sap, "properties": {**sap["properties"], "specifics": None}}]))
    assert stored["shape"] == "polygon" and abs(stored["area_m2"] / area["area_m2"] - 1) > 0.01  # the oval


def test_a_bad_circle_is_named() -> None:
    track = along("m", [10.5] * 2, [0, 1])
    for specifics, field in (
        ({"shapeType": "circle", "origin": [10.5], "radiusM": 100}, "properties.specifics.origin"),
        ({"shapeType": "circle", "origin": [10.5, 0.5], "radiusM": -1}, "properties.specifics.radiusM"),
        ({"shapeType": "circle", "origin": [10.5, 0.5]}, "properties.specifics.radiusM"),
    ):
        z = zone("c", square(10, 0, 11, 1))
        z["properties"]["specifics"] = specifics
        error = run_err("zone-transits", [track, z])
        assert error["details"] == {"feature_id": "c", "field": field, "rule": "circle"}
        assert "radiusM > 0" in error["message"]
        assert run_err("area-summary", [z])["details"]["field"] == field


# --- zone-overlaps ----------------------------------------------------------------------------


def test_overlaps_of_two_tracks_in_two_zones_with_a_known_interval() -> None:
    # A runs east along 0.5N at 1 degree per 1000 s from -1E at T0: inside z1 [0, 1] from
    # T0+1000 to T0+2000. B runs north along 10.5E from -0.5N at T0+1200 at the same rate,
    # through a 30 km circle z2 at (10.5, 0.5).
    a = track_feature("a", T0 + 1000.0 * np.arange(4), [-1, 0, 1, 2], [0.5] * 4)
    b = track_feature("b", T0 + 1200 + 500.0 * np.arange(5), [10.5] * 5, [-0.5, 0.0, 0.5, 1.0, 1.5])
    z1 = zone("z1", square(0, 0, 1, 1))
    z2 = circle_zone("z2", 10.5, 0.5, 30_000, square(10, 0, 11, 1))
    a_in = (T0 + 1000.0, T0 + 2000.0)
    south = GEOD.Direct(0.5, 10.5, 180.0, 30_000)["lat2"]
    north = GEOD.Direct(0.5, 10.5, 0.0, 30_000)["lat2"]
    b_in = (T0 + 1200 + (south + 0.5) * 1000, T0 + 1200 + (north + 0.5) * 1000)
    start, end = max(a_in[0], b_in[0]), min(a_in[1], b_in[1])
    assert start < end  # the case really has an overlap

    result = run_ok("zone-overlaps", [a, b, z1, z2])
    answer = props(result)
    (overlap,) = answer["overlaps"]
    assert (overlap["first"], overlap["first_zone"], overlap["second"], overlap["second_zone"]) == (
        "a",
        "z1",
        "b",
        "z2",
    )
    assert parse_iso(overlap["start"]) == pytest.approx(start, abs=1e-3)
    assert parse_iso(overlap["end"]) == pytest.approx(end, abs=1e-3)
    assert overlap["duration_s"] == pytest.approx(end - start, abs=2e-3)
    assert answer["overlap_count"] == 1 and "note" not in answer
    assert [t["id"] for t in answer["compared"]["tracks"]] == ["a", "b"]
    assert [s["zone"] for s in answer["compared"]["tracks"][0]["inside"]] == ["z1"]
    assert [s["id"] for s in answer["provenance"]["sources"]] == ["a", "b", "z1", "z2"]
    assert result.features[0]["geometry"] is None

    # the same zone counts too; and a zone not yet active does not
    both_in_z1 = run_ok("zone-overlaps", [a, track_feature("c", [T0 + 1500, T0 + 2500], [0.5, 1.5], [0.5, 0.5]), z1])
    (same,) = props(both_in_z1)["overlaps"]
    assert (same["first_zone"], same["second_zone"]) == ("z1", "z1")
    assert (parse_iso(same["start"]), parse_iso(same["end"])) == pytest.approx((T0 + 1500, T0 + 2000), abs=1e-3)
    assert [z["active"] for z in answer["compared"]["zones"]] == ["always", "always"]  # no time: said, not null
    late = {**z2, "properties": {**z2["properties"], "time": at(2500)}}
    later = props(run_ok("zone-overlaps", [a, b, z1, late]))
    assert [z["active"] for z in later["compared"]["zones"]] == ["always", [at(2500), None]]
    assert (
        later["overlaps"] == [] and "no track was inside a zone while another track was inside a zone" in later["note"]
    )


def _even_odd(ring: np.ndarray, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Point in polygon by the even-odd rule, written here apart from the tool's."""
    inside = np.zeros(lon.shape, dtype=bool)
    for (x1, y1), (x2, y2) in itertools.pairwise(ring):
        if y1 == y2:
            continue
        crosses = (y1 > lat) != (y2 > lat)
        inside ^= crosses & (lon < x1 + (lat - y1) * (x2 - x1) / (y2 - y1))
    return inside


def test_no_overlaps_in_the_large_sample_and_that_is_right() -> None:
    doc = load_json("plots/large-sample.plot.json")
    tracks = [f for f in doc["features"] if f["properties"].get("dataType") == "track"]
    zones = [f for f in doc["features"] if f["id"].startswith("z-")]
    answer = props(run_ok("zone-overlaps", [*tracks, *zones]))
    assert answer["overlaps"] == [] and answer["overlap_count"] == 0
    assert answer["note"].startswith(
        "no track was inside a zone while another track was inside a zone: compared 3 tracks "
        "(VAN GALEN3, VAN AMSTEL and LEOPOLD I) in 6 zones"
    )
    # independently: every 10 s, which tracks are inside which (active) zone
    times = np.arange(parse_iso("2024-11-14T16:00:00Z"), parse_iso("2024-11-15T10:30:00Z"), 10.0)
    inside_any = []
    for track in tracks:
        lats, lons = coords(track)
        stamps = np.array([parse_iso(s) for s in track["properties"]["timestamps"]])
        on = (times >= stamps[0]) & (times <= stamps[-1])
        lon, lat = np.interp(times, stamps, lons), np.interp(times, stamps, lats)
        hit = np.zeros(times.shape, dtype=bool)
        for z in zones:
            spec = z["properties"].get("specifics") or {}
            if spec.get("shapeType") == "circle":
                (lon0, lat0), radius = spec["origin"], spec["radiusM"]
                near = np.flatnonzero(on & (np.abs(lat - lat0) < 0.3) & (np.abs(lon - lon0) < 0.4))
                z_in = np.zeros(times.shape, dtype=bool)
                z_in[near] = [GEOD.Inverse(lat0, lon0, lat[k], lon[k])["s12"] <= radius for k in near]
            else:
                z_in = _even_odd(np.array(z["geometry"]["coordinates"][0], dtype=float), lon, lat)
            start = parse_iso(z["properties"]["time"]) if "time" in z["properties"] else -np.inf
            end = parse_iso(z["properties"]["timeEnd"]) if "timeEnd" in z["properties"] else np.inf
            hit |= z_in & on & (times >= start) & (times <= end)
        inside_any.append(hit)
    assert all(h.any() for h in inside_any)  # each track is inside some zone at some time...
    assert not np.any(np.sum(inside_any, axis=0) >= 2)  # ...never two at once


def test_overlaps_need_two_tracks_and_a_zone_with_a_polygon() -> None:
    a, b = along("a", [0, 1], [0, 0]), along("b", [0, 1], [1, 1])
    z = zone("z", square(0, 0, 1, 1))
    error = run_err("zone-overlaps", [a, z])
    assert error["code"] == "INVALID_CONTEXT" and "at least 2 tracks and one zone" in error["message"]
    assert run_err("zone-overlaps", [a, b])["code"] == "INVALID_CONTEXT"
    pointy = {
        "type": "Feature",
        "id": "p",
        "geometry": {"type": "Point", "coordinates": [0, 0]},
        "properties": {"kind": "zone"},
    }
    error = run_err("zone-overlaps", [a, b, pointy])
    assert error["code"] == "VALIDATION_FAILED" and "Polygon" in error["message"]
    assert error["details"]["field"] == "geometry.type"


def test_a_transit_gives_the_speed_and_course_it_crossed_in_and_out_at() -> None:
    """VAN GALEN through SAP 1-1: the motion of the leg it crossed each edge on, by GeographicLib
    (mid-leg azimuth, length over time), as every tool derives motion from positions and times."""
    sap, van_galen = sap_1_1_and_van_galen()
    (t,) = props(run_ok("zone-transits", [van_galen, sap]))["transits"]
    lats, lons = coords(van_galen)
    times = np.array([parse_iso(x) for x in van_galen["properties"]["timestamps"]])

    def leg_motion(when: float) -> tuple[float, float]:
        k = int(np.searchsorted(times, when, side="right")) - 1
        line = GEOD.InverseLine(lats[k], lons[k], lats[k + 1], lons[k + 1])
        course = line.Position(line.s13 / 2)["azi2"] % 360.0
        return course, line.s13 / (times[k + 1] - times[k]) / (1852.0 / 3600.0)

    for end in ("entry", "exit"):
        course, speed = leg_motion(parse_iso(t[f"{end}_time"]))
        assert t[f"{end}_course"] == pytest.approx(course, abs=0.06)
        assert t[f"{end}_speed_kn"] == pytest.approx(speed, abs=0.006)
    # no crossing, no motion: inside at the track's start
    box = zone("box", square(0, 0, 1, 1))
    (inside,) = transits(along("a", [0.5, 1.5], [0.5, 0.5]), box)["transits"]
    assert inside["entry_speed_kn"] is None and inside["entry_course"] is None
    assert inside["exit_course"] == pytest.approx(90.0, abs=0.01) and inside["exit_speed_kn"] > 0
