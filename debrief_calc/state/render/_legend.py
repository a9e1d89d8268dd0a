"""The legend: a swatch and the name of each track, then what the picture's conventions mean when
they are on it (the selection's highlight, the faint or hidden future, the marks of a track's
start and end), in the corner of the map where it hides least. :func:`best_corner` also places
the range inset.

A track's row is its name and, when it has another, its ``shortName`` (``VAN GALEN3 (VANG)``),
with ``(resampled 300 s)`` said as ``(every 5 min)``; where that is too long for the row (about 32
characters, or under half a narrow map's width), the name alone, then the ``shortName`` with the name's
last bracket (``LEOP (every 5 min)``), then the name cut at a word before any bracket it would
split, with an ellipsis."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from debrief_calc.state.render._common import (
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
)
from debrief_calc.state.render._labels import font

__all__ = ["Conventions", "best_corner", "draw_legend"]

_ROW, _PAD, _SWATCH, _INSET = 16, 6, 18, 6
_NEUTRAL: RGB = (90, 90, 90)


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


def _swatch(draw: Any, kind: str, x: float, y: float, colour: RGB) -> None:
    end = x + _SWATCH
    if kind == "track":
        draw.line((x, y, end, y), fill=colour, width=4)
    elif kind == "selected":
        draw.line((x, y, end, y), fill=(*HIGHLIGHT, HALO_ALPHA), width=HALO_WIDTH)
        draw.line((x, y, end, y), fill=_NEUTRAL, width=3)
    elif kind == "future":
        draw.line((x, y, end, y), fill=blend(_NEUTRAL, BACKGROUND, FAINT), width=2)
    elif kind == "ends":
        draw.line((x + 4, y, end, y), fill=_NEUTRAL, width=2)
        draw.ellipse((x, y - 4, x + 8, y + 4), fill=BACKGROUND, outline=_NEUTRAL, width=2)
        draw.line((end, y - 5, end, y + 5), fill=_NEUTRAL, width=3)


def draw_legend(
    draw: Any, tracks: list[Item], conventions: Conventions, box: Box, clutter: Any, areas: list[Box]
) -> tuple[Box, list[str]] | None:
    """The legend in the corner where it hides least (:func:`best_corner`); returns its box and rows."""
    room = min(_ROW_TEXT, 0.45 * (box[2] - box[0]))  # the legend never takes half a narrow map's width
    rows: list[tuple[str, str, RGB]] = [("track", _entry(it, room), it.colour) for it in tracks]
    if not rows:
        return None
    f = font(11)
    room = max(int((box[3] - box[1] - 2 * (_INSET + _PAD)) // _ROW), 0)
    notes = [(kind, text, _NEUTRAL) for kind, text in conventions.rows()]
    if room < 1:
        return None
    if len(rows) + len(notes) > room:
        notes = notes[: max(room - 1, 0)]
        keep = room - len(notes)
        if len(rows) > keep:
            rows = [*rows[: keep - 1], ("more", f"+{len(tracks) - keep + 1} more", _NEUTRAL)]
    rows += notes
    w = _SWATCH + 6 + max(f.getlength(text) for _, text, _ in rows) + 2 * _PAD
    h = len(rows) * _ROW + 2 * _PAD - 2
    corner = best_corner(box, (w, h), clutter, areas)
    if corner is None:
        return None
    x0, y0 = corner
    draw.rectangle((x0, y0, x0 + w, y0 + h), fill=(255, 255, 255, 225), outline=(150, 155, 165))
    for i, (kind, text, colour) in enumerate(rows):
        y = y0 + _PAD + i * _ROW + 6
        _swatch(draw, kind, x0 + _PAD, y, colour)
        f.draw(draw, (x0 + _PAD + _SWATCH + 6, y), text, fill=TEXT, anchor="lm")
    return (x0, y0, x0 + w, y0 + h), [text for _, text, _ in rows]
