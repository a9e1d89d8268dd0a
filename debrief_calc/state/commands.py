"""DebriefCommand: the one way to change a plot, applied all or nothing.

``{command, payload}``; a list of commands is a ``composite``. :func:`apply_command` first
checks the whole tree (names, payload shapes, nesting, stored-result references resolved),
then runs the steps in order on a working copy (later steps see earlier ones, so ids are
checked against the state each step meets) and only then puts the result into the caller's
dict. Any failure raises and leaves that dict as it was. Features are never changed in place:
a step replaces list entries, so the working copy costs a list, not a deep copy.

Choices: ``addFeatures`` refuses an id the plot already has (use ``updateFeatures``);
missing ids are generated as ``feature-<n>``. ``deleteFeatures``/``updateFeatures``/
``setSelection`` with unknown ids raise ``FEATURE_NOT_FOUND`` listing them.
``setFeatureCollection`` keeps the file's other top-level members (``bbox``, ``properties``,
foreign members) unless the payload gives them, and keeps the plot's time and viewport
metadata features unless the payload has its own. A payload (or a whole command) may be a
stored-result reference ``{"ref": "<opaque>"}`` (also ``$ref``/``resultRef``): it is passed to
``resolve_reference`` and the answer used in its place.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from debrief_calc.features import parse_iso
from debrief_calc.state import metadata
from debrief_calc.state.errors import InvalidCommand, feature_not_found, validation_failed

__all__ = ["ALIASES", "COMMANDS", "MAX_DEPTH", "CommandOutcome", "apply_command"]

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
_STATE_IDS = (metadata.TIME_ID, metadata.VIEWPORT_ID)

Resolver = Callable[[dict[str, Any]], Any]


@dataclass
class CommandOutcome:
    changed: bool = False
    selection: list[str] | None = None
    display: list[dict[str, Any]] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    added_ids: list[str] = field(default_factory=list)
    updated_ids: list[str] = field(default_factory=list)
    deleted_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Step:
    name: str
    payload: Any
    at: str


def _bad(at: str, message: str, **details: Any) -> InvalidCommand:
    return InvalidCommand(f"{at}: {message}", details={"at": at, **details})


def _is_ref(value: Any) -> bool:
    return isinstance(value, dict) and any(k in value for k in REF_KEYS)


def _resolve(value: dict[str, Any], at: str, resolver: Resolver | None) -> Any:
    if resolver is None:
        raise _bad(at, "stored-result references cannot be resolved here; pass the payload inline")
    return resolver(value)


# ---------------------------------------------------------------- phase 1: shape of the tree


def _parse(command: Any, at: str, depth: int, resolver: Resolver | None, out: list[_Step]) -> None:
    if _is_ref(command) and "command" not in command:
        command = _resolve(command, at, resolver)
    if isinstance(command, list):
        command = {"command": "composite", "payload": command}
    if not isinstance(command, dict):
        raise _bad(at, "a DebriefCommand is an object {command, payload}", got=type(command).__name__)
    name = command.get("command")
    if not isinstance(name, str):
        raise _bad(at, 'a DebriefCommand needs a "command" name', valid_commands=list(COMMANDS))
    canonical = ALIASES.get(name, name)
    if canonical not in COMMANDS:
        raise _bad(
            at,
            f"unknown command {name!r}; valid commands are {', '.join(COMMANDS)} "
            f"(aliases: {', '.join(f'{a} = {c}' for a, c in ALIASES.items())})",
            valid_commands=list(COMMANDS),
            aliases=ALIASES,
        )
    if "payload" not in command:
        raise _bad(at, f"{name} needs a payload")
    payload = command["payload"]
    if _is_ref(payload):
        payload = _resolve(payload, f"{at}.payload", resolver)
    if canonical == "composite":
        if depth >= MAX_DEPTH:
            raise _bad(at, f"composite commands nest at most {MAX_DEPTH} deep", max_depth=MAX_DEPTH)
        steps = payload.get("commands") if isinstance(payload, dict) else payload
        if not isinstance(steps, list):
            raise _bad(at, "a composite payload is a list of commands")
        for i, step in enumerate(steps):
            _parse(step, f"{at}.payload[{i}]", depth + 1, resolver, out)
        return
    out.append(_Step(canonical, _CHECKS[canonical](payload, f"{at}.payload"), at))


def _check_feature(f: Any, at: str, *, need_id: bool = False) -> dict[str, Any]:
    if not isinstance(f, dict) or f.get("type") != "Feature":
        raise _bad(at, 'each feature is a GeoJSON object with "type": "Feature"')
    fid = f.get("id")
    if fid is None and need_id:
        raise _bad(at, 'the feature has no "id" to match')
    if fid is not None and (isinstance(fid, bool) or not isinstance(fid, str | int)):
        raise _bad(at, "a feature id is a string or an integer")
    geom = f.get("geometry")
    if geom is not None:
        kind = geom.get("type") if isinstance(geom, dict) else None
        if kind not in GEOMETRY_TYPES:
            raise _bad(f"{at}.geometry", f"geometry type must be one of {', '.join(GEOMETRY_TYPES)} (or null)")
        member = "geometries" if kind == "GeometryCollection" else "coordinates"
        if not isinstance(geom.get(member), list):
            raise _bad(f"{at}.geometry", f"a {kind} needs a {member!r} list")
    if not (f.get("properties") is None or isinstance(f.get("properties"), dict)):
        raise _bad(f"{at}.properties", "properties is an object or null")
    return f


def _features_of(payload: Any, at: str, *, need_id: bool = False) -> list[dict[str, Any]]:
    if isinstance(payload, dict) and payload.get("type") == "Feature":
        payload = [payload]
    elif isinstance(payload, dict) and isinstance(payload.get("features"), list):
        at, payload = f"{at}.features", payload["features"]
    if not isinstance(payload, list):
        raise _bad(at, "give a list of GeoJSON features (or a FeatureCollection)")
    return [_check_feature(f, f"{at}[{i}]", need_id=need_id) for i, f in enumerate(payload)]


def _ids_of(payload: Any, at: str, keys: Sequence[str]) -> list[str]:
    if isinstance(payload, dict):
        key = next((k for k in keys if k in payload), None)
        if key is None:
            raise _bad(at, f"give the ids as {{{keys[0]}: [...]}}")
        at, payload = f"{at}.{key}", payload[key]
    if isinstance(payload, str | int) and not isinstance(payload, bool):
        payload = [payload]
    if not isinstance(payload, list) or not all(
        isinstance(i, str | int) and not isinstance(i, bool) for i in payload
    ):
        raise _bad(at, "ids are a list of strings (or integers)")
    return list(dict.fromkeys(str(i) for i in payload))


def _check_collection(payload: Any, at: str) -> dict[str, Any]:
    if isinstance(payload, list):
        payload = {"type": "FeatureCollection", "features": payload}
    if not isinstance(payload, dict) or not isinstance(payload.get("features"), list):
        raise _bad(at, "give a FeatureCollection {type: 'FeatureCollection', features: [...]}")
    if payload.get("type", "FeatureCollection") != "FeatureCollection":
        raise _bad(at, 'the collection\'s "type" must be "FeatureCollection"')
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
        raise _bad(at, "showText takes a string")
    return payload


def _check_data(payload: Any, at: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise _bad(at, "showData takes an object, e.g. {shape, axes, values}; wrap a list as {values: [...]}")
    return payload


def _check_image(payload: Any, at: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise _bad(at, "showImage takes {mediaType, data, title?}")
    media = payload.get("mediaType")
    if media not in IMAGE_TYPES:
        raise _bad(f"{at}.mediaType", f"must be one of {', '.join(IMAGE_TYPES)}")
    data = payload.get("data")
    try:
        raw = base64.b64decode(data, validate=True) if isinstance(data, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if not raw:
        raise _bad(f"{at}.data", "must be non-empty base64 text")
    if media == "image/png" and not raw.startswith(b"\x89PNG\r\n\x1a\n"):
        raise _bad(f"{at}.data", "does not decode to a PNG image")
    if media == "image/svg+xml" and b"<svg" not in raw[:4096]:
        raise _bad(f"{at}.data", "does not decode to an SVG document")
    title = payload.get("title")
    if title is not None and not isinstance(title, str):
        raise _bad(f"{at}.title", "must be a string")
    out = {"mediaType": media, "data": data}
    return out | ({"title": title} if title is not None else {})


def _check_log(payload: Any, at: str) -> dict[str, Any]:
    if isinstance(payload, str):
        return {"message": payload, "level": "info"}
    if not isinstance(payload, dict) or not isinstance(payload.get("message"), str):
        raise _bad(at, "logMessage takes a string or {message, level?, timestamp?}")
    level = payload.get("level", "info")
    if level not in LOG_LEVELS:
        raise _bad(f"{at}.level", f"must be one of {', '.join(LOG_LEVELS)}")
    out: dict[str, Any] = {"message": payload["message"], "level": level}
    stamp = payload.get("timestamp")
    if stamp is not None:
        try:
            parse_iso(stamp)
        except (ValueError, TypeError):
            raise _bad(f"{at}.timestamp", f"{stamp!r} is not an ISO-8601 time") from None
        out["timestamp"] = stamp
    return out


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "addFeatures": lambda p, at: _features_of(p, at),
    "updateFeatures": lambda p, at: _features_of(p, at, need_id=True),
    "deleteFeatures": lambda p, at: _ids_of(p, at, ("ids", "featureIds")),
    "setFeatureCollection": _check_collection,
    "setViewport": lambda p, at: metadata.check_bounds(p, at),
    "setSelection": lambda p, at: _ids_of(p, at, ("selectedIds", "featureIds", "ids")),
    "setTimeState": _check_time,
    "showText": _check_text,
    "showData": _check_data,
    "showImage": _check_image,
    "logMessage": _check_log,
}


# ---------------------------------------------------------------- phase 2: run the steps


class _Work:
    """The plot as the steps change it: a new top-level dict and features list, shared features."""

    def __init__(self, doc_data: dict[str, Any], selection: Sequence[str] | None):
        self.top = dict(doc_data)
        feats = doc_data.get("features")
        self.features: list[dict[str, Any]] = list(feats) if isinstance(feats, list) else []
        self.selection = list(selection) if selection is not None else None
        self.selection_changed = False
        self._index: dict[str, int] | None = None
        self.out = CommandOutcome()

    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {}
            for i, f in enumerate(self.features):
                if f.get("id") is not None:
                    self._index.setdefault(str(f["id"]), i)
        return self._index

    def replace_features(self, features: list[dict[str, Any]]) -> None:
        self.features = features
        self._index = None
        self.out.changed = True

    def prune_selection(self) -> None:
        if self.selection is None:
            return
        index = self.index()
        kept = [i for i in self.selection if i in index]
        if kept != self.selection:
            self.selection = kept
            self.selection_changed = True

    def require(self, ids: Sequence[str], step: _Step) -> dict[str, int]:
        index = self.index()
        missing = [i for i in ids if i not in index]
        if missing:
            err = feature_not_found(missing)
            err.details["at"] = step.at
            raise err
        return index


def _new_id(taken: set[str], counter: list[int]) -> str:
    while True:
        counter[0] += 1
        candidate = f"feature-{counter[0]}"
        if candidate not in taken:
            return candidate


def _with_id(f: dict[str, Any], fid: str) -> dict[str, Any]:
    """``f`` with an ``id``, placed after ``type`` as GeoJSON writers do."""
    out: dict[str, Any] = {}
    for key, value in f.items():
        out[key] = value
        if key == "type":
            out["id"] = fid
    out.setdefault("id", fid)
    return out


def _add(work: _Work, step: _Step) -> None:
    taken = set(work.index())
    counter = [len(work.features)]
    added: list[dict[str, Any]] = []
    for i, f in enumerate(step.payload):
        if f.get("id") is None:
            f = _with_id(f, _new_id(taken, counter))
        fid = str(f["id"])
        if fid in taken:
            raise _bad(
                f"{step.at}.payload[{i}]",
                f"the plot already has a feature with id {fid!r}; use updateFeatures to replace it, "
                "or leave the id out to have one generated",
                conflicting_id=fid,
            )
        taken.add(fid)
        added.append(f)
        work.out.added_ids.append(fid)
    work.replace_features(work.features + added)
    work.out.summary.append(f"added {len(added)} feature{'s' if len(added) != 1 else ''}")


def _update(work: _Work, step: _Step) -> None:
    index = work.require([str(f["id"]) for f in step.payload], step)
    features = list(work.features)
    for f in step.payload:
        features[index[str(f["id"])]] = f
        work.out.updated_ids.append(str(f["id"]))
    work.replace_features(features)
    n = len(step.payload)
    work.out.summary.append(f"updated {n} feature{'s' if n != 1 else ''}")


def _delete(work: _Work, step: _Step) -> None:
    work.require(step.payload, step)
    gone = set(step.payload)
    work.replace_features([f for f in work.features if str(f.get("id")) not in gone or f.get("id") is None])
    work.out.deleted_ids.extend(step.payload)
    work.prune_selection()
    n = len(step.payload)
    work.out.summary.append(f"deleted {n} feature{'s' if n != 1 else ''}")


def _set_collection(work: _Work, step: _Step) -> None:
    payload: dict[str, Any] = step.payload
    features = list(payload["features"])
    present = {str(f.get("id")) for f in features if f.get("id") is not None}
    for fid in _STATE_IDS:
        old = work.index().get(fid)
        if fid not in present and old is not None:
            features.append(work.features[old])
    taken, counter = set(present), [0]
    features = [f if f.get("id") is not None else _with_id(f, _new_id(taken, counter)) for f in features]
    for key, value in payload.items():
        if key != "features":
            work.top[key] = value
    work.top["type"] = "FeatureCollection"
    work.replace_features(features)
    work.prune_selection()
    work.out.summary.append(f"replaced the feature collection ({len(features)} features)")


def _set_meta(work: _Work, fid: str, build: Callable[[dict[str, Any] | None], dict[str, Any]]) -> None:
    i = work.index().get(fid)
    features = list(work.features)
    new = build(None if i is None else features[i])
    if i is None:
        features.append(new)
    else:
        features[i] = new
    work.replace_features(features)


def _apply_step(work: _Work, step: _Step) -> None:
    name, payload, out = step.name, step.payload, work.out
    if name == "addFeatures":
        _add(work, step)
    elif name == "updateFeatures":
        _update(work, step)
    elif name == "deleteFeatures":
        _delete(work, step)
    elif name == "setFeatureCollection":
        _set_collection(work, step)
    elif name == "setViewport":
        _set_meta(work, metadata.VIEWPORT_ID, lambda old: metadata.viewport_feature(payload, old))
        out.summary.append(f"viewport set to {payload}")
    elif name == "setTimeState":
        _set_meta(work, metadata.TIME_ID, lambda old: metadata.time_feature(payload, old))
        out.summary.append(f"time set to {payload['current']} in {payload['start']} .. {payload['end']}")
    elif name == "setSelection":
        work.require(payload, step)
        work.selection, work.selection_changed = list(payload), True
        out.summary.append(f"selected {len(payload)} feature{'s' if len(payload) != 1 else ''}")
    elif name == "showText":
        out.display.append({"type": "text", "text": payload})
    elif name == "showData":
        out.display.append({"type": "data", "data": payload})
    elif name == "showImage":
        out.display.append({"type": "image", **payload})
    elif name == "logMessage":
        out.display.append({"type": "log", **payload})
    else:  # pragma: no cover - _parse admits only the names handled above
        raise _bad(step.at, f"unhandled command {name!r}")


def apply_command(
    doc_data: dict[str, Any],
    command: Any,
    *,
    resolve_reference: Resolver | None = None,
    selection: Sequence[str] | None = None,
) -> CommandOutcome:
    """Apply ``command`` (one command, a list, or a reference) to a plot's data, all or nothing.

    ``selection`` is the plot's current selection (kept outside the file); the outcome's
    ``selection`` is the new one when a step set it or removed features from it, else ``None``.
    On success ``doc_data`` is updated in place; on any error it is untouched.
    """
    steps: list[_Step] = []
    _parse(command, "command", 0, resolve_reference, steps)
    work = _Work(doc_data, selection)
    for step in steps:
        _apply_step(work, step)
    out = work.out
    if work.selection_changed:
        out.selection = work.selection
    if out.changed:
        work.top["features"] = work.features
        doc_data.clear()
        doc_data.update(work.top)
    if not out.summary and not out.display:
        out.summary.append("nothing to do")
    return out
