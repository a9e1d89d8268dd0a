"""The tour (examples/tour.py) end to end over real stdio, and the workspace it generates.

The tour runs as a user runs it, in a subprocess; its transcript must say what each step found
(the imports, the new plot, the CPA in yards against the design, one track-stats result per
track, the transits, the deleted mark, the PNGs, the narratives, the tote, the legs and the series
picture) and the plot it made must hold
what the transcript says. The workspace generator is checked on its own: each REP file imports
without a bad line, and the closest approach and the zone transit are what ``make_workspace``
says they are, computed independently (GeographicLib on the imported tracks, the imported ring).
"""

from __future__ import annotations

import bisect
import importlib.util
import json
import re
import subprocess
import sys
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from geographiclib.geodesic import Geodesic

from debrief_calc.formats.plotfile import load_plot
from debrief_calc.formats.rep import parse_rep
from debrief_calc.tracks.features import feature_kind, track_data
from tests.conftest import ROOT, subprocess_env

EXAMPLES = ROOT / "examples"
STEPS = ["── setup", "── start", "── (a) llmem", "── (b) from REP files to a new plot", "── (c) analysis"]
STEPS += ["── (d) delete", "── (e) the two ships at their CPA", "── (f) narratives", "── (g) the analyst's instruments"]
STEPS += ["── (h) sensors", "── (i) an hour's copy by reference", "Tour complete"]
SHIPS = ("ARGONAUT", "BLUE HERON", "CORMORANT")


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


@pytest.fixture(scope="module")
def imported(made: dict[str, Any]) -> dict[str, Any]:
    """Each REP file as the importer reads it, by file name."""
    return {p.name: parse_rep(p.read_bytes().decode("ascii"), source_name=p.name) for p in made["rep_files"]}


def _track(imported: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for r in imported.values() for f in r.features if f["properties"].get("name") == name)


# -- the tour --------------------------------------------------------------------------------


def _one(pattern: str, transcript: str) -> re.Match[str]:
    found = re.search(pattern, transcript, re.M)
    assert found is not None, f"not in the transcript: {pattern}\n{transcript}"
    return found


@pytest.fixture(scope="module")
def toured(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The tour run once as a user runs it: its transcript and the folder it kept."""
    tmp = tmp_path_factory.mktemp("tour")
    keep = tmp / "kept"
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "tour.py"), "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=600,
        env=subprocess_env(),
        cwd=tmp,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout, keep


@pytest.mark.slow
def test_the_tour_runs_every_step_and_says_what_it_found(toured: tuple[str, Path]) -> None:
    transcript, keep = toured
    positions = [transcript.find(marker) for marker in STEPS]
    assert -1 not in positions, [m for m, p in zip(STEPS, positions, strict=True) if p == -1]
    assert positions == sorted(positions)  # in order
    assert "DETERMINISTIC STAND-IN" in transcript and "TOUR FAILED" not in transcript
    assert "the tour launches those next to this Python" in transcript  # it says how it launched them
    # the deliberate refusals say they are deliberate
    assert "'generate_prompt' refused, as it should:" in transcript
    assert "arguments that break the schema refused, as they should:" in transcript

    # (a) llmem, through the callback, one malformed answer refused
    assert "STAND-IN LLM (malformed on purpose" in transcript and "refused, as it should: RESULT_INVALID" in transcript
    assert "(same ticket) → stored at step 2" in transcript

    # (b) three imports, each stored behind a ref, then a new plot fitted to the tracks
    for file, fixes, narratives in (("argonaut.rep", 241, 5), ("blue_heron.rep", 241, 4), ("cormorant.rep", 151, 3)):
        _one(
            rf"import-rep {file} → {fixes} fixes, {narratives} narratives, 0 bad lines, 0 skipped; .* "
            r"stored\.ref debrief-calc:runs/\w+$",
            transcript,
        )
    assert 'stored.use: pass {"ref": "debrief-calc:runs/' in transcript
    _one(
        r"debrief_create_plot exercise\.plot\.json .*→ created exercise\.plot\.json with \d+ feature\(s\) and opened it; "
        r"time window set to 2025-03-14T08:00:00Z \.\. 2025-03-14T12:30:00Z; viewport set to show all features",
        transcript,
    )
    _one(
        r"debrief_get_features \(summaries\) → annotation 15, metadata 2, track 3, zone 1; tracks ARGONAUT ", transcript
    )

    # (c) the CPA in yards, as designed; track-stats answers once per track; the transits
    cpa = _one(
        r"closest-approach CPA ARGONAUT / BLUE HERON \(distance_unit yd\): ([\d.]+) yd \(([\d.]+) m\) at (\S+),",
        transcript,
    )
    assert float(cpa.group(1)) == pytest.approx(420 / 0.9144, abs=2) and cpa.group(3) == "10:42:30Z"
    assert (
        "designed by make_workspace: 459.3 yd (420.0 m) at 10:42:30Z (checked: within 5 m, to the second)" in transcript
    )
    assert "track-stats of 3 tracks in one call → 3 results" in transcript
    for name, fixes in (("ARGONAUT", 241), ("BLUE HERON", 241), ("CORMORANT", 151)):
        _one(rf"^ +{name}: {fixes} fixes, [\d.]+ nm in [\d.]+ h, mean [\d.]+ kn", transcript)
    assert "speed-filter ARGONAUT: above 15 kn: 1 period, 08:00:00Z–09:20:00Z (80 min, mean 16.0 kn)" in transcript
    _one(r"BLUE HERON in EXAREA KILO: entry 11:06:1\dZ, exit 11:29:[34]\dZ, 23\.\d min inside", transcript)
    assert (
        "ARGONAUT in EXAREA KILO: never inside" in transcript and "CORMORANT in EXAREA KILO: never inside" in transcript
    )

    # (d) the stale mark selected, deleted through the calc server's command
    victim = _one(r"debrief_set_selection \[(\S+)\] \(BUOY E1 \(OFF STATION\)", transcript).group(1)
    assert f"deleted ['{victim}']" in transcript
    assert "(the deleted feature left the selection)" in transcript

    # (e) the time moved to the CPA, two PNGs on disk
    assert "(the CPA, current alone) → 10:42:30Z in 08:00:00Z..12:30:00Z" in transcript
    saved = re.findall(r"PNG saved: (.+) \((\d+) bytes\)$", transcript, re.M)
    assert [Path(p).name for p, _ in saved] == [
        "exercise.png",
        "exercise-cpa.png",
        "exercise-series.png",
        "satc-cuts.png",
        "satc-solution.png",
    ]
    for path, size in saved:
        png = Path(path)
        assert png.is_file() and " " in str(png) and png.is_relative_to(keep)
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) == int(size) > 10_000
    assert re.search(r"debrief_render_plot fit=all cpa=\[.*\] → image/png \d+×768", transcript)

    # (f) the analysis summary stored and read back by its ref; the plot summary kept in the plot
    ref = _one(
        r"debrief-calc:store_llm_result → stored at step 1, ref (debrief-calc:analyses/\w+/summary)$", transcript
    )
    _one(rf"debrief-calc:get_result {re.escape(ref.group(1))} → summary, \d+ chars, the same text:", transcript)
    assert "| - **CPA ARGONAUT / BLUE HERON**: 459.4 yd at 2025-03-14T10:42:30" in transcript
    note = _one(r"add_annotation=true → annotation (\S+) added: True", transcript).group(1)
    _one(rf"debrief_get_features {re.escape(note)} \(full\) → in exercise\.plot\.json: 'Plot summary'", transcript)

    # (g) the tote at the plot's current time (the CPA), as designed; the legs as designed, marked;
    # range-bearing's true CPA over the hour round it, and its picture marking it
    _one(
        r"tote ARGONAUT / BLUE HERON \(the plot's current time, 10:42:30Z\): 459\.\d yd, bearing [\d.]+°, relative "
        r"[\d.]+° [RG], ATB [\d.]+° [RG], bearing rate [\d.]+°/min [LR]$",
        transcript,
    )
    _one(r"^ +ARGONAUT 108\.0° 14\.0 kn, BLUE HERON 201\.0° 12\.0 kn$", transcript)
    _one(r"track-legs ARGONAUT mark_legs=true → 2 legs, 2 leg marks, commands \['addFeatures'\]$", transcript)
    _one(r"^ +leg 1: 062\.0° 16\.0 kn 08:00:00Z–09:20:00Z, [\d.]+ nm$", transcript)
    _one(r"^ +leg 2: 108\.0° 14\.0 kn 09:20:00Z–12:00:00Z, [\d.]+ nm$", transcript)
    # the turn at the 09:20 fix runs from the middle of the segment before it to the middle of the one after
    _one(r"^ +09:19:30Z–09:20:30Z: course and speed, 46° to starboard, 16\.0 → 14\.0 kn$", transcript)
    assert not re.search(r"(\d\d:\d\d:\d\dZ)–\1", transcript)  # no span that starts and ends at one instant
    # every comparison with the design says its tolerance
    designed = [line for line in transcript.splitlines() if "designed" in line]
    assert len(designed) >= 5 and all("(checked: " in line for line in designed), designed
    assert "debrief_apply_command addFeatures → 2 leg marks in the plot" in transcript
    _one(
        r"range-bearing every 60 s, window 10:12:00Z–11:12:00Z → 61 samples; true CPA 459\.4 yd at 10:42:30Z, least "
        r"sample [\d.]+ yd at \S+, peak bearing rate [\d.]+°/min [LR] at \S+$",
        transcript,
    )
    _one(
        r"render_series \[debrief-calc:results/[\w-]+\] → image/png 900×\d+, 61 samples, panels Range \(yd\), "
        r"Bearing \(°T\), Bearing rate \(°/min, \+ drawing right\); CPA marked: 'CPA 459\.4 yd at 10:42:30'$",
        transcript,
    )

    # every tool call line carries its timing
    calls = [line for line in transcript.splitlines() if re.match(r"\[\s*[\d.]+ ms\] (llmem|debrief)", line)]
    assert len(calls) >= 30
    # the servers' logs stay out of the transcript
    assert '"tool call"' not in transcript and "INFO" not in transcript

    # the plot the tour made holds what the transcript says
    plot = load_plot(Path(saved[0][0]).parent / "exercise.plot.json").data
    features = {str(f["id"]): f for f in plot["features"]}
    tracks = {f["properties"]["name"]: f for f in features.values() if feature_kind(f) == "track"}
    assert sorted(tracks) == sorted(SHIPS)
    assert tracks["ARGONAUT"]["properties"]["stroke"] == "#E00000"
    assert victim not in features and note in features
    leg_marks = [f for f in features.values() if str(f["properties"].get("name", "")).startswith("ARGONAUT leg ")]
    assert sorted(f["properties"]["leg"] for f in leg_marks) == [1, 2]
    assert features[note]["properties"]["text"].startswith("# Plot summary (written by the deterministic stand-in")
    narratives = [f for f in features.values() if f["properties"].get("annotationType") == "comment"]
    assert len(narratives) == 12 + 1  # every ship's narratives, and the plot summary
    assert features["debrief-time-metadata"]["properties"]["current"].startswith("2025-03-14T10:42:30")


def test_the_tour_exits_non_zero_when_a_step_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tour = _load("tour")
    tour.CONFIG = tmp_path / "missing config.json"
    assert tour.main(["--keep", str(tmp_path)]) == 1
    assert "TOUR FAILED: ConfigError: cannot read the config" in capsys.readouterr().out


def test_the_stand_in_reads_the_calc_prompts_figures() -> None:
    tour = _load("tour")
    prompt = (
        "Summarise.\n\n### Result result-1 — tool zone-transits v1.0.0 at 2025-03-14T00:00:00Z\n"
        "Sources: track a, zone z\nFigures:\n"
        '  name: "A in Z"\n  transit_count: 1\n  transits: 1 entries:\n    [0]:\n'
        '      entry_time: "2025-03-14T11:06:18.347Z"\n      exit_time: "2025-03-14T11:29:40.153Z"\n'
        "      duration_s: 1401.806\n      entry_position: [-4.99, 49.74]\n"
        "### Result result-2 — tool track-stats v1.0.0 at 2025-03-14T00:00:00Z\nFigures:\n"
        '  track_name: "A"\n  statistics:\n    point_count: 3\n    start: "s"\n    end: "e"\n'
        "    distance_nm: 1.5\n    mean_speed_kn: 9.0\n    max_speed_kn: 9.5\n"
    )
    text = tour.stand_in_llm(prompt, "summarize-analysis")
    assert "- **A in Z**: entered 2025-03-14T11:06:18.347Z, left 2025-03-14T11:29:40.153Z (23.4 min inside)." in text
    assert "- **A**: 3 fixes from s to e, 1.50 nm at a mean 9.0 kn (max 9.5 kn)." in text


# -- the workspace ---------------------------------------------------------------------------


def test_there_is_no_prepared_plot_only_rep_files(made: dict[str, Any]) -> None:
    assert sorted(p.name for p in made["plots_dir"].iterdir()) == ["argonaut.rep", "blue_heron.rep", "cormorant.rep"]
    assert made["rep_files"] == [made["plots_dir"] / made["ships"][s]["file"] for s in SHIPS]
    assert made["plot_name"] == "exercise.plot.json"


def test_each_rep_file_imports_cleanly_with_narratives(made: dict[str, Any], imported: dict[str, Any]) -> None:
    for ship in SHIPS:
        facts = made["ships"][ship]
        raw = (made["plots_dir"] / facts["file"]).read_bytes()
        assert raw.count(b"\r\n") == raw.count(b"\n")  # CRLF, as legacy files are
        result = imported[facts["file"]]
        assert result.errors == [] and result.skipped == []
        assert result.fix_count == facts["fixes"] and result.narrative_count == facts["narratives"] >= 3
        track = _track(imported, ship)
        assert track["properties"]["timestamps"][0] == facts["start"].replace(".000Z", "Z")
        narratives = [f for f in result.features if f["properties"].get("annotationType") == "comment"]
        assert {f["properties"]["track"] for f in narratives} == {ship}
        assert all(f["geometry"]["type"] == "Point" for f in narratives)  # placed on the ship's own fixes
    fix = next(line for line in (made["plots_dir"] / "cormorant.rep").read_text().splitlines() if line[:1].isdigit())
    assert re.fullmatch(
        r"\d{6} \d{6}\.\d{3} CORMORANT  @F   \d\d [ \d]\d [ \d]\d\.\d\d N [ \d]\d [ \d]\d [ \d]\d\.\d\d W "
        r"[ \d]{3}\.\d [ \d]{3}\.\d      0 ",
        fix,
    ), fix
    heron = next(line for line in (made["plots_dir"] / "blue_heron.rep").read_text().splitlines() if line[:1].isdigit())
    assert re.match(r'\d{6} \d{6}\.\d{3} "BLUE HERON"  @A   ', heron), heron  # a quoted name with a space


def test_the_exercise_area_and_marks_are_rep_shapes(made: dict[str, Any], imported: dict[str, Any]) -> None:
    features = imported[made["zone"]["file"]].features
    (zone,) = [f for f in features if feature_kind(f) == "zone"]
    props = zone["properties"]
    assert props["name"] == made["zone"]["name"] and props["specifics"]["shapeType"] == "circle"
    assert props["specifics"]["radiusM"] == pytest.approx(made["zone"]["radius_yd"] * 0.9144)
    assert props["specifics"]["origin"] == pytest.approx(made["zone"]["origin"])
    labels = [f["properties"]["name"] for f in features if f["properties"].get("annotationType") == "label"]
    assert labels == made["reference_points"]
    text = (made["plots_dir"] / made["zone"]["file"]).read_text()
    assert re.search(r"^;CIRCLE: @E [\d .]+ N [\d .]+ W 5000 EXAREA KILO\r?$", text, re.M)


def test_the_ships_move_at_realistic_speeds(imported: dict[str, Any]) -> None:
    for name in ("ARGONAUT", "BLUE HERON"):
        track = track_data(_track(imported, name))
        legs = [
            Geodesic.WGS84.Inverse(track.lat[i], track.lon[i], track.lat[i + 1], track.lon[i + 1])["s12"]
            / (track.t[i + 1] - track.t[i])
            * 3600
            / 1852
            for i in range(len(track.t) - 1)
        ]
        assert min(legs) >= 8.0 and max(legs) <= 20.0, name
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


def _stamp(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_the_cpa_is_what_make_workspace_says(made: dict[str, Any], imported: dict[str, Any]) -> None:
    a, b = (_series(_track(imported, name)) for name in made["cpa"]["ships"])
    start, end = max(a[0][0], b[0][0]), min(a[0][-1], b[0][-1])

    def rng(t: float) -> float:
        (x1, y1), (x2, y2) = _at(a, t), _at(b, t)
        return float(Geodesic.WGS84.Inverse(y1, x1, y2, x2)["s12"])

    # a coarse scan over the whole overlap, then every second around its minimum
    coarse = min((rng(start + k * 30.0), start + k * 30.0) for k in range(int((end - start) // 30) + 1))
    fine = min((rng(t), t) for t in (coarse[1] + s for s in range(-60, 61)))
    assert fine[0] == pytest.approx(made["cpa"]["range_m"], abs=1.0)  # the files keep 0.01" of arc
    assert abs(fine[1] - _stamp(made["cpa"]["time"])) <= 1.0
    assert made["cpa"]["range_nm"] == pytest.approx(made["cpa"]["range_m"] / 1852)
    assert made["cpa"]["range_yd"] == pytest.approx(made["cpa"]["range_m"] / 0.9144)
    assert 100 < fine[0] < 1000  # a few hundred metres: a close pass


def _inside(lon: float, lat: float, circle: dict[str, Any]) -> bool:
    (lon0, lat0), radius_m = circle["origin"], circle["radiusM"]
    return bool(Geodesic.WGS84.Inverse(lat0, lon0, lat, lon)["s12"] <= radius_m)


def test_the_transits_are_what_make_workspace_says(made: dict[str, Any], imported: dict[str, Any]) -> None:
    """On the circle the importer keeps for the ;CIRCLE: line (its specifics, which the zone tools
    measure rather than the ring drawn for it), sampled every 10 s along each track."""
    (zone,) = [f for f in imported[made["zone"]["file"]].features if feature_kind(f) == "zone"]
    circle = zone["properties"]["specifics"]
    for ship, designed in made["zone"]["transits"].items():
        series = _series(_track(imported, ship))
        times = series[0]
        samples = [times[0] + 10.0 * k for k in range(int((times[-1] - times[0]) // 10) + 1)]
        inside = [_inside(*_at(series, t), circle) for t in samples]
        steps = list(zip(samples[1:], pairwise(inside), strict=True))
        entries = [t for t, (was, now) in steps if now and not was]
        exits = [t for t, (was, now) in steps if was and not now]
        assert len(entries) == len(exits) == len(designed), ship
        for entry, exit_, d in zip(entries, exits, designed, strict=True):
            assert 0 <= entry - _stamp(d["entry"]) < 11 and 0 <= exit_ - _stamp(d["exit"]) < 11
    assert [s for s, t in made["zone"]["transits"].items() if t] == [made["zone"]["crossed_by"]]


def test_the_code_project_has_python_and_typescript(made: dict[str, Any]) -> None:
    suffixes = sorted({p.suffix for p in made["code_files"]})
    assert {".py", ".ts"} <= set(suffixes)
    assert (made["project_dir"] / ".gitignore").read_text(encoding="utf-8").startswith("build/")


def test_make_workspace_is_deterministic(mw: ModuleType, tmp_path: Path) -> None:
    first, second = mw.make_workspace(tmp_path / "one"), mw.make_workspace(tmp_path / "two")
    for a, b in zip(first["rep_files"], second["rep_files"], strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert first["cpa"] == second["cpa"] and first["zone"] == second["zone"]
    other = mw.make_workspace(tmp_path / "three", seed=7)
    files = {p.name: p.read_bytes() for p in first["rep_files"]}
    changed = {p.name for p in other["rep_files"] if p.read_bytes() != files[p.name]}
    assert changed == {"cormorant.rep", "argonaut.rep"}  # the seed drives the trawler and the reference marks
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
    assert [Path(p).name for p in said["rep_files"]] == ["argonaut.rep", "blue_heron.rep", "cormorant.rep"]
    assert all(Path(p).is_file() for p in said["rep_files"]) and said["cpa"]["range_m"] == 420.0


# -- the tour's sensor step and hour's copy, against GeographicLib on the files themselves -----

SATC = ROOT / "tests" / "data" / "sensors"
GEOD = Geodesic.WGS84


def _satc_time(hhmmss: str) -> float:
    """Seconds into 12 Jan 2010 of an ``HHMMSS`` field (the SATC files are all on that day)."""
    return int(hhmmss[:2]) * 3600 + int(hhmmss[2:4]) * 60 + float(hhmmss[4:])


def _clock(iso_or_hm: str) -> float:
    """Seconds into the day of ``12:32:25Z`` or an ISO time."""
    text = iso_or_hm[11:] if "T" in iso_or_hm else iso_or_hm
    h, m, sec = text.rstrip("Z").split(":")
    return int(h) * 3600 + int(m) * 60 + float(sec)


def _degrees(fields: list[str]) -> float:
    """``d m s H`` of a REP line as signed degrees."""
    d, m, sec, hemi = fields
    value = float(d) + float(m) / 60 + float(sec) / 3600
    return -value if hemi in ("S", "W") else value


def _satc_fixes(name: str) -> dict[float, tuple[float, float]]:
    """A SATC track read straight from its REP text: seconds into the day → (lat, lon); the
    simulator's repeated first fix kept once."""
    fixes: dict[float, tuple[float, float]] = {}
    for line in (SATC / name).read_text().splitlines():
        f = line.split()
        if len(f) >= 12 and f[0].isdigit():
            fixes[_satc_time(f[1])] = (_degrees(f[4:8]), _degrees(f[8:12]))
    return fixes


def _satc_cuts(name: str) -> list[tuple[float, float, float, float]]:
    """The ;SENSOR: cuts of a SATC file: (seconds into the day, origin lat, lon, bearing)."""
    cuts = []
    for line in (SATC / name).read_text().splitlines():
        f = line.split()
        if f and f[0] == ";SENSOR:":
            cuts.append((_satc_time(f[2]), _degrees(f[5:9]), _degrees(f[9:13]), float(f[13]) % 360))
    return cuts


def _position(fixes: dict[float, tuple[float, float]], t: float) -> tuple[float, float]:
    times = sorted(fixes)
    i = min(max(bisect.bisect_right(times, t) - 1, 0), len(times) - 2)
    (a0, o0), (a1, o1) = fixes[times[i]], fixes[times[i + 1]]
    f = (t - times[i]) / (times[i + 1] - times[i])
    return a0 + f * (a1 - a0), o0 + f * (o1 - o0)


def _true_legs(fixes: dict[float, tuple[float, float]]) -> list[tuple[float, float, float, float]]:
    """The truth's two steady legs, from the course of each step between fixes (GeographicLib):
    (start, end, course, speed in knots) each, course the mean of the geodesic's azimuths."""
    times = sorted(fixes)
    steps = [GEOD.Inverse(*fixes[a], *fixes[b])["azi1"] % 360 for a, b in pairwise(times)]
    first = [t for t, c in zip(times, steps, strict=False) if abs(c - steps[0]) < 0.5]
    last = [t for t, c in zip(times[1:], steps, strict=False) if abs(c - steps[-1]) < 0.5]
    legs = []
    for start, end in ((first[0], max(first) + 15.0), (min(last) - 15.0, last[-1])):
        g = GEOD.Inverse(*fixes[start], *fixes[end])
        legs.append((start, end, (g["azi1"] + g["azi2"]) / 2 % 360, g["s12"] / (end - start) * 3600 / 1852))
    return legs


@pytest.mark.slow
def test_the_tours_sensor_step_is_the_truth(toured: tuple[str, Path]) -> None:
    transcript, _ = toured
    own, truth = _satc_fixes("BlueTrack.rep"), _satc_fixes("RedTrack.rep")
    (leg1, leg2) = _true_legs(truth)
    # the .dsf's cuts drawn and labelled at its last cut's time
    l1 = _satc_cuts("L1_OwnshipSensor.dsf")
    labelled = _one(r"the selected sensor's cut times, labelled: (.+)$", transcript).group(1).split(", ")
    assert [_clock(t) for t in labelled] == [c[0] for c in l1]
    assert "satc.plot.json at 12:29:59Z → L1 cuts: 11 cuts, 11 active, 11 drawn" in transcript
    # the truth the tour printed is GeographicLib's on the true track
    at = l1[-1][0]
    g = GEOD.Inverse(*own[at], *truth[at])
    found = _one(r"^ +truth: ([\d.]+)° at ([\d.]+) kn; (\d+) yd on ([\d.]+)° \(checked: ", transcript)
    assert float(found.group(1)) == pytest.approx(leg1[2], abs=0.1)
    assert float(found.group(2)) == pytest.approx(leg1[3], abs=0.02)
    assert float(found.group(3)) == pytest.approx(g["s12"] / 0.9144, abs=1)
    assert float(found.group(4)) == pytest.approx(g["azi1"] % 360, abs=0.1)
    # the first leg's solution, near the truth (the tutorial's answer: 9.0 kn on 269°)
    sol = _one(
        r"L1 solution: ([\d.]+)° ± [\d.]+° at ([\d.]+) ± [\d.]+ kn; at 12:29:59Z (\d+) ± \d+ yd on ([\d.]+)°",
        transcript,
    )
    course, speed, rng, brg = (float(x) for x in sol.groups())
    assert abs(course - leg1[2]) < 3 and abs(speed - leg1[3]) < 0.3
    assert abs(rng - g["s12"] / 0.9144) < 0.02 * g["s12"] / 0.9144 and abs(brg - g["azi1"] % 360) < 0.5
    # all the cuts: both legs and the turn between them
    for n, (_, _, true_course, true_speed) in ((1, leg1), (2, leg2)):
        leg = _one(
            rf"^ +leg {n}: ([\d.]+)° ± [\d.]+° at ([\d.]+) kn \(\d+ cuts\); truth ([\d.]+)° at ([\d.]+) kn$", transcript
        )
        c, v, tc, tv = (float(x) for x in leg.groups())
        assert abs(tc - true_course) < 0.1 and abs(tv - true_speed) < 0.02
        assert abs(c - true_course) < 3 and abs(v - true_speed) < 0.3
    turn = _one(r"turn at (\S+) \(between cuts 12 and 13\); truth (\S+)–(\S+) \(checked", transcript)
    # track-legs times a turn from the middle of the segment it turns from to the middle of the one
    # it turns to (half a 60 s fix interval off the fixes), and ends it at the first step within its
    # course tolerance (3°), the steps' 0.5° here at the next fix: 30 s, or 30 s and a step, apart
    assert abs(_clock(turn.group(2)) - leg1[1]) <= 30 and abs(_clock(turn.group(3)) - leg2[0]) <= 45
    assert leg1[1] - 60 <= _clock(turn.group(1)) <= leg2[0] + 60
    # the last half hour's cuts drawn at the end, as the cuts' times say
    every = _satc_cuts("BlueSensor_sparse.rep")
    end = max(truth)
    active = sum(1 for t, *_ in every if end - 1800 <= t <= end)
    assert f"satc.plot.json at 13:13:14Z → All cuts: 38 cuts, {active} active, {active} drawn" in transcript
    # the residuals against the truth: each cut's bearing against GeographicLib's from its origin
    errors = []
    for t, lat, lon, bearing in every:
        calc = GEOD.Inverse(lat, lon, *_position(truth, t))["azi1"] % 360
        errors.append((bearing - calc + 180) % 360 - 180)
    rms = (sum(e * e for e in errors) / len(errors)) ** 0.5
    said = _one(r"bearing-residuals All cuts against the truth → 38 cuts, ([\d.]+)° RMS", transcript)
    assert float(said.group(1)) == pytest.approx(rms, abs=0.002)
    assert re.search(r"bearing-residuals All cuts against the solution → 38 cuts, 0\.0\d\d° RMS.*: fits", transcript)


@pytest.mark.slow
def test_the_tours_hour_copy_passes_and_close_quarters_are_geographiclibs(toured: tuple[str, Path]) -> None:
    transcript, keep = toured
    plots = keep / "tour workspace" / "workspace" / "plots"
    imported = {p.name: parse_rep(p.read_bytes().decode("ascii"), source_name=p.name) for p in plots.glob("*.rep")}
    series = {name: _series(_track(imported, name)) for name in SHIPS}
    start, end = _stamp("2025-03-14T10:12:30Z"), _stamp("2025-03-14T11:12:30Z")
    # the copy: one small call; each ship's fixes inside the window and one at each edge, placed
    # where its track was then
    size = int(
        _one(
            r"debrief_create_plot cpa-hour\.plot\.json, 3 refs each with time_start/time_end \((\d+) bytes\)",
            transcript,
        ).group(1)
    )
    assert size < 1000
    copy = {f["properties"].get("name"): f for f in load_plot(plots / "cpa-hour.plot.json").data["features"]}
    for name in SHIPS:
        inside = sum(1 for t in series[name][0] if start < t < end)
        assert f"  {name}: {inside + 2} fixes 10:12:30Z–11:12:30Z" in transcript
        coords = copy[name]["geometry"]["coordinates"]
        for point, t in ((coords[0], start), (coords[-1], end)):
            x, y = _at(series[name], t)
            assert GEOD.Inverse(point[1], point[0], y, x)["s12"] < 1.0

    def rng(a: str, b: str, t: float) -> float:
        (x1, y1), (x2, y2) = _at(series[a], t), _at(series[b], t)
        return float(GEOD.Inverse(y1, x1, y2, x2)["s12"])

    # every pair's passes: the one pass is GeographicLib's least range; the others' least ranges lie
    # at an edge of the hour, never called a CPA
    seconds_ = [start + k for k in range(int(end - start) + 1)]
    least, when = min((rng("ARGONAUT", "BLUE HERON", t), t) for t in seconds_)
    found = _one(r"^ +CPA ARGONAUT / BLUE HERON: 1 pass\(es\): ([\d.]+) yd at (\S+)$", transcript)
    assert float(found.group(1)) == pytest.approx(least / 0.9144, abs=0.5)
    assert abs(_stamp(f"2025-03-14T{found.group(2)}") - when) <= 1
    for a, b, edge in (("ARGONAUT", "CORMORANT", "start"), ("BLUE HERON", "CORMORANT", "end")):
        ranges = [rng(a, b, t) for t in seconds_[::30]]
        assert ranges.index(min(ranges)) == (0 if edge == "start" else len(ranges) - 1)
        _one(rf"^ +Least range {a} / {b}: 0 pass\(es\): none; closest at the {edge} of the window", transcript)
    _one(rf"range-bearing ARGONAUT / BLUE HERON on the copy → passes: {re.escape(found.group(1))} yd at", transcript)
    # close quarters within 2000 yd: the seconds GeographicLib finds the ships that close
    close = [t for t in seconds_ if rng("ARGONAUT", "BLUE HERON", t) <= 2000 * 0.9144]
    period = _one(
        r"Close quarters ARGONAUT / BLUE HERON within 2000 yd: 1 period\(s\): (\S+)–(\S+) \([\d.]+ min, least "
        r"([\d.]+) yd at (\S+)\)$",
        transcript,
    )
    first, last = (_stamp(f"2025-03-14T{period.group(k)}") for k in (1, 2))
    assert abs(first - close[0]) <= 1 and abs(last - close[-1]) <= 1
    assert period.group(3) == found.group(1) and period.group(4) == found.group(2)
    for a, b in (("ARGONAUT", "CORMORANT"), ("BLUE HERON", "CORMORANT")):
        assert min(rng(a, b, t) for t in seconds_[::30]) > 2000 * 0.9144
        _one(rf"Close quarters {a} / {b} within 2000 yd: 0 period\(s\): never within 2000 yd", transcript)
