"""A picture of one stretch of time: the tracks cut to the window ``[start, end]`` (either end may
be open), each part ending at the position interpolated along the geodesic at the window's edge,
so that nothing before the start or after the end is drawn; an end cut so is not marked as the
track's start or end. Which zones, points and narrative
entries show is decided as without a window (active at the current time), and without a current
time by whether they are active at some time in the window; a narrative entry shows only when
logged inside it."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from debrief_calc.errors import validation_failed
from debrief_calc.geo._arrays import FloatArray
from debrief_calc.geo.geodesy import interpolate_track
from debrief_calc.plots.render._common import Item, Lonlat
from debrief_calc.plots.render._items import is_active
from debrief_calc.tracks.features import iso
from debrief_calc.tracks.times import time_precision

__all__ = ["Window", "clip_tracks", "shown"]

Window = tuple[float | None, float | None]


def _ends(window: Window) -> tuple[float, float]:
    start, end = window
    return (-math.inf if start is None else start), (math.inf if end is None else end)


def _clip(it: Item, start: float, end: float) -> Item | None:
    """The track cut to ``[start, end]``; None when it has no part there."""
    track = it.track
    assert track is not None
    lengths = [len(line) for line in it.lines]
    if sum(lengths) != len(track.t):
        lengths = [len(track.t)]
    bounds = np.cumsum([0, *lengths]).tolist()
    lons: list[FloatArray] = []
    lats: list[FloatArray] = []
    times: list[FloatArray] = []
    for a, b in itertools.pairwise(bounds):
        t, lon, lat = track.t[a:b], track.lon[a:b], track.lat[a:b]
        if not t.size or t[-1] < start or t[0] > end:
            continue
        inside = (t >= start) & (t <= end)
        cut_t, cut_lon, cut_lat = t[inside], lon[inside], lat[inside]
        edges = [x for x in (start, end) if t[0] < x < t[-1] and x not in cut_t]
        if edges:
            e_lat, e_lon = interpolate_track(t, lat, lon, np.asarray(edges))
            cut_t = np.concatenate((cut_t, edges))
            cut_lon, cut_lat = np.concatenate((cut_lon, e_lon)), np.concatenate((cut_lat, e_lat))
            order = np.argsort(cut_t, kind="stable")
            cut_t, cut_lon, cut_lat = cut_t[order], cut_lon[order], cut_lat[order]
        times.append(cut_t)
        lons.append(cut_lon)
        lats.append(cut_lat)
    if not times:
        return None
    lon, lat, t = np.concatenate(lons), np.concatenate(lats), np.concatenate(times)
    lines: list[list[Lonlat]] = []
    for part_lon, part_lat in zip(lons, lats, strict=True):
        lines.append(list(zip(part_lon.tolist(), part_lat.tolist(), strict=True)))
    cut = dataclasses.replace(track, lon=lon, lat=lat, t=t, depth=None)
    cut_ends = (bool(track.t[0] < start), bool(track.t[-1] > end))
    return dataclasses.replace(it, track=cut, lines=lines, cut=cut_ends)


def clip_tracks(items: list[Item], window: Window) -> tuple[list[Item], list[str], tuple[float, float]]:
    """The items with every timed track cut to the window, the ids of the tracks left out (nothing
    in it) and the span the tracks drawn cover. ValidationFailed naming ``time_start`` when no
    track has a fix or a stretch in the window (the tracks' period said, to choose another)."""
    start, end = _ends(window)
    out: list[Item] = []
    left_out: list[str] = []
    firsts: list[float] = []
    lasts: list[float] = []
    for it in items:
        if it.kind != "track" or it.track is None or not len(it.track):
            out.append(it)
            continue
        firsts.append(float(it.track.t[0]))
        lasts.append(float(it.track.t[-1]))
        cut = _clip(it, start, end)
        if cut is None:
            left_out.append(it.id)
        else:
            out.append(cut)
    drawn = [it.track for it in out if it.kind == "track" and it.track is not None]
    if not drawn:
        period = f"{iso(min(firsts))} to {iso(max(lasts))}" if firsts else "none (no track has times)"
        shown = " to ".join(iso(x) if x is not None else "open" for x in window)
        raise validation_failed(
            "time_start",
            f"no track has data in the window {shown}; the tracks run {period}: "
            "choose time_start/time_end inside that, or leave them out",
        )
    span = (min(float(tr.t[0]) for tr in drawn), max(float(tr.t[-1]) for tr in drawn))
    return out, left_out, span


def shown(it: Item, q: float | None, window: Window | None) -> bool:
    """Whether the item is drawn: active at ``q`` (with no ``q``, at some time in the window);
    a narrative entry only when logged inside the window (its end counted to its precision)."""
    if window is None:
        return is_active(it, q)
    start, end = _ends(window)
    if it.at is not None and not start <= it.at < end + time_precision(end):
        return False
    return is_active(it, q) if q is not None else is_active(it, start, end)
