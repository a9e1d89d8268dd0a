"""Sensor cuts, target solutions and every other REP line legacy Debrief writes, through
``import-rep``: the SATC tutorial's real files, and a constructed file holding one line of each type
with NULL fields, negative bearings, sixty minutes, tabs and quoted names. Figures are checked
against the lines themselves (read with ``str.split``) and GeographicLib."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.tracks.features import feature_summary, time_span
from debrief_calc.tracks.paging import join_parts, page_features
from debrief_calc.tracks.times import Window, cut_feature, parse_iso
from tests.test_analysis_support import DATA, run_err, run_ok

GEOD = Geodesic.WGS84
SENSORS = DATA / "sensors"
YD = 0.9144


def sensor_text(name: str) -> str:
    return (SENSORS / name).read_text(encoding="utf-8")


def files(*names: str) -> dict[str, str]:
    return {n: sensor_text(n) for n in names}


def of_kind(features: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [f for f in features if f["properties"]["kind"] == kind]


def dms(deg: str, minutes: str, seconds: str, hem: str) -> float:
    value = float(deg) + float(minutes) / 60 + float(seconds) / 3600
    return -value if hem in "SW" else value


def test_the_satc_cuts_are_one_sensor_on_their_host_with_every_field_kept() -> None:
    given = files("BlueTrack.rep", "BlueSensor_sparse.rep")
    result = run_ok("import-rep", params={"paths": list(given)}, read_text=given.__getitem__)
    (sensor,) = of_kind(result.features, "sensor")
    (track,) = of_kind(result.features, "track")
    props = sensor["properties"]
    lines = [line.split() for line in given["BlueSensor_sparse.rep"].splitlines() if line.strip()]
    assert len(lines) == 38 == len(props["timestamps"]) == len(sensor["geometry"]["coordinates"])
    assert props["host"] == track["id"] == "rep-sensor" and props["hostName"] == "SENSOR"
    assert props["name"] == "Plain" and props["dataType"] == "sensor" and props["visible"] is True
    # every cut as the line gives it: bearing normalised to [0, 360), origin as written
    for cut, fields, origin, bearing, when in zip(
        lines, lines, sensor["geometry"]["coordinates"], props["bearings"], props["timestamps"], strict=True
    ):
        assert bearing == pytest.approx(float(fields[13]) % 360) and 0 <= bearing < 360
        assert origin == pytest.approx([dms(*fields[9:13]), dms(*fields[5:9])])
        assert when.replace("-", "").replace(":", "").startswith("2010" + cut[1][2:] + "T" + cut[2])
    assert any(float(f[13]) < 0 for f in lines)  # the file has negative bearings (-34.2 …)
    assert props["originGiven"] == [True] * 38 and props["lineTypes"] == ["SENSOR"] * 38
    assert props["rangesYd"] == [12000.0] * 38 and props["frequencies"] == [None] * 38
    assert props["labels"][0] == "Cookie SUBJECT held on Plain Cookie" and props["stroke"] == "#0064bd"
    times = [parse_iso(t) for t in props["timestamps"]]
    assert times == sorted(times)
    # the constant 12000 yd is said to be a display length, not silently taken for a range
    assert any("12000 yd" in w and "display length" in w for w in result.warnings)
    report = result.report
    assert report is not None and report["cut_count"] == 38 and report["sensor_count"] == 1
    assert report["errors"] == [] and report["skipped"] == []
    assert sensor["properties"]["provenance"]["sources"] == [
        {"id": "BlueSensor_sparse.rep", "kind": "rep-file"},
        {"id": "rep-sensor", "kind": "track"},
    ]


def test_a_dsf_whose_host_is_missing_names_the_tracks_there_are_and_the_fix() -> None:
    given = files("BlueTrack.rep", "RedTrack.rep", "L1_OwnshipSensor.dsf")
    error = run_err("import-rep", params={"paths": list(given)}, read_text=given.__getitem__)
    assert error["code"] == "VALIDATION_FAILED" and error["details"]["field"] == "host"
    message = error["message"]
    assert "'OWNSHIP' (11 lines)" in message and "SENSOR (rep-sensor)" in message and "SUBJECT (rep-subject)" in message
    assert "host" in message and "paths" in message
    assert error["details"]["missing"] == ["OWNSHIP"]
    alone = run_err("import-rep", params={"path": "L1_OwnshipSensor.dsf"}, read_text=given.__getitem__)
    assert "no tracks are given" in alone["message"]
    wrong = run_err("import-rep", params={"paths": list(given), "host": "NELSON"}, read_text=given.__getitem__)
    assert "'NELSON'" in wrong["message"] and "SENSOR (rep-sensor)" in wrong["message"]


@pytest.mark.parametrize("host", ["SENSOR", "rep-sensor", "OWNSHIP=SENSOR", "sensor"])
def test_the_analyst_says_which_track_hosts_the_dsf(host: str) -> None:
    given = files("BlueTrack.rep", "RedTrack.rep", "L1_OwnshipSensor.dsf")
    result = run_ok("import-rep", params={"paths": list(given), "host": host}, read_text=given.__getitem__)
    (sensor,) = of_kind(result.features, "sensor")
    assert sensor["properties"]["host"] == "rep-sensor" and sensor["properties"]["hostName"] == "OWNSHIP"
    assert len(sensor["properties"]["timestamps"]) == 11
    assert sensor["properties"]["timestamps"][-1] == "2010-01-12T12:29:59Z"


def test_a_dsf_hangs_off_a_track_given_as_a_feature() -> None:
    track = run_ok("import-rep", params={"text": sensor_text("BlueTrack.rep")}).features[0]
    result = run_ok("import-rep", [track], {"text": sensor_text("L1_OwnshipSensor.dsf"), "host": "SENSOR"})
    (sensor,) = result.features
    assert sensor["properties"]["host"] == "rep-sensor"


HOST = [
    '100112\t120000\t"NON SUCH"\t@B\t22 00 00.00 N 021 00 00.00 W 90.0 10.0 0',
    '100112 121000 "NON SUCH" @B 22 00 00.00 N 020 50 00.00 W 90.0 10.0 0',
    '100112 122000 "NON SUCH" @B 22 10 00.00 N 020 50 00.00 W 0.0 10.0 0',
]


def _interpolated(when_s: float) -> tuple[float, float]:
    """The host's position at a time, by GeographicLib along the geodesic between its fixes."""
    fixes = [
        (parse_iso("2010-01-12T12:00:00Z"), 22.0, -21.0),
        (parse_iso("2010-01-12T12:10:00Z"), 22.0, -(20 + 50 / 60)),
        (parse_iso("2010-01-12T12:20:00Z"), 22 + 10 / 60, -(20 + 50 / 60)),
    ]
    for (t0, y0, x0), (t1, y1, x1) in itertools.pairwise(fixes):
        if t0 <= when_s <= t1:
            line = GEOD.InverseLine(y0, x0, y1, x1)
            point = line.Position(line.s13 * (when_s - t0) / (t1 - t0))
            return point["lon2"], point["lat2"]
    raise AssertionError("outside the host's fixes")


EVERY_LINE = [
    *HOST,
    ";; a comment",
    ';SENSOR: 100112 120500 "NON SUCH" @A NULL -153.5 0 "Hull Array" first cut',
    ';SENSOR2:\t100112\t120600\t"NON SUCH"\t@A\tNULL\tNULL\tNULL\t150.5\tNULL\t"Towed Array"\tfreq only // tonal A',
    ';SENSOR2: 100112 120700 "NON SUCH" @A 21 60 00.00 N 021 00 00.00 W 358.9 181.1 NULL 5000 "Towed Array" 0607',
    ';SENSOR3: 100112 120800 "NON SUCH" @A NULL 45.0 1.5 150.7 0.2 NULL "Hull Array" with accuracies',
    ';SENSOR: 100112 130000 "NON SUCH" @A NULL 10.0 NULL "Hull Array" after the host\'s last fix',
    ';TMA_POS: 100112 120500 "NON SUCH" S@ 22 05 00.00 N 020 55 00.00 W TRACK_060 045.0 4000 2000 050 12.4 100 first',
    ';TMA_RB: 100112 121500 "NON SUCH" S@ 124.5 12000 TRACK_060 NULL 050 12.4 100 second',
    ";LINE: @C 22 00 00 N 021 00 00 W 22 10 00 N 021 00 00 W a line",
    ";VECTOR: @C 22 00 00 N 021 00 00 W 5000 -90 a vector",
    ";BRG: @C 100112 120000 22 00 00 N 021 00 00 W 45 3000 a bearing",
    ";ELLIPSE: @F 100112 120200 22 05 00 N 020 55 00 W 45.0 5000 3000 an ellipse",
    ";WHEEL: @D 100112 120200 22 05 00 N 020 55 00 W 200 1500 a wheel",
    ";CIRCLE: @B 22 05 00 N 020 55 00 W 2000 a circle",
    ";RECT: @B 22 00 00 N 021 00 00 W 22 05 00 N 020 55 00 W a rectangle",
    ";POLY: @J 100112 120000 100112 123000 22 0 0 N 21 0 0 W 22 5 0 N 21 0 0 W 22 5 0 N 20 55 0 W a polygon",
    ";POLYLINE: @@ 22 0 0 N 21 0 0 W 22 5 0 N 21 0 0 W 22 5 0 N 20 55 0 W a polyline",
    ";TEXT: @E 22 02 00 N 020 58 00 W a text",
    ";TIMETEXT: @E 100112 120300 22 02 00 N 020 58 00 W a timed text",
    ";PERIODTEXT: @E 100112 120300 100112 120900 22 02 00 N 020 58 00 W 30 a period text",
    ';DYNAMIC_RECT: @J "Dynamic A" 100112 120100 22 00 00 N 021 00 00 W 22 01 00 N 020 59 00 W rect 1',
    ';DYNAMIC_RECT: @J "Dynamic A" 100112 120200 22 01 00 N 021 00 00 W 22 02 00 N 020 59 00 W rect 2',
    ';DYNAMIC_CIRCLE: @J "Dynamic B" 100112 120100 22 01 00 N 021 00 00 W 500 circ 1',
    ';DYNAMIC_POLY: @J "Dynamic C" 100112 120100 22 0 0 N 21 0 0 W 22 1 0 N 21 0 0 W 22 1 0 N 20 59 0 W poly 1',
    ';SENSORARC: 100112 120000 100112 121000 "NON SUCH" @@ -75 35 0 1000 -170 170 1500 3000 fwd',
    ';SENSOR_ARC: NULL NULL "NON SUCH" @C 0 360 500 1000 "all round"',
    ';NARRATIVE: 100112 120500 "NON SUCH" contact gained',
    ';NARRATIVE2: 100112 120600 "NON SUCH" SONAR held on the towed array',
    ";FORMAT_FIX: 10_sec_sym SYMBOL NULL NULL TRUE 600000",
    ';FORMAT_LAYER_HIDE: hidden "NON SUCH"',
    "; free text",
]


@pytest.fixture(scope="module")
def every_line() -> Any:
    return run_ok("import-rep", params={"text": "\n".join(EVERY_LINE)})


def test_every_line_type_is_imported_and_nothing_skipped(every_line: Any) -> None:
    report = every_line.report
    assert report["skipped"] == []
    # the one error: a NULL origin after the host's last fix has no position to give
    (error,) = report["errors"]
    assert (
        error["line"]
        == EVERY_LINE.index(
            ';SENSOR: 100112 130000 "NON SUCH" @A NULL 10.0 NULL "Hull Array" after the host\'s last fix'
        )
        + 1
    )
    assert "NULL origin" in error["reason"] and "12:20:00Z" in error["reason"]
    kinds: dict[str, int] = {}
    for f in every_line.features:
        shape = (f["properties"].get("specifics") or {}).get("shapeType") or f["properties"].get("annotationType")
        key = f"{f['properties']['kind']}:{shape or f['properties'].get('trackType', '')}"
        kinds[key] = kinds.get(key, 0) + 1
    assert kinds == {
        "track:": 1,
        "track:tma-solution": 1,
        "sensor:": 2,
        "zone:sensor-arc": 1 + 2,  # fwd: one step (the host's fixes at 12:00 and 12:10); all round: two
        "annotation:line": 1,
        "annotation:vector": 1,
        "annotation:bearing": 1,
        "zone:ellipse": 1,
        "zone:wheel": 1,
        "zone:circle": 2,  # CIRCLE and DYNAMIC_CIRCLE
        "zone:rectangle": 3,  # RECT and two DYNAMIC_RECT
        "zone:polygon": 2,  # POLY and DYNAMIC_POLY
        "annotation:polyline": 1,
        "annotation:label": 3,  # TEXT, TIMETEXT, PERIODTEXT
        "annotation:comment": 2,  # NARRATIVE, NARRATIVE2
    }
    assert report["line_count"] == len(EVERY_LINE)
    assert report["blank_or_comment_lines"] == 2  # ";; a comment" and "; free text"
    (fix_format, hide) = report["directives"]
    assert fix_format["type"] == "FORMAT_FIX" and fix_format["intervalMs"] == 600000 and not fix_format["applied"]
    assert hide["applied"] and hide["features"] == ["rep-non-such"]


def _by(features: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(f for f in features if f["properties"]["name"] == name)


def test_null_fields_origins_and_quoted_names(every_line: Any) -> None:
    hull, towed = of_kind(every_line.features, "sensor")
    assert hull["properties"]["name"] == "Hull Array" and towed["properties"]["name"] == "Towed Array"
    assert hull["properties"]["hostName"] == "NON SUCH" and hull["properties"]["host"] == "rep-non-such"
    h = hull["properties"]
    assert h["bearings"] == [pytest.approx(206.5), 45.0] and h["rangesYd"] == [None, None]  # 0 is no range
    assert h["bearingAccuracies"] == [None, 1.5] and h["frequencies"] == [None, 150.7]
    assert h["frequencyAccuracies"] == [None, 0.2] and h["lineTypes"] == ["SENSOR", "SENSOR3"]
    assert h["labels"] == ["first cut", "with accuracies"] and h["originGiven"] == [False, False]
    for point, when in zip(hull["geometry"]["coordinates"], h["timestamps"], strict=True):
        assert point == pytest.approx(list(_interpolated(parse_iso(when))), abs=1e-9)
    t = towed["properties"]
    assert t["bearings"] == [None, pytest.approx(358.9)] and t["ambiguousBearings"] == [None, pytest.approx(181.1)]
    assert t["frequencies"] == [150.5, None] and t["rangesYd"] == [None, 5000.0]
    assert t["labels"] == ["freq only", "0607"] and t["comments"] == ["tonal A", None]
    assert t["originGiven"] == [False, True]
    assert towed["geometry"]["coordinates"][1] == pytest.approx([-21.0, 22.0])  # 21 60 00.00 N is 22°N


def test_target_solutions_are_tracks_with_their_host_and_semi_axis_ellipses(every_line: Any) -> None:
    solution = next(f for f in every_line.features if f["properties"].get("trackType") == "tma-solution")
    p = solution["properties"]
    assert p["name"] == "TRACK_060" and p["host"] == "rep-non-such" and p["kind"] == "track"
    assert p["courses"] == [50.0, 50.0] and p["speeds"] == [12.4, 12.4] and p["depths"] == [100.0, 100.0]
    assert p["ellipses"] == [{"orientation_deg": 45.0, "semiMajorYd": 4000.0, "semiMinorYd": 2000.0}, None]
    assert p["fixTypes"] == ["TMA_POS", "TMA_RB"] and p["labels"] == ["first", "second"]
    assert solution["geometry"]["coordinates"][0] == pytest.approx([-(20 + 55 / 60), 22 + 5 / 60])
    lon, lat = _interpolated(parse_iso("2010-01-12T12:15:00Z"))
    out = GEOD.Direct(lat, lon, 124.5, 12000 * YD)
    assert solution["geometry"]["coordinates"][1] == pytest.approx([out["lon2"], out["lat2"]], abs=1e-9)


def test_shapes_have_their_geometry_and_times(every_line: Any) -> None:
    features = every_line.features
    vector = _by(features, "a vector")
    end = GEOD.Direct(22.0, -21.0, -90, 5000 * YD)
    assert vector["geometry"]["coordinates"][1] == pytest.approx([end["lon2"], end["lat2"]], abs=1e-9)
    brg = _by(features, "a bearing")
    end = GEOD.Direct(22.0, -21.0, 45, 3000 * YD)
    assert brg["geometry"]["coordinates"][1] == pytest.approx([end["lon2"], end["lat2"]], abs=1e-9)
    assert brg["properties"]["time"] == "2010-01-12T12:00:00Z"
    ellipse = _by(features, "an ellipse")
    ring = ellipse["geometry"]["coordinates"][0]
    centre = (22 + 5 / 60, -(20 + 55 / 60))
    dist = [GEOD.Inverse(centre[0], centre[1], y, x) for x, y in ring]
    assert max(d["s12"] for d in dist) == pytest.approx(5000 * YD, rel=1e-6)  # semi-major, centre to edge
    assert min(d["s12"] for d in dist) == pytest.approx(3000 * YD, rel=1e-3)
    far = max(dist, key=lambda d: d["s12"])
    assert min(abs(far["azi1"] - 45), abs(far["azi1"] + 135)) < 1e-6  # along the orientation
    wheel = _by(features, "a wheel")
    outer, inner = wheel["geometry"]["coordinates"]
    assert GEOD.Inverse(centre[0], centre[1], outer[0][1], outer[0][0])["s12"] == pytest.approx(1500 * YD, rel=1e-9)
    assert GEOD.Inverse(centre[0], centre[1], inner[0][1], inner[0][0])["s12"] == pytest.approx(200 * YD, rel=1e-9)
    period = _by(features, "a period text")
    assert (period["properties"]["time"], period["properties"]["timeEnd"]) == (
        "2010-01-12T12:03:00Z",
        "2010-01-12T12:09:00Z",
    )
    assert period["properties"]["depth"] == 30.0 and period["geometry"]["type"] == "Point"
    rect1, rect2 = (_by(features, f"rect {n}") for n in (1, 2))  # legacy: shown up to its own time
    assert (rect1["properties"]["time"], rect1["properties"]["timeEnd"]) == ("2010-01-12T12:01:00Z",) * 2
    assert (rect2["properties"]["time"], rect2["properties"]["timeEnd"]) == (
        "2010-01-12T12:01:00Z",
        "2010-01-12T12:02:00Z",
    )
    assert rect1["properties"]["dynamicGroup"] == "Dynamic A"
    arcs = [f for f in features if (f["properties"].get("specifics") or {}).get("shapeType") == "sensor-arc"]
    fwd = [a for a in arcs if a["properties"]["name"] == "fwd"]
    assert (
        fwd[0]["properties"]["time"] == "2010-01-12T12:00:00Z"
        and fwd[-1]["properties"]["timeEnd"] == "2010-01-12T12:10:00Z"
    )
    assert fwd[0]["geometry"]["type"] == "MultiPolygon" and fwd[0]["properties"]["specifics"][
        "headingDeg"
    ] == pytest.approx(90, abs=0.2)


def test_a_sensor_round_trips_through_a_plot_and_paging(tmp_path: Any) -> None:
    import debrief_calc as dc
    from debrief_calc.formats.plotfile import load_plot, save_plot

    given = files("BlueTrack.rep", "BlueSensor_sparse.rep")
    for name, text in given.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    ws = dc.Workspace(tmp_path)
    ref = ws.run_tool("import-rep", parameters={"paths": list(given)}).stored["ref"]
    ws.create_plot("satc.plot.json", features=[{"ref": ref}])
    saved = json.loads((tmp_path / "satc.plot.json").read_text(encoding="utf-8"))
    stored = next(f for f in saved["features"] if f["properties"].get("kind") == "sensor")
    doc = load_plot(tmp_path / "satc.plot.json")
    before = (tmp_path / "satc.plot.json").read_bytes()
    save_plot(tmp_path / "satc.plot.json", doc.data, fmt=doc.fmt, scratch_dir=tmp_path / ".scratch")
    assert (tmp_path / "satc.plot.json").read_bytes() == before  # load → save: identical
    fresh = next(
        f
        for f in run_ok("import-rep", params={"paths": list(given)}, read_text=given.__getitem__).features
        if f["properties"]["kind"] == "sensor"
    )

    def bare(feature: dict[str, Any]) -> dict[str, Any]:
        return {**feature, "properties": {k: v for k, v in feature["properties"].items() if k != "provenance"}}

    assert bare(stored) == bare(fresh)  # every field of every cut kept in the plot file
    # paging: a small page budget cuts the sensor by cuts; joining the parts gives it back
    pages: list[dict[str, Any]] = []
    start: Any = (0, 0)
    while start is not None:
        page, start = page_features([stored], start, budget=2000, limit=100)
        pages += page
    assert len(pages) > 3 and all("part" in p for p in pages)
    assert join_parts(pages) == stored
    summary = feature_summary(stored)
    assert summary["kind"] == "sensor" and summary["cut_count"] == summary["point_count"] == 38
    assert summary["host"] == "rep-sensor" and summary["platform"] == "SENSOR"
    assert (summary["time_start"], summary["time_end"]) == ("2010-01-12T12:13:14Z", "2010-01-12T13:13:14Z")
    assert time_span(stored) == (parse_iso("2010-01-12T12:13:14Z"), parse_iso("2010-01-12T13:13:14Z"))
    cut = cut_feature(stored, Window(parse_iso("2010-01-12T12:20:00Z"), parse_iso("2010-01-12T12:30:00Z")))
    assert cut is not None and all("12:2" in t for t in cut["properties"]["timestamps"])
    n = len(cut["properties"]["timestamps"])
    assert n == len(cut["geometry"]["coordinates"]) == len(cut["properties"]["bearings"]) > 0
    assert cut_feature(stored, Window(parse_iso("2010-01-12T14:00:00Z"), None)) is None


def test_bad_sensor_lines_are_errors_naming_the_field() -> None:
    text = "\n".join(
        [
            *HOST,
            ';SENSOR2: 100112 120500 "NON SUCH" @A NULL 10 NULL -5 NULL sonar',
            ';SENSOR: 100112 120500 "NON SUCH" @A NULL ten 0 sonar',
            ';SENSOR: 100112 120500 "NON SUCH" @A NULL 10 -3 sonar',
            ';TMA_RB: 100112 120500 "NON SUCH" S@ 10 1000 SOL 45 -1 2 50 12 0',
            ";SENSOR: 100112 120500",
        ]
    )
    report = run_ok("import-rep", params={"text": text}).report
    reasons = [e["reason"] for e in report["errors"]]
    assert reasons == [
        "SENSOR2: frequency -5 Hz is negative",
        "SENSOR: bad bearing 'ten' (expected a number)",
        "SENSOR: range -3 yd is negative",
        "TMA_RB: ellipse maxima and minima must not be negative (yards, centre to edge)",
        "SENSOR: host (ownship) name missing",
    ]


def test_unknown_parameter_mixes_are_refused() -> None:
    error = run_err("import-rep", params={"path": "a.rep", "text": "x"})
    assert error["details"]["field"] == "path" and "exactly one" in error["message"]
    error = run_err("import-rep", params={"paths": ["a.rep", "a.rep"]}, read_text=lambda p: "")
    assert error["details"]["rule"] == "distinct"
    error = run_err("import-rep", params={"text": "\n".join(HOST), "host": "A=, B"})
    assert error["details"]["field"] == "host"


def test_sixty_minutes_read_in_fix_lines_too() -> None:
    result = run_ok("import-rep", params={"text": "100112 120000 X @A 59 60 00.00 N 000 59 60.00 W 0 0 0"})
    assert result.features[0]["geometry"]["coordinates"] == pytest.approx([-1.0, 60.0])
    assert math.isfinite(result.features[0]["geometry"]["coordinates"][0])


def test_the_fast_reading_of_canonical_sensor_lines_is_the_careful_one() -> None:
    from debrief_calc.formats.hosted.records import Where
    from debrief_calc.formats.rep._hosted_lines import fast_sensor, parse_sensor
    from debrief_calc.formats.rep._tokens import DateTimeReader

    lines = [*sensor_text("BlueSensor_sparse.rep").splitlines(), *sensor_text("L1_OwnshipSensor.dsf").splitlines()]
    lines += [
        ";SENSOR2: 100112 120600.250 HOST @A NULL NULL 181.1 150.5 NULL towed freq only // tonal",
        ";SENSOR3: 100112 120800 HOST @A 22 05 00.00 N 020 55 00.00 W 45.0 1.5 150.7 0.2 2000 hull acc",
        ";SENSOR: 100112 120500 HOST @A 59 60 00 N 000 00 60 W -153.5 0 hull",
    ]
    clock = DateTimeReader()
    for n, line in enumerate(lines, 1):
        kind, rest = line.split(":", 1)[0][1:], line.split(":", 1)[1]
        where = Where("x", n, line)
        fast = fast_sensor(kind, line, clock, where)
        assert fast is not None, line
        assert fast == parse_sensor(kind, rest, clock, where), line
    assert fast_sensor("SENSOR", ';SENSOR: 100112 120500 "A B" @A NULL 1 0 s', clock, where) is None  # quoted
