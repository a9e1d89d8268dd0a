"""``import-dpf``: legacy Debrief ``.dpf`` plots (real files of ``debrief/debrief`` and one built
from their elements) as plot features, what is not converted listed, and hostile XML refused."""

from __future__ import annotations

import xml.etree.ElementTree as StdTree
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.tracks.times import parse_iso
from tests.test_analysis_support import DATA, run_err, run_ok

GEOD = Geodesic.WGS84
DPF = DATA / "dpf"
YD = 0.9144


def read(name: str) -> str:
    return (DPF / name).read_text(encoding="utf-8")


def imported(name: str) -> Any:
    return run_ok("import-dpf", params={"path": name}, read_text=read)


def by_name(features: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(f for f in features if f["properties"].get("name") == name)


def test_a_track_of_tma_segments_keeps_every_fix_and_its_segments() -> None:
    result = imported("GenInfillTest.dpf")
    (track,) = result.features
    root = StdTree.fromstring(read("GenInfillTest.dpf"))  # a trusted test file: the reference reading
    fixes = list(root.iter("fix"))
    coords = [
        [float(f.find("centre/shortLocation").get("Long")), float(f.find("centre/shortLocation").get("Lat"))]
        for f in fixes
    ]
    assert track["geometry"]["coordinates"] == coords and len(coords) == 18
    p = track["properties"]
    assert p["trackType"] == "tma-solution" and p["name"] == "121200.00_0" and p["stroke"] == "#0000ff"
    assert [s["type"] for s in p["segments"]] == ["AbsoluteTMASegment", "TrackSegment", "AbsoluteTMASegment"]
    assert [s["fixCount"] for s in p["segments"]] == [6, 8, 4]
    assert p["segments"][0]["courseDeg"] == 304.199 and p["segments"][0]["speedKn"] == 11.067
    assert p["timestamps"][0] == "2010-01-12T13:12:00Z" and p["timestamps"][-1] == "2010-01-12T13:28:50Z"
    assert p["courses"][0] == 304.199 and p["labels"][0] == "1312"
    report = result.report
    assert report["fix_count"] == 18 and report["current_time"] == "2010-01-12T13:42:28Z"
    assert {n["element"] for n in report["not_converted"]} == {"projection", "gui"}
    assert report["errors"] == []
    assert run_ok("track-stats", [track]).success  # a track every tool takes


def test_a_composite_tracks_planning_legs_become_fixes() -> None:
    (track,) = imported("compositeTrack.dpf").features
    p = track["properties"]
    assert p["trackType"] == "planned" and p["stroke"] == "#ff0000"
    assert p["timestamps"] == [
        "2015-08-11T20:15:13Z",
        "2015-08-11T20:27:13Z",
        "2015-08-11T20:39:13Z",
        "2015-08-11T20:51:13Z",
    ]
    lat, lon = 50.8544859, -1.34225
    for point in track["geometry"]["coordinates"][1:]:  # 12 kn for 12 minutes on 045, three times
        out = GEOD.Direct(lat, lon, 45.0, 12 * 1852 * 0.2)
        lat, lon = out["lat2"], out["lon2"]
        assert point == pytest.approx([lon, lat], abs=1e-9)
    assert p["speeds"][:3] == [pytest.approx(12.0)] * 3


def test_a_tma_solution_of_a_bare_layers_document() -> None:
    result = imported("test_tma_read_write.xml")
    tomato, solution = result.features
    assert tomato["properties"]["name"] == "TOMATO" and len(tomato["geometry"]["coordinates"]) == 2
    s = solution["properties"]
    assert s["trackType"] == "tma-solution" and s["host"] == tomato["id"] and s["name"] == "TRACK_060"
    assert s["ellipses"] == [
        {"orientation_deg": 45.0, "semiMajorYd": pytest.approx(4000.0), "semiMinorYd": pytest.approx(2000.0)}
    ]
    assert (s["courses"], s["speeds"], s["depths"]) == ([50.0], [12.4], [100.0])
    assert solution["geometry"] == {"type": "Point", "coordinates": [-21.7024944, 22.1884944]}
    assert s["colours"] == ["#e6c814"] and s["labels"] == ["Trial label"]  # GOLD, as ColourHandler has it


def test_sensors_solutions_narratives_and_shapes_of_a_plot() -> None:
    result = imported("constructed_sensors_shapes.dpf")
    features = result.features
    (sensor,) = [f for f in features if f["properties"]["kind"] == "sensor"]
    p = sensor["properties"]
    assert p["name"] == "SENSOR_A" and p["host"] == "dpf-nonsuch" and p["hostName"] == "NONSUCH"
    assert (
        p["baseFrequency"] == 220.0 and p["arrayMode"] == "worm-in-hole" and p["arrayOffsetM"] == pytest.approx(-914.4)
    )
    assert p["bearings"] == [300.8, 300.8, None, 300.0] and p["ambiguousBearings"] == [59.3, None, None, None]
    assert p["frequencies"] == [49.92, 49.92, 49.92, None] and p["rangesYd"] == [None, None, None, pytest.approx(5000)]
    assert p["originGiven"] == [False, False, False, True] and p["cutsVisible"] == [True, True, True, False]
    assert p["comments"][3] == "held" and p["labels"][2] == "freq only" and p["stroke"] == "#a90184"
    assert p["lineTypes"] == ["SENSOR2", "SENSOR2", "SENSOR2", "SENSOR"]
    # worm in hole: the array 1000 yd back along the host's own path, past its turn at 04:15
    p1 = (5.0, 29.963)
    p2 = (5 + 2.2 / 60, 29 + 57 / 60 + 46.8 / 3600)
    leg2 = GEOD.Inverse(*p1, *p2)["s12"]
    along = leg2 * 22 / 900  # 22 s into the 15-minute northward leg
    back = GEOD.InverseLine(*p1, 5.0, 30.0).Position(914.4 - along)
    assert sensor["geometry"]["coordinates"][0] == pytest.approx([back["lon2"], back["lat2"]], abs=1e-8)
    assert sensor["geometry"]["coordinates"][3] == [30.01, 5.01]
    solution = next(f for f in features if f["properties"].get("name") == "TRACK_060")
    s = solution["properties"]
    assert s["fixTypes"] == ["DPF", "DPF"] and s["bearingsFromHost"] == [45.0, None]
    start = GEOD.InverseLine(5.0, 30.0, *p1).Position(GEOD.Inverse(5.0, 30.0, *p1)["s12"] * 600 / 900)
    out = GEOD.Direct(start["lat2"], start["lon2"], 45.0, 4000 * YD)
    assert solution["geometry"]["coordinates"][0] == pytest.approx([out["lon2"], out["lat2"]], abs=1e-8)
    assert s["ellipses"][0] == {
        "orientation_deg": 45.0,
        "semiMajorYd": pytest.approx(2000),
        "semiMinorYd": pytest.approx(1000),
    }
    ellipse = by_name(features, "test ellipse")
    assert ellipse["properties"]["specifics"]["semiMajorYd"] == pytest.approx(5000, rel=1e-5)  # 0.0411447 degs
    assert ellipse["properties"]["time"] == "1995-12-12T06:02:00Z"
    label = by_name(features, "test period")
    assert (label["properties"]["time"], label["properties"]["timeEnd"]) == (
        "1995-12-12T05:02:00Z",
        "1995-12-12T06:02:00Z",
    )
    assert by_name(features, "test\\npolyline")["geometry"]["type"] == "LineString"
    assert by_name(features, "test\\npoly")["properties"]["kind"] == "zone"
    rect2 = by_name(features, "dynamic A rect 2")["properties"]
    assert (rect2["time"], rect2["timeEnd"], rect2["dynamicGroup"]) == (
        "1995-12-12T05:10:00Z",
        "1995-12-12T05:11:00Z",
        "Dynamic A",
    )
    arcs = [f for f in features if (f["properties"].get("specifics") or {}).get("shapeType") == "sensor-arc"]
    assert arcs and arcs[0]["properties"]["time"] == "2009-07-22T04:00:00Z"
    gained, other = (f for f in features if f["properties"].get("annotationType") == "comment")
    assert (
        gained["geometry"]["coordinates"] == [29.963, 5.0]
        and gained["properties"]["positionTime"] == "2009-07-22T04:15:00Z"
    )
    assert other["geometry"] is None and other["properties"]["track"] == "NEL_STYLE"
    report = result.report
    assert {n["element"] for n in report["not_converted"]} == {"grid", "ChartFolio", "externalDatafile", "gui"}
    assert all(n["reason"] for n in report["not_converted"]) and report["errors"] == []
    assert (report["sensor_count"], report["cut_count"], report["narrative_count"]) == (1, 4, 2)
    assert report["current_time"] == "2009-07-22T04:20:00Z"
    assert parse_iso(p["timestamps"][0]) < parse_iso(p["timestamps"][-1])


def test_a_malformed_plot_is_a_clear_error() -> None:
    error = run_err("import-dpf", params={"path": "BAD_sample.dpf"}, read_text=read)
    assert error["code"] == "VALIDATION_FAILED" and "not well-formed XML (line 6" in error["message"]
    error = run_err("import-dpf", params={"text": "<kml><Document/></kml>"})
    assert "not a Debrief plot" in error["message"]
    error = run_err("import-dpf", params={"path": "plot.json"}, read_text=read)
    assert error["details"]["rule"] == "suffix"


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE plot [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<plot><session><layers><narrative Name="n"><narrative_entry Dtg="951212 050000" Entry="&c;" Track="X"/></narrative></layers></session></plot>"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE plot [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<plot><session><layers><narrative Name="n"><narrative_entry Dtg="951212 050000" Entry="&secret;" Track="X"/></narrative></layers></session></plot>"""
DTD_FETCH = """<?xml version="1.0"?>
<!DOCTYPE plot SYSTEM "http://127.0.0.1:9/debrief_plot.dtd">
<plot><session><layers/></session></plot>"""


@pytest.mark.parametrize(("text", "said"), [(BILLION_LAUGHS, "DTD"), (EXTERNAL_ENTITY, "DTD"), (DTD_FETCH, "DTD")])
def test_hostile_xml_is_refused_before_anything_is_read(text: str, said: str) -> None:
    error = run_err("import-dpf", params={"text": text})
    assert error["code"] == "VALIDATION_FAILED" and said in error["message"] and "refused" in error["message"]
    assert "no entities are expanded" in error["message"]


def test_entities_without_a_doctype_are_refused_too() -> None:
    from debrief_calc.errors import ValidationFailed
    from debrief_calc.formats.dpf._xml import read_xml

    with pytest.raises(ValidationFailed, match="refused"):
        read_xml(BILLION_LAUGHS.replace("<!DOCTYPE", "<!DOCTYPE"), "x")
    # a plain undefined entity is simply not well-formed
    with pytest.raises(ValidationFailed, match="not well-formed"):
        read_xml("<plot>&undefined;</plot>", "x")
