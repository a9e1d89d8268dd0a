"""``resample-track``: a track at a fixed time interval, and the command that adds it."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from debrief_calc.analysis.common import lonlat_list, require
from debrief_calc.analysis.registry import Parameter, ToolInput, ToolOutput, ToolSpec
from debrief_calc.geo import geodesy
from debrief_calc.tracks.features import iso_many, track_data

MAX_POINTS: Final = 1_000_000
# Per-fix properties of the source that no longer line up with the new fixes (and a window's
# hints about the cut track's own end fixes, :mod:`debrief_calc.tracks.times`).
_PER_FIX: Final = frozenset(
    {"timestamps", "times", "positions", "courses", "speeds", "depths", "labels", "window_edges"}
)


def _interval_text(interval: float) -> str:
    return f"{interval:g}" if interval != int(interval) else str(int(interval))


def _every(interval: float) -> tuple[str, str]:
    """The interval in words (``"every 5 min"``) and as a short-name suffix (``"5m"``): whole
    hours in h, whole minutes in min, anything else in s."""
    for size, word, mark in ((3600.0, "h", "h"), (60.0, "min", "m")):
        if interval >= size and interval % size == 0:
            n = _interval_text(interval / size)
            return f"every {n} {word}", f"{n}{mark}"
    n = _interval_text(interval)
    return f"every {n} s", f"{n}s"


#: how far the resampled track's stroke moves towards white (a dark colour) or black (a light one)
_SHADE: Final = 0.45


def _shaded(colour: object) -> str | None:
    """A CSS colour lightened (when dark) or darkened (when light) noticeably, as ``#rrggbb``:
    the resampled track drawn beside its original, told apart. None when ``colour`` is not a
    CSS colour (the picture then gives the new track a colour of its own)."""
    from PIL import ImageColor

    if not isinstance(colour, str):
        return None
    try:
        rgb = ImageColor.getrgb(colour.strip())[:3]
    except ValueError:
        return None
    luminance = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255
    target = 255 if luminance < 0.5 else 0
    r, g, b = (round(c + (target - c) * _SHADE) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


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
    words, suffix = _every(interval)
    short = source_props.get("shortName")
    props.update(
        kind="track",
        dataType="track",
        name=f"{name} ({words})",
        shortName=f"{short.strip() if isinstance(short, str) and short.strip() else name} {suffix}",
        timestamps=iso_many(times),
        resampled_from=track.id,
        resample_interval_s=interval,
        resample_method=method,
    )
    if (stroke := _shaded(source_props.get("stroke") or source_props.get("color"))) is not None:
        props["stroke"] = stroke
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
        "'<id>-resampled-<interval>', name '<name> (every 5 min)', shortName '<short> 5m' and ISO "
        "timestamps; its stroke is the original's lightened (dark colours) or darkened (light "
        "ones) to tell the two apart, other style properties kept, per-fix properties (stored "
        "speeds, courses, labels) dropped; plus an addFeatures command that puts it in the plot."
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
