"""GeoJSON features from the parsed tracks and narratives, with deterministic unique ids."""

from __future__ import annotations

import hashlib
import posixpath
import re
from bisect import bisect_left
from typing import Any

from debrief_calc.formats.rep._annotations import Narrative
from debrief_calc.formats.rep._colours import replay_colour
from debrief_calc.formats.rep._fixes import Track

__all__ = ["FeatureIds", "narrative_feature", "slugify", "source_scope", "track_feature"]


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


_REP_SUFFIX = re.compile(r"\.(rep|dsf|dtf)\Z", re.IGNORECASE)
_MAX_SCOPE = 48


def source_scope(source_name: str | None, text: str) -> str:
    """What makes a file's non-track ids its own: the source path without its REP suffix,
    slugged (``./exercise/boat1.rep`` -> ``exercise-boat1``; a long path keeps its end and a hash
    of the whole), or, with no source name, a short hash of the text."""
    if source_name:
        path = posixpath.normpath(source_name.replace("\\", "/"))
        slug = slugify(_REP_SUFFIX.sub("", path))
        if len(slug) > _MAX_SCOPE:
            digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:6]
            slug = slug[-(_MAX_SCOPE - 7) :].strip("-") + "-" + digest
        if slug:
            return slug
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


class FeatureIds:
    """Deterministic, unique feature ids."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def take(self, wanted: str) -> str:
        candidate = wanted
        suffix = 2
        while candidate in self._used:
            candidate = f"{wanted}-{suffix}"
            suffix += 1
        self._used.add(candidate)
        return candidate


def track_feature(track: Track, feature_id: str, source: str | None) -> dict[str, Any]:
    track.sort()
    coordinates = [[lon, lat] for lon, lat in zip(track.lons, track.lats, strict=True)]
    geometry: dict[str, Any]
    if len(coordinates) == 1:
        geometry = {"type": "Point", "coordinates": coordinates[0]}
    else:
        geometry = {"type": "LineString", "coordinates": coordinates}
    properties: dict[str, Any] = {
        "dataType": "track",
        "kind": "track",
        "name": track.name,
        "symbol": track.symbol,
        "timestamps": track.times,
        "courses": track.courses,
        "speeds": track.speeds,
        "depths": track.depths,
    }
    colour = replay_colour(track.symbol)
    if colour is not None:
        properties["stroke"] = colour
    if any(label is not None for label in track.labels):
        properties["labels"] = track.labels
    if track.layer:
        properties["layer"] = track.layer
    if source is not None:
        properties["source"] = source
    return {"type": "Feature", "id": feature_id, "geometry": geometry, "properties": properties}


def _nearest_fix(track: Track, key: int) -> int:
    """Index of the fix of ``track`` nearest in time to ``key`` (the earlier one on a tie)."""
    keys = track.keys
    index = bisect_left(keys, key)
    if index == 0:
        return 0
    if index >= len(keys):
        return len(keys) - 1
    return index - 1 if key - keys[index - 1] <= keys[index] - key else index


def narrative_feature(narrative: Narrative, feature_id: str, track: Track | None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "dataType": "annotation",
        "kind": "annotation",
        "annotationType": "comment",
        "text": narrative.text,
        "time": narrative.time,
        "track": narrative.track,
    }
    if narrative.narrative_type is not None:
        properties["narrativeType"] = narrative.narrative_type
    geometry: dict[str, Any] | None = None
    if track is not None and track.keys:
        index = _nearest_fix(track, narrative.key)
        geometry = {"type": "Point", "coordinates": [track.lons[index], track.lats[index]]}
        properties["positionTime"] = track.times[index]
    return {"type": "Feature", "id": feature_id, "geometry": geometry, "properties": properties}
