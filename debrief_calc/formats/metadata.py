"""The plot state Debrief keeps inside the file: the time and viewport metadata features.

Their shape is the one Debrief's own StatePersistence writes (and ``large-sample.plot.json``
holds)::

    {"type": "Feature", "id": "debrief-time-metadata",
     "geometry": {"type": "Polygon", "coordinates": [[]]},
     "properties": {"dataType": "metadata", "metadataType": "time",
                    "current": ISO, "start": ISO, "end": ISO}}
    {"type": "Feature", "id": "debrief-viewport-metadata",
     "geometry": {"type": "Polygon", "coordinates": [[[w, s], [e, s], [e, n], [w, n], [w, s]]]},
     "properties": {"dataType": "metadata", "metadataType": "viewport"}}

Updates build new feature objects (never change one in place) and keep any other properties
the existing feature carries.
"""

from __future__ import annotations

import math
from typing import Any

from debrief_calc.errors import ValidationFailed, validation_failed

__all__ = [
    "TIME_ID",
    "VIEWPORT_ID",
    "check_bounds",
    "check_time_state",
    "covers",
    "data_bounds",
    "data_features",
    "derived_time_state",
    "get_time_state",
    "get_viewport",
    "padded",
    "put_feature",
    "time_feature",
    "viewport_feature",
]

TIME_ID = "debrief-time-metadata"
VIEWPORT_ID = "debrief-viewport-metadata"


def _find(features: list[Any], fid: str) -> int | None:
    for i, f in enumerate(features):
        if isinstance(f, dict) and str(f.get("id")) == fid:
            return i
    return None


def put_feature(features: list[Any], feature: dict[str, Any]) -> None:
    """Replace the feature with ``feature``'s id in place in the list, or append it."""
    i = _find(features, str(feature.get("id")))
    if i is None:
        features.append(feature)
    else:
        features[i] = feature


def get_time_state(data: dict[str, Any]) -> dict[str, str] | None:
    i = _find(data.get("features") or [], TIME_ID)
    if i is None:
        return None
    props = data["features"][i].get("properties") or {}
    vals = {k: props.get(k) for k in ("current", "start", "end")}
    if not all(isinstance(v, str) for v in vals.values()):
        return None
    return {k: str(v) for k, v in vals.items()}


def check_time_state(state: Any, field: str = "timeState") -> dict[str, str]:
    """``{current, start, end}``: ISO-8601 strings with ``start ≤ current ≤ end``."""
    if not isinstance(state, dict):
        raise validation_failed(field, "must be an object {current, start, end} of ISO-8601 times")
    from debrief_calc.tracks.times import Window, parse_iso

    out: dict[str, str] = {}
    secs: dict[str, float] = {}
    for key in ("current", "start", "end"):
        value = state.get(key)
        if not isinstance(value, str):
            raise validation_failed(f"{field}.{key}", "is required, as an ISO-8601 string")
        try:
            secs[key] = parse_iso(value)
        except (ValidationFailed, ValueError):
            raise validation_failed(
                f"{field}.{key}", f"{value!r} is not an ISO-8601 time; e.g. '2024-11-14T21:16:53Z'", value=value
            ) from None
        out[key] = value
    if secs["start"] > secs["end"] or not Window(secs["start"], secs["end"]).contains(secs["current"]):
        raise validation_failed(field, "times must satisfy start ≤ current ≤ end", value=out)
    return out


def time_feature(state: dict[str, str], old: dict[str, Any] | None = None) -> dict[str, Any]:
    props = dict((old or {}).get("properties") or {})
    props.setdefault("dataType", "metadata")
    props["metadataType"] = "time"
    props.update(current=state["current"], start=state["start"], end=state["end"])
    if old is None:
        return {
            "type": "Feature",
            "id": TIME_ID,
            "geometry": {"type": "Polygon", "coordinates": [[]]},
            "properties": props,
        }
    return {**old, "properties": props}


def get_viewport(data: dict[str, Any]) -> dict[str, list[float]] | None:
    """``{bounds: [w, s, e, n]}`` from the viewport feature's ring (or a ``bounds`` property)."""
    i = _find(data.get("features") or [], VIEWPORT_ID)
    if i is None:
        return None
    feature = data["features"][i]
    bounds = (feature.get("properties") or {}).get("bounds")
    if not (isinstance(bounds, list) and len(bounds) == 4):
        try:
            ring = feature["geometry"]["coordinates"][0]
            lons = [float(p[0]) for p in ring]
            lats = [float(p[1]) for p in ring]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        if len(lons) < 4:
            return None
        # SW and NE corners as Debrief writes them, so a viewport across 180° (west > east) survives
        bounds = [lons[0], min(lats), lons[2], max(lats)]
    return {"bounds": [float(b) for b in bounds]}


def check_bounds(value: Any, field: str = "bounds") -> list[float]:
    """``[west, south, east, north]`` in degrees; ``west > east`` is allowed (across 180°)."""
    if isinstance(value, dict):
        field, value = f"{field}.bounds", value.get("bounds")
    if not (isinstance(value, list | tuple) and len(value) == 4):
        raise validation_failed(field, "must be [west, south, east, north] in degrees")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise validation_failed(field, "must hold four numbers")
    w, s, e, n = (float(v) for v in value)
    if not all(math.isfinite(v) for v in (w, s, e, n)):
        raise validation_failed(field, "must hold finite numbers")
    if not (-180 <= w <= 180 and -180 <= e <= 180):
        raise validation_failed(field, f"west {w} and east {e} must lie in -180..180")
    if not (-90 <= s <= n <= 90):
        raise validation_failed(field, f"south {s} and north {n} must satisfy -90 ≤ south ≤ north ≤ 90")
    return [w, s, e, n]


def viewport_feature(bounds: list[float], old: dict[str, Any] | None = None) -> dict[str, Any]:
    w, s, e, n = bounds
    geometry = {"type": "Polygon", "coordinates": [[[w, s], [e, s], [e, n], [w, n], [w, s]]]}
    if old is None:
        return {
            "type": "Feature",
            "id": VIEWPORT_ID,
            "geometry": geometry,
            "properties": {"dataType": "metadata", "metadataType": "viewport"},
        }
    props = dict(old.get("properties") or {})
    if "bounds" in props:
        props["bounds"] = [w, s, e, n]
    return {**old, "geometry": {**(old.get("geometry") or {}), **geometry}, "properties": props}


# -- what a plot's data spans: the time window and viewport that show all of it ---------------


def data_features(features: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The features that hold data: metadata and backdrops left out."""
    from debrief_calc.tracks.features import feature_kind

    return [f for f in features if feature_kind(f) not in ("metadata", "backdrop")]


def derived_time_state(data: dict[str, Any]) -> dict[str, str] | None:
    """The period of a plot's timed features as a time state (current at the end, as a new plot's:
    every track drawn solid), or None."""
    from debrief_calc.tracks.times import data_window

    whole = data_window(data_features(data.get("features") or []))
    if not whole.closed:
        return None
    start, end = whole.shown
    return {"current": str(end), "start": str(start), "end": str(end)}


def data_bounds(features: list[dict[str, Any]]) -> list[float] | None:
    """``[west, south, east, north]`` over every position of the features, or None."""
    from debrief_calc.tracks.features import feature_bounds

    boxes = [b for f in features if (b := feature_bounds(f)) is not None]
    if not boxes:
        return None
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def covers(outer: list[float], inner: list[float] | tuple[float, ...]) -> bool:
    """Whether the bounds ``outer`` contain the bounds ``inner``."""
    return outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3]


def padded(bounds: list[float], fraction: float = 0.05) -> list[float]:
    """``bounds`` with ``fraction`` of its span (at least 0.01°) added on each side, within the globe."""
    w, s, e, n = bounds
    dx, dy = max(e - w, 0.01) * fraction, max(n - s, 0.01) * fraction
    return [max(w - dx, -180.0), max(s - dy, -90.0), min(e + dx, 180.0), min(n + dy, 90.0)]
