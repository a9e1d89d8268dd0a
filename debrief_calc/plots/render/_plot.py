"""The picture put together, in drawing order: land, graticule, the selection's highlight, zones,
sensor cuts and target solutions' ellipses, tracks (future, past, chevrons, starts and ends, time
ticks), narrative entries, ships, points, the range line, the legend, the range inset, the labels
(kept off the lines drawn), the frame."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from debrief_calc.plots.render._common import BACKGROUND, Box, Item, RangeInfo, Rendered
from debrief_calc.plots.render._cpa import RangeLine, draw_range, range_line, range_text
from debrief_calc.plots.render._cuts import no_range_length
from debrief_calc.plots.render._cuts_draw import draw_cuts, draw_ellipses
from debrief_calc.plots.render._frame import draw_frame, draw_graticule, hidden_note
from debrief_calc.plots.render._halo import draw_halos
from debrief_calc.plots.render._inset import INSET_BELOW, draw_inset
from debrief_calc.plots.render._items import read_items
from debrief_calc.plots.render._labels import Label, Lines, Placer
from debrief_calc.plots.render._land import draw_land
from debrief_calc.plots.render._legend import Conventions, draw_legend
from debrief_calc.plots.render._narrative import draw_entries, place_entries, unplaced_note
from debrief_calc.plots.render._shapes import draw_points, draw_zones
from debrief_calc.plots.render._tracks import TrackView, draw_ships, draw_tracks, flat_line, track_views
from debrief_calc.plots.render._view import Projection, frame_for, padding_note, resolve_fit, window_framed
from debrief_calc.plots.render._window import cut_tracks, shown, tracks_span
from debrief_calc.tracks.times import Window, dtg

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
    window: Window | None = None,
) -> Rendered:
    q = current_time
    features, left_out, empty = cut_tracks(doc_data.get("features") or [], window)
    items = read_items(features, {str(s) for s in selection})
    span = tracks_span(items)
    no_range_m = no_range_length(items)  # of what is drawn, as the live view draws it
    bounds, used = resolve_fit(items, fit, viewport)
    ranged = range_line(items, cpa, q) if cpa is not None else None
    proj, width, height = frame_for(bounds, max(int(max_width), 64), max(int(max_height), 64))
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img, "RGBA")
    draw_land(draw, proj, proj.shown())
    labels: list[Label] = []
    draw_graticule(draw, proj, labels)

    drawn_now = [shown(it, q, window) for it in items]
    hidden = [
        it for it, on in zip(items, drawn_now, strict=True) if not on and it.kind != "track" and _in_view(it, proj)
    ]
    shown_items = [it for it, on in zip(items, drawn_now, strict=True) if on]
    views = track_views([it for it in shown_items if it.kind == "track"], proj)
    sensors = [it for it in shown_items if it.kind == "sensor"]
    selected = draw_halos(img, proj, [it for it in shown_items if it.kind != "sensor"], views, q, show_future)
    selected |= any(it.selected for it in sensors)
    areas = draw_zones(draw, proj, [it for it in shown_items if it.rings], labels)
    cuts = draw_cuts(img, draw, proj, sensors, q, no_range_m, labels)
    draw_ellipses(draw, proj, [v.item for v in views], q, show_future)
    step, lines = draw_tracks(draw, views, q, show_future, proj.box, labels)
    entries, unplaced = place_entries([it for it in shown_items if it.ship is not None], views, q)
    markers = draw_entries(draw, entries, proj.box, labels)
    markers += draw_ships(draw, views, lines, q, labels)
    drawn = [line for parts in lines for line in parts]
    others = [it for it in shown_items if it.kind not in ("track", "sensor") and not it.rings and it.ship is None]
    markers += draw_points(draw, proj, others, labels)
    drawn += [proj.arrays([p[0] for p in line], [p[1] for p in line]) for it in others for line in it.lines]
    if ranged is not None:
        markers += draw_range(draw, proj, ranged, q, labels)
        a, b = (proj.xy(*end) for end in ranged.ends)
        drawn.append((np.asarray([a[0], b[0]]), np.asarray([a[1], b[1]])))

    placer = Placer(proj.box, lines=Lines(_ink((width, height), drawn)))
    for box in markers:
        placer.occupy(box)
    # what the legend and the inset should not hide: every fix, and (weighted) every marker and named thing
    centres = [((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) for b in markers] + [lb.anchor for lb in labels if not lb.spots]
    clutter = np.concatenate([np.column_stack((v.x, v.y)) for v in views] + [np.asarray(centres * 40).reshape(-1, 2)])
    conventions = _conventions(views, proj.box, q, show_future, selected)
    listed = [
        it
        for it in shown_items
        if (it.rings or (it.points and it.ship is None and it.kind not in ("track", "sensor"))) and _in_view(it, proj)
    ]
    fans = [(c.legend, it.colour) for c, it in zip(cuts, sensors, strict=True)]
    drawn_legend = draw_legend(draw, [v.item for v in views], conventions, proj.box, clutter, areas, listed, fans)
    legend, rows = drawn_legend if drawn_legend is not None else (None, [])
    taken = [legend] if legend is not None else []
    inset = None
    if ranged is not None and _too_short(proj, ranged):
        inset = draw_inset(img, proj, ranged, views, show_future, clutter, areas, taken)
    for box in [*taken, *([inset] if inset is not None else [])]:
        placer.occupy(box)
    for label in sorted(labels, key=lambda lb: lb.key):
        placer.place(label)
    placer.draw(draw)
    windowed = window is not None and window.source != "data"
    notes = [hidden_note([it.kind for it in hidden], q)] if hidden and (q is not None or windowed) else []
    if span is not None and windowed:
        notes.insert(0, f"tracks {dtg(span[0])} to {dtg(span[1])}")
    if empty is not None:
        notes.insert(0, "no track in the window")
    note = "; ".join([*([unplaced_note(len(unplaced))] if unplaced else []), *notes])
    draw_frame(draw, proj, (width, height), title=title, t=q, step=step, note=note)

    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    placed = [(label.text, box) for box, label, _ in placer.placed]
    placed += [(name, box) for name, box in (("legend", legend), ("inset", inset)) if box is not None]
    info = None if ranged is None else _info(ranged, inset is not None)
    hidden_ids = [it.id for it in hidden]
    area = proj.shown()
    padded = padding_note(bounds, area)
    framed: dict[str, list[str]] | None = None
    if used == "window":
        framed = {"tracks": [], "zones": [], "other": []}
        for it in window_framed(items):
            framed["tracks" if it.kind == "track" else "zones" if it.kind == "zone" else "other"].append(it.id)
    return Rendered(
        out.getvalue(),
        width,
        height,
        area,
        used,
        hidden_ids,
        info,
        placed,
        rows,
        unplaced,
        padded,
        span,
        left_out,
        {k: v for k, v in framed.items() if v or k != "other"} if framed is not None else None,
        empty,
        cuts,
    )


def _in_view(it: Item, proj: Projection) -> bool:
    """Whether any of the item's coordinates, or its outline's box, reaches into the map."""
    coords = [p for part in (*it.lines, *it.rings, it.points) for p in part]
    x, y = proj.arrays([p[0] for p in coords], [p[1] for p in coords])
    box = proj.box
    return bool(x.size) and x.max() >= box[0] and x.min() <= box[2] and y.max() >= box[1] and y.min() <= box[3]


def _ink(size: tuple[int, int], lines: list[tuple[Any, Any]]) -> Any:
    """The pixels the lines cover (a little wider than drawn), for labels to keep off."""
    layer = Image.new("L", size, 0)
    pen = ImageDraw.Draw(layer)
    for x, y in lines:
        if x.size >= 2:
            pen.line(flat_line(np.asarray(x, dtype=float), np.asarray(y, dtype=float)), fill=255, width=3)
    return np.asarray(layer)


def _too_short(proj: Projection, ranged: RangeLine) -> bool:
    """Whether the range line is too short to see and its middle is on the map."""
    (ax, ay), (bx, by) = (proj.xy(*end) for end in ranged.ends)
    mx, my = (ax + bx) / 2, (ay + by) / 2
    box = proj.box
    on_map = box[0] <= mx <= box[2] and box[1] <= my <= box[3]
    return on_map and float(np.hypot(bx - ax, by - ay)) < INSET_BELOW


def _conventions(views: list[TrackView], box: Box, q: float | None, show_future: bool, selected: bool) -> Conventions:
    """Which conventions the legend explains: the selection's highlight, the future after the time
    (faint, or hidden) where some track has fixes after it on the map, and the tracks' ends."""

    def on_map(v: TrackView, i: Any) -> bool:
        x, y = v.x[i], v.y[i]
        return bool(np.any((x >= box[0]) & (x <= box[2]) & (y >= box[1]) & (y <= box[3])))

    later = q is not None and any(v.t is not None and on_map(v, v.t > q) for v in views)
    ends = any(
        v.x.size and on_map(v, [i for i, cut in ((0, v.item.cut[0]), (-1, v.item.cut[1])) if not cut]) for v in views
    )
    after = dtg(q) if later and q is not None else None
    return Conventions(selected=selected, after=after, future_hidden=not show_future, ends=ends)


def _info(ranged: RangeLine, inset: bool) -> RangeInfo:
    value, unit, text = range_text(ranged.metres)
    return RangeInfo(ranged.ids, ranged.t, ranged.metres, value, unit, text, inset, ranged.bounds())
