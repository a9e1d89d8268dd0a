"""``track-legs`` on the real NELSON track (checked against GeographicLib) and on tracks built
here with known legs and turns."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debrief_calc.analysis import default_registry
from debrief_calc.analysis.track_legs import SPEC
from debrief_calc.tracks.features import parse_iso
from tests.test_analysis_support import GEOD, coords, epoch, load_json, props, rep_track, run_err, run_ok, track_feature

T0 = parse_iso("2024-05-01T00:00:00Z")
KNOT = 1852.0 / 3600.0


def legs_of(feature: dict[str, Any], **params: Any) -> dict[str, Any]:
    return props(run_ok("track-legs", [feature], params))


def find_leg(answer: dict[str, Any], start: str, end: str) -> dict[str, Any]:
    found = [leg for leg in answer["legs"] if leg["start"][11:16] == start and leg["end"][11:16] == end]
    assert len(found) == 1, [(leg["start"], leg["end"], leg["course"]) for leg in answer["legs"]]
    return found[0]


def glib_leg(feature: dict[str, Any], start: str, end: str) -> tuple[float, float, float]:
    """Course (mean of the azimuths at both ends of the geodesic from the leg's first fix to
    its last), along-track length (m) and mean speed (kn), from GeographicLib alone."""
    lat, lon = coords(feature)
    t = epoch(feature)
    i = int(np.flatnonzero(t == parse_iso(start))[0])
    j = int(np.flatnonzero(t == parse_iso(end))[0])
    inv = GEOD.Inverse(lat[i], lon[i], lat[j], lon[j])
    az1, az2 = math.radians(inv["azi1"]), math.radians(inv["azi2"])
    course = math.degrees(math.atan2(math.sin(az1) + math.sin(az2), math.cos(az1) + math.cos(az2))) % 360.0
    length = math.fsum(GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["s12"] for k in range(i, j))
    return course, length, length / (t[j] - t[i]) / KNOT


def angle_diff(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def test_nelson_legs_are_the_plain_ones() -> None:
    nelson = rep_track("valid_boat1.rep")
    answer = legs_of(nelson)
    day = "1995-12-12T"
    expected = [  # (start, end, course as read from the track)
        ("09:51", "10:10", 334.0),
        ("10:11", "10:29", 277.5),
        ("10:32", "10:35", 67.0),
        ("10:37", "10:40", 142.0),
    ]
    for start, end, course in expected:
        leg = find_leg(answer, start, end)
        ref_course, ref_length, ref_speed = glib_leg(nelson, f"{day}{start}:00Z", f"{day}{end}:00Z")
        assert angle_diff(leg["course"], ref_course) < 0.5 and angle_diff(leg["course"], course) < 1.0
        assert leg["distance"] == pytest.approx(ref_length / 1852.0, abs=1e-3)
        assert leg["speed_kn"] == pytest.approx(ref_speed, abs=0.01)
        assert leg["point_count"] == (parse_iso(f"{day}{end}:00Z") - parse_iso(f"{day}{start}:00Z")) / 60 + 1
        lo, hi = leg["speed_range_kn"]
        assert lo <= leg["speed_kn"] <= hi
    # the 277 leg really is 277-278 throughout, by GeographicLib fix to fix
    lat, lon = coords(nelson)
    t = epoch(nelson)
    i, j = (int(np.flatnonzero(t == parse_iso(f"{day}{hhmm}:00Z"))[0]) for hhmm in ("10:11", "10:29"))
    az = [GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["azi1"] % 360 for k in range(i, j)]
    assert min(az) > 276.5 and max(az) < 278.5

    # the whole track: legs in time order, apart, manoeuvres between each pair
    legs = answer["legs"]
    assert answer["leg_count"] == len(legs) == 21 and "legs_truncated" not in answer
    assert all(a["end"] <= b["start"] for a, b in itertools.pairwise(legs))
    assert len(answer["manoeuvres"]) == len(legs) - 1
    assert (legs[0]["start"], legs[-1]["end"]) == ("1995-12-12T05:00:00Z", "1995-12-12T11:41:00Z")
    # compact: a few hundred bytes per leg (and its manoeuvre, with net_turn beside the degrees sailed and the
    # peak rate of turn with its time beside the mean), no coordinate arrays, and ~300 per turn of a two-way
    # manoeuvre
    turns = [t for m in answer["manoeuvres"] for t in m.get("turns", [])]
    assert turns and len(json.dumps(answer)) < 680 * len(legs) + 300 * len(turns)
    # each leg holds its own tolerance: GeographicLib's course of every segment within 3 deg of the leg's
    for leg in legs:
        i, j = (int(np.flatnonzero(t == parse_iso(leg[key]))[0]) for key in ("start", "end"))
        worst = max(
            angle_diff(GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["azi1"], leg["course"]) for k in range(i, j)
        )
        assert worst <= 3.0 + 0.05 and leg["max_course_deviation"] == pytest.approx(worst, abs=0.15)

    k = legs.index(find_leg(answer, "10:11", "10:29"))
    turn = answer["manoeuvres"][k]
    assert turn["between_legs"] == [k + 1, k + 2]
    # from the middle of the last segment on the old leg to the middle of the first on the new
    assert (turn["start"], turn["end"], turn["duration_s"]) == (f"{day}10:28:30Z", f"{day}10:32:30Z", 240)
    assert turn["rate_of_turn"] == pytest.approx(turn["turn_deg"] / 4, abs=0.02)  # turn_deg is to 0.1 deg
    assert turn["turn"] == "starboard" and turn["changed"] == "course and speed"
    assert turn["turn_deg"] == pytest.approx((legs[k + 1]["course"] - legs[k]["course"]) % 360, abs=0.11)
    assert (turn["speed_from_kn"], turn["speed_to_kn"]) == pytest.approx(
        (legs[k]["speed_kn"], legs[k + 1]["speed_kn"]), abs=0.006
    )
    to_142 = answer["manoeuvres"][k + 1]
    assert to_142["turn"] == "starboard" and to_142["turn_deg"] == pytest.approx(74.5, abs=0.2)


def built_track(fid: str, pieces: list[tuple[float, float, float]], step_s: float = 60.0) -> dict[str, Any]:
    """A track from (course at the start of the piece, knots, minutes) pieces, its course
    turning evenly within a piece to the next piece's course when the piece is a turn:
    positions by GeographicLib Direct, one fix every ``step_s``."""
    lat, lon, t = [50.0], [-4.0], [T0]
    for course, knots, minutes, turn in _expand(pieces):
        steps = round(minutes * 60 / step_s)
        for s in range(steps):
            heading = course + turn * (s + 0.5) / steps
            d = GEOD.Direct(lat[-1], lon[-1], heading, knots * KNOT * step_s)
            lat.append(d["lat2"])
            lon.append(d["lon2"])
            t.append(t[-1] + step_s)
    return track_feature(fid, t, lon, lat)


def _expand(pieces: list[tuple[float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Turn pieces (knots < 0 marks 'turn by course degrees') into (course, knots, minutes, turn)."""
    out = []
    course = pieces[0][0]
    for value, knots, minutes in pieces:
        if knots < 0:
            out.append((course, -knots, minutes, value))
            course += value
        else:
            course = value
            out.append((course, knots, minutes, 0.0))
    return out


def test_a_round_turn_counts_and_direction_is_as_turned() -> None:
    # 090 for 20 min, turn 450 deg to starboard in 8 min, 180 for 20 min, then 40 deg to port
    track = built_track("r", [(90, 10, 20), (450, -10, 8), (180, 10, 20), (-40, -10, 2), (140, 14, 20)])
    answer = legs_of(track)
    assert [round(leg["course"]) for leg in answer["legs"]] == [90, 180, 140]
    first, second = answer["manoeuvres"]
    assert first["turn"] == "starboard" and first["turn_deg"] == pytest.approx(450, abs=1)
    assert first["changed"] == "course"
    assert second["turn"] == "port" and second["turn_deg"] == pytest.approx(40, abs=1)
    assert second["changed"] == "course and speed" and second["speed_to_kn"] == pytest.approx(14, abs=0.05)
    assert answer["legs"][0]["start"] == "2024-05-01T00:00:00Z" and answer["legs"][0]["end"] == "2024-05-01T00:20:00Z"
    assert answer["legs"][0]["speed_kn"] == pytest.approx(10, abs=1e-3)


def test_a_speed_change_alone_parts_legs_and_a_slow_turn_is_not_one_leg() -> None:
    track = built_track("s", [(45, 8, 15), (45, 16, 15)])
    answer = legs_of(track)
    assert [leg["speed_kn"] for leg in answer["legs"]] == pytest.approx([8, 16], abs=0.01)
    (change,) = answer["manoeuvres"]
    assert change["changed"] == "speed" and change["turn_deg"] == pytest.approx(0, abs=0.1)
    # 2 degrees a minute for an hour: small steps, but 120 degrees in all
    slow = legs_of(built_track("slow", [(0, 10, 10), (120, -10, 60), (120, 10, 10)]))
    for leg in slow["legs"]:
        assert (
            leg["duration_s"] <= 1200 + 1e-6 or angle_diff(leg["course"], 0) < 1 or angle_diff(leg["course"], 120) < 1
        )
    assert max(leg["duration_s"] for leg in slow["legs"]) < 70 * 60


def test_mark_legs_adds_one_labelled_line_per_leg() -> None:
    nelson = rep_track("valid_boat1.rep")
    result = run_ok("track-legs", [nelson], {"mark_legs": True, "max_legs": 5})
    answer, marks = result.features[0]["properties"], result.features[1:]
    assert len(marks) == 5 and answer["leg_count"] == 21 and answer["legs_truncated"] is True
    assert "the first 5 listed" in answer["note"] and "max_legs" in answer["note"]
    assert len(answer["manoeuvres"]) == 4
    (command,) = result.commands
    assert command["command"] == "addFeatures" and [f["id"] for f in command["payload"]["features"]] == [
        f["id"] for f in marks
    ]
    first = marks[0]
    assert first["properties"]["kind"] == "annotation" and first["geometry"]["type"] == "LineString"
    assert first["properties"]["text"] == "NELSON leg 1: 270° 12.0 kn 05:00–05:12"
    # shown while its leg is sailed, thin and dashed in the track's colour
    for mark, leg in zip(marks, answer["legs"], strict=True):
        assert (mark["properties"]["time"], mark["properties"]["timeEnd"]) == (leg["start"], leg["end"])
        assert mark["properties"]["stroke-dasharray"] == "6 4" and mark["properties"]["stroke-width"] == 1
        assert mark["properties"]["stroke"] == nelson["properties"]["stroke"]
    lat, lon = coords(nelson)
    assert first["geometry"]["coordinates"] == [[lon[0], lat[0]], [lon[12], lat[12]]]
    plain = run_ok("track-legs", [nelson])
    assert len(plain.features) == 1 and plain.commands == []


def test_several_tracks_one_result_each_with_units() -> None:
    tracks = [
        f for f in load_json("plots/large-sample.plot.json")["features"] if f["properties"].get("dataType") == "track"
    ]
    result = run_ok("track-legs", tracks, {"distance_unit": "km"})
    assert [f["properties"]["track_id"] for f in result.features] == [f["id"] for f in tracks]
    for f in result.features:
        answer = f["properties"]
        assert answer["distance_unit"] == "km" and answer["leg_count"] == len(answer["legs"])
        assert [s["id"] for s in answer["provenance"]["sources"]] == [answer["track_id"]]


def test_no_leg_is_said_in_words() -> None:
    zigzag = track_feature(
        "z", T0 + 60 * np.arange(6), [0, 0.01, 0.0, 0.01, 0.0, 0.01], [0, 0.01, 0.02, 0.03, 0.04, 0.05]
    )
    result = run_ok("track-legs", [zigzag])
    answer = props(result)
    assert answer["leg_count"] == 0 and answer["legs"] == []
    # no leg, but it turned: every turn is a manoeuvre (90 deg each way, by GeographicLib's courses)
    lat, lon = coords(zigzag)
    courses = [GEOD.Inverse(lat[k], lon[k], lat[k + 1], lon[k + 1])["azi1"] for k in range(5)]
    sides = ["starboard" if (b - a) % 360 < 180 else "port" for a, b in itertools.pairwise(courses)]
    assert [m["turn"] for m in answer["manoeuvres"]] == sides
    assert all(m["between_legs"] is None and m["within"] == "whole_span" for m in answer["manoeuvres"])
    assert "no steady leg" in answer["note"] and "course_tolerance" in answer["note"]
    assert any("no steady leg" in w for w in result.warnings)
    # one fix, or a platform that never moves (no course at all), has no leg either
    for lons, lats in (([0.0], [0.0]), ([0.0] * 5, [0.0] * 5)):
        still = legs_of(track_feature("s", T0 + 60 * np.arange(len(lons)), lons, lats), mark_legs=True)
        assert still["leg_count"] == 0 and still["manoeuvres"] == []


def test_bad_input_is_named() -> None:
    nelson = rep_track("valid_boat1.rep")
    for field, value, rule in (
        ("course_tolerance", 0, "minimum"),
        ("course_tolerance", 120, "maximum"),
        ("speed_tolerance", -1, "minimum"),
        ("min_leg_duration_s", "long", "type"),
        ("max_legs", 0, "minimum"),
    ):
        error = run_err("track-legs", [nelson], {field: value})
        assert error["code"] == "VALIDATION_FAILED" and error["details"]["field"] == field
        assert error["details"]["rule"] == rule, error
    assert run_err("track-legs", [])["code"] == "INVALID_CONTEXT"
    zone = {
        "type": "Feature",
        "id": "z",
        "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]},
        "properties": {"kind": "zone"},
    }
    assert run_err("track-legs", [zone])["code"] == "KIND_MISMATCH"


def test_describe_tool_lists_the_parameters_the_handler_reads() -> None:
    described = default_registry().get("track-legs").describe()
    names = [p["name"] for p in described["parameters"]]
    assert names == [
        "course_tolerance",
        "speed_tolerance",
        "min_leg_duration_s",
        "smoothing_s",
        "max_legs",
        "mark_legs",
        "marks_timed",
        "distance_unit",
    ]
    assert described["output_kinds"] == ["analysis-result", "annotation"]
    for name in names:
        assert name in SPEC.description or name == "distance_unit"


def test_noise_does_not_part_a_leg_but_a_dog_leg_stays_a_manoeuvre() -> None:
    clean = built_track("n", [(90, 10, 30), (180, 10, 30), (135, 10, 30)])
    rng = np.random.default_rng(3)
    xy = np.array(clean["geometry"]["coordinates"])
    jitter_m = rng.normal(0.0, 5.0, xy.shape)  # 5 m of position noise, each way
    xy[:, 0] += jitter_m[:, 0] / (111_320.0 * math.cos(math.radians(50.0)))
    xy[:, 1] += jitter_m[:, 1] / 111_320.0
    noisy = {**clean, "geometry": {"type": "LineString", "coordinates": xy.tolist()}}
    # at 3 deg the rule is strict: a segment the noise turned 4 deg parts a leg rather than joining it
    strict = legs_of(noisy)
    assert all(leg["max_course_deviation"] <= 3.0 for leg in strict["legs"]) and strict["leg_count"] > 3
    # read over two minutes, 5 m of noise is a third as loud: the three legs
    answer = legs_of(noisy, smoothing_s=120)
    assert [round(leg["course"]) for leg in answer["legs"]] == [90, 180, 135]
    assert answer["smoothed"]["fixes_used"] == 46 and answer["point_count"] == 91
    assert [(leg["start"][11:16], leg["end"][11:16]) for leg in answer["legs"]] == [
        ("00:00", "00:30"),
        ("00:30", "01:00"),
        ("01:00", "01:30"),
    ]
    # out 60 degrees to starboard for 90 s and back on the line: the same course either side,
    # but the stretch between makes good half the speed, so it is a manoeuvre, not noise
    dog = legs_of(built_track("d", [(90, 10, 20), (150, 10, 1.5), (30, 10, 1.5), (90, 10, 20)], step_s=30.0))
    assert [round(leg["course"]) for leg in dog["legs"]] == [90, 90]
    (jink,) = dog["manoeuvres"]
    # 180 s off the line, and half a 30 s segment either side (a turn runs middle to middle)
    assert jink["changed"].startswith("neither") and jink["duration_s"] == pytest.approx(180 + 30, abs=31)


def _pieces_cover_the_span(answer: dict[str, Any]) -> None:
    """Legs, the gaps between them and unsteady stretches, in time order, meet end to start from the
    span's first fix to its last; the manoeuvre between two legs spans their gap (from the middle of the
    one's last segment to the middle of the other's first)."""
    legs = answer["legs"]
    gaps = [{"start": a["end"], "end": b["start"]} for a, b in itertools.pairwise(legs)]
    pieces = sorted((p["start"], p["end"]) for p in [*legs, *gaps, *answer["unsteady"]])
    assert pieces[0][0] == answer["track_start"] and pieces[-1][1] == answer["track_end"]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces)), pieces
    between = [m for m in answer["manoeuvres"] if m["between_legs"] is not None]
    for m, gap in zip(between, gaps, strict=True):
        assert parse_iso(m["start"]) < parse_iso(gap["start"]) and parse_iso(m["end"]) > parse_iso(gap["end"])


def test_every_part_of_the_span_is_a_leg_a_manoeuvre_or_unsteady() -> None:
    from debrief_calc.tracks.times import cut_feature, parse_window

    nelson = rep_track("valid_boat1.rep")
    day = "1995-12-12T"
    window = cut_feature(nelson, parse_window(f"{day}10:00:00Z", f"{day}10:45:00Z"))
    assert window is not None
    answer = legs_of(window)
    assert answer["legs"][-1]["end"] == f"{day}10:40:00Z"
    (tail,) = answer["unsteady"]  # 10:40 to 10:45: turning, no steady leg before the span ends
    assert (tail["where"], tail["start"], tail["end"]) == ("after_last_leg", f"{day}10:40:00Z", f"{day}10:45:00Z")
    assert tail["duration_s"] == 300 and tail["point_count"] == 6 and tail["changed"] == "course"
    assert (
        tail["course_from"] == answer["legs"][-1]["course"] and tail["speed_from_kn"] == answer["legs"][-1]["speed_kn"]
    )
    lat, lon = coords(nelson)
    t = epoch(nelson)
    k = int(np.flatnonzero(t == parse_iso(f"{day}10:44:00Z"))[0])  # the span's last segment, by GeographicLib
    line = GEOD.InverseLine(lat[k], lon[k], lat[k + 1], lon[k + 1])
    assert angle_diff(tail["course_to"], line.Position(line.s13 / 2)["azi2"] % 360) < 0.06
    assert tail["speed_to_kn"] == pytest.approx(line.s13 / 60 / KNOT, abs=0.006)
    assert tail["net_turn"] == "port" and tail["net_turn_deg"] == pytest.approx(
        angle_diff(tail["course_from"], tail["course_to"]), abs=0.11
    )
    # it turned both ways: the headline's degrees are those sailed, its turns summed
    assert tail["turn"] == "both ways" and tail["turn_deg"] == pytest.approx(
        sum(x["turn_deg"] for x in tail["turns"]), abs=0.11
    )
    assert "last leg's end" in tail["note"]
    _pieces_cover_the_span(answer)
    # a window opening mid-turn: the stretch before the first leg too
    late = cut_feature(nelson, parse_window(f"{day}10:30:00Z", f"{day}10:45:00Z"))
    assert late is not None
    answer = legs_of(late)
    head = answer["unsteady"][0]
    assert (head["where"], head["start"], head["end"]) == ("before_first_leg", f"{day}10:30:00Z", f"{day}10:32:00Z")
    assert head["course_to"] == answer["legs"][0]["course"] and head["turn"] == "starboard"
    _pieces_cover_the_span(answer)
    # the whole track ends on legs: nothing unsteady; no leg at all: the whole span is
    assert legs_of(nelson)["unsteady"] == []
    zigzag = track_feature(
        "z", T0 + 60 * np.arange(6), [0, 0.01, 0.0, 0.01, 0.0, 0.01], [0, 0.01, 0.02, 0.03, 0.04, 0.05]
    )
    (whole,) = legs_of(zigzag)["unsteady"]
    assert whole["where"] == "whole_span" and whole["point_count"] == 6
    assert "unsteady" in SPEC.description and "cover the whole span" in SPEC.description


def test_leg_marks_go_to_the_plot_by_a_stored_ref_timed_and_dashed(tmp_path: Path) -> None:
    """Through run_tool the addFeatures command carries a reference to the marks, not the marks
    again; the reference reads back the marks; a picture shows each only while its leg is sailed."""
    from debrief_calc.calc.service import CalcService
    from debrief_calc.plots.render import render_plot
    from llmem.core.config import Limits
    from llmem.core.store import ArtifactStore

    nelson = rep_track("valid_boat1.rep")
    svc = CalcService(ArtifactStore(tmp_path / ".llmem", tmp_path), Limits())
    answer = svc.run(
        "track-legs", [nelson], None, None, {"mark_legs": True}, "1995-12-12T10:00:00Z", "1995-12-12T10:45:00Z"
    )
    marks = [f for f in answer["features"] if f["properties"]["kind"] == "annotation"]
    assert len(marks) == 4
    (command,) = answer["commands"]
    assert command["command"] == "addFeatures" and command["payload"] == {"ref": answer["stored"]["ref"]}
    assert answer["stored"]["feature_count"] == 4 and "addFeatures" in answer["stored"]["holds"]
    assert len(json.dumps(answer)) < 2 * len(json.dumps(marks)) + 4000  # the marks once, not twice
    stored = svc.expand_refs([command["payload"]])
    assert stored == marks
    plot = {"type": "FeatureCollection", "features": [nelson, *marks]}
    at_1020 = render_plot(plot, current_time=parse_iso("1995-12-12T10:20:00Z"), fit="all")
    assert sorted(at_1020.hidden_inactive) == sorted(m["id"] for m in marks if m["properties"]["leg"] != 2)


def test_a_manoeuvre_that_turns_both_ways_lists_its_turns_in_order() -> None:
    """COLLINGWOOD 10:30-11:19: net 36 deg to starboard, but a 93 deg turn to port first (10:30-10:34)
    and then loops both ways; each turn's courses are GeographicLib's segment courses there."""
    boat = rep_track("valid_boat2.rep")
    (m,) = [m for m in legs_of(boat)["manoeuvres"] if m["start"].endswith("10:29:30Z")]
    assert (m["net_turn"], m["net_turn_deg"], m["course_from"], m["course_to"]) == ("starboard", 36.1, 13.5, 49.6)
    turns = m["turns"]
    # the headline: degrees sailed (every turn summed), not the net change of course
    assert m["turn"] == "both ways" and m["turn_deg"] == pytest.approx(sum(x["turn_deg"] for x in turns), abs=0.11)
    assert m["rate_of_turn"] == pytest.approx(m["turn_deg"] / (m["duration_s"] / 60), abs=0.006)
    first = turns[0]
    assert (first["turn"], round(first["turn_deg"]), first["start"][11:19], first["end"][11:19]) == (
        "port",
        93,
        "10:29:30",
        "10:34:30",
    )
    assert turns[1]["turn"] == "starboard" and m["turns_text"].startswith("port 93° then starboard ")
    assert all(a["turn"] != b["turn"] for a, b in itertools.pairwise(turns))  # in order, each way in turn
    assert all(a["end"] <= b["start"] for a, b in itertools.pairwise(turns))
    # GeographicLib: the course of the segment starting at each turn's end, and the net of all turns
    lat, lon = coords(boat)
    t = epoch(boat)

    def course(when: str) -> float:  # of the segment whose middle ``when`` is
        i = int(np.searchsorted(t, parse_iso(when)) - 1)
        line = GEOD.InverseLine(lat[i], lon[i], lat[i + 1], lon[i + 1])
        return float(line.Position(line.s13 / 2)["azi2"] % 360.0)

    for turn in turns[:-1]:  # the last ends on the next leg, whose course is its mean
        assert turn["course_to"] == pytest.approx(course(turn["end"]), abs=0.06)
    signed = sum(x["turn_deg"] * (1 if x["turn"] == "starboard" else -1) for x in turns)
    assert signed == pytest.approx(m["net_turn_deg"], abs=1.5)  # what the steps within 3 deg left out


def test_a_one_way_manoeuvre_has_no_turns_list() -> None:
    answer = legs_of(rep_track("valid_boat2.rep"))
    one_way = [m for m in answer["manoeuvres"] if not m["start"].endswith("10:29:30Z")]
    assert one_way and all("turns" not in m and "turns_text" not in m for m in one_way)


# --- issue 22: legs hold their tolerance, every turn is an event, windows and marks say what they are ---


def _window(feature: dict[str, Any], start: str, end: str) -> dict[str, Any]:
    from debrief_calc.tracks.times import cut_features, parse_window

    (cut,), _ = cut_features([feature], parse_window(start, end), where="test")
    return cut


def _segment_courses(feature: dict[str, Any]) -> tuple[np.ndarray, list[float]]:
    """Fix times, and GeographicLib's course of each segment at its middle."""
    lat, lon = coords(feature)
    courses = []
    for k in range(lat.size - 1):
        line = GEOD.InverseLine(lat[k], lon[k], lat[k + 1], lon[k + 1])
        courses.append(float(line.Position(line.s13 / 2)["azi2"]) % 360.0)
    return epoch(feature), courses


def test_nelson_turning_for_an_hour_has_every_turn_as_a_manoeuvre() -> None:
    """The trial: NELSON 10:00-11:00 turned almost continuously; every turn is now an event, those in
    the unsteady stretch after the last leg too, each checked against GeographicLib's segment courses."""
    day = "1995-12-12T"
    nelson = _window(rep_track("valid_boat1.rep"), f"{day}10:00:00Z", f"{day}11:00:00Z")
    answer = legs_of(nelson)
    t, courses = _segment_courses(nelson)
    within = [m for m in answer["manoeuvres"] if m["between_legs"] is None]
    assert within and all(m["within"] == "after_last_leg" for m in within)
    assert [m["manoeuvre"] for m in answer["manoeuvres"]] == list(range(1, len(answer["manoeuvres"]) + 1))
    last_leg = answer["legs"][-1]
    for m in within:
        i = int(np.searchsorted(t, parse_iso(m["start"])))  # the first segment on a new course
        j = int(np.searchsorted(t, parse_iso(m["end"])) - 1)  # where the last course change lands
        before = last_leg["course"] if t[i - 1] < parse_iso(last_leg["end"]) else courses[i - 1]
        assert angle_diff(m["course_from"], before) < 0.06 and angle_diff(m["course_to"], courses[j]) < 0.06
        # as sailed: the steps between, summed; a step within course_tolerance the other way counts too
        steps = [((courses[k + 1] - courses[k] + 180) % 360) - 180 for k in range(i - 1, j)]
        if i - 1 < 0 or t[i - 1] < parse_iso(last_leg["end"]):
            steps[0] = ((courses[i] - before + 180) % 360) - 180
        assert m["turn_deg"] == pytest.approx(abs(sum(steps)), abs=0.15)
        assert m["turn"] == ("starboard" if sum(steps) > 0 else "port")
        middles = ((t[i - 1] + t[i]) / 2, (t[j] + t[j + 1]) / 2)
        assert (parse_iso(m["start"]), parse_iso(m["end"])) == middles and m["duration_s"] == middles[1] - middles[0]
        assert m["rate_of_turn"] == pytest.approx(abs(sum(steps)) / ((middles[1] - middles[0]) / 60), abs=0.02)
    # the window cut the first leg at 10:00 and the last turn at 11:00: they say so, and nothing is a
    # manoeuvre at 10:00
    assert answer["legs"][0]["start"] == f"{day}10:00:00Z" and answer["legs"][0]["cut_by_window"] == "start"
    assert all(m["start"] != f"{day}10:00:00Z" for m in answer["manoeuvres"])
    assert answer["unsteady"][-1]["cut_by_window"] == "end" and within[-1]["cut_by_window"] == "end"
    assert all("cut_by_window" not in leg for leg in answer["legs"][1:])


@pytest.mark.parametrize("tolerance", [3.0, 8.0])
def test_every_leg_holds_its_own_course_tolerance(tolerance: float) -> None:
    """The trial saw a 'steady' leg whose two segments differed by 12.5 deg with course_tolerance 8:
    now no segment of a leg is further than course_tolerance from its leg's course (GeographicLib)."""
    for feature in (rep_track("valid_boat1.rep"), rep_track("valid_boat2.rep")):
        answer = legs_of(feature, course_tolerance=tolerance)
        t, courses = _segment_courses(feature)
        for leg in answer["legs"]:
            i, j = (int(np.flatnonzero(t == parse_iso(leg[key]))[0]) for key in ("start", "end"))
            worst = max(angle_diff(courses[k], leg["course"]) for k in range(i, j))
            assert worst <= tolerance + 0.06, (leg, worst)


def test_leg_marks_untimed_are_all_shown_at_once(tmp_path: Path) -> None:
    from debrief_calc.plots.render import render_plot

    day = "1995-12-12T"
    nelson = _window(rep_track("valid_boat1.rep"), f"{day}10:00:00Z", f"{day}10:45:00Z")
    timed = run_ok("track-legs", [nelson], {"mark_legs": True}).features[1:]
    untimed = run_ok("track-legs", [nelson], {"mark_legs": True, "marks_timed": False}).features[1:]
    assert len(timed) == len(untimed) == 4
    assert all("time" not in m["properties"] and "timeEnd" not in m["properties"] for m in untimed)
    assert [m["properties"]["text"] for m in timed] == [m["properties"]["text"] for m in untimed]
    at_1040 = parse_iso(f"{day}10:40:30Z")
    shown_timed = render_plot({"type": "FeatureCollection", "features": [nelson, *timed]}, current_time=at_1040)
    shown_all = render_plot({"type": "FeatureCollection", "features": [nelson, *untimed]}, current_time=at_1040)
    assert len(shown_timed.hidden_inactive) == 4 and shown_all.hidden_inactive == []


def test_legs_on_noisy_one_second_fixes_at_the_defaults() -> None:
    """1 s fixes with half a metre of noise (the benchmark's ships): the course of a 1 s segment swings
    by degrees, so fix to fix no leg is steady; read over 60 s the legs and turns are found."""
    clean = built_track("fast", [(45, 12, 10), (90, -12, 1), (135, 12, 10), (-60, -12, 2), (75, 12, 10)], step_s=1.0)
    rng = np.random.default_rng(11)
    xy = np.array(clean["geometry"]["coordinates"])
    jitter = rng.normal(0.0, 0.5, xy.shape)
    xy[:, 0] += jitter[:, 0] / (111_320.0 * math.cos(math.radians(50.0)))
    xy[:, 1] += jitter[:, 1] / 111_320.0
    noisy = {**clean, "geometry": {"type": "LineString", "coordinates": xy.tolist()}}
    raw = legs_of(noisy, smoothing_s=0)
    assert raw["leg_count"] != 3  # every fix: the noise parts or hides the legs
    answer = legs_of(noisy)
    assert [round(leg["course"]) for leg in answer["legs"]] == [45, 135, 75]
    for leg, (start, end) in zip(answer["legs"], [(0, 600), (660, 1260), (1380, 1980)], strict=True):
        assert parse_iso(leg["start"]) - T0 == pytest.approx(start, abs=60)
        assert parse_iso(leg["end"]) - T0 == pytest.approx(end, abs=60)
        assert leg["speed_kn"] == pytest.approx(12, abs=0.1)
    first, second = answer["manoeuvres"]
    assert (first["turn"], second["turn"]) == ("starboard", "port")
    assert first["turn_deg"] == pytest.approx(90, abs=2) and second["turn_deg"] == pytest.approx(60, abs=2)
    assert first["rate_of_turn"] == pytest.approx(90 / 2, rel=0.35)  # 90 deg in a minute, read over 60 s segments
    assert answer["smoothed"]["fixes_used"] < answer["point_count"] / 50
