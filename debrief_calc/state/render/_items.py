"""A plot's features as the picture draws them: kind, names, colour, geometry, times.

Backdrops, metadata and features with ``visible: false`` are left out; a malformed geometry
leaves its feature out and the rest of the plot in. Zones, buoy fields and reference points
carry the window they are shown in (``properties.time`` to ``properties.timeEnd``; ``time``
alone: from then on; neither: always).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from debrief_calc._track_data import read_track
from debrief_calc.errors import CalcError
from debrief_calc.features import feature_kind, parse_iso
from debrief_calc.state.render._common import PALETTE, Item, Lonlat, rgb

__all__ = ["is_active", "read_items"]

_SKIP_KINDS = {"backdrop", "metadata"}


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


def _seconds(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except (CalcError, ValueError):
        return None


def _window(props: dict[str, Any]) -> tuple[float, float] | None:
    start, end = _seconds(props.get("time")), _seconds(props.get("timeEnd"))
    if start is None and end is None:
        return None
    return (-math.inf if start is None else start, math.inf if end is None else end)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def read_items(features: Iterable[Any], selected: set[str]) -> list[Item]:
    """The drawable features in file order (later ones draw on top)."""
    items: list[Item] = []
    for n, f in enumerate(features):
        if not isinstance(f, dict):
            continue
        props = f.get("properties") or {}
        kind = feature_kind(f)
        if kind in _SKIP_KINDS or props.get("visible") is False:
            continue
        key = "marker_color" if kind in ("point", "buoyfield") else "stroke"
        colour = props.get(key) or props.get("marker-color") or props.get("stroke") or props.get("color")
        name = _text(props.get("name")) or _text(props.get("text"))
        fid = str(f.get("id")) if f.get("id") is not None else f"#{n}"
        item = Item(
            feature=f,
            id=fid,
            kind=kind,
            name=name,
            short=_text(props.get("shortName")) or name,
            colour=rgb(colour, PALETTE[n % len(PALETTE)]),
            selected=fid in selected,
        )
        try:
            _collect(f.get("geometry"), item)
        except (TypeError, ValueError, IndexError, AttributeError):
            continue
        if kind == "track":
            try:
                item.track = read_track(f, n, fid)
                if not item.lines:  # fixes given only in properties.positions
                    item.lines.append(list(zip(item.track.lon.tolist(), item.track.lat.tolist(), strict=True)))
            except (CalcError, TypeError, ValueError, KeyError, IndexError):
                pass  # no usable times: drawn as a plain line, with no time marks
        else:
            item.active = _window(props)
        if item.lines or item.rings or item.points:
            items.append(item)
    return items


def is_active(item: Item, t: float | None) -> bool:
    """Whether the item is shown at time ``t`` (everything is, without a time)."""
    if t is None or item.active is None:
        return True
    return item.active[0] <= t <= item.active[1]
