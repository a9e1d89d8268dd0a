"""The picture put together, in drawing order: land, graticule, zones, tracks (halos, future, past,
chevrons, time ticks, ships), points, the range line, the legend, the labels, the frame."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from debrief_calc.state.render._common import BACKGROUND, Rendered
from debrief_calc.state.render._cpa import draw_range, range_line
from debrief_calc.state.render._frame import draw_frame, draw_graticule, draw_legend
from debrief_calc.state.render._items import is_active, read_items
from debrief_calc.state.render._labels import Label, Placer
from debrief_calc.state.render._land import draw_land
from debrief_calc.state.render._shapes import draw_points, draw_zones
from debrief_calc.state.render._tracks import draw_tracks, track_views
from debrief_calc.state.render._view import frame_for, resolve_fit

__all__ = ["draw_plot"]


def draw_plot(
    doc_data: dict[str, Any],
    *,
    max_width: int,
    max_height: int,
    selection: Iterable[str],
    current_time: float | None,
    fit: str | Sequence[float],
    viewport: Any,
    title: str,
    show_future: bool,
    cpa: Sequence[Any] | None,
) -> Rendered:
    items = read_items(doc_data.get("features") or [], {str(s) for s in selection})
    bounds, used = resolve_fit(items, fit, viewport)
    ranged = range_line(items, cpa, current_time) if cpa is not None else None
    proj, width, height = frame_for(bounds, max(int(max_width), 64), max(int(max_height), 64))
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img, "RGBA")
    draw_land(draw, proj, proj.shown())
    draw_graticule(draw, proj)

    shown = [it for it in items if is_active(it, current_time)]
    labels: list[Label] = []
    areas = draw_zones(draw, proj, [it for it in shown if it.rings], labels)
    views = track_views([it for it in shown if it.kind == "track"], proj)
    markers, step = draw_tracks(draw, views, current_time, show_future, proj.box, labels)
    markers += draw_points(draw, proj, [it for it in shown if it.kind != "track" and not it.rings], labels)
    if ranged is not None:
        markers += draw_range(draw, proj, ranged, current_time, labels)

    placer = Placer(proj.box)
    for box in markers:
        placer.occupy(box)
    # what the legend should not hide: every fix, and (weighted) every marker and named thing
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in markers] + [label.anchor for label in labels]
    clutter = [np.column_stack((v.x, v.y)) for v in views] + [np.asarray(centres * 40).reshape(-1, 2)]
    legend = draw_legend(draw, [v.item for v in views], proj.box, np.concatenate(clutter), areas)
    if legend is not None:
        placer.occupy(legend)
    for label in sorted(labels, key=lambda lb: lb.rank):
        placer.place(label)
    placer.draw(draw)
    draw_frame(draw, proj, (width, height), title=title, t=current_time, step=step)

    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    return Rendered(out.getvalue(), width, height, proj.shown(), used)
