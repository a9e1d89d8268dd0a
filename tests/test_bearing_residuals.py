"""``bearing-residuals`` through ``run_tool``: the SATC cuts against the target's true track (each
residual against GeographicLib computed here: 0.12° RMS on WGS84, sensors.md §4), cuts outside the
target's span, a candidate off in course (a trend), an ambiguous array, Doppler residuals against an
independent computation, and the errors for bad input."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from debrief_calc.tracks.features import parse_iso
from tests._sensors import (
    GEOD,
    at,
    sail,
    satc_rows,
    satc_sensor,
    satc_track,
    scenario,
    track_of,
    wrap180,
)
from tests.test_analysis_support import props, run_err, run_ok

SOUND_KN = 2951.0


def residuals(*features: dict[str, Any], **params: Any) -> tuple[dict[str, Any], Any]:
    result = run_ok("bearing-residuals", list(features), params)
    return props(result), result


def rows_of(track: dict[str, Any]) -> np.ndarray:
    t = [parse_iso(s) for s in track["properties"]["timestamps"]]
    xy = track["geometry"]["coordinates"]
    return np.column_stack((t, [c[1] for c in xy], [c[0] for c in xy]))


def glib_errors(rows: np.ndarray) -> list[float]:
    """Measured minus the geodesic bearing from each cut's origin to the truth then, by GeographicLib
    alone (the truth's duplicated first fix dropped: a time cannot lie between equal fixes)."""
    out = []
    for when, lat, lon, bearing in satc_rows():
        g = at(rows, parse_iso(when))
        out.append(wrap180(bearing - GEOD.Inverse(lat, lon, g[0], g[1])["azi1"]))
    return out


def _sphere_rms(rows: np.ndarray) -> float:
    """The cuts' RMS error against the truth with great-circle bearings (the target still placed
    by GeographicLib between its fixes, metres apart)."""
    errors = []
    for when, lat, lon, bearing in satc_rows():
        g = at(rows, parse_iso(when))
        p1, p2, dl = math.radians(lat), math.radians(g[0]), math.radians(g[1] - lon)
        y = math.sin(dl) * math.cos(p2)
        x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
        errors.append(wrap180(bearing - math.degrees(math.atan2(y, x))))
    return math.sqrt(float(np.mean(np.square(errors))))


def test_the_satc_cuts_against_the_truth_leave_the_earth_models_difference() -> None:
    answer, result = residuals(satc_sensor(), satc_track("RedTrack.rep"), satc_track("BlueTrack.rep"))
    expected = glib_errors(rows_of(satc_track("RedTrack.rep"))[1:])
    series = answer["series"]
    assert series["cut"] == list(range(1, 39))
    assert np.max(np.abs(np.array(series["error"]) - expected)) < 1e-3
    rms = math.sqrt(float(np.mean(np.square(expected))))
    assert abs(rms - 0.1225) < 0.0005  # sensors.md §4: 0.12° with WGS84 geodesics
    # … and 0.03° on the simulator's sphere (great-circle bearings here, not by the suite): the
    # difference is the earth model, not noise
    assert abs(_sphere_rms(rows_of(satc_track("RedTrack.rep"))[1:]) - 0.026) < 0.002
    assert answer["rms_error"] == pytest.approx(rms, abs=1e-4)
    assert answer["mean_error"] == pytest.approx(float(np.mean(expected)), abs=1e-4)
    assert answer["residual_count"] == 38 and "outside_target" not in answer
    assert answer["verdict"].startswith("fits")
    assert not any(s["trend"] for s in answer["stretches"]) and not any(s["step"] for s in answer["steps"])
    assert [leg["course"] for leg in answer["ownship_legs"]] == [270.0, 355.0, 329.8, 270.0, 180.1]
    assert len(series["ownship_course"]) == 38
    # the calculated bearing and range, cut 1, by GeographicLib
    when, lat, lon, _ = satc_rows()[0]
    g = at(rows_of(satc_track("RedTrack.rep"))[1:], parse_iso(when))
    inv = GEOD.Inverse(lat, lon, g[0], g[1])
    assert series["calculated"][0] == pytest.approx(inv["azi1"] % 360.0, abs=1e-3)
    assert series["range"][0] == pytest.approx(inv["s12"] / 1852.0, abs=1e-4)
    assert result.warnings == []


def test_cuts_outside_the_targets_span_are_counted_not_dropped() -> None:
    truth = satc_track("RedTrack.rep")
    short = dict(truth)
    n = 121  # to 12:43:14
    short["geometry"] = {"type": "LineString", "coordinates": truth["geometry"]["coordinates"][:n]}
    short["properties"] = {**truth["properties"], "timestamps": truth["properties"]["timestamps"][:n]}
    answer, result = residuals(satc_sensor(), short)
    late = [k + 1 for k, row in enumerate(satc_rows()) if row[0] > short["properties"]["timestamps"][-1]]
    assert answer["outside_target"]["cuts"] == late and answer["outside_target"]["count"] == len(late)
    assert answer["residual_count"] == 38 - len(late)
    assert all(answer["series"]["error"][c - 1] is None for c in late)
    assert any("outside the target" in w for w in result.warnings)
    assert "ownship_note" in answer  # no host given


def test_a_candidate_off_in_course_trends() -> None:
    """The constructed target steers 200°; a candidate from the same start on 210° leaves errors that
    grow steadily over each ownship leg: a trend, and the verdict says course or speed."""
    sensor, own, _, _, _ = scenario(noise_deg=0.2, seed=3)
    start = GEOD.Direct(50.0, -5.0, 60.0, 15000.0)
    wrong = track_of(
        sail(
            start["lat2"],
            start["lon2"],
            parse_iso(sensor["properties"]["timestamps"][0]) - 5.0,
            ((210.0, 8.0, 2400.0),),
        ),
        "wrong",
        "WRONG",
    )
    answer, _ = residuals(sensor, wrong, own)
    assert answer["verdict"].startswith("off") and "course or speed" in answer["verdict"]
    trending = [s for s in answer["stretches"] if s["trend"]]
    assert trending and all(abs(s["change_deg"]) >= 0.5 for s in trending)
    same_sensor, _, target, _, _ = scenario(noise_deg=0.2, seed=3)
    right, _ = residuals(same_sensor, target, own)
    assert right["verdict"].startswith("fits")


def test_several_candidates_need_the_target_named() -> None:
    sensor, own, target, _, _ = scenario()
    other = dict(target, id="other")
    err = run_err("bearing-residuals", [sensor, target, other, own], {})
    assert err["code"] == "INVALID_CONTEXT" and "'other'" in err["message"]
    answer, _ = residuals(sensor, target, other, own, target="target")
    assert answer["target_id"] == "target" and answer["rms_error"] < 1e-3


def test_only_the_host_is_no_target() -> None:
    err = run_err("bearing-residuals", [satc_sensor(), satc_track("BlueTrack.rep")], {})
    assert err["code"] == "INVALID_CONTEXT" and "host" in err["message"]


def test_an_ambiguous_array_says_which_bearing_fits() -> None:
    sensor, own, target, own_rows, _ = scenario(noise_deg=0.2, seed=4)
    p = sensor["properties"]
    ghosts = []
    for k, when in enumerate(p["timestamps"]):
        t = parse_iso(when)
        a, b = at(own_rows, t - 5.0), at(own_rows, t + 5.0)
        ghost = (2.0 * GEOD.Inverse(a[0], a[1], b[0], b[1])["azi1"] - p["bearings"][k]) % 360.0
        ghosts.append(ghost)
    swap = {3, 8, 15}
    for k in swap:
        p["bearings"][k - 1], ghosts[k - 1] = ghosts[k - 1], p["bearings"][k - 1]
    p["ambiguousBearings"] = ghosts
    answer, _ = residuals(sensor, target, own)
    amb = answer["ambiguity"]
    assert amb["fits_overall"] == "bearing" and set(amb["ambiguous_fit_cuts"]) == swap
    assert amb["rms_best_of_two"] < 1.0 < amb["rms_bearing"]
    assert len(answer["series"]["ambiguous_error"]) == 40


def test_frequency_residuals_against_an_independent_doppler() -> None:
    """Frequencies made here with f = f0 (C + OSL) / (C - TSL) from the known courses and speeds and
    GeographicLib's lines of sight: f0 is found again and the residuals vanish."""
    sensor, own, target, own_rows, tgt_rows = scenario()
    f0 = 150.0
    p = sensor["properties"]
    freqs = []
    for when in p["timestamps"]:
        t = parse_iso(when)
        o, g = at(own_rows, t), at(tgt_rows, t)
        inv = GEOD.Inverse(o[0], o[1], g[0], g[1])
        own_course = 0.0 if t < own_rows[0, 0] + 1200.0 else 75.0
        osl = 10.0 * math.cos(math.radians(own_course - inv["azi1"]))
        tsl = -8.0 * math.cos(math.radians(200.0 - inv["azi2"]))
        freqs.append(f0 * (SOUND_KN + osl) / (SOUND_KN - tsl))
    p["frequencies"] = freqs
    answer, _ = residuals(sensor, target, own)
    freq = answer["frequency"]
    assert freq["f0_source"] == "estimated by least squares"
    assert freq["f0_hz"] == pytest.approx(f0, abs=2e-3)
    # the cuts in ownship's turn read its course from the leg there: allow them a little more
    assert freq["rms_error_hz"] < 5e-3
    given, _ = residuals(sensor, target, own, base_frequency=151.0)
    assert given["frequency"]["f0_source"] == "given"
    assert given["frequency"]["mean_error_hz"] == pytest.approx(-1.0, abs=0.02)


def test_frequencies_without_the_host_say_what_is_missing() -> None:
    sensor, _, target, _, _ = scenario()
    sensor["properties"]["frequencies"] = [150.0] * 40
    answer, _ = residuals(sensor, target)
    assert "host track" in answer["frequency"]["note"]


def test_selected_cuts_and_a_window_agree_on_numbering() -> None:
    answer, _ = residuals(satc_sensor(), satc_track("RedTrack.rep"), cuts=["5-10", 20, "2010-01-12T13:13:14Z"])
    assert answer["series"]["cut"] == [5, 6, 7, 8, 9, 10, 20, 38]


@pytest.mark.parametrize(("params", "field"), [({"target": "nope"}, "target"), ({"cuts": ["x"]}, "cuts")])
def test_bad_parameters_name_their_field(params: dict[str, Any], field: str) -> None:
    err = run_err("bearing-residuals", [satc_sensor(), satc_track("RedTrack.rep")], params)
    assert err["details"]["field"] == field, err


def test_the_imported_cuts_are_the_files_cuts() -> None:
    """The cuts the tests use come through import-rep; they are the file's, read here alone."""
    sensor = satc_sensor()
    rows = satc_rows()
    assert sensor["properties"]["timestamps"] == [r[0] for r in rows]
    assert sensor["properties"]["bearings"] == pytest.approx([r[3] for r in rows], abs=1e-9)
    assert [c[1] for c in sensor["geometry"]["coordinates"]] == pytest.approx([r[1] for r in rows], abs=1e-9)
    assert sensor["properties"]["host"] == satc_track("BlueTrack.rep")["id"]
