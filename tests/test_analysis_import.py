"""``import-rep``: REP text or a workspace file → tracks, annotations, zones, a command and a
per-line report in which every line that was not imported appears."""

from __future__ import annotations

import re

import pytest

from debrief_calc.analysis import default_registry
from llmem.core.errors import PathOutsideWorkspace
from tests.test_analysis_support import DATA, props, rep_text, run_err, run_ok

FIX = "951212 050000.000 NELSON   @C   22 11 10.63 N 21 41 52.37 W 269.7   2.0      0"
_TYPED = re.compile(r";[A-Za-z][A-Za-z0-9_]*:")


def test_boat1_from_text() -> None:
    result = run_ok("import-rep", params={"text": rep_text("valid_boat1.rep")})
    (track,) = result.features
    assert track["id"] == "rep-nelson" and track["properties"]["kind"] == "track"
    assert len(track["geometry"]["coordinates"]) == len(track["properties"]["timestamps"]) == 402
    assert result.report == {
        "source": "inline text",
        "line_count": 402,
        "fix_count": 402,
        "narrative_count": 0,
        "cut_count": 0,
        "track_count": 1,
        "sensor_count": 0,
        "solution_count": 0,
        "feature_count": 1,
        "errors": [],
        "skipped": [],
        "directives": [],
        "blank_or_comment_lines": 0,
    }
    (command,) = result.commands
    assert command["command"] == "addFeatures"
    assert command["payload"]["features"] == result.features  # carrying the stamped results
    assert track["properties"]["provenance"]["sources"] == [{"id": "inline text", "kind": "rep-text"}]
    assert result.to_dict()["report"]["fix_count"] == 402


def test_import_from_a_workspace_path() -> None:
    files = {"exercise/boat2.rep": rep_text("valid_boat2.rep")}
    asked: list[str] = []

    def read_text(path: str) -> str:
        asked.append(path)
        return files[path]

    result = run_ok("import-rep", params={"path": "exercise/boat2.rep"}, read_text=read_text)
    assert asked == ["exercise/boat2.rep"]
    (track,) = result.features
    assert track["properties"]["name"] == "COLLINGWOOD" and len(track["properties"]["timestamps"]) == 403
    assert track["properties"]["source"] == "exercise/boat2.rep"
    assert result.report is not None and result.report["source"] == "exercise/boat2.rep"
    assert track["properties"]["provenance"]["sources"] == [{"id": "exercise/boat2.rep", "kind": "rep-file"}]
    assert track["properties"]["provenance"]["parameters"] == {
        "path": "exercise/boat2.rep",
        "paths": None,
        "text": None,
        "host": None,
    }


@pytest.mark.parametrize(
    ("params", "rule"),
    [
        ({}, "exactly-one-of"),
        ({"path": "a.rep", "text": FIX}, "exactly-one-of"),
        ({"path": "notes.txt"}, "suffix"),
    ],
)
def test_path_or_text_exactly_one(params: dict[str, str], rule: str) -> None:
    error = run_err("import-rep", params=params, read_text=lambda p: FIX)
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["rule"] == rule and error["details"]["field"] == "path"


def test_path_reading_failures() -> None:
    error = run_err("import-rep", params={"path": "a.rep"})
    assert (error["code"], error["details"]["rule"]) == ("VALIDATION_FAILED", "unavailable")

    def missing(path: str) -> str:
        raise FileNotFoundError(2, "No such file", "/srv/workspace/" + path)

    error = run_err("import-rep", params={"path": "gone.rep"}, read_text=missing)
    assert (error["code"], error["details"]["rule"]) == ("VALIDATION_FAILED", "exists")
    assert "gone.rep" in error["message"] and "/srv" not in error["message"]

    def outside(path: str) -> str:
        raise PathOutsideWorkspace(f"{path} is outside the workspace", details={"path": path})

    error = run_err("import-rep", params={"path": "../../etc/x.rep"}, read_text=outside)
    assert error["code"] == "PATH_OUTSIDE_WORKSPACE"

    def binary(path: str) -> str:
        return b"\xff\xfe".decode("utf-8")

    error = run_err("import-rep", params={"path": "bin.rep"}, read_text=binary)
    assert (error["code"], error["details"]["rule"]) == ("VALIDATION_FAILED", "text")


@pytest.mark.parametrize(
    "name",
    [
        "invalid_bad_coordinates.rep",
        "invalid_bad_timestamp.rep",
        "invalid_truncated.rep",
        "valid_narrative.rep",
        "valid_boat1.rep",
    ],
)
def test_every_line_is_imported_or_reported(name: str) -> None:
    text = rep_text(name)
    result = run_ok("import-rep", params={"text": text})
    report = result.report
    assert report is not None
    lines = text.splitlines()
    comments = [i for i, line in enumerate(lines, 1) if line.strip().startswith(";") and not _TYPED.match(line.strip())]
    blank = [i for i, line in enumerate(lines, 1) if not line.strip()]
    reported = {e["line"] for e in report["errors"]} | {s["line"] for s in report["skipped"]}
    accounted = report["fix_count"] + report["narrative_count"] + len(reported) + len(comments) + len(blank)
    assert accounted == report["line_count"] == len(lines)
    for issue in report["errors"] + report["skipped"]:
        assert issue["reason"] and 1 <= issue["line"] <= len(lines)


def test_invalid_files_name_their_bad_lines() -> None:
    report = run_ok("import-rep", params={"text": rep_text("invalid_bad_coordinates.rep")}).report
    assert report is not None and [e["line"] for e in report["errors"]] == [2, 3]
    result = run_ok("import-rep", params={"text": rep_text("invalid_truncated.rep")})
    assert result.features == [] and result.commands == []
    assert result.report is not None and result.report["errors"][0]["line"] == 1
    assert any("could not be read" in w for w in result.warnings)
    assert any("nothing to import" in w for w in result.warnings)


def test_narratives_become_annotations_and_shapes_zones() -> None:
    text = rep_text("valid_narrative.rep")
    narratives = sum(1 for line in text.splitlines() if line.startswith(";NARRATIVE:"))
    assert narratives == 19  # the data README says 18: the last line has no newline for wc -l
    result = run_ok("import-rep", params={"text": text})
    assert result.report is not None and result.report["narrative_count"] == narratives
    assert len(result.features) == narratives
    assert {f["properties"]["kind"] for f in result.features} == {"annotation"}
    text = "\n".join(
        [
            FIX,
            ";CIRCLE: @C 22 11 10.63 N 21 41 52.37 W 2000 exercise circle",
            ";SENSOR: 951212 050000.000 NELSON @A NULL 270.0 NULL sonar",
            "; a free comment",
            ";FOO: not a line type legacy Debrief reads",
        ]
    )
    result = run_ok("import-rep", params={"text": text})
    kinds = [f["properties"]["kind"] for f in result.features]
    assert kinds == ["track", "sensor", "zone"]  # the cut hangs off NELSON, the track of the same text
    assert result.report is not None and [s["line"] for s in result.report["skipped"]] == [5]
    assert "FOO" in result.report["skipped"][0]["reason"] and "legacy Debrief" in result.report["skipped"][0]["reason"]
    (command,) = result.commands
    assert [f["id"] for f in command["payload"]["features"]] == [f["id"] for f in result.features]
    zone = result.features[2]
    assert run_ok("area-summary", [zone]).success  # the imported zone is usable as a region


def test_import_rep_is_declared_with_its_output_kinds() -> None:
    spec = default_registry().get("import-rep")
    assert "report" in spec.description and spec.output_kinds == ("track", "annotation", "zone", "sensor")
    assert props(run_ok("import-rep", params={"text": FIX}))["kind"] == "track"
    assert (DATA / "rep" / "valid_narrative.rep").is_file()


def test_two_files_with_narratives_import_with_distinct_stable_ids() -> None:
    files = {"day1.rep": rep_text("valid_narrative.rep"), "day2/narrative.rep": rep_text("valid_narrative.rep")}
    ids = {}
    for path in files:
        result = run_ok("import-rep", params={"path": path}, read_text=files.__getitem__)
        ids[path] = [f["id"] for f in result.features]
        again = run_ok("import-rep", params={"path": path}, read_text=files.__getitem__)
        assert [f["id"] for f in again.features] == ids[path]  # a re-import gives the same ids
    assert ids["day1.rep"][0] == "rep-day1-narrative-1"
    assert ids["day2/narrative.rep"][0] == "rep-day2-narrative-narrative-1"
    assert not set(ids["day1.rep"]) & set(ids["day2/narrative.rep"])


def test_a_speed_column_that_disagrees_with_the_positions_is_one_warning_per_track() -> None:
    nelson = run_ok("import-rep", params={"text": rep_text("valid_boat1.rep")})
    (warning,) = nelson.warnings
    # the course column too (the trial: 022.8 deg at 10:45 where the tote says 029.8): median and most, as
    # GeographicLib's course between fixes has them (tests/test_trial22_fixes.py)
    assert warning == (
        "NELSON: the speed column (2.0 kn throughout) and the course column do not match the positions (median "
        "10.8 kn; courses between fixes a median 6.8° away, at most 8.9°): analyses use positions and times, so "
        "the tote's course is the course between fixes, not the column's"
    )
    both = run_ok("import-rep", params={"text": rep_text("valid_boat1.rep") + rep_text("valid_boat2.rep")})
    assert [w.split(":")[0] for w in both.warnings] == ["NELSON", "COLLINGWOOD"]
    assert "(3.5 kn throughout)" in both.warnings[1] and "median 5.3 kn" in both.warnings[1]
    # the analyses agree with the positions, not the column
    stats = props(run_ok("track-stats", [nelson.features[0]]))["statistics"]
    assert 9.5 < stats["mean_speed_kn"] < 11.5


def test_a_course_column_that_disagrees_is_named_and_an_honest_file_is_not() -> None:
    lines = [line.split() for line in rep_text("valid_boat1.rep").splitlines()]
    wrong_course = "\n".join(" ".join([*f[:12], "90.0", *f[13:]]) for f in lines)
    (warning,) = run_ok("import-rep", params={"text": wrong_course}).warnings
    assert warning.startswith("NELSON: the speed column (2.0 kn throughout) and the course column do not match")
    assert "courses between fixes a median" in warning and warning.endswith("not the column's")
    track = run_ok("import-rep", params={"text": rep_text("valid_boat1.rep")}).features[0]
    stats = props(run_ok("track-stats", [track], {"include_segments": True}))["statistics"]
    honest = "\n".join(
        " ".join([*f[:12], f"{seg['course']:.1f}", f"{seg['speed_kn']:.1f}", *f[14:]])
        for f, seg in zip(lines, [*stats["segments"], stats["segments"][-1]], strict=True)
    )
    assert run_ok("import-rep", params={"text": honest}).warnings == []


def test_the_report_accounts_for_every_line_and_shows_the_bad_ones() -> None:
    from debrief_calc.analysis import default_registry as registry
    from debrief_calc.analysis.executor import run

    text = (DATA / "rep" / "invalid_bad_timestamp.rep").read_text(encoding="utf-8")
    report = run(registry(), "import-rep", [], {"text": text}).report
    assert report is not None and report["line_count"] == 2 and report["blank_or_comment_lines"] == 1
    assert report["errors"][0]["line"] == 2 and report["errors"][0]["text"].startswith("991399 250300.000 BADSHIP")
    assert "month 13" in report["errors"][0]["reason"] and "hour 25" in report["errors"][0]["reason"]
