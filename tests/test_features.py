"""debrief_calc.tracks.features on every real sample file and on the shapes real data takes."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from debrief_calc.errors import ValidationFailed
from debrief_calc.tracks.features import (
    KINDS,
    active_period,
    feature_bounds,
    feature_id,
    feature_kind,
    feature_name,
    feature_summary,
    iso,
    iso_many,
    parse_iso,
    parse_times,
    point_lonlat,
    time_span,
    track_data,
    zone_rings,
)

DATA = Path(__file__).resolve().parent / "data"
ALL_FILES = sorted([*DATA.glob("*.geojson"), *(DATA / "plots").glob("*.json")])


def load(path: Path) -> list[dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["features"] if doc.get("type") == "FeatureCollection" else [doc]


def large_sample() -> dict[str, dict[str, Any]]:
    return {str(f["id"]): f for f in load(DATA / "plots" / "large-sample.plot.json")}


def epoch(text: str) -> float:
    return (datetime.fromisoformat(text.replace("Z", "+00:00")) - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()


def track(coords: list[list[float]], **props: Any) -> dict[str, Any]:
    return {
        "type": "Feature",
        "id": "t-1",
        "properties": {"dataType": "track", "name": "NELSON", **props},
        "geometry": {"type": "LineString", "coordinates": coords},
    }


COORDS = [[-21.69, 22.19], [-21.70, 22.20], [-21.71, 22.21]]
STAMPS = ["1995-12-12T05:00:00Z", "1995-12-12T05:01:00Z", "1995-12-12T05:02:00.500Z"]
T0 = epoch("1995-12-12T05:00:00Z")
EXPECTED_T = [T0, T0 + 60, T0 + 120.5]


# --- kinds, ids, names ------------------------------------------------------------------------


def test_every_feature_of_the_large_sample_is_classified() -> None:
    kinds = {fid: feature_kind(f) for fid, f in large_sample().items()}
    assert kinds == {
        "f-1": "track",
        "f-2": "track",
        "f-3": "track",
        "bf-1": "buoyfield",
        "z-1": "zone",
        "z-2": "zone",
        "z-3": "zone",
        "z-4": "zone",
        "z-5": "zone",
        "z-14": "zone",
        "p-2": "point",
        "p-3": "point",
        "p-4": "point",
        "back-1": "backdrop",
        "back-2": "backdrop",
        "debrief-time-metadata": "metadata",
        "debrief-viewport-metadata": "metadata",
    }


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_every_real_feature_has_a_known_kind(path: Path) -> None:
    for feature in load(path):
        assert feature_kind(feature) in KINDS


def test_kinds_of_the_other_real_files() -> None:
    assert [feature_kind(f) for f in load(DATA / "calc-tracks-pair.geojson")] == ["track", "track"]
    assert [feature_kind(f) for f in load(DATA / "calc-zone-region.geojson")] == ["zone"]
    assert [feature_kind(f) for f in load(DATA / "plots" / "featurecollection-sample.json")] == ["track", "point"]
    assert [feature_kind(f) for f in load(DATA / "plots" / "sample.plot.json")] == ["point"] * 6 + ["metadata"]


@pytest.mark.parametrize(
    ("properties", "geometry", "kind"),
    [
        ({"kind": "TRACK"}, None, "track"),
        ({"kind": "POINT"}, None, "point"),
        ({"kind": "ZONE"}, None, "zone"),
        ({"kind": "analysis-result"}, None, "analysis-result"),
        ({"kind": "track", "dataType": "reference-point"}, None, "track"),  # kind wins
        ({"kind": "  ", "dataType": "track"}, None, "track"),
        ({"dataType": "reference-point"}, {"type": "Point", "coordinates": [0, 0]}, "point"),
        ({"dataType": "annotation"}, {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}, "zone"),
        ({"dataType": "annotation"}, {"type": "MultiPolygon", "coordinates": []}, "zone"),
        ({"dataType": "annotation"}, {"type": "Point", "coordinates": [0, 0]}, "annotation"),
        ({"dataType": "annotation"}, None, "annotation"),
        ({"dataType": "Sensor-Contact"}, None, "sensor-contact"),
        ({"dataType": 7}, None, "unknown"),
        ({}, None, "unknown"),
    ],
)
def test_feature_kind_spellings(properties: dict[str, Any], geometry: dict[str, Any] | None, kind: str) -> None:
    assert feature_kind({"type": "Feature", "properties": properties, "geometry": geometry}) == kind


@pytest.mark.parametrize("feature", [{}, {"properties": None}, {"properties": "track"}, [], None, 3])
def test_feature_kind_never_raises(feature: Any) -> None:
    assert feature_kind(feature) == "unknown"


def test_feature_ids_compare_as_strings() -> None:
    assert feature_id({"id": 17}) == "17"
    assert feature_id({"id": "f-1"}) == "f-1"
    for bad in [{}, {"id": None}, {"id": ""}, {"id": True}, {"id": [1]}]:
        with pytest.raises(ValidationFailed) as err:
            feature_id(bad, 4)
        assert "feature #4" in err.value.message
        assert err.value.details["field"] == "id" and err.value.details["index"] == 4


def test_feature_name() -> None:
    assert feature_name(large_sample()["f-1"]) == "VAN GALEN3"
    assert feature_name(large_sample()["debrief-time-metadata"]) is None
    assert feature_name({"properties": {"name": 5}}) is None


# --- tracks from real files -------------------------------------------------------------------


def test_tracks_of_the_large_sample() -> None:
    features = large_sample()
    counts = {}
    for fid in ("f-1", "f-2", "f-3"):
        data = track_data(features[fid])
        counts[fid] = len(data)
        assert data.id == fid
        assert data.time_field == "properties.timestamps"
        assert data.lon.shape == data.lat.shape == data.t.shape == (len(data),)
        assert np.all(np.diff(data.t) >= 0)
        assert data.t[0] == pytest.approx(epoch(features[fid]["properties"]["timestamps"][0]), abs=1e-6)
        assert data.t[-1] == pytest.approx(epoch(features[fid]["properties"]["timestamps"][-1]), abs=1e-6)
        with pytest.raises(ValueError, match="read-only"):
            data.lon[0] = 0.0
    assert counts == {"f-1": 781, "f-2": 1081, "f-3": 1081}
    assert track_data(features["f-1"]).name == "VAN GALEN3"
    # f-2 carries a third coordinate, an elevation: depth is its negation
    f2 = track_data(features["f-2"])
    assert f2.depth is not None
    np.testing.assert_array_equal(f2.depth, [-c[2] for c in features["f-2"]["geometry"]["coordinates"]])
    assert track_data(features["f-1"]).depth is None


def test_calc_fixtures_take_times_from_the_fourth_coordinate() -> None:
    single = load(DATA / "calc-track-single.geojson")[0]
    data = track_data(single)
    assert data.time_field == "geometry.coordinates[][3]"
    # the quirk: start_time says 2026, the coordinate times say 2024, and they win
    assert iso(data.t[0]) == "2024-01-15T08:00:00Z"
    assert iso(data.t[-1]) == "2024-01-15T16:00:00Z"
    assert single["properties"]["start_time"].startswith("2026")
    assert data.depth is not None and np.all(data.depth == 0) and not np.signbit(data.depth).any()
    pair = [track_data(f) for f in load(DATA / "calc-tracks-pair.geojson")]
    assert [len(p) for p in pair] == [5, 5]
    assert pair[0].t[0] == pair[1].t[0] == 1705305600.0


def test_track_data_only_reads() -> None:
    feature = large_sample()["z-1"]  # a zone with keys strict schemas reject, kept as is
    before = copy.deepcopy(feature)
    feature_summary(feature)
    zone_rings(feature)
    assert feature == before
    feature = large_sample()["f-1"]
    before = copy.deepcopy(feature)
    track_data(feature)
    feature_summary(feature)
    assert feature == before


# --- the four time forms ----------------------------------------------------------------------------


def the_four_forms() -> dict[str, dict[str, Any]]:
    ms = [t * 1000 for t in EXPECTED_T]
    return {
        "timestamps": track(COORDS, timestamps=STAMPS),
        "positions": track(
            COORDS,
            positions=[
                {"time": s, "coordinates": c, "course": 270.0, "speed": 2.0}
                for s, c in zip(STAMPS, COORDS, strict=True)
            ],
        ),
        "positions only": {
            "type": "Feature",
            "id": "t-1",
            "properties": {
                "kind": "TRACK",
                "positions": [{"time": s, "coordinates": c, "depth": 5.0} for s, c in zip(STAMPS, COORDS, strict=True)],
            },
            "geometry": None,
        },
        "times iso": track(COORDS, times=STAMPS),
        "times epoch s": track(COORDS, times=EXPECTED_T),
        "times epoch ms": track(COORDS, times=ms),
        "4th coordinate": track([[*c, 0.0, m] for c, m in zip(COORDS, ms, strict=True)]),
    }


@pytest.mark.parametrize("form", list(the_four_forms()))
def test_every_time_form_gives_the_same_track(form: str) -> None:
    data = track_data(the_four_forms()[form])
    np.testing.assert_allclose(data.t, EXPECTED_T, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(data.lon, [c[0] for c in COORDS])
    np.testing.assert_array_equal(data.lat, [c[1] for c in COORDS])
    if form == "positions only":
        assert data.time_field == "properties.positions[].time"
        assert data.depth is not None and list(data.depth) == [5.0, 5.0, 5.0]


def test_time_forms_are_preferred_in_order() -> None:
    later = [s.replace("05:", "06:") for s in STAMPS]
    ms = [t * 1000 + 7e6 for t in EXPECTED_T]
    feature = track(
        [[*c, 0.0, m] for c, m in zip(COORDS, ms, strict=True)],
        timestamps=STAMPS,
        positions=[{"time": s} for s in later],
        times=later,
    )
    assert track_data(feature).time_field == "properties.timestamps"
    del feature["properties"]["timestamps"]
    assert track_data(feature).time_field == "properties.positions[].time"
    assert track_data(feature).t[0] == T0 + 3600
    del feature["properties"]["positions"]
    assert track_data(feature).time_field == "properties.times"
    del feature["properties"]["times"]
    assert track_data(feature).t[0] == pytest.approx(T0 + 7000)
    feature["properties"]["timestamps"] = []  # empty means absent
    assert track_data(feature).time_field == "geometry.coordinates[][3]"


def test_multilinestring_parts_are_joined_in_order() -> None:
    feature = track(COORDS, timestamps=STAMPS)
    feature["geometry"] = {"type": "MultiLineString", "coordinates": [COORDS[:2], COORDS[2:]]}
    data = track_data(feature)
    assert len(data) == 3 and data.lon[2] == COORDS[2][0]


def test_iso_forms_in_one_list() -> None:
    stamps = [
        "2024-11-14T21:16:53Z",
        "2024-11-14T21:16:53.661999Z",
        "2024-11-14T22:16:53.661999+01:00",
        "2024-11-14T21:16:54",  # naive: UTC
        "2024-11-14 21:16:54.5",
        "2024-11-14T21:16:55.123456789Z",  # nanoseconds: truncated to microseconds
        "  2024-11-14T21:16:56z ",
    ]
    t = parse_times(stamps)
    base = epoch("2024-11-14T21:16:53Z")
    np.testing.assert_allclose(t - base, [0, 0.661999, 0.661999, 1, 1.5, 2.123456, 3], rtol=0, atol=1e-6)


# --- errors ------------------------------------------------------------------------------------------


def assert_fails(feature: dict[str, Any], field: str, rule: str, *fragments: str) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as err:
        track_data(feature)
    exc = err.value
    assert exc.code == "VALIDATION_FAILED"
    assert exc.details["feature_id"] == "t-1"
    assert exc.details["field"] == field
    assert exc.details["rule"] == rule
    assert "'NELSON'" in exc.message and "t-1" in exc.message
    for fragment in fragments:
        assert fragment in exc.message
    return exc


def test_a_track_without_times_says_so() -> None:
    exc = assert_fails(track(COORDS), "properties.timestamps", "required", "has no times: give properties.timestamps")
    assert "4th" in exc.message


def test_track_errors_name_the_field_and_index() -> None:
    assert_fails(track(COORDS, timestamps=STAMPS[:2]), "properties.timestamps", "count", "2 times", "3 positions")
    exc = assert_fails(
        track(COORDS, timestamps=[STAMPS[0], "12/12/95 05:01", STAMPS[2]]),
        "properties.timestamps",
        "time-format",
        "properties.timestamps[1]",
        "'12/12/95 05:01'",
    )
    assert exc.details["index"] == 1
    exc = assert_fails(
        track(COORDS, timestamps=[STAMPS[1], STAMPS[0], STAMPS[2]]),
        "properties.timestamps",
        "monotonic",
        "backwards",
        "properties.timestamps[1]",
    )
    assert exc.details["index"] == 1
    assert_fails(track(COORDS, times=[T0, None, T0 + 5]), "properties.times", "time-format", "times[1] = None")
    assert_fails(track(COORDS, times=[T0, float("nan"), T0 + 5]), "properties.times", "time-format")
    assert_fails(track(COORDS, timestamps="1995-12-12"), "properties.timestamps", "type")
    assert_fails(track([], timestamps=[]), "geometry.coordinates", "required", "has no coordinates")
    no_geometry = track(COORDS, timestamps=STAMPS)
    no_geometry["geometry"] = None
    assert_fails(no_geometry, "geometry.coordinates", "required")
    point = track(COORDS, timestamps=STAMPS)
    point["geometry"] = {"type": "Point", "coordinates": [0.0, 0.0]}
    assert_fails(point, "geometry.type", "geometry-type", "'Point'")


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ([float("nan"), 22.0], "finite"),
        ([-21.0, 91.0], "range"),
        ([181.0, 22.0], "range"),
        (["-21.0", "x"], "position"),
        ([-21.0], "position"),
        ("abc", "position"),
        ([None, 22.0], "finite"),
    ],
)
def test_bad_positions_are_named(bad: Any, rule: str) -> None:
    coords = [COORDS[0], bad, COORDS[2]]
    exc = assert_fails(track(coords, timestamps=STAMPS), "geometry.coordinates", rule, "geometry.coordinates[1]")
    assert exc.details["index"] == 1


def test_integers_beyond_any_float_are_errors_not_crashes() -> None:
    huge = 10**400
    assert_fails(track([COORDS[0], [huge, 22.0], COORDS[2]], timestamps=STAMPS), "geometry.coordinates", "position")
    assert_fails(track(COORDS, times=[T0, huge, T0 + 5]), "properties.times", "time-format", "times[1]")
    summary = feature_summary(track([COORDS[0], [huge, 22.0]], times=[huge, 1]))
    assert summary["point_count"] == 2 and summary["time_start"] is None


def test_equal_consecutive_times_and_ragged_coordinates_are_fine() -> None:
    data = track_data(track([COORDS[0], [*COORDS[1], -5.0], COORDS[2]], timestamps=[STAMPS[0], STAMPS[0], STAMPS[1]]))
    assert list(data.t) == [T0, T0, T0 + 60]
    assert data.depth is None  # not every fix has a third value


def test_a_single_fix_is_a_track() -> None:
    data = track_data(track(COORDS[:1], timestamps=STAMPS[:1]))
    assert len(data) == 1


def test_missing_id_is_named_by_index() -> None:
    feature = track(COORDS, timestamps=STAMPS)
    del feature["id"]
    with pytest.raises(ValidationFailed) as err:
        track_data(feature, index=3)
    assert "feature #3" in err.value.message and "NELSON" in err.value.message


# --- parsing and formatting times -------------------------------------------------------------------------


def test_parse_iso_and_iso() -> None:
    assert parse_iso("1970-01-01T00:00:00Z") == 0.0
    assert parse_iso("2024-01-15T08:00:00Z") == 1705305600.0
    assert parse_iso("2024-01-15T09:00:00+01:00") == 1705305600.0
    assert parse_iso("2024-01-15T08:00:00") == 1705305600.0
    assert parse_iso("2024-01-15") == 1705276800.0
    assert iso(1705305600.0) == "2024-01-15T08:00:00Z"
    assert iso(1705305600.25) == "2024-01-15T08:00:00.250Z"
    assert iso(1705305600.0004) == "2024-01-15T08:00:00Z"
    assert iso(1705305600.9996) == "2024-01-15T08:00:01Z"
    assert iso(-0.5) == "1969-12-31T23:59:59.500Z"
    for bad in ["2024-01-15X08:00:00Z", "not a time", "2024-02-30T00:00:00Z", "2024-01-15T08:00:00.Z", ""]:
        with pytest.raises(ValidationFailed):
            parse_iso(bad)
    with pytest.raises(ValidationFailed):
        parse_iso(1705305600)  # type: ignore[arg-type]
    with pytest.raises(ValidationFailed):
        iso(float("nan"))


def test_iso_many_matches_iso() -> None:
    t = np.array([0.0, 1705305600.0, 1705305600.25, 1705305600.9996, -0.5, 1731618413.661999])
    assert iso_many(t) == [iso(float(x)) for x in t]
    assert iso_many(np.array([np.nan])) == [""]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
            st.sampled_from(
                ["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "ms"]
            ),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_vectorised_parse_agrees_with_datetime(items: list[tuple[datetime, str]]) -> None:
    texts, shown = [], []
    for dt, fmt in items:
        if fmt == "ms":
            texts.append(dt.isoformat(timespec="milliseconds") + "Z")
            shown.append(dt.replace(microsecond=dt.microsecond // 1000 * 1000))
        else:
            # strftime does not zero-pad years before 1000 everywhere: pad by hand
            texts.append(f"{dt.year:04d}" + dt.strftime(fmt.replace("%Y", "#")).split("#", 1)[1])
            shown.append(dt if "%f" in fmt else dt.replace(microsecond=0))
    got = parse_times(texts)
    exact = [(dt - datetime(1970, 1, 1)) / timedelta(seconds=1) for dt in shown]
    # within a unit in the last place (3e-5 s in the year 9999)
    np.testing.assert_allclose(got, exact, rtol=2e-16, atol=1e-6)
    np.testing.assert_allclose(got, [parse_iso(s) for s in texts], rtol=2e-16, atol=1e-6)


def test_a_million_timestamps_parse_vectorised(monkeypatch: pytest.MonkeyPatch) -> None:
    """A million ISO strings of the common form go through the vectorised reader: not one falls
    back to the per-string parser (its speed is measured in benchmarks/, never asserted here)."""
    from debrief_calc.tracks import _time_arrays as times  # the vectorised reader, and its per-string fallback

    n = 1_000_000
    t = 1731618413.661999 + np.arange(n) * 0.5
    stamps = iso_many(t)
    fallbacks: list[str] = []
    per_string = times.parse_iso

    def counted(s: str) -> float:
        fallbacks.append(s)
        return per_string(s)

    monkeypatch.setattr(times, "parse_iso", counted)
    parsed = parse_times(stamps)
    np.testing.assert_allclose(parsed, np.round(t * 1000) / 1000, rtol=0, atol=1e-6)
    assert fallbacks == []
    # the check can fail: a string of another form is read one at a time
    parse_times([*stamps[:3], "2024-11-14T21:16:53+01:00"])
    assert fallbacks == ["2024-11-14T21:16:53+01:00"]


# --- zones, points, bounds, summaries -------------------------------------------------------------------


def test_zone_rings() -> None:
    features = large_sample()
    ring = zone_rings(features["z-4"])[0]
    assert ring.shape == (5, 2)
    assert list(ring[0]) == features["z-4"]["geometry"]["coordinates"][0][0][:2]
    assert len(zone_rings(load(DATA / "calc-zone-region.geojson")[0])) == 1
    square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    multi = {"id": "m", "properties": {}, "geometry": {"type": "MultiPolygon", "coordinates": [[square], [square]]}}
    assert len(zone_rings(multi)) == 2
    for fid in ("p-2", "f-1", "debrief-time-metadata"):
        with pytest.raises(ValidationFailed) as err:
            zone_rings(features[fid])
        assert err.value.details["feature_id"] == fid


def test_point_lonlat() -> None:
    assert point_lonlat(large_sample()["p-3"]) == (-4.0060650478869775, 35.69294394874646)
    with pytest.raises(ValidationFailed) as err:
        point_lonlat(large_sample()["bf-1"])
    assert err.value.details["rule"] == "geometry-type"


def test_feature_bounds_over_every_geometry_type() -> None:
    features = large_sample()
    assert feature_bounds(features["debrief-time-metadata"]) is None  # "coordinates": [[]]
    assert feature_bounds(features["back-1"]) is None  # MultiPoint with no coordinates
    assert feature_bounds({"geometry": None}) is None
    assert feature_bounds(features["p-4"]) == (-2.302065101137316, 35.892217563281974) * 2
    west, south, east, north = feature_bounds(features["bf-1"]) or (0, 0, 0, 0)
    lons = [c[0] for c in features["bf-1"]["geometry"]["coordinates"]]
    assert (west, east) == (min(lons), max(lons)) and south < north
    collection = {
        "geometry": {
            "type": "GeometryCollection",
            "geometries": [
                {"type": "Point", "coordinates": [5, 6]},
                {"type": "LineString", "coordinates": [[1, 2, 0], [3, 4]]},
                {"type": "Polygon", "coordinates": [[[-1, -2], [0, 0], ["x", 9], [-1, -2]]]},
            ],
        }
    }
    assert feature_bounds(collection) == (-1.0, -2.0, 5.0, 6.0)
    assert feature_bounds(large_sample()["f-3"]) == pytest.approx(
        (-6.831053175368908, 35.51439803774424, -1.5817334164506178, 36.52793856386866)
    )


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_feature_summary_of_every_real_feature(path: Path) -> None:
    for feature in load(path):
        summary = feature_summary(feature)
        assert set(summary) == {"id", "kind", "name", "point_count", "time_start", "time_end", "bounds"}
        assert "coordinates" not in json.dumps(summary)
        assert summary["id"] == str(feature["id"])


def test_feature_summary_values() -> None:
    features = large_sample()
    assert feature_summary(features["f-3"]) == {
        "id": "f-3",
        "kind": "track",
        "name": "LEOPOLD I",
        "point_count": 1081,
        "time_start": "2024-11-14T16:17:00Z",
        "time_end": "2024-11-15T10:17:00Z",
        "bounds": [-6.831053175368908, 35.51439803774424, -1.5817334164506178, 36.52793856386866],
    }
    buoys = feature_summary(features["bf-1"])
    assert (buoys["kind"], buoys["time_start"], buoys["time_end"]) == (
        "buoyfield",
        "2024-11-14T21:10:00Z",
        "2024-11-15T04:10:00Z",
    )
    metadata = feature_summary(features["debrief-time-metadata"])
    assert metadata["point_count"] == 0 and metadata["bounds"] is None
    broken = track(COORDS, timestamps=["soon", "later", "never"])
    summary = feature_summary(broken)
    assert summary["time_start"] is None and summary["time_end"] is None and summary["point_count"] == 3


def test_a_narrative_without_a_name_is_summarised_by_its_text() -> None:
    from debrief_calc.formats.rep import parse_rep

    text = (DATA / "rep" / "valid_narrative.rep").read_text(encoding="utf-8")
    notes = parse_rep(text, source_name="valid_narrative.rep").features
    assert all("name" not in n["properties"] for n in notes)
    summaries = [feature_summary(n) for n in notes]
    assert summaries[0]["name"] == "COMEX SERIAL 16D"
    assert summaries[1]["name"] == "INTEND WIDE AREA SEARCH AS PREVIOUS SERIAL"
    assert all(s["name"] and len(s["name"]) <= 60 for s in summaries)
    long = {
        "type": "Feature",
        "id": "n",
        "geometry": None,
        "properties": {
            "dataType": "annotation",
            "text": "CONTACT  GAINED\nON TRACK 14, " + "CLASSIFIED POSSIBLE SUBMARINE " * 3,
        },
    }
    name = feature_summary(long)["name"]
    assert name.endswith("…") and len(name) <= 60 and "\n" not in name and "  " not in name
    assert name.startswith("CONTACT GAINED ON TRACK 14, CLASSIFIED") and not name[:-1].endswith(" ")
    named = {**long, "properties": {**long["properties"], "name": "Contact"}}
    assert feature_summary(named)["name"] == "Contact"
    untexted = {**long, "properties": {"dataType": "annotation"}}
    assert feature_summary(untexted)["name"] is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
feature_like = st.fixed_dictionaries(
    {},
    optional={
        "id": json_values,
        "properties": st.fixed_dictionaries(
            {},
            optional={
                "kind": json_values | st.sampled_from(["track", "TRACK", "zone"]),
                "dataType": json_values | st.sampled_from(["track", "annotation"]),
                "timestamps": json_values,
                "times": json_values,
                "positions": json_values,
                "name": json_values,
            },
        ),
        "geometry": json_values
        | st.fixed_dictionaries(
            {
                "type": st.sampled_from(["LineString", "Polygon", "GeometryCollection", "MultiLineString"]),
                "coordinates": json_values,
                "geometries": json_values,
            }
        ),
    },
)


@settings(max_examples=500, deadline=None)
@given(feature_like)
def test_kind_bounds_and_summary_never_raise(feature: dict[str, Any]) -> None:
    assert isinstance(feature_kind(feature), str)
    feature_bounds(feature)
    summary = feature_summary(feature)
    assert summary["kind"] == feature_kind(feature)
    try:
        track_data(feature)
    except ValidationFailed:
        pass


# -- when a timed feature is active ----------------------------------------------------------------------


def _sample_by_id() -> dict[str, dict[str, Any]]:
    return {str(f["id"]): f for f in load(DATA / "plots" / "large-sample.plot.json")}


def test_active_period_and_time_span_read_time_alone_differently() -> None:
    """SAP 1-2 (a zone) and SONO 1-2 (a reference point) carry a time and no timeEnd: active from
    then on, while for the plot's period that time is an instant."""
    by_id = _sample_by_id()
    t = parse_iso("2024-11-14T18:10:00Z")
    zone = by_id["z-2"]
    assert active_period(zone) == (t, np.inf)
    assert time_span(zone) == (t, t)
    sono = by_id["p-2"]
    assert active_period(sono) == (parse_iso("2024-11-14T21:10:00Z"), np.inf)
    both = by_id["z-1"]
    assert (
        active_period(both)
        == time_span(both)
        == (
            parse_iso("2024-11-14T19:10:00.000Z"),
            parse_iso("2024-11-15T04:10:00.000Z"),
        )
    )
    assert active_period(by_id["z-3"]) is None and time_span(by_id["z-3"]) is None  # no time: always
    until = {**zone, "properties": {**zone["properties"], "timeEnd": "2024-11-14T20:00:00Z"}}
    del until["properties"]["time"]
    assert active_period(until) == (-np.inf, parse_iso("2024-11-14T20:00:00Z"))
    assert "time`` alone is an instant" in (time_span.__doc__ or "")
    assert "from then on" in (active_period.__doc__ or "") and "time_span" in (active_period.__doc__ or "")


def test_active_period_is_lenient_unless_strict() -> None:
    zone = _sample_by_id()["z-2"]
    typo = {**zone, "properties": {**zone["properties"], "timeEnd": "soon"}}
    assert active_period(typo) == (parse_iso("2024-11-14T18:10:00Z"), np.inf)  # the bad end counts as absent
    with pytest.raises(ValidationFailed) as info:
        active_period(typo, strict=True, index=4)
    assert info.value.details == {"feature_id": "z-2", "field": "properties.timeEnd", "rule": "iso-time"}
    reversed_ = {**zone, "properties": {**zone["properties"], "timeEnd": "2024-11-14T00:00:00Z"}}
    assert active_period(reversed_) is None
    with pytest.raises(ValidationFailed) as info:
        active_period(reversed_, strict=True)
    assert info.value.details["rule"] == "order" and "SAP 1-2" in str(info.value)


def test_windows_zone_transits_and_the_picture_agree_on_a_start_only_zone() -> None:
    """One meaning of active: a time window after SAP 1-2's start keeps it (it used to be left
    out), the picture shows it then, and zone-transits counts it then."""
    from debrief_calc.tracks.times import Window, active_at, cut_feature

    by_id = _sample_by_id()
    zone, sono = by_id["z-2"], by_id["p-2"]
    later = parse_iso("2024-11-15T02:00:00Z"), parse_iso("2024-11-15T03:00:00Z")
    earlier = parse_iso("2024-11-14T12:00:00Z"), parse_iso("2024-11-14T13:00:00Z")
    for feature in (zone, sono):
        assert cut_feature(feature, Window(*later)) == feature
        assert cut_feature(feature, Window(*earlier)) is None
    assert active_at(active_period(zone), later[0]) and not active_at(active_period(zone), earlier[0])
    assert active_at(active_period(sono), later[1]) and not active_at(active_period(sono), earlier[1])


def test_windows_and_the_picture_compare_at_the_precision_asked() -> None:
    """A result timed 10:45:08.902 (a closest approach, between fixes) reads 10:45:09 at the plot's
    precision (the nearest second): active "at 10:45:09" and in a window ending then, not at
    10:45:08 (issue 22: one clock). A time asked to the millisecond compares to the millisecond."""
    from debrief_calc.tracks.times import Window, active_at, cut_feature

    cpa = {
        "type": "Feature",
        "id": "cpa",
        "geometry": {"type": "Point", "coordinates": [-4.0, 36.0]},
        "properties": {"dataType": "reference-point", "time": "1995-12-12T10:45:08.902Z"},
    }
    period = active_period(cpa)
    assert active_at(period, parse_iso("1995-12-12T10:45:09Z"))
    assert not active_at(period, parse_iso("1995-12-12T10:45:08Z"))
    assert not active_at(period, parse_iso("1995-12-12T10:45:08.500Z"))
    start = parse_iso("1995-12-12T10:00:00Z")
    assert cut_feature(cpa, Window(start, parse_iso("1995-12-12T10:45:09Z"))) == cpa
    assert cut_feature(cpa, Window(start, parse_iso("1995-12-12T10:45:08Z"))) is None
    assert cut_feature(cpa, Window(start, parse_iso("1995-12-12T10:45:08.5Z"))) is None
