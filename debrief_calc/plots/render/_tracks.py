"""Tracks as Debrief draws them.

With a current time each track splits there: the past solid in its colour, the future faint
(or hidden), and the ship's marker at its interpolated position, pointing the way it moves
(the course of the leg it is on, as the tote gives it: at a fix the leg after; the stored
``courses`` are not trusted) and
labelled with its short name; a ship over another is drawn smaller, both outlined in white, so
that both show. Small chevrons along the line show the direction of travel, and ticks at
regular times carry Debrief's DTG labels (``DDHHMMZ``) at an interval chosen so that on screen
they fall about a label's width apart (the round times kept first where they crowd). Each
track's first fix is marked by an open circle and its last by a bar across it, both labelled
with their DTG.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.analysis.common import Legs, motion_at
from debrief_calc.geo import geodesy
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.plots.render._common import BACKGROUND, FAINT, OUTLINE, Box, Item, blend, ink
from debrief_calc.plots.render._labels import Label
from debrief_calc.plots.render._view import Projection
from debrief_calc.tracks.times import dtg

__all__ = [
    "TrackView",
    "draw_ships",
    "draw_tracks",
    "flat_line",
    "label_step",
    "marker",
    "step_text",
    "track_views",
]

_STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_LABEL_SPACING = 110.0  # pixels between time labels along a track moving at the median speed on screen
_CHEVRON_SPACING = 90.0
_DART = ((13.0, 0.0), (-9.0, 8.0), (-4.0, 0.0), (-9.0, -8.0))  # tip, port quarter, notch, starboard quarter
_BORDER = ((16.5, 0.0), (-11.5, 10.5), (-6.5, 0.0), (-11.5, -10.5))  # the white outline around it
#: metres along the course from the ship's position to the point that gives its direction on screen
_HEADING_PROBE_M = 100.0
Line = tuple[FloatArray, FloatArray]


def step_text(step: float) -> str:
    return f"{step / 3600:g} h" if step >= 3600 else f"{step / 60:g} min"


def flat_line(x: FloatArray, y: FloatArray) -> list[float]:
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
    proj: Projection | None = None
    _legs: Legs | None = None

    def covers(self, q: float | None) -> bool:
        return q is not None and self.t is not None and float(self.t[0]) <= q <= float(self.t[-1])

    def at(self, q: Any) -> tuple[Any, Any]:
        assert self.t is not None
        return np.interp(q, self.t, self.x), np.interp(q, self.t, self.y)

    def heading(self, q: float) -> tuple[float, float] | None:
        """The on-screen unit vector of travel at ``q``: the tote's course there
        (:func:`~debrief_calc.analysis.common.motion_at`, the leg the time is on), drawn from the
        ship's position along it; None when the ship did not move. Without readable fixes, from the
        positions a fix interval or so either side."""
        assert self.t is not None
        track = self.item.track
        if track is not None and self.proj is not None and len(track) > 1:
            if self._legs is None:
                self._legs = Legs(track)
            at = np.array([q])
            course = motion_at(self._legs, at)[1]
            if not np.isfinite(course[0]):
                return None
            lat, lon = geodesy.interpolate_track(track.t, track.lat, track.lon, at)
            lat2, lon2, _ = geodesy.direct(lat, lon, course, np.array([_HEADING_PROBE_M]))
            xs, ys = self.proj.arrays(np.concatenate((lon, lon2)), np.concatenate((lat, lat2)))
            d = math.hypot(float(xs[1] - xs[0]), float(ys[1] - ys[0]))
            return (float(xs[1] - xs[0]) / d, float(ys[1] - ys[0]) / d) if d > 0 else None
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
        views.append(TrackView(it, x, y, t, [slice(a, b) for a, b in itertools.pairwise(ends) if b - a], proj))
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
    """A tick across the track at every multiple of ``step`` (UTC) and a DTG label beside it (not
    at the track's first and last fix, which have their own marks); labels at multiples of four
    steps, then two, are placed first. They are dropped rather than laid over a line."""
    assert v.t is not None
    t0, t1 = float(v.t[0]), float(v.t[-1])
    times = np.arange(math.ceil(t0 / step) * step, t1 + 1e-6, step)
    times = times[(times - t0 >= 30.0) & (t1 - times >= 30.0)]
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
        level = 0 if t % (4 * step) < 1 else 1 if t % (2 * step) < 1 else 2
        labels.append(
            Label(dtg(t), (x, y), fill, rank=5, size=10, clear=6, along=(ux, uy), off_lines=True, order=(level, t))
        )


def _ends(draw: Any, v: TrackView, q: float | None, show_future: bool, labels: list[Label]) -> None:
    """An open circle on the track's first fix and a bar across its last, each labelled with its
    DTG when the track has times; faint when still to come, left out when the future is hidden."""
    if not v.parts:
        return
    first, last = v.parts[0].start, v.parts[-1].stop - 1
    solid, colour = ink(v.item.colour), v.item.colour
    for i, is_start in ((first, True), (last, False)):
        if v.item.cut[0 if is_start else 1]:
            continue  # the window's edge, not the track's start or end
        t = None if v.t is None else float(v.t[i])
        future = q is not None and t is not None and t > q
        if future and not show_future:
            continue
        line = blend(colour, BACKGROUND, FAINT) if future else colour
        x, y = float(v.x[i]), float(v.y[i])
        if is_start:
            draw.ellipse((x - 4.5, y - 4.5, x + 4.5, y + 4.5), fill=BACKGROUND, outline=line, width=2)
        else:
            j = max(i - 1, first)
            d = math.hypot(x - float(v.x[j]), y - float(v.y[j]))
            ux, uy = ((x - float(v.x[j])) / d, (y - float(v.y[j])) / d) if d > 1e-9 else (1.0, 0.0)
            draw.line(((x - 6 * uy, y + 6 * ux), (x + 6 * uy, y - 6 * ux)), fill=line, width=3)
        if t is not None:
            fill = blend(solid, BACKGROUND, 0.5) if future else solid
            labels.append(Label(dtg(t), (x, y), fill, rank=4, size=10, clear=6, order=(0.0 if is_start else 1.0, t)))


def marker(draw: Any, x: float, y: float, u: tuple[float, float] | None, it: Item, scale: float) -> Box:
    """The ship: a dart pointing along ``u`` filled in the track's colour (a disc when it is not
    moving), outlined in white so that it stands out from a ship beside it. Returns the box it covers."""
    if u is None:
        r = 7 * scale
        draw.ellipse((x - r - 2.5, y - r - 2.5, x + r + 2.5, y + r + 2.5), fill=(255, 255, 255))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=it.colour, outline=OUTLINE, width=1)
    else:
        ux, uy = u
        for shape, fill in ((_BORDER, (255, 255, 255)), (_DART, it.colour)):
            pts = [(x + scale * (a * ux - b * uy), y + scale * (a * uy + b * ux)) for a, b in shape]
            draw.polygon(pts, fill=fill, outline=OUTLINE if fill == it.colour else None, width=1)
    return x - 13, y - 13, x + 13, y + 13


def draw_tracks(
    draw: Any, views: list[TrackView], q: float | None, show_future: bool, box: Box, labels: list[Label]
) -> tuple[float | None, list[list[Line]]]:
    """Draw the tracks and their marks, not the ships (:func:`draw_ships`); add their labels to
    ``labels``. Returns the time-label interval used (None: no times) and each track's lines drawn."""
    splits = [v.split(q) for v in views]
    shown = [past + future if show_future else past for past, future in splits]
    for v, (_, future) in zip(views, splits, strict=True):
        for x, y in future if show_future else ():
            if x.size >= 2:
                draw.line(flat_line(x, y), fill=blend(v.item.colour, BACKGROUND, FAINT), width=2)
    for v, (past, _) in zip(views, splits, strict=True):
        for x, y in past:
            if x.size >= 2:
                draw.line(flat_line(x, y), fill=v.item.colour, width=3)
    for v, (past, future) in zip(views, splits, strict=True):
        for line in past:
            _chevrons(draw, line, v.item.colour, box)
        for line in future if show_future else ():
            _chevrons(draw, line, blend(v.item.colour, BACKGROUND, FAINT), box)
    for v in views:
        _ends(draw, v, q, show_future, labels)
    step = label_step(views)
    if step is not None:
        for v in views:
            if v.t is not None:
                _time_marks(draw, v, step, q, show_future, box, labels)
    return step, shown


def draw_ships(
    draw: Any, views: list[TrackView], shown: list[list[Line]], q: float | None, labels: list[Label]
) -> list[Box]:
    """Draw each ship at ``q`` and add its name to ``labels`` (a track with no ship then is named
    at its first fix shown, or at its last once it has ended). Returns the markers' boxes."""
    markers: list[Box] = []
    for v, lines in zip(views, shown, strict=True):
        name, fill = v.item.short, ink(v.item.colour)
        if q is not None and v.covers(q):
            sx, sy = (float(c) for c in v.at(q))
            u = v.heading(q)
            over = any(abs(sx - (m[0] + 13)) < 12 and abs(sy - (m[1] + 13)) < 12 for m in markers)
            markers.append(marker(draw, sx, sy, u, v.item, 0.6 if over else 1.0))
            if name:  # (a label whose anchor is off the map is dropped when placed)
                labels.append(Label(name, (sx, sy), fill, rank=0, clear=13, along=u, required=True))
        elif name and lines and lines[0][0].size:
            # no ship to mark: name the track at its first fix shown, or its last once it has ended
            labels.append(Label(name, _end_of(lines, last=_ended(v, q)), fill, rank=1, clear=5))
    return markers


def _ended(v: TrackView, q: float | None) -> bool:
    return q is not None and v.t is not None and q > float(v.t[-1])


def _end_of(lines: list[Line], *, last: bool) -> tuple[float, float]:
    x, y = lines[-1] if last else lines[0]
    i = -1 if last else 0
    return float(x[i]), float(y[i])
