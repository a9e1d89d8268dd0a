"""The legend: a swatch and the name of each track, of each zone and each point (buoy field,
annotation) drawn, then what the picture's conventions mean when
they are on it (the selection's highlight, the faint or hidden future, the marks of a track's
start and end), in the corner of the map where it hides least. :func:`best_corner` also places
the range inset.

A track's row is its name and, when it has another, its ``shortName`` (``VAN GALEN3 (VANG)``),
with ``(resampled 300 s)`` said as ``(every 5 min)``; where that is too long for the row (about 32
characters, or under half a narrow map's width), the name alone, then the ``shortName`` with the name's
last bracket (``LEOP (every 5 min)``), then the name cut at a word before any bracket it would
split, with an ellipsis. Zones and points come after the tracks, one row per name and colour,
at most ``_OTHERS`` rows: beyond that, and where the map is too short for them all, the last row
says how many more (``+4 more zones, 2 more points``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.plots.render._common import (
    BACKGROUND,
    FAINT,
    HALO_ALPHA,
    HALO_WIDTH,
    HIGHLIGHT,
    RGB,
    TEXT,
    Box,
    Item,
    blend,
    rgb,
)
from debrief_calc.plots.render._cpa import dashed_line
from debrief_calc.plots.render._labels import font

__all__ = ["Conventions", "best_corner", "draw_legend"]

_ROW, _PAD, _SWATCH, _INSET = 16, 6, 18, 6
_OTHERS = 8  # rows of zones and points at most, the last saying how many more when there are more
_NEUTRAL: RGB = (90, 90, 90)
Row = tuple[str, str, RGB, RGB]  # kind, text, colour (line, marker), fill (a zone's)


@dataclass(frozen=True)
class Conventions:
    """Which conventions are on the picture: the selection's highlight, the future after ``after``
    (a DTG) drawn faint or hidden, tracks' starts and ends."""

    selected: bool = False
    after: str | None = None
    future_hidden: bool = False
    ends: bool = False

    def rows(self) -> list[tuple[str, str]]:
        out = [("selected", "selected")] if self.selected else []
        if self.after is not None:
            out.append(
                ("hidden", f"after {self.after}: hidden") if self.future_hidden else ("future", f"after {self.after}")
            )
        if self.ends:
            out.append(("ends", "start, end"))
        return out


_ROW_TEXT = 200.0  # pixels of a row's text at most
_RESAMPLED = re.compile(r"\(resampled (\d+(?:\.\d+)?) s\)")


def _every(match: re.Match[str]) -> str:
    seconds = float(match.group(1))
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"(every {seconds / size:g} {unit})"
    return f"(every {seconds:g} s)"


def _entry(it: Item, room: float) -> str:
    """The track's row: the first of its spellings that fits ``room`` pixels, else the last cut."""
    f = font(11)
    name = _RESAMPLED.sub(_every, it.name or it.id)
    short = it.short if it.short and it.short != it.name else ""
    spellings = [f"{name} ({short})", name] if short else [name]
    bracket = re.search(r"\s(\([^()]*\))$", name)
    if short and bracket is not None:
        spellings.append(f"{short} {bracket.group(1)}")
    fitting = next((text for text in spellings if f.getlength(text) <= room), None)
    return fitting if fitting is not None else _cut(name, room)


def _cut(text: str, room: float) -> str:
    """The text cut at a word (before any bracket left open) so that it fits ``room`` with "…"."""
    f = font(11)
    words = text.split(" ")
    while len(words) > 1:
        words.pop()
        kept = " ".join(words)
        if kept.count("(") > kept.count(")"):
            continue
        if f.getlength(kept + "…") <= room:
            return kept.rstrip(" ,;:-") + "…"
    while text and f.getlength(text + "…") > room:
        text = text[:-1]
    return text + "…"


def best_corner(
    box: Box, size: tuple[float, float], clutter: Any, areas: Sequence[Box], taken: Sequence[Box] = ()
) -> tuple[float, float] | None:
    """The top-left of the corner of ``box`` where a ``size`` rectangle hides least: the fewest
    ``clutter`` points (pixels ``(n, 2)``), counting every 50 square pixels of ``areas`` as one
    more; never over a ``taken`` box. None when it does not fit anywhere."""
    w, h = size
    if w > box[2] - box[0] - 2 * _INSET or h > box[3] - box[1] - 2 * _INSET:
        return None
    left, right = box[0] + _INSET, box[2] - _INSET - w
    top, bottom = box[1] + _INSET, box[3] - _INSET - h
    corners = [(right, top), (left, top), (right, bottom), (left, bottom)]
    corners = [(x, y) for x, y in corners if not any(_overlaps((x, y, x + w, y + h), t) for t in taken)]
    pts = np.asarray(clutter, dtype=float).reshape(-1, 2)

    def hidden(corner: tuple[float, float]) -> float:
        x, y = corner
        inside = (pts[:, 0] >= x) & (pts[:, 0] <= x + w) & (pts[:, 1] >= y) & (pts[:, 1] <= y + h)
        covered = sum(
            max(min(a[2], x + w) - max(a[0], x), 0.0) * max(min(a[3], y + h) - max(a[1], y), 0.0) for a in areas
        )
        return float(inside.sum()) + float(covered) / 50

    return min(corners, key=hidden) if corners else None


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _swatch(draw: Any, kind: str, x: float, y: float, colour: RGB, fill: RGB) -> None:
    end = x + _SWATCH
    if kind == "track":
        draw.line((x, y, end, y), fill=colour, width=4)
    elif kind == "selected":
        draw.line((x, y, end, y), fill=(*HIGHLIGHT, HALO_ALPHA), width=HALO_WIDTH)
        draw.line((x, y, end, y), fill=_NEUTRAL, width=3)
    elif kind == "future":
        draw.line((x, y, end, y), fill=blend(_NEUTRAL, BACKGROUND, FAINT), width=2)
    elif kind == "sensor":  # a fan of bearing lines from their origin, the lowest dashed (ambiguous)
        for dy in (-6.0, -1.5):
            draw.line((x + 1, y + 5, end, y + dy), fill=colour, width=1)
        dashed_line(draw, (x + 1, y + 5), (end, y + 4), colour, width=1, dash=(4.0, 3.0))
        draw.ellipse((x - 1, y + 3, x + 3, y + 7), fill=colour)
    elif kind == "zone":
        draw.rectangle((x + 1, y - 5, end - 1, y + 5), fill=(*fill, 110), outline=colour, width=2)
    elif kind == "point":
        draw.ellipse((x + 4, y - 5, x + 14, y + 5), fill=colour, outline=_NEUTRAL)
    elif kind == "buoyfield":
        for dx in (3.0, 9.0, 15.0):
            draw.ellipse((x + dx - 3, y - 3, x + dx + 3, y + 3), fill=colour, outline=_NEUTRAL)
    elif kind == "ends":
        draw.line((x + 4, y, end, y), fill=_NEUTRAL, width=2)
        draw.ellipse((x, y - 4, x + 8, y + 4), fill=BACKGROUND, outline=_NEUTRAL, width=2)
        draw.line((end, y - 5, end, y + 5), fill=_NEUTRAL, width=3)


def _others(items: Sequence[Item], room: float) -> list[Row]:
    """One row per zone, point or buoy field drawn (the same name and colour once), in drawing order."""
    rows: list[Row] = []
    seen: set[tuple[str, str, RGB]] = set()
    for it in items:
        kind = "zone" if it.rings else "buoyfield" if it.kind == "buoyfield" else "point"
        key = (kind, it.name, it.colour)
        if key in seen:
            continue
        seen.add(key)
        text = it.name or ("unnamed zone" if kind == "zone" else "unnamed point")
        props = it.feature.get("properties") or {}
        fill = rgb(props.get("fill"), "#{:02x}{:02x}{:02x}".format(*it.colour)) if kind == "zone" else it.colour
        rows.append((kind, text if font(11).getlength(text) <= room else _cut(text, room), it.colour, fill))
    return rows


def _more(rows: list[Row]) -> Row:
    """The row that stands for ``rows`` left out: ``+3 more zones, 1 more point``."""
    zones = sum(1 for row in rows if row[0] == "zone")
    points = len(rows) - zones
    parts = [f"{n} more {noun}{'s' if n > 1 else ''}" for n, noun in ((zones, "zone"), (points, "point")) if n]
    return "more", "+" + ", ".join(parts), _NEUTRAL, _NEUTRAL


def draw_legend(
    draw: Any,
    tracks: list[Item],
    conventions: Conventions,
    box: Box,
    clutter: Any,
    areas: list[Box],
    others: Sequence[Item] = (),
    sensors: Sequence[tuple[str, RGB]] = (),
) -> tuple[Box, list[str]] | None:
    """The legend in the corner where it hides least (:func:`best_corner`); returns its box and rows.
    ``others``: the zones and points drawn, listed after the tracks; ``sensors``: a row's text and
    colour for each sensor, listed after the tracks (``Plain: 20 of 380 cuts``)."""
    room = min(_ROW_TEXT, 0.45 * (box[2] - box[0]))  # the legend never takes half a narrow map's width
    rows: list[Row] = [("track", _entry(it, room), it.colour, it.colour) for it in tracks]
    rows += [("sensor", _cut(text, room) if font(11).getlength(text) > room else text, c, c) for text, c in sensors]
    listed = len(rows)
    extra = _others(others, room)
    if not rows and not extra:
        return None
    f = font(11)
    room = max(int((box[3] - box[1] - 2 * (_INSET + _PAD)) // _ROW), 0)
    notes: list[Row] = [(kind, text, _NEUTRAL, _NEUTRAL) for kind, text in conventions.rows()]
    if room < 1:
        return None
    if len(rows) + len(notes) > room:
        notes = notes[: max(room - 1, 0)]
        keep = room - len(notes)
        if len(rows) > keep:
            rows = [*rows[: keep - 1], ("more", f"+{listed - keep + 1} more", _NEUTRAL, _NEUTRAL)]
    free = min(room - len(rows) - len(notes), _OTHERS)
    if len(extra) > free:
        extra = [*extra[: free - 1], _more(extra[free - 1 :])] if free >= 1 else []
    rows += extra + notes
    if not rows:
        return None
    w = _SWATCH + 6 + max(f.getlength(row[1]) for row in rows) + 2 * _PAD
    h = len(rows) * _ROW + 2 * _PAD - 2
    corner = best_corner(box, (w, h), clutter, areas)
    if corner is None:
        return None
    x0, y0 = corner
    draw.rectangle((x0, y0, x0 + w, y0 + h), fill=(255, 255, 255, 225), outline=(150, 155, 165))
    for i, (kind, text, colour, fill) in enumerate(rows):
        y = y0 + _PAD + i * _ROW + 6
        _swatch(draw, kind, x0 + _PAD, y, colour, fill)
        f.draw(draw, (x0 + _PAD + _SWATCH + 6, y), text, fill=TEXT, anchor="lm")
    return (x0, y0, x0 + w, y0 + h), [row[1] for row in rows]
