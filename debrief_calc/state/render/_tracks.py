"""Tracks as Debrief draws them.

With a current time each track splits there: the past solid in its colour, the future faint
(or hidden), and the ship's marker at its interpolated position, pointing the way it moves
(from its positions a little before and after; the stored ``courses`` are not trusted) and
labelled with its short name. Small chevrons along the line show the direction of travel, and
ticks at regular times carry Debrief's DTG labels (``DDHHMMZ``) at an interval chosen so that
on screen they fall about a label's width apart.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc._arrays import FloatArray
from debrief_calc.state.render._common import BACKGROUND, HIGHLIGHT, OUTLINE, Box, Item, blend, ink
from debrief_calc.state.render._labels import Label
from debrief_calc.state.render._view import Projection

__all__ = ["TrackView", "draw_tracks", "dtg", "label_step", "step_text", "track_views"]

_STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_LABEL_SPACING = 110.0  # pixels between time labels along a track moving at the median speed on screen
_CHEVRON_SPACING = 90.0
Line = tuple[FloatArray, FloatArray]


def dtg(t: float) -> str:
    """Debrief's date-time group ``DDHHMMZ``: day of the month, hours, minutes, Z (UTC)."""
    tm = time.gmtime(t)
    return f"{tm.tm_mday:02d}{tm.tm_hour:02d}{tm.tm_min:02d}Z"


def step_text(step: float) -> str:
    return f"{step / 3600:g} h" if step >= 3600 else f"{step / 60:g} min"


def _flat(x: FloatArray, y: FloatArray) -> list[float]:
    """``[x0, y0, x1, y1, …]`` for Pillow, without the fixes that fall on the same pixel as the
    one before (a thousand-fix track zoomed out is mostly those, and each costs a joint)."""
    ix, iy = np.round(x), np.round(y)
    keep = np.ones(x.size, dtype=bool)
    keep[1:-1] = (np.diff(ix)[:-1] != 0) | (np.diff(iy)[:-1] != 0)
    out: list[float] = np.column_stack((x[keep], y[keep])).ravel().tolist()
    return out


@dataclass
class TrackView:
    """A track in pixels: its fixes projected, their times (None when unreadable) and its parts."""

    item: Item
    x: FloatArray
    y: FloatArray
    t: FloatArray | None
    parts: list[slice]

    def covers(self, q: float | None) -> bool:
        return q is not None and self.t is not None and float(self.t[0]) <= q <= float(self.t[-1])

    def at(self, q: Any) -> tuple[Any, Any]:
        assert self.t is not None
        return np.interp(q, self.t, self.x), np.interp(q, self.t, self.y)

    def heading(self, q: float) -> tuple[float, float] | None:
        """The on-screen unit vector of travel at ``q``, from the positions a fix interval or so
        either side (the whole track's span at its ends); None when the ship did not move."""
        assert self.t is not None
        gaps = np.diff(self.t)
        window = max(1.5 * float(np.median(gaps)) if gaps.size else 0.0, 30.0)
        a, b = max(q - window, float(self.t[0])), min(q + window, float(self.t[-1]))
        (x0, x1), (y0, y1) = self.at([a, b])
        d = math.hypot(x1 - x0, y1 - y0)
        return ((x1 - x0) / d, (y1 - y0) / d) if d > 1e-9 else None

    def split(self, q: float | None) -> tuple[list[Line], list[Line]]:
        """The parts of the track before and after ``q``, each side ending at the position at ``q``."""
        past: list[Line] = []
        future: list[Line] = []
        for part in self.parts:
            x, y = self.x[part], self.y[part]
            if q is None or self.t is None or q >= self.t[part][-1]:
                past.append((x, y))
                continue
            t = self.t[part]
            if q < t[0]:
                future.append((x, y))
                continue
            k = int(np.searchsorted(t, q, side="right"))
            px, py = float(np.interp(q, t, x)), float(np.interp(q, t, y))
            past.append((np.append(x[:k], px), np.append(y[:k], py)))
            future.append((np.insert(x[k:], 0, px), np.insert(y[k:], 0, py)))
        return past, future


def track_views(items: list[Item], proj: Projection) -> list[TrackView]:
    views = []
    for it in items:
        lengths = [len(line) for line in it.lines]
        if it.track is not None:
            lon, lat, t = it.track.lon, it.track.lat, it.track.t
            if sum(lengths) != len(t):
                lengths = [len(t)]  # fixes from properties.positions: one part
        else:
            pts = np.asarray([p for line in it.lines for p in line], dtype=float).reshape(-1, 2)
            lon, lat, t = pts[:, 0], pts[:, 1], None
        ends = np.cumsum([0, *lengths]).tolist()
        x, y = proj.arrays(lon, lat)
        views.append(TrackView(it, x, y, t, [slice(a, b) for a, b in itertools.pairwise(ends) if b - a]))
    return views


def label_step(views: list[TrackView]) -> float | None:
    """Seconds between time labels: the shortest of the usual intervals that puts labels about
    ``_LABEL_SPACING`` pixels apart on a track at the median speed on screen, but short enough
    for the longest track to carry at least two."""
    speeds, spans = [], []
    for v in views:
        if v.t is None or v.t.size < 2 or v.t[-1] <= v.t[0]:
            continue
        span = float(v.t[-1] - v.t[0])
        speeds.append(float(np.hypot(np.diff(v.x), np.diff(v.y)).sum()) / span)
        spans.append(span)
    if not speeds:
        return None
    speed = float(np.median(speeds))
    i = next((i for i, s in enumerate(_STEPS) if s * speed >= _LABEL_SPACING), len(_STEPS) - 1)
    while i > 0 and _STEPS[i] > max(spans) / 2:
        i -= 1
    return float(_STEPS[i])


def _halo(draw: Any, line: Line) -> None:
    """The selection's cyan band under a track, with its corners rounded where the track turns
    (Pillow's own round joints cost a pie slice at every one of a thousand fixes)."""
    x, y = line
    if x.size < 2:
        return
    draw.line(_flat(x, y), fill=HIGHLIGHT, width=9)
    dx, dy = np.diff(x), np.diff(y)
    turn = dx[:-1] * dy[1:] - dy[:-1] * dx[1:]
    along = dx[:-1] * dx[1:] + dy[:-1] * dy[1:]
    corners = np.flatnonzero(np.abs(np.arctan2(turn, along)) > 0.3) + 1
    for cx, cy in zip(x[corners].tolist(), y[corners].tolist(), strict=True):
        draw.ellipse((cx - 4, cy - 4, cx + 4, cy + 4), fill=HIGHLIGHT)


def _chevrons(draw: Any, line: Line, colour: tuple[int, int, int], box: Box) -> None:
    """Small arrowheads along the line every ``_CHEVRON_SPACING`` pixels, pointing the way it runs."""
    x, y = line
    along = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))))
    if along[-1] < _CHEVRON_SPACING:
        return
    s = np.arange(_CHEVRON_SPACING / 2, along[-1], _CHEVRON_SPACING)
    cx, cy = np.interp(s, along, x), np.interp(s, along, y)
    on_map = (cx >= box[0]) & (cx <= box[2]) & (cy >= box[1]) & (cy <= box[3])
    s, cx, cy = s[on_map], cx[on_map], cy[on_map]
    dx = np.interp(s + 4, along, x) - np.interp(s - 4, along, x)
    dy = np.interp(s + 4, along, y) - np.interp(s - 4, along, y)
    for px, py, ax, ay in zip(cx.tolist(), cy.tolist(), dx.tolist(), dy.tolist(), strict=True):
        d = math.hypot(ax, ay)
        if d < 1e-9:
            continue
        ux, uy = ax / d, ay / d
        tip = (px + 3 * ux, py + 3 * uy)
        back = (tip[0] - 7 * ux, tip[1] - 7 * uy)
        arms = ((back[0] - 5 * uy, back[1] + 5 * ux), (back[0] + 5 * uy, back[1] - 5 * ux))
        draw.line((arms[0], tip, arms[1]), fill=colour, width=2)


def _time_marks(
    draw: Any, v: TrackView, step: float, q: float | None, show_future: bool, box: Box, labels: list[Label]
) -> None:
    """A tick across the track at every multiple of ``step`` (UTC) and a DTG label beside it."""
    assert v.t is not None
    times = np.arange(math.ceil(float(v.t[0]) / step) * step, float(v.t[-1]) + 1e-6, step)
    if q is not None and not show_future:
        times = times[times <= q]
    xs, ys = v.at(times)
    on_map = (xs >= box[0]) & (xs <= box[2]) & (ys >= box[1]) & (ys <= box[3])
    times, xs, ys = times[on_map][:500], xs[on_map][:500], ys[on_map][:500]
    dx, dy = (a - b for a, b in zip(v.at(times + step / 8), v.at(times - step / 8), strict=True))
    solid = ink(v.item.colour)
    for t, x, y, ax, ay in zip(times.tolist(), xs.tolist(), ys.tolist(), dx.tolist(), dy.tolist(), strict=True):
        d = math.hypot(ax, ay)
        if d < 1e-9:
            continue
        ux, uy = ax / d, ay / d
        fill = solid if q is None or t <= q else blend(solid, BACKGROUND, 0.5)
        draw.line(((x - 5 * uy, y + 5 * ux), (x + 5 * uy, y - 5 * ux)), fill=fill, width=2)
        labels.append(Label(dtg(t), (x, y), fill, rank=4, size=10, clear=6, along=(ux, uy)))


def _marker(draw: Any, x: float, y: float, u: tuple[float, float] | None, it: Item) -> Box:
    """The ship: a dart pointing along ``u`` filled in the track's colour (a disc when it is not
    moving); a cyan halo when selected. Returns the box it covers."""
    if it.selected:
        draw.ellipse((x - 15, y - 15, x + 15, y + 15), fill=HIGHLIGHT)
    if u is None:
        draw.ellipse((x - 7, y - 7, x + 7, y + 7), fill=it.colour, outline=OUTLINE, width=1)
    else:
        ux, uy = u
        shape = [(13, 0), (-9, 8), (-4, 0), (-9, -8)]  # tip, port quarter, notch, starboard quarter
        pts = [(x + a * ux - b * uy, y + a * uy + b * ux) for a, b in shape]
        draw.polygon(pts, fill=it.colour, outline=OUTLINE, width=1)
    return x - 13, y - 13, x + 13, y + 13


def draw_tracks(
    draw: Any, views: list[TrackView], q: float | None, show_future: bool, box: Box, labels: list[Label]
) -> tuple[list[Box], float | None]:
    """Draw the tracks and their marks; add their labels to ``labels``. Returns the boxes of the
    ship markers (to keep labels off them) and the time-label interval used (None: no times)."""
    splits = [v.split(q) for v in views]
    shown = [past + future if show_future else past for past, future in splits]
    for v, lines in zip(views, shown, strict=True):
        if v.item.selected:
            for line in lines:
                _halo(draw, line)
    for v, (_, future) in zip(views, splits, strict=True):
        for x, y in future if show_future else ():
            if x.size >= 2:
                draw.line(_flat(x, y), fill=blend(v.item.colour, BACKGROUND, 0.6), width=2)
    for v, (past, _) in zip(views, splits, strict=True):
        for x, y in past:
            if x.size >= 2:
                draw.line(_flat(x, y), fill=v.item.colour, width=3)
    for v, (past, future) in zip(views, splits, strict=True):
        for line in past:
            _chevrons(draw, line, v.item.colour, box)
        for line in future if show_future else ():
            _chevrons(draw, line, blend(v.item.colour, BACKGROUND, 0.6), box)
    step = label_step(views)
    if step is not None:
        for v in views:
            if v.t is not None:
                _time_marks(draw, v, step, q, show_future, box, labels)
    markers: list[Box] = []
    for v, lines in zip(views, shown, strict=True):
        name, fill = v.item.short, ink(v.item.colour)
        if q is not None and v.covers(q):
            sx, sy = (float(c) for c in v.at(q))
            u = v.heading(q)
            markers.append(_marker(draw, sx, sy, u, v.item))
            if name:  # (a label whose anchor is off the map is dropped when placed)
                labels.append(Label(name, (sx, sy), fill, rank=0, clear=13, along=u, required=True))
        elif name and lines and lines[0][0].size:
            # no ship to mark: name the track at its first fix shown, or its last once it has ended
            labels.append(Label(name, _end_of(lines, last=_ended(v, q)), fill, rank=1, clear=5))
    return markers, step


def _ended(v: TrackView, q: float | None) -> bool:
    return q is not None and v.t is not None and q > float(v.t[-1])


def _end_of(lines: list[Line], *, last: bool) -> tuple[float, float]:
    x, y = lines[-1] if last else lines[0]
    i = -1 if last else 0
    return float(x[i]), float(y[i])
