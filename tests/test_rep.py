"""Tests for the legacy Debrief REP parser (debrief_calc.formats.rep), against the real sample files."""

from __future__ import annotations

import hashlib
import json
import math
import time
from itertools import pairwise
from pathlib import Path

import pytest

from debrief_calc.formats.rep import MAX_ISSUE_TEXT, LineIssue, RepResult, parse_rep

DATA = Path(__file__).resolve().parent / "data"
REP = DATA / "rep"


def read(name: str) -> str:
    # newline="" keeps the files' CRLF line endings, as a caller reading bytes would see them
    with (REP / name).open(encoding="utf-8", newline="") as handle:
        return handle.read()


def dms(deg: str, minutes: str, seconds: str, hem: str) -> float:
    value = float(deg) + float(minutes) / 60 + float(seconds) / 3600
    return -value if hem in "SW" else value


def tracks(result: RepResult) -> list[dict]:
    return [f for f in result.features if f["properties"]["dataType"] == "track"]


def annotations(result: RepResult) -> list[dict]:
    return [f for f in result.features if f["properties"]["dataType"] == "annotation"]


def text_hash(text: str) -> str:
    """What the ids of REP text given with no source name are scoped by: a hash of its lines."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").removesuffix("\n")
    return hashlib.sha256(lines.encode()).hexdigest()[:8]


def only_track(result: RepResult) -> dict:
    found = tracks(result)
    assert len(found) == 1, [f["id"] for f in found]
    return found[0]


FIX = "951212 050000.000 NELSON   @C   22 11 10.63 N 21 41 52.37 W 269.7   2.0      0"


# --------------------------------------------------------------------------------------------
# the real valid files
# --------------------------------------------------------------------------------------------


def test_boat1_is_one_nelson_track_of_402_fixes() -> None:
    text = read("valid_boat1.rep")
    result = parse_rep(text, source_name="valid_boat1.rep")

    assert result.errors == []
    assert result.skipped == []
    assert result.fix_count == 402
    assert result.line_count == 402
    assert result.narrative_count == 0
    track = only_track(result)
    assert track["type"] == "Feature"
    assert track["id"] == "rep-nelson"
    props = track["properties"]
    assert props["name"] == "NELSON"
    assert props["kind"] == "track"
    assert props["symbol"] == "@C"
    assert props["source"] == "valid_boat1.rep"
    assert track["geometry"]["type"] == "LineString"
    coords = track["geometry"]["coordinates"]
    assert len(coords) == 402
    for key in ("timestamps", "courses", "speeds", "depths"):
        assert len(props[key]) == 402, key
    assert props["timestamps"][0] == "1995-12-12T05:00:00Z"
    assert props["timestamps"][-1] == "1995-12-12T11:41:00Z"
    assert props["timestamps"] == sorted(props["timestamps"])

    # first position, by hand from the file's own first line
    fields = text.splitlines()[0].split()
    assert fields[:4] == ["951212", "050000.000", "NELSON", "@C"]
    lat = dms(*fields[4:8])
    lon = dms(*fields[8:12])
    assert lat == pytest.approx(22 + 11 / 60 + 10.63 / 3600)
    assert lon == pytest.approx(-(21 + 41 / 60 + 52.37 / 3600))
    assert coords[0] == pytest.approx([lon, lat], abs=1e-12)
    assert props["courses"][0] == 269.7
    assert props["speeds"][0] == 2.0
    assert props["depths"][0] == 0.0

    # the last line too, and every fix lies near the others (no sign or unit slip)
    last = text.splitlines()[-1].split()
    assert coords[-1] == pytest.approx([dms(*last[8:12]), dms(*last[4:8])], abs=1e-12)
    assert all(21.5 < lat < 22.5 and -22.0 < lon < -21.4 for lon, lat in coords)


def test_boat2_is_one_collingwood_track_of_403_fixes() -> None:
    text = read("valid_boat2.rep")
    result = parse_rep(text)

    assert result.errors == []
    assert result.fix_count == 403
    track = only_track(result)
    assert track["id"] == "rep-collingwood"
    props = track["properties"]
    assert props["name"] == "COLLINGWOOD"
    assert props["symbol"] == "@A"
    assert "source" not in props
    assert len(track["geometry"]["coordinates"]) == 403
    assert props["timestamps"][0] == "1995-12-12T05:03:00Z"
    assert props["timestamps"][-1] == "1995-12-12T11:45:00Z"
    first = text.splitlines()[0].split()
    assert track["geometry"]["coordinates"][0] == pytest.approx([dms(*first[8:12]), dms(*first[4:8])], abs=1e-12)
    assert props["speeds"][0] == 3.5


def test_both_boats_in_one_file_give_two_tracks_in_order_of_appearance() -> None:
    result = parse_rep(read("valid_boat1.rep") + read("valid_boat2.rep"))
    assert [t["id"] for t in tracks(result)] == ["rep-nelson", "rep-collingwood"]
    assert result.fix_count == 805
    assert result.errors == []


# the data README says 18: that is `wc -l`, which misses the last line (it has no line break)
NARRATIVE_FIRST = ("1995-12-12T05:00:00Z", "NELSON", "COMEX SERIAL 16D")
NARRATIVE_SECOND = ("1995-12-12T05:01:00.100Z", "NELSON", "INTEND WIDE AREA SEARCH AS PREVIOUS SERIAL")
NARRATIVE_COLLINGWOOD = ("1995-12-12T09:57:00Z", "COLLINGWOOD", "SUSPECTED DETECTION OF RED")
NARRATIVE_LAST = ("1995-12-12T11:41:00Z", "NELSON", "RX CONGRATS ON UWT")


def test_narrative_file_gives_one_comment_per_narrative_line() -> None:
    text = read("valid_narrative.rep")
    expected_count = sum(1 for line in text.splitlines() if line.startswith(";NARRATIVE:"))
    assert expected_count == 19
    result = parse_rep(text, source_name="n.rep")

    assert result.errors == []
    assert result.skipped == []
    assert result.fix_count == 0
    assert result.narrative_count == 19
    assert tracks(result) == []
    notes = annotations(result)
    assert len(notes) == 19
    assert [n["id"] for n in notes] == [f"rep-n-narrative-{i}" for i in range(1, 20)]  # source "n.rep"
    for note in notes:
        props = note["properties"]
        assert note["geometry"] is None  # no fixes in this file to place them by
        assert props["kind"] == "annotation"
        assert props["annotationType"] == "comment"
        assert props["source"] == "n.rep"
    seen = [(n["properties"]["time"], n["properties"]["track"], n["properties"]["text"]) for n in notes]
    assert seen[0] == NARRATIVE_FIRST
    assert seen[1] == NARRATIVE_SECOND
    assert seen[9] == NARRATIVE_COLLINGWOOD
    assert seen[-1] == NARRATIVE_LAST
    # trailing blanks are trimmed ("BRIEFING HINTED THAT TARGET TO SE ")
    assert seen[2][2] == "BRIEFING HINTED THAT TARGET TO SE"
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)


def test_narratives_are_placed_at_the_nearest_fix_of_their_platform() -> None:
    text = read("valid_boat1.rep") + read("valid_boat2.rep") + read("valid_narrative.rep")
    result = parse_rep(text)
    assert result.errors == []
    nelson, collingwood = tracks(result)
    notes = annotations(result)
    assert len(notes) == 19

    def fix_at(track: dict, iso: str) -> list[float]:
        index = track["properties"]["timestamps"].index(iso)
        return track["geometry"]["coordinates"][index]

    first = notes[0]
    assert first["geometry"] == {"type": "Point", "coordinates": fix_at(nelson, "1995-12-12T05:00:00Z")}
    # 05:01:00.100 is nearest the 05:01:00 fix
    assert notes[1]["geometry"]["coordinates"] == fix_at(nelson, "1995-12-12T05:01:00Z")
    assert notes[1]["properties"]["positionTime"] == "1995-12-12T05:01:00Z"
    assert notes[9]["geometry"]["coordinates"] == fix_at(collingwood, "1995-12-12T09:57:00Z")


# --------------------------------------------------------------------------------------------
# the real invalid files
# --------------------------------------------------------------------------------------------


def test_bad_coordinates_file_reports_each_bad_line() -> None:
    result = parse_rep(read("invalid_bad_coordinates.rep"))
    assert result.features == []
    assert result.fix_count == 0
    assert [e.line for e in result.errors] == [2, 3]  # line 1 is a "; ..." comment
    lat_error, lon_error = result.errors
    assert "latitude degrees 91 out of range" in lat_error.reason
    assert lat_error.text.startswith("951212 050300.000 BADSHIP @A 91 53")
    assert "longitude degrees 181 out of range" in lon_error.reason
    assert "latitude" not in lon_error.reason


def test_bad_timestamp_file_names_the_bad_date_and_time() -> None:
    result = parse_rep(read("invalid_bad_timestamp.rep"))
    assert result.features == []
    [error] = result.errors
    assert error.line == 2
    assert "bad date '991399'" in error.reason
    assert "month 13" in error.reason
    assert "bad time '250300.000'" in error.reason
    assert "hour 25" in error.reason


def test_truncated_file_says_the_line_is_short() -> None:
    result = parse_rep(read("invalid_truncated.rep"))
    assert result.features == []
    [error] = result.errors
    assert error.line == 1
    assert "expected at least 14 fields, got 10 (truncated line?)" in error.reason
    assert "longitude incomplete" in error.reason


def test_bad_lines_inside_a_good_file_are_reported_and_the_rest_imported() -> None:
    good = read("valid_boat1.rep").splitlines()
    bad = [
        read("invalid_bad_coordinates.rep").splitlines()[1],
        read("invalid_bad_timestamp.rep").splitlines()[1],
        read("invalid_truncated.rep").splitlines()[0],
    ]
    lines = [*good[:10], bad[0], *good[10:200], bad[1], *good[200:], bad[2]]
    result = parse_rep("\n".join(lines))

    assert result.fix_count == 402
    assert len(only_track(result)["geometry"]["coordinates"]) == 402
    assert [(e.line, e.text) for e in result.errors] == [(11, bad[0]), (202, bad[1]), (405, bad[2])]
    assert "latitude degrees 91" in result.errors[0].reason
    assert "month 13" in result.errors[1].reason
    assert "truncated" in result.errors[2].reason
    # the truncated COLLINGWOOD line did not create a track
    assert [t["properties"]["name"] for t in tracks(result)] == ["NELSON"]


# --------------------------------------------------------------------------------------------
# format variants
# --------------------------------------------------------------------------------------------


def test_quoted_names_may_contain_spaces() -> None:
    text = (
        '951212 050000.000 "HMS  TORBAY" @A 22 11 10.63 N 21 41 52.37 W 269.7 2.0 0\n'
        '951212 050100.000 "HMS  TORBAY" @A 22 11 10.58 N 21 42  2.98 W 269.7 2.0 0 label two\n'
        '951212 050200.000 "SOLO" @B 22 11 10.58 N 21 42  2.98 W 269.7 2.0 0\n'
    )
    result = parse_rep(text)
    assert result.errors == []
    first, solo = tracks(result)
    assert first["properties"]["name"] == "HMS  TORBAY"
    assert first["id"] == "rep-hms-torbay"
    assert first["properties"]["labels"] == [None, "label two"]
    assert len(first["geometry"]["coordinates"]) == 2
    assert solo["properties"]["name"] == "SOLO"


def test_unterminated_quoted_name_is_an_error() -> None:
    result = parse_rep('951212 050000.000 "HMS TORBAY @A 22 11 10.63 N 21 41 52.37 W 269.7 2.0 0')
    [error] = result.errors
    assert "unterminated quoted platform name" in error.reason


def test_careful_path_reads_the_same_values_as_the_fast_path() -> None:
    plain = only_track(parse_rep(FIX))
    quoted = only_track(parse_rep(FIX.replace("NELSON", '"NELSON"')))
    assert quoted["geometry"] == plain["geometry"]
    for key in ("timestamps", "courses", "speeds", "depths"):
        assert quoted["properties"][key] == plain["properties"][key]


def test_four_digit_years_and_the_two_digit_century_rule() -> None:
    text = (
        "20240229 235959.5 A @A 22 11 10.63 N 21 41 52.37 W 0 0 0\n"
        "491231 000000 B @A 22 11 10.63 N 21 41 52.37 W 0 0 0\n"
        "500101 000000 C @A 22 11 10.63 N 21 41 52.37 W 0 0 0\n"
    )
    result = parse_rep(text)
    assert result.errors == []
    times = [t["properties"]["timestamps"] for t in tracks(result)]
    assert times == [["2024-02-29T23:59:59.500Z"], ["2049-12-31T00:00:00Z"], ["1950-01-01T00:00:00Z"]]


def test_decimal_minute_positions() -> None:
    result = parse_rep("951212 050000.000 DM @A 22 11.5 N 021 41.25 W 90 10 5")
    assert result.errors == []
    track = only_track(result)
    assert track["geometry"] == {
        "type": "Point",
        "coordinates": pytest.approx([-(21 + 41.25 / 60), 22 + 11.5 / 60]),
    }


def test_south_and_east_hemispheres_have_the_right_signs() -> None:
    text = (
        "951212 050000 SE @A 33 52 4.2 S 151 12 36.0 E 10 5 0\n951212 050100 SE @A 33 52 4.2 N 151 12 36.0 W 10 5 0\n"
    )
    coords = only_track(parse_rep(text))["geometry"]["coordinates"]
    south_east, north_west = coords
    expected_lat = 33 + 52 / 60 + 4.2 / 3600
    expected_lon = 151 + 12 / 60 + 36 / 3600
    assert south_east == pytest.approx([expected_lon, -expected_lat])
    assert north_west == pytest.approx([-expected_lon, expected_lat])


def test_hemisphere_glued_to_longitude_degrees() -> None:
    result = parse_rep("951212 050000 G @A 22 11 0 N121 41 0 E 10 5 0")
    assert result.errors == []
    assert only_track(result)["geometry"]["coordinates"] == pytest.approx([121 + 41 / 60, 22 + 11 / 60])


def test_layer_attached_or_separate_from_the_symbol() -> None:
    text = (
        "951212 050000 L1 @B[LAYER=Blue Force] 22 11 10 N 21 41 52 W 10 5 0\n"
        "951212 050000 L2 @C [LAYER=Red] 22 11 10 N 21 41 52 W 10 5 0\n"
    )
    result = parse_rep(text)
    assert result.errors == []
    one, two = tracks(result)
    assert (one["properties"]["symbol"], one["properties"]["layer"]) == ("@B", "Blue Force")
    assert (two["properties"]["symbol"], two["properties"]["layer"]) == ("@C", "Red")


def test_tabs_and_runs_of_spaces_separate_fields() -> None:
    result = parse_rep(FIX.replace("   ", "\t").replace(" ", " \t "))
    assert result.errors == []
    assert only_track(result)["geometry"] == only_track(parse_rep(FIX))["geometry"]


def test_depth_nan_or_missing_is_null_and_extra_text_is_a_label() -> None:
    text = (
        "951212 050000 D @A 22 11 10 N 21 41 52 W 10 5 NaN\n"
        "951212 050100 D @A 22 11 10 N 21 41 52 W 10 5\n"
        "951212 050200 D @A 22 11 10 N 21 41 52 W 10 5 -12.5 over  the top\n"
    )
    result = parse_rep(text)
    assert result.errors == []
    props = only_track(result)["properties"]
    assert props["depths"] == [None, None, -12.5]
    assert props["labels"] == [None, None, "over the top"]
    assert json.loads(json.dumps(props))["depths"][0] is None  # JSON null, not NaN


def test_fixes_are_sorted_by_time_with_file_order_kept_for_equal_times() -> None:
    text = (
        "951212 050200 S @A 22 0 0 N 21 0 0 W 0 0 0\n"
        "951212 050000 S @A 22 0 0 N 21 0 0 W 0 0 0\n"
        "951212 050100 S @A 22 0 0 N 21 0 0 W 0 0 0 first\n"
        "951212 050100 S @A 22 0 0 N 21 0 0 W 0 0 0 second\n"
    )
    props = only_track(parse_rep(text))["properties"]
    assert props["timestamps"] == [
        "1995-12-12T05:00:00Z",
        "1995-12-12T05:01:00Z",
        "1995-12-12T05:01:00Z",
        "1995-12-12T05:02:00Z",
    ]
    assert props["labels"] == [None, "first", "second", None]


def test_a_lone_fix_is_a_point_track() -> None:
    track = only_track(parse_rep(FIX))
    assert track["geometry"]["type"] == "Point"
    assert len(track["properties"]["timestamps"]) == 1


def test_ids_are_deterministic_and_unique() -> None:
    text = FIX + "\n" + FIX.replace("NELSON", "nelson") + "\n" + FIX.replace("NELSON", "???")
    first = parse_rep(text)
    assert [t["id"] for t in tracks(first)] == ["rep-nelson", "rep-nelson-2", "rep-track"]
    assert parse_rep(text).features == first.features


def test_ids_of_two_files_never_clash_and_stay_the_same_on_a_reimport() -> None:
    narrative = read("valid_narrative.rep")
    both = read("valid_boat1.rep") + read("valid_boat2.rep") + narrative
    first = parse_rep(narrative, source_name="valid_narrative.rep")
    second = parse_rep(both, source_name="exercise/whole day.REP")
    ids_first = [f["id"] for f in first.features]
    ids_second = [f["id"] for f in second.features]
    assert ids_first[0] == "rep-valid-narrative-narrative-1"
    assert ids_second[:3] == ["rep-nelson", "rep-collingwood", "rep-exercise-whole-day-narrative-1"]
    assert not set(ids_first) & set(ids_second)
    # stable: the same file gives the same ids, however its path is spelt
    assert [f["id"] for f in parse_rep(narrative, source_name="./valid_narrative.rep").features] == ids_first
    # text with no source: a short hash of the text, the same for the same text
    inline = [f["id"] for f in parse_rep(narrative).features]
    assert inline[0] == f"rep-{text_hash(narrative)}-narrative-1" and inline == [
        f["id"] for f in parse_rep(narrative).features
    ]
    other = [f["id"] for f in parse_rep(narrative.replace("COMEX", "COMEX 2")).features]
    assert not set(inline) & set(other)
    # the same platform in two files is the same ship: the same track id
    assert [t["id"] for t in tracks(parse_rep(read("valid_boat1.rep"), source_name="other.rep"))] == ["rep-nelson"]


def test_long_source_paths_give_bounded_distinct_scopes() -> None:
    deep = "a/" * 40 + "boat.rep"
    ids = [f["id"] for f in parse_rep(";TEXT: @A 22 0 0 N 21 0 0 W x", source_name=deep).features]
    other = [f["id"] for f in parse_rep(";TEXT: @A 22 0 0 N 21 0 0 W x", source_name="b/" + deep).features]
    assert len(ids[0]) < 80 and ids != other and ids[0].endswith("-text-1")


# --------------------------------------------------------------------------------------------
# colours: legacy Debrief's ImportReplay colour letters
# --------------------------------------------------------------------------------------------


def test_track_colours_come_from_the_symbol_letter_as_in_legacy_debrief() -> None:
    nelson = only_track(parse_rep(read("valid_boat1.rep")))
    collingwood = only_track(parse_rep(read("valid_boat2.rep")))
    assert nelson["properties"]["symbol"] == "@C" and nelson["properties"]["stroke"] == "#e01c3e"  # RED
    assert collingwood["properties"]["symbol"] == "@A" and collingwood["properties"]["stroke"] == "#0064bd"  # BLUE
    lower = only_track(parse_rep(FIX.replace("@C", "@g")))
    assert lower["properties"]["stroke"] == "#a100e6"  # upper-cased: PURPLE
    unknown = only_track(parse_rep(FIX.replace("@C", "@Z")))
    assert unknown["properties"]["stroke"] == "#ff0000"  # "if label not found, make it RED"
    layered = only_track(parse_rep(FIX.replace("@C", "@B[LAYER=Blue]")))
    assert layered["properties"]["stroke"] == "#00800b" and layered["properties"]["layer"] == "Blue"


def test_labels_and_zones_take_their_symbol_colour() -> None:
    text = "\n".join(
        [
            ";TEXT: @D 22 11 10.63 S 21 41 52.37 E  Mid point",
            ";CIRCLE: @H 21.8 0 0 N 21.0 0 0 W 2000 test circle",
            ";RECT: @J 49.7303 0 0 N 4.16989 0 0 E 49.6405 0 0 N 4.39945 0 0 E box",
        ]
    )
    label, circle, rect = parse_rep(text).features
    assert label["properties"]["marker_color"] == label["properties"]["color"] == "#ffd700"  # YELLOW
    assert circle["properties"]["stroke"] == circle["properties"]["fill"] == "#00ffff"  # CYAN
    assert rect["properties"]["stroke"] == rect["properties"]["fill"] == "#58ff00"  # LIGHT_GREEN
    narrative = parse_rep(read("valid_narrative.rep")).features[0]
    assert not {"stroke", "fill", "marker_color", "color"} & set(narrative["properties"])


# --------------------------------------------------------------------------------------------
# precise reasons
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (FIX.replace("22 11 10.63 N", "22 75 10.63 N"), "latitude minutes 75 out of range"),
        (FIX.replace("22 11 10.63 N", "22 11 60.5 N"), "latitude seconds 60.5 out of range"),
        (FIX.replace("21 41 52.37 W", "180 30 0 W"), "longitude 180 30 0 W is beyond 180"),
        (FIX.replace("22 11 10.63 N", "22 11 10.63 X"), "expected latitude hemisphere N or S"),
        (FIX.replace("21 41 52.37 W", "21 4x 52.37 W"), "bad longitude minutes '4x'"),
        (FIX.replace("951212", "951332"), "bad date '951332': month 13"),
        (FIX.replace("951212", "950229"), "day 29 out of range 1–28"),
        (FIX.replace("951212", "9512"), "bad date '9512'"),
        (FIX.replace("050000.000", "056000.000"), "minutes 60 out of range"),
        (FIX.replace("050000.000", "05h000"), "bad time '05h000'"),
        (FIX.replace("269.7", "north"), "bad course 'north'"),
        (FIX.replace("2.0", "fast"), "bad speed 'fast'"),
        (FIX.replace("   0", "   deep"), "bad depth 'deep'"),
        (FIX.replace("@C", "22"), "expected a symbol"),
        ("hello world", "not a fix or annotation line"),
        ("951212 050000.000 NELSON", "expected at least 14 fields, got 3 (truncated line?): symbol missing"),
        ("951212 050000 X @A 22 11.5 N 21 41.25 W 10", "expected at least 12 fields, got 11"),
    ],
)
def test_each_bad_fix_line_gets_a_reason_naming_the_problem(line: str, reason: str) -> None:
    result = parse_rep(FIX + "\n" + line + "\n" + FIX.replace("050000", "050100"))
    assert result.fix_count == 2
    [error] = result.errors
    assert error == LineIssue(2, line, error.reason)
    assert reason in error.reason


def test_every_problem_of_a_line_is_named() -> None:
    line = "951332 050000 X @A 91 11 10 N 21 61 0 W 10 5 0"
    [error] = parse_rep(line).errors
    assert "month 13" in error.reason
    assert "latitude degrees 91" in error.reason
    assert "longitude minutes 61" in error.reason


def test_issue_text_is_capped() -> None:
    line = "951212 050000 X @A 91 0 0 N 0 0 0 E 0 0 0 " + "x" * 500
    [error] = parse_rep(line).errors
    assert error.text == line[:MAX_ISSUE_TEXT]
    assert len(error.text) == MAX_ISSUE_TEXT


# --------------------------------------------------------------------------------------------
# comments, annotations, skipped lines
# --------------------------------------------------------------------------------------------


def test_comments_and_blank_lines_are_ignored() -> None:
    text = ";; a comment\n\n   \n; Invalid coordinate values\n;;NARRATIVE: not really\n" + FIX + "\n"
    result = parse_rep(text)
    assert result.errors == []
    assert result.skipped == []
    assert result.fix_count == 1
    assert result.line_count == 6


def test_only_what_legacy_debrief_does_not_read_is_skipped_each_with_its_reason() -> None:
    text = "\n".join(
        [
            FIX,
            ";FOO: anything at all",
            ";SENSOR: 951212 050000 NELSON @A NULL 0 0 sonar",
            ";LINE: @A 22 0 0 N 21 0 0 W 22 1 0 N 21 1 0 W",
            ";TRACKSPLIT",
            ";POLY: @A 22 0 0 N 21 0 0 W 22 1 0 N 21 1 0 W",
            ";TA_FORE_AFT: 951212 050000 NELSON 12 3",
            ";ELLIPSE2: @A whatever",
        ]
    )
    result = parse_rep(text)
    assert result.errors == []
    assert [(s.line, s.reason) for s in result.skipped] == [
        (2, "not imported: FOO (not a line type legacy Debrief reads)"),
        (
            5,
            "not imported: TRACKSPLIT (an instruction of legacy Debrief's track editor, not data its REP importer reads)",
        ),
        (7, "not imported: TA_FORE_AFT (towed-array data read by a legacy Debrief plug-in, not by its REP importer)"),
        (8, "not imported: ELLIPSE2 (legacy Debrief's REP importer has this reader switched off)"),
    ]
    assert result.skipped[0].text == ";FOO: anything at all"
    assert len(result.cuts) == 1 and result.cuts[0].sensor == "sonar"  # a cut, waiting for its host
    kinds = [(f["geometry"]["type"], f["properties"]["specifics"]["shapeType"]) for f in result.features[1:]]
    assert kinds == [("LineString", "line"), ("LineString", "polygon")]  # a 2-point POLY is drawn as a line


def test_narrative2_has_a_type_and_quoted_track() -> None:
    text = ';NARRATIVE2:\t020421\t121857\t"HMS TORBAY" \tGenComment\tMk Rge BAAA R121212'
    result = parse_rep(text)
    assert result.errors == []
    [note] = result.features
    assert note["properties"]["track"] == "HMS TORBAY"
    assert note["properties"]["narrativeType"] == "GenComment"
    assert note["properties"]["text"] == "Mk Rge BAAA R121212"
    assert note["properties"]["time"] == "2002-04-21T12:18:57Z"
    assert result.narrative_count == 1


def test_bad_narrative_is_an_error_naming_its_type() -> None:
    result = parse_rep(";NARRATIVE: 951299 050000 NELSON text\n;NARRATIVE: 951212\n")
    assert [e.line for e in result.errors] == [1, 2]
    assert result.errors[0].reason.startswith("NARRATIVE: bad date '951299'")
    assert "expected date, time, track name and text" in result.errors[1].reason
    assert result.features == []


def test_text_label_is_a_point_annotation() -> None:
    result = parse_rep(";TEXT: @A 22 11 10.63 S 21 41 52.37 E  Mid  point")
    assert result.errors == []
    [label] = result.features
    assert label["id"] == f"rep-{text_hash(';TEXT: @A 22 11 10.63 S 21 41 52.37 E  Mid  point')}-text-1"
    assert label["geometry"]["type"] == "Point"
    assert label["geometry"]["coordinates"] == pytest.approx(
        [21 + 41 / 60 + 52.37 / 3600, -(22 + 11 / 60 + 10.63 / 3600)]
    )
    assert label["properties"]["annotationType"] == "label"
    assert label["properties"]["text"] == "Mid point"


def ring_is_closed_and_counter_clockwise(ring: list[list[float]]) -> bool:
    area2 = sum(a[0] * b[1] - b[0] * a[1] for a, b in pairwise(ring))
    return ring[0] == ring[-1] and area2 > 0


def test_circle_rect_and_poly_become_zones() -> None:
    text = "\n".join(
        [
            ";CIRCLE: @D 21.8 0 0 N 21.0 0 0 W 2000 test circle",
            ";RECT: @J 49.7303 0 0 N 4.16989 0 0 E 49.6405 0 0 N 4.39945 0 0 E box",
            ";POLY: @J 120505 120505 120505 130505 49 0 0 N 4 0 0 E 49 0 0 N 5 0 0 E 50 0 0 N 5 0 0 E tri",
        ]
    )
    result = parse_rep(text)
    assert result.errors == []
    circle, rect, poly = result.features
    scope = text_hash(text)
    assert [f["id"] for f in result.features] == [f"rep-{scope}-circle-1", f"rep-{scope}-rect-1", f"rep-{scope}-poly-1"]
    for zone in result.features:
        assert zone["properties"]["kind"] == "zone"
        assert zone["geometry"]["type"] == "Polygon"
        assert ring_is_closed_and_counter_clockwise(zone["geometry"]["coordinates"][0])

    specifics = circle["properties"]["specifics"]
    assert specifics["shapeType"] == "circle"
    assert specifics["origin"] == [-21.0, 21.8]
    assert specifics["radiusM"] == pytest.approx(2000 * 0.9144)  # legacy radius is in yards
    north = max(p[1] for p in circle["geometry"]["coordinates"][0])
    assert (north - 21.8) * 60 * 1852 == pytest.approx(1828.8, rel=0.01)  # 1' of latitude ≈ 1 nm
    assert circle["properties"]["name"] == "test circle"

    assert rect["properties"]["specifics"] == {
        "shapeType": "rectangle",
        "topLeft": [4.16989, 49.7303],
        "bottomRight": [4.39945, 49.6405],
    }
    assert sorted(map(tuple, rect["geometry"]["coordinates"][0][:4])) == [
        (4.16989, 49.6405),
        (4.16989, 49.7303),
        (4.39945, 49.6405),
        (4.39945, 49.7303),
    ]

    assert poly["properties"]["specifics"] == {"shapeType": "polygon"}
    assert poly["properties"]["time"] == "2012-05-05T12:05:05Z"
    assert poly["properties"]["timeEnd"] == "2012-05-05T13:05:05Z"
    assert poly["properties"]["text"] == "tri"
    assert len(poly["geometry"]["coordinates"][0]) == 4


def test_bad_zone_is_an_error() -> None:
    result = parse_rep(";CIRCLE: @D 21.8 0 0 N 21.0 75 0 W 2000 x\n;CIRCLE: @D 21.8 0 0 N 21.0 0 0 W\n")
    assert [e.line for e in result.errors] == [1, 2]
    assert result.errors[0].reason == "CIRCLE: longitude minutes 75 out of range [0, 60]"
    assert result.errors[1].reason == "CIRCLE: radius missing"


# --------------------------------------------------------------------------------------------
# text encodings and edges
# --------------------------------------------------------------------------------------------


def test_crlf_lf_and_cr_line_endings_read_the_same() -> None:
    text = read("valid_boat1.rep")
    assert "\r\n" in text
    lf = text.replace("\r\n", "\n")
    cr = lf.replace("\n", "\r")
    results = [parse_rep(t) for t in (text, lf, cr)]
    assert all(r.features == results[0].features for r in results)
    assert [r.line_count for r in results] == [402, 402, 402]
    narrative = read("valid_narrative.rep")
    ids = {tuple(f["id"] for f in parse_rep(t).features) for t in (narrative, narrative.replace("\r\n", "\n"))}
    assert len(ids) == 1  # inline text ids hash the lines, not the line endings


def test_utf8_bom_is_ignored() -> None:
    raw = ("\ufeff" + FIX + "\n").encode("utf-8")
    result = parse_rep(raw.decode("utf-8"))
    assert result.errors == []
    assert result.fix_count == 1
    bom_narrative = parse_rep("\ufeff;NARRATIVE: 951212 050000 NELSON hello")
    assert bom_narrative.narrative_count == 1


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "\ufeff"])
def test_empty_text_gives_nothing(text: str) -> None:
    result = parse_rep(text)
    assert result.features == []
    assert result.errors == []
    assert result.skipped == []
    assert result.fix_count == 0
    assert result.narrative_count == 0


def test_features_are_json_serialisable_without_nan() -> None:
    text = read("valid_boat1.rep") + read("valid_narrative.rep")
    encoded = json.dumps(parse_rep(text).features, allow_nan=False)
    assert "rep-nelson" in encoded


def test_100k_lines_parse_quickly() -> None:
    one = read("valid_boat1.rep") + read("valid_boat2.rep")
    text = one * 125  # 100,625 fix lines
    # CPU time, best of up to three runs, so a busy machine does not fail the test
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        result = parse_rep(text)
        best = min(best, time.process_time() - started)
        if best < 1.5:
            break
    assert result.fix_count == 100_625
    assert result.errors == []
    assert best < 1.5, f"{best:.2f} s of CPU for 100,625 lines"
    # equal times from the repeats keep file order, so each time appears 125 times in a row
    stamps = tracks(result)[0]["properties"]["timestamps"]
    assert stamps[:125] == ["1995-12-12T05:00:00Z"] * 125
    assert not math.isnan(tracks(result)[0]["geometry"]["coordinates"][-1][0])
