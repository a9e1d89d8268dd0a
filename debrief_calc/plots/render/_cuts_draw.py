"""Sensor cuts and target solutions' ellipses on the picture (:mod:`._cuts` says which and where).

Each cut drawn is a thin line in its colour from its origin along its bearing, its ambiguous
bearing dashed beside it. A selected sensor's lines lie on the selection's translucent cyan
highlight and each is labelled with its time (``HH:MM:SS``, UTC) where it leaves the map or ends,
the newest first where they crowd. A target solution's ellipses are outlines in its colour at its
fixes, faint after the current time (left out where the future is hidden).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.geo._arrays import FloatArray
from debrief_calc.plots.render._common import BACKGROUND, FAINT, HALO_ALPHA, HIGHLIGHT, CutsDrawn, Item, blend, ink
from debrief_calc.plots.render._cpa import clip_segment, dashed_line
from debrief_calc.plots.render._cuts import (
    SensorCuts,
    active_cuts,
    cut_lines,
    sensor_cuts,
    solution_ellipses,
    thin,
)
from debrief_calc.plots.render._labels import Label
from debrief_calc.plots.render._view import Projection

__all__ = ["CutsDrawn", "draw_cuts", "draw_ellipses"]

_DASH = (6.0, 4.0)  # an ambiguous bearing's dash: pixels drawn, pixels skipped
_BAND = 5  # pixels across the highlight under a selected sensor's lines
Segment = tuple[tuple[float, float], tuple[float, float]]


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(t)) if math.isfinite(t) else "no time"


def _pieces(proj: Projection, line: FloatArray) -> list[Segment]:
    """The line's straight pieces in pixels, each cut to the map (those off it left out)."""
    x, y = proj.arrays(line[:, 0], line[:, 1])
    out = []
    for i in range(x.size - 1):
        part = clip_segment((float(x[i]), float(y[i])), (float(x[i + 1]), float(y[i + 1])), proj.box)
        if part is not None:
            out.append(part)
    return out


def _label(cuts: SensorCuts, i: int, pieces: Sequence[Any], colour: tuple[int, int, int]) -> Label | None:
    """The cut's time at the end of its line on the map (where it leaves the map, or ends)."""
    if not pieces:
        return None
    (ax, ay), (bx, by) = pieces[-1]
    d = math.hypot(bx - ax, by - ay)
    along = ((bx - ax) / d, (by - ay) / d) if d > 1e-9 else None
    t = float(cuts.t[i])
    return Label(_clock(t), (bx, by), ink(colour), rank=4, size=10, clear=3, along=along, order=(2.0, -t))


@dataclass(frozen=True)
class _Fan:
    """One sensor's cuts to draw: which, and their lines and ambiguous lines in pixels on the map."""

    item: Item
    cuts: SensorCuts
    numbers: Any
    solid: list[list[Segment]]
    dashed: list[list[Segment]]


def draw_cuts(
    img: Any,
    draw: Any,
    proj: Projection,
    sensors: Sequence[Item],
    q: float | None,
    no_range_m: float,
    labels: list[Label],
) -> list[CutsDrawn]:
    """Draw each sensor's active cuts (thinned); add a selected sensor's time labels to ``labels``."""
    fans: list[_Fan] = []
    out: list[CutsDrawn] = []
    for it in sensors:
        cuts = sensor_cuts(it)
        active = active_cuts(cuts, q)
        numbers, every = thin(active)
        lines = cut_lines(cuts, numbers, no_range_m)
        mirrored = cut_lines(cuts, numbers, no_range_m, ambiguous=True)
        fans.append(_Fan(it, cuts, numbers, [_pieces(proj, x) for x in lines], [_pieces(proj, x) for x in mirrored]))
        props = it.feature.get("properties") or {}
        out.append(
            CutsDrawn(
                it.id,
                it.name,
                props.get("host") if isinstance(props.get("host"), str) else None,
                len(cuts),
                int(active.size),
                int(numbers.size),
                every,
                sum(1 for line in mirrored if line.size),
                int(np.count_nonzero(~(cuts.range_m[numbers] > 0))),
                no_range_m,
                [float(cuts.t[i]) for i in numbers.tolist()] if it.selected else [],
            )
        )
    _highlight(img, [fan for fan in fans if fan.item.selected])
    for fan in fans:
        for k, i in enumerate(fan.numbers.tolist()):
            colour = fan.cuts.colour(i)
            for a, b in fan.solid[k]:
                draw.line((a, b), fill=colour, width=1)
            for a, b in fan.dashed[k]:
                dashed_line(draw, a, b, colour, width=1, dash=_DASH)
            if fan.item.selected and (label := _label(fan.cuts, i, fan.solid[k] or fan.dashed[k], colour)):
                labels.append(label)
    return out


def _highlight(img: Any, fans: Sequence[_Fan]) -> None:
    """The selection's highlight under the selected sensors' lines, blended in once (as
    :mod:`._halo` blends it) so that where lines cross it does not darken."""
    from PIL import Image, ImageDraw

    if not any(fan.numbers.size for fan in fans):
        return
    layer = Image.new("L", img.size, 0)
    pen = ImageDraw.Draw(layer)
    for fan in fans:
        for pieces in (*fan.solid, *fan.dashed):
            for a, b in pieces:
                pen.line((a, b), fill=HALO_ALPHA, width=_BAND)
    if (reach := layer.getbbox()) is not None:
        img.paste(HIGHLIGHT, reach, layer.crop(reach))


def draw_ellipses(draw: Any, proj: Projection, tracks: Sequence[Item], q: float | None, show_future: bool) -> None:
    """Outline the ellipses of the tracks' fixes (target solutions), faint after ``q``."""
    for it in tracks:
        ellipses, _ = solution_ellipses(it)
        for e in ellipses:
            future = q is not None and e.t > q
            if future and not show_future:
                continue
            colour = blend(it.colour, BACKGROUND, FAINT) if future else it.colour
            draw.line(proj.flat([(float(x), float(y)) for x, y in e.ring]), fill=colour, width=1)
