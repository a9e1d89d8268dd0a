"""Turns as events: where a stretch of track turned, which way, by how much and how fast.

A stretch is a sequence of *pieces* (legs and one-fix segments, in order), each with the times that
bound it and its course. The course steps from piece to piece are taken in runs of one direction; a
step of at most ``course_tol`` (noise) joins the run it falls in and starts none, and a run that
turns no more than ``course_tol`` in all is no turn. A turn starts at the first piece on a new
course and ends where the last course change lands. Its times are the middles of the pieces it
turns from and to (the course of a piece is the course at its middle; a turn at one fix, between two
segments, lasts from the middle of one to the middle of the next), so its degrees over its duration
are its mean rate of turn, as the tote's rate of turn is read.

A manoeuvre that turns both ways has two figures a headline must not mix: the degrees sailed (every
turn, either way, summed) and the net change of course (round turns counted): :func:`headline`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from debrief_calc.analysis.common import KNOT_MPS, num
from debrief_calc.tracks.features import iso

__all__ = ["Piece", "course_text", "headline", "rate_of_turn", "turn_events", "turns_text"]


@dataclass(frozen=True)
class Piece:
    """A leg or a segment: the times that bound it, its course (degrees) and speed (m/s)."""

    start: float
    end: float
    course: float
    speed: float = math.nan

    @property
    def middle(self) -> float:
        return (self.start + self.end) * 0.5


def course_text(value: float) -> float | None:
    """A course to a tenth of a degree, in [0, 360)."""
    x = num(value, 1)
    return None if x is None else x % 360.0


def _step(a: float, b: float) -> float:
    return 180.0 - (180.0 - (b - a)) % 360.0


def rate_of_turn(degrees: float, start: float, end: float) -> float | None:
    """Mean rate of turn (degrees per minute) of ``degrees`` turned between two instants."""
    return num(abs(degrees) / ((end - start) / 60.0), 2) if end > start else None


def _peak(pieces: list[Piece], steps: list[float], first: int, last: int) -> dict[str, Any]:
    """The turn's fastest step: the change of course from one piece to the next over the time between
    their middles (the rate of turn a track gives between fixes), and where the pieces meet."""
    rates = [
        (abs(steps[j]) / ((pieces[j + 1].middle - pieces[j].middle) / 60.0), pieces[j].end)
        for j in range(first, last + 1)
        if pieces[j + 1].middle > pieces[j].middle
    ]
    if not rates:
        return {}
    rate, when = max(rates)
    return {"peak_rate_of_turn": num(rate, 2), "peak_rate_of_turn_time": iso(when)}


def turn_events(
    pieces: list[Piece], course_tol: float, cut: tuple[bool, bool] = (False, False), *, speeds: bool = False
) -> list[dict[str, Any]]:
    """Every turn of the stretch, in order: start, end (the middles of the pieces it turns from and
    to), duration_s, turn (port/starboard), turn_deg, course_from, course_to, rate_of_turn (deg/min:
    turn_deg over duration_s), peak_rate_of_turn and its time (the fastest step); a turn the other way smaller than
    ``course_tol`` between two turns the same way is part of them. ``cut``: whether a time window
    cut the stretch at its first piece's start, and at its last piece's end: a turn from the first
    piece or to the last then says ``cut_by_window`` "start" or "end" (it may have begun earlier or
    gone on). ``speeds``: also speed_from_kn and speed_to_kn, the speeds of those pieces."""
    steps = [_step(a.course, b.course) for a, b in itertools.pairwise(pieces)]
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
    out = []
    for first, last, total in kept:
        start, end = pieces[first].middle, pieces[last + 1].middle
        event: dict[str, Any] = {
            "start": iso(start),
            "end": iso(end),
            "duration_s": num(end - start, 3),
            "turn": "starboard" if total > 0 else "port",
            "turn_deg": num(abs(total), 1),
            "course_from": course_text(pieces[first].course),
            "course_to": course_text(pieces[last + 1].course),
            "rate_of_turn": rate_of_turn(total, start, end),
            **_peak(pieces, steps, first, last),
        }
        if speeds:
            event["speed_from_kn"] = num(pieces[first].speed / KNOT_MPS, 2)
            event["speed_to_kn"] = num(pieces[last + 1].speed / KNOT_MPS, 2)
        sides = [
            side for side, hit in (("start", cut[0] and first == 0), ("end", cut[1] and last == len(steps) - 1)) if hit
        ]
        if sides:
            event["cut_by_window"] = "both" if len(sides) == 2 else sides[0]
        out.append(event)
    return out


def headline(net: float, turns: list[dict[str, Any]], start: float, end: float) -> dict[str, Any]:
    """A manoeuvre's turn from ``start`` to ``end``, ``net`` degrees of net change of course (positive
    to starboard, round turns counted) made up of ``turns`` (:func:`turn_events`): turn (port,
    starboard, or "both ways" when its turns go both ways), turn_deg (degrees sailed: its turns summed,
    either way), net_turn and net_turn_deg (the net change of course), rate_of_turn (turn_deg over the
    time from ``start`` to ``end``)."""
    ways = {t["turn"] for t in turns}
    sailed = sum(float(t["turn_deg"]) for t in turns) if len(ways) > 1 else abs(net)
    side = "starboard" if net > 0 else "port" if net < 0 else None
    out = {
        "turn": "both ways" if len(ways) > 1 else side,
        "turn_deg": num(sailed, 1),
        "net_turn": side,
        "net_turn_deg": num(abs(net), 1),
        "rate_of_turn": rate_of_turn(sailed, start, end),
    }
    if peaks := [t for t in turns if t.get("peak_rate_of_turn") is not None]:
        fastest = max(peaks, key=lambda t: float(t["peak_rate_of_turn"]))
        out.update(
            peak_rate_of_turn=fastest["peak_rate_of_turn"], peak_rate_of_turn_time=fastest["peak_rate_of_turn_time"]
        )
    return out


def turns_text(turns: list[dict[str, Any]]) -> str:
    """'port 93° then starboard 130°'."""
    return " then ".join(f"{t['turn']} {t['turn_deg']:.0f}°" for t in turns)
