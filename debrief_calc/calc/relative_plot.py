"""The analyst's relative-motion plot: the secondary's track as seen from the primary.

Ownship (the primary) is at the centre, north up; the secondary is drawn where the range and true
bearing from the primary put it (``x = R sin B``, ``y = R cos B``, in the distance unit), so the
line is the secondary's motion relative to ownship: a straight line while both hold their course
and speed, its nearest point to the centre the closest approach. Range rings in the distance unit
(a round step, the outermost the range asked for, ``max_range``, else the farthest drawn), bearing
ticks every 10° (labelled every 30°), times along the track at round intervals, its start and its
end, the CPA (a red line from the centre) and every other pass (orange) marked, periods of close
quarters drawn over the track in orange. What lies beyond the outer ring is cut there.

The range and bearing come from the series being drawn: range-bearing's, evaluated between fixes
when drawn from tracks (:mod:`debrief_calc.analysis.range_curve`), so the picture's geometry is the
geodesic's (the same inverse problem as every other figure). Pillow, as the other pictures; this
module knows nothing of MCP or stores.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from debrief_calc.tracks.times import clock, iso, stamp

if TYPE_CHECKING:
    from debrief_calc.calc._series_marks import Marks
    from debrief_calc.calc._series_source import Series
    from debrief_calc.calc.series_plot import Period
    from debrief_calc.geo._arrays import FloatArray

__all__ = ["RelativePicture", "draw_relative", "relative_xy"]

_TITLE, _MARGIN, _FOOT = 34, 34, 26
_TRACK = (31, 119, 180)
_QUARTERS = (255, 160, 40)
_CPA = (214, 39, 40)
_PASS = (230, 120, 0)
_RING = (200, 206, 214)
_TEXT = (20, 20, 20)
_MUTED = (90, 96, 106)
_TICK_STEPS = (60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_MAX_TIME_MARKS = 14


@dataclass(frozen=True)
class RelativePicture:
    png: bytes
    width: int
    height: int
    marked: list[str] = field(default_factory=list)  # the pass labels drawn


def relative_xy(range_: FloatArray, bearing: FloatArray) -> tuple[FloatArray, FloatArray]:
    """East and north of ownship (in the range's unit) of a contact at ``range_`` on true ``bearing``."""
    b = np.radians(bearing)
    out: tuple[FloatArray, FloatArray] = (range_ * np.sin(b), range_ * np.cos(b))
    return out


def _nice(raw: float) -> float:
    """A round step (1, 2, 2.5 or 5 × a power of ten) at least ``raw``."""
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    base = 10.0 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 2.5, 5, 10) if m * base >= raw * (1 - 1e-9))


def _amount(value: float) -> str:
    from debrief_calc.geo.distance_text import distance_figure

    return distance_figure(value)


class _Track:
    """The relative track: its times and east/north of ownship, with the marked points put in
    where the series' rows miss them (a stored series: each pass's range and bearing)."""

    def __init__(self, series: Series, marks: Marks):
        rng, brg = series.columns["range"], series.columns["bearing"]
        t = rng.times if rng.times is not None else series.times
        r, b = rng.values, brg.values
        extra = [
            (float(m.t), float(info["range"]), float(info["bearing"])) for m, info in marks.passes if "bearing" in info
        ]
        for info in marks.pass_answer:
            if info["is_cpa"] and isinstance(info.get("bearing"), int | float):
                from debrief_calc.tracks.times import parse_iso

                extra.append((parse_iso(info["time"]), float(info["range"]), float(info["bearing"])))
        if rng.times is None and extra:  # the stored rows, and the passes between them
            t = np.concatenate((t, [e[0] for e in extra]))
            r = np.concatenate((r, [e[1] for e in extra]))
            b = np.concatenate((b, [e[2] for e in extra]))
            order = np.argsort(t, kind="stable")
            t, r, b = t[order], r[order], b[order]
        self.t, self.r = t, r
        self.x, self.y = relative_xy(r, b)

    def at(self, when: float) -> tuple[float, float] | None:
        """East and north of ownship at ``when``: the sample there, else between its neighbours."""
        i = int(np.searchsorted(self.t, when))
        if i < self.t.size and abs(self.t[i] - when) < 1e-6:
            return float(self.x[i]), float(self.y[i])
        if i == 0 or i >= self.t.size:
            return None
        u = (when - self.t[i - 1]) / (self.t[i] - self.t[i - 1])
        x = self.x[i - 1] + (self.x[i] - self.x[i - 1]) * u
        y = self.y[i - 1] + (self.y[i] - self.y[i - 1]) * u
        return (float(x), float(y)) if math.isfinite(x) and math.isfinite(y) else None


def draw_relative(
    series: Series, marks: Marks, periods: Sequence[Period], opts: Mapping[str, Any]
) -> tuple[RelativePicture, dict[str, Any]]:
    """The relative-motion picture of ``series`` (its range and bearing columns) and what the answer
    says of it: ``title``, ``scale`` ({centre [x, y] in pixels, px_per_unit, unit, outer_ring,
    ring_step}: a contact at range R on bearing B is drawn at ``centre + px_per_unit × (R sin B,
    −R cos B)``), ``track`` (points drawn, beyond the outer ring), ``time_marks``."""
    from PIL import Image, ImageDraw

    from debrief_calc.plots.render._labels import Label, Lines, Placer, font

    props = series.props
    unit = str(props.get("distance_unit") or "nm")
    own = str(props.get("primary_name") or props.get("primary_id") or "primary")
    other = str(props.get("secondary_name") or props.get("secondary_id") or "secondary")
    width = int(opts.get("width", 800))
    height = int(opts.get("height", width))
    track = _Track(series, marks)
    finite = np.isfinite(track.x) & np.isfinite(track.y)
    far = float(np.nanmax(track.r[finite])) if finite.any() else 1.0
    asked = opts.get("max_range")
    step = _nice((float(asked) if asked else far) / 4)
    outer = float(asked) if asked else max(step * math.ceil(far * 1.0001 / step), step)
    size = min(width - 2 * _MARGIN - 30, height - _TITLE - _FOOT - 2 * _MARGIN)
    radius = max(size / 2, 40.0)
    cx, cy = width / 2, _TITLE + _MARGIN + 8 + (height - _TITLE - _FOOT - 2 * _MARGIN - 8) / 2
    k = radius / outer

    def px(x: Any, y: Any) -> tuple[Any, Any]:
        return cx + np.asarray(x) * k, cy - np.asarray(y) * k

    img = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(img, "RGBA")
    small, bold = font(11), font(14)
    title = f"Relative motion of {other} from {own}"
    bold.draw(draw, (12, 8), title, fill=_TEXT)
    t0, t1 = series.span
    same_day = stamp(t0)[:10] == stamp(t1)[:10]
    small.draw(
        draw,
        (width - 12, 10),
        f"{stamp(t0)} to {stamp(t1)[11:] if same_day else stamp(t1)} UTC",
        fill=_MUTED,
        anchor="ra",
    )
    ring_labels = _rings(draw, (cx, cy), radius, outer, step, unit, small)
    _bearing_ticks(draw, (cx, cy), radius, small)

    layer = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    pen = ImageDraw.Draw(layer)
    xs, ys = px(track.x, track.y)
    for lo, hi in _quarter_spans(track.t, periods):
        _polyline(pen, xs[lo:hi], ys[lo:hi], (*_QUARTERS, 200), 7)
    _polyline(pen, xs, ys, (*_TRACK, 255), 2)
    mask = Image.new("L", (width, height), 0)
    ImageDraw.Draw(mask).ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=255)
    layer.putalpha(Image.fromarray(np.minimum(np.asarray(layer.getchannel("A")), np.asarray(mask))))
    img.paste(layer, (0, 0), layer)

    # labels keep off the track where they can (a time's label is dropped rather than laid over it)
    placer = Placer(
        (2.0, _TITLE + 2.0, width - 2.0, height - _FOOT), lines=Lines(np.asarray(layer.getchannel("A")) > 0)
    )
    placer.occupy((cx - 9, cy - 9, cx + 9, cy + 9))
    for box in ring_labels:
        placer.occupy(box)
    _ownship(draw, (cx, cy))
    labels: list[Label] = [Label(own, (cx, cy), _TEXT, 0, size=12, clear=10, required=True)]
    inside = (xs - cx) ** 2 + (ys - cy) ** 2 <= radius * radius
    ends = np.flatnonzero(finite & inside)
    if ends.size:
        a, b = int(ends[0]), int(ends[-1])
        first, last = a == int(np.flatnonzero(finite)[0]), b == int(np.flatnonzero(finite)[-1])
        if first:  # the track's start; else where it comes inside the outer ring
            draw.ellipse((xs[a] - 5, ys[a] - 5, xs[a] + 5, ys[a] + 5), outline=_TRACK, fill=(255, 255, 255), width=2)
        said = f"{'start' if first else 'enters'} {_clock(float(track.t[a]))}"
        labels.append(Label(said, (float(xs[a]), float(ys[a])), _TRACK, 2, 11, 6))
        _arrow(draw, track, xs, ys, b)
        said = f"{'end' if last else 'leaves'} {_clock(float(track.t[b]))}"
        labels.append(Label(said, (float(xs[b]), float(ys[b])), _TRACK, 2, 11, 8))
    marked = _marks(draw, track, marks, px, (cx, cy), radius, labels)
    shown = _time_marks(draw, track, xs, ys, inside, labels)
    placed = [(label, placer.place(label)) for label in sorted(labels, key=lambda x: x.rank)]
    placer.draw(draw)
    labelled = {label.text for label, box in placed if box is not None}
    foot = f"{own} at the centre, north up; rings every {_amount(step)} {unit}; times UTC along {other}'s track"
    if periods and periods[0].label:
        foot += f"; orange: {periods[0].label}"
    small.draw(draw, (12, height - 18), foot, fill=_MUTED)
    out = io.BytesIO()
    img.save(out, format="PNG", compress_level=1)
    beyond = int((finite & ~inside).sum())
    drawn: dict[str, Any] = {"points": int(finite.sum()), "beyond_outer_ring": beyond}
    if beyond:
        drawn["note"] = f"the part beyond {_amount(outer)} {unit} is cut at the outer ring"
    answer = {
        "title": title,
        "scale": {
            "centre": [round(cx, 3), round(cy, 3)],
            "px_per_unit": round(k, 6),
            "unit": unit,
            "outer_ring": outer,
            "ring_step": step,
        },
        "track": drawn,
        "time_marks": [{"time": iso(t), "labelled": text in labelled} for t, text in shown][:40],
    }
    if not asked and (closer := _closer(track, marks, outer, unit)) is not None:
        answer["suggest"] = closer
    return RelativePicture(out.getvalue(), width, height, [m for m in marked if m in labelled]), answer


#: a CPA under this fraction of the outer ring is a knot at the centre: a closer ring is suggested
_CLOSE_FRACTION = 0.1
#: the suggested ring holds the track this long either side of the CPA (seconds)
_CLOSE_SPAN_S = 300.0


def _closer(track: _Track, marks: Marks, outer: float, unit: str) -> dict[str, Any] | None:
    """When the CPA is under a tenth of the outer ring: a max_range holding the track within five
    minutes of it (a nice ring), to draw again and read the close part."""
    cpa = marks.cpa
    if cpa is None or not isinstance(cpa[1].get("range"), int | float) or cpa[1]["range"] >= outer * _CLOSE_FRACTION:
        return None
    near = np.abs(track.t - cpa[0].t) <= _CLOSE_SPAN_S
    reach = float(np.nanmax(track.r[near])) if near.any() else 4.0 * float(cpa[1]["range"])
    step = _nice(reach / 4)
    ring = max(step * math.ceil(reach * 1.0001 / step), step)
    if ring >= outer:
        return None
    return {
        "max_range": ring,
        "note": f"the CPA ({_amount(float(cpa[1]['range']))} {unit}) is under a tenth of the outer ring "
        f"({_amount(outer)} {unit}): parameters.max_range {_amount(ring)} holds the track within five minutes of it",
    }


def _clock(t: float) -> str:
    """``HH:MM`` on a whole minute, else ``HH:MM:SS``."""
    return clock(t, 60 if abs(t - round(t / 60) * 60) < 0.5 else 1)


def _polyline(pen: Any, xs: FloatArray, ys: FloatArray, fill: tuple[int, ...], width: int) -> None:
    """The line through the points, broken where one is missing (NaN)."""
    good = np.isfinite(xs) & np.isfinite(ys)
    run = np.cumsum(~good)[good]
    px, py = xs[good], ys[good]
    for piece in np.split(np.arange(px.size), np.flatnonzero(np.diff(run)) + 1):
        if piece.size > 1:
            pen.line(np.column_stack((px[piece], py[piece])).ravel().tolist(), fill=fill, width=width, joint="curve")


def _quarter_spans(t: FloatArray, periods: Sequence[Period]) -> list[tuple[int, int]]:
    return [
        (int(np.searchsorted(t, p.start)), int(np.searchsorted(t, p.end, side="right")))
        for p in periods
        if p.end > p.start
    ]


def _rings(
    draw: Any, centre: tuple[float, float], radius: float, outer: float, step: float, unit: str, f: Any
) -> list[tuple[float, float, float, float]]:
    """The range rings and their labels (along the 135° line); returns the labels' boxes."""
    cx, cy = centre
    boxes = []
    count = math.floor(outer / step + 1e-9)
    rings = [step * i for i in range(1, count + 1)]
    if not rings or abs(rings[-1] - outer) > outer * 1e-9:
        rings.append(outer)
    for value in rings:
        r = radius * value / outer
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=_RING if value < outer else (150, 156, 166), width=1)
        lx, ly = cx + r * math.sin(math.radians(135)), cy - r * math.cos(math.radians(135))
        text = f"{_amount(value)} {unit}"
        w = f.getlength(text)
        draw.rectangle((lx + 2, ly - 1, lx + w + 6, ly + 13), fill=(255, 255, 255, 200))
        f.draw(draw, (lx + 4, ly), text, fill=_MUTED)
        boxes.append((lx + 2, ly - 1, lx + w + 6, ly + 13))
    draw.line((cx - radius, cy, cx + radius, cy), fill=(*_RING, 160), width=1)
    draw.line((cx, cy - radius, cx, cy + radius), fill=(*_RING, 160), width=1)
    return boxes


def _bearing_ticks(draw: Any, centre: tuple[float, float], radius: float, f: Any) -> None:
    """A tick every 10° outside the outer ring, longer every 30° with its bearing; N at the top."""
    cx, cy = centre
    for deg in range(0, 360, 10):
        s, c = math.sin(math.radians(deg)), math.cos(math.radians(deg))
        long = deg % 30 == 0
        r0, r1 = radius, radius + (9 if long else 5)
        draw.line((cx + r0 * s, cy - r0 * c, cx + r1 * s, cy - r1 * c), fill=(110, 116, 126), width=1)
        if long:
            text = "N" if deg == 0 else f"{deg:03d}"
            r2 = radius + 18
            f.draw(draw, (cx + r2 * s, cy - r2 * c), text, fill=_TEXT if deg == 0 else _MUTED, anchor="mm")


def _ownship(draw: Any, centre: tuple[float, float]) -> None:
    cx, cy = centre
    draw.ellipse((cx - 6, cy - 6, cx + 6, cy + 6), outline=_TEXT, fill=(255, 255, 255), width=2)
    draw.line((cx - 9, cy, cx + 9, cy), fill=_TEXT, width=1)
    draw.line((cx, cy - 9, cx, cy + 9), fill=_TEXT, width=1)


def _arrow(draw: Any, track: _Track, xs: FloatArray, ys: FloatArray, end: int) -> None:
    """An arrowhead at the track's last point drawn, along its last stretch of a few pixels."""
    back = end - 1
    while back > 0 and math.hypot(xs[end] - xs[back], ys[end] - ys[back]) < 6:
        back -= 1
    dx, dy = xs[end] - xs[back], ys[end] - ys[back]
    length = math.hypot(dx, dy)
    if back < 0 or length == 0 or not math.isfinite(length):
        return
    ux, uy = dx / length, dy / length
    tip = (float(xs[end]), float(ys[end]))
    left = (tip[0] - 11 * ux + 5 * uy, tip[1] - 11 * uy - 5 * ux)
    right = (tip[0] - 11 * ux - 5 * uy, tip[1] - 11 * uy + 5 * ux)
    draw.polygon((tip, left, right), fill=_TRACK)


def _marks(
    draw: Any, track: _Track, marks: Marks, px: Any, centre: tuple[float, float], radius: float, labels: list[Any]
) -> list[str]:
    """The CPA (a red line from ownship, a dot) and every other pass (orange dots), with labels;
    returns the pass labels asked to be placed."""
    from debrief_calc.plots.render._labels import Label

    cx, cy = centre
    out = []
    if marks.cpa is not None and (at := track.at(marks.cpa[0].t)) is not None:
        x, y = (float(v) for v in px(*at))
        if (x - cx) ** 2 + (y - cy) ** 2 <= (radius + 1) ** 2:
            draw.line((cx, cy, x, y), fill=(*_CPA, 220), width=2)
            draw.ellipse((x - 5, y - 5, x + 5, y + 5), outline=_CPA, fill=(255, 255, 255), width=2)
            labels.append(Label(marks.cpa[0].text, (x, y), _CPA, 1, 12, 6, required=True))
    for m, _info in marks.passes:
        if (at := track.at(m.t)) is None:
            continue
        x, y = (float(v) for v in px(*at))
        if (x - cx) ** 2 + (y - cy) ** 2 > (radius + 1) ** 2:
            continue
        draw.ellipse((x - 4, y - 4, x + 4, y + 4), outline=_PASS, fill=(255, 255, 255), width=2)
        labels.append(Label(m.text, (x, y), (170, 85, 0), 1, 11, 5, leader=True))
        out.append(m.text)
    return out


def _time_marks(
    draw: Any, track: _Track, xs: FloatArray, ys: FloatArray, inside: Any, labels: list[Any]
) -> list[tuple[float, str]]:
    """Ticks across the track at round times (about a dozen over its span), each labelled where
    there is room; returns the times marked and their labels."""
    from debrief_calc.plots.render._labels import Label

    t = track.t
    if t.size < 2:
        return []
    span = float(t[-1] - t[0])
    every = next((s for s in _TICK_STEPS if span / s <= _MAX_TIME_MARKS), _TICK_STEPS[-1])
    out = []
    for when in np.arange(math.ceil(t[0] / every) * every, t[-1] + 1e-6, every).tolist():
        i = int(np.searchsorted(t, when))
        if i <= 0 or i >= t.size or not (inside[i] and inside[i - 1]) or when >= t[-1] - 1e-3:
            continue  # outside the ring, or the track's end: its "end" label names that time
        u = (when - t[i - 1]) / (t[i] - t[i - 1]) if t[i] > t[i - 1] else 0.0
        x, y = xs[i - 1] + (xs[i] - xs[i - 1]) * u, ys[i - 1] + (ys[i] - ys[i - 1]) * u
        dx, dy = xs[i] - xs[i - 1], ys[i] - ys[i - 1]
        length = math.hypot(dx, dy)
        if not math.isfinite(x) or not math.isfinite(y):
            continue
        nx, ny = (-dy / length, dx / length) if length > 0 else (0.0, 1.0)
        draw.line((x - 5 * nx, y - 5 * ny, x + 5 * nx, y + 5 * ny), fill=_TRACK, width=2)
        text = clock(when, every)
        along = (dx / length, dy / length) if length > 0 else None
        labels.append(Label(text, (float(x), float(y)), _TRACK, 3, 11, 6, along=along, off_lines=True))
        out.append((when, text))
    return out
