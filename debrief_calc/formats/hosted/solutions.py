"""Target solutions (``;TMA_POS:``, ``;TMA_RB:``, a ``.dpf``'s ``<tma>``) as tracks every tool takes.

One ``track`` feature per solution name on its host, with ``properties.trackType``
``"tma-solution"``: a fix per solution point, in time order, at the position the line gives
(``TMA_POS``) or at the bearing and range it gives from the host's position at that time
(``TMA_RB``, the host interpolated along the geodesic between its fixes); per fix the solution's
``courses``, ``speeds`` (kn), ``depths`` (m) and ``ellipses`` ``{orientation_deg, semiMajorYd,
semiMinorYd}`` or null. The ellipse's axes are **semi**-axes: legacy Debrief's
``EllipseShape.calcDataPoints`` puts the point at bearing ``orientation`` ``maxima`` from the centre
(and ``minima`` at right angles), so REP's maxima and minima are centre-to-edge distances; the
orientation is the major axis's bearing, true degrees."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from debrief_calc.formats.hosted.hosts import Host
from debrief_calc.formats.hosted.records import SolutionFix, Where
from debrief_calc.formats.hosted.sensors import normalise_bearing
from debrief_calc.formats.rep._colours import UNKNOWN_LETTER_COLOUR, replay_colour
from debrief_calc.geo.geodesy import direct
from debrief_calc.tracks.times import iso

__all__ = ["build_solutions"]

_YARD_M = 0.9144


def build_solutions(
    fixes: Sequence[SolutionFix],
    hosts: dict[str, Host],
    make_id: Callable[[Host, str], str],
    *,
    source: str | None = None,
) -> tuple[list[dict[str, Any]], list[tuple[Where, str]]]:
    """One tma-solution track per (host, solution name) and the fixes that could not be placed."""
    groups: dict[tuple[str, str], list[SolutionFix]] = {}
    for fix in fixes:
        groups.setdefault((hosts[fix.host_name].id, fix.solution), []).append(fix)
    features: list[dict[str, Any]] = []
    errors: list[tuple[Where, str]] = []
    for (_host_id, name), members in groups.items():
        members.sort(key=lambda f: f.key)
        host = hosts[members[0].host_name]
        kept: list[SolutionFix] = []
        coords: list[list[float]] = []
        for fix in members:
            if fix.position is not None:
                kept.append(fix)
                coords.append([fix.position[0], fix.position[1]])
                continue
            lat, lon = host.positions(np.array([fix.key / 1e6]))
            if not np.isfinite(lat[0]) or fix.bearing is None or fix.range_yd is None:
                track = host.track
                span = (
                    f"{iso(float(track.t[0]))} to {iso(float(track.t[-1]))}"
                    if track is not None and len(track)
                    else "no times"
                )
                errors.append(
                    (
                        fix.where,
                        f"{fix.line_type}: the host {host.name!r} has no position at {fix.time} "
                        f"(its fixes run {span}) to measure the bearing and range from",
                    )
                )
                continue
            y, x, _ = direct(lat, lon, np.array([fix.bearing]), np.array([fix.range_yd * _YARD_M]))
            kept.append(fix)
            coords.append([float(x[0]), float(y[0])])
        if kept:
            features.append(_feature(make_id(host, name), name, host, kept, coords, source))
    return features, errors


def _feature(
    fid: str, name: str, host: Host, fixes: list[SolutionFix], coords: list[list[float]], source: str | None
) -> dict[str, Any]:
    colours = [f.colour or (replay_colour(f.symbol) if f.symbol else None) for f in fixes]
    geometry: dict[str, Any] = (
        {"type": "Point", "coordinates": coords[0]}
        if len(coords) == 1
        else {"type": "LineString", "coordinates": coords}
    )
    properties: dict[str, Any] = {
        "dataType": "track",
        "kind": "track",
        "trackType": "tma-solution",
        "name": name,
        "host": host.id,
        "hostName": fixes[0].host_name,
        "timestamps": [f.time for f in fixes],
        "courses": [normalise_bearing(f.course) for f in fixes],
        "speeds": [f.speed for f in fixes],
        "depths": [f.depth for f in fixes],
        "ellipses": [f.ellipse for f in fixes],
        "labels": [f.label for f in fixes],
        "fixTypes": [f.line_type for f in fixes],
        "bearingsFromHost": [normalise_bearing(f.bearing) if f.position is None else None for f in fixes],
        "rangesFromHostYd": [f.range_yd if f.position is None else None for f in fixes],
        "symbols": [f.symbol for f in fixes],
        "colours": colours,
        "stroke": next((c for c in colours if c), None) or UNKNOWN_LETTER_COLOUR,
        "visible": True,
    }
    if source is not None:
        properties["source"] = source
    return {"type": "Feature", "id": fid, "geometry": geometry, "properties": properties}
