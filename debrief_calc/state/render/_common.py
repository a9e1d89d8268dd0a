"""What the render's modules share: the colours, the frame's margins, the answer and the items drawn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debrief_calc.features import TrackData

RGB = tuple[int, int, int]
Lonlat = tuple[float, float]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels

HIGHLIGHT: RGB = (0, 229, 255)
BACKGROUND: RGB = (246, 248, 250)
TEXT: RGB = (20, 20, 20)
OUTLINE: RGB = (30, 30, 30)
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
MARGIN_TOP, MARGIN_BOTTOM, MARGIN_SIDE = 28, 34, 12


@dataclass(frozen=True)
class Rendered:
    """A picture of a plot: the PNG, its actual size, the area shown ``[w, s, e, n]`` (west > east
    across 180°) and which fit was used (``"all"`` when ``"viewport"`` was asked of a plot without one)."""

    png: bytes
    width: int
    height: int
    bounds: list[float]
    fit: str


@dataclass
class Item:
    """One drawable feature: its geometry as lon/lat lists, and for a track its validated fixes."""

    feature: dict[str, Any]
    id: str
    kind: str
    name: str  # the full name, for the legend
    short: str  # the name on the map: ``shortName``, else the name
    colour: RGB
    selected: bool
    lines: list[list[Lonlat]] = field(default_factory=list)
    rings: list[list[Lonlat]] = field(default_factory=list)
    points: list[Lonlat] = field(default_factory=list)
    track: TrackData | None = None  # a track whose times can be read
    active: tuple[float, float] | None = None  # when a zone or point is shown (epoch s); None: always


def rgb(value: Any, fallback: str) -> RGB:
    """A CSS colour (``#F00``, ``#00ff00``, ``red``…) as RGB; the fallback when it is not one."""
    from PIL import ImageColor

    for candidate in (value, fallback):
        if isinstance(candidate, str):
            try:
                parsed = ImageColor.getrgb(candidate.strip())
            except ValueError:
                continue
            return parsed[0], parsed[1], parsed[2]
    return 0, 0, 0


def blend(colour: RGB, towards: RGB, amount: float) -> RGB:
    """``colour`` moved ``amount`` (0–1) of the way to ``towards``."""
    r, g, b = (round(c + (o - c) * amount) for c, o in zip(colour, towards, strict=True))
    return r, g, b


def ink(colour: RGB) -> RGB:
    """The colour darkened just enough for text in it to read on the light ground: Debrief labels
    in the track's colour, but pure yellow or green text on white is unreadable."""
    luminance = (0.2126 * colour[0] + 0.7152 * colour[1] + 0.0722 * colour[2]) / 255
    if luminance <= 0.42:
        return colour
    k = 0.42 / luminance
    r, g, b = (round(c * k) for c in colour)
    return r, g, b
