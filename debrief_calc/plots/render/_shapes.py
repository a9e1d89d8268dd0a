"""Zones, reference points, buoy fields and other annotations.

Zones are filled half-transparent (``fill`` / ``fill-opacity``, default a quarter) and outlined
in their ``stroke``, with their name at their centre (a zone stored as a circle is drawn as the
geodesic circle its ``specifics`` give); points and annotations are discs and buoy
fields small dots in their ``marker_color`` (``marker-color``, ``color``), named beside them. The selection's highlight is drawn under them
(:mod:`._halo`). An annotation line is 2 pixels wide, or its ``stroke-width``, and dashed when it
has a ``stroke-dasharray`` (pixels drawn and skipped, e.g. ``"6 4"``): track-legs' leg marks are.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from debrief_calc.plots.render._common import OUTLINE, Box, Item, ink, rgb
from debrief_calc.plots.render._cpa import clip_segment, dashed_line
from debrief_calc.plots.render._labels import Label
from debrief_calc.plots.render._view import Projection
from debrief_calc.tracks._circles import circle_of, circle_ring

__all__ = ["draw_points", "draw_zones", "zone_outlines"]


def _opacity(value: Any) -> int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(255 * min(max(float(value), 0.0), 1.0))
    return 64


def _zone_anchor(proj: Projection, ring: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Where a zone's name goes: its centroid, or while that is off the map the middle of its
    corners on the map; None when none is."""
    x, y = proj.arrays([p[0] for p in ring], [p[1] for p in ring])
    cross = x[:-1] * y[1:] - x[1:] * y[:-1]
    area = cross.sum() / 2
    if abs(area) > 1e-6:
        cx = float(((x[:-1] + x[1:]) * cross).sum() / (6 * area))
        cy = float(((y[:-1] + y[1:]) * cross).sum() / (6 * area))
    else:
        cx, cy = float(x.mean()), float(y.mean())
    x0, y0, x1, y1 = proj.box
    if x0 <= cx <= x1 and y0 <= cy <= y1:
        return cx, cy
    on_map = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    return (float(x[on_map].mean()), float(y[on_map].mean())) if on_map.any() else None


def draw_zones(draw: Any, proj: Projection, items: list[Item], labels: list[Label]) -> list[Box]:
    """Draws the zones; returns their boxes in pixels (what the legend would rather not cover)."""
    areas: list[Box] = []
    for it in items:
        props = it.feature.get("properties") or {}
        fill = _fill(props.get("fill"), it.colour)
        alpha = _opacity(props.get("fill-opacity", 0.25))
        rings = zone_outlines(it)
        for ring in rings:
            flat = proj.flat(ring)
            areas.append((min(flat[0::2]), min(flat[1::2]), max(flat[0::2]), max(flat[1::2])))
            draw.polygon(flat, fill=(*fill, alpha))
            draw.line([*flat, flat[0], flat[1]], fill=it.colour, width=3 if it.selected else 2)
        anchor = _zone_anchor(proj, rings[0]) if rings and it.name else None
        if anchor is not None:
            labels.append(Label(it.name, anchor, ink(it.colour), rank=2, size=11, clear=0, centred=True))
    return areas


def zone_outlines(it: Item) -> list[list[tuple[float, float]]]:
    """The rings to draw for a zone: a zone stored as a circle (``specifics``) drawn as the true
    geodesic circle (its stored polygon is often an oval), else its stored rings."""
    circle = circle_of(it.feature, strict=False)
    if circle is not None:
        return [[(float(x), float(y)) for x, y in circle_ring(*circle)]]
    return [ring for ring in it.rings if len(ring) >= 3]


def _fill(value: Any, colour: tuple[int, int, int]) -> tuple[int, int, int]:
    return rgb(value, "#{:02x}{:02x}{:02x}".format(*colour))


def line_style(props: dict[str, Any]) -> tuple[int, tuple[float, float] | None]:
    """An annotation line's width in pixels (``stroke-width``, 1 to 8; default 2) and its dash
    (``stroke-dasharray``: pixels drawn, pixels skipped; None: solid)."""
    value = props.get("stroke-width")
    width = 2
    if isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value):
        width = int(min(max(round(float(value)), 1), 8))
    dash = props.get("stroke-dasharray")
    numbers = [float(x) for x in str(dash).replace(",", " ").split() if _number(x)] if dash else []
    if not numbers or numbers[0] <= 0:
        return width, None
    return width, (numbers[0], numbers[1] if len(numbers) > 1 else numbers[0])


def _number(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False


def draw_points(draw: Any, proj: Projection, items: list[Item], labels: list[Label]) -> list[Box]:
    """Points, buoy fields and annotation lines; returns the boxes of their markers."""
    markers: list[Box] = []
    for it in items:
        width, dash = line_style(it.feature.get("properties") or {})
        for line in it.lines:
            if len(line) < 2:
                continue
            if dash is None:
                draw.line(proj.flat(line), fill=it.colour, width=width)
                continue
            xy = [proj.xy(lon, lat) for lon, lat in line]
            for a, b in itertools.pairwise(xy):
                if (shown := clip_segment(a, b, proj.box)) is not None:
                    dashed_line(draw, *shown, it.colour, width=width, dash=dash)
        r = 3 if it.kind == "buoyfield" else 5
        for lon, lat in it.points:
            x, y = proj.xy(lon, lat)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=it.colour, outline=OUTLINE)
            markers.append((x - r, y - r, x + r, y + r))
        if it.name and (it.points or it.lines):
            pts = it.points or it.lines[0]
            along = None
            if it.kind == "buoyfield":  # one name for the field, above the middle of its buoys on the map
                xs, ys = proj.arrays([p[0] for p in pts], [p[1] for p in pts])
                box = proj.box
                on_map = (xs >= box[0]) & (xs <= box[2]) & (ys >= box[1]) & (ys <= box[3])
                if not on_map.any():
                    continue
                anchor, clear, along = (float(np.mean(xs[on_map])), float(np.min(ys[on_map]))), r + 2.0, (1.0, 0.0)
            else:
                anchor, clear = proj.xy(*pts[0]), r + 2.0
            labels.append(Label(it.name, anchor, ink(it.colour), rank=3, size=11, clear=clear, along=along))
    return markers
