"""DebriefCommands applied to a plot under its lock and recorded for undo, and undo itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debrief_calc.errors import PlotNotFound
from debrief_calc.plotstate import read_selection, resolve_ref, update_selection
from debrief_calc.state import metadata
from debrief_calc.state._answer_budget import Answer, fit_prefix, split_display
from debrief_calc.state._open_plots import OpenPlots
from debrief_calc.state.commands import CommandOutcome, apply_command
from debrief_calc.state.errors import validation_failed
from debrief_calc.state.history import FileChange, restore_data
from debrief_calc.state.plotfile import PlotDoc, modify_plot

__all__ = ["PlotCommands"]


class PlotCommands(OpenPlots):
    """Every change of a plot file goes through :meth:`write`; :meth:`undo` reverts the last one."""

    def write(
        self, name: str, path: Path, command: Any, expected: str | None
    ) -> tuple[PlotDoc, CommandOutcome, list[str]]:
        """Apply a DebriefCommand under the plot's lock, record it for undo, store the selection."""
        seen: dict[str, Any] = {}

        def resolver(ref: dict[str, Any]) -> Any:
            return resolve_ref(self.store, ref)

        def run(draft: PlotDoc) -> CommandOutcome:
            seen.update(top=dict(draft.data), features=list(draft.features), revision=draft.revision)
            seen["selection"] = read_selection(self.store, name)
            return apply_command(draft.data, command, resolve_reference=resolver, selection=seen["selection"])

        try:
            doc, outcome = modify_plot(path, run, expected, name=name, cache=self.cache, shallow=True)
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

            new, _ = modify_plot(path, run, str(file["after"]), name=name, cache=self.cache, shallow=True)
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
