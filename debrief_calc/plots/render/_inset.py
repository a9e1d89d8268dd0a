"""A magnified box of the range line when the line is too short to see at the picture's scale
(two ships at a closest approach a few pixels apart): where it hides the fewest track pixels (a
free corner when there is one), the tracks of the few minutes around the line's time (before it
solid, after it faint, or hidden with the future), the ships' markers and short names, the
dashed line with its range, the time and span, and a scale bar of its own; a thin leader joins it
to the ships on the map."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from debrief_calc.plots.render._common import BACKGROUND, FAINT, TEXT, Box, blend, ink, nice
from debrief_calc.plots.render._cpa import RangeLine, clip_segment, dashed_line, range_text
from debrief_calc.plots.render._labels import Label, Placer, font
from debrief_calc.plots.render._tracks import TrackView, marker, track_views
from debrief_calc.plots.render._view import Projection
from debrief_calc.tracks.times import dtg

__all__ = ["INSET_BELOW", "SPAN_S", "draw_inset", "free_spot"]

INSET_BELOW = 15.0  # pixels: a range line shorter than this on the map gets an inset
_M_PER_DEGREE = 1852.0 * 60
_YARD_M = 0.9144
_TITLE, _FOOT = 16, 20  # the inset's top strip (the time) and bottom strip (the scale bar)
SPAN_S = 300.0  # the inset draws the tracks this long either side of the line's time
_STEP = 2.0  # pixels between the points a track is sampled at, to count what a box would hide
_SHIPS_CLEAR = 14.0  # pixels the inset keeps from the ships themselves


def _side(box: Box) -> int:
    return int(min(max(min(box[2] - box[0], box[3] - box[1]) * 0.36, 130), 230))


def _lines(draw: Any, line: tuple[Any, Any], fill: tuple[int, int, int], width: int, side: int) -> None:
    """The segments of a polyline that cross the inset, each cut to it (a track reaches far
    beyond so small an area)."""
    x, y = line
    if x.size < 2:
        return
    lo, hi = -20.0, side + 20.0
    x0, x1, y0, y1 = x[:-1], x[1:], y[:-1], y[1:]
    near = (np.maximum(x0, x1) >= lo) & (np.minimum(x0, x1) <= hi) & (np.maximum(y0, y1) >= lo)
    near &= np.minimum(y0, y1) <= hi
    for i in np.flatnonzero(near).tolist():
        cut = clip_segment((float(x0[i]), float(y0[i])), (float(x1[i]), float(y1[i])), (lo, lo, hi, hi))
        if cut is not None:
            draw.line(cut, fill=fill, width=width, joint="curve")


def draw_inset(
    img: Any,
    proj: Projection,
    line: RangeLine,
    views: list[TrackView],
    show_future: bool,
    clutter: Any,
    areas: list[Box],
    taken: list[Box],
) -> Box | None:
    """Draw the inset in the corner of the map that hides least, never over the ships nor a
    ``taken`` box (the legend); its box, or None when it does not fit."""
    from PIL import Image, ImageDraw

    a, b = (proj.xy(*end) for end in line.ends)
    middle = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    side = _side(proj.box)
    corner = free_spot(proj.box, side, np.concatenate((clutter, _sampled(views))), areas, taken, middle)
    if corner is None:
        return None
    x0, y0 = corner
    # the inset's own area: the line across about 45% of it (at least 20 m), about its middle
    metres_per_px = max(line.metres, 20.0) / (0.45 * side)
    (lon_a, lat_a), (lon_b, lat_b) = line.ends
    lon_b += 360.0 if lon_a - lon_b > 180.0 else -360.0 if lon_b - lon_a > 180.0 else 0.0
    lon, lat = (lon_a + lon_b) / 2, (lat_a + lat_b) / 2
    half_y = side / 2 * metres_per_px / _M_PER_DEGREE
    half_x = half_y / max(math.cos(math.radians(lat)), 0.05)
    shift = (_TITLE - _FOOT) / 2 * metres_per_px / _M_PER_DEGREE  # the ships midway between the strips
    near = Projection([lon - half_x, lat - half_y + shift, lon + half_x, lat + half_y + shift], (0, 0, side, side))

    sub = Image.new("RGB", (side, side), BACKGROUND)
    draw = ImageDraw.Draw(sub, "RGBA")
    placer = Placer((2.0, _TITLE, side - 2.0, side - _FOOT))
    labels: list[Label] = []
    for v in track_views([v.item for v in views], near):
        past, future = _around(v, line.t, SPAN_S)
        for part in future if show_future else ():
            _lines(draw, part, blend(v.item.colour, BACKGROUND, FAINT), 2, side)
        for part in past:
            _lines(draw, part, v.item.colour, 3, side)
    ends = []
    for v in track_views([v.item for v in views if v.item.id in line.ids], near):
        if v.covers(line.t):
            sx, sy = (float(c) for c in v.at(line.t))
            ends.append((sx, sy))
            placer.occupy(marker(draw, sx, sy, v.heading(line.t), v.item, 1.0))
            if v.item.short:
                labels.append(Label(v.item.short, (sx, sy), ink(v.item.colour), rank=1, size=11, clear=13))
    if len(ends) == 2:
        dashed_line(draw, ends[0], ends[1], TEXT)
        d = math.hypot(ends[1][0] - ends[0][0], ends[1][1] - ends[0][1])
        along = ((ends[1][0] - ends[0][0]) / d, (ends[1][1] - ends[0][1]) / d) if d > 1e-9 else None
        mid = ((ends[0][0] + ends[1][0]) / 2, (ends[0][1] + ends[1][1]) / 2)
        labels.insert(0, Label(range_text(line.metres)[2], mid, TEXT, rank=0, clear=3, along=along, required=True))
    for label in labels:
        placer.place(label)
    placer.draw(draw)
    _frame(draw, side, line, metres_per_px)

    img.paste(sub, (round(x0), round(y0)))
    box = (round(x0), round(y0), round(x0) + side, round(y0) + side)
    whole = ImageDraw.Draw(img, "RGBA")
    whole.rectangle(box, outline=(60, 60, 70), width=1)
    _leader(whole, middle, box)
    return float(box[0]), float(box[1]), float(box[2]), float(box[3])


def _around(v: TrackView, t: float, span: float) -> tuple[list[Any], list[Any]]:
    """The track's parts ``span`` seconds before ``t`` and after it, each cut where the window
    ends (a track without times: whole, as the map draws it)."""
    if v.t is None:
        return v.split(t)
    past: list[Any] = []
    future: list[Any] = []
    for part in v.parts:
        times, x, y = v.t[part], v.x[part], v.y[part]
        for start, end, out in ((t - span, t, past), (t, t + span, future)):
            lo, hi = max(start, float(times[0])), min(end, float(times[-1]))
            if hi <= lo:
                continue
            inner = (times > lo) & (times < hi)
            q = np.concatenate(([lo], times[inner], [hi]))
            out.append((np.interp(q, times, x), np.interp(q, times, y)))
    return past, future


def _sampled(views: list[TrackView]) -> Any:
    """Every track as points ``_STEP`` pixels apart along its lines: what a box over it hides."""
    out = [np.empty((0, 2))]
    for v in views:
        for part in v.parts:
            x, y = v.x[part], v.y[part]
            if x.size < 2:
                out.append(np.column_stack((x, y)))
                continue
            length = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))))
            at = np.arange(0.0, float(length[-1]) + _STEP, _STEP)
            out.append(np.column_stack((np.interp(at, length, x), np.interp(at, length, y))))
    return np.concatenate(out)


def free_spot(
    box: Box, side: int, clutter: Any, areas: list[Box], taken: list[Box], ships: tuple[float, float]
) -> tuple[float, float] | None:
    """The top-left of the ``side`` square in ``box`` that hides the fewest ``clutter`` points
    (every 50 square pixels of ``areas`` one more), never over a ``taken`` box nor within
    ``_SHIPS_CLEAR`` of the ``ships``; of equals, the one nearest a corner. None when none fits."""
    pad = 6.0
    x_lo, y_lo, x_hi, y_hi = box[0] + pad, box[1] + pad, box[2] - pad - side, box[3] - pad - side
    if x_hi < x_lo or y_hi < y_lo:
        return None
    w, h = int(box[2] - box[0]) + 1, int(box[3] - box[1]) + 1
    grid = np.zeros((h + 1, w + 1))
    pts = np.asarray(clutter, dtype=float).reshape(-1, 2)
    cols = np.clip((pts[:, 0] - box[0]).astype(int), 0, w - 1)
    rows = np.clip((pts[:, 1] - box[1]).astype(int), 0, h - 1)
    np.add.at(grid, (rows + 1, cols + 1), 1.0)
    for a in areas:  # an area's pixels weigh 1/50 each
        c0, c1 = (int(np.clip(v - box[0], 0, w)) for v in (a[0], a[2]))
        r0, r1 = (int(np.clip(v - box[1], 0, h)) for v in (a[1], a[3]))
        grid[r0 + 1 : r1 + 1, c0 + 1 : c1 + 1] += 1 / 50
    total = grid.cumsum(0).cumsum(1)
    xs = np.append(np.arange(x_lo, x_hi, 4.0), x_hi)
    ys = np.append(np.arange(y_lo, y_hi, 4.0), y_hi)
    gx, gy = np.meshgrid(xs, ys)
    c0, r0 = (gx - box[0]).astype(int), (gy - box[1]).astype(int)
    c1, r1 = np.minimum(c0 + side, w), np.minimum(r0 + side, h)
    hidden = total[r1, c1] - total[r0, c1] - total[r1, c0] + total[r0, c0]
    near_ships = (
        (gx - _SHIPS_CLEAR <= ships[0])
        & (ships[0] <= gx + side + _SHIPS_CLEAR)
        & (gy - _SHIPS_CLEAR <= ships[1])
        & (ships[1] <= gy + side + _SHIPS_CLEAR)
    )
    hidden[near_ships] = np.inf
    for t in taken:
        hidden[(gx < t[2]) & (t[0] < gx + side) & (gy < t[3]) & (t[1] < gy + side)] = np.inf
    corner = np.minimum(np.minimum(gx - x_lo, x_hi - gx), np.minimum(gy - y_lo, y_hi - gy))
    score = hidden + corner / (4 * max(w, h))  # a whole point hidden outweighs any nearness to a corner
    k = int(np.argmin(score))
    if not np.isfinite(score.flat[k]):
        return None
    return float(gx.flat[k]), float(gy.flat[k])


def _frame(draw: Any, side: int, line: RangeLine, metres_per_px: float) -> None:
    """The time at the top, the scale bar (yards, or nautical miles for a long one) at the bottom."""
    small = font(10)
    draw.rectangle((0, 0, side, _TITLE - 2), fill=(255, 255, 255))
    small.draw(draw, (4, 2), f"range at {dtg(line.t)} · ±{SPAN_S / 60:g} min", fill=TEXT)
    draw.rectangle((0, side - _FOOT + 2, side, side), fill=(255, 255, 255))
    yards = nice(side / 3 * metres_per_px / _YARD_M)
    length, unit = (yards, "yd") if yards < 10_000 else (nice(side / 3 * metres_per_px / 1852.0), "nm")
    px = length * (_YARD_M if unit == "yd" else 1852.0) / metres_per_px
    y = side - 7
    draw.line((5, y, 5 + px, y), fill=TEXT, width=2)
    for x in (5, 5 + px):
        draw.line((x, y - 4, x, y + 2), fill=TEXT, width=1)
    small.draw(draw, (5 + px + 5, y - 6), f"{length:,g} {unit}", fill=TEXT)


def _leader(draw: Any, ships: tuple[float, float], box: tuple[int, int, int, int]) -> None:
    """A thin grey line from the inset's nearest corner towards the ships, stopping short of them."""
    corners = [(box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])]
    cx, cy = min(corners, key=lambda c: math.hypot(c[0] - ships[0], c[1] - ships[1]))
    d = math.hypot(ships[0] - cx, ships[1] - cy)
    if d < 40:
        return
    stop = (d - 20) / d
    draw.line(((cx, cy), (cx + (ships[0] - cx) * stop, cy + (ships[1] - cy) * stop)), fill=(120, 120, 130), width=1)
