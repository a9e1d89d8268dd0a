"""``tma-solve`` through ``run_tool``: the SATC tutorial's cuts against its truth (no noise and with
Gaussian noise of stated size), constructed scenarios with a known truth (the stated ellipse's
coverage over many noisy replays, outliers, an ambiguous array, the Ekelund range), the unobservable
case, the solution track that other tools take, and the errors for bad input. Truth figures come
from GeographicLib here, never from the tool."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from debrief_calc.tracks.features import parse_iso
from tests._sensors import (
    DAY,
    GEOD,
    KNOT,
    at,
    glib_course_speed,
    inside_ellipse,
    satc_sensor,
    satc_track,
    scenario,
    sensor_feature,
    wrap180,
)
from tests.test_analysis_support import props, run_err, run_ok

NM = 1852.0


def solve(*features: dict[str, Any], **params: Any) -> tuple[dict[str, Any], Any]:
    result = run_ok("tma-solve", list(features), params)
    return props(result), result


def truth_rows() -> np.ndarray:
    track = satc_track("RedTrack.rep")
    t = np.array([parse_iso(s) for s in track["properties"]["timestamps"]])
    xy = np.array(track["geometry"]["coordinates"])
    return np.column_stack((t, xy[:, 1], xy[:, 0]))


def truth_course_speed(start: str, end: str) -> tuple[float, float]:
    return glib_course_speed(truth_rows(), parse_iso(DAY + start + "Z"), parse_iso(DAY + end + "Z"))


# -- the SATC tutorial ------------------------------------------------------------------------------


def test_first_eleven_cuts_give_the_first_leg_as_the_tutorial_does() -> None:
    """Cuts 1-11 lie before the target's turn: one leg, 9.0 kn on 269° in legacy Debrief's tutorial,
    9 kn on 270° in truth; ownship turned in the period, so the range is observable."""
    answer, result = solve(satc_sensor(1, 11), satc_track("BlueTrack.rep"))
    course, speed = truth_course_speed("12:13:14", "12:29:59")
    assert abs(course - 270.0) < 0.05 and abs(speed - 9.0) < 0.05  # the truth, by GeographicLib
    assert answer["range_observability"] == "observable"
    (leg,) = answer["target_legs"]
    assert abs(wrap180(leg["course"] - course)) < 1.5 and abs(leg["speed_kn"] - speed) < 0.1
    assert round(leg["course"]) in (269, 270) and round(leg["speed_kn"], 1) == 9.0
    assert answer["turns"] == [] and answer["outliers"] == []
    sol = answer["solution"]
    assert sol["time"] == DAY + "12:29:59Z"
    # range and bearing from ownship at the reference time, against GeographicLib on the truth
    own = satc_track("BlueTrack.rep")
    own_rows = np.column_stack(
        (
            [parse_iso(s) for s in own["properties"]["timestamps"]],
            [c[1] for c in own["geometry"]["coordinates"]],
            [c[0] for c in own["geometry"]["coordinates"]],
        )
    )
    t = parse_iso(sol["time"])
    o, g = at(own_rows[1:], t), at(truth_rows()[1:], t)
    inv = GEOD.Inverse(o[0], o[1], g[0], g[1])
    assert abs(sol["range"] * NM - inv["s12"]) < 0.02 * inv["s12"]
    assert abs(wrap180(sol["bearing"] - inv["azi1"])) < 0.5
    assert sol["position_dm"].endswith("W") and "°" in sol["position_dm"]
    assert "observable" in answer["observability"]["verdict"]
    track = result.features[1]
    assert track["properties"]["trackType"] == "tma-solution"
    assert result.commands == [{"command": "addFeatures", "payload": {"features": [track]}}]


def test_all_cuts_find_the_target_turn_and_give_both_legs() -> None:
    answer, _ = solve(satc_sensor(), satc_track("BlueTrack.rep"))
    (turn,) = answer["turns"]
    assert turn["given"] is False and turn["between_cuts"] == [12, 13]
    assert DAY + "12:31:29Z" < turn["time"] < DAY + "12:32:59Z"
    first, second = answer["target_legs"]
    course2, speed2 = truth_course_speed("12:33:29", "13:13:14")
    assert abs(course2 - 224.6) < 0.05  # the truth's second leg as a WGS84 course (sensors.md §4)
    assert abs(wrap180(second["course"] - course2)) < 0.3 and abs(second["speed_kn"] - speed2) < 0.1
    assert abs(wrap180(first["course"] - 270.0)) < 1.5 and abs(first["speed_kn"] - 9.0) < 0.2
    assert answer["range_observability"] == "observable"
    assert answer["residuals"]["rms_deg"] < 0.15


def test_a_turn_given_gives_the_same_legs() -> None:
    answer, _ = solve(satc_sensor(), satc_track("BlueTrack.rep"), target_turns=[DAY + "12:32:50Z"])
    (turn,) = answer["turns"]
    assert turn == {"time": DAY + "12:32:50Z", "given": True}
    first, second = answer["target_legs"]
    assert abs(wrap180(second["course"] - 224.6)) < 0.3 and abs(wrap180(first["course"] - 270.0)) < 2.5


@pytest.mark.parametrize(("noise", "seed"), [(0.5, 1), (1.0, 2)])
def test_noisy_bearings_still_give_both_legs_within_their_stated_uncertainty(noise: float, seed: int) -> None:
    answer, _ = solve(satc_sensor(noise_deg=noise, seed=seed), satc_track("BlueTrack.rep"))
    assert len(answer["turns"]) == 1
    first, second = answer["target_legs"]
    for leg, (course, speed) in ((first, (270.0, 9.0)), (second, (224.6, 9.0))):
        assert abs(wrap180(leg["course"] - course)) < 4 * leg["course_sd"] + 0.5
        assert abs(leg["speed_kn"] - speed) < 4 * leg["speed_sd_kn"] + 0.1
    assert abs(answer["residuals"]["bearing_sd_deg"] - noise) < 0.35 * noise
    assert answer["residuals"]["bearing_sd_source"] == "estimated from the residuals"


@pytest.mark.parametrize(("noise", "seed"), [(0.5, 3), (1.0, 4)])
def test_noisy_first_leg_as_the_tutorial(noise: float, seed: int) -> None:
    answer, _ = solve(satc_sensor(1, 11, noise_deg=noise, seed=seed), satc_track("BlueTrack.rep"), max_turns=0)
    (leg,) = answer["target_legs"]
    assert abs(wrap180(leg["course"] - 270.0)) < 4 * leg["course_sd"]
    assert abs(leg["speed_kn"] - 9.0) < 4 * leg["speed_sd_kn"]


def test_cuts_on_one_steady_ownship_leg_do_not_fix_the_range() -> None:
    """Cuts 5-10 lie on ownship's 355° leg: no manoeuvre, so no range, no solution track; what is
    known instead, and the turn ownship should make."""
    answer, result = solve(satc_sensor(), satc_track("BlueTrack.rep"), cuts=["5-10"])
    assert answer["range_observability"] == "not observable"
    assert "solution" not in answer and "target_legs" not in answer
    assert len(result.features) == 1 and result.commands == []
    assert answer["cut_count"] == 6 and answer["cuts"] == [5, 10]
    assert [leg["course"] for leg in answer["observability"]["ownship_legs"]] == [355.0]
    assert answer["observability"]["ownship_manoeuvres_with_cuts_either_side"] == []
    known = answer["range_known"]
    interval = known["range_interval"]
    assert interval["low"] is None and interval["high"] is None  # any range fits
    assert known["speed_bound"]["range_high"] is not None
    family = known["family"]
    assert len(family) >= 5 and len({row["course"] for row in family}) == len(family)
    # the truth (about 2.2 nm off then, 9 kn on 270°) is one of the family: between its rows
    rows = {row["range"]: row for row in family}
    assert rows[2.0]["speed_kn"] < 10 and abs(wrap180(rows[2.0]["course"] - 270)) < 10
    assert "turn ownship" in answer["advice"]["text"] and answer["advice"]["turn_deg"] == 60
    assert "not observable" in answer["summary"] and "range not observable" in result.warnings[-1]
    # the bearing and its rate are known: against the cuts themselves
    b9, b10 = satc_sensor()["properties"]["bearings"][8:10]
    assert abs(wrap180(known["bearing"] - b10)) < 0.3
    assert known["bearing_rate"] < 0 and abs(known["bearing_rate"] - wrap180(b10 - b9) / 1.75) < 1.5


def test_a_steady_ownship_never_gives_a_range() -> None:
    """A constructed ownship on one course throughout: not observable whatever the noise or the
    earth's curvature make of the information, and no range ratio to misread."""
    sensor, own, _, _, _ = scenario(own_legs=((20.0, 10.0, 2400.0),), noise_deg=0.5, seed=5)
    answer, result = solve(sensor, own)
    assert answer["range_observability"] == "not observable" and "solution" not in answer
    assert answer["observability"]["range_sd_ratio"] is None
    assert "020.0° at 10.0 kn" in answer["observability"]["reason"]
    assert answer["range_known"]["bearing_rate"] is not None and len(result.features) == 1


def test_a_small_turn_far_off_gives_no_confident_number() -> None:
    """Ownship turns 10° with the target 25 km off and 1° noise: the best fit runs off to an absurd
    range and speed; the answer says the range is not observable, never that number."""
    sensor, own, _, _, _ = scenario(
        own_legs=((0.0, 10.0, 1200.0), (10.0, 10.0, 1200.0)), target_from=(60.0, 25000.0), noise_deg=1.0, seed=3
    )
    answer, result = solve(sensor, own, max_turns=0)
    assert answer["range_observability"] == "not observable" and "solution" not in answer
    assert result.commands == [] and "range_known" in answer and "advice" in answer


def test_a_weak_range_comes_with_the_interval_the_bearings_allow() -> None:
    """A 60° ownship turn, 25 km off, 1° noise: the range is only weakly fixed; the solution comes with
    its wide SD and the interval of ranges that fit, which holds the true range (GeographicLib)."""
    sensor, own, _, own_rows, target = scenario(
        own_legs=((0.0, 10.0, 1200.0), (60.0, 10.0, 1200.0)), target_from=(60.0, 25000.0), noise_deg=1.0, seed=3
    )
    answer, _ = solve(sensor, own, max_turns=0, distance_unit="m")
    assert answer["range_observability"] == "weak"
    t = parse_iso(answer["reference_time"])
    o, g = at(own_rows, t), at(target, t)
    truth = GEOD.Inverse(o[0], o[1], g[0], g[1])["s12"]
    interval = answer["range_known"]["range_interval"]
    assert interval["low"] < truth < interval["high"]
    sol = answer["solution"]
    assert sol["range_sd"] > 0.2 * sol["range"] and abs(sol["range"] - truth) < 3 * sol["range_sd"]
    assert "weakly" in answer["summary"]


# -- constructed scenarios with a known truth -------------------------------------------------------


def test_the_truth_falls_inside_the_stated_ellipse_as_often_as_it_says() -> None:
    """200 noisy replays (1° Gaussian noise, fixed seeds) of one observable scenario: the truth lies
    within the 95 % ellipse in 95 % of them, within binomial slack (p = 0.95, n = 200: 190 ± 3.1)."""
    inside = 0
    replays = 200
    for seed in range(replays):
        sensor, own, _, _, target = scenario(noise_deg=1.0, seed=seed)
        answer, _ = solve(sensor, own, max_turns=0, distance_unit="m")
        sol = answer["solution"]
        assert sol["ellipse"]["confidence"] == 0.95
        inside += inside_ellipse(at(target, parse_iso(sol["time"])), sol["position"], sol["ellipse"], 1.0)
    assert 180 <= inside <= 198, inside


def test_outliers_are_found_named_and_left_out() -> None:
    sensor = satc_sensor(noise_deg=0.5, seed=7)
    bearings = sensor["properties"]["bearings"]
    bearings[19] = (bearings[19] + 12.0) % 360.0  # cut 20
    bearings[29] = (bearings[29] - 15.0) % 360.0  # cut 30
    answer, result = solve(sensor, satc_track("BlueTrack.rep"))
    assert [o["cut"] for o in answer["outliers"]] == [20, 30]
    assert answer["outliers"][0]["error_deg"] == pytest.approx(12.0, abs=2.0)
    assert answer["outliers"][1]["error_deg"] == pytest.approx(-15.0, abs=2.0)
    assert any("outlier" in w and "cut 20" in w for w in result.warnings)
    assert len(answer["turns"]) == 1
    second = answer["target_legs"][1]
    assert abs(wrap180(second["course"] - 224.6)) < 4 * second["course_sd"] + 0.3


def test_no_outlier_test_when_outlier_sigma_is_zero() -> None:
    sensor = satc_sensor(1, 11, noise_deg=0.5, seed=8)
    sensor["properties"]["bearings"][5] += 10.0
    answer, _ = solve(sensor, satc_track("BlueTrack.rep"), outlier_sigma=0, max_turns=0)
    assert answer["outliers"] == [] and answer["residuals"]["cuts_fitted"] == 11


def _mirror(bearing: float, heading: float) -> float:
    return (2.0 * heading - bearing) % 360.0


def test_an_ambiguous_array_is_resolved_by_an_ownship_turn() -> None:
    """A towed array: every cut's ambiguous bearing mirrors the true one about ownship's heading.
    Across ownship's turn only the true side fits; the cuts list the true bearing first or second
    at random, and each takes the right one."""
    sensor, own, _, own_rows, target = scenario(noise_deg=0.3, seed=11, cuts=60)
    p = sensor["properties"]
    rng = np.random.default_rng(3)
    swapped = []
    for k, when in enumerate(p["timestamps"]):
        t = parse_iso(when)
        a, b = at(own_rows, t - 5.0), at(own_rows, t + 5.0)
        true = p["bearings"][k]
        ghost = _mirror(true, GEOD.Inverse(a[0], a[1], b[0], b[1])["azi1"])
        if rng.random() < 0.5:
            p["bearings"][k], p["ambiguousBearings"][k] = ghost, true
            swapped.append(k + 1)
        else:
            p["ambiguousBearings"][k] = ghost
    answer, _ = solve(sensor, own, max_turns=0)
    amb = answer["ambiguity"]
    assert amb["resolved"] is True, amb
    # where the two bearings are within a few degrees (the target near the array's axis) either fits,
    # and the cut in ownship's turn has its mirror about a heading between the two legs' (one at most)
    apart = {k + 1 for k in range(60) if abs(wrap180(p["bearings"][k] - p["ambiguousBearings"][k])) > 2.0}
    took = {c for c in amb["cuts_taking_ambiguous_bearing"] if c in apart}
    assert len(took ^ {c for c in swapped if c in apart}) <= 1 and len(apart) > 50
    assert amb["rms_mirror_deg"] > 1.3 * amb["rms_chosen_deg"]
    course, speed = glib_course_speed(target, target[0, 0], target[-1, 0])
    (leg,) = answer["target_legs"]
    assert abs(wrap180(leg["course"] - course)) < 4 * leg["course_sd"] + 0.5
    assert abs(leg["speed_kn"] - speed) < 4 * leg["speed_sd_kn"] + 0.2


def test_an_ambiguous_array_on_one_leg_is_not_resolved() -> None:
    sensor, own, _, own_rows, _ = scenario(own_legs=((20.0, 10.0, 2400.0),), noise_deg=0.3, seed=12)
    p = sensor["properties"]
    for k, when in enumerate(p["timestamps"]):
        t = parse_iso(when)
        a, b = at(own_rows, t - 5.0), at(own_rows, t + 5.0)
        p["ambiguousBearings"][k] = _mirror(p["bearings"][k], GEOD.Inverse(a[0], a[1], b[0], b[1])["azi1"])
    answer, _ = solve(sensor, own, max_turns=0)
    assert answer["ambiguity"]["resolved"] is False
    assert "not resolved" in answer["ambiguity"]["note"]
    assert answer["range_observability"] == "not observable"


def test_ekelund_range_across_an_ownship_turn() -> None:
    """Dense noise-free cuts either side of a 75° ownship turn: the Ekelund range is the true range at
    the turn (GeographicLib), within 10 %, and beside the solution's."""
    sensor, own, _, own_rows, target = scenario(cuts=120)
    answer, _ = solve(sensor, own, max_turns=0, distance_unit="m")
    (check,) = [e for e in answer["ekelund"] if e.get("range") is not None]
    t = (parse_iso(check["start"]) + parse_iso(check["end"])) / 2
    o, g = at(own_rows, t), at(target, t)
    truth = GEOD.Inverse(o[0], o[1], g[0], g[1])["s12"]
    assert abs(check["range"] - truth) < 0.1 * truth
    assert abs(check["solution_range"] - truth) < 0.01 * truth
    assert check["osa_before_kn"] != check["osa_after_kn"]


def test_the_solution_track_is_a_track_every_tool_takes() -> None:
    answer, result = solve(satc_sensor(1, 11), satc_track("BlueTrack.rep"))
    track = result.features[1]
    p = track["properties"]
    n = len(track["geometry"]["coordinates"])
    assert p["kind"] == "track" and p["trackType"] == "tma-solution" and p["host"] == "rep-sensor"
    assert len(p["timestamps"]) == len(p["courses"]) == len(p["speeds"]) == len(p["ellipses"]) == n
    assert p["timestamps"][0] == DAY + "12:13:14Z" and p["timestamps"][-1] == DAY + "12:29:59Z"
    assert set(p["ellipses"][0]) == {"orientation_deg", "semiMajorYd", "semiMinorYd"}
    assert p["solution"]["solution"]["course"] == answer["solution"]["course"]
    # its fixes lie on the answer's line: constant course and speed, checked by GeographicLib
    xy = track["geometry"]["coordinates"]
    t = [parse_iso(s) for s in p["timestamps"]]
    inv = GEOD.Inverse(xy[0][1], xy[0][0], xy[-1][1], xy[-1][0])
    assert abs(inv["s12"] / (t[-1] - t[0]) / KNOT - answer["target_legs"][0]["speed_kn"]) < 0.02
    cpa = props(run_ok("closest-approach", [track, satc_track("BlueTrack.rep")], {}))
    assert cpa["first_id"] == track["id"]
    rb = props(run_ok("range-bearing", [satc_track("BlueTrack.rep"), track], {}))
    assert rb["secondary_id"] == track["id"]


def test_a_host_track_ending_before_the_last_cut_still_gives_range_and_bearing() -> None:
    """The reference time (the last cut) falls after the host's last fix: ownship's position then is
    the cut's origin."""
    own = satc_track("BlueTrack.rep")
    short = {**own, "geometry": {"type": "LineString", "coordinates": own["geometry"]["coordinates"][:60]}}
    short["properties"] = {**own["properties"], "timestamps": own["properties"]["timestamps"][:60]}
    assert short["properties"]["timestamps"][-1] < DAY + "12:29:59Z"
    answer, _ = solve(satc_sensor(1, 11), short, max_turns=0)
    full, _ = solve(satc_sensor(1, 11), own, max_turns=0)
    assert answer["range_observability"] == "observable"
    assert answer["solution"]["range"] == pytest.approx(full["solution"]["range"], rel=1e-6)


def test_cut_accuracies_are_the_bearings_sd() -> None:
    """SENSOR3 lines state each bearing's accuracy: the fit weighs by it and the ellipse takes χ²
    quantiles (σ stated), unless the residuals scatter more."""
    sensor = satc_sensor(1, 11, noise_deg=0.5, seed=5)
    sensor["properties"]["bearingAccuracies"] = [0.5] * 11
    answer, _ = solve(sensor, satc_track("BlueTrack.rep"), max_turns=0)
    res = answer["residuals"]
    assert res["bearing_sd_source"] == "the cuts' bearing accuracies" and res["bearing_sd_deg"] is None
    assert "scatter_to_stated" in res
    given, _ = solve(
        satc_sensor(1, 11, noise_deg=0.5, seed=5), satc_track("BlueTrack.rep"), max_turns=0, bearing_sd=0.5
    )
    assert given["residuals"]["bearing_sd_source"] == "given: bearing_sd 0.5°"
    assert given["solution"]["ellipse"] == answer["solution"]["ellipse"]


def test_confidence_scales_the_ellipse() -> None:
    a, _ = solve(satc_sensor(1, 11, noise_deg=0.5, seed=9), satc_track("BlueTrack.rep"), max_turns=0)
    b, _ = solve(satc_sensor(1, 11, noise_deg=0.5, seed=9), satc_track("BlueTrack.rep"), max_turns=0, confidence=0.5)
    from scipy.stats import f

    dof = a["residuals"]["cuts_fitted"] - 4
    ratio = math.sqrt(f.ppf(0.95, 2, dof) / f.ppf(0.5, 2, dof))
    ea, eb = a["solution"]["ellipse"], b["solution"]["ellipse"]
    assert ea["semi_major"] / eb["semi_major"] == pytest.approx(ratio, rel=0.01)


# -- bad input ---------------------------------------------------------------------------------------


def test_without_the_host_track_it_says_which_track_to_add() -> None:
    err = run_err("tma-solve", [satc_sensor(), satc_track("RedTrack.rep")], {})
    assert err["code"] == "INVALID_CONTEXT"
    assert "'rep-sensor'" in err["message"] and "'rep-subject'" in err["message"]


def test_a_sensor_alone_is_told_to_bring_its_host() -> None:
    err = run_err("tma-solve", [satc_sensor()], {})
    assert err["code"] == "INVALID_CONTEXT" and "'rep-sensor'" in err["message"]
    err = run_err("bearing-residuals", [satc_sensor()], {})
    assert err["code"] == "INVALID_CONTEXT" and "target" in err["message"]


def test_too_few_cuts_are_refused() -> None:
    err = run_err("tma-solve", [satc_sensor(), satc_track("BlueTrack.rep")], {"cuts": [1, 2, 3]})
    assert err["code"] == "INVALID_CONTEXT" and "at least 5" in err["message"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"target_turns": ["2010-01-12T14:00:00Z"]}, "target_turns"),
        ({"cuts": ["12-5"]}, "cuts"),
        ({"cuts": [40]}, "cuts"),
        ({"cuts": ["2010-01-12T12:00:00Z"]}, "cuts"),
        ({"sensor": "nope"}, "sensor"),
        ({"ownship": "nope"}, "ownship"),
    ],
)
def test_bad_parameters_name_their_field(params: dict[str, Any], field: str) -> None:
    err = run_err("tma-solve", [satc_sensor(), satc_track("BlueTrack.rep")], params)
    assert err["code"] == "VALIDATION_FAILED" and err["details"]["field"] == field, err


def test_a_sensor_whose_lists_do_not_match_its_cuts_is_refused() -> None:
    sensor = sensor_feature(["2010-01-12T12:00:00Z"] * 2, [0.0, 0.0], [0.0, 0.0], [1.0, 2.0])
    sensor["properties"]["bearings"] = [1.0]
    err = run_err("tma-solve", [sensor, satc_track("BlueTrack.rep")], {})
    assert err["details"]["field"] == "properties.bearings"
