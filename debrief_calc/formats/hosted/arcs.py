"""``;SENSORARC:`` (also ``;SENSOR_ARC:``) coverage arcs as zones that follow their host.

An arc line gives, over a period, sectors relative to the host's heading: ``left right inner
outer`` (degrees from the bow, yards). Legacy Debrief draws them at the host's current position
and heading; a plot file holds fixed polygons, so the period is drawn as a sequence of zones, each
the sectors at the host's position and course over ground at one time and shown from that time
until the next (``time``/``timeEnd``, as every picture and the live view read zones): one per
host fix in the period, thinned evenly to at most :data:`MAX_STEPS`. Each carries
``specifics`` ``{shapeType: "sensor-arc", arcs: [{leftDeg, rightDeg, innerYd, outerYd}],
origin, headingDeg, host}`` and ``arcGroup`` (the line's number in its file) so the steps of one
line can be found together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from debrief_calc.formats.hosted.hosts import Host
from debrief_calc.formats.hosted.records import ArcLine, Where
from debrief_calc.formats.rep._colours import replay_colour
from debrief_calc.tracks._circles import sector_rings
from debrief_calc.tracks.times import iso

__all__ = ["MAX_STEPS", "build_arcs"]

#: zones drawn for one arc line at most
MAX_STEPS: Final = 24
_YARD_M = 0.9144


def _steps(host: Host, line: ArcLine) -> np.ndarray[Any, Any] | None:
    track = host.track
    if track is None or len(track) == 0:
        return None
    start = line.start[0] / 1e6 if line.start else float(track.t[0])
    end = line.end[0] / 1e6 if line.end else float(track.t[-1])
    start, end = max(start, float(track.t[0])), min(end, float(track.t[-1]))
    if start > end:
        return None
    inside = track.t[(track.t > start) & (track.t < end)]
    times = np.unique(np.concatenate([[start], inside, [end]]))
    if times.size > MAX_STEPS + 1:
        keep = np.unique(np.round(np.linspace(0, times.size - 1, MAX_STEPS + 1)).astype(int))
        times = times[keep]
    return times


def build_arcs(
    lines: Sequence[ArcLine], hosts: dict[str, Host], make_id: Callable[[ArcLine, int], str]
) -> tuple[list[dict[str, Any]], list[tuple[Where, str]]]:
    """The zones of every arc line and the lines whose period the host's fixes do not cover."""
    features: list[dict[str, Any]] = []
    errors: list[tuple[Where, str]] = []
    for line in lines:
        host = hosts[line.host_name]
        times = _steps(host, line)
        if times is None:
            errors.append((line.where, f"SENSORARC: the host {host.name!r} has no fixes in the arc's period"))
            continue
        lat, lon = host.positions(times)
        heading = host.headings(times)
        heading = np.where(np.isfinite(heading), heading, 0.0)
        colour = replay_colour(line.symbol) if line.symbol else None
        last = max(times.size - 1, 1)
        for k in range(last):
            polygons = [
                [
                    ring.tolist()
                    for ring in sector_rings(
                        float(lon[k]),
                        float(lat[k]),
                        float(heading[k] + left),
                        float(heading[k] + right),
                        inner * _YARD_M,
                        outer * _YARD_M,
                    )
                ]
                for left, right, inner, outer in line.arcs
            ]
            geometry = (
                {"type": "Polygon", "coordinates": polygons[0]}
                if len(polygons) == 1
                else {"type": "MultiPolygon", "coordinates": polygons}
            )
            end = times[k + 1] if times.size > 1 else times[k]
            properties: dict[str, Any] = {
                "dataType": "annotation",
                "kind": "zone",
                "annotationType": "area",
                "name": line.name or "sensor arc",
                "text": line.name,
                "time": iso(float(times[k])),
                "timeEnd": iso(float(end)),
                "arcGroup": line.where.line,
                "specifics": {
                    "shapeType": "sensor-arc",
                    "arcs": [{"leftDeg": a, "rightDeg": b, "innerYd": c, "outerYd": d} for a, b, c, d in line.arcs],
                    "origin": [float(lon[k]), float(lat[k])],
                    "headingDeg": float(heading[k]),
                    "host": host.id,
                },
                "symbol": line.symbol,
            }
            if colour is not None:
                properties["stroke"] = properties["fill"] = colour
            features.append(
                {"type": "Feature", "id": make_id(line, k + 1), "geometry": geometry, "properties": properties}
            )
    return features, errors
