"""Narrative entries on the tracks of the ships that logged them, as legacy Debrief shows them.

An entry (an annotation with no geometry, a ``time`` and the ship's name in ``properties.track``)
goes on the track whose ``name`` or ``shortName`` is that name, ignoring case (the name first),
at the ship's position interpolated at the entry's time: a small square in the entry's
``marker_color`` (else the track's colour), labelled with the entry's DTG and its text cut to
about 24 characters at a word (``120642Z POSSUB TRACK 14``). It is an instant, so with a current
time the picture shows the entries of the last ``RECENT`` seconds (30 minutes) up to it, the
newest strongest and older ones fading towards the background, so that the last thing said
reads first; without a time it shows them all. Their labels come after the ships' names and the
tracks' starts and ends, before the time labels, the newest first; where they crowd, the oldest
are dropped. An entry due on the picture that no track holds (no track of that name, or its time
outside the track's) is not drawn but listed (``unplaced``), and counted below the map.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from debrief_calc.plots.render._common import BACKGROUND, HALO_ALPHA, HIGHLIGHT, OUTLINE, Box, Item, blend, ink
from debrief_calc.plots.render._items import RECENT
from debrief_calc.plots.render._labels import Label
from debrief_calc.plots.render._tracks import TrackView
from debrief_calc.tracks.times import dtg

__all__ = ["Entry", "draw_entries", "place_entries", "unplaced_note"]

_TEXT_CHARS = 24  # of the entry's text in its label, after the DTG
_FADE = 0.55  # how far the oldest entry shown is blended towards the background
_HALF = 3.5  # half the side of the square, in pixels


@dataclass(frozen=True)
class Entry:
    """A narrative entry placed: where (pixels), the track it is on, how far it has faded."""

    item: Item
    view: TrackView
    x: float
    y: float
    fade: float


def _track_for(entry: Item, views: list[TrackView]) -> TrackView | None:
    ship = (entry.ship or "").casefold()
    for attr in ("name", "short"):
        for v in views:
            if getattr(v.item, attr).casefold() == ship:
                return v
    return None


def place_entries(entries: list[Item], views: list[TrackView], q: float | None) -> tuple[list[Entry], list[str]]:
    """The ``entries`` (those shown at ``q``) on their ships' tracks, and the ids of those that no
    track holds at their time."""
    placed: list[Entry] = []
    unplaced: list[str] = []
    for it in entries:
        assert it.at is not None
        v = _track_for(it, views)
        if v is None or v.t is None or not float(v.t[0]) <= it.at <= float(v.t[-1]):
            unplaced.append(it.id)
            continue
        x, y = (float(c) for c in v.at(it.at))
        fade = 0.0 if q is None else _FADE * min(max((q - it.at) / RECENT, 0.0), 1.0)
        placed.append(Entry(it, v, x, y, fade))
    return placed, unplaced


def _short(text: str) -> str:
    """The text cut at a word to about ``_TEXT_CHARS`` characters, with an ellipsis where cut."""
    text = " ".join(text.split())
    if len(text) <= _TEXT_CHARS:
        return text
    cut = text[: _TEXT_CHARS - 1]
    if " " in cut and text[_TEXT_CHARS - 1] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def draw_entries(draw: Any, entries: list[Entry], box: Box, labels: list[Label]) -> list[Box]:
    """Draw the entries' squares (the oldest first, so the newest are on top); add their labels
    to ``labels``. Returns the squares' boxes."""
    markers: list[Box] = []
    for e in sorted(entries, key=lambda e: -e.fade):
        if not (box[0] <= e.x <= box[2] and box[1] <= e.y <= box[3]):
            continue
        it = e.item
        colour = it.colour if it.own_colour else e.view.item.colour
        fill = blend(colour, BACKGROUND, e.fade)
        r = _HALF
        if it.selected:
            draw.ellipse((e.x - r - 5, e.y - r - 5, e.x + r + 5, e.y + r + 5), fill=(*HIGHLIGHT, HALO_ALPHA))
        draw.rectangle((e.x - r - 1.5, e.y - r - 1.5, e.x + r + 1.5, e.y + r + 1.5), fill=(255, 255, 255))
        draw.rectangle((e.x - r, e.y - r, e.x + r, e.y + r), fill=fill, outline=blend(OUTLINE, BACKGROUND, e.fade))
        markers.append((e.x - r - 1.5, e.y - r - 1.5, e.x + r + 1.5, e.y + r + 1.5))
        text = _text_of(it)
        assert it.at is not None
        label = f"{dtg(it.at)} {_short(text)}" if text else dtg(it.at)
        along = e.view.heading(it.at)
        labels.append(
            Label(
                label,
                (e.x, e.y),
                blend(ink(colour), BACKGROUND, e.fade),
                rank=4,
                size=11,
                clear=r + 2,
                along=along,
                leader=True,
                order=(2.0, -it.at if math.isfinite(it.at) else 0.0),
            )
        )
    return markers


def _text_of(it: Item) -> str:
    props = it.feature.get("properties") or {}
    text = props.get("text")
    return text.strip() if isinstance(text, str) and text.strip() else it.name


def unplaced_note(count: int) -> str:
    """``"3 narrative entries unplaced (no track then)"``, for below the map."""
    return f"{count} narrative entr{'ies' if count > 1 else 'y'} unplaced (no track then)"
