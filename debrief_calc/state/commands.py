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

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from debrief_calc.state import metadata
from debrief_calc.state.cmdcheck import ALIASES, COMMANDS, MAX_DEPTH, Resolver, Step, bad, parse_command
from debrief_calc.state.errors import feature_not_found
from debrief_calc.state.plotfile import PlotCache, PlotDoc, modify_plot

__all__ = ["ALIASES", "COMMANDS", "MAX_DEPTH", "CommandOutcome", "Resolver", "apply_command", "apply_to_plot"]

_STATE_IDS = (metadata.TIME_ID, metadata.VIEWPORT_ID)


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

    def require(self, ids: Sequence[str], step: Step) -> dict[str, int]:
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


def _add(work: _Work, step: Step) -> None:
    existing = set(work.index())
    reserved = existing | {str(f["id"]) for f in step.payload if f.get("id") is not None}
    counter = [len(work.features)]
    added: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, given in enumerate(step.payload):
        f = given if given.get("id") is not None else _with_id(given, _new_id(reserved, counter))
        fid = str(f["id"])
        reserved.add(fid)
        if fid in existing or fid in seen:
            why = "the plot already has" if fid in existing else "the payload repeats"
            raise bad(
                f"{step.at}.payload[{i}]",
                f"{why} a feature with id {fid!r}; use updateFeatures to replace a feature, "
                "or leave the id out to have one generated",
                conflicting_id=fid,
            )
        seen.add(fid)
        added.append(f)
        work.out.added_ids.append(fid)
    work.replace_features(work.features + added)
    work.out.summary.append(f"added {len(added)} feature{'s' if len(added) != 1 else ''}")


def _update(work: _Work, step: Step) -> None:
    index = work.require([str(f["id"]) for f in step.payload], step)
    features = list(work.features)
    for f in step.payload:
        features[index[str(f["id"])]] = f
        work.out.updated_ids.append(str(f["id"]))
    work.replace_features(features)
    n = len(step.payload)
    work.out.summary.append(f"updated {n} feature{'s' if n != 1 else ''}")


def _delete(work: _Work, step: Step) -> None:
    work.require(step.payload, step)
    gone = set(step.payload)
    work.replace_features([f for f in work.features if str(f.get("id")) not in gone or f.get("id") is None])
    work.out.deleted_ids.extend(step.payload)
    work.prune_selection()
    n = len(step.payload)
    work.out.summary.append(f"deleted {n} feature{'s' if n != 1 else ''}")


def _set_collection(work: _Work, step: Step) -> None:
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


def _apply_step(work: _Work, step: Step) -> None:
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
        raise bad(step.at, f"unhandled command {name!r}")


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
    steps = parse_command(command, resolve_reference)
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


def apply_to_plot(
    path: Path,
    command: Any,
    *,
    expected_revision: str | None = None,
    resolve_reference: Resolver | None = None,
    selection: Sequence[str] | None = None,
    name: str | None = None,
    cache: PlotCache | None = None,
) -> tuple[PlotDoc, CommandOutcome]:
    """:func:`apply_command` on a plot file: locked, re-read, all or nothing, written atomically.

    Returns the plot as now written (its ``revision``) and the outcome. Commands replace features
    and never alter them, so the cheap shallow draft of :func:`modify_plot` is safe here.
    """

    def run(doc: PlotDoc) -> CommandOutcome:
        return apply_command(doc.data, command, resolve_reference=resolve_reference, selection=selection)

    return modify_plot(path, run, expected_revision, name=name, cache=cache, shallow=True)
