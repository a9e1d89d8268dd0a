"""``examples/batch_analyse.py`` on the real REP samples: every file imported or reported, a plot
and a picture per file with tracks, and figures that match GeographicLib on the raw fixes."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from mcp import Client

from debrief_calc.state.server import build_server
from llmem.core.config import ServerConfig
from tests.conftest import DATA, ROOT, call
from tests.test_analyst_workflow import closest_approach_by_sampling, mean_and_max_speed_kn, read_rep_fixes

pytestmark = pytest.mark.anyio

SCRIPT = ROOT / "examples" / "batch_analyse.py"
YARDS_PER_METRE = 1 / 0.9144
METRES_PER_NM = 1852.0


def seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run_example(folder: Path, summary: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), "--json", str(summary)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_the_batch_example_analyses_every_rep_file_of_a_folder(workspace: Path, tmp_path: Path) -> None:
    for rep in (DATA / "rep").glob("*.rep"):
        shutil.copy(rep, workspace / rep.name)
    done = run_example(workspace, tmp_path / "summary.json")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())

    # every file is accounted for: analysed, or reported with the reason
    assert sorted(summary["skipped"]) == [
        "invalid_bad_coordinates.rep",
        "invalid_bad_timestamp.rep",
        "invalid_truncated.rep",
        "valid_narrative.rep",
    ]
    assert "could not be read" in " ".join(summary["skipped"]["invalid_truncated.rep"])
    assert summary["plots"] == {"valid_boat1.plot.json": "valid_boat1.png", "valid_boat2.plot.json": "valid_boat2.png"}
    for png in summary["plots"].values():
        assert (workspace / png).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    for line in ("plot valid_boat1.plot.json", "NELSON:", "COLLINGWOOD:", "CPA NELSON / COLLINGWOOD:"):
        assert line in done.stdout

    # the figures, against an independent reading of the files and GeographicLib
    fixes = {}
    for name, file in (("NELSON", "valid_boat1.rep"), ("COLLINGWOOD", "valid_boat2.rep")):
        platform, fixes[name] = read_rep_fixes(DATA / "rep" / file)
        assert platform == name
        track = summary["tracks"][name]
        assert seconds(track["start"]) == fixes[name][0][0] and seconds(track["end"]) == fixes[name][-1][0]
        mean_kn, _fastest = mean_and_max_speed_kn(fixes[name])
        assert track["mean_speed_kn"] == pytest.approx(mean_kn, abs=0.01)
        duration_h = (fixes[name][-1][0] - fixes[name][0][0]) / 3600
        assert track["distance_nm"] == pytest.approx(mean_kn * duration_h, abs=0.01)
        legs = track["legs"]
        assert legs and all(seconds(a["end"]) <= seconds(b["start"]) for a, b in itertools.pairwise(legs))
        assert seconds(legs[0]["start"]) >= fixes[name][0][0] and seconds(legs[-1]["end"]) <= fixes[name][-1][0]
    metres, when = closest_approach_by_sampling(fixes["NELSON"], fixes["COLLINGWOOD"])
    [cpa] = summary["cpa"]
    assert cpa["between"] == ["NELSON", "COLLINGWOOD"]
    assert cpa["range_yd"] == pytest.approx(metres * YARDS_PER_METRE, abs=0.5)  # sampled each second
    assert abs(seconds(cpa["time"]) - when) <= 1.0

    # what the script made is what a server on the same folder sees
    async with Client(build_server(ServerConfig("debrief-state-mcp", workspace)), mode="legacy") as state:
        failed, content = await call(state, "debrief_get_features", filename="valid_boat1.plot.json", kinds=["track"])
        assert not failed and [f["name"] for f in content["features"]] == ["NELSON"]

    # run again on the same folder: the plots are there already and the figures are the same
    again = run_example(workspace, tmp_path / "again.json")
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again.json").read_text()) == summary
