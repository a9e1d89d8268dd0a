"""``track-legs``: each track split into steady legs (:mod:`debrief_calc.analysis.leg_split`), the
manoeuvres between them and every turn, each an event (:mod:`debrief_calc.analysis.turns`).

Legs, the manoeuvres between legs and the unsteady stretches at the span's ends cover the span
from its first fix to its last. Every turn is also a manoeuvre: the one between two legs, or each
turn within an unsteady stretch (``within``), so that ``manoeuvres`` is empty only when the track
did not turn. A leg, turn or stretch that runs to where a time window cut the track says so
(``cut_by_window``): it may have begun before the window or gone on after it.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    cut_by_window,
    distance_decimals,
    num,
    result_feature,
    source_ref,
    wrap180,
)
from debrief_calc.analysis.leg_split import MIN_SEGMENTS, SMOOTHING_S, IntArray, LegSplit, smoothed
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.analysis.turns import Piece, course_text, headline, turn_events, turns_text
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso, iso_many, track_data
from debrief_calc.tracks.times import clock, second

__all__ = ["SPEC"]

MAX_LEGS_DEFAULT: Final = 100
#: a leg mark drawn thin and dashed, unlike its track (debrief_render_plot reads these)
LEG_MARK_STYLE: Final = {"stroke-width": 1, "stroke-dasharray": "6 4"}
_NEITHER: Final = "neither: the same course and speed either side of fixes that were not steady"


def _clock(t: float) -> str:
    """A leg mark's time as a display shows it: the nearest second, ``HH:MM`` on the minute."""
    return clock(t, 60 if second(t) % 60 == 0 else 1)


def _cut(start: bool, end: bool) -> str | None:
    return "both" if start and end else "start" if start else "end" if end else None


def _pieces(split: LegSplit, segments: IntArray) -> list[Piece]:
    """Each of ``segments`` that has a course, as a piece."""
    legs = split.legs
    t = legs.track.t
    return [
        Piece(float(t[s]), float(t[s + 1]), float(legs.course[s]), float(legs.speed[s]))
        for s in segments.tolist()
        if np.isfinite(legs.course[s])
    ]


def _leg_piece(split: LegSplit, fig: dict[str, FloatArray], k: int, *, at_end: bool) -> Piece:
    """Leg ``k`` as a turn leaves it (its last segment's times) or reaches it (its first's), on its course."""
    t = split.legs.track.t
    seg = int(split.last[k]) if at_end else int(split.first[k])
    return Piece(float(t[seg]), float(t[seg + 1]), float(fig["course"][k]), float(fig["speed"][k]))


def _with_turns(out: dict[str, Any], turns: list[dict[str, Any]]) -> dict[str, Any]:
    """``out`` with ``turns`` and the words for them ('port 93° then starboard 130°') when it turns both ways."""
    if len(turns) > 1:
        out["turns"] = turns
        out["turns_text"] = turns_text(turns)
    return out


def _changed(turn: float, v0: float, v1: float, course_tol: float, speed_tol_kn: float) -> list[str]:
    return [w for w, big in (("course", abs(turn) > course_tol), ("speed", abs(v1 - v0) > speed_tol_kn)) if big]


def _manoeuvre(
    split: LegSplit, fig: dict[str, FloatArray], k: int, course_tol: float, speed_tol_kn: float
) -> dict[str, Any]:
    turn = float(fig["turn"][k])
    v0, v1 = float(fig["speed"][k]) / KNOT_MPS, float(fig["speed"][k + 1]) / KNOT_MPS
    changed = _changed(turn, v0, v1, course_tol, speed_tol_kn)
    leaving, reaching = _leg_piece(split, fig, k, at_end=True), _leg_piece(split, fig, k + 1, at_end=False)
    t0, t1 = leaving.middle, reaching.middle  # as a turn's: where its courses are measured
    between = np.arange(int(split.last[k]) + 1, int(split.first[k + 1]))
    turns = turn_events([leaving, *_pieces(split, between), reaching], course_tol)
    out = {
        "between_legs": [k + 1, k + 2],
        "start": iso(t0),
        "end": iso(t1),
        "duration_s": num(t1 - t0, 3),
        "changed": " and ".join(changed) if changed else _NEITHER,
        "course_from": course_text(fig["course"][k]),
        "course_to": course_text(fig["course"][k + 1]),
        **headline(turn, turns, t0, t1),
        "speed_from_kn": num(v0, 2),
        "speed_to_kn": num(v1, 2),
    }
    return _with_turns(out, turns)


def _turn_between(split: LegSplit, seg_a: int, seg_b: int, course_a: float, course_b: float) -> float:
    """The turn from ``course_a`` (at segment ``seg_a``) to ``course_b`` (at ``seg_b``) as the
    track turned between them (a round turn counts), degrees, positive to starboard."""
    path = float(split.turned[split.pos[seg_b]] - split.turned[split.pos[seg_a]])
    direct = float(wrap180(np.array([course_b - course_a]))[0])
    return direct + 360.0 * round((path - direct) / 360.0)


class _Track:
    """What the answer for one track counts against: the fixes as given (``original``), the
    (possibly thinned) track the legs were found on, and whether a window cut it at each end."""

    def __init__(self, original: TrackData, smoothing_s: float) -> None:
        self.original = original
        self.track = smoothed(original, smoothing_s)
        self.cut = (cut_by_window(original, "start"), cut_by_window(original, "end"))

    def fixes(self, start: float, end: float) -> int:
        """How many of the fixes as given lie from ``start`` to ``end``."""
        t = self.original.t
        return int(np.searchsorted(t, end, side="right") - np.searchsorted(t, start, side="left"))


def _unsteady(
    given: _Track, split: LegSplit, fig: dict[str, FloatArray], where: str, course_tol: float, speed_tol_kn: float
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The stretch of the track outside every leg at one end (``where``: ``before_first_leg``,
    ``after_last_leg``, or ``whole_span`` when there is no leg), or None when a leg reaches it: its
    times, and how course and speed changed over it (from the leg's mean to the end segment's, or
    from the first segment's to the leg's); and each turn within it, as a manoeuvre."""
    legs, t = split.legs, split.legs.track.t
    n = len(legs)
    if where == "before_first_leg":
        a, b = 0, int(split.first[0]) - 1
    elif where == "after_last_leg":
        a, b = int(split.last[-1]) + 1, n - 1
    else:
        a, b = 0, n - 1
    if b < a:
        return None, []
    inside = split.valid_idx[(split.valid_idx >= a) & (split.valid_idx <= b)]
    ends: list[tuple[int, float, float]] = []  # (segment, course, speed m/s) at the stretch's start and end
    if where == "after_last_leg":
        ends.append((int(split.last[-1]), float(fig["course"][-1]), float(fig["speed"][-1])))
    elif inside.size:
        ends.append((int(inside[0]), float(legs.course[inside[0]]), float(legs.speed[inside[0]])))
    if where == "before_first_leg":
        ends.append((int(split.first[0]), float(fig["course"][0]), float(fig["speed"][0])))
    elif inside.size:
        ends.append((int(inside[-1]), float(legs.course[inside[-1]]), float(legs.speed[inside[-1]])))
    t0, t1 = float(t[a]), float(t[b + 1])
    cut = (given.cut[0] and a == 0, given.cut[1] and b == n - 1)
    out: dict[str, Any] = {"where": where, "start": iso(t0), "end": iso(t1), "duration_s": num(t1 - t0, 3)}
    out["point_count"] = given.fixes(t0, t1)
    events: list[dict[str, Any]] = []
    if len(ends) == 2:
        (s0, c0, v0), (s1, c1, v1) = ends
        turn = _turn_between(split, s0, s1, c0, c1)
        v0, v1 = v0 / KNOT_MPS, v1 / KNOT_MPS
        changed = _changed(turn, v0, v1, course_tol, speed_tol_kn)
        pieces = _pieces(split, inside)
        if where == "before_first_leg":
            pieces.append(_leg_piece(split, fig, 0, at_end=False))
        elif where == "after_last_leg":
            pieces.insert(0, _leg_piece(split, fig, len(split) - 1, at_end=True))
        events = turn_events(pieces, course_tol, cut, speeds=True)
        turns = [{k: v for k, v in e.items() if not k.startswith("speed_")} for e in events]
        head = headline(turn, turns, t0, t1)
        del head["rate_of_turn"]  # a stretch, not a turn: its turns have their rates
        out.update(
            changed=" and ".join(changed) if changed else "neither, but not steady long enough to be a leg",
            course_from=course_text(c0),
            course_to=course_text(c1),
            **head,
            speed_from_kn=num(v0, 2),
            speed_to_kn=num(v1, 2),
        )
        _with_turns(out, turns)
    else:
        out["changed"] = "not moving: no course"
    if _cut(*cut) is not None:
        out["cut_by_window"] = _cut(*cut)
    out["note"] = {
        "before_first_leg": f"no steady leg from the span's start to the first leg ({iso(t1)})",
        "after_last_leg": f"no steady leg from the last leg's end ({iso(t0)}) to the span's end",
        "whole_span": "no steady leg anywhere in the span",
    }[where]
    return out, [
        {
            "between_legs": None,
            "within": where,
            "changed": "course",
            "net_turn": e["turn"],
            "net_turn_deg": e["turn_deg"],
            **e,
        }
        for e in events
    ]


def _legs(given: _Track, split: LegSplit, fig: dict[str, FloatArray], shown: int, unit: str) -> list[dict[str, Any]]:
    starts, ends = iso_many(fig["start"][:shown]), iso_many(fig["end"][:shown])
    dd = min(distance_decimals(unit), 3)
    last_segment = len(split.legs) - 1
    out = []
    for k in range(shown):
        leg = {
            "leg": k + 1,
            "start": starts[k],
            "end": ends[k],
            "duration_s": num(fig["duration"][k], 3),
            "course": course_text(fig["course"][k]),
            "max_course_deviation": num(fig["deviation"][k], 1),
            "speed_kn": num(fig["speed"][k] / KNOT_MPS, 2),
            "speed_range_kn": [num(fig["speed_min"][k] / KNOT_MPS, 2), num(fig["speed_max"][k] / KNOT_MPS, 2)],
            "distance": num(fig["dist"][k] / METRES_PER_UNIT[unit], dd),
            "point_count": given.fixes(float(fig["start"][k]), float(fig["end"][k])),
        }
        cut = _cut(given.cut[0] and int(split.first[k]) == 0, given.cut[1] and int(split.last[k]) == last_segment)
        if cut is not None:
            leg["cut_by_window"] = cut
        out.append(leg)
    return out


def split_track(original: TrackData, params: dict[str, Any] | Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The answer for one track, and one small mark per listed leg (when asked for)."""
    course_tol = float(params["course_tolerance"])
    speed_tol_kn = float(params["speed_tolerance"])
    unit, limit = params["distance_unit"], int(params["max_legs"])
    given = _Track(original, float(params["smoothing_s"]))
    track = given.track
    split = LegSplit(Legs(track), course_tol, speed_tol_kn * KNOT_MPS, float(params["min_leg_duration_s"]))
    fig = split.figures()
    total, shown = len(split), min(len(split), limit)
    name = track.name or track.id
    legs_out = _legs(given, split, fig, shown, unit)
    timed = params["marks_timed"]
    marks = [_mark(track, split, k, leg, name, timed) for k, leg in enumerate(legs_out)] if params["mark_legs"] else []
    manoeuvres = [_manoeuvre(split, fig, k, course_tol, speed_tol_kn) for k in range(max(shown - 1, 0))]
    # the legs not listed (max_legs) reach past the last listed one: only the start is then told here
    edges = ("whole_span",) if total == 0 else ("before_first_leg", "after_last_leg") if total == shown else ()
    edges = ("before_first_leg",) if total > shown else edges
    unsteady = []
    for where in edges:
        stretch, turns = _unsteady(given, split, fig, where, course_tol, speed_tol_kn)
        if stretch is not None:
            unsteady.append(stretch)
            manoeuvres += turns
    manoeuvres.sort(key=lambda m: (m["start"], m["end"]))
    out: dict[str, Any] = {
        "track_id": track.id,
        "track_name": track.name,
        "track_start": iso(float(track.t[0])),
        "track_end": iso(float(track.t[-1])),
        "point_count": len(original),
        "leg_count": total,
        "distance_unit": unit,
        "legs": legs_out,
        "manoeuvres": [{"manoeuvre": k + 1, **m} for k, m in enumerate(manoeuvres)],
        "unsteady": unsteady,
    }
    if len(track) < len(original):
        out["smoothed"] = {
            "smoothing_s": params["smoothing_s"],
            "fixes_used": len(track),
            "note": f"motion read over about {params['smoothing_s']:g} s: the first fix in each such span of time",
        }
    if total > shown:
        out["legs_truncated"] = True
        out["note"] = (
            f"{total} legs found, the first {shown} listed (to {legs_out[-1]['end']}) with the manoeuvres between "
            f"them; for the rest run again with max_legs up to {total} or a time window starting at "
            f"{legs_out[-1]['end']}"
        )
    elif total == 0:
        out["note"] = (
            f"no steady leg: no {MIN_SEGMENTS + 1} or more fixes spanning at least "
            f"{params['min_leg_duration_s']:g} s kept course within {course_tol:g} deg of their leg's and speed within "
            f"{speed_tol_kn:g} kn from fix to fix; loosen course_tolerance, speed_tolerance or min_leg_duration_s"
        )
    return out, marks


def _mark(track: TrackData, split: LegSplit, k: int, leg: dict[str, Any], name: str, timed: bool) -> dict[str, Any]:
    i, j = int(split.first[k]), int(split.last[k]) + 1
    t0, t1 = float(track.t[i]), float(track.t[j])
    label = f"{name} leg {k + 1}: {leg['course']:03.0f}° {leg['speed_kn']:.1f} kn {_clock(t0)}–{_clock(t1)}"
    line = [[float(track.lon[i]), float(track.lat[i])], [float(track.lon[j]), float(track.lat[j])]]
    props: dict[str, Any] = {"annotationType": "label", "text": label, "track_id": track.id, "leg": k + 1}
    if timed:  # shown while the leg is sailed, as a timed zone or point is; untimed, in every picture
        props.update(time=leg["start"], timeEnd=leg["end"])
    props.update(LEG_MARK_STYLE)
    return result_feature(label, {"type": "LineString", "coordinates": line}, props, kind="annotation")


def handle(inp: ToolInput) -> ToolOutput:
    """One result per track given; with mark_legs, a mark per leg and one addFeatures command."""
    features, sources, marks, mark_sources, warnings = [], [], [], [], []
    for i, feature in enumerate(inp.features):
        track = track_data(feature, index=i)
        answer, leg_marks = split_track(track, inp.parameters)
        colour = (feature.get("properties") or {}).get("stroke")
        for mark in leg_marks if isinstance(colour, str) else ():
            mark["properties"]["stroke"] = colour  # its track's colour, dashed
        where = {"type": "Point", "coordinates": [float(track.lon[-1]), float(track.lat[-1])]}
        features.append(result_feature(f"Legs of {track.name or track.id}", where, answer))
        sources.append([source_ref(feature, i)])
        marks += leg_marks
        mark_sources += [[source_ref(feature, i)]] * len(leg_marks)
        if "note" in answer:
            warnings.append(f"track {track.id!r}: {answer['note']}")
    commands = [{"command": "addFeatures", "payload": {"features": marks}}] if marks else []
    return ToolOutput(
        features=features + marks, feature_sources=sources + mark_sources, commands=commands, warnings=warnings
    )


SPEC = ToolSpec(
    name="track-legs",
    description=(
        "One result per track: steady legs, the manoeuvres between them and every turn, from positions and times "
        "(stored courses and speeds are ignored; fixes closer than smoothing_s are thinned, so noise in frequent "
        "fixes is not read as turns: smoothed says so). A leg: every segment within course_tolerance of the leg's "
        f"course (max_course_deviation), speed changing by at most speed_tolerance fix to fix, {MIN_SEGMENTS + 1}+ "
        "fixes, min_leg_duration_s; each {leg, start, end, duration_s, course, max_course_deviation, speed_kn, "
        "speed_range_kn, distance (distance_unit), point_count}. manoeuvres, in order, empty only when the track "
        "did not turn: {manoeuvre, between_legs [k, k+1], or null with within (before_first_leg, after_last_leg, "
        "whole_span) for a turn in an unsteady stretch, start, end (the middles of the segments it turns from and "
        "to, where their courses are measured), duration_s, changed, course_from, course_to, turn (port, "
        "starboard, or 'both ways'), turn_deg (degrees sailed, every turn either way summed; a round turn counts), "
        "net_turn and net_turn_deg (net change of course), rate_of_turn (turn_deg / duration_s, deg/min: the mean), "
        "peak_rate_of_turn and peak_rate_of_turn_time (the fastest change of course between segments, deg/min), "
        "speed_from_kn, speed_to_kn}; one that turns both ways lists turns [...] and turns_text ('port 93° then "
        "starboard 155°'). unsteady: the stretches at the span's ends in no leg {where, start, end, ..., note}; "
        "legs, the gaps between legs and unsteady cover the whole span. cut_by_window 'start'/'end' on a leg, turn or "
        "stretch a time window cut (it may have begun earlier or gone on). At most max_legs legs (legs_truncated, "
        "note). mark_legs: one annotation per leg (a dashed line labelled 'NELSON leg 2: 277° 11.2 kn "
        "10:11–10:29'), timed to its leg so a picture shows it while sailed, or with marks_timed false shown in "
        "every picture, and an addFeatures command for them (run_tool hands it a stored ref)."
    ),
    version="2.2.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    also_outputs=("annotation",),
    context_type="single",
    also_accepts=("multi",),
    parameters=(
        Parameter(
            "course_tolerance",
            "number",
            "Largest difference (degrees) between any segment's course and its leg's course.",
            default=3.0,
            unit="deg",
            minimum=0,
            maximum=90,
            exclusive_minimum=True,
        ),
        Parameter(
            "speed_tolerance",
            "number",
            "Largest speed change (knots) between consecutive segments of one leg (a gradual "
            "change stays in one leg: see speed_range_kn).",
            default=1.5,
            unit="kn",
            minimum=0,
            exclusive_minimum=True,
        ),
        Parameter(
            "min_leg_duration_s",
            "number",
            "Shortest leg, in seconds; shorter steady stretches count as part of a manoeuvre.",
            default=180.0,
            unit="s",
            minimum=0,
        ),
        Parameter(
            "smoothing_s",
            "number",
            "Motion is read over segments of about this many seconds (the first fix in each such span of time); "
            "0: every fix.",
            default=SMOOTHING_S,
            unit="s",
            minimum=0,
            maximum=3600,
        ),
        Parameter(
            "max_legs",
            "integer",
            "Most legs listed per track; leg_count always gives them all.",
            default=MAX_LEGS_DEFAULT,
            minimum=1,
            maximum=100_000,
        ),
        Parameter(
            "mark_legs",
            "boolean",
            "Also return one annotation per listed leg (line from start to end, labelled) and an "
            "addFeatures command for them.",
            default=False,
        ),
        Parameter(
            "marks_timed",
            "boolean",
            "Leg marks timed to their leg (shown while it is sailed); false: untimed, shown in every picture.",
            default=True,
        ),
        DISTANCE_UNIT_PARAM,
    ),
    handler=handle,
)
