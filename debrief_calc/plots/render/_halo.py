"""The selection's highlight: a thin translucent cyan band under what is selected, so that its own
colour still reads on top. Along a track it follows past and future: half-strength under the
past, faint under the future (none where the future is hidden); a disc under the ship's marker;
a band along a zone's outline and annotation lines; a ring around points and buoys.

All of it is drawn as strengths into one grey layer and blended over the picture once, so that
where parts of the band cross or meet they do not add up to a darker patch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from debrief_calc.plots.render._common import HALO_ALPHA, HALO_FUTURE_ALPHA, HALO_WIDTH, HIGHLIGHT, Item
from debrief_calc.plots.render._tracks import TrackView, flat_line
from debrief_calc.plots.render._view import Projection

__all__ = ["draw_halos"]


def _band(draw: Any, x: Any, y: Any, alpha: int) -> None:
    """A band along the line with its corners rounded where it turns (Pillow's own round joints
    cost a pie slice at every one of a thousand fixes)."""
    if x.size < 2:
        return
    draw.line(flat_line(x, y), fill=alpha, width=HALO_WIDTH)
    dx, dy = np.diff(x), np.diff(y)
    turn = dx[:-1] * dy[1:] - dy[:-1] * dx[1:]
    along = dx[:-1] * dx[1:] + dy[:-1] * dy[1:]
    corners = np.flatnonzero(np.abs(np.arctan2(turn, along)) > 0.3) + 1
    r = HALO_WIDTH / 2 - 0.5
    for cx, cy in zip(x[corners].tolist(), y[corners].tolist(), strict=True):
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=alpha)


def draw_halos(
    img: Any,
    proj: Projection,
    items: list[Item],
    views: list[TrackView],
    q: float | None,
    show_future: bool,
) -> bool:
    """Blend the highlight of the selected ``items`` (those shown) and tracks (``views``) into
    ``img``; False when nothing shown is selected."""
    from PIL import Image, ImageDraw

    chosen = [v for v in views if v.item.selected]
    others = [it for it in items if it.selected and it.kind != "track"]
    if not chosen and not others:
        return False
    layer = Image.new("L", img.size, 0)
    draw = ImageDraw.Draw(layer)
    for v in chosen:
        past, future = v.split(q)
        for x, y in future if show_future else ():
            _band(draw, x, y, HALO_FUTURE_ALPHA)
        for x, y in past:  # over the future where they meet, so the past keeps its strength
            _band(draw, x, y, HALO_ALPHA)
        if v.covers(q):
            sx, sy = (float(c) for c in v.at(q))
            draw.ellipse((sx - 15, sy - 15, sx + 15, sy + 15), fill=HALO_ALPHA)
    for it in others:
        for ring in it.rings:
            if len(ring) >= 3:
                x, y = proj.arrays([p[0] for p in ring], [p[1] for p in ring])
                _band(draw, np.append(x, x[0]), np.append(y, y[0]), HALO_ALPHA)
        for line in it.lines:
            if len(line) >= 2:
                _band(draw, *proj.arrays([p[0] for p in line], [p[1] for p in line]), HALO_ALPHA)
        r = 3 + 5 if it.kind == "buoyfield" else 5 + 5
        for lon, lat in it.points:
            px, py = proj.xy(lon, lat)
            draw.ellipse((px - r, py - r, px + r, py + r), fill=HALO_ALPHA)
    reach = layer.getbbox()
    if reach is not None:
        img.paste(HIGHLIGHT, reach, layer.crop(reach))
    return True
