"""Phase one of a DebriefCommand: check the shape of the whole command tree.

:func:`parse_command` walks a command (one, a list, or a stored-result reference), resolves
references through the caller's resolver, refuses unknown names (listing the valid ones and
the aliases), payloads of the wrong shape and composites nested deeper than :data:`MAX_DEPTH`,
and flattens it into :class:`Step` objects with normalised payloads, each with the place
(``command.payload[2]``) it came from. A reference may stand for a whole command, a payload, or
an item of a features payload. Every refusal names the place and, in ``details.expected``, the
payload the command takes (:data:`PAYLOAD_SHAPES`). Nothing here looks at a plot.
"""

from __future__ import annotations

import base64
import binascii
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from debrief_calc.errors import InvalidCommand, ValidationFailed
from debrief_calc.formats import metadata
from debrief_calc.plots.plotstate import PLOT_PREFIX, plain_copy
from llmem.core.errors import SuiteError

__all__ = [
    "ALIASES",
    "COMMANDS",
    "MAX_DEPTH",
    "PAYLOAD_SHAPES",
    "REF_KEYS",
    "Resolver",
    "Step",
    "bad",
    "parse_command",
]

COMMANDS = (
    "addFeatures",
    "updateFeatures",
    "deleteFeatures",
    "setFeatureCollection",
    "setViewport",
    "setSelection",
    "setTimeState",
    "showText",
    "showData",
    "showImage",
    "logMessage",
    "composite",
)
ALIASES = {"highlightFeatures": "setSelection", "updateViewport": "setViewport"}
MAX_DEPTH = 10
#: Each command's payload, as a model needs to write it (in the tool's guide and in every
#: INVALID_COMMAND answer about that command).
PAYLOAD_SHAPES: dict[str, str] = {
    "addFeatures": "[Feature, …] or a FeatureCollection; items may be {ref} from debrief-calc; ids generated where missing",
    "updateFeatures": "[Feature with id, …]: each replaces the whole stored feature (geometry and properties)",
    "deleteFeatures": "[id, …] or {ids: [...]}",
    "setFeatureCollection": "{type: 'FeatureCollection', features: [...]} (time and viewport features kept)",
    "setViewport": "{bounds: [west, south, east, north]} (degrees)",
    "setSelection": "{selectedIds: [id, …]}",
    "setTimeState": "{current, start, end} as ISO-8601 UTC times, start ≤ current ≤ end",
    "showText": '"text"',
    "showData": "{shape, axes, values} or any object",
    "showImage": "{mediaType: 'image/png' | 'image/svg+xml', data: <base64>, title?}",
    "logMessage": '"text" or {message, level: debug|info|warn|error, timestamp?}',
    "composite": f"[command, …] run in order, all or nothing (nested at most {MAX_DEPTH} deep)",
}
REF_KEYS = ("ref", "$ref", "resultRef")
IMAGE_TYPES = ("image/png", "image/svg+xml")
LOG_LEVELS = ("debug", "info", "warn", "error")
GEOMETRY_TYPES = (
    "Point",
    "MultiPoint",
    "LineString",
    "MultiLineString",
    "Polygon",
    "MultiPolygon",
    "GeometryCollection",
)
Resolver = Callable[[dict[str, Any]], Any]


@dataclass
class Step:
    name: str
    payload: Any
    at: str


def bad(at: str, message: str, **details: Any) -> InvalidCommand:
    return InvalidCommand(f"{at}: {message}", details={"at": at, **details})


def _is_ref(value: Any) -> bool:
    """A reference object; a Feature is never one, whatever foreign members it has (a feature read
    with debrief_get_features carries its own ``ref``)."""
    return isinstance(value, dict) and value.get("type") != "Feature" and any(k in value for k in REF_KEYS)


def _resolve(value: dict[str, Any], at: str, resolver: Resolver | None) -> Any:
    if resolver is None:
        raise bad(at, "stored-result references cannot be resolved here; pass the payload inline")
    try:
        return resolver(value)
    except SuiteError as err:  # say which item of the command the reference was
        err.details.setdefault("at", at)
        raise


def _parse(command: Any, at: str, depth: int, resolver: Resolver | None, out: list[Step]) -> None:
    if _is_ref(command) and "command" not in command:
        command = _resolve(command, at, resolver)
    if isinstance(command, list):
        command = {"command": "composite", "payload": command}
    if not isinstance(command, dict):
        raise bad(at, "a DebriefCommand is an object {command, payload}", got=type(command).__name__)
    name = command.get("command")
    if not isinstance(name, str):
        raise bad(
            at,
            f'a DebriefCommand needs a "command" name, one of {", ".join(COMMANDS)}',
            valid_commands=list(COMMANDS),
            payloads=PAYLOAD_SHAPES,
        )
    canonical = ALIASES.get(name, name)
    if canonical not in COMMANDS:
        raise bad(
            at,
            f"unknown command {name!r}; valid commands are {', '.join(COMMANDS)} "
            f"(aliases: {', '.join(f'{a} = {c}' for a, c in ALIASES.items())}); details.payloads gives each payload",
            valid_commands=list(COMMANDS),
            aliases=ALIASES,
            payloads=PAYLOAD_SHAPES,
        )
    if "payload" not in command:
        raise bad(at, f"{name} needs a payload: {PAYLOAD_SHAPES[canonical]}", expected=PAYLOAD_SHAPES[canonical])
    payload = command["payload"]
    if _is_ref(payload):
        payload = _resolve(payload, f"{at}.payload", resolver)
    if canonical == "composite":
        if depth >= MAX_DEPTH:
            raise bad(at, f"composite commands nest at most {MAX_DEPTH} deep", max_depth=MAX_DEPTH)
        steps = payload.get("commands") if isinstance(payload, dict) else payload
        if not isinstance(steps, list):
            raise bad(at, "a composite payload is a list of commands")
        for i, step in enumerate(steps):
            _parse(step, f"{at}.payload[{i}]", depth + 1, resolver, out)
        return
    if canonical in _ADOPTED:
        payload = _clone(_expand_refs(payload, f"{at}.payload", resolver))
    try:
        checked = _CHECKS[canonical](payload, f"{at}.payload")
    except (InvalidCommand, ValidationFailed) as err:
        err.details.setdefault("command", canonical)
        err.details.setdefault("expected", PAYLOAD_SHAPES[canonical])
        raise
    out.append(Step(canonical, checked, at))


def _expand_refs(payload: Any, at: str, resolver: Resolver | None) -> Any:
    """A features payload with each reference item replaced by the features it stands for, so
    that stored results mix with inline features (``[{"ref": …}, {...Feature...}]``)."""
    items = payload.get("features") if isinstance(payload, dict) and payload.get("type") != "Feature" else payload
    if not isinstance(items, list) or not any(_is_ref(i) for i in items):
        return payload
    expanded: list[Any] = []
    for i, item in enumerate(items):
        if not _is_ref(item):
            expanded.append(item)
            continue
        value = _resolve(item, f"{at}[{i}]", resolver)
        if isinstance(value, dict) and value.get("type") == "Feature":
            expanded.append(value)
        elif isinstance(value, dict) and isinstance(value.get("features"), list):
            expanded += value["features"]
        elif isinstance(value, list):
            expanded += value
        else:
            raise bad(f"{at}[{i}]", "the reference does not hold features")
    return {**payload, "features": expanded} if isinstance(payload, dict) else expanded


#: Commands whose payload objects end up inside the plot: they get their own copy, so that the
#: caller changing its objects later cannot reach into a cached plot.
_ADOPTED = {"addFeatures", "updateFeatures", "setFeatureCollection"}


def _clone(value: Any) -> Any:
    try:
        return plain_copy(value)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return value  # not plain data: the shape checks that follow will say what is wrong


def _check_feature(f: Any, at: str, *, need_id: bool = False) -> dict[str, Any]:
    if not isinstance(f, dict) or f.get("type") != "Feature":
        raise bad(at, 'each feature is a GeoJSON object with "type": "Feature"')
    fid = f.get("id")
    if fid is None and need_id:
        raise bad(at, 'the feature has no "id" to match')
    if fid is not None and (isinstance(fid, bool) or not isinstance(fid, str | int)):
        raise bad(at, "a feature id is a string or an integer")
    geom = f.get("geometry")
    if geom is not None:
        kind = geom.get("type") if isinstance(geom, dict) else None
        if kind not in GEOMETRY_TYPES:
            raise bad(f"{at}.geometry", f"geometry type must be one of {', '.join(GEOMETRY_TYPES)} (or null)")
        member = "geometries" if kind == "GeometryCollection" else "coordinates"
        if not isinstance(geom.get(member), list):
            raise bad(f"{at}.geometry", f"a {kind} needs a {member!r} list")
    if not (f.get("properties") is None or isinstance(f.get("properties"), dict)):
        raise bad(f"{at}.properties", "properties is an object or null")
    return f


def _features_of(payload: Any, at: str, *, need_id: bool = False) -> list[dict[str, Any]]:
    if isinstance(payload, dict) and payload.get("type") == "Feature":
        payload = [payload]
    elif isinstance(payload, dict) and isinstance(payload.get("features"), list):
        at, payload = f"{at}.features", payload["features"]
    if not isinstance(payload, list):
        raise bad(at, "give a list of GeoJSON features (or a FeatureCollection)")
    out = [_check_feature(f, f"{at}[{i}]", need_id=need_id) for i, f in enumerate(payload)]
    for f in out:  # the ref debrief_get_features gave it says where it was read, not what it is
        if isinstance(f.get("ref"), str) and f["ref"].startswith(PLOT_PREFIX):
            del f["ref"]
    return out


def _ids_of(payload: Any, at: str, keys: Sequence[str]) -> list[str]:
    if isinstance(payload, dict):
        key = next((k for k in keys if k in payload), None)
        if key is None:
            raise bad(at, f"give the ids as {{{keys[0]}: [...]}}")
        at, payload = f"{at}.{key}", payload[key]
    if isinstance(payload, str | int) and not isinstance(payload, bool):
        payload = [payload]
    if not isinstance(payload, list) or not all(isinstance(i, str | int) and not isinstance(i, bool) for i in payload):
        raise bad(at, "ids are a list of strings (or integers)")
    return list(dict.fromkeys(str(i) for i in payload))


def _check_collection(payload: Any, at: str) -> dict[str, Any]:
    if isinstance(payload, list):
        payload = {"type": "FeatureCollection", "features": payload}
    if not isinstance(payload, dict) or not isinstance(payload.get("features"), list):
        raise bad(at, "give a FeatureCollection {type: 'FeatureCollection', features: [...]}")
    if payload.get("type", "FeatureCollection") != "FeatureCollection":
        raise bad(at, 'the collection\'s "type" must be "FeatureCollection"')
    _features_of(payload["features"], f"{at}.features")
    return payload


def _check_time(payload: Any, at: str) -> dict[str, str]:
    if isinstance(payload, dict) and isinstance(payload.get("timeState"), dict):
        payload = payload["timeState"]
    return metadata.check_time_state(payload, at)


def _check_text(payload: Any, at: str) -> str:
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        payload = payload["text"]
    if not isinstance(payload, str):
        raise bad(at, "showText takes a string")
    return payload


def _check_data(payload: Any, at: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise bad(at, "showData takes an object, e.g. {shape, axes, values}; wrap a list as {values: [...]}")
    return payload


def _check_image(payload: Any, at: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise bad(at, "showImage takes {mediaType, data, title?}")
    media = payload.get("mediaType")
    if media not in IMAGE_TYPES:
        raise bad(f"{at}.mediaType", f"must be one of {', '.join(IMAGE_TYPES)}")
    data = payload.get("data")
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if not raw:
        raise bad(f"{at}.data", "must be non-empty base64 text")
    if media == "image/png" and not raw.startswith(b"\x89PNG\r\n\x1a\n"):
        raise bad(f"{at}.data", "does not decode to a PNG image")
    if media == "image/svg+xml" and b"<svg" not in raw[:4096]:
        raise bad(f"{at}.data", "does not decode to an SVG document")
    title = payload.get("title")
    if title is not None and not isinstance(title, str):
        raise bad(f"{at}.title", "must be a string")
    out = {"mediaType": media, "data": data}
    return out | ({"title": title} if title is not None else {})


def _check_log(payload: Any, at: str) -> dict[str, Any]:
    if isinstance(payload, str):
        return {"message": payload, "level": "info"}
    if not isinstance(payload, dict) or not isinstance(payload.get("message"), str):
        raise bad(at, "logMessage takes a string or {message, level?, timestamp?}")
    level = payload.get("level", "info")
    if level not in LOG_LEVELS:
        raise bad(f"{at}.level", f"must be one of {', '.join(LOG_LEVELS)}")
    out: dict[str, Any] = {"message": payload["message"], "level": level}
    stamp = payload.get("timestamp")
    if stamp is not None:
        from debrief_calc.tracks.features import parse_iso

        try:
            parse_iso(stamp)
        except (ValidationFailed, ValueError):
            raise bad(f"{at}.timestamp", f"{stamp!r} is not an ISO-8601 time") from None
        out["timestamp"] = stamp
    return out


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "addFeatures": _features_of,
    "updateFeatures": lambda p, at: _features_of(p, at, need_id=True),
    "deleteFeatures": lambda p, at: _ids_of(p, at, ("ids", "featureIds")),
    "setFeatureCollection": _check_collection,
    "setViewport": metadata.check_bounds,
    "setSelection": lambda p, at: _ids_of(p, at, ("selectedIds", "featureIds", "ids")),
    "setTimeState": _check_time,
    "showText": _check_text,
    "showData": _check_data,
    "showImage": _check_image,
    "logMessage": _check_log,
}


def parse_command(command: Any, resolver: Resolver | None) -> list[Step]:
    """The command tree as a flat list of checked steps, in the order they run."""
    steps: list[Step] = []
    _parse(command, "command", 0, resolver, steps)
    return steps
