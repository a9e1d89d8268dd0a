"""What the render's modules share: the colours, the frame's margins, the answer and the items drawn."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from debrief_calc.tracks.features import TrackData

RGB = tuple[int, int, int]
Lonlat = tuple[float, float]
Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels

HIGHLIGHT: RGB = (0, 229, 255)
HALO_ALPHA, HALO_FUTURE_ALPHA = 150, 56  # the selection's highlight under the past, and the future (of 255)
HALO_WIDTH = 9  # pixels across: 3 of highlight either side of a track's 3-pixel line
FAINT = 0.6  # how far the future is blended towards the background
BACKGROUND: RGB = (246, 248, 250)
TEXT: RGB = (20, 20, 20)
OUTLINE: RGB = (30, 30, 30)
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
MARGIN_TOP, MARGIN_BOTTOM, MARGIN_SIDE = 28, 34, 12


@dataclass(frozen=True)
class Rendered:
    """A picture of a plot: the PNG, its actual size, the area shown ``[w, s, e, n]`` (west > east
    across 180°; padded to a readable shape) and which fit was used (``"all"`` when ``"viewport"``
    was asked of a plot without one)."""

    png: bytes
    width: int
    height: int
    bounds: list[float]
    fit: str
    hidden_inactive: list[str] = field(default_factory=list)  # zones/points in view but not active then
    range: RangeInfo | None = None
    placed: list[tuple[str, Box]] = field(default_factory=list)  # texts, "legend" and "inset" with their boxes
    legend: list[str] = field(default_factory=list)  # the legend's rows
    unplaced: list[str] = field(default_factory=list)  # narrative entries due then that no track of the plot holds
    note: str | None = None  # how the area shown differs from the one asked (padded to a readable shape)
    span: tuple[float, float] | None = None  # the period the tracks drawn cover (epoch s)
    outside_window: list[str] = field(default_factory=list)  # tracks with nothing in the window, not drawn
    framed: dict[str, list[str]] | None = None  # fit="window": the ids framed (tracks, zones, other selected)
    empty_window: str | None = None  # the plot's saved window holds no track: why, with the tracks' period
    cuts: list[CutsDrawn] = field(default_factory=list)  # each sensor's cuts: in all, active, drawn


@dataclass(frozen=True)
class RangeInfo:
    """The range line drawn: between which tracks, when, how far (``text`` as labelled, in yards
    below 10,000 yd, else nautical miles), whether an inset magnifies it, and the bounds that would
    show both ships large enough to see the line."""

    ids: tuple[str, str]
    t: float
    metres: float
    value: float
    unit: str
    text: str
    inset: bool
    cpa_bounds: list[float]


@dataclass(frozen=True)
class CutsDrawn:
    """What the picture drew of one sensor: its cuts in all, those active then, those drawn (every
    ``every``-th of the active ones by number, and the newest), the ambiguous bearings drawn beside
    them, how many of those drawn have no range (drawn to ``no_range_m``), and for a selected
    sensor the times of the cuts drawn (epoch s)."""

    id: str
    name: str
    host: str | None
    total: int
    active: int
    drawn: int
    every: int
    ambiguous: int
    without_range: int
    no_range_m: float
    times: list[float] = field(default_factory=list)

    @property
    def legend(self) -> str:
        """``Plain: 11 cuts``, ``Plain: 20 of 380 cuts`` (thinned), ``Plain: no cut now``."""
        name = self.name or self.id
        if not self.active:
            return f"{name}: no cut now"
        shown = f"{self.drawn} of {self.active}" if self.drawn < self.active else f"{self.drawn}"
        return f"{name}: {shown} cut{'s' if self.active > 1 else ''}"


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
    ship: str | None = None  # a narrative entry: the name of the track that logged it (``properties.track``)
    at: float | None = None  # a narrative entry: when it was logged (epoch s)
    own_colour: bool = True  # False: the colour is the palette's, for want of one in the properties
    cut: tuple[bool, bool] = (False, False)  # a track cut by a time window at its start, at its end


def css_colour(value: Any) -> RGB | None:
    """A CSS colour (``#F00``, ``#00ff00``, ``red``…) as RGB; None when it is not one."""
    from PIL import ImageColor

    if not isinstance(value, str):
        return None
    try:
        parsed = ImageColor.getrgb(value.strip())
    except ValueError:
        return None
    return parsed[0], parsed[1], parsed[2]


def rgb(value: Any, fallback: str) -> RGB:
    """A CSS colour as RGB; the fallback when it is not one (black when neither is)."""
    return css_colour(value) or css_colour(fallback) or (0, 0, 0)


def hex_colour(colour: RGB) -> str:
    """``#rrggbb``."""
    return "#{:02x}{:02x}{:02x}".format(*colour)


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


def nice(x: float) -> float:
    """The largest 1, 2 or 5 × 10^k not above ``x``."""
    if x <= 0:
        return 1.0
    base = 10.0 ** math.floor(math.log10(x))
    return next(float(m * base) for m in (5, 2, 1) if m * base <= x)
