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

Times are float seconds since the Unix epoch, UTC; :func:`iso`, :func:`parse_iso` and their
kin are :mod:`debrief_calc.tracks.times`'s, re-exported here for the readers of features. A track that cannot be analysed honestly
(no times, times that go backwards, a time per coordinate missing) is a
:class:`~debrief_calc.errors.ValidationFailed` that names the feature, the field and the rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from debrief_calc.errors import ValidationFailed
from debrief_calc.tracks._coordinates import bounds_of, feature_bounds, feature_positions, point_lonlat, zone_rings
from debrief_calc.tracks._feature_parts import (
    KINDS,
    Kind,
    feature_id,
    feature_kind,
    feature_label,
    feature_name,
    field_failure,
    geometry_of,
    properties_of,
    raw_id,
)
from debrief_calc.tracks._time_arrays import parse_times
from debrief_calc.tracks._time_text import iso, iso_many, parse_iso
from debrief_calc.tracks._track_data import TrackData, read_track, track_data, track_near

__all__ = [
    "KINDS",
    "SUMMARY_NAME_CHARS",
    "Kind",
    "TrackData",
    "active_period",
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
    "time_span",
    "track_data",
    "track_near",
    "zone_rings",
]


def _iso_or_none(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return iso(parse_iso(value))
    except ValidationFailed:
        return None


#: longest name a summary makes from an annotation's text
SUMMARY_NAME_CHARS = 60


def _short_text(value: object, limit: int = SUMMARY_NAME_CHARS) -> str | None:
    """``value`` on one line, cut at a word to at most ``limit`` characters with "…"."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if len(text) <= limit:
        return text or None
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def feature_summary(feature: Mapping[str, Any]) -> dict[str, Any]:
    """``{id, kind, name, point_count, time_start, time_end, bounds}`` without coordinates.

    Never raises: a track whose times cannot be read has ``time_start`` and ``time_end`` None.
    A sensor counts its cuts and adds ``cut_count``, ``host`` (the host track's id) and
    ``platform`` (the host's name in the lines).
    Other features report ``properties.time`` and ``properties.timeEnd`` when present. An
    annotation with no name (a narrative entry) is named by its text, shortened to
    :data:`SUMMARY_NAME_CHARS` characters, and a narrative entry adds ``platform``, the ship
    that logged it (its ``properties.track``).
    """
    kind = feature_kind(feature)
    name = feature_name(feature)
    if name is None and kind in ("annotation", "zone"):
        name = _short_text(properties_of(feature).get("text"))
    summary: dict[str, Any] = {
        "id": raw_id(feature),
        "kind": kind,
        "name": name,
        "point_count": 0,
        "time_start": None,
        "time_end": None,
        "bounds": None,
    }
    if kind == "sensor":
        return _sensor_summary(feature, summary)
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
        if kind == "annotation" and isinstance(platform := props.get("track"), str) and platform:
            summary["platform"] = platform  # the ship that logged a narrative entry
    xy = feature_positions(feature)
    bounds = bounds_of(xy)
    summary["point_count"] = len(xy)
    summary["bounds"] = list(bounds) if bounds is not None else None
    return summary


def _sensor_summary(feature: Mapping[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """A sensor's cuts counted (``point_count``, also ``cut_count``), their time span, bounds of
    their origins, and the host track (``host``: its id; ``platform``: the name the lines gave)."""
    props = properties_of(feature)
    times = props.get("timestamps")
    summary["time_start"] = _iso_or_none(times[0]) if isinstance(times, list) and times else None
    summary["time_end"] = _iso_or_none(times[-1]) if isinstance(times, list) and times else None
    xy = feature_positions(feature)
    bounds = bounds_of(xy)
    summary["point_count"] = summary["cut_count"] = len(xy)
    summary["bounds"] = list(bounds) if bounds is not None else None
    for key, value in (("host", props.get("host")), ("platform", props.get("hostName"))):
        if isinstance(value, str) and value:
            summary[key] = value
    return summary


def _ends(values: object) -> list[Any] | None:
    return [values[0], values[-1]] if isinstance(values, list) and values else None


def _track_time_ends(feature: Mapping[str, Any]) -> list[Any] | None:
    """A track's first and last time as given, from the first of the four forms it carries."""
    props = properties_of(feature)
    if ends := _ends(props.get("timestamps")):
        return ends
    positions = props.get("positions")
    if (ends := _ends(positions)) and all(isinstance(p, Mapping) and "time" in p for p in ends):
        return [p["time"] for p in ends]
    if ends := _ends(props.get("times")):
        return ends
    geom = geometry_of(feature) or {}
    coords = geom.get("coordinates")
    if geom.get("type") == "MultiLineString" and isinstance(coords, list):
        coords = [p for line in coords if isinstance(line, list) for p in line[:1] + line[-1:]]
    if (ends := _ends(coords)) and all(isinstance(p, list) and len(p) >= 4 for p in ends):
        return [p[3] for p in ends]
    return None


def time_span(feature: Mapping[str, Any]) -> tuple[float, float] | None:
    """The period a feature covers, or None when it carries no usable time: what a plot's
    period is made of.

    Cheap on purpose (it runs on every feature a command adds): a track's first and last times
    only, in any of the four forms (a track's times never decrease, which reading it checks);
    other features ``properties.time`` to ``timeEnd`` (``time`` alone is an instant: a zone
    that starts at 09:00 adds 09:00 to the plot's period, not the rest of time). Whether a
    feature is *shown* or *counted* at a time is :func:`active_period`, where ``time`` alone
    means "from then on".
    """
    try:
        kind = feature_kind(feature)
        if kind == "sensor":  # its cuts' first and last times (ascending, as a sensor's are)
            ends = _ends(properties_of(feature).get("timestamps"))
            if ends is None:
                return None
            first, last = (float(v) for v in parse_times(ends))
            return (first, last) if first <= last else None
        if kind == "track":
            ends = _track_time_ends(feature)
            if ends is None:
                return None
            first, last = (float(v) for v in parse_times(ends))
            return (first, last) if first <= last else None
        props = properties_of(feature)
        start = props.get("time")
        if not isinstance(start, str):
            return None
        end = props.get("timeEnd")
        t0 = parse_iso(start)
        t1 = parse_iso(end) if isinstance(end, str) else t0
        return (t0, t1) if t0 <= t1 else None
    except (ValidationFailed, TypeError, ValueError):
        return None


def active_period(
    feature: Mapping[str, Any], *, strict: bool = False, index: int | None = None
) -> tuple[float, float] | None:
    """When a zone, point, buoy field or annotation is active: ``(start, end)`` in epoch
    seconds from ``properties.time`` / ``properties.timeEnd``, or None when it has neither
    (always active). The one meaning of "active" that the picture, ``zone-transits`` and time
    windows (:func:`debrief_calc.tracks.times.cut_feature`) share:

    * ``time`` alone: from then on, ``(time, inf)``; but a note without a shape (a narrative
      entry: an annotation with no geometry) happened at that instant, ``(time, time)``;
    * ``timeEnd`` alone: until then, ``(-inf, timeEnd)``;
    * both: ``(time, timeEnd)``, ends included.

    Unlike :func:`time_span` (the period a feature adds to a plot's period, where ``time``
    alone is an instant), an open side stays open. A track's fixes say when it is there
    (clip it by them); this reads only the two properties, of any feature.

    A value that is not an ISO-8601 time, or an end before the start, is a ValidationFailed
    naming the field with ``strict`` (an analysis must not guess); otherwise an unreadable
    value counts as absent and a reversed period as no period (always active), so that a
    picture or a read never loses a feature over a typo.
    """
    props = properties_of(feature)
    noun = feature_kind(feature)
    ends: list[float] = []
    for key, open_end in (("time", -math.inf), ("timeEnd", math.inf)):
        value = props.get(key)
        seconds = open_end
        if value is not None:
            try:
                seconds = parse_iso(value) if isinstance(value, str) else math.nan
            except ValidationFailed:
                seconds = math.nan
            if math.isnan(seconds):
                if strict:
                    raise field_failure(
                        feature_label(feature, index, noun),
                        raw_id(feature),
                        f"properties.{key}",
                        "iso-time",
                        f"properties.{key} {str(value)[:60]!r} is not an ISO-8601 time (the {noun}'s active period)",
                    )
                seconds = open_end
        ends.append(seconds)
    start, end = ends
    if start == -math.inf and end == math.inf:
        return None
    if end == math.inf and noun == "annotation" and geometry_of(feature) is None:
        end = start  # a narrative entry is an event, not a zone that comes into force
    if start > end:
        if strict:
            raise field_failure(
                feature_label(feature, index, noun),
                raw_id(feature),
                "properties.timeEnd",
                "order",
                f"the {noun}'s active period ends ({props.get('timeEnd')}) before it starts ({props.get('time')})",
            )
        return None
    return start, end
