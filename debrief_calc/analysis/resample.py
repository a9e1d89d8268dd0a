"""``resample-track``: a track at a fixed time interval, and the command that adds it."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from debrief_calc import geodesy
from debrief_calc.analysis.common import lonlat_list, require
from debrief_calc.features import iso_many, track_data
from debrief_calc.registry import Parameter, ToolInput, ToolOutput, ToolSpec

MAX_POINTS: Final = 1_000_000
# Per-fix properties of the source that no longer line up with the new fixes.
_PER_FIX: Final = frozenset({"timestamps", "times", "positions", "courses", "speeds", "depths", "labels"})


def _interval_text(interval: float) -> str:
    return f"{interval:g}" if interval != int(interval) else str(int(interval))


def handle(inp: ToolInput) -> ToolOutput:
    feature = inp.features[0]
    track = track_data(feature, index=0)
    interval = float(inp.parameters["interval_s"])
    method = inp.parameters["method"]
    start, end = float(track.t[0]), float(track.t[-1])
    count = int(np.floor((end - start) / interval + 1e-9)) + 1
    require(
        count <= MAX_POINTS,
        f"interval_s={interval:g} would give {count} points over {end - start:g} s; at most {MAX_POINTS}: "
        f"use interval_s >= {(end - start) / (MAX_POINTS - 1):.6g}",
        "interval_s",
        "max-points",
        value=interval,
    )
    require(
        count >= 2,
        f"interval_s={interval:g} is longer than the track ({end - start:g} s from first to last fix): "
        "a resampled track needs at least 2 points",
        "interval_s",
        "min-points",
        value=interval,
    )
    times = start + interval * np.arange(count, dtype=np.float64)
    if method == "geodesic":
        lat, lon = geodesy.interpolate_track(track.t, track.lat, track.lon, times)
    else:
        unwrapped = np.unwrap(track.lon, period=360.0)
        lat = np.interp(times, track.t, track.lat)
        lon = (np.interp(times, track.t, unwrapped) + 180.0) % 360.0 - 180.0

    source_props = feature.get("properties") or {}
    props: dict[str, Any] = {
        k: v
        for k, v in source_props.items()
        if k not in _PER_FIX and k != "provenance" and not (isinstance(v, list) and len(v) == len(track))
    }
    text = _interval_text(interval)
    name = track.name or track.id
    props.update(
        kind="track",
        dataType="track",
        name=f"{name} (resampled {text} s)",
        timestamps=iso_many(times),
        resampled_from=track.id,
        resample_interval_s=interval,
        resample_method=method,
    )
    if track.depth is not None:
        props["depths"] = np.round(np.interp(times, track.t, track.depth), 3).tolist()
    new = {
        "type": "Feature",
        "id": f"{track.id}-resampled-{text}",
        "geometry": {"type": "LineString", "coordinates": lonlat_list(lon, lat)},
        "properties": props,
    }
    return ToolOutput(features=[new], commands=[{"command": "addFeatures", "payload": {"features": [new]}}])


SPEC = ToolSpec(
    name="resample-track",
    description=(
        "The track at a fixed time interval from its first fix (positions interpolated along "
        "the geodesic, or linearly in lon/lat), as a new track feature with id "
        "'<id>-resampled-<interval>' and ISO timestamps, style properties kept and per-fix "
        "properties (stored speeds, courses, labels) dropped; plus an addFeatures command that "
        "puts it in the plot."
    ),
    version="1.0.0",
    input_kinds=("track",),
    output_kind="track",
    context_type="single",
    parameters=(
        Parameter(
            "interval_s",
            "number",
            f"Time between the new fixes, in seconds; at most {MAX_POINTS} points may result.",
            required=True,
            unit="s",
            minimum=0,
            exclusive_minimum=True,
        ),
        Parameter(
            "method",
            "string",
            "'geodesic': along the geodesic between fixes at constant speed; 'linear': linear in lon/lat.",
            default="geodesic",
            choices=("geodesic", "linear"),
        ),
    ),
    handler=handle,
)
