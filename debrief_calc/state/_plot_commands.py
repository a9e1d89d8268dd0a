"""DebriefCommands applied to a plot under its lock and recorded for undo, and undo itself."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from debrief_calc.errors import PlotExists, PlotNotFound, feature_not_found, validation_failed
from debrief_calc.formats import metadata
from debrief_calc.formats.plotfile import PlotDoc, create_plot_file, modify_plot
from debrief_calc.plots.commands import CommandOutcome, apply_command, merge_patch
from debrief_calc.plots.history import FileChange, restore_data
from debrief_calc.plots.plotstate import plot_feature_ref, read_selection, resolve_ref, update_selection
from debrief_calc.state._answer_budget import Answer, fit_prefix, split_display
from debrief_calc.state._open_plots import OpenPlots
from debrief_calc.tracks.times import Window

__all__ = ["PlotCommands"]


class PlotCommands(OpenPlots):
    """Every change of a plot file goes through :meth:`write`; :meth:`undo` reverts the last one."""

    def write(
        self, name: str, path: Path, command: Any, expected: str | None
    ) -> tuple[PlotDoc, CommandOutcome, list[str]]:
        """Apply a DebriefCommand under the plot's lock, record it for undo, store the selection.

        ``command`` may be a function of the plot's data as read under the lock that returns the
        command, for a change that depends on what the plot holds (a merge of properties)."""
        seen: dict[str, Any] = {}

        def resolver(ref: dict[str, Any]) -> Any:
            return resolve_ref(self.store, ref)

        def run(draft: PlotDoc) -> CommandOutcome:
            seen.update(top=dict(draft.data), features=list(draft.features), revision=draft.revision)
            seen["selection"] = read_selection(self.store, name)
            step = command(draft.data) if callable(command) else command
            return apply_command(draft.data, step, resolve_reference=resolver, selection=seen["selection"])

        try:
            doc, outcome = modify_plot(
                path, run, expected, scratch_dir=self.scratch, name=name, cache=self.cache, shallow=True
            )
        except PlotNotFound:
            raise self._missing(name) from None
        aspects: list[str] = []
        change = None
        if doc.revision != seen["revision"]:
            change = FileChange(seen["revision"], doc.revision, seen["top"], seen["features"], doc)
            aspects += ["features", *_meta_changes(seen["features"], doc.features)]
        selection = None
        if outcome.selection is not None and outcome.selection != seen["selection"]:
            selection = (seen["selection"], update_selection(self.store, name, outcome.selection))
            aspects.append("selection")
        self.history.record(name, summary="; ".join(outcome.summary), file=change, selection=selection)
        return doc, outcome, aspects

    def apply(self, command: Any, filename: str | None, expected: str | None) -> tuple[Answer, list[str]]:
        name, path = self.resolve(filename)
        doc, out, aspects = self.write(name, path, command, expected)
        display, images = split_display(out.display, self.budget // 3)
        ids = self.budget // 10
        message = "; ".join(out.summary)
        answer = {
            "filename": name,
            "revision": doc.revision,
            "changed": bool(set(aspects) - {"list"}),
            "message": message if len(message) <= 1_000 else message[:999] + "…",
            "added_ids": fit_prefix(out.added_ids, ids)[0],
            "updated_ids": fit_prefix(out.updated_ids, ids)[0],
            "deleted_ids": fit_prefix(out.deleted_ids, ids)[0],
            "selectedIds": fit_prefix(out.selection, self.budget // 6)[0] if out.selection is not None else None,
            "display": display,
            "images": images,
        }
        return answer, aspects

    def create_plot(
        self,
        filename: str,
        title: str | None,
        features: Any,
        time_start: str | None = None,
        time_end: str | None = None,
    ) -> tuple[Answer, list[str]]:
        """A new plot file holding ``features`` (inline, or references the calc server handed out),
        with the metadata real files carry, opened for every client; ``PLOT_EXISTS`` if the file
        exists. Its time window and viewport are the period and bounds of its features. With
        ``time_start``/``time_end`` everything copied is cut to that window first (tracks with a fix
        interpolated at each edge; :mod:`debrief_calc.tracks.times`) and the window is saved as
        the plot's."""
        from debrief_calc.tracks.times import iso, parse_window

        window = parse_window(time_start, time_end)
        path = self._path(filename)
        if path.exists():
            raise PlotExists(
                f"plot file {filename!r} already exists; nothing was changed. Choose another name, "
                "or add features to it with debrief_apply_command (addFeatures)",
                details={"filename": filename},
            )
        name = filename.rsplit("/", 1)[-1][: -len(".plot.json")]
        shown = (title or "").strip() or name
        data: dict[str, Any] = {
            "type": "FeatureCollection",
            "properties": {"name": shown, "created": iso(time.time())},
            "features": [],
        }
        out = CommandOutcome()
        left_out: list[str] = []
        if window is not None and not features:
            raise validation_failed("time_start", "a window cuts the features copied: give features, or leave it out")
        if features:
            command: dict[str, Any] = {"command": "addFeatures", "payload": features}
            if window is not None:
                command, left_out = self._windowed_copy(features, window)
            out = apply_command(data, command, resolve_reference=lambda ref: resolve_ref(self.store, ref))
        doc = create_plot_file(path, data, scratch_dir=self.scratch, name=filename, cache=self.cache)
        opened, _ = self.open_plot(filename, doc)
        answer = {
            "filename": filename,
            "revision": doc.revision,
            "title": shown,
            "open_plots": opened["open_plots"],
            "added_ids": fit_prefix(out.added_ids, self.budget // 4)[0],
            "added_refs": fit_prefix([plot_feature_ref(filename, i) for i in out.added_ids], self.budget // 4)[0],
            "timeState": doc.get_time_state(),
            "viewportState": doc.get_viewport(),
            "message": f"created {filename} with {len(out.added_ids)} feature(s) and opened it"
            + ("; " + "; ".join(out.summary[1:]) if len(out.summary) > 1 else ""),
        }
        if "open_note" in opened:
            answer["open_note"] = opened["open_note"]
        if window is not None:
            answer["window"] = window.answer(**({"left_out": left_out[:100]} if left_out else {}))
        return answer, ["list", "features", "time", "viewport"]

    def _windowed_copy(self, features: Any, window: Window) -> tuple[dict[str, Any], list[str]]:
        """The command that adds ``features`` cut to ``window`` and saves it as the plot's window
        (``current`` at its start), and the ids left out (nothing in the window). A reference with
        no window of its own is read through this one, so that two hours of a million-fix track
        read two hours; one with its own is cut by both."""
        from debrief_calc.errors import InvalidContext
        from debrief_calc.plots.plotstate import features_in, is_ref
        from debrief_calc.tracks.times import cut_features, data_window

        items = features if isinstance(features, list) else [features]
        shown = window.shown
        copied: list[Any] = []
        nothing_in: list[str] = []  # of references with nothing in the window
        for i, item in enumerate(items):
            if not is_ref(item):
                copied.append(item)
                continue
            own = "time_start" in item or "time_end" in item
            ref = item if own else {**item, "time_start": shown[0], "time_end": shown[1]}
            try:
                resolved = resolve_ref(self.store, ref, field=f"features[{i}].ref")
            except InvalidContext as err:
                if own:
                    raise
                nothing_in += [str(i) for i in err.details.get("left_out", [])]
                continue
            found = features_in(resolved)
            if found is None:
                raise validation_failed(f"features[{i}].ref", "holds no features to copy")
            copied += found
        if nothing_in and not copied:
            raise InvalidContext(
                f"none of the features given has data in the window {window.text}: widen time_start/time_end "
                "or leave them out",
                details={"field": "time_start", "received_count": 0, "window": window.answer(), "left_out": nothing_in},
            )
        kept, left_out = cut_features(copied, window, where="given", field="time_start")
        left_out = nothing_in + left_out
        saved = window.closed_by(data_window(kept))  # an open end: where what was copied ends
        steps: list[dict[str, Any]] = [{"command": "addFeatures", "payload": kept}]
        if saved.closed:
            start, end = saved.shown
            # the current time at the window's end, as for any new plot: everything copied is drawn solid
            steps.append({"command": "setTimeState", "payload": {"current": end, "start": start, "end": end}})
        return {"command": "composite", "payload": steps}, left_out

    def set_properties(
        self, ids: list[str], properties: dict[str, Any], filename: str | None, expected: str | None
    ) -> tuple[Answer, list[str]]:
        """Merge ``properties`` into each feature's properties (a JSON merge patch: null deletes a
        key, objects merge), as one undoable change."""
        if not isinstance(properties, dict) or not properties:
            raise validation_failed(
                "properties", 'give the properties to change, e.g. {"name": "SIR one", "stroke": "#808080"}'
            )
        wanted = list(dict.fromkeys(str(i) for i in ids))
        if not wanted:
            raise validation_failed("ids", "give the ids of the features to change (debrief_get_features lists them)")
        name, path = self.resolve(filename)

        relinked: list[str] = []

        def patched(data: dict[str, Any]) -> dict[str, Any]:
            by_id = {str(f.get("id")): f for f in data["features"] if f.get("id") is not None}
            missing = [i for i in wanted if i not in by_id]
            if missing:
                raise feature_not_found(missing, filename=name)
            features = []
            renamed: dict[str, str] = {}
            for fid in wanted:
                old = by_id[fid]
                new = merge_patch(old.get("properties") or {}, properties)
                if new != (old.get("properties") or {}):
                    features.append({**old, "properties": new})
                    renamed |= _renames(old, new)
            entries = _relinked_entries(data["features"], renamed, set(wanted))
            relinked.extend(str(f["id"]) for f in entries)
            features += entries
            return (
                {"command": "updateFeatures", "payload": features}
                if features
                else {"command": "composite", "payload": []}
            )

        doc, out, aspects = self.write(name, path, patched, expected)
        changed = [i for i in out.updated_ids if i not in set(relinked)]
        message = (
            f"set properties of {len(changed)} feature(s)" if changed else "the features already had those properties"
        )
        if relinked:
            message += (
                f"; {len(relinked)} narrative entr{'y' if len(relinked) == 1 else 'ies'} now name the renamed track"
            )
        answer = {
            "filename": name,
            "revision": doc.revision,
            "changed": bool(changed),
            "message": message,
            "updated_ids": changed,
        }
        if relinked:
            answer["relinked_ids"] = relinked
        return answer, aspects

    def undo(self, filename: str | None) -> tuple[Answer, list[str]]:
        name, path, doc = self.load(filename)
        entry = self.history.pick(name, doc.revision, read_selection(self.store, name))
        file, sel = entry.get("file"), entry.get("selection")
        new, aspects = doc, []
        if file:
            body = self.history.body(name, entry)

            def run(draft: PlotDoc) -> None:
                try:
                    restore_data(draft.data, body)
                except (ValueError, TypeError, KeyError, IndexError) as exc:
                    raise validation_failed("history", f"the recorded change cannot be replayed ({exc})") from None

            new, _ = modify_plot(
                path, run, str(file["after"]), scratch_dir=self.scratch, name=name, cache=self.cache, shallow=True
            )
            aspects += ["features", *_meta_changes(doc.features, new.features)]
        selected = None
        if sel:
            selected = update_selection(self.store, name, [str(i) for i in sel.get("before") or []])
            aspects.append("selection")
        remaining = self.history.forget(name, str(entry["id"]), file and str(file.get("before")), new.revision)
        answer = {
            "filename": name,
            "revision": new.revision,
            "undone": str(entry.get("summary") or "a change"),
            "remaining": remaining,
            "selectedIds": fit_prefix(selected, self.budget // 2)[0] if selected is not None else None,
        }
        return answer, aspects


def _meta_changes(before: list[Any], after: list[Any]) -> list[str]:
    """Which of the state features a change replaced (features are replaced, never altered)."""
    out = []
    for fid, aspect in ((metadata.TIME_ID, "time"), (metadata.VIEWPORT_ID, "viewport")):
        if _find(before, fid) is not _find(after, fid):
            out.append(aspect)
    return out


def _find(features: list[Any], fid: str) -> Any:
    return next((f for f in features if isinstance(f, dict) and str(f.get("id")) == fid), None)


def _renames(feature: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """A track's old names (``name``, ``shortName``; lower-cased) → its new name, when a patch of
    its properties (``new``) renamed it: narrative entries find their ship by name, so they follow."""
    from debrief_calc.tracks._feature_parts import feature_kind

    if feature_kind(feature) != "track":
        return {}
    old = feature.get("properties") or {}
    out: dict[str, str] = {}
    for key in ("name", "shortName"):
        before, after = old.get(key), new.get(key)
        if isinstance(before, str) and before and before != after:
            out[before.lower()] = str(after if isinstance(after, str) and after else new.get("name") or before)
    return out


def _relinked_entries(features: list[Any], renamed: dict[str, str], skip: set[str]) -> list[dict[str, Any]]:
    """The narrative entries (``properties.track``) that named a renamed track, naming it anew."""
    if not renamed:
        return []
    out = []
    for f in features:
        props = f.get("properties") if isinstance(f, dict) else None
        if not isinstance(props, dict) or f.get("id") is None or str(f.get("id")) in skip:
            continue
        track = props.get("track")
        if isinstance(track, str) and track.lower() in renamed:
            out.append({**f, "properties": {**props, "track": renamed[track.lower()]}})
    return out
