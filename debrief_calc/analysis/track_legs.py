"""``track-legs``: each track split into steady legs and the manoeuvres between them.

Motion comes from positions and times (the segments of :class:`~debrief_calc.analysis.common.Legs`
between consecutive fixes), never from stored courses or speeds. In three steps, each
vectorised over the whole track:

1. consecutive segments run together while their courses differ by at most twice
   ``course_tolerance`` (the jitter of noisy positions moves a segment's course either way, so
   two neighbours differ by up to twice what either differs from the truth) and their speeds
   by at most ``speed_tolerance``;
2. a run is cut where its course strays more than twice the tolerance from the run's mean, so
   that a slow turn made of small steps is not passed off as one leg;
3. each run loses the segments at its ends whose course is more than ``course_tolerance`` from
   the run's median: the first and last minutes of a turn, which move the course a little;
4. neighbouring legs that noise parted (same course and speed within the tolerances, a gap of
   at most ``min_leg_duration_s`` crossed in a straight line at that speed) are joined again.

A leg needs at least two segments (three fixes, so that it is seen to be steady) and
``min_leg_duration_s``; whatever lies between two legs is a manoeuvre.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import (
    DISTANCE_UNIT_PARAM,
    KNOT_MPS,
    Legs,
    distance_decimals,
    num,
    result_feature,
    source_ref,
    wrap180,
)
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso, iso_many, track_data

IntArray = np.ndarray[Any, np.dtype[np.intp]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

#: a leg is at least this many segments: one segment alone cannot show that it is steady
MIN_SEGMENTS: Final = 2
MAX_LEGS_DEFAULT: Final = 100
#: a leg mark drawn thin and dashed, unlike its track (debrief_render_plot reads these)
LEG_MARK_STYLE: Final = {"stroke-width": 1, "stroke-dasharray": "6 4"}
_NEITHER: Final = "neither: the same course and speed either side of fixes that were not steady"


class LegSplit:
    """The legs found on one track: first and last segment of each (inclusive), and the
    per-segment motion they were found from."""

    def __init__(self, legs: Legs, course_tol: float, speed_tol_mps: float, min_duration_s: float) -> None:
        self.legs = legs
        course, speed = legs.course, legs.speed
        n = len(legs)
        valid = np.isfinite(course) & np.isfinite(speed)
        self.valid_idx: IntArray = np.flatnonzero(valid)
        # the turn from each valid segment's course to the next valid one's, summed along the track
        steps = wrap180(np.diff(course[self.valid_idx])) if self.valid_idx.size else np.zeros(0)
        self.turned: FloatArray = np.concatenate(([0.0], np.cumsum(steps)))
        self.pos: IntArray = np.cumsum(valid) - 1  # segment index -> index into valid_idx

        join = np.zeros(max(n - 1, 0), dtype=bool)
        if n > 1:
            with np.errstate(invalid="ignore"):
                join = (
                    valid[:-1]
                    & valid[1:]
                    & (np.abs(wrap180(course[1:] - course[:-1])) <= 2.0 * course_tol)
                    & (np.abs(speed[1:] - speed[:-1]) <= speed_tol_mps)
                )
        first, last = _runs(valid, join)
        if first.size:
            join = _cut_drift(join, first, last, self.turned[self.pos], 2.0 * course_tol)
            first, last = _runs(valid, join)
            first, last = _trim_ends(first, last, self.turned[self.pos], course_tol)
        t = legs.track.t
        long_enough = last - first + 1 >= MIN_SEGMENTS
        first, last = first[long_enough], last[long_enough]
        if first.size > 1:
            first, last = self._merge(first, last, course_tol, speed_tol_mps, min_duration_s)
        keep = t[last + 1] - t[first] >= min_duration_s
        self.first: IntArray = first[keep]
        self.last: IntArray = last[keep]

    def _merge(
        self, first: IntArray, last: IntArray, course_tol: float, speed_tol_mps: float, max_gap_s: float
    ) -> tuple[IntArray, IntArray]:
        """Neighbouring legs made one where noise parted them: their mean courses within
        ``course_tol`` and speeds within ``speed_tol_mps`` of each other, and the few fixes between
        them (at most ``max_gap_s``) going the same way at the same speed, as the straight line
        from the one leg's last fix to the next one's first shows (a dog-leg out and back makes
        good less speed, so it stays a manoeuvre)."""
        fig = _sums(self.legs, first, last)
        course = np.degrees(np.arctan2(fig["east"], fig["north"]))
        speed = fig["dist"] / fig["duration"]
        track = self.legs.track
        a, b = last[:-1] + 1, first[1:]  # the fixes either side of each gap
        gap_s = track.t[b] - track.t[a]
        diff = wrap180(course[1:] - course[:-1])
        mid_course = course[:-1] + diff / 2
        mid_speed = (speed[:-1] + speed[1:]) / 2
        chord, azimuth, _ = geodesy.inverse(track.lat[a], track.lon[a], track.lat[b], track.lon[b])
        with np.errstate(divide="ignore", invalid="ignore"):
            made_good = np.where(gap_s > 0, chord / np.where(gap_s > 0, gap_s, 1.0), mid_speed)
        straight = (b == a) | (
            (np.abs(wrap180(azimuth - mid_course)) <= 2.0 * course_tol)
            & (np.abs(made_good - mid_speed) <= speed_tol_mps)
        )
        merge = (
            (np.abs(diff) <= course_tol)
            & (np.abs(speed[1:] - speed[:-1]) <= speed_tol_mps)
            & (gap_s <= max_gap_s)
            & straight
        )
        starts = np.concatenate(([True], ~merge))
        ends = np.concatenate((~merge, [True]))
        return first[starts], last[ends]

    def __len__(self) -> int:
        return int(self.first.size)

    def figures(self) -> dict[str, FloatArray]:
        """Per leg: start and end time, duration (s), distance (m), mean course (the direction
        of the sum of its segments, so each weighs by its length), mean speed (distance over
        duration, m/s), slowest and fastest segment speed, fix count, and the turn to the next
        leg (degrees, positive to starboard; NaN after the last)."""
        legs, first, last = self.legs, self.first, self.last
        sums = _sums(legs, first, last)
        start, end = legs.track.t[first], legs.track.t[last + 1]
        course = np.degrees(np.arctan2(sums["east"], sums["north"])) % 360.0
        count = last - first + 1
        seg = _span_indices(first, count)
        offsets = np.concatenate(([0], np.cumsum(count)[:-1])) if count.size else np.zeros(0, dtype=np.intp)
        speed = legs.speed[seg]
        turn = np.full(first.size, np.nan)
        if first.size > 1:
            # the turn the segments between made (so a round turn counts), measured from one
            # leg's mean course to the next's
            path = self.turned[self.pos[first[1:]]] - self.turned[self.pos[last[:-1]]]
            direct = wrap180(course[1:] - course[:-1])
            turn[:-1] = direct + 360.0 * np.round((path - direct) / 360.0)
        return {
            "start": start,
            "end": end,
            "duration": end - start,
            "dist": sums["dist"],
            "course": course,
            "speed": sums["dist"] / (end - start),
            "speed_min": np.minimum.reduceat(speed, offsets) if count.size else np.zeros(0),
            "speed_max": np.maximum.reduceat(speed, offsets) if count.size else np.zeros(0),
            "fixes": (count + 1).astype(np.float64),
            "turn": turn,
        }


def _sums(legs: Legs, first: IntArray, last: IntArray) -> dict[str, FloatArray]:
    """Length (m), its east and north parts (m) and duration (s) of segments ``first`` to
    ``last`` (inclusive) of each leg."""
    out = {}
    for key, values in (("dist", legs.dist), ("east", legs.east), ("north", legs.north)):
        cs = np.concatenate(([0.0], np.cumsum(values)))
        out[key] = cs[last + 1] - cs[first]
    out["duration"] = legs.track.t[last + 1] - legs.track.t[first]
    return out


def _runs(valid: BoolArray, join: BoolArray) -> tuple[IntArray, IntArray]:
    """First and last segment of each run of valid segments joined to the next."""
    starts = valid.copy()
    starts[1:] &= ~join
    ends = valid.copy()
    ends[:-1] &= ~join
    return np.flatnonzero(starts), np.flatnonzero(ends)


def _cut_drift(join: BoolArray, first: IntArray, last: IntArray, turned: FloatArray, spread: float) -> BoolArray:
    """``join`` with every run cut where its course strays more than ``spread`` degrees from
    the run's mean (in pieces ``2 * spread`` wide centred on the mean); ``turned`` is the
    course turned since the track's first segment, per segment (meaningful within a run)."""
    count = last - first + 1
    seg = _span_indices(first, count)
    run_of = np.repeat(np.arange(first.size), count)
    course = turned[seg]
    mean = np.add.reduceat(course, np.concatenate(([0], np.cumsum(count)[:-1]))) / count
    piece = np.floor((course - mean[run_of]) / (2.0 * spread) + 0.5)
    change = np.flatnonzero((np.diff(piece) != 0) & (run_of[1:] == run_of[:-1]))
    out = join.copy()
    out[seg[change]] = False
    return out


def _trim_ends(first: IntArray, last: IntArray, turned: FloatArray, tolerance: float) -> tuple[IntArray, IntArray]:
    """Each run without the segments at its ends more than ``tolerance`` degrees from its
    median course (the median segment itself always stays)."""
    count = last - first + 1
    seg = _span_indices(first, count)
    offsets = np.concatenate(([0], np.cumsum(count)[:-1]))
    run_of = np.repeat(np.arange(first.size), count)
    course = turned[seg]
    # one sort of all runs at once: each run's courses lifted clear above the run before's
    rel = course - np.minimum.reduceat(course, offsets)[run_of]
    lift = float(rel.max()) + 1.0
    ordered = np.sort(rel + run_of * lift) - run_of * lift + (course - rel)
    low, high = ordered[offsets + (count - 1) // 2], ordered[offsets + count // 2]
    near = np.abs(course - (low + high)[run_of] * 0.5) <= tolerance
    new_first = np.minimum.reduceat(np.where(near, seg, np.iinfo(np.intp).max), offsets)
    new_last = np.maximum.reduceat(np.where(near, seg, -1), offsets)
    return new_first, new_last


def _span_indices(first: IntArray, count: IntArray) -> IntArray:
    """``first[0] .. first[0]+count[0]-1, first[1] ..`` as one array."""
    total = int(count.sum())
    offsets = np.repeat(first - np.concatenate(([0], np.cumsum(count)[:-1])), count)
    out: IntArray = np.arange(total) + offsets
    return out


def _course(value: float | np.floating[Any]) -> float | None:
    """A course to a tenth of a degree, in [0, 360)."""
    x = num(value, 1)
    return None if x is None else x % 360.0


def _clock(t: float) -> str:
    text = iso(t)
    return text[11:16] if text[16:19] == ":00" and text[19:20] in ("Z", ".") else text[11:19]


def _turns(pieces: list[tuple[float, float]], course_tol: float) -> list[dict[str, Any]]:
    """The turns, in order, of a stretch of ``pieces`` (each ``(start time, course)``: legs and
    segments in order) when it turns both ways; [] when it turns one way only (its net turn says it
    all). The course steps from piece to piece are taken in runs of one direction; a step of at
    most ``course_tol`` (noise) joins the run it falls in and starts none, and a run that turns no
    more than ``course_tol`` in all is left out."""
    steps = [float(wrap180(np.array([b[1] - a[1]]))[0]) for a, b in itertools.pairwise(pieces)]
    runs: list[list[int]] = []  # [first step, last step, direction]
    for j, step in enumerate(steps):
        if abs(step) <= course_tol:
            continue
        way = 1 if step > 0 else -1
        if runs and runs[-1][2] == way:
            runs[-1][1] = j
        else:
            runs.append([j, j, way])
    kept: list[tuple[int, int, float]] = []  # (first step, last step, turn) of each turn counted
    for first, last, _ in runs:
        total = sum(steps[first : last + 1])
        if abs(total) <= course_tol:
            continue
        if kept and (kept[-1][2] > 0) == (total > 0):  # a small turn the other way between was dropped
            kept[-1] = (kept[-1][0], last, kept[-1][2] + total)
        else:
            kept.append((first, last, total))
    turns = [
        {
            "start": iso(pieces[first + 1][0]),
            "end": iso(pieces[last + 1][0]),
            "turn": "starboard" if total > 0 else "port",
            "turn_deg": num(abs(total), 1),
            "course_from": _course(pieces[first][1]),
            "course_to": _course(pieces[last + 1][1]),
        }
        for first, last, total in kept
    ]
    return turns if len(turns) > 1 else []


def _with_turns(out: dict[str, Any], turns: list[dict[str, Any]]) -> dict[str, Any]:
    """``out`` with ``turns`` and the words for them ('port 93° then starboard 130°'), when it has some."""
    if turns:
        out["turns"] = turns
        out["turns_text"] = " then ".join(f"{t['turn']} {t['turn_deg']:.0f}°" for t in turns)
    return out


def _pieces(split: LegSplit, segments: IntArray) -> list[tuple[float, float]]:
    """``(start time, course)`` of each of ``segments`` that has a course."""
    t, course = split.legs.track.t, split.legs.course
    return [(float(t[s]), float(course[s])) for s in segments.tolist() if np.isfinite(course[s])]


def _manoeuvre(
    split: LegSplit, fig: dict[str, FloatArray], k: int, course_tol: float, speed_tol_kn: float
) -> dict[str, Any]:
    turn = float(fig["turn"][k])
    v0, v1 = float(fig["speed"][k]) / KNOT_MPS, float(fig["speed"][k + 1]) / KNOT_MPS
    changed = [w for w, big in (("course", abs(turn) > course_tol), ("speed", abs(v1 - v0) > speed_tol_kn)) if big]
    t0, t1 = float(fig["end"][k]), float(fig["start"][k + 1])
    out = {
        "between_legs": [k + 1, k + 2],
        "start": iso(t0),
        "end": iso(t1),
        "duration_s": num(t1 - t0, 3),
        "changed": " and ".join(changed) if changed else _NEITHER,
        "course_from": _course(fig["course"][k]),
        "course_to": _course(fig["course"][k + 1]),
        "turn": "starboard" if turn > 0 else "port" if turn < 0 else None,
        "turn_deg": num(abs(turn), 1),
        "speed_from_kn": num(v0, 2),
        "speed_to_kn": num(v1, 2),
    }
    between = np.arange(int(split.last[k]) + 1, int(split.first[k + 1]))
    pieces = [(float(fig["start"][k]), float(fig["course"][k])), *_pieces(split, between)]
    pieces.append((float(fig["start"][k + 1]), float(fig["course"][k + 1])))
    return _with_turns(out, _turns(pieces, course_tol))


def _turn_between(split: LegSplit, seg_a: int, seg_b: int, course_a: float, course_b: float) -> float:
    """The turn from ``course_a`` (at segment ``seg_a``) to ``course_b`` (at ``seg_b``) as the
    track turned between them (a round turn counts), degrees, positive to starboard."""
    path = float(split.turned[split.pos[seg_b]] - split.turned[split.pos[seg_a]])
    direct = float(wrap180(np.array([course_b - course_a]))[0])
    return direct + 360.0 * round((path - direct) / 360.0)


def _unsteady(
    split: LegSplit, fig: dict[str, FloatArray], where: str, course_tol: float, speed_tol_kn: float
) -> dict[str, Any] | None:
    """The stretch of the track outside every leg at one end (``where``: ``before_first_leg``,
    ``after_last_leg``, or ``whole_span`` when there is no leg), or None when a leg reaches it:
    its times, and how course and speed changed over it (from the leg's mean to the end segment's,
    or from the first segment's to the leg's)."""
    legs, t = split.legs, split.legs.track.t
    n = len(legs)
    if where == "before_first_leg":
        a, b = 0, int(split.first[0]) - 1
    elif where == "after_last_leg":
        a, b = int(split.last[-1]) + 1, n - 1
    else:
        a, b = 0, n - 1
    if b < a:
        return None
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
    out: dict[str, Any] = {"where": where, "start": iso(t0), "end": iso(t1), "duration_s": num(t1 - t0, 3)}
    out["point_count"] = b - a + 2
    if len(ends) == 2:
        (s0, c0, v0), (s1, c1, v1) = ends
        turn = _turn_between(split, s0, s1, c0, c1)
        v0, v1 = v0 / KNOT_MPS, v1 / KNOT_MPS
        changed = [w for w, big in (("course", abs(turn) > course_tol), ("speed", abs(v1 - v0) > speed_tol_kn)) if big]
        out.update(
            changed=" and ".join(changed) if changed else "neither, but not steady long enough to be a leg",
            course_from=_course(c0),
            course_to=_course(c1),
            turn="starboard" if turn > 0 else "port" if turn < 0 else None,
            turn_deg=num(abs(turn), 1),
            speed_from_kn=num(v0, 2),
            speed_to_kn=num(v1, 2),
        )
        pieces = _pieces(split, inside)
        if where == "before_first_leg":
            pieces.append((float(fig["start"][0]), float(fig["course"][0])))
        elif where == "after_last_leg":
            pieces.insert(0, (float(fig["start"][-1]), float(fig["course"][-1])))
        _with_turns(out, _turns(pieces, course_tol))
    else:
        out["changed"] = "not moving: no course"
    out["note"] = {
        "before_first_leg": f"no steady leg from the span's start to the first leg ({iso(t1)})",
        "after_last_leg": f"no steady leg from the last leg's end ({iso(t0)}) to the span's end",
        "whole_span": "no steady leg anywhere in the span",
    }[where]
    return out


def split_track(track: TrackData, params: dict[str, Any] | Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The answer for one track, and one small mark per listed leg (when asked for)."""
    course_tol = float(params["course_tolerance"])
    speed_tol_kn = float(params["speed_tolerance"])
    unit, limit = params["distance_unit"], int(params["max_legs"])
    split = LegSplit(Legs(track), course_tol, speed_tol_kn * KNOT_MPS, float(params["min_leg_duration_s"]))
    fig = split.figures()
    total, shown = len(split), min(len(split), limit)
    starts, ends = iso_many(fig["start"][:shown]), iso_many(fig["end"][:shown])
    dd = min(distance_decimals(unit), 3)
    name = track.name or track.id
    legs_out, marks = [], []
    for k in range(shown):
        leg = {
            "leg": k + 1,
            "start": starts[k],
            "end": ends[k],
            "duration_s": num(fig["duration"][k], 3),
            "course": _course(fig["course"][k]),
            "speed_kn": num(fig["speed"][k] / KNOT_MPS, 2),
            "speed_range_kn": [num(fig["speed_min"][k] / KNOT_MPS, 2), num(fig["speed_max"][k] / KNOT_MPS, 2)],
            "distance": num(fig["dist"][k] / METRES_PER_UNIT[unit], dd),
            "point_count": int(fig["fixes"][k]),
        }
        legs_out.append(leg)
        if params["mark_legs"]:
            marks.append(_mark(track, split, k, leg, name))
    manoeuvres = [_manoeuvre(split, fig, k, course_tol, speed_tol_kn) for k in range(max(shown - 1, 0))]
    # the legs not listed (max_legs) reach past the last listed one: only the start is then told here
    edges = ("whole_span",) if total == 0 else ("before_first_leg", "after_last_leg") if total == shown else ()
    edges = ("before_first_leg",) if total > shown else edges
    unsteady = [u for where in edges if (u := _unsteady(split, fig, where, course_tol, speed_tol_kn)) is not None]
    out: dict[str, Any] = {
        "track_id": track.id,
        "track_name": track.name,
        "track_start": iso(float(track.t[0])),
        "track_end": iso(float(track.t[-1])),
        "point_count": len(track),
        "leg_count": total,
        "distance_unit": unit,
        "legs": legs_out,
        "manoeuvres": manoeuvres,
        "unsteady": unsteady,
    }
    if total > shown:
        out["legs_truncated"] = True
        out["note"] = (
            f"{total} legs found, the first {shown} listed (to {ends[-1]}) with the manoeuvres between them; "
            f"for the rest run again with max_legs up to {total} or a time window starting at {ends[-1]}"
        )
    elif total == 0:
        out["note"] = (
            f"no steady leg: no {MIN_SEGMENTS + 1} or more fixes spanning at least "
            f"{params['min_leg_duration_s']:g} s kept course within {course_tol:g} deg and speed within "
            f"{speed_tol_kn:g} kn from fix to fix; loosen course_tolerance, speed_tolerance or min_leg_duration_s"
        )
    return out, marks


def _mark(track: TrackData, split: LegSplit, k: int, leg: dict[str, Any], name: str) -> dict[str, Any]:
    i, j = int(split.first[k]), int(split.last[k]) + 1
    t0, t1 = float(track.t[i]), float(track.t[j])
    label = f"{name} leg {k + 1}: {leg['course']:03.0f}° {leg['speed_kn']:.1f} kn {_clock(t0)}–{_clock(t1)}"
    line = [[float(track.lon[i]), float(track.lat[i])], [float(track.lon[j]), float(track.lat[j])]]
    props: dict[str, Any] = {
        "annotationType": "label",
        "text": label,
        "track_id": track.id,
        "leg": k + 1,
        "time": leg["start"],  # shown while the leg is sailed, as a timed zone or point is
        "timeEnd": leg["end"],
        **LEG_MARK_STYLE,
    }
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
        "One track or several (one result per track): the track split into steady legs and the "
        "manoeuvres between them, from positions and times (stored courses and speeds are ignored). "
        "Consecutive one-fix segments stay in one leg while their courses differ by at most "
        "course_tolerance and their speeds by at most speed_tolerance; a leg is also cut where its "
        "course strays more than twice course_tolerance from its mean (a slow turn is not one leg), "
        f"and needs at least {MIN_SEGMENTS + 1} fixes and min_leg_duration_s. Each leg: leg number, start, end, "
        "duration_s, course (length-weighted circular mean), speed_kn (distance / duration), "
        "speed_range_kn [slowest, fastest segment], distance (in distance_unit), point_count. Each "
        "manoeuvre: between_legs, start, end, duration_s, changed (course, speed or both), "
        "course_from, course_to, turn (port/starboard) and turn_deg (as the track turned: a round "
        "turn counts), speed_from_kn, speed_to_kn. unsteady: the stretches at the span's ends that are in "
        "no leg, each where (before_first_leg, after_last_leg, or whole_span when there is no leg), start, "
        "end, duration_s, point_count, changed, course_from, course_to, turn, turn_deg, speed_from_kn, "
        "speed_to_kn (from the first segment's motion to the first leg's; from the last leg's to the last "
        "segment's), note: legs, manoeuvres and unsteady together cover the whole span. A manoeuvre or unsteady "
        "stretch that turns both ways also lists turns [{start, end, turn, turn_deg, course_from, course_to}] in "
        "order (steps within course_tolerance are noise) and turns_text ('port 93° then starboard 155°'): its "
        "turn and turn_deg are only the net. No coordinate arrays; at most max_legs legs per "
        "track (legs_truncated and a note say how to get the rest). mark_legs adds one small "
        "annotation per leg (a line from its start to its end, labelled 'NELSON leg 2: 277° "
        "11.2 kn 10:11–10:29', timed time/timeEnd to the leg so that a picture shows it while the leg is "
        "sailed, drawn thin and dashed in the track's colour: stroke-width 1, stroke-dasharray) and an "
        "addFeatures command that puts them on the plot (run_tool hands it a stored ref to them)."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="analysis-result",
    also_outputs=("annotation",),
    context_type="single",
    also_accepts=("multi",),
    parameters=(
        Parameter(
            "course_tolerance",
            "number",
            "Largest course change (degrees) between consecutive segments of one leg; a leg's "
            "segments also stay within twice this of its mean course.",
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
        DISTANCE_UNIT_PARAM,
    ),
    handler=handle,
)
