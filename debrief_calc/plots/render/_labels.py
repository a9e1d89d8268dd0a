"""Labels kept inside the map and clear of each other, of the markers and of the lines.

Greedy, in order of importance (ship names first, then ranges and track names, zone names, points,
graticule degrees, track starts and ends, and time labels last, the round times among them first):
each label tries the positions around its anchor (right, left, above, below, then the diagonals;
the sides across the track's direction first when it has one, so a label does not lie along its
own track) and takes the first that stays inside the map, overlaps nothing placed before (with a
pixel between labels) and covers no line drawn (``Lines``: the tracks, annotation lines and the
range line). Failing that it is pushed inside the map at the first position that is free. A label
that must stay off the lines (a time label) is dropped rather than cover one; the others take a
free position over a line next. A required label (a ship's name, a range) then looks further out,
joined to its anchor by a leader line, and as a last resort takes its first position anyway; a
``leader`` label (a narrative entry) looks further out too, and is dropped where that fails; any
other label is dropped. Graticule degrees have fixed ``spots`` at the map's edges instead.

Text is Pillow's built-in font (nothing to install or download), through :class:`Font`: below 12
pixels its word space rounds down to 2 pixels, which vanishes between upright letters ("14BIOLOGIC"),
so there each space is drawn as two. That font holds ASCII and a few signs (° … ‘ ’ “ ” ± ·) only:
any other character would draw as a box, so :meth:`Font.drawable` writes it as its ASCII
equivalent (– — − as -, é as e, × as x, → as ->), or ? where there is none, before measuring
or drawing.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass
from typing import Any

from debrief_calc.plots.render._common import RGB, Box

__all__ = ["Font", "Label", "Lines", "Placer", "font"]

_HALO = 2  # the white outline around label text, so it reads over lines and fills
_REACHES = (2.0, 18.0, 36.0, 60.0)  # pixels between the marker and the label: beside it, then further out
_CENTRED_REACHES = (0.0, 8.0, 16.0)  # a zone's name: on its centre, else a little aside
_GAP = 1.0  # pixels kept free between two labels
_SIDES = (
    (1.0, 0.0),
    (-1.0, 0.0),
    (0.0, -1.0),
    (0.0, 1.0),
    (math.sqrt(0.5), -math.sqrt(0.5)),
    (-math.sqrt(0.5), -math.sqrt(0.5)),
    (math.sqrt(0.5), math.sqrt(0.5)),
    (-math.sqrt(0.5), math.sqrt(0.5)),
)


#: ASCII for the characters Pillow's built-in font lacks (beside accents, which are dropped)
_ASCII = {
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
    "\u00d7": "x",
    "\u2022": "*",
    "\u2192": "->",
    "\u2190": "<-",
    "\u2032": "'",
    "\u2033": '"',
    "\u00df": "ss",
    "\u00bd": "1/2",
    "\u00bc": "1/4",
    "\u00be": "3/4",
    "\u00b5": "u",
}


class Font:
    """Pillow's built-in font at one size, measuring and drawing text with visible word spaces
    and only the characters it has."""

    def __init__(self, size: int):
        from PIL import ImageFont

        self.face = ImageFont.load_default(size=size)
        self.space = " " if self.face.getlength(" ") >= 3 else "  "
        self._missing = bytes(self.face.getmask("\U0010fffd"))  # the box drawn for a character it lacks
        self._has: dict[str, bool] = {}

    def has(self, ch: str) -> bool:
        """Whether the font draws ``ch`` as itself (not as its box)."""
        known = self._has.get(ch)
        if known is None:
            known = self._has[ch] = ch.isspace() or ch.isascii() or bytes(self.face.getmask(ch)) != self._missing
        return known

    def drawable(self, text: str) -> str:
        """``text`` with each character the font lacks written as its ASCII equivalent (or ?)."""
        if all(self.has(ch) for ch in text):
            return text
        out = []
        for ch in text:
            if self.has(ch):
                out.append(ch)
                continue
            plain = _ASCII.get(ch) or unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(plain if plain and all(self.has(c) for c in plain) else "?")
        return "".join(out)

    def spaced(self, text: str) -> str:
        text = self.drawable(text)
        return text.replace(" ", self.space) if self.space != " " else text

    def getlength(self, text: str) -> float:
        return float(self.face.getlength(self.spaced(text)))

    def getbbox(self, text: str, **kwargs: Any) -> tuple[float, float, float, float]:
        left, top, right, bottom = self.face.getbbox(self.spaced(text), **kwargs)
        return left, top, right, bottom

    def gaps(self, text: str) -> list[tuple[float, float]]:
        """Where the word spaces fall, from the ink before to the ink after, in pixels from the
        text's left end: for a label's white outline to bridge them (two outlines 2 pixels wide
        do not meet across a wider space)."""
        spaced, out = self.spaced(text), []
        for i, ch in enumerate(spaced):
            if ch == " " and i > 0 and spaced[i - 1] != " ":
                j = len(spaced) - len(spaced[i:].lstrip(" "))
                after = spaced[j:].split(" ")[0]
                if after:
                    left = float(self.face.getbbox(spaced[:i])[2])
                    right = float(self.face.getlength(spaced[:j]) + self.face.getbbox(after)[0])
                    out.append((left, right))
        return out

    def draw(self, draw: Any, xy: tuple[float, float], text: str, **kwargs: Any) -> None:
        """``draw.text`` in this font (``fill``, ``anchor``, ``stroke_width``… as Pillow takes them)."""
        draw.text(xy, self.spaced(text), font=self.face, **kwargs)


@functools.cache
def font(size: int) -> Font:
    return Font(size)


@dataclass(frozen=True)
class Label:
    """A text to place near ``anchor``, keeping ``clear`` pixels around the anchor free (the
    marker drawn there). ``along`` is the direction of the track at the anchor, if any."""

    text: str
    anchor: tuple[float, float]
    fill: RGB
    rank: int  # placement order: 0 first
    size: int = 12
    clear: float = 4.0
    along: tuple[float, float] | None = None
    centred: bool = False
    required: bool = False
    off_lines: bool = False  # dropped rather than laid over a line
    leader: bool = False  # may stand further off with a leader line, as a required label does, before it is dropped
    order: tuple[float, float] = (0.0, 0.0)  # placement order within a rank: lower first
    spots: tuple[tuple[float, float], ...] = ()  # fixed top-left corners to try instead of around the anchor
    patch: RGB | None = None  # drawn on a patch of this colour instead of a white outline

    @property
    def key(self) -> tuple[int, float, float]:
        return self.rank, *self.order


class Lines:
    """Which pixels the lines cover (an ``(h, w)`` array, non-zero where drawn)."""

    def __init__(self, ink: Any):
        self.ink = ink

    def covers(self, box: Box) -> bool:
        h, w = self.ink.shape
        x0, y0 = min(max(math.ceil(box[0]), 0), w), min(max(math.ceil(box[1]), 0), h)
        x1, y1 = min(max(math.floor(box[2]), 0), w), min(max(math.floor(box[3]), 0), h)
        return x1 > x0 and y1 > y0 and bool(self.ink[y0:y1, x0:x1].any())


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


class Placer:
    """The boxes taken so far (markers, the legend, labels), bucketed on a coarse grid so that
    each test looks at the few boxes nearby."""

    def __init__(self, frame: Box, cell: int = 64, lines: Lines | None = None):
        self.frame = frame
        self.cell = cell
        self.lines = lines
        self.grid: dict[tuple[int, int], list[Box]] = {}
        self.placed: list[tuple[Box, Label, bool]] = []  # box, label, drawn with a leader line

    def _cells(self, box: Box) -> list[tuple[int, int]]:
        c = self.cell
        return [
            (i, j)
            for i in range(math.floor(box[0] / c), math.floor(box[2] / c) + 1)
            for j in range(math.floor(box[1] / c), math.floor(box[3] / c) + 1)
        ]

    def occupy(self, box: Box) -> None:
        for key in self._cells(box):
            self.grid.setdefault(key, []).append(box)

    def is_free(self, box: Box, gap: float = 0.0) -> bool:
        box = (box[0] - gap, box[1] - gap, box[2] + gap, box[3] + gap)
        return not any(_overlap(box, other) for key in self._cells(box) for other in self.grid.get(key, ()))

    def _clear(self, box: Box) -> bool:
        return self.lines is None or not self.lines.covers(box)

    def inside(self, box: Box) -> bool:
        f = self.frame
        return f[0] <= box[0] and f[1] <= box[1] and box[2] <= f[2] and box[3] <= f[3]

    def _pushed_in(self, box: Box) -> Box:
        f = self.frame
        dx = max(f[0] - box[0], 0.0) - max(box[2] - f[2], 0.0)
        dy = max(f[1] - box[1], 0.0) - max(box[3] - f[3], 0.0)
        return box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy

    def _candidates(self, label: Label, w: float, h: float, g: float) -> list[Box]:
        """The boxes of size w × h touching the circle of radius g around the anchor, side by side."""
        x, y = label.anchor
        if label.spots:
            return [(left, top, left + w, top + h) for left, top in label.spots]
        sides = list(_SIDES)
        if label.along is not None:
            ux, uy = label.along
            sides.sort(key=lambda s: abs(s[0] * ux + s[1] * uy))  # across the track first
        tops = [(x - w / 2, y - h / 2)] if label.centred else []
        for sx, sy in sides:
            left = x + sx * g - (w if sx < -0.1 else w / 2 if abs(sx) <= 0.1 else 0)
            top = y + sy * g - (h if sy < -0.1 else h / 2 if abs(sy) <= 0.1 else 0)
            tops.append((left, top))
        return [(left, top, left + w, top + h) for left, top in tops]

    def place(self, label: Label) -> Box | None:
        """Where the label goes (now taken), or None when it is dropped (always when its anchor is
        off the map). A required label that finds no room beside its anchor looks further out,
        and is drawn with a leader line."""
        ax, ay = label.anchor
        if not (self.frame[0] <= ax <= self.frame[2] and self.frame[1] <= ay <= self.frame[3]):
            return None  # what it names is off the map
        left, top, right, bottom = font(label.size).getbbox(label.text, stroke_width=_HALO, anchor="lt")
        w, h = right - left, bottom - top
        far = label.required or label.leader
        reaches = _CENTRED_REACHES if label.centred else _REACHES if far else _REACHES[:1]
        for over_lines in (False, True) if not label.off_lines else (False,):
            for reach in reaches:
                chosen = self._first(self._candidates(label, w, h, label.clear + reach), over_lines)
                if chosen is not None:
                    return self._take(chosen, label, leader=far and reach > _REACHES[0])
        if label.required:
            return self._take(self._pushed_in(self._candidates(label, w, h, label.clear + 2)[0]), label, leader=False)
        return None

    def _first(self, boxes: list[Box], over_lines: bool) -> Box | None:
        """The first box inside the map and free, else the first pushed inside the map and free;
        off the lines unless ``over_lines``."""
        pushed = [p for p in map(self._pushed_in, boxes) if p not in boxes]
        free = (b for b in [*boxes, *pushed] if self.inside(b) and self.is_free(b, _GAP))
        return next((b for b in free if over_lines or self._clear(b)), None)

    def _take(self, box: Box, label: Label, *, leader: bool) -> Box:
        self.occupy(box)
        self.placed.append((box, label, leader))
        return box

    def draw(self, draw: Any) -> None:
        for box, label, leader in self.placed:
            if leader:
                ax, ay = label.anchor
                nearest = (min(max(ax, box[0]), box[2]), min(max(ay, box[1]), box[3]))
                draw.line((label.anchor, nearest), fill=(110, 110, 120), width=1)
            f = font(label.size)
            left, top, *_ = f.getbbox(label.text, stroke_width=_HALO, anchor="lt")
            if label.patch is not None:
                draw.rectangle(box, fill=label.patch)
            else:
                for a, b in f.gaps(label.text):
                    draw.rectangle(
                        (box[0] - left + a - _HALO, box[1], box[0] - left + b + _HALO, box[3] - 1), fill=(255, 255, 255)
                    )
            f.draw(
                draw,
                (box[0] - left, box[1] - top),
                label.text,
                fill=label.fill,
                anchor="lt",
                stroke_width=0 if label.patch is not None else _HALO,
                stroke_fill=(255, 255, 255),
            )
