"""What frames the data: the graticule, the legend of the tracks, the title, the time caption,
the scale bar in nautical miles and the interval of the time labels."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from debrief_calc.state.render._common import BACKGROUND, MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, TEXT, Box, Item
from debrief_calc.state.render._labels import font
from debrief_calc.state.render._tracks import dtg, step_text
from debrief_calc.state.render._view import Projection

__all__ = ["draw_frame", "draw_graticule", "draw_legend"]

_ROW, _PAD, _SWATCH, _INSET = 16, 6, 18, 6


def _nice(x: float) -> float:
    """The largest 1, 2 or 5 × 10^k not above ``x``."""
    if x <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(x))
    return next(float(m * base) for m in (5, 2, 1) if m * base <= x)


def draw_graticule(draw: Any, proj: Projection) -> None:
    """Light parallels and meridians over what is visible, about 120 pixels apart (at most 8
    across and 6 down), so that their labels never run into each other."""
    box = proj.box
    w, n = proj.lonlat(box[0], box[1])
    e, s = proj.lonlat(box[2], box[3])
    grey, tint, small = (205, 210, 216), (120, 120, 130), font(10)
    across = min(max((box[2] - box[0]) / 120, 1.0), 8.0)
    down = min(max((box[3] - box[1]) / 90, 1.0), 6.0)
    lon_step, lat_step = _nice((e - w) / across), _nice((n - s) / down)
    lon = math.ceil(w / lon_step) * lon_step
    while lon <= e:
        x = proj.ox + (lon - proj.w) * proj.k * proj.scale
        draw.line((x, box[1], x, box[3]), fill=grey, width=1)
        text = f"{180.0 if abs(lon - 180.0) < 1e-9 else (lon + 180) % 360 - 180:.6g}°"
        if x + 2 + small.getlength(text) <= box[2]:
            _tag(draw, (x + 2, box[3] - 12), text, tint, small)
        lon += lon_step
    lat = math.ceil(s / lat_step) * lat_step
    while lat <= n:
        y = proj.oy + (proj.n - lat) * proj.scale
        draw.line((box[0], y, box[2], y), fill=grey, width=1)
        if box[1] <= y - 12 and y <= box[3] - 14:  # clear of the top and of the longitudes
            _tag(draw, (box[0] + 2, y - 12), f"{lat:.6g}°", tint, small)
        lat += lat_step


def _tag(draw: Any, xy: tuple[float, float], text: str, fill: tuple[int, int, int], f: Any) -> None:
    """A graticule label on a patch of the background, so that it reads over the lines."""
    draw.rectangle(draw.textbbox(xy, text, font=f), fill=BACKGROUND)
    draw.text(xy, text, fill=fill, font=f)


def _entry(it: Item) -> str:
    name = it.name or it.id
    text = f"{name} ({it.short})" if it.short and it.short != name else name
    return text if len(text) <= 32 else text[:31] + "…"


def draw_legend(draw: Any, tracks: list[Item], box: Box, clutter: Any, areas: list[Box]) -> Box | None:
    """A swatch and the name of each track, in the corner of the map where it hides least: the
    fewest ``clutter`` points (pixels ``(n, 2)``: fixes, markers, named places), counting every
    50 square pixels of zone (``areas``, their boxes) as one more. Returns its box."""
    if not tracks:
        return None
    f = font(11)
    rows = max(int((box[3] - box[1] - 2 * (_INSET + _PAD)) // _ROW), 0)
    if rows < 1:
        return None
    texts = [_entry(it) for it in tracks]
    colours = [it.colour for it in tracks]
    if len(texts) > rows:
        texts = [*texts[: rows - 1], f"+{len(tracks) - rows + 1} more"]
        colours = colours[: rows - 1]
    w = _SWATCH + 6 + max(f.getlength(t) for t in texts) + 2 * _PAD
    h = len(texts) * _ROW + 2 * _PAD - 2
    if w > box[2] - box[0] - 2 * _INSET:
        return None
    left, right = box[0] + _INSET, box[2] - _INSET - w
    top, bottom = box[1] + _INSET, box[3] - _INSET - h
    corners = [(right, top), (left, top), (right, bottom), (left, bottom)]
    pts = np.asarray(clutter, dtype=float).reshape(-1, 2)

    def hidden(corner: tuple[float, float]) -> float:
        x, y = corner
        inside = (pts[:, 0] >= x) & (pts[:, 0] <= x + w) & (pts[:, 1] >= y) & (pts[:, 1] <= y + h)
        covered = sum(
            max(min(a[2], x + w) - max(a[0], x), 0.0) * max(min(a[3], y + h) - max(a[1], y), 0.0) for a in areas
        )
        return float(inside.sum()) + float(covered) / 50

    x0, y0 = min(corners, key=hidden)
    draw.rectangle((x0, y0, x0 + w, y0 + h), fill=(255, 255, 255, 225), outline=(150, 155, 165))
    for i, text in enumerate(texts):
        y = y0 + _PAD + i * _ROW + 6
        if i < len(colours):
            draw.line((x0 + _PAD, y, x0 + _PAD + _SWATCH, y), fill=colours[i], width=4)
        draw.text((x0 + _PAD + _SWATCH + 6, y), text, fill=TEXT, font=f, anchor="lm")
    return x0, y0, x0 + w, y0 + h


def draw_frame(
    draw: Any, proj: Projection, size: tuple[int, int], *, title: str, t: float | None, step: float | None
) -> None:
    """The title and the time (DTG and ISO) above the map; the scale bar and the time-label
    interval below it."""
    width, height = size
    f = font(12)
    draw.rectangle((0, 0, width, MARGIN_TOP - 4), fill=(255, 255, 255))
    caption = ""
    if t is not None:
        from debrief_calc.features import iso

        caption = f"{dtg(t)}  {iso(t)}"
        draw.text((width - MARGIN_SIDE, 6), caption, fill=(0, 0, 0), font=f, anchor="ra")
    if title:
        room = width - 2 * MARGIN_SIDE - (f.getlength(caption) + 12 if caption else 0)
        while title and f.getlength(title) > room:
            title = title[:-2] + "…" if len(title) > 1 else ""
        draw.text((MARGIN_SIDE, 6), title, fill=(0, 0, 0), font=f)
    nm_per_px = 60.0 / proj.scale
    length_nm = _nice(nm_per_px * width / 5)
    px = length_nm / nm_per_px
    x0, y0 = MARGIN_SIDE, height - 14
    draw.rectangle((0, height - MARGIN_BOTTOM + 6, width, height), fill=(255, 255, 255))
    draw.line((x0, y0, x0 + px, y0), fill=(0, 0, 0), width=3)
    for x in (x0, x0 + px):
        draw.line((x, y0 - 5, x, y0 + 3), fill=(0, 0, 0), width=2)
    draw.text((x0 + px + 8, y0 - 8), f"{length_nm:g} nm", fill=(0, 0, 0), font=f)
    if step is not None:
        note = f"time labels every {step_text(step)}"
        if f.getlength(note) < width - (x0 + px + 80) - MARGIN_SIDE:
            draw.text((width - MARGIN_SIDE, y0 - 8), note, fill=(90, 90, 100), font=font(11), anchor="ra")
