"""A picture of time series as Debrief's time-variable (XY) plots draw them: one panel per quantity,
stacked, sharing a time axis (UTC, ``HH:MM`` ticks), each labelled with its name and unit (and,
for a signed rate, which sign is which: "+ drawing right"); the closest point of approach as a red
line down every panel (and a dot on the range), every other pass as an orange dot on the range,
periods of close quarters shaded, narrative entries as grey dashed lines with short labels above
the panels. A panel's axis spans its values (and the marks on it), from zero only when its values
reach it, or the limits asked; what falls outside them is cut at the panel's edge.

Readable at chat size: 900 pixels wide by default, about 190 a panel, Pillow's own scalable font.
A series longer than twice the panel's width in pixels is drawn as each pixel column's first,
lowest, highest and last value (the envelope a full drawing would cover), so 10,000 samples cost
what 1,600 do. Gaps (None or NaN) break the line, and so does an angle that wraps (359° to 1°).
Pillow and numpy are imported on the first picture; this module knows nothing of MCP or stores.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from debrief_calc.geo._arrays import FloatArray
from debrief_calc.tracks.times import clock, stamp

__all__ = ["Marker", "Panel", "Period", "SeriesPicture", "Span", "angle_kind", "draw_series"]

_LEFT, _RIGHT, _TITLE, _BAND_ROW, _BAND_ROWS, _BOTTOM, _GAP = 70, 18, 30, 15, 3, 44, 12
_MIN_PANEL = 80  # pixels: a panel lower than this no longer reads
_COLOURS = [(31, 119, 180), (44, 160, 44), (148, 103, 189), (255, 127, 14), (140, 86, 75), (23, 190, 207)]
_CPA = (214, 39, 40)
_SPAN_FILLS = ((236, 241, 248), (246, 243, 236))  # alternate legs, faintly
_PASS = (230, 120, 0)
_SHADE = (255, 170, 60, 48)
_SIGN = (120, 120, 130)
_NARRATIVE = (110, 110, 120)
_GRID = (225, 228, 233)
_TEXT = (20, 20, 20)
_RING = (200, 30, 30)  # an outlier's open ring
_TICK_STEPS = (10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_LABEL_CHARS = 26  # of a narrative entry's text in its label


@dataclass(frozen=True)
class Panel:
    """One quantity: its column name, its label (``Range (yd)``), its values at the series' times
    (or at its own ``times``: ownship's course beside the cuts) and, for an angle, ``"circle"``
    (0–360) or ``"signed"`` (±180) to break the line where it wraps. ``sign``: what its positive
    and negative values mean, written at the panel's right edge (``("drawing right", "drawing
    left")``); ``limits``: the axis asked for (low, high; None for the data's); ``dots``: each value
    a dot, not a line (legacy Debrief's stacked dots); ``centred``: the axis symmetric about zero,
    with zero drawn (an error)."""

    name: str
    label: str
    values: FloatArray
    angle: str | None = None
    times: FloatArray | None = None
    dots: bool = False
    centred: bool = False
    sign: tuple[str, str] | None = None
    limits: tuple[float | None, float | None] | None = None
    rings: np.ndarray[Any, np.dtype[np.bool_]] | None = None  # dots drawn as open rings (outliers), named
    ring_label: str = ""


@dataclass(frozen=True)
class Span:
    """A stretch of time shaded on every panel and labelled (an ownship leg)."""

    start: float
    end: float
    label: str


@dataclass(frozen=True)
class Period:
    """A period shaded down every panel (close quarters), from ``start`` to ``end`` (epoch seconds)."""

    start: float
    end: float
    label: str = ""


@dataclass(frozen=True)
class Marker:
    """A time marked down the panels (epoch seconds) with its label; ``value``: where on the
    ``panel`` named (the CPA's range) a dot goes."""

    t: float
    text: str
    panel: str | None = None
    value: float | None = None
    who: str | None = None  # a narrative entry's platform, named in its label


@dataclass(frozen=True)
class SeriesPicture:
    png: bytes
    width: int
    height: int
    labelled: list[str] = field(default_factory=list)  # narrative labels drawn (the others crowded out)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # each panel's y axis, low to high
    marked: list[str] = field(default_factory=list)  # the pass labels drawn


def angle_kind(name: str) -> str | None:
    """Whether a column holds an angle that wraps: ``"circle"`` for true bearings and courses,
    ``"signed"`` for relative bearings and the angle on the bow, None for anything else."""
    if name.startswith("relative_bearing") or name in ("angle_on_bow", "atb"):
        return "signed"
    if name == "bearing" or name.endswith("course"):
        return "circle"
    return None


def _font(size: int) -> Any:
    from debrief_calc.plots.render._labels import font

    return font(size)


def _nice_step(span: float, ticks: int) -> float:
    raw = span / max(ticks, 1)
    base = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    return next((m * base for m in (1, 2, 2.5, 5, 10) if m * base >= raw), 10 * base)


def _y_range(panel: Panel, extra: Sequence[float] = ()) -> tuple[float, float, float]:
    """The panel's y axis: low, high (the data's and ``extra``'s, a marked value the samples miss,
    padded a little; the whole circle for an angle that spreads over half of it; ``limits`` where
    asked) and the step between its ticks. Never from zero for its own sake: a range that stays
    between 2,000 and 2,400 yd is drawn over that."""
    v = panel.values[np.isfinite(panel.values)]
    if panel.centred:  # headroom: the dots stay below the panel's label
        top = max(float(np.max(np.abs(v))) * 1.35 if v.size else 0.0, 0.5)
        return -top, top, _nice_step(2 * top, 5)
    if extra:
        v = np.concatenate((v, np.asarray([x for x in extra if math.isfinite(x)], dtype=float)))
    asked_lo, asked_hi = panel.limits or (None, None)
    if panel.angle is not None and v.size and float(v.max() - v.min()) > 180.0 and panel.limits is None:
        return (-180.0, 180.0, 90.0) if panel.angle == "signed" else (0.0, 360.0, 90.0)
    if not v.size:
        v = np.asarray([0.0, 1.0])
    lo, hi = float(v.min()), float(v.max())
    if asked_lo is not None:
        lo = asked_lo
        hi = max(hi, lo)
    if asked_hi is not None:
        hi = asked_hi
        lo = min(lo, hi)
    if hi - lo < 1e-9:
        pad = max(abs(lo) * 0.05, 1.0)
        lo, hi = (lo if asked_lo is not None else lo - pad), (hi if asked_hi is not None else hi + pad)
    pad = (hi - lo) * 0.05
    floor = 0.0 if float(v.min()) >= 0 and _never_negative(panel.name) else -math.inf
    lo = lo if asked_lo is not None else max(lo - pad, floor)  # padding, not a range below zero
    hi = hi if asked_hi is not None else hi + pad
    return lo, hi, _nice_step(hi - lo, 5)


def _never_negative(name: str) -> bool:
    """A distance or a speed: its axis is not padded below zero."""
    return (name == "range" or name.endswith("_range") or "speed" in name) and not name.endswith("rate")


def _pieces(x: FloatArray, y: FloatArray, angle: str | None) -> list[tuple[FloatArray, FloatArray]]:
    """The runs of the line without a gap (NaN) or a wrap of the angle (a jump over 180°)."""
    bad = ~np.isfinite(y)
    jump = np.zeros(y.size, dtype=bool)
    if angle is not None and y.size > 1:
        with np.errstate(invalid="ignore"):
            jump[1:] = np.abs(np.diff(y)) > 180.0
    ids = np.cumsum(bad | jump)[~bad]
    splits = np.flatnonzero(np.diff(ids)) + 1
    return list(zip(np.split(x[~bad], splits), np.split(y[~bad], splits), strict=True))


def _envelope(x: FloatArray, y: FloatArray) -> list[float]:
    """The line as Pillow draws it; more points than pixel columns become each column's first,
    lowest, highest and last value."""
    if x.size <= 2 * max(float(x[-1] - x[0]), 1.0):
        return np.column_stack((x, y)).ravel().tolist()
    col = np.floor(x).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, np.diff(col) != 0])
    ends = np.r_[starts[1:] - 1, col.size - 1]
    xs = col[starts].astype(np.float64)
    lows, highs = np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts)
    ys = np.column_stack((y[starts], lows, highs, y[ends])).ravel()
    return np.column_stack((np.repeat(xs, 4), ys)).ravel().tolist()


def _number(v: float, step: float) -> str:
    """A tick's value with the decimals its step needs (2.5: one; 0.2: one), thousands separated."""
    power = math.floor(math.log10(step) + 1e-9)
    decimals = max(0, -power + (1 if round(step / 10.0**power, 6) == 2.5 else 0))
    return f"{0.0 if abs(v) < step * 1e-6 else v:,.{decimals}f}"


def _tick_step(span: float, width: float) -> float:
    """Seconds between time ticks: the first usual interval that puts them 90 pixels apart or more."""
    return float(next((s for s in _TICK_STEPS if s * width / max(span, 1e-9) >= 90), _TICK_STEPS[-1]))


def _short(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= _LABEL_CHARS:
        return text
    cut = text[: _LABEL_CHARS - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def draw_series(
    times: FloatArray,
    panels: Sequence[Panel],
    *,
    title: str,
    cpa: Marker | None = None,
    narratives: Sequence[Marker] = (),
    peaks: Sequence[Marker] = (),
    spans: Sequence[Span] = (),
    passes: Sequence[Marker] = (),
    periods: Sequence[Period] = (),
    width: int = 900,
    height: int | None = None,
) -> SeriesPicture:
    """The panels over ``times`` (epoch seconds, increasing) as a PNG ``width`` pixels wide and
    ``height`` high (default: about 190 pixels a panel). ``peaks``: true extremes the samples miss,
    each a diamond on its panel at its value (the axis reaching it) with its label beside;
    ``spans``: stretches shaded on every panel, each labelled in the last panel (ownship's legs);
    ``passes``: the passes that are not the CPA, a dot on their panel with a label; ``periods``:
    shaded down every panel (close quarters)."""
    from PIL import Image, ImageDraw

    t0, t1 = float(times[0]), float(times[-1])
    if t1 <= t0:
        t0, t1 = t0 - 30.0, t1 + 30.0
    due = sum(1 for m in narratives if t0 <= m.t <= t1)
    band = _BAND_ROW * min(_BAND_ROWS, due) + 6 if due else 0
    top = _TITLE + band
    n = len(panels)
    if height is None:
        height = top + n * 190 + (n - 1) * _GAP + _BOTTOM
    panel_h = max((height - top - _BOTTOM - (n - 1) * _GAP) // max(n, 1), _MIN_PANEL)
    height = max(height, top + n * panel_h + (n - 1) * _GAP + _BOTTOM)  # as asked, unless too low for the panels
    x0, x1 = _LEFT, width - _RIGHT
    img = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(img, "RGBA")
    small, normal, bold = _font(11), _font(12), _font(14)

    def x_of(t: Any) -> Any:
        return x0 + (np.asarray(t, dtype=float) - t0) / (t1 - t0) * (x1 - x0)

    step = _tick_step(t1 - t0, x1 - x0)
    ticks = np.arange(math.ceil(t0 / step) * step, t1 + 1e-6, step)
    bold.draw(draw, (x0, 8), title, fill=_TEXT)
    span_text = f"{stamp(t0)} to {stamp(t1)[11:] if stamp(t0)[:10] == stamp(t1)[:10] else stamp(t1)} UTC"
    small.draw(draw, (x1, 10), span_text, fill=(80, 80, 90), anchor="ra")

    ranges: dict[str, tuple[float, float]] = {}
    tops: dict[str, tuple[float, float, float, float]] = {}
    taken: list[tuple[float, float, float, float]] = []  # labels drawn and panel titles/legends: no label over them
    for i, panel in enumerate(panels):
        y0 = top + i * (panel_h + _GAP)
        y1 = y0 + panel_h
        marks = [m.value for m in (*peaks, *passes) if m.panel == panel.name and m.value is not None]
        if cpa is not None and cpa.panel == panel.name and cpa.value is not None:
            marks.append(cpa.value)
        lo, hi, ystep = _y_range(panel, marks if panel.limits is None else [])
        ranges[panel.name] = (lo, hi)
        tops[panel.name] = (y0, y1, lo, hi)
        draw.rectangle((x0, y0, x1, y1), fill=(250, 251, 253), outline=(170, 175, 185))
        for k, span in enumerate(spans):
            sa, sb = max(float(x_of(span.start)), x0 + 1), min(float(x_of(span.end)), x1 - 1)
            if sb > sa:
                draw.rectangle((sa, y0 + 1, sb, y1 - 1), fill=_SPAN_FILLS[k % 2])
                if i == len(panels) - 1:
                    small.draw(draw, ((sa + sb) / 2, y1 - 14), span.label, fill=(90, 90, 100), anchor="ma")
        for period in periods:
            a, b = max(float(x_of(period.start)), x0 + 1), min(float(x_of(period.end)), x1 - 1)
            if b >= a:
                draw.rectangle((a, y0 + 1, max(b, a + 1), y1 - 1), fill=_SHADE)
        for t in ticks.tolist():
            x = float(x_of(t))
            draw.line((x, y0 + 1, x, y1 - 1), fill=_GRID)
        for k in range(math.ceil(lo / ystep - 1e-9), math.floor(hi / ystep + 1e-9) + 1):
            v = k * ystep
            y = y1 - (v - lo) / (hi - lo) * panel_h
            if y0 < y < y1:
                draw.line((x0 + 1, y, x1 - 1, y), fill=_GRID)
            if y0 <= y <= y1:
                small.draw(draw, (x0 - 6, y), _number(v, ystep), fill=(70, 70, 80), anchor="rm")
        colour = _COLOURS[i % len(_COLOURS)]
        if panel.centred and lo < 0 < hi:
            zero = y1 - (0 - lo) / (hi - lo) * panel_h
            draw.line((x0 + 1, zero, x1 - 1, zero), fill=(120, 125, 135), width=1)
        px_all = x_of(panel.times) if panel.times is not None else x_of(times)
        if panel.dots:
            finite = np.isfinite(panel.values)
            ringed = panel.rings if panel.rings is not None else np.zeros(finite.size, dtype=bool)
            for px, value, ring in zip(
                px_all[finite].tolist(), panel.values[finite].tolist(), ringed[finite].tolist(), strict=True
            ):
                py = y1 - (value - lo) / (hi - lo) * panel_h
                if ring:
                    draw.ellipse((px - 5, py - 5, px + 5, py + 5), outline=_RING, width=2)
                else:
                    draw.ellipse((px - 2.5, py - 2.5, px + 2.5, py + 2.5), fill=colour)
            if ringed.any() and panel.ring_label:
                w = small.getlength(panel.ring_label)
                draw.rectangle((x1 - w - 24, y0 + 1, x1 - 1, y0 + 18), fill=(255, 255, 255, 150))
                draw.ellipse((x1 - w - 20, y0 + 5, x1 - w - 10, y0 + 15), outline=_RING, width=2)
                small.draw(draw, (x1 - 5, y0 + 4), panel.ring_label, fill=_RING, anchor="ra")
        else:
            _draw_line(img, panel, px_all, (x0, y0, x1, y1), (lo, hi), colour)
        label_w = normal.getlength(panel.label) + 10
        draw.rectangle((x0 + 1, y0 + 1, x0 + label_w, y0 + 18), fill=(255, 255, 255, 215))  # a spike stays faint
        normal.draw(draw, (x0 + 5, y0 + 3), panel.label, fill=colour)
        taken.append((x0 + 1, y0 + 1, x0 + label_w, y0 + 18))
        if panel.sign is not None and lo < 0 < hi:
            taken.extend(_draw_sign(draw, panel.sign, (x1, y0, y1), small))

    bottom = top + n * panel_h + (n - 1) * _GAP
    for t in ticks.tolist():
        x = float(x_of(t))
        draw.line((x, bottom, x, bottom + 5), fill=(70, 70, 80), width=1)
        small.draw(draw, (x, bottom + 8), clock(t, step), fill=(50, 50, 60), anchor="ma")
    small.draw(draw, (x1, height - 14), "time (UTC)", fill=(90, 90, 100), anchor="ra")
    first = next(iter(tops.values()))
    for period in periods:  # the threshold said once, inside the first period's band at the top
        if period.label and t0 <= period.start <= t1:
            w = small.getlength(period.label)
            lx = min(max(float(x_of(period.start)) + 3, x0 + normal.getlength(panels[0].label) + 14), x1 - w - 4)
            draw.rectangle((lx - 2, first[0] + 2, lx + w + 2, first[0] + 16), fill=(255, 255, 255, 200))
            small.draw(draw, (lx, first[0] + 3), period.label, fill=(190, 100, 0))

    labelled = _draw_narratives(draw, narratives, x_of, (x0, x1), (_TITLE, top, bottom), small)
    if cpa is not None:
        x = float(x_of(cpa.t))
        for name, (p0, p1, lo, hi) in tops.items():
            draw.line((x, p0 + 1, x, p1 - 1), fill=(*_CPA, 200), width=2)
            if name == cpa.panel and cpa.value is not None and lo <= cpa.value <= hi:
                cy = p1 - (cpa.value - lo) / (hi - lo) * panel_h
                draw.ellipse((x - 5, cy - 5, x + 5, cy + 5), outline=_CPA, width=2)
        w = normal.getlength(cpa.text)
        lx = x + 6 if x + 6 + w <= x1 - 2 else x - 6 - w
        draw.rectangle((lx - 2, first[0] + 20, lx + w + 2, first[0] + 36), fill=(255, 255, 255, 230))
        normal.draw(draw, (lx, first[0] + 22), cpa.text, fill=_CPA)
        taken.append((lx - 2, first[0] + 20, lx + w + 2, first[0] + 36))

    marked = [
        m.text
        for m in passes
        if m.panel in tops
        and m.value is not None
        and t0 <= m.t <= t1
        and _draw_pass(draw, m, float(x_of(m.t)), tops[m.panel], (x0, x1), small, taken)
    ]
    for m in peaks:
        if m.panel in tops and m.value is not None and t0 <= m.t <= t1:
            _draw_peak(draw, m, float(x_of(m.t)), tops[m.panel], (x0, x1), normal, taken)

    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    return SeriesPicture(out.getvalue(), width, height, labelled, ranges, marked)


def _draw_line(
    img: Any,
    panel: Panel,
    xs: FloatArray,
    box: tuple[float, float, float, float],
    axis: tuple[float, float],
    colour: tuple[int, int, int],
) -> None:
    """The panel's line, drawn on a layer of the panel's size and laid on the picture: what falls
    outside the axis (limits asked) is cut at the panel's edge, not drawn over its neighbours."""
    from PIL import Image, ImageDraw

    x0, y0, x1, y1 = box
    lo, hi = axis
    w, h = round(x1 - x0) + 1, round(y1 - y0) + 1  # the panel, its border rows included
    layer = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    pen = ImageDraw.Draw(layer)
    for px, values in _pieces(xs - x0, panel.values, panel.angle):
        py = (y1 - y0) - (values - lo) / (hi - lo) * (y1 - y0)
        if px.size == 1:
            pen.ellipse((px[0] - 1.5, py[0] - 1.5, px[0] + 1.5, py[0] + 1.5), fill=colour)
        else:
            pen.line(_envelope(px, py), fill=colour, width=2)
    img.paste(layer, (round(x0), round(y0)), layer)


def _draw_sign(
    draw: Any, sign: tuple[str, str], at: tuple[float, float, float], f: Any
) -> list[tuple[float, float, float, float]]:
    """What the signs mean, at the panel's right edge: the positive side's words at the top, the
    negative side's at the bottom. Returns the boxes they take."""
    x1, y0, y1 = at
    boxes = []
    for text, y, anchor in ((f"+ {sign[0]}", y0 + 4, "ra"), (f"- {sign[1]}", y1 - 4, "rd")):
        w = f.getlength(text)
        top = y if anchor == "ra" else y - 13
        boxes.append((x1 - w - 8, top - 1, x1 - 2, top + 13))
        draw.rectangle(boxes[-1], fill=(255, 255, 255, 200))
        f.draw(draw, (x1 - 5, y), text, fill=_SIGN, anchor=anchor)
    return boxes


def _draw_pass(
    draw: Any,
    m: Marker,
    x: float,
    panel: tuple[float, float, float, float],
    span: tuple[float, float],
    f: Any,
    taken: list[tuple[float, float, float, float]],
) -> bool:
    """A pass that is not the CPA: an orange dot at its range and its label above (or below) it,
    clear of the labels drawn; False when its value is outside the panel's axis."""
    p0, p1, lo, hi = panel
    if not lo <= float(m.value or 0.0) <= hi:
        return False
    y = p1 - (float(m.value or 0.0) - lo) / (hi - lo) * (p1 - p0)
    draw.line((x, p0 + 1, x, p1 - 1), fill=(*_PASS, 110), width=1)
    draw.ellipse((x - 4, y - 4, x + 4, y + 4), outline=_PASS, fill=(255, 255, 255), width=2)
    w = f.getlength(m.text)
    lx = min(max(x - w / 2, span[0] + 2), span[1] - 2 - w)
    for ly in (y - 20, y + 7, p0 + 40, p1 - 18):
        box = (lx - 2, ly, lx + w + 2, ly + 14)
        if p0 + 1 <= ly and ly + 14 <= p1 - 1 and not any(_overlaps(box, other) for other in taken):
            draw.rectangle(box, fill=(255, 255, 255, 220))
            f.draw(draw, (lx, ly + 1), m.text, fill=(170, 85, 0))
            taken.append(box)
            return True
    return True


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _draw_peak(
    draw: Any,
    m: Marker,
    x: float,
    panel: tuple[float, float, float, float],
    span: tuple[float, float],
    f: Any,
    taken: list[tuple[float, float, float, float]],
) -> None:
    """An extreme: a red diamond at its value, its label beside it (inside the panel), on the first
    side (right, left, below, above) clear of the titles, legends and labels drawn."""
    p0, p1, lo, hi = panel
    y = p1 - (float(m.value or 0.0) - lo) / (hi - lo) * (p1 - p0)
    draw.polygon(((x, y - 6), (x + 6, y), (x, y + 6), (x - 6, y)), outline=_CPA, fill=(255, 255, 255), width=2)
    w = f.getlength(m.text)

    def inside(lx: float, ly: float) -> tuple[float, float, float, float]:
        lx = min(max(lx, span[0] + 2), span[1] - 4 - w)
        ly = min(max(ly, p0 + 2), p1 - 18)
        return (lx - 2, ly, lx + w + 2, ly + 16)

    places = [inside(x + 9, y - 8), inside(x - 9 - w, y - 8), inside(x - w / 2, y + 9), inside(x - w / 2, y - 25)]
    box = next((b for b in places if not any(_overlaps(b, other) for other in taken)), places[0])
    draw.rectangle(box, fill=(255, 255, 255, 230))
    f.draw(draw, (box[0] + 2, box[1] + 2), m.text, fill=_CPA)
    taken.append(box)


def _draw_narratives(
    draw: Any,
    narratives: Sequence[Marker],
    x_of: Any,
    span: tuple[float, float],
    rows: tuple[float, float, float],
    f: Any,
) -> list[str]:
    """Grey dashed lines down the panels at the entries' times, their labels in the band above
    (in the first of its rows where they fit, else left out). Returns the labels drawn."""
    band_top, top, bottom = rows
    ends: list[float] = [-1e9] * _BAND_ROWS  # where each row's last label ends
    labelled: list[str] = []
    for m in sorted(narratives, key=lambda m: m.t):
        x = float(x_of(m.t))
        if not span[0] <= x <= span[1]:
            continue
        y = top
        while y < bottom:
            draw.line((x, y, x, min(y + 4, bottom)), fill=(*_NARRATIVE, 170), width=1)
            y += 8
        text = f"{clock(m.t, 60)} {m.who + ': ' if m.who else ''}{_short(m.text)}".strip()
        w = f.getlength(text)
        lx = min(max(x - 3, span[0]), span[1] - w)
        row = next((r for r in range(_BAND_ROWS) if ends[r] + 8 <= lx), None)
        if row is None:
            continue
        ly = band_top + 2 + row * _BAND_ROW
        draw.line((x, ly + _BAND_ROW - 3, x, top), fill=(*_NARRATIVE, 120), width=1)
        f.draw(draw, (lx, ly), text, fill=_NARRATIVE)
        ends[row] = lx + w
        labelled.append(text)
    return labelled
