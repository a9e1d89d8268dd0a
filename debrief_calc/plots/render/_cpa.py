"""The line between two ships at one time, labelled with the range measured on the ellipsoid: in
yards up to 10,000 yd (as Debrief's tote gives a close range), beyond that in nautical miles to two
decimals, so that a closest approach can be shown; and the bounds that would show it large."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from debrief_calc.errors import validation_failed
from debrief_calc.geo.distance_text import distance_figure
from debrief_calc.geo.geodesy import interpolate_track, inverse
from debrief_calc.plots.render._common import TEXT, Box, Item, Lonlat
from debrief_calc.plots.render._labels import Label
from debrief_calc.plots.render._view import Projection
from debrief_calc.tracks.times import dtg, iso

__all__ = ["RangeLine", "clip_segment", "dashed_line", "draw_range", "range_line", "range_text"]

_YARD_M = 0.9144
_NM_M = 1852.0
_YARDS_UP_TO = 10_000.0
_M_PER_DEGREE = 60 * _NM_M  # of latitude: a nautical mile is a minute


@dataclass(frozen=True)
class RangeLine:
    ids: tuple[str, str]
    ends: tuple[Lonlat, Lonlat]
    t: float
    metres: float

    @property
    def yards(self) -> float:
        return self.metres / _YARD_M

    def bounds(self) -> list[float]:
        """``[w, s, e, n]`` about the middle of the line, 4:3, three times its length across
        (at least 600 m): the area in which the two ships and the line between them read."""
        (lon_a, lat_a), (lon_b, lat_b) = self.ends
        if lon_b - lon_a > 180.0:
            lon_b -= 360.0
        elif lon_a - lon_b > 180.0:
            lon_b += 360.0
        lon, lat = (lon_a + lon_b) / 2, (lat_a + lat_b) / 2
        half_y = max(1.5 * self.metres, 300.0) * 0.75 / _M_PER_DEGREE
        half_x = half_y * 4 / 3 / max(math.cos(math.radians(lat)), 0.05)
        west, east = ((v + 180.0) % 360.0 - 180.0 for v in (lon - half_x, lon + half_x))
        return [round(v, 6) for v in (west, max(lat - half_y, -90.0), east, min(lat + half_y, 90.0))]


def range_text(metres: float) -> tuple[float, str, str]:
    """The range as labelled: its value, unit and text: ``"119.5 yd"``, ``"1,234 yd"`` up to 10,000 yd, else ``"28.04 nm"``."""
    yards = metres / _YARD_M
    if yards < _YARDS_UP_TO:
        return round(yards, 1), "yd", f"{distance_figure(yards)} yd"
    nm = metres / _NM_M
    return round(nm, 3), "nm", f"{nm:,.2f} nm"


def range_line(items: Sequence[Item], cpa: Sequence[Any], current_time: float | None) -> RangeLine:
    """The two tracks' positions at the time asked (``(id_a, id_b)`` at the current time,
    ``(id_a, id_b, t)`` at ``t``) and the geodesic range between them."""
    if len(cpa) not in (2, 3):
        raise validation_failed("cpa", "give two track ids, and optionally a time")
    t = float(cpa[2]) if len(cpa) == 3 else current_time
    if t is None:
        raise validation_failed("cpa", "needs a time and the plot has none: give time (ISO-8601)")
    tracks = {it.id: it for it in items if it.kind == "track"}
    ends: list[Lonlat] = []
    for fid in (str(cpa[0]), str(cpa[1])):
        it = tracks.get(fid)
        if it is None or it.track is None:
            raise validation_failed("cpa", f"{fid!r} is not a shown track with times; give the ids of two tracks")
        lat, lon = interpolate_track(it.track.t, it.track.lat, it.track.lon, t)
        if math.isnan(float(lat)):
            span = f"{iso(float(it.track.t[0]))} to {iso(float(it.track.t[-1]))}"
            raise validation_failed("cpa", f"track {it.name or fid!r} has no position at {iso(t)}: it runs {span}")
        ends.append((float(lon), float(lat)))
    metres, _, _ = inverse(ends[0][1], ends[0][0], ends[1][1], ends[1][0])
    return RangeLine((str(cpa[0]), str(cpa[1])), (ends[0], ends[1]), t, float(metres))


def dashed_line(
    draw: Any,
    a: tuple[float, float],
    b: tuple[float, float],
    fill: tuple[int, int, int],
    *,
    width: int = 2,
    dash: tuple[float, float] = (8.0, 5.0),
) -> None:
    """A dashed line from ``a`` to ``b`` (pixels): ``dash`` is the pixels drawn and skipped."""
    length = math.hypot(b[0] - a[0], b[1] - a[1])

    def at(s: float) -> tuple[float, float]:
        return a[0] + (b[0] - a[0]) * s / length, a[1] + (b[1] - a[1]) * s / length

    (on, off), s = dash, 0.0
    while s < length:
        draw.line((at(s), at(min(s + on, length))), fill=fill, width=width)
        s += on + max(off, 1.0)


def clip_segment(
    a: tuple[float, float], b: tuple[float, float], box: Box
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The part of the segment inside the box (Liang–Barsky), or None: a ship far off a close
    view would otherwise cost a dash every 13 pixels all the way to it."""
    t0, t1 = 0.0, 1.0
    dx, dy = b[0] - a[0], b[1] - a[1]
    for p, q in ((-dx, a[0] - box[0]), (dx, box[2] - a[0]), (-dy, a[1] - box[1]), (dy, box[3] - a[1])):
        if p == 0:
            if q < 0:
                return None
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
    if t0 > t1:
        return None
    return (a[0] + t0 * dx, a[1] + t0 * dy), (a[0] + t1 * dx, a[1] + t1 * dy)


def draw_range(
    draw: Any, proj: Projection, line: RangeLine, current_time: float | None, labels: list[Label]
) -> list[Box]:
    """A dashed line between the ships and its range at its middle. At a time other than the
    current one the ships' markers are elsewhere, so rings mark the line's ends. Returns their boxes."""
    a, b = (proj.xy(*end) for end in line.ends)
    shown = clip_segment(a, b, proj.box)
    if shown is not None:
        dashed_line(draw, *shown, TEXT)
    text = range_text(line.metres)[2]
    boxes: list[Box] = []
    if line.t != current_time:
        text += f" at {dtg(line.t)}"
        for x, y in (a, b):
            draw.ellipse((x - 5, y - 5, x + 5, y + 5), outline=TEXT, width=2)
            boxes.append((x - 5, y - 5, x + 5, y + 5))
    d = math.hypot(b[0] - a[0], b[1] - a[1])
    along = ((b[0] - a[0]) / d, (b[1] - a[1]) / d) if d > 1e-9 else None
    middle = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    labels.append(Label(text, middle, TEXT, rank=1, clear=3, along=along, required=True))
    return boxes
