"""The tour's last two steps (run by ``tour.py``):

(h) sensors: legacy Debrief's SATC tutorial data (``tests/data/sensors``: ownship's track, its
    first 11 bearing cuts as a ``.dsf``, all 38 cuts, the target's true track) imported into a
    plot, the cuts drawn in a picture, ``tma-solve`` of the first leg's cuts and of all the cuts
    (with the target's turn), ``bearing-residuals`` against the solution and the truth, the
    solution put on the plot and drawn with its ellipses; every figure printed beside the truth
    read from the true track (``track-legs`` and ``tote`` on it);
(i) the exercise again: an hour's copy of its three ships by reference, each ref carrying the
    window (one small ``debrief_create_plot`` call, a fix at each edge), every pass of each pair
    (``closest-approach``, ``range-bearing``) and ``close-quarters``.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

from tour_transcript import YARD_M, check, dm, hm, ok, say, seconds, section

from llmem.host import Coordinator

SATC = Path(__file__).resolve().parents[1] / "tests" / "data" / "sensors"
SATC_FILES = ("BlueTrack.rep", "L1_OwnshipSensor.dsf", "BlueSensor_sparse.rep", "RedTrack.rep")
SATC_PLOT = "satc.plot.json"
#: the end of the first leg's cuts (the .dsf's last), and of the data
L1_END, SATC_END = "2010-01-12T12:29:59Z", "2010-01-12T13:13:14Z"
#: the hour round the exercise's CPA, off the minute so that the copy's edges fall between fixes
HOUR = ("2025-03-14T10:12:30Z", "2025-03-14T11:12:30Z")
HOUR_PLOT = "cpa-hour.plot.json"
CLOSE_YD = 2000.0
SOLUTION_COLOUR = "#00A050"


async def _save_picture(host: Coordinator, args: dict[str, Any], folder: Path, name: str) -> dict[str, Any]:
    r = await host.call("debrief-state:debrief_render_plot", args)
    answer = ok(r, "render")
    check(bool(r.images), "debrief_render_plot returned no image")
    png = base64.b64decode(r.images[0].data)
    (folder / name).write_bytes(png)
    cuts = "; ".join(
        f"{c['name']}: {c['cuts']} cuts, {c['active']} active, {c['drawn']} drawn" for c in answer.get("cuts", [])
    )
    say(r.duration_ms, f"debrief-state:debrief_render_plot {SATC_PLOT} at {hm(answer['time'])} → {cuts}")
    say(None, f"PNG saved: {folder / name} ({len(png)} bytes)")
    return answer


async def _satc_plot(host: Coordinator, plots: Path) -> dict[str, str]:
    """The SATC files copied beside the exercise, imported and made a plot; its ids by role."""
    (plots / "satc").mkdir(exist_ok=True)
    for name in SATC_FILES:
        shutil.copy(SATC / name, plots / "satc" / name)
    say(
        None,
        "plots/satc/: legacy Debrief's SATC tutorial (tests/data/sensors, EPL-1.0): ownship SENSOR (BlueTrack.rep), "
        "its first 11 cuts (L1_OwnshipSensor.dsf, host named OWNSHIP), all 38 (BlueSensor_sparse.rep), the "
        "target's true track SUBJECT (RedTrack.rep)",
    )
    paths = [f"satc/{n}" for n in SATC_FILES[:3]]
    r = await host.call(
        "debrief-calc:run_tool", {"tool": "import-rep", "parameters": {"paths": paths, "host": "OWNSHIP=SENSOR"}}
    )
    sensors = ok(r, "import-rep the SATC cuts")
    say(
        r.duration_ms,
        f"debrief-calc:run_tool import-rep paths={paths} host=OWNSHIP=SENSOR → {len(sensors['features'])} features; "
        f"warning: {sensors['warnings'][0][:110]}…",
    )
    r = await host.call("debrief-calc:run_tool", {"tool": "import-rep", "parameters": {"path": "satc/RedTrack.rep"}})
    truth = ok(r, "import-rep the truth")
    say(r.duration_ms, "debrief-calc:run_tool import-rep satc/RedTrack.rep → the true track")
    refs = [{"ref": run["stored"]["ref"]} for run in (sensors, truth)]
    r = await host.call(
        "debrief-state:debrief_create_plot", {"filename": SATC_PLOT, "title": "SATC tutorial", "features": refs}
    )
    say(r.duration_ms, f"debrief-state:debrief_create_plot {SATC_PLOT} → {ok(r, 'create the SATC plot')['message']}")
    r = await host.call("debrief-state:debrief_get_features", {"filename": SATC_PLOT})
    summaries = ok(r, "get the SATC features")["features"]
    tracks = {f["name"]: f["id"] for f in summaries if f["kind"] == "track"}
    cuts = {f["point_count"]: f["id"] for f in summaries if f["kind"] == "sensor"}
    say(
        r.duration_ms,
        f"debrief-state:debrief_get_features → tracks {', '.join(tracks)}; sensors of "
        + " and ".join(f"{n} cuts" for n in sorted(cuts)),
    )
    check(sorted(cuts) == [11, 38] and {"SENSOR", "SUBJECT"} <= set(tracks), "the SATC plot misses a track or cuts")
    ids = {"own": tracks["SENSOR"], "truth": tracks["SUBJECT"], "l1": cuts[11], "all": cuts[38]}
    for key, props in (("l1", {"name": "L1 cuts"}), ("all", {"name": "All cuts", "visible": False})):
        r = await host.call(
            "debrief-state:debrief_set_properties", {"filename": SATC_PLOT, "ids": [ids[key]], "properties": props}
        )
        ok(r, "name the sensors")
        say(r.duration_ms, f"debrief-state:debrief_set_properties {ids[key]} {json.dumps(props)}")
    return ids


async def _solve(host: Coordinator, ids: dict[str, str], sensor: str) -> tuple[dict[str, Any], dict[str, Any]]:
    args = {"filename": SATC_PLOT, "feature_ids": [ids[sensor], ids["own"]]}
    r = await host.call(
        "debrief-calc:run_tool", {"tool": "tma-solve", "plot": args, "parameters": {"distance_unit": "yd"}}
    )
    answer = ok(r, "tma-solve")
    p = answer["features"][0]["properties"]
    name = {"l1": "L1 cuts", "all": "All cuts"}[sensor]
    say(r.duration_ms, f"debrief-calc:run_tool tma-solve {name} → {p['range_observability']}: {p['summary']}")
    return answer, p


async def step_h(host: Coordinator, plots: Path) -> None:
    section("(h) sensors: the SATC bearing cuts, a TMA solution, checked against the true track")
    ids = await _satc_plot(host, plots)
    for call, args in (
        ("debrief_set_selection", {"selectedIds": [ids["l1"]]}),
        ("debrief_set_time", {"timeState": {"current": L1_END}}),
    ):
        r = await host.call(f"debrief-state:{call}", {"filename": SATC_PLOT, **args})
        ok(r, call)
        say(r.duration_ms, f"debrief-state:{call} {json.dumps(args)}")
    drawn = await _save_picture(host, {"filename": SATC_PLOT, "fit": "all"}, plots, "satc-cuts.png")
    (l1,) = drawn["cuts"]
    check(l1["drawn"] == 11 and len(l1["times"]) == 11, "the L1 cuts were not all drawn at the end of L1")
    say(None, f"  the selected sensor's cut times, labelled: {', '.join(hm(t) for t in l1['times'])}")

    # the truth: the target's true track's legs and turn, and its range and bearing at L1's end
    truth_ref = {"filename": SATC_PLOT, "feature_ids": [ids["truth"]]}
    r = await host.call("debrief-calc:run_tool", {"tool": "track-legs", "plot": truth_ref})
    legs_p = ok(r, "track-legs of the truth")["features"][0]["properties"]
    true_legs, (true_turn,) = legs_p["legs"], legs_p["manoeuvres"]
    say(
        r.duration_ms,
        "debrief-calc:run_tool track-legs SUBJECT (the truth) → "
        + ", ".join(f"{dm(g['course'])} {g['speed_kn']:.2f} kn {hm(g['start'])}–{hm(g['end'])}" for g in true_legs)
        + f"; turn {hm(true_turn['start'])}–{hm(true_turn['end'])}",
    )
    pair = {"filename": SATC_PLOT, "feature_ids": [ids["own"], ids["truth"]]}
    r = await host.call("debrief-calc:run_tool", {"tool": "tote", "plot": pair, "parameters": {"time": L1_END}})
    tote = ok(r, "tote of the truth")["features"][0]["properties"]
    say(
        r.duration_ms,
        f"debrief-calc:run_tool tote SENSOR / SUBJECT at {hm(L1_END)} (the truth) → {tote['range']:.0f} yd on "
        f"{dm(tote['bearing'])}",
    )

    # the first leg's cuts: the tutorial's solution
    _, p = await _solve(host, ids, "l1")
    s, leg1 = p["solution"], true_legs[0]
    say(
        None,
        f"  L1 solution: {dm(s['course'])} ± {s['course_sd']:.1f}° at {s['speed_kn']:.2f} ± {s['speed_sd_kn']:.2f} kn; "
        f"at {hm(s['time'])} {s['range']:.0f} ± {s['range_sd']:.0f} yd on {dm(s['bearing'])}",
    )
    say(
        None,
        f"  truth: {dm(leg1['course'])} at {leg1['speed_kn']:.2f} kn; {tote['range']:.0f} yd on {dm(tote['bearing'])} "
        "(checked: within 3°, 0.3 kn, 2% of the range and 0.5° of bearing)",
    )
    check(
        abs(s["course"] - leg1["course"]) < 3
        and abs(s["speed_kn"] - leg1["speed_kn"]) < 0.3
        and abs(s["range"] - tote["range"]) < 0.02 * tote["range"]
        and abs(s["bearing"] - tote["bearing"]) < 0.5,
        f"the L1 solution is not the truth: {s}",
    )

    # all the cuts: the target's turn found
    solved, p = await _solve(host, ids, "all")
    (turn,) = p["turns"]
    for leg, true in zip(p["target_legs"], true_legs, strict=True):
        say(
            None,
            f"  leg {leg['leg']}: {dm(leg['course'])} ± {leg['course_sd']:.1f}° at {leg['speed_kn']:.2f} kn "
            f"({leg['cuts']} cuts); truth {dm(true['course'])} at {true['speed_kn']:.2f} kn",
        )
    say(
        None,
        f"  turn at {hm(turn['time'])} (between cuts {turn['between_cuts'][0]} and {turn['between_cuts'][1]}); truth "
        f"{hm(true_turn['start'])}–{hm(true_turn['end'])} (checked: each leg within 3° and 0.3 kn, the turn within "
        "a minute of the true one)",
    )
    check(
        len(p["target_legs"]) == 2
        and all(
            abs(leg["course"] - true["course"]) < 3 and abs(leg["speed_kn"] - true["speed_kn"]) < 0.3
            for leg, true in zip(p["target_legs"], true_legs, strict=True)
        )
        and seconds(true_turn["start"]) - 60 <= seconds(turn["time"]) <= seconds(true_turn["end"]) + 60,
        "the solution of all the cuts is not the truth",
    )

    # the solution on the plot, and the cuts checked against it and against the truth
    (command,) = solved["commands"]
    r = await host.call("debrief-state:debrief_apply_command", {"filename": SATC_PLOT, "command": command})
    (solution,) = ok(r, "put the solution on the plot")["added_ids"]
    say(r.duration_ms, f"debrief-state:debrief_apply_command {command['command']} → the solution track {solution}")
    r = await host.call(
        "debrief-state:debrief_set_properties",
        {"filename": SATC_PLOT, "ids": [solution], "properties": {"stroke": SOLUTION_COLOUR}},
    )
    ok(r, "colour the solution")
    say(r.duration_ms, f"debrief-state:debrief_set_properties {solution} stroke {SOLUTION_COLOUR} (the truth is red)")
    for candidate, what in ((solution, "the solution"), (ids["truth"], "the truth")):
        three = {"filename": SATC_PLOT, "feature_ids": [ids["all"], candidate, ids["own"]]}
        r = await host.call("debrief-calc:run_tool", {"tool": "bearing-residuals", "plot": three})
        res = ok(r, "bearing-residuals")["features"][0]["properties"]
        say(
            r.duration_ms,
            f"debrief-calc:run_tool bearing-residuals All cuts against {what} → {res['residual_count']} cuts, "
            f"{res['rms_error']:.3f}° RMS, mean {res['mean_error']:+.3f}°: {res['verdict']}",
        )
        check(res["rms_error"] < 0.2 and res["verdict"].startswith("fits"), f"the cuts do not fit {what}")

    # the picture of it: the last half hour's cuts and the solution with its ellipses
    for key, visible in (("all", True), ("l1", False)):
        r = await host.call(
            "debrief-state:debrief_set_properties",
            {"filename": SATC_PLOT, "ids": [ids[key]], "properties": {"visible": visible}},
        )
        ok(r, "show the cuts")
    for call, args in (
        ("debrief_set_selection", {"selectedIds": [solution]}),
        ("debrief_set_time", {"timeState": {"current": SATC_END}}),
    ):
        ok(await host.call(f"debrief-state:{call}", {"filename": SATC_PLOT, **args}), call)
    say(None, f"All cuts shown, L1 cuts hidden, the solution selected, the time {hm(SATC_END)}")
    await _save_picture(host, {"filename": SATC_PLOT, "fit": "all"}, plots, "satc-solution.png")


async def step_i(host: Coordinator, exercise: str, ids: dict[str, str]) -> None:
    section("(i) an hour's copy by reference, every pass, close quarters")
    ships = ("ARGONAUT", "BLUE HERON", "CORMORANT")
    start, end = HOUR
    refs = [{"ref": f"debrief-state:plots/{exercise}#{ids[n]}", "time_start": start, "time_end": end} for n in ships]
    args = {"filename": HOUR_PLOT, "title": "The hour round the CPA", "features": refs}
    r = await host.call("debrief-state:debrief_create_plot", args)
    created = ok(r, "the windowed copy")
    say(
        r.duration_ms,
        f"debrief-state:debrief_create_plot {HOUR_PLOT}, {len(refs)} refs each with time_start/time_end "
        f"({len(json.dumps(args))} bytes) → window {hm(created['timeState']['start'])}..{hm(created['timeState']['end'])}",
    )
    r = await host.call("debrief-state:debrief_get_features", {"filename": HOUR_PLOT})
    copied = [f for f in ok(r, "read the copy")["features"] if f["kind"] == "track"]
    for f in copied:
        say(None, f"  {f['name']}: {f['point_count']} fixes {hm(f['time_start'])}–{hm(f['time_end'])}")
    check(
        len(copied) == 3 and all(hm(f["time_start"]) == hm(start) and hm(f["time_end"]) == hm(end) for f in copied),
        "the copy does not have a fix at each edge of its window",
    )
    plot = {"filename": HOUR_PLOT, "feature_ids": [ids[n] for n in ships]}

    r = await host.call(
        "debrief-calc:run_tool", {"tool": "closest-approach", "plot": plot, "parameters": {"distance_unit": "yd"}}
    )
    results = [f["properties"] for f in ok(r, "closest-approach")["features"]]
    say(
        r.duration_ms,
        f"debrief-calc:run_tool closest-approach of {len(ships)} ships on the copy → {len(results)} pairs",
    )
    for p in results:
        passes = ", ".join(f"{q['range']:.1f} yd at {hm(q['time'])}" for q in p["passes"]) or "none"
        edge = f"; {p['cpa_note']}" if p.get("at_edge") else ""
        say(None, f"  {p['name']}: {p['pass_count']} pass(es): {passes}{edge}")
    check(all(p["pass_count"] == len(p["passes"]) for p in results), "a pair's passes are not all listed")

    pair = {"filename": HOUR_PLOT, "feature_ids": [ids["ARGONAUT"], ids["BLUE HERON"]]}
    r = await host.call(
        "debrief-calc:run_tool",
        {"tool": "range-bearing", "plot": pair, "parameters": {"interval_s": 60, "distance_unit": "yd"}},
    )
    rb = ok(r, "range-bearing")["features"][0]["properties"]
    listed = ", ".join(f"{q['range']:.1f} yd at {hm(q['time'])}" for q in rb["passes"])
    say(r.duration_ms, f"debrief-calc:run_tool range-bearing ARGONAUT / BLUE HERON on the copy → passes: {listed}")
    ca = next(p for p in results if {p["first_id"], p["second_id"]} == set(pair["feature_ids"]))
    check(
        [(hm(q["time"]), round(q["range"], 1)) for q in rb["passes"]]
        == [(hm(q["time"]), round(q["range"], 1)) for q in ca["passes"]],
        "range-bearing's passes are not closest-approach's",
    )

    r = await host.call(
        "debrief-calc:run_tool",
        {
            "tool": "close-quarters",
            "plot": plot,
            "parameters": {"threshold": CLOSE_YD, "distance_unit": "yd", "pairs": "all"},
        },
    )
    quarters = [f["properties"] for f in ok(r, "close-quarters")["features"]]
    say(
        r.duration_ms,
        f"debrief-calc:run_tool close-quarters within {CLOSE_YD:.0f} yd ({CLOSE_YD * YARD_M:.0f} m), every pair → "
        f"{len(quarters)} pairs",
    )
    for q in quarters:
        periods = ", ".join(
            f"{hm(x['start'])}–{hm(x['end'])} ({x['duration_s'] / 60:.1f} min, least {x['least_range']:.1f} yd at "
            f"{hm(x['least_range_time'])})"
            for x in q["periods"]
        )
        say(None, f"  {q['name']}: {q['period_count']} period(s): {periods or q.get('note', '')}")
    check(sum(q["period_count"] for q in quarters) >= 1, "no close quarters in the hour of the CPA")
