"""Bow and stern crossings: each time a secondary crossed the primary's bow (relative bearing
through 0°) or stern (through 180°), found between fixes.

Between consecutive fix times of either track each platform keeps to one leg, so the primary's
course (the tote's: its leg's) is fixed and the relative bearing moves smoothly: a crossing is a
root of it inside such a piece, refined by bisection. A jump of the relative bearing at a fix is
the primary's course stepping there, not the secondary crossing, and is no crossing.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import Legs, distance_decimals, motion_at, num, wrap180
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.dm import position_dm
from debrief_calc.geo.units import METRES_PER_UNIT
from debrief_calc.tracks.features import TrackData, iso

__all__ = ["CROSSINGS_TEXT", "crossings"]

#: where each piece between fixes is looked at for a change of side (fractions of the piece)
_LOOKS: Final = np.array([0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0])
#: the ends of a piece are looked at this far inside it, so the legs are the piece's own
_INSIDE_S: Final = 1e-4
_BISECTIONS: Final = 40

#: what the answer's crossings are, for the tools' descriptions
CROSSINGS_TEXT: Final = (
    "crossings: each time the second crossed the first's bow (relative bearing through 0) or stern (180), "
    "found between fixes {time, crossed bow/stern, from, to (starboard/port), range, bearing, course (the "
    "first's), relative_bearing_before/after a second either side}; a step of course at a fix is no crossing"
)


def _relative(
    primary: TrackData, p_legs: Legs, secondary: TrackData, times: FloatArray, legs_at: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Relative bearing (-180, 180], range, true bearing, the primary's course and the secondary's
    position at ``times``, the primary on the leg it sails at ``legs_at``."""
    p_lat, p_lon = geodesy.interpolate_track(primary.t, primary.lat, primary.lon, times)
    s_lat, s_lon = geodesy.interpolate_track(secondary.t, secondary.lat, secondary.lon, times)
    rng, bearing, _ = geodesy.inverse(p_lat, p_lon, s_lat, s_lon)
    _, course = motion_at(p_legs, legs_at)
    return wrap180(bearing - course), rng, bearing, course, s_lat, s_lon


def crossings(primary: TrackData, secondary: TrackData, span: tuple[float, float], unit: str) -> list[dict[str, Any]]:
    """Every bow and stern crossing of ``secondary`` across ``primary`` within ``span``, in time order."""
    p_legs = Legs(primary)
    edges = np.unique(np.concatenate([primary.t, secondary.t, np.asarray(span, dtype=float)]))
    edges = edges[(edges >= span[0]) & (edges <= span[1])]
    if edges.size < 2:
        return []
    lo, hi = edges[:-1], edges[1:]
    width = hi - lo
    inset = np.minimum(_INSIDE_S, width / 4)
    times = (lo + inset)[:, None] + (width - 2 * inset)[:, None] * _LOOKS[None, :]
    middle = np.repeat(((lo + hi) / 2)[:, None], _LOOKS.size, axis=1)
    rel = _relative(primary, p_legs, secondary, times.ravel(), middle.ravel())[0].reshape(times.shape)
    a, b = rel[:, :-1], rel[:, 1:]
    flips = np.isfinite(a) & np.isfinite(b) & (np.sign(a) != np.sign(b)) & (a != 0)
    piece, step = np.nonzero(flips)
    if not piece.size:
        return []
    stern = np.abs(b[piece, step] - a[piece, step]) > 180.0
    t0, t1 = times[piece, step].copy(), times[piece, step + 1].copy()
    legs_at = (lo[piece] + hi[piece]) / 2
    offset = np.where(stern, 180.0, 0.0)  # a stern crossing is a root of the bearing from astern
    first = wrap180(a[piece, step] - offset)
    for _ in range(_BISECTIONS):
        mid = (t0 + t1) / 2
        value = wrap180(_relative(primary, p_legs, secondary, mid, legs_at)[0] - offset)
        same = np.sign(value) == np.sign(first)
        t0, t1 = np.where(same, mid, t0), np.where(same, t1, mid)
    when = (t0 + t1) / 2
    _, rng, bearing, course, s_lat, s_lon = _relative(primary, p_legs, secondary, when, legs_at)
    before = _relative(primary, p_legs, secondary, np.maximum(when - 1.0, lo[piece]), legs_at)[0]
    after = _relative(primary, p_legs, secondary, np.minimum(when + 1.0, hi[piece]), legs_at)[0]
    decimals = distance_decimals(unit)
    out = []
    for k in np.argsort(when, kind="stable").tolist():
        came_from = "starboard" if a[piece[k], step[k]] > 0 else "port"
        out.append(
            {
                "time": iso(float(when[k])),
                "crossed": "stern" if stern[k] else "bow",
                "from": came_from,
                "to": "port" if came_from == "starboard" else "starboard",
                "range": num(rng[k] / METRES_PER_UNIT[unit], decimals),
                "bearing": num(bearing[k], 4),
                "course": num(course[k], 4),
                "relative_bearing_before": num(before[k], 4),
                "relative_bearing_after": num(after[k], 4),
                "position_dm": position_dm([float(s_lon[k]), float(s_lat[k])]),
            }
        )
    return out
