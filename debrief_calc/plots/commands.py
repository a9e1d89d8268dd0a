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
metadata features unless the payload has its own. ``updateFeatures`` replaces whole features,
so it refuses one that would drop the stored feature's geometry or properties
(``VALIDATION_FAILED``; a change of properties alone is a merge patch, :func:`merge_patch`).

The saved time window and viewport follow added features (:func:`_follow_added`): a plot
without them gets the period and the (padded) bounds of its features, and one whose window or
viewport showed all of the plot's data before is widened to show what was added; an analyst's
narrower choice is kept, and so is an explicit ``setTimeState``/``setViewport`` in the command. A payload (or a whole command) may be a
stored-result reference ``{"ref": "<opaque>"}`` (also ``$ref``/``resultRef``): it is passed to
``resolve_reference`` and the answer used in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from debrief_calc.errors import ValidationFailed, feature_not_found, validation_failed
from debrief_calc.formats import metadata
from debrief_calc.formats.plotfile import PlotCache, PlotDoc, modify_plot
from debrief_calc.plots.cmdcheck import ALIASES, COMMANDS, MAX_DEPTH, Resolver, Step, bad, parse_command

__all__ = [
    "ALIASES",
    "COMMANDS",
    "MAX_DEPTH",
    "CommandOutcome",
    "Resolver",
    "apply_command",
    "apply_to_plot",
    "merge_patch",
]

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
        self.before = self.features
        self.added: list[dict[str, Any]] = []
        self.explicit: set[str] = set()  # "time", "viewport": set by a step of this command

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
                "or leave the id out to have one generated (a feature copied by reference takes a new id "
                f'as {{"ref": "debrief-state:plots/<file>#{fid}", "id": "<new id>"}})',
                conflicting_id=fid,
            )
        seen.add(fid)
        added.append(f)
        work.out.added_ids.append(fid)
    work.added += added
    work.replace_features(work.features + added)
    work.out.summary.append(f"added {len(added)} feature{'s' if len(added) != 1 else ''}")


def _update(work: _Work, step: Step) -> None:
    index = work.require([str(f["id"]) for f in step.payload], step)
    features = list(work.features)
    for i, f in enumerate(step.payload):
        _check_whole(f, features[index[str(f["id"])]], f"{step.at}.payload[{i}]")
        features[index[str(f["id"])]] = f
        work.out.updated_ids.append(str(f["id"]))
    work.replace_features(features)
    n = len(step.payload)
    work.out.summary.append(f"updated {n} feature{'s' if n != 1 else ''}")


def _check_whole(new: dict[str, Any], old: dict[str, Any], at: str) -> None:
    """An update replaces the whole feature: refuse one that would silently drop what the stored
    feature has (a model sending ``{id, properties: {name}}`` meant to rename, not to erase)."""
    fid = new.get("id")
    hint = (
        "updateFeatures replaces the whole feature: send it complete (read it with "
        "debrief_get_features(ids, detail='full')), or change properties alone with debrief_set_properties"
    )
    if new.get("geometry") is None and old.get("geometry") is not None:
        missing = "has no geometry" if "geometry" not in new else "has a null geometry"
        raise validation_failed(f"{at}.geometry", f"feature {fid!r} {missing}, which would erase its shape; {hint}")
    if new.get("properties") is None and old.get("properties"):
        raise validation_failed(
            f"{at}.properties", f"feature {fid!r} has no properties, which would erase its own; {hint}"
        )


def merge_patch(target: Any, patch: Any) -> Any:
    """``patch`` applied to ``target`` as a JSON merge patch (RFC 7396): objects merge key by
    key, ``null`` deletes a key, anything else replaces. Neither argument is changed."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


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
    work.before, work.added = [], [f for f in features if str(f.get("id")) not in _STATE_IDS]
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
        work.explicit.add("viewport")
        out.summary.append(f"viewport set to {payload}")
    elif name == "setTimeState":
        _set_meta(work, metadata.TIME_ID, lambda old: metadata.time_feature(payload, old))
        work.explicit.add("time")
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


def _follow_added(work: _Work) -> None:
    """The time window and viewport follow added features (see the module docstring)."""
    from debrief_calc.tracks.times import Window, data_window, parse_iso, saved_window

    added = metadata.data_features(work.added)
    if not added:
        return
    new = data_window(added)
    time_at = work.index().get(metadata.TIME_ID)
    if new.closed and "time" not in work.explicit:
        old_state = metadata.get_time_state({"features": [work.features[time_at]]}) if time_at is not None else None
        before = data_window(metadata.data_features(work.before))
        window: Window | None
        if old_state is None:  # a new plot: its current time at the end, so the whole of every track is drawn solid
            window = Window.spanning([new, before]) if before.closed else new
            current = window.shown[1]
        else:
            old = saved_window(old_state)
            try:
                parse_iso(old_state["current"])
            except ValidationFailed:
                old = None
            if old is None:  # a window the file holds but nobody can read: leave it be
                return _follow_view(work, added)
            showed_all = not before.closed or not any(old.cut_ends(before))
            window = Window.spanning([old, new]) if showed_all and any(old.cut_ends(new)) else None
            current = old_state["current"]
        if window is not None:
            start, end = window.shown
            state = {"current": str(current), "start": str(start), "end": str(end)}
            _set_meta(work, metadata.TIME_ID, lambda prior: metadata.time_feature(state, prior))
            work.out.summary.append(
                f"time window {'set' if old_state is None else 'widened'} to {state['start']} .. {state['end']}"
            )
    _follow_view(work, added)


def _follow_view(work: _Work, added: list[dict[str, Any]]) -> None:
    if "viewport" in work.explicit:
        return
    new_box = metadata.data_bounds(added)
    view_at = work.index().get(metadata.VIEWPORT_ID)
    view = metadata.get_viewport({"features": [work.features[view_at]]}) if view_at is not None else None
    if new_box is None or (
        view is not None and (view["bounds"][0] > view["bounds"][2] or metadata.covers(view["bounds"], new_box))
    ):
        return  # nothing to show, a view across 180° (left alone), or the new features are in view already
    before_box = metadata.data_bounds(metadata.data_features(work.before))
    if view is not None and before_box is not None and not metadata.covers(view["bounds"], before_box):
        return  # the analyst zoomed in: keep their view
    box = (
        new_box
        if before_box is None
        else [*map(min, before_box[:2], new_box[:2]), *map(max, before_box[2:], new_box[2:])]
    )
    bounds = metadata.padded(box)
    _set_meta(work, metadata.VIEWPORT_ID, lambda prior: metadata.viewport_feature(bounds, prior))
    work.out.summary.append(f"viewport {'set' if view is None else 'widened'} to show all features")


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
    _follow_added(work)
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
    scratch_dir: Path,
    expected_revision: str | None = None,
    resolve_reference: Resolver | None = None,
    selection: Sequence[str] | None = None,
    name: str | None = None,
    cache: PlotCache | None = None,
) -> tuple[PlotDoc, CommandOutcome]:
    """:func:`apply_command` on a plot file: locked, re-read, all or nothing, written atomically.

    Returns the plot as now written (its ``revision``) and the outcome. Commands replace features
    and never alter them, so the cheap shallow draft of :func:`modify_plot` is safe here.
    ``scratch_dir`` holds the plot's lock and temporary files (:mod:`.plotfile`).
    """

    def run(doc: PlotDoc) -> CommandOutcome:
        return apply_command(doc.data, command, resolve_reference=resolve_reference, selection=selection)

    return modify_plot(path, run, expected_revision, scratch_dir=scratch_dir, name=name, cache=cache, shallow=True)
