"""How ``track-legs`` splits a track into steady legs (what lies between two legs is a manoeuvre).

Motion comes from positions and times (the segments of :class:`~debrief_calc.analysis.common.Legs`
between consecutive fixes), never from stored courses or speeds; fixes closer together than
``smoothing_s`` are first thinned to the first in each ``smoothing_s`` of UTC time (and the last
fix), so that a segment's course is read over about that time whatever the fix rate and the noise
of frequent fixes is not read as turns (:func:`smoothed`). Then, each step vectorised over the
whole track:

1. consecutive segments run together while their courses differ by at most twice
   ``course_tolerance`` (the jitter of noisy positions moves a segment's course either way, so
   two neighbours differ by up to twice what either differs from the truth) and their speeds
   by at most ``speed_tolerance``;
2. a run is cut where its course strays more than twice the tolerance from the run's mean, so
   that a slow turn made of small steps is not passed off as one leg;
3. each run loses the segments at its ends whose course is more than ``course_tolerance`` from
   the run's median: the first and last minutes of a turn, which move the course a little;
4. neighbouring legs that noise parted (same course and speed within the tolerances, a gap of
   at most ``min_leg_duration_s`` crossed in a straight line at that speed) are joined again;
5. a leg holds its own tolerance: it is cut until no segment of it is more than
   ``course_tolerance`` from the leg's course.

A leg needs at least two segments (three fixes, so that it is seen to be steady) and
``min_leg_duration_s``; whatever lies between two legs is a manoeuvre.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import Legs, wrap180
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks.features import TrackData

IntArray = np.ndarray[Any, np.dtype[np.intp]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

__all__ = ["MIN_SEGMENTS", "SMOOTHING_S", "LegSplit", "smoothed"]

#: a leg is at least this many segments: one segment alone cannot show that it is steady
MIN_SEGMENTS: Final = 2
#: rounding room when a leg's segments are held within course_tolerance of its course
_SLACK_DEG: Final = 1e-9
#: the motion of frequent fixes is read over segments of about this long (s) by default
SMOOTHING_S: Final = 60.0


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
        first, last = self._hold(first, last, course_tol)
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

    def deviations(self, first: IntArray, last: IntArray) -> tuple[FloatArray, IntArray, IntArray]:
        """How far each segment of each leg is from its leg's course (degrees, signed), with the
        segments and the leg each belongs to."""
        sums = _sums(self.legs, first, last)
        course = np.degrees(np.arctan2(sums["east"], sums["north"]))
        count = last - first + 1
        seg = _span_indices(first, count)
        leg_of = np.repeat(np.arange(first.size), count)
        return wrap180(self.legs.course[seg] - course[leg_of]), seg, leg_of

    def _hold(self, first: IntArray, last: IntArray, course_tol: float) -> tuple[IntArray, IntArray]:
        """The legs cut until no segment of any is more than ``course_tol`` from its leg's course:
        a leg that strays is cut where its segments pass from one ``2 * course_tol``-wide band round
        its course to another (a straying leg always has segments either side of its course, so
        each round cuts it); pieces too short to be a leg go."""
        while first.size:
            dev, seg, leg_of = self.deviations(first, last)
            stray = np.zeros(first.size, dtype=bool)
            stray[leg_of[np.abs(dev) > course_tol + _SLACK_DEG]] = True
            if not stray.any():
                break
            band = np.floor(dev / (2.0 * course_tol) + 0.5)
            same_leg = leg_of[1:] == leg_of[:-1]
            cut = same_leg & (band[1:] != band[:-1]) & stray[leg_of[1:]]
            starts = np.concatenate(([True], ~same_leg | cut))
            ends = np.concatenate((~same_leg | cut, [True]))
            first, last = seg[starts], seg[ends]
            whole = last - first + 1 >= MIN_SEGMENTS
            first, last = first[whole], last[whole]
        return first, last

    def __len__(self) -> int:
        return int(self.first.size)

    def figures(self) -> dict[str, FloatArray]:
        """Per leg: start and end time, duration (s), distance (m), mean course (the direction
        of the sum of its segments, so each weighs by its length), the largest difference of a
        segment's course from it, mean speed (distance over duration, m/s), slowest and fastest
        segment speed, fix count, and the turn to the next leg (degrees, positive to starboard;
        NaN after the last)."""
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
        widest = np.zeros(first.size)
        if first.size:
            dev, _, leg_of = self.deviations(first, last)
            np.maximum.at(widest, leg_of, np.abs(dev))
        return {
            "start": start,
            "end": end,
            "duration": end - start,
            "deviation": widest,
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


def smoothed(track: TrackData, smoothing_s: float) -> TrackData:
    """``track`` with its fixes thinned to the first in each ``smoothing_s`` of UTC time (counted
    from the epoch, so that two windows thin alike) and the last fix; the track itself when no two
    fixes share such a span (one-minute fixes at 60 s) or ``smoothing_s`` is 0."""
    if smoothing_s <= 0 or len(track) < 3:
        return track
    bucket = np.floor(track.t / smoothing_s)
    keep = np.concatenate(([True], bucket[1:] != bucket[:-1]))
    keep[-1] = True
    if keep.all():
        return track
    depth = track.depth[keep] if track.depth is not None else None
    return replace(track, lon=track.lon[keep], lat=track.lat[keep], t=track.t[keep], depth=depth)
