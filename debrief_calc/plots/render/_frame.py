"""What frames the data: the graticule (in degrees and minutes, placed like labels, so that the
legend and the inset never hide them), the title, the time caption, the scale bar in nautical miles, the interval
of the time labels and what is not shown because it is not active at the time."""

from __future__ import annotations

import math
from typing import Any, Final

from debrief_calc.geo.dm import latitude_dm, longitude_dm
from debrief_calc.plots.render._common import BACKGROUND, MARGIN_BOTTOM, MARGIN_SIDE, MARGIN_TOP, nice
from debrief_calc.plots.render._labels import Label, font
from debrief_calc.plots.render._tracks import step_text
from debrief_calc.plots.render._view import Projection
from debrief_calc.tracks.times import dtg, iso_second

__all__ = ["draw_frame", "draw_graticule", "graticule_step", "hidden_note"]

_TINT = (120, 120, 130)


#: graticule steps, in minutes of arc: a navigator's chart spacings, from 0.01' to 30°
_STEPS_MIN: Final = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.5,
    1.0,
    2.0,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    60.0,
    120.0,
    300.0,
    600.0,
    1200.0,
    1800.0,
)


def graticule_step(span_deg: float) -> tuple[float, int]:
    """The largest of a chart's spacings in minutes not above ``span_deg`` (the smallest, below
    them all), in degrees, and the decimals of the minutes its labels need."""
    minutes = span_deg * 60.0
    step = max((m for m in _STEPS_MIN if m <= minutes + 1e-12), default=_STEPS_MIN[0])
    decimals = 0 if step >= 1 else 1 if step >= 0.1 else 2
    return step / 60.0, decimals


def _marks(low: float, high: float, step: float) -> list[float]:
    """The multiples of ``step`` from ``low`` to ``high``, counted in whole steps (no drift)."""
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def draw_graticule(draw: Any, proj: Projection, labels: list[Label]) -> None:
    """Light parallels and meridians over what is visible, about 120 pixels apart (at most 8
    across and 6 down), on a chart's spacings in minutes, so that their labels never run into each
    other. Their degrees and minutes go to ``labels`` (``22°07.5'N``, ``021°45'W``): a latitude at
    the left edge above its line, else at the right; a longitude at the bottom right of its line,
    else at the top."""
    box = proj.box
    w, n = proj.lonlat(box[0], box[1])
    e, s = proj.lonlat(box[2], box[3])
    grey, small = (205, 210, 216), font(10)
    across = min(max((box[2] - box[0]) / 120, 1.0), 8.0)
    down = min(max((box[3] - box[1]) / 90, 1.0), 6.0)
    (lon_step, lon_dec), (lat_step, lat_dec) = graticule_step((e - w) / across), graticule_step((n - s) / down)
    for lon in _marks(w, e, lon_step):
        x = proj.ox + (lon - proj.w) * proj.k * proj.scale
        draw.line((x, box[1], x, box[3]), fill=grey, width=1)
        text = longitude_dm(lon, lon_dec)
        if x + 2 + small.getlength(text) <= box[2]:
            spots = ((x + 1, box[3] - 14), (x + 1, box[1] + 1))
            labels.append(Label(text, (x, box[3]), _TINT, rank=1, size=10, order=(1, 0), spots=spots, patch=BACKGROUND))
    for lat in _marks(s, n, lat_step):
        y = proj.oy + (proj.n - lat) * proj.scale
        draw.line((box[0], y, box[2], y), fill=grey, width=1)
        text = latitude_dm(lat, lat_dec)
        if box[1] <= y - 12 and y <= box[3] - 16:  # clear of the top and of the longitudes
            right = box[2] - 5 - small.getlength(text)
            spots = ((box[0] + 1, y - 12), (right, y - 12))
            labels.append(Label(text, (box[0], y), _TINT, rank=1, size=10, order=(1, 0), spots=spots, patch=BACKGROUND))


def hidden_note(kinds: list[str], t: float | None) -> str:
    """``"2 zones, 1 point not active at 142300Z: hidden"`` for the kinds of the features left out
    (``in the window`` for a picture of a time window with no current time)."""
    names = {"zone": "zone", "buoyfield": "buoy field", "point": "point"}
    counts: dict[str, int] = {}
    for kind in kinds:
        name = names.get(kind, "feature")
        counts[name] = counts.get(name, 0) + 1
    parts = [f"{n} {name}{'s' if n > 1 else ''}" for name, n in counts.items()]
    when = "in the window" if t is None else f"at {dtg(t)}"
    return f"{', '.join(parts)} not active {when}: hidden"


def draw_frame(
    draw: Any,
    proj: Projection,
    size: tuple[int, int],
    *,
    title: str,
    t: float | None,
    step: float | None,
    note: str = "",
) -> None:
    """The title and the time (DTG and ISO) above the map; the scale bar, the time-label
    interval and ``note`` (what is hidden) below it, the note first where they do not all fit."""
    width, height = size
    f = font(12)
    draw.rectangle((0, 0, width, MARGIN_TOP - 4), fill=(255, 255, 255))
    caption = ""
    if t is not None:
        caption = f"{dtg(t)}  {iso_second(t)}"  # the nearest second, as every display shows it
        f.draw(draw, (width - MARGIN_SIDE, 6), caption, fill=(0, 0, 0), anchor="ra")
    if title:
        room = width - 2 * MARGIN_SIDE - (f.getlength(caption) + 12 if caption else 0)
        while title and f.getlength(title) > room:
            title = title[:-2] + "…" if len(title) > 1 else ""
        f.draw(draw, (MARGIN_SIDE, 6), title, fill=(0, 0, 0))
    nm_per_px = 60.0 / proj.scale
    length_nm = nice(nm_per_px * width / 5)
    px = length_nm / nm_per_px
    x0, y0 = MARGIN_SIDE, height - 14
    draw.rectangle((0, height - MARGIN_BOTTOM + 6, width, height), fill=(255, 255, 255))
    draw.line((x0, y0, x0 + px, y0), fill=(0, 0, 0), width=3)
    for x in (x0, x0 + px):
        draw.line((x, y0 - 5, x, y0 + 3), fill=(0, 0, 0), width=2)
    scale_text = f"{length_nm:g} nm"
    f.draw(draw, (x0 + px + 8, y0 - 8), scale_text, fill=(0, 0, 0))
    free = x0 + px + 8 + f.getlength(scale_text) + 16  # where the bar's text ends
    small = font(11)
    right = float(width - MARGIN_SIDE)
    if note:
        while note and small.getlength(note) > right - free:
            note = note[:-2] + "…" if len(note) > 1 else ""
        if note:
            small.draw(draw, (right, y0 - 7), note, fill=(150, 60, 0), anchor="ra")
            right -= small.getlength(note) + 16
    if step is not None:
        interval = f"time labels every {step_text(step)}"
        if small.getlength(interval) <= right - free:
            small.draw(draw, (right, y0 - 7), interval, fill=(90, 90, 100), anchor="ra")
