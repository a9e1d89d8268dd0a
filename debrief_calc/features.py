"""Reading Debrief features as they really are.

Features stay plain GeoJSON dicts, so nothing a tool does not know about is ever dropped and a
plot round-trips unchanged; the functions here only read them. They understand every shape the
real files use (the spec's ``domain.md``; samples in ``tests/data/``):

* the kind of a feature from ``properties.kind`` (``TRACK`` / ``track``, ``POINT``, ``zone``)
  or, in ``.plot.json`` files, ``properties.dataType`` (``reference-point`` is a point, an
  ``annotation`` with a polygon is a zone);
* track times from ``properties.timestamps[]``, ``properties.positions[].time``,
  ``properties.times[]`` or a 4th coordinate in epoch milliseconds, in that order;
* ids that are strings or numbers (compared as strings), geometries with no coordinates.

Times are float seconds since the Unix epoch, UTC. A track that cannot be analysed honestly
(no times, times that go backwards, a time per coordinate missing) is a
:class:`~debrief_calc.errors.ValidationFailed` that names the feature, the field and the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from debrief_calc._coordinates import bounds_of, feature_bounds, feature_positions, point_lonlat, zone_rings
from debrief_calc._feature_parts import KINDS, Kind, feature_id, feature_kind, feature_name, properties_of, raw_id
from debrief_calc._times import iso, iso_many, parse_iso, parse_times
from debrief_calc._track_data import TrackData, read_track, track_data
from debrief_calc.errors import ValidationFailed

__all__ = [
    "KINDS",
    "Kind",
    "TrackData",
    "feature_bounds",
    "feature_id",
    "feature_kind",
    "feature_name",
    "feature_summary",
    "iso",
    "iso_many",
    "parse_iso",
    "parse_times",
    "point_lonlat",
    "track_data",
    "zone_rings",
]


def _iso_or_none(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return iso(parse_iso(value))
    except ValidationFailed:
        return None


def feature_summary(feature: Mapping[str, Any]) -> dict[str, Any]:
    """``{id, kind, name, point_count, time_start, time_end, bounds}`` without coordinates.

    Never raises: a track whose times cannot be read has ``time_start`` and ``time_end`` None.
    Other features report ``properties.time`` and ``properties.timeEnd`` when present.
    """
    kind = feature_kind(feature)
    summary: dict[str, Any] = {
        "id": raw_id(feature),
        "kind": kind,
        "name": feature_name(feature),
        "point_count": 0,
        "time_start": None,
        "time_end": None,
        "bounds": None,
    }
    if kind == "track":
        try:
            track = read_track(feature, None, raw_id(feature) or "")
        except ValidationFailed:
            pass
        else:
            bounds = bounds_of(np.column_stack([track.lon, track.lat]))
            summary["point_count"] = len(track)
            summary["bounds"] = list(bounds) if bounds is not None else None
            summary["time_start"] = iso(float(track.t[0]))
            summary["time_end"] = iso(float(track.t[-1]))
            return summary
    else:
        props = properties_of(feature)
        summary["time_start"] = _iso_or_none(props.get("time"))
        summary["time_end"] = _iso_or_none(props.get("timeEnd"))
    xy = feature_positions(feature)
    bounds = bounds_of(xy)
    summary["point_count"] = len(xy)
    summary["bounds"] = list(bounds) if bounds is not None else None
    return summary
