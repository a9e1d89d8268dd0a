"""A PNG picture of a plot, for the analyst and the model to look at.

Equirectangular projection corrected by cos(latitude) at the middle of the view, fitted to the
viewport (or the data's bounds, padded). Zones are filled half-transparent, tracks drawn as one
polyline each in their ``stroke`` colour, points and buoyfields as markers, names as labels; the
selection gets a cyan halo; with a time, each track's interpolated position there is marked and
the time captioned. A light graticule, a title and a scale bar in nautical miles frame it.
Backdrops, metadata and features with ``visible: false`` are not drawn. Pillow and numpy are
imported inside :func:`render_plot_png`, so importing this module costs nothing.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from debrief_calc.errors import CalcError
from debrief_calc.state.metadata import check_bounds

__all__ = ["HIGHLIGHT", "render_plot_png"]

HIGHLIGHT = (0, 229, 255)
BACKGROUND = (246, 248, 250)
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
_SKIP_KINDS = {"backdrop", "metadata"}
_MARGIN_TOP, _MARGIN_BOTTOM, _MARGIN_SIDE = 28, 34, 12
Lonlat = tuple[float, float]


@dataclass
class _Item:
    feature: dict[str, Any]
    kind: str
    name: str
    colour: tuple[int, int, int]
    selected: bool
    lines: list[list[Lonlat]] = field(default_factory=list)
    rings: list[list[Lonlat]] = field(default_factory=list)
    points: list[Lonlat] = field(default_factory=list)


def _rgb(value: Any, fallback: str) -> tuple[int, int, int]:
    from PIL import ImageColor

    for candidate in (value, fallback):
        if isinstance(candidate, str):
            try:
                rgb = ImageColor.getrgb(candidate.strip())
            except ValueError:
                continue
            return rgb[0], rgb[1], rgb[2]
    return 0, 0, 0


def _pairs(coords: Any) -> list[Lonlat]:
    return [(float(p[0]), float(p[1])) for p in coords if isinstance(p, list | tuple) and len(p) >= 2]


def _collect(geom: Any, item: _Item) -> None:
    if not isinstance(geom, dict):
        return
    kind, coords = geom.get("type"), geom.get("coordinates")
    if kind == "Point" and isinstance(coords, list) and len(coords) >= 2:
        item.points.append((float(coords[0]), float(coords[1])))
    elif kind == "MultiPoint":
        item.points.extend(_pairs(coords or []))
    elif kind == "LineString":
        item.lines.append(_pairs(coords or []))
    elif kind == "MultiLineString":
        item.lines.extend(_pairs(line) for line in coords or [])
    elif kind == "Polygon":
        item.rings.extend(_pairs(ring) for ring in (coords or [])[:1])
    elif kind == "MultiPolygon":
        item.rings.extend(_pairs(poly[0]) for poly in coords or [] if poly)
    elif kind == "GeometryCollection":
        for sub in geom.get("geometries") or []:
            _collect(sub, item)


def _items(features: Iterable[Any], selected: set[str]) -> list[_Item]:
    from debrief_calc.features import feature_kind

    items: list[_Item] = []
    for n, f in enumerate(features):
        if not isinstance(f, dict):
            continue
        props = f.get("properties") or {}
        kind = feature_kind(f)
        if kind in _SKIP_KINDS or props.get("visible") is False:
            continue
        key = "marker_color" if kind in ("point", "buoyfield") else "stroke"
        colour = props.get(key) or props.get("marker-color") or props.get("stroke") or props.get("color")
        item = _Item(
            feature=f,
            kind=kind,
            name=str(props.get("name") or props.get("text") or ""),
            colour=_rgb(colour, PALETTE[n % len(PALETTE)]),
            selected=str(f.get("id")) in selected,
        )
        try:
            _collect(f.get("geometry"), item)
        except (TypeError, ValueError, IndexError, AttributeError):
            continue  # a malformed geometry is not drawn; the rest of the plot is
        if item.lines or item.rings or item.points:
            items.append(item)
    return items


class _Projection:
    def __init__(self, bounds: Sequence[float], box: tuple[int, int, int, int]):
        w, s, e, n = (float(b) for b in bounds)
        self.wrap = e < w
        if self.wrap:
            e += 360.0
        self.w, self.n = w, n
        self.k = max(math.cos(math.radians((s + n) / 2)), 0.05)
        span_x, span_y = max((e - w) * self.k, 1e-9), max(n - s, 1e-9)
        x0, y0, x1, y1 = box
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

    def flat(self, pts: Sequence[Lonlat]) -> list[float]:
        import numpy as np

        arr = np.asarray(pts, dtype=float)
        lon = arr[:, 0] + (360.0 * (arr[:, 0] < self.w) if self.wrap else 0.0)
        x = self.ox + (lon - self.w) * self.k * self.scale
        y = self.oy + (self.n - arr[:, 1]) * self.scale
        out: list[float] = np.column_stack((x, y)).ravel().tolist()
        return out


def _data_bounds(items: list[_Item]) -> list[float]:
    lons = [p[0] for it in items for part in (*it.lines, *it.rings, it.points) for p in part]
    lats = [p[1] for it in items for part in (*it.lines, *it.rings, it.points) for p in part]
    if not lons:
        return [-180.0, -80.0, 180.0, 80.0]
    w, e, s, n = min(lons), max(lons), min(lats), max(lats)
    pad_x, pad_y = max((e - w) * 0.06, 0.01), max((n - s) * 0.06, 0.01)
    return [max(w - pad_x, -180.0), max(s - pad_y, -90.0), min(e + pad_x, 180.0), min(n + pad_y, 90.0)]


def _nice(x: float) -> float:
    """The largest 1, 2 or 5 × 10^k not above ``x``."""
    if x <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(x))
    return next(float(m * base) for m in (5, 2, 1) if m * base <= x)


def _position_at(feature: dict[str, Any], t: float) -> Lonlat | None:
    from debrief_calc.features import track_data

    try:
        track = track_data(feature)
    except (CalcError, ValueError, TypeError, KeyError, IndexError):  # no usable times: nothing to mark
        return None
    import numpy as np

    times = np.asarray(track.t, dtype=float)
    if times.size == 0 or not times[0] <= t <= times[-1]:
        return None
    return float(np.interp(t, times, track.lon)), float(np.interp(t, times, track.lat))


def render_plot_png(
    doc_data: dict[str, Any],
    *,
    width: int = 1024,
    height: int = 768,
    selection: Iterable[str] = (),
    current_time: float | None = None,
    viewport: Any = None,
    title: str | None = None,
) -> bytes:
    """The plot as PNG bytes. ``viewport`` is ``[w, s, e, n]`` or ``{bounds}``; ``current_time``
    epoch seconds; ``selection`` ids to highlight."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = max(int(width), 64), max(int(height), 64)
    items = _items(doc_data.get("features") or [], {str(s) for s in selection})
    bounds = check_bounds(viewport, "viewport") if viewport is not None else _data_bounds(items)
    box = (_MARGIN_SIDE, _MARGIN_TOP, width - _MARGIN_SIDE, height - _MARGIN_BOTTOM)
    proj = _Projection(bounds, box)
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img, "RGBA")
    font = ImageFont.load_default(size=12)
    small = ImageFont.load_default(size=10)

    _graticule(draw, proj, box, small)
    for it in items:  # zones under everything else
        props = it.feature.get("properties") or {}
        fill = _rgb(props.get("fill"), "#{:02x}{:02x}{:02x}".format(*it.colour))
        opacity = props.get("fill-opacity", 0.25)
        alpha = int(255 * min(max(float(opacity), 0.0), 1.0)) if isinstance(opacity, int | float) else 64
        for ring in it.rings:
            if len(ring) >= 3:
                flat = proj.flat(ring)
                draw.polygon(flat, fill=(*fill, alpha))
                draw.line(flat, fill=(*HIGHLIGHT, 255) if it.selected else it.colour, width=5 if it.selected else 2)
    for it in items:  # halos of the selection
        if not it.selected:
            continue
        for line in it.lines:
            if len(line) >= 2:
                draw.line(proj.flat(line), fill=HIGHLIGHT, width=9, joint="curve")
        for lon, lat in it.points:
            x, y = proj.xy(lon, lat)
            draw.ellipse((x - 9, y - 9, x + 9, y + 9), fill=HIGHLIGHT)
    for it in items:
        wide = 3 if it.kind == "track" else 2
        for line in it.lines:
            if len(line) >= 2:
                draw.line(proj.flat(line), fill=it.colour, width=wide)
        r = 2 if it.kind == "buoyfield" else 5
        for lon, lat in it.points:
            x, y = proj.xy(lon, lat)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=it.colour, outline=(40, 40, 40))
    for it in items:
        if it.name:
            anchor = _label_point(it)
            x, y = proj.xy(*anchor)
            draw.text((x + 7, y - 7), it.name, fill=(20, 20, 20), font=font, stroke_width=2, stroke_fill="white")
    if current_time is not None:
        _time_marks(draw, proj, items, current_time, font)
    _frame(draw, proj, (width, height), font, title=title or _title_of(doc_data), t=current_time)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    return out.getvalue()


def _label_point(it: _Item) -> Lonlat:
    if it.lines and it.lines[0]:
        return it.lines[0][0]
    if it.rings and it.rings[0]:
        ring = it.rings[0]
        return sum(p[0] for p in ring) / len(ring), sum(p[1] for p in ring) / len(ring)
    return it.points[0]


def _title_of(doc_data: dict[str, Any]) -> str:
    props = doc_data.get("properties")
    name = props.get("name") if isinstance(props, dict) else None
    return name if isinstance(name, str) else ""


def _graticule(draw: Any, proj: _Projection, box: tuple[int, int, int, int], font: Any) -> None:
    """Light parallels and meridians over what is visible, about 8 across and 6 down."""
    w, n = proj.lonlat(box[0], box[1])
    e, s = proj.lonlat(box[2], box[3])
    grey, ink = (205, 210, 216), (120, 120, 130)
    lon_step, lat_step = _nice((e - w) / 8), _nice((n - s) / 6)
    lon = math.ceil(w / lon_step) * lon_step
    while lon <= e:
        x = proj.ox + (lon - proj.w) * proj.k * proj.scale
        draw.line((x, box[1], x, box[3]), fill=grey, width=1)
        draw.text((x + 2, box[3] - 12), f"{(lon + 180) % 360 - 180:.6g}°", fill=ink, font=font)
        lon += lon_step
    lat = math.ceil(s / lat_step) * lat_step
    while lat <= n:
        y = proj.oy + (proj.n - lat) * proj.scale
        draw.line((box[0], y, box[2], y), fill=grey, width=1)
        draw.text((box[0] + 2, y - 12), f"{lat:.6g}°", fill=ink, font=font)
        lat += lat_step


def _time_marks(draw: Any, proj: _Projection, items: list[_Item], t: float, font: Any) -> None:
    for it in items:
        if it.kind != "track":
            continue
        pos = _position_at(it.feature, t)
        if pos is None:
            continue
        x, y = proj.xy(*pos)
        draw.polygon((x, y - 9, x - 8, y + 6, x + 8, y + 6), fill=it.colour, outline=(0, 0, 0))


def _frame(draw: Any, proj: _Projection, size: tuple[int, int], font: Any, *, title: str, t: float | None) -> None:
    width, height = size
    draw.rectangle((0, 0, width, _MARGIN_TOP - 4), fill=(255, 255, 255))
    if title:
        draw.text((_MARGIN_SIDE, 6), title, fill=(0, 0, 0), font=font)
    if t is not None:
        from debrief_calc.features import iso

        caption = f"time {iso(t)}"
        draw.text((width - _MARGIN_SIDE, 6), caption, fill=(0, 0, 0), font=font, anchor="ra")
    nm_per_px = 60.0 / proj.scale
    length_nm = _nice(nm_per_px * width / 5)
    px = length_nm / nm_per_px
    x0, y0 = _MARGIN_SIDE, height - 14
    draw.rectangle((0, height - _MARGIN_BOTTOM + 6, width, height), fill=(255, 255, 255))
    draw.line((x0, y0, x0 + px, y0), fill=(0, 0, 0), width=3)
    for x in (x0, x0 + px):
        draw.line((x, y0 - 5, x, y0 + 3), fill=(0, 0, 0), width=2)
    draw.text((x0 + px + 8, y0 - 8), f"{length_nm:g} nm", fill=(0, 0, 0), font=font)
