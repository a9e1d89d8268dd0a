"""What the submarine trial (t24b) found, fixed: on its exercise rebuilt with a known truth
(``tests/_exercise.py``, GeographicLib) and on constructed cases. The stacked-dots verdict names
and leaves out outliers; frequency residuals are read for trends; the Ekelund check reads local
rates and names what spoils it; ``scatter_to_stated`` is the ratio it says; the summary rounds;
the solution's least uncertain point; the towed array's offset; bias-prone legs; a solution
coloured apart from its host. Through the tool, both protocol eras and the real console script."""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client, StdioServerParameters

from debrief_calc.analysis.tma_solve import solution_stroke
from debrief_calc.calc.server import build_server
from debrief_calc.tracks.features import iso, parse_iso
from llmem.core.config import ServerConfig
from tests import _exercise as ex
from tests._sensors import at, satc_sensor, satc_track, scenario
from tests.conftest import MODES, call, console_script, subprocess_env
from tests.test_analysis_support import run_ok

GEOD = Geodesic.WGS84
TRIAL_SEED = 2424


def props(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = result.features[0]["properties"]
    return out


@pytest.fixture(scope="module")
def trial() -> tuple[dict[str, Any], dict[str, Any]]:
    return ex.features(TRIAL_SEED)


@pytest.fixture(scope="module")
def solved(trial: tuple[dict[str, Any], dict[str, Any]]) -> Any:
    return run_ok("tma-solve", list(trial), {})


# -- bearing-residuals: outliers named and left out of the verdict; frequency trends -------------


def test_the_verdict_leaves_out_and_names_the_wild_cuts(trial: tuple[dict[str, Any], dict[str, Any]]) -> None:
    sensor, own = trial
    p = props(run_ok("bearing-residuals", [sensor, ex.truth_track(), own], {"target": "truth"}))
    # independently: measured (the file's 0.1°) minus the true geodesic bearing, the wild cuts apart
    measured = np.array(sensor["properties"]["bearings"])
    err = (measured - ex.geometry().bearing + 180.0) % 360.0 - 180.0
    wild = sorted(ex.OUTLIERS)
    clean = np.delete(err, wild)
    assert [o["cut"] for o in p["outliers"]["cuts"]] == [k + 1 for k in wild]
    assert p["rms_error"] == pytest.approx(math.sqrt(np.mean(err**2)), abs=1e-3)
    assert p["rms_error_clean"] == pytest.approx(math.sqrt(np.mean(clean**2)), abs=1e-3)
    assert p["rms_error"] > 5 * p["rms_error_clean"]
    assert p["verdict"].startswith(f"fits: errors {np.mean(clean):+.2f}° mean, {math.sqrt(np.mean(clean**2)):.2f}° RMS")
    assert "15 (" in p["verdict"] and "39 (" in p["verdict"] and "53 (" in p["verdict"]
    assert "frequencies fit" in p["verdict"]


def test_no_outlier_without_wild_cuts_and_none_when_switched_off(
    trial: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    sensor, own = ex.features(5, outliers=False)
    p = props(run_ok("bearing-residuals", [sensor, ex.truth_track(), own], {"target": "truth"}))
    assert "outliers" not in p and "without the" not in p["verdict"]
    sensor, own = trial
    p = props(run_ok("bearing-residuals", [sensor, ex.truth_track(), own], {"target": "truth", "outlier_sigma": 0}))
    assert "outliers" not in p


def _candidate(knots: float) -> dict[str, Any]:
    """The truth's course profile at another speed (GeographicLib), a fix a minute."""
    g = ex.geometry()
    lat, lon = float(g.target[0, 0]), float(g.target[0, 1])
    coords, times = [], []
    for t in range(0, ex.DURATION + 1, 60):
        coords.append([lon, lat])
        times.append(iso(ex.T0 + t))
        p = GEOD.Direct(lat, lon, ex.target_course(t + 30), knots * ex.KNOT * 60)
        lat, lon = p["lat2"], p["lon2"]
    return {
        "type": "Feature",
        "id": "fast",
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {"kind": "track", "dataType": "track", "name": "FAST", "timestamps": times},
    }


def test_a_frequency_drift_says_the_speed_is_off() -> None:
    sensor, own = ex.features(7, outliers=False)
    p = props(run_ok("bearing-residuals", [sensor, _candidate(9.0), own], {"target": "fast"}))
    freq = p["frequency"]
    assert freq["verdict"].startswith("off: the frequency error trends")
    assert any(s["trend"] for s in freq["stretches"])
    assert "speed" in freq["verdict"] and "frequencies off" in p["verdict"]
    p = props(run_ok("bearing-residuals", [sensor, ex.truth_track(), own], {"target": "truth"}))
    assert not any(s["trend"] for s in p["frequency"]["stretches"])


# -- the Ekelund check ---------------------------------------------------------------------------


def test_ekelund_across_the_second_turn_is_near_the_truth_and_the_first_says_why_not() -> None:
    sensor, own = ex.features(0, bearing_sd=0.0, freq_sd=0.0, outliers=False)
    p = props(run_ok("tma-solve", [sensor, own], {}))
    first, second = p["ekelund"]
    g = ex.geometry()
    mid = (parse_iso(second["start"]) + parse_iso(second["end"])) / 2 - ex.T0
    o, tg = g.own[round(mid)], g.target[round(mid)]
    truth = GEOD.Inverse(o[0], o[1], tg[0], tg[1])["s12"] / 1852.0
    assert second["usable"] and abs(second["range"] - truth) < 0.15 * truth
    assert second["cuts_used_before"][0] > 30  # a local fit: the last minutes of the leg, not all of it
    assert first["range"] is None or first["spoilt_by"]
    assert first.get("why_no_range") or first["spoilt_by"]
    assert "quick check" in first["note"]


def test_a_target_turn_among_the_cuts_used_spoils_the_check() -> None:
    sensor, own, _, _, _ = scenario(
        target_legs=((200.0, 8.0, 1100.0), (150.0, 8.0, 1300.0)), cuts=120, noise_deg=0.2, seed=3
    )
    p = props(run_ok("tma-solve", [sensor, own], {}))
    assert p["turns"], p["summary"]
    (check,) = p["ekelund"]
    assert not check["usable"]
    assert any("target turn found" in s for s in check["spoilt_by"])
    assert "discount it" in check["note"]


# -- small things --------------------------------------------------------------------------------


def test_scatter_to_stated_is_the_ratio_it_names(trial: tuple[dict[str, Any], dict[str, Any]]) -> None:
    p = props(run_ok("tma-solve", list(trial), {"bearing_sd": 1.0}))
    r = p["residuals"]
    n, k = r["cuts_fitted"], r["parameters"]
    assert r["scatter_to_stated"] == pytest.approx(r["rms_deg"] * math.sqrt(n / (n - k)), abs=2e-3)
    assert r["scatter_to_stated"] < 1.0 and r["uncertainty_scale"] == 1.0
    p = props(run_ok("tma-solve", list(trial), {"bearing_sd": 0.5}))
    assert p["residuals"]["uncertainty_scale"] == pytest.approx(p["residuals"]["scatter_to_stated"], abs=2e-3)


def test_the_summary_rounds_ranges(solved: Any) -> None:
    text = props(solved)["summary"]
    assert not re.search(r"\d\.\d{3,} (nm|±)", text)
    assert re.search(r"range \d+\.\d\d ± \d+\.\d\d nm", text)
    sensor, own = ex.features(TRIAL_SEED)
    yards = props(run_ok("tma-solve", [sensor, own], {"distance_unit": "yd"}))["summary"]
    assert re.search(r"range \d+ ± \d+ yd", yards)


def test_the_least_uncertain_point_has_the_smallest_ellipse(solved: Any) -> None:
    p = props(solved)
    best, last = p["solution_least_uncertain"], p["solution"]
    area = best["ellipse"]["semi_major"] * best["ellipse"]["semi_minor"]
    assert area < 0.2 * last["ellipse"]["semi_major"] * last["ellipse"]["semi_minor"]
    track = solved.features[1]["properties"]
    areas = [e["semiMajorYd"] * e["semiMinorYd"] * (0.9144 / 1852.0) ** 2 for e in track["ellipses"]]
    assert area <= min(areas) * 1.0001
    assert p["period"]["start"] <= best["time"] <= p["period"]["end"]
    assert "Best known at" in p["summary"]
    # the truth is there, within the ellipse's reach (GeographicLib)
    truth = ex.geometry().target_at(parse_iso(best["time"]))
    inv = GEOD.Inverse(best["position"][1], best["position"][0], truth[0], truth[1])
    assert inv["s12"] / 1852.0 < 2 * best["ellipse"]["semi_major"]


def test_the_array_offset_moves_the_null_origins() -> None:
    sensor, own = ex.features(0, bearing_sd=0.0, freq_sd=0.0, outliers=False, astern_m=900.0)
    plain = props(run_ok("tma-solve", [sensor, own], {"max_turns": 1}))
    towed = props(run_ok("tma-solve", [sensor, own], {"max_turns": 1, "array_offset_m": -900.0}))
    assert towed["residuals"]["rms_deg"] < 0.1 < plain["residuals"]["rms_deg"]
    g = ex.geometry()

    def miss(answer: dict[str, Any]) -> float:
        best = answer["solution_least_uncertain"]
        truth = g.target_at(parse_iso(best["time"]))
        return float(GEOD.Inverse(best["position"][1], best["position"][0], truth[0], truth[1])["s12"])

    assert miss(towed) < 0.5 * miss(plain)
    assert miss(towed) < 2 * towed["solution_least_uncertain"]["ellipse"]["semi_major"] * 1852.0


def test_bias_prone_legs_and_speed_changes_within_noise_are_said(solved: Any) -> None:
    legs = props(solved)["target_legs"]
    second = legs[1]
    assert second["speed_sd_kn"] / second["speed_kn"] >= 0.1
    assert second["reliability"] == "bias-prone" and "bias-prone" in second["notes"][0]
    assert any("do not report a speed change" in n for n in second["notes"]) == (
        abs(second["speed_kn"] - legs[0]["speed_kn"]) < 2 * math.hypot(second["speed_sd_kn"], legs[0]["speed_sd_kn"])
    )
    clean = props(run_ok("tma-solve", [satc_sensor(1, 11), satc_track("BlueTrack.rep")], {}))
    assert clean["target_legs"][0]["reliability"] == "good"


def test_a_solution_is_coloured_apart_from_its_host(solved: Any, trial: tuple[dict[str, Any], dict[str, Any]]) -> None:
    host = trial[1]["properties"]["stroke"]
    mine = solved.features[1]["properties"]["stroke"]

    def rgb(c: str) -> tuple[int, ...]:
        return tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))

    assert math.dist(rgb(host), rgb(mine)) > 150
    assert math.dist(rgb(trial[0]["properties"]["stroke"]), rgb(mine)) > 150
    assert solution_stroke("#2ca02c") != "#2ca02c" and solution_stroke(None, "bad") == "#2ca02c"


# -- through the protocol ----------------------------------------------------------------------


@pytest.fixture
def ws(workspace: Path) -> Path:
    rep, dsf = ex.files(TRIAL_SEED)
    (workspace / "sceptre.rep").write_text(rep, encoding="utf-8")
    (workspace / "ta.dsf").write_text(dsf, encoding="utf-8")
    return workspace


async def _the_trial_over(c: Client) -> None:
    err, out = await call(c, "run_tool", tool="import-rep", parameters={"paths": ["sceptre.rep", "ta.dsf"]})
    assert not err, out
    ref = {"ref": out["stored"]["ref"]}
    err, out = await call(c, "run_tool", tool="tma-solve", features=[ref], parameters={"array_offset_m": -10.0})
    assert not err, out
    p = out["features"][0]["properties"]
    assert p["solution_least_uncertain"]["time"] < p["solution"]["time"]
    assert {e["manoeuvre"] for e in p["ekelund"]} == {1, 2} and all("usable" in e for e in p["ekelund"])
    assert p["target_legs"][1]["reliability"] in ("good", "bias-prone")
    err, out = await call(c, "describe_tool", name="tma-solve")
    assert not err and "array_offset_m" in [q["name"] for q in out["parameters"]]
    err, out = await call(c, "describe_tool", name="bearing-residuals")
    assert not err and "outlier_sigma" in [q["name"] for q in out["parameters"]]


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", ws)), mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_the_trial_through_the_protocol(client: Client) -> None:
    await _the_trial_over(client)
    prompt = await client.get_prompt("tool-descriptions")
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    for words in ("solution_least_uncertain", "bias-prone", "array_offset_m", "spoilt_by"):
        assert words in text


def test_the_trial_over_stdio(ws: Path) -> None:
    async def main() -> None:
        params = StdioServerParameters(
            command=console_script("debrief-calc-mcp"), args=["--workspace", str(ws)], env=subprocess_env()
        )
        with anyio.fail_after(180):
            async with Client(params) as c:  # type: ignore[arg-type]
                await _the_trial_over(c)

    anyio.run(main)


def test_the_exercise_helper_matches_the_trial_files() -> None:
    """The rebuilt exercise is the trial's: its first cut's true bearing and the target's start
    (the trial's generator: 9 nm on 070° from 67°N 5°E)."""
    g = ex.geometry()
    assert g.bearing[0] == pytest.approx(70.0 - 0.0, abs=0.5)
    start = GEOD.Inverse(67.0, 5.0, float(g.target[0, 0]), float(g.target[0, 1]))
    assert start["s12"] == pytest.approx(9 * 1852.0, abs=0.01) and start["azi1"] == pytest.approx(70.0, abs=1e-6)
    assert at is not None
