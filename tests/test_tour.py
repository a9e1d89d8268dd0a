"""The tour (examples/tour.py) end to end over real stdio, and the workspace it generates.

The tour runs as a user runs it, in a subprocess; its transcript must show every step and its
PNG must be on disk. The workspace generator is checked on its own: the plot loads as the
servers load it, the REP file parses without a bad line, and the closest approach of the two
close ships is what ``make_workspace`` says it is, computed independently with GeographicLib.
"""

from __future__ import annotations

import bisect
import importlib.util
import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.features import feature_kind, track_data
from debrief_calc.rep import parse_rep
from debrief_calc.state.plotfile import load_plot
from tests.conftest import ROOT, subprocess_env

EXAMPLES = ROOT / "examples"
STEPS = ["── setup", "── start", "── (a) llmem", "── (b) debrief-calc import-rep", "── (c) analysis", "── (d) delete"]
STEPS += ["── (e) render", "── (f) a narrated summary", "Tour complete"]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mw() -> ModuleType:
    return _load("make_workspace")


@pytest.fixture(scope="module")
def made(mw: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    made: dict[str, Any] = mw.make_workspace(tmp_path_factory.mktemp("ws") / "my workspace")
    return made


# -- the tour --------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_tour_runs_every_step_and_saves_the_png(tmp_path: Path) -> None:
    keep = tmp_path / "kept"
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "tour.py"), "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(),
        cwd=tmp_path,
    )
    transcript = out.stdout
    assert out.returncode == 0, transcript + out.stderr
    positions = [transcript.find(marker) for marker in STEPS]
    assert -1 not in positions, [m for m, p in zip(STEPS, positions, strict=True) if p == -1]
    assert positions == sorted(positions)  # in order
    assert "DETERMINISTIC STAND-IN" in transcript
    assert "STAND-IN LLM (malformed on purpose" in transcript and "refused, RESULT_INVALID" in transcript
    assert "(same ticket) → stored at step 2" in transcript
    assert "console scripts next to this Python instead" in transcript  # it says how it launched them
    assert re.search(r"addFeatures command by reference debrief-calc:runs/", transcript)
    assert "closest-approach CPA ARGONAUT / BLUE HERON: 0.2268 nm (420.0 m) at 10:42:30Z" in transcript
    assert re.search(r"zone-transits BLUE HERON in EXAREA KILO: entry 11:06:1\dZ, exit 11:29:[45]\dZ", transcript)
    assert "deleted ['p-buoy']" in transcript
    # every tool call line carries its timing
    calls = [line for line in transcript.splitlines() if re.match(r"\[\s*[\d.]+ ms\] (llmem|debrief)", line)]
    assert len(calls) >= 20
    png = Path(re.search(r"PNG saved: (.+)$", transcript, re.M).group(1))  # type: ignore[union-attr]
    assert png.is_file() and " " in str(png) and png.is_relative_to(keep)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the servers' logs stay out of the transcript
    assert '"tool call"' not in transcript and "INFO" not in transcript


def test_the_tour_exits_non_zero_when_a_step_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tour = _load("tour")
    tour.CONFIG = tmp_path / "missing config.json"
    assert tour.main(["--keep", str(tmp_path)]) == 1
    assert "TOUR FAILED: ConfigError: cannot read the config" in capsys.readouterr().out


# -- the workspace ---------------------------------------------------------------------------


def test_the_plot_loads_as_the_servers_load_it(made: dict[str, Any]) -> None:
    doc = load_plot(made["plot_file"])
    kinds = {str(f["id"]): feature_kind(f) for f in doc.data["features"]}
    assert kinds["t-argonaut"] == kinds["t-blue-heron"] == "track"
    assert kinds["z-kilo"] == "zone"
    assert [kinds[p] for p in made["reference_points"]] == ["point"] * 3
    assert {"debrief-time-metadata", "debrief-viewport-metadata"} <= set(kinds)
    features = {str(f["id"]): f for f in doc.data["features"]}
    for fid in ("t-argonaut", "t-blue-heron"):
        props = features[fid]["properties"]
        assert props["dataType"] == "track" and props["name"] and props["stroke"].startswith("#")
        assert len(props["timestamps"]) == len(features[fid]["geometry"]["coordinates"]) == 241
    zone = features["z-kilo"]
    assert zone["geometry"]["type"] == "Polygon" and zone["properties"]["specifics"]["shapeType"] == "circle"
    time_meta = features["debrief-time-metadata"]["properties"]
    assert time_meta["start"] <= time_meta["current"] <= time_meta["end"]
    assert time_meta["current"] == made["cpa"]["time"]


def test_the_ships_move_at_realistic_speeds(made: dict[str, Any]) -> None:
    doc = load_plot(made["plot_file"])
    for feature in doc.data["features"]:
        if feature["id"] in ("t-argonaut", "t-blue-heron"):
            track = track_data(feature)
            legs = [
                Geodesic.WGS84.Inverse(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])["s12"]
                / (track.t[i + 1] - track.t[i])
                * 3600
                / 1852
                for i in range(len(track.t) - 1)
            ]
            assert min(legs) >= 8.0 and max(legs) <= 20.0, feature["id"]
            assert set(track.t[1:] - track.t[:-1]) == {60.0}  # one fix a minute


def _series(feature: dict[str, Any]) -> tuple[list[float], list[list[float]]]:
    times = [datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() for t in feature["properties"]["timestamps"]]
    return times, feature["geometry"]["coordinates"]


def _at(series: tuple[list[float], list[list[float]]], t: float) -> tuple[float, float]:
    times, coords = series
    i = min(bisect.bisect_right(times, t) - 1, len(times) - 2)
    f = (t - times[i]) / (times[i + 1] - times[i])
    (x0, y0), (x1, y1) = coords[i], coords[i + 1]
    return x0 + f * (x1 - x0), y0 + f * (y1 - y0)


def test_the_cpa_is_what_make_workspace_says(made: dict[str, Any]) -> None:
    plot = json.loads(made["plot_file"].read_text(encoding="utf-8"))
    by_id = {f["id"]: f for f in plot["features"]}
    a, b = (_series(by_id[i]) for i in made["cpa"]["ships"])
    start, end = max(a[0][0], b[0][0]), min(a[0][-1], b[0][-1])

    def rng(t: float) -> float:
        (x1, y1), (x2, y2) = _at(a, t), _at(b, t)
        return float(Geodesic.WGS84.Inverse(y1, x1, y2, x2)["s12"])

    # a coarse scan over the whole overlap, then every second around its minimum
    coarse = min((rng(start + k * 30.0), start + k * 30.0) for k in range(int((end - start) // 30) + 1))
    fine = min((rng(t), t) for t in (coarse[1] + s for s in range(-60, 61)))
    claimed = datetime.fromisoformat(made["cpa"]["time"].replace("Z", "+00:00")).timestamp()
    assert fine[0] == pytest.approx(made["cpa"]["range_m"], abs=1.0)
    assert abs(fine[1] - claimed) <= 1.0
    assert made["cpa"]["range_nm"] == pytest.approx(made["cpa"]["range_m"] / 1852)
    assert 100 < fine[0] < 1000  # a few hundred metres: a close pass


def test_the_rep_file_parses_cleanly_with_narratives(made: dict[str, Any]) -> None:
    raw = made["rep_file"].read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n")  # CRLF, as legacy files are
    result = parse_rep(raw.decode("ascii"))
    assert result.errors == [] and result.skipped == []
    assert result.fix_count == made["ships"]["CORMORANT"]["fixes"] and result.narrative_count >= 2
    fix = next(line for line in raw.decode().splitlines() if line[:1].isdigit())
    assert re.fullmatch(
        r"\d{6} \d{6}\.\d{3} CORMORANT  @F   \d\d [ \d]\d [ \d]\d\.\d\d N [ \d]\d [ \d]\d [ \d]\d\.\d\d W "
        r"[ \d]{3}\.\d [ \d]{3}\.\d      0 ",
        fix,
    ), fix


def test_the_code_project_has_python_and_typescript(made: dict[str, Any]) -> None:
    suffixes = sorted({p.suffix for p in made["code_files"]})
    assert {".py", ".ts"} <= set(suffixes)
    assert (made["project_dir"] / ".gitignore").read_text(encoding="utf-8").startswith("build/")


def test_make_workspace_is_deterministic(mw: ModuleType, tmp_path: Path) -> None:
    first, second = mw.make_workspace(tmp_path / "one"), mw.make_workspace(tmp_path / "two")
    for name in ("plot_file", "rep_file"):
        assert first[name].read_bytes() == second[name].read_bytes()
    assert first["cpa"] == second["cpa"] and first["zone"] == second["zone"]
    other = mw.make_workspace(tmp_path / "three", seed=7)
    assert other["rep_file"].read_bytes() != first["rep_file"].read_bytes()  # the seed drives the trawler
    assert other["cpa"] == first["cpa"]  # the designed encounter does not depend on it


def test_make_workspace_from_the_command_line(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "make_workspace.py"), str(tmp_path / "a b")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert Path(said["plot_file"]).is_file() and said["cpa"]["range_m"] == 420.0
