"""A plot's features as the picture draws them: kind, names, colour, geometry, times.

Backdrops, metadata and features with ``visible: false`` are left out; a malformed geometry
leaves its feature out and the rest of the plot in. Zones, buoy fields and reference points
carry the window they are shown in (``properties.time`` to ``properties.timeEnd``; ``time``
alone: from then on; neither: always), read by :func:`debrief_calc.tracks.features.active_period`
as ``zone-transits`` and time-windowed reads read it.

A narrative entry (an annotation with no geometry, a time and the name of the ship that logged it
in ``properties.track``) is kept with ``ship`` and ``at`` set, to be placed on that ship's track
(:mod:`._narrative`); it is shown from its time until ``RECENT`` seconds after it (after its
``timeEnd``, if later).

Colours: a track's or zone's ``stroke``; a point's, buoy field's or annotation's ``marker_color``
(or ``marker-color``, then ``color``; an annotation line's ``stroke`` first); else the palette's,
and a narrative entry with no colour of its own takes its ship's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from debrief_calc.errors import CalcError
from debrief_calc.plots.render._common import PALETTE, RGB, Item, Lonlat, css_colour, rgb
from debrief_calc.tracks._track_data import read_track
from debrief_calc.tracks.features import active_period, feature_kind

__all__ = ["RECENT", "read_items"]

_SKIP_KINDS = {"backdrop", "metadata"}
_MARKED = ("point", "buoyfield", "annotation")  # coloured by their marker
RECENT = 1800.0  # seconds a narrative entry stays on the picture after its time


def _pairs(coords: Any) -> list[Lonlat]:
    return [(float(p[0]), float(p[1])) for p in coords if isinstance(p, list | tuple) and len(p) >= 2]


def _collect(geom: Any, item: Item) -> None:
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


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_items(features: Iterable[Any], selected: set[str], *, track_lines: bool = True) -> list[Item]:
    """The drawable features in file order (later ones draw on top).

    ``track_lines=False``: a track whose times read keeps its fixes in ``track`` only, its
    ``lines`` empty (for a reader that draws from ``track``: a million points' tuples cost
    about a second)."""
    items: list[Item] = []
    for n, f in enumerate(features):
        if not isinstance(f, dict):
            continue
        props = f.get("properties") or {}
        kind = feature_kind(f)
        if kind in _SKIP_KINDS or props.get("visible") is False:
            continue
        name = _text(props.get("name")) or _text(props.get("text"))
        fid = str(f.get("id")) if f.get("id") is not None else f"#{n}"
        item = Item(
            feature=f,
            id=fid,
            kind=kind,
            name=name,
            short=_text(props.get("shortName")) or name,
            colour=(0, 0, 0),
            selected=fid in selected,
        )
        if kind == "track":
            try:
                item.track = read_track(f, n, fid)
            except (CalcError, TypeError, ValueError, KeyError, IndexError):
                pass  # no usable times: drawn as a plain line, with no time marks
            else:
                edges = item.track.edges  # a track cut to a window: its ends are the cut's, not its own
                item.cut = (edges.before is not None, edges.after is not None) if edges is not None else (False, False)
        if item.track is None or track_lines:
            try:
                _collect(f.get("geometry"), item)
            except (TypeError, ValueError, IndexError, AttributeError):
                continue
        colour = _colour(props, marked=kind in _MARKED and not (item.lines and not item.points))
        item.colour = colour or rgb(None, PALETTE[n % len(PALETTE)])
        item.own_colour = colour is not None
        if item.track is not None:
            if track_lines and not item.lines:  # fixes given only in properties.positions
                item.lines.append(list(zip(item.track.lon.tolist(), item.track.lat.tolist(), strict=True)))
        elif kind != "track":
            item.active = active_period(f)
        drawn = item.lines or item.rings or item.points or item.track is not None
        if drawn or (kind == "annotation" and _narrative(item, props)):
            items.append(item)
    return items


def _colour(props: dict[str, Any], *, marked: bool) -> RGB | None:
    """The first colour property that is a colour: a marker's first, else a line's."""
    keys = ("marker_color", "marker-color", "color", "stroke") if marked else ("stroke", "marker-color", "color")
    return next((c for c in (css_colour(props.get(k)) for k in keys) if c is not None), None)


def _narrative(item: Item, props: dict[str, Any]) -> bool:
    """Whether the item is a narrative entry (a time and a ship's name); if so, marks it as one."""
    ship = _text(props.get("track"))
    if not ship or item.active is None or not math.isfinite(item.active[0]):
        return False
    start, end = item.active
    item.ship, item.at = ship, start
    item.active = (start, max(end if math.isfinite(end) else start, start) + RECENT)
    return True
