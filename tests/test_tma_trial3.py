"""What the third submarine trial (t24c) found, fixed, on its exercise rebuilt with a known truth
(``tests/_exercise_ta.py``: a hull sonar and a towed array whose true side is in the ambiguous
field). The residuals' verdict reads the side that fits and never calls a huge RMS a fit; the
stacked dots draw that side first and ring the outliers; an array alone on one ownship leg says its
side is not settled and gives both bearings; ``side`` solves an array whose side another sensor
settled; the range family takes ranges and a speed; f0's SD counts the candidate's uncertainty and a
steady offset about a given f0 is read. Through the tool, both protocol eras and the console script."""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import numpy as np
import pytest
from geographiclib.geodesic import Geodesic
from mcp import Client, StdioServerParameters
from PIL import Image

from debrief_calc.calc.series_plot import Panel, _y_range
from debrief_calc.calc.series_residuals import residual_table
from debrief_calc.calc.server import build_server
from debrief_calc.tracks.features import parse_iso
from llmem.core.config import ServerConfig
from tests import _exercise_ta as ex
from tests.conftest import MODES, call, console_script, subprocess_env
from tests.test_analysis_support import run_err, run_ok

GEOD = Geodesic.WGS84
SEED = 240331


def props(result: Any, index: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = result.features[index]["properties"]
    return out


@pytest.fixture(scope="module")
def trial() -> dict[str, dict[str, Any]]:
    return ex.features(SEED)


@pytest.fixture(scope="module")
def hull_solution(trial: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = run_ok("tma-solve", [trial["HULL"], trial["TRENCHANT"]]).features[1]
    return out


def _true_bearing(t: float) -> float:
    """The true geodesic bearing from ownship to the target at epoch ``t`` (whole seconds)."""
    return ex.geometry().bearing(round(t - ex.T0))


def _wrap(a: np.ndarray) -> np.ndarray:
    return np.asarray((a + 180.0) % 360.0 - 180.0)


# -- 1. the verdict reads the side that fits -----------------------------------------------------


def test_the_verdict_names_the_side_that_fits(trial: dict[str, dict[str, Any]]) -> None:
    p = props(run_ok("bearing-residuals", [trial["TA"], ex.truth_track(), trial["TRENCHANT"]]))
    ta = trial["TA"]["properties"]
    times = [parse_iso(t) for t in ta["timestamps"]]
    truth = np.array([_true_bearing(t) for t in times])
    amb = _wrap(np.array(ta["ambiguousBearings"]) - truth)  # independently, against GeographicLib
    rec = _wrap(np.array(ta["bearings"]) - truth)
    assert p["residual_side"] == "ambiguous"
    # the figures quoted are the fitting side's (the truth track is a fix every 30 s: ~0.05° apart)
    assert p["rms_error"] == pytest.approx(math.sqrt(float(np.mean(amb**2))), abs=0.05)
    assert math.sqrt(float(np.mean(rec**2))) > 60.0
    verdict = p["verdict"]
    assert verdict.startswith("the ambiguous bearings fit") and "recorded bearings do not" in verdict
    for m in re.finditer(r"fits: errors [^,]+, ([\d.]+)° RMS", verdict):
        assert float(m.group(1)) < 10.0  # "fits" only of a side with a small RMS


def test_a_huge_rms_is_never_called_a_fit(trial: dict[str, dict[str, Any]]) -> None:
    wrong = ex.truth_track()
    wrong["id"] = "wrong"
    wrong["geometry"]["coordinates"] = wrong["geometry"]["coordinates"][::-1]  # the target run backwards
    p = props(run_ok("bearing-residuals", [trial["TA"], wrong, trial["TRENCHANT"]]))
    assert "fits:" not in p["verdict"] and "does not fit" in p["verdict"]
    assert p["verdict"].startswith("neither side of the ambiguous array fits")


def test_the_dots_draw_the_fitting_side_first_and_ring_the_outliers(
    trial: dict[str, dict[str, Any]], hull_solution: dict[str, Any]
) -> None:
    ta = run_ok("bearing-residuals", [trial["TA"], hull_solution, trial["TRENCHANT"]]).features[0]
    _, columns, *_ = residual_table(ta, None)
    assert list(columns)[:2] == ["ambiguous_error", "error"]
    assert "fits" in columns["ambiguous_error"].label and "other side" in columns["error"].label
    hull = run_ok("bearing-residuals", [trial["HULL"], ex.truth_track(), trial["TRENCHANT"]]).features[0]
    _, columns, *_ = residual_table(hull, None)
    rings = columns["error"].rings
    assert rings is not None
    wild = {round(s / 60) + 1 for s in ex.HULL_OUTLIERS}  # a cut a minute from 06:00, numbered from 1
    assert {i + 1 for i in np.flatnonzero(rings)} == wild
    assert columns["error"].ring_label


def test_dots_stay_below_the_panel_label() -> None:
    values = np.array([-170.0, 10.0, 178.0])
    lo, hi, _ = _y_range(Panel("error", "Bearing error (°)", values, dots=True, centred=True))
    # the label band is 22 px of a 190 px panel (2·hi): the largest dot stays under it
    assert hi * (1 - 2 * 22 / 190) >= 178.0 and lo == -hi


# -- 2. an array alone on one leg: the side is not settled --------------------------------------


def test_an_unsettled_side_gives_both_bearings(trial: dict[str, dict[str, Any]]) -> None:
    p = props(run_ok("tma-solve", [trial["TA"], trial["TRENCHANT"]]))
    assert p["range_observability"] == "not observable" and p["ambiguity"]["resolved"] is False
    side = p["range_known"]["side"]
    t = parse_iso(p["reference_time"])
    true = _true_bearing(t)
    both = [side["bearing"], side["mirror_bearing"]]
    assert min(abs(float(_wrap(np.array(b - true)))) for b in both) < 3.0  # one of the two is the truth
    assert (side["bearing"] + side["mirror_bearing"]) % 360 == pytest.approx(2 * 75.0, abs=0.5)
    assert side["mirror_bearing_rate"] == pytest.approx(-side["bearing_rate"], abs=1e-3)
    summary = p["summary"]
    assert "NOT settled" in summary and f"{side['mirror_bearing']}°" in summary and "parameters.side" in summary
    assert "best fit has the target at" not in p["observability"]["reason"]
    assert "information_condition_note" in p["observability"]


def test_side_solves_the_array_on_the_side_given(trial: dict[str, dict[str, Any]]) -> None:
    p = props(run_ok("tma-solve", [trial["TA"], trial["TRENCHANT"]], {"side": "ambiguous"}))
    assert "ambiguity" not in p and "side" not in p["range_known"] and p["side_given"]["side"] == "ambiguous"
    true = _true_bearing(parse_iso(p["reference_time"]))
    assert abs(float(_wrap(np.array(p["range_known"]["bearing"] - true)))) < 3.0
    assert "NOT settled" not in p["summary"]
    err = run_err("tma-solve", [trial["HULL"], trial["TRENCHANT"]], {"side": "ambiguous"})
    assert err["details"]["field"] == "side"


def test_two_sensors_refused_with_what_to_do(trial: dict[str, dict[str, Any]]) -> None:
    err = run_err("tma-solve", [trial["HULL"], trial["TA"], trial["TRENCHANT"]])
    assert "parameters.side" in err["message"] and "bearing-residuals" in err["message"]


def test_the_family_at_a_speed_and_at_ranges(trial: dict[str, dict[str, Any]]) -> None:
    p = props(
        run_ok("tma-solve", [trial["TA"], trial["TRENCHANT"]], {"side": "ambiguous", "speed_kn": 12, "ranges": [3, 7]})
    )
    known = p["range_known"]
    assert [r["range"] for r in known["family"]] == [3.0, 7.0]
    (row,) = known["at_speed"]["rows"]
    t = round(parse_iso(p["reference_time"]) - ex.T0)
    g = ex.geometry()
    truth = GEOD.Inverse(g.own[t, 0], g.own[t, 1], g.target[t, 0], g.target[t, 1])
    # at the target's true speed the family's member is near the true target (noise: a few % in range)
    assert row["range"] == pytest.approx(truth["s12"] / 1852.0, rel=0.08)
    assert abs(float(_wrap(np.array(row["course"] - ex.TARGET_COURSE)))) < 6.0
    assert "at 12 kn it would be" in p["summary"]
    err = run_err("tma-solve", [trial["TA"], trial["TRENCHANT"]], {"ranges": [3, -1]})
    assert err["details"]["field"] == "ranges"


# -- 4. frequency figures with the candidate's uncertainty --------------------------------------


def test_f0_sd_counts_the_solution_uncertainty(trial: dict[str, dict[str, Any]], hull_solution: dict[str, Any]) -> None:
    f = props(run_ok("bearing-residuals", [trial["TA"], hull_solution, trial["TRENCHANT"]]))["frequency"]
    assert f["f0_sd_hz"] > f["f0_sd_noise_hz"] and "included" in f["f0_sd_note"]
    assert abs(f["f0_hz"] - ex.F0) <= 3 * f["f0_sd_hz"]
    exact = props(run_ok("bearing-residuals", [trial["TA"], ex.truth_track(), trial["TRENCHANT"]]))["frequency"]
    assert "taken as exact" in exact["f0_sd_note"]


def test_a_steady_offset_about_a_given_f0_is_read(trial: dict[str, dict[str, Any]]) -> None:
    features = [trial["TA"], ex.truth_track(), trial["TRENCHANT"]]
    right = props(run_ok("bearing-residuals", features, {"base_frequency": ex.F0}))["frequency"]
    assert right["verdict"].startswith("fit") and right["offset"]["steady"] is False
    off = props(run_ok("bearing-residuals", features, {"base_frequency": ex.F0 + 0.06}))["frequency"]
    assert off["offset"]["steady"] is True and off["verdict"].startswith("off: a steady offset")
    assert off["offset"]["mean_error_hz"] == pytest.approx(-0.06, abs=0.03)


# -- through the protocol ----------------------------------------------------------------------


@pytest.fixture
def ws(workspace: Path) -> Path:
    rep, hull, ta = ex.files(SEED)
    (workspace / "trenchant.rep").write_text(rep, encoding="utf-8")
    (workspace / "hull.dsf").write_text(hull, encoding="utf-8")
    (workspace / "ta.dsf").write_text(ta, encoding="utf-8")
    return workspace


async def _the_trial_over(c: Client) -> None:
    err, out = await call(
        c, "run_tool", tool="import-rep", parameters={"paths": ["trenchant.rep", "hull.dsf", "ta.dsf"]}
    )
    assert not err, out
    ids = {f["name"] if "name" in f else f["properties"]["name"]: f["ref"] for f in out["features"]}
    own, hull, ta = ({"ref": ids[k]} for k in ("TRENCHANT", "HULL", "TA"))
    err, out = await call(c, "run_tool", tool="tma-solve", features=[hull, own])
    assert not err, out
    solution = out["features"][1]
    assert out["stored"]["feature_ids"] == [solution["id"]] and "1 of the 2" in out["stored"]["holds"]
    result = await c.call_tool("render_series", {"features": [ta, {"ref": out["stored"]["ref"]}, own]})
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert answer is not None and answer["residuals"]["residual_side"] == "ambiguous"
    assert answer["residuals"]["verdict"].startswith("the ambiguous bearings fit")
    err, out = await call(c, "run_tool", tool="tma-solve", features=[ta, own], parameters={"side": "ambiguous"})
    assert not err and out["features"][0]["properties"]["side_given"]["side"] == "ambiguous"
    result = await c.call_tool(
        "render_series", {"features": [hull, {"ref": "debrief-calc:results/" + solution["id"]}, own]}
    )
    assert not result.is_error, result.structured_content  # the hull sonar's dots: its two outliers ringed
    (image,) = [b for b in result.content if isinstance(b, types.ImageContent)]
    rgb = np.asarray(Image.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")).astype(int)
    ring = (rgb[..., 0] == 200) & (rgb[..., 1] == 30) & (rgb[..., 2] == 30)
    assert ring.sum() > 20


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, ws: Path) -> AsyncIterator[Client]:
    async with Client(build_server(ServerConfig("debrief-calc-mcp", ws)), mode=request.param) as c:
        yield c


@pytest.mark.anyio
async def test_the_trial_through_the_protocol(client: Client) -> None:
    await _the_trial_over(client)
    prompt = await client.get_prompt("tool-descriptions")
    text = prompt.messages[0].content.text  # type: ignore[union-attr]
    for words in ("residual_side", "parameters.side", "speed_kn", "range_known.side"):
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


def test_the_exercise_matches_the_trial_generator() -> None:
    """The rebuilt exercise is the trial's: the target starts 12 nm on 100° from 49°30'N 8°W, and
    the array's true side is in its ambiguous field on every cut."""
    g = ex.geometry()
    start = GEOD.Inverse(49.5, -8.0, float(g.target[0, 0]), float(g.target[0, 1]))
    assert start["s12"] == pytest.approx(12 * 1852.0, abs=0.01) and start["azi1"] == pytest.approx(100.0, abs=1e-6)
    _, _, ta = ex.files(SEED, ta_sd=0.0)
    for line in ta.splitlines()[1:]:
        parts = line.split()
        t = parse_iso(
            f"20{parts[1][:2]}-{parts[1][2:4]}-{parts[1][4:6]}T{parts[2][:2]}:{parts[2][2:4]}:{parts[2][4:6]}Z"
        )
        assert abs(float(_wrap(np.array(float(parts[7]) - _true_bearing(t))))) < 0.01
