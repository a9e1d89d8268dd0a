"""Which area the picture shows, how big the picture is, and where a position falls in it.

Equirectangular projection corrected by cos(latitude) at the middle of the area, so that a
degree of longitude and a nautical mile look as they do on a chart there. The image takes the
area's aspect ratio within the maximum size asked for (plus the title and scale margins)
instead of padding a fixed frame; but an area wider than 2:1 (or taller than 1:2) is padded
about its middle to that, so that a long passage does not shrink into a thin strip.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from debrief_calc.errors import validation_failed
from debrief_calc.formats.metadata import check_bounds
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.plots.render._common import MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, Box, Item, Lonlat

__all__ = ["Projection", "data_bounds", "frame_for", "padding_note", "resolve_fit", "window_framed"]

_WORLD = [-180.0, -80.0, 180.0, 80.0]
_MIN_MAP = (200, 120)  # the narrowest map that still holds the title and the scale bar
_MIN_SPAN = 0.002  # degrees (about 200 m): a closer view would put the world beyond Pillow's integers
_MAX_ASPECT = 2.0  # the widest (and, inverted, the tallest) area shown; a longer one is padded


class Projection:
    """Lon/lat to pixels for one area (``west > east`` crosses 180°) drawn into one box."""

    def __init__(self, bounds: Sequence[float], box: Box):
        w, s, e, n = (float(b) for b in bounds)
        if e < w:
            e += 360.0
        if w < -180.0:  # padded west of -180°: the same area counted from east of 0°
            w, e = w + 360.0, e + 360.0
        self.wrap = e > 180.0  # longitudes west of ``w`` are counted on past 180°
        self.w, self.n = w, n
        self.k = max(math.cos(math.radians((s + n) / 2)), 0.05)
        span_x, span_y = max((e - w) * self.k, 1e-9), max(n - s, 1e-9)
        x0, y0, x1, y1 = box
        self.box = box
        self.scale = min((x1 - x0) / span_x, (y1 - y0) / span_y)  # pixels per degree of latitude
        self.ox = x0 + ((x1 - x0) - span_x * self.scale) / 2
        self.oy = y0 + ((y1 - y0) - span_y * self.scale) / 2

    def lonlat(self, x: float, y: float) -> Lonlat:
        """Unwrapped longitude (may pass 180 when the view crosses it) and latitude of a pixel."""
        return self.w + (x - self.ox) / (self.k * self.scale), self.n - (y - self.oy) / self.scale

    def xy(self, lon: float, lat: float) -> tuple[float, float]:
        if self.wrap and lon < self.w:
            lon += 360.0
        return self.ox + (lon - self.w) * self.k * self.scale, self.oy + (self.n - lat) * self.scale

    def arrays(self, lon: Any, lat: Any) -> tuple[FloatArray, FloatArray]:
        lon = np.asarray(lon, dtype=float)
        if self.wrap:
            lon = lon + 360.0 * (lon < self.w)
        x = self.ox + (lon - self.w) * self.k * self.scale
        y = self.oy + (self.n - np.asarray(lat, dtype=float)) * self.scale
        return x, y

    def shifted(self, lon: Any, lat: Any, by: float) -> tuple[FloatArray, FloatArray]:
        """Pixels of a shape kept whole: every longitude moved by ``by`` (0 or 360), where
        :meth:`arrays` would move only those west of the view's west edge."""
        x = self.ox + (np.asarray(lon, dtype=float) + by - self.w) * self.k * self.scale
        y = self.oy + (self.n - np.asarray(lat, dtype=float)) * self.scale
        return x, y

    def flat(self, pts: Sequence[Lonlat]) -> list[float]:
        """``[x0, y0, x1, y1, …]`` as Pillow draws polylines and polygons."""
        arr = np.asarray(pts, dtype=float)
        x, y = self.arrays(arr[:, 0], arr[:, 1])
        out: list[float] = np.column_stack((x, y)).ravel().tolist()
        return out

    def shown(self) -> list[float]:
        """``[w, s, e, n]`` of the whole box, longitudes back in -180..180."""
        x0, y0, x1, y1 = self.box
        west, north = self.lonlat(x0, y0)
        east, south = self.lonlat(x1, y1)
        if east - west >= 360.0:
            west, east = -180.0, 180.0
        else:
            west, east = _wrap(west), _wrap(east)
        return [round(v, 6) for v in (west, max(south, -90.0), east, min(north, 90.0))]


def _wrap(lon: float) -> float:
    return lon if -180.0 <= lon <= 180.0 else (lon + 180.0) % 360.0 - 180.0


def data_bounds(items: Sequence[Item], pad: float = 0.06) -> list[float] | None:
    """The padded bounds of the items' coordinates; ``west > east`` when the shorter way round
    crosses 180°. None when they have no coordinates."""
    coords = [p for it in items for part in (*it.lines, *it.rings, it.points) for p in part]
    if not coords:
        return None
    arr = np.asarray(coords, dtype=float)
    lons, lats = arr[:, 0], arr[:, 1]
    w, e = float(lons.min()), float(lons.max())
    east_of_0 = lons % 360.0  # the same longitudes counted 0..360: shorter when they straddle 180°
    w360, e360 = float(east_of_0.min()), float(east_of_0.max())
    s, n = float(lats.min()), float(lats.max())
    pad_y = max((n - s) * pad, 0.01)
    south, north = max(s - pad_y, -90.0), min(n + pad_y, 90.0)
    if e360 - w360 < e - w:
        pad_x = max((e360 - w360) * pad, 0.01)
        return [_wrap(w360 - pad_x), south, _wrap(e360 + pad_x), north]
    pad_x = max((e - w) * pad, 0.01)
    return [max(w - pad_x, -180.0), south, min(e + pad_x, 180.0), north]


def window_framed(items: Sequence[Item]) -> list[Item]:
    """What ``fit="window"`` frames: the tracks (already cut to the window), the zones any of them
    has a fix inside (even-odd, outer rings) while the zone is active, and the selected features:
    the analyst drew the window to see the track in its zone."""
    tracks = [it for it in items if it.kind == "track"]
    fixes = [(it.track, it.track.t) for it in tracks if it.track is not None and len(it.track)]
    out = list(tracks)
    for it in items:
        if it.kind == "track":
            continue
        if it.selected or (it.rings and any(_inside(it, track.lon, track.lat, t) for track, t in fixes)):
            out.append(it)
    return out


def _inside(zone: Item, lon: FloatArray, lat: FloatArray, t: FloatArray) -> bool:
    """Whether any fix (at times ``t``) lies inside one of ``zone``'s rings while it is active."""
    if zone.active is not None:
        on = (t >= zone.active[0]) & (t <= zone.active[1])
        lon, lat = lon[on], lat[on]
    for ring in zone.rings:
        r = np.asarray(ring, dtype=float)
        if len(r) < 3 or not lon.size:
            continue
        x0, y0 = r[:, 0][:, None], r[:, 1][:, None]
        x1, y1 = np.roll(r[:, 0], -1)[:, None], np.roll(r[:, 1], -1)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            crosses = ((y0 > lat) != (y1 > lat)) & (lon < x0 + (lat - y0) * (x1 - x0) / (y1 - y0))
        if bool((crosses.sum(axis=0) % 2 == 1).any()):
            return True
    return False


def resolve_fit(items: Sequence[Item], fit: str | Sequence[float], viewport: Any) -> tuple[list[float], str]:
    """The bounds to show and the fit used: ``"viewport"`` (the saved viewport, else all),
    ``"all"``, ``"selection"``, ``"window"`` (the tracks, already cut to the window, and the zones
    they were in) or explicit ``[w, s, e, n]`` (``"bounds"``)."""
    if isinstance(fit, str):
        if fit == "window":
            return data_bounds(window_framed(items)) or list(_WORLD), "window"
        if fit == "viewport" and viewport is not None:
            return check_bounds(viewport, "viewport"), "viewport"
        if fit in ("viewport", "all"):
            return data_bounds(items) or list(_WORLD), "all"
        if fit == "selection":
            bounds = data_bounds([it for it in items if it.selected])
            if bounds is None:
                raise validation_failed(
                    "fit",
                    "'selection' needs selected features with a geometry and none is selected; "
                    "select some (debrief_set_selection) or use fit='all'",
                )
            return bounds, "selection"
        raise validation_failed(
            "fit", f"{fit!r} is not 'viewport', 'all', 'selection', 'window' or [west, south, east, north]"
        )
    return check_bounds(fit, "fit"), "bounds"


def frame_for(bounds: Sequence[float], max_width: int, max_height: int) -> tuple[Projection, int, int]:
    """The projection and the image size: the map takes the area's aspect ratio (corrected by
    cos(latitude)) as large as fits within the maxima less the margins. An area narrower than
    ``_MIN_SPAN`` either way is widened about its middle, and one wider than ``_MAX_ASPECT`` : 1
    (or taller than 1 : ``_MAX_ASPECT``) is padded about its middle to that shape."""
    w, s, e, n = (float(b) for b in bounds)
    if e < w:
        e += 360.0
    if e - w < _MIN_SPAN:
        w, e = (w + e - _MIN_SPAN) / 2, (w + e + _MIN_SPAN) / 2
    s, n = _widened(s, n, _MIN_SPAN)
    k = max(math.cos(math.radians((s + n) / 2)), 0.05)
    span_x, span_y = max((e - w) * k, 1e-9), max(n - s, 1e-9)
    if span_x > _MAX_ASPECT * span_y:
        s, n = _widened(s, n, span_x / _MAX_ASPECT)
    elif span_y > _MAX_ASPECT * span_x and e - w < 360.0:
        grow = min(span_y / _MAX_ASPECT / k, 360.0) - (e - w)
        w, e = w - grow / 2, e + grow / 2
    bounds = [w, s, e, n]
    k = max(math.cos(math.radians((s + n) / 2)), 0.05)
    span_x, span_y = max((e - w) * k, 1e-9), max(n - s, 1e-9)
    room_w = max(max_width - 2 * MARGIN_SIDE, 1)
    room_h = max(max_height - MARGIN_TOP - MARGIN_BOTTOM, 1)
    scale = min(room_w / span_x, room_h / span_y)
    map_w = min(room_w, max(round(span_x * scale), _MIN_MAP[0]))
    map_h = min(room_h, max(round(span_y * scale), _MIN_MAP[1]))
    box = (MARGIN_SIDE, MARGIN_TOP, MARGIN_SIDE + map_w, MARGIN_TOP + map_h)
    return Projection(bounds, box), map_w + 2 * MARGIN_SIDE, map_h + MARGIN_TOP + MARGIN_BOTTOM


def _widened(s: float, n: float, span: float) -> tuple[float, float]:
    """``s``–``n`` widened about its middle to at least ``span`` degrees, kept within ±90°."""
    if n - s >= span:
        return s, n
    span = min(span, 180.0)
    middle = min(max((s + n) / 2, -90.0 + span / 2), 90.0 - span / 2)
    return middle - span / 2, middle + span / 2


def _shape(bounds: Sequence[float]) -> tuple[float, float]:
    """The area's width : height on the chart (cos(latitude) corrected), and its size in square degrees."""
    w, s, e, n = (float(b) for b in bounds)
    if e < w:
        e += 360.0
    k = max(math.cos(math.radians((s + n) / 2)), 0.05)
    return (e - w) * k / max(n - s, 1e-9), (e - w) * (n - s)


def padding_note(asked: Sequence[float], shown: Sequence[float]) -> str | None:
    """What to tell of an area shown more than a tenth larger than the one asked (padded to a
    readable shape, or widened to the closest zoom); None when it is not."""
    (want, size), (got, shown_size) = _shape(asked), _shape(shown)
    if shown_size <= 1.1 * size:
        return None

    def ratio(a: float) -> str:
        return f"{round(a, 1):g}:1" if a >= 1 else f"1:{round(1 / a, 1):g}"

    grown = f"{round(shown_size / size, 1):g}"
    return f"the {ratio(want)} area asked is padded about its middle to {ratio(got)} ({grown}x as large); bounds is the area shown"
