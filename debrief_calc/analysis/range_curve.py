"""Range-bearing's quantities between fixes, as a picture draws them: the same columns as the
series (:func:`debrief_calc.analysis.range_bearing.column_values`) evaluated densely enough that the
drawn curve is the true one at the picture's resolution.

A rate sampled only at the fixes misses its peak: near a close pass the bearing rate climbs and
falls within seconds, between two fixes minutes apart. Between consecutive fix times of either
track each platform keeps to one leg, so every quantity is a smooth function of time there, and
jumps only at a fix where a platform changed course or speed. The curve is therefore evaluated

- at every fix time of either track, twice: with the motion of the legs before it, then after it
  (a turn draws as the vertical step it is, not as a slope between two fixes);
- on a uniform grid of about two points per pixel column of the picture;
- at the instants the answer marks (the CPA, every pass, the peak bearing rate, the edges of the
  close-quarters periods) and round each of them, at fractions of the grid's spacing,

so that every pixel column holds the extremes of the curve inside it, and the marked values lie
on it. Positions move along the geodesic between fixes, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import Legs
from debrief_calc.analysis.range_bearing import FIX_SLACK_S, column_values, sight
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks.features import TrackData

__all__ = ["Curve", "curve_answer", "range_curve", "step_times"]

#: points of the uniform grid per pixel column of the picture
_PER_COLUMN: Final = 2
#: round each marked instant, samples at these multiples of the grid's spacing either side
_AROUND: Final = (0.03, 0.1, 0.25, 0.5, 1.0)


@dataclass(frozen=True)
class Curve:
    """The quantities at ``times`` (increasing; a fix time twice, the legs before it first), each
    a float array (NaN where there is no value), by range-bearing's column names."""

    times: FloatArray
    values: dict[str, FloatArray]

    def __len__(self) -> int:
        return int(self.times.size)


def step_times(fixes: FloatArray, span: tuple[float, float]) -> tuple[FloatArray, FloatArray]:
    """Each fix time inside ``span`` twice, the motion read just before it and then at it (the
    legs before and after the fix), the span's ends once: ``(times, motion_times)``."""
    start, end = span
    inner = np.unique(fixes[(fixes > start) & (fixes < end)])
    times = np.concatenate(([start], np.repeat(inner, 2), [end] if end > start else []))
    motion = times.copy()
    motion[1 : 1 + 2 * inner.size : 2] -= FIX_SLACK_S  # the first of each pair: the leg before
    if end > start:
        motion[-1] = end - FIX_SLACK_S  # at the span's end, the leg that reaches it
    return times, motion


def range_curve(
    primary: TrackData,
    secondary: TrackData,
    span: tuple[float, float],
    unit: str,
    *,
    columns_px: int,
    marked: Iterable[float] = (),
) -> Curve:
    """Range-bearing's columns from ``primary`` to ``secondary`` over ``span`` (their shared time),
    sampled as the module says for a picture ``columns_px`` pixel columns wide; ``marked``: the
    instants the picture marks (each on the curve, with samples round it)."""
    start, end = span
    fixes = np.union1d(primary.t, secondary.t)
    steps, step_motion = step_times(fixes, span)
    grid = np.linspace(start, end, max(2, _PER_COLUMN * columns_px + 1))
    spacing = (end - start) / max(grid.size - 1, 1)
    keep = np.asarray([t for t in marked if start <= t <= end], dtype=np.float64)
    offsets = spacing * np.asarray([-x for x in reversed(_AROUND)] + [0.0] + list(_AROUND))
    around = (keep[:, None] + offsets[None, :]).ravel() if keep.size else np.zeros(0)
    extra = np.concatenate((grid, around))
    extra = np.unique(extra[(extra > start) & (extra < end)])
    extra = extra[~np.isin(extra, steps)]  # on a fix: the step's pair stands for it
    times = np.concatenate((steps, extra))
    motion = np.concatenate((step_motion, extra))
    order = np.lexsort((motion, times))
    times, motion = times[order], motion[order]
    s = sight(primary, Legs(primary), secondary, Legs(secondary), times, motion)
    return Curve(times, column_values(s, unit))


def curve_answer(curve: Curve, columns_px: int) -> dict[str, Any]:
    """What an answer says of a curve drawn between fixes."""
    return {
        "samples": len(curve),
        "between_fixes": True,
        "note": (
            f"drawn from the tracks between fixes ({len(curve)} points: every fix both sides of it, about "
            f"{_PER_COLUMN} a pixel column over {columns_px}, and round every instant marked), so the curve "
            "reaches the extremes it marks; the stored series (source.ref) holds the rows at the primary's fixes"
        ),
    }
