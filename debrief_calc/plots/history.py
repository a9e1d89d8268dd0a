"""Undo for debrief-state: a bounded history of the changes made through the server.

Each change made through the server (a plot write, a selection change, or both at once) is
one entry in the store, under the ``debrief-state`` namespace, so that every process sees the
same history::

    docs/debrief-state/history/<plot>/index.json     {"entries": [entry, ...]}, oldest first
    docs/debrief-state/history/<plot>/<id>.json      the body of one file change

An entry is ``{id, at, summary, file: {before, after, body} | null, selection: {before,
after} | null}``. A file change does not keep the old file: commands replace features and
never alter them, so the old feature list is rebuilt from the new one by identity: runs of
features that are still there (``["k", start, length]``) and the features that were replaced
or deleted, kept literally (``["f", [feature, ...]]``); top-level members are kept only when
one of them changed. A one-feature edit of a 50 MB plot therefore costs a few hundred bytes.

Undo takes the newest entry and refuses with ``CONFLICT`` when the plot's revision (or its
selection) is no longer what that change left: someone changed it since.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from debrief_calc.errors import Conflict, validation_failed
from debrief_calc.formats.plotdoc import PlotDoc
from llmem.core.fsutil import atomic_write_bytes, read_json
from llmem.core.store import ArtifactStore, now_iso

__all__ = ["MAX_ENTRIES", "FileChange", "History", "diff_features", "rebuild"]

MAX_ENTRIES = 20
NS = "debrief-state"
_SEP = (",", ":")


def diff_features(before: list[Any], after: list[Any]) -> list[list[Any]]:
    """A recipe that rebuilds ``before`` from ``after``: kept runs by position, the rest literal."""
    where = {id(f): j for j, f in enumerate(after)}
    recipe: list[list[Any]] = []
    for f in before:
        j = where.get(id(f))
        last = recipe[-1] if recipe else None
        if j is None:
            if last is not None and last[0] == "f":
                last[1].append(f)
            else:
                recipe.append(["f", [f]])
        elif last is not None and last[0] == "k" and last[1] + last[2] == j:
            last[2] += 1
        else:
            recipe.append(["k", j, 1])
    return recipe


def rebuild(recipe: list[Any], current: list[Any]) -> list[Any]:
    """``before`` again, from a recipe and the features of the plot as the change left them."""
    out: list[Any] = []
    for step in recipe:
        if step[0] == "k":
            start, length = int(step[1]), int(step[2])
            if start < 0 or start + length > len(current):
                raise ValueError("recipe refers past the end of the feature list")
            out.extend(current[start : start + length])
        elif step[0] == "f" and isinstance(step[1], list):
            out.extend(step[1])
        else:
            raise ValueError(f"unknown recipe step {step[0]!r}")
    return out


@dataclass
class FileChange:
    """One plot write: the revisions around it, and what it replaced."""

    before_revision: str
    after_revision: str
    before_top: dict[str, Any]  # the top-level members as they were (``features`` included)
    before_features: list[Any]
    after: PlotDoc

    def body(self) -> dict[str, Any]:
        after_top = self.after.data
        same_top = list(after_top) == list(self.before_top) and all(
            k == "features" or after_top[k] is v for k, v in self.before_top.items()
        )
        top = None if same_top else [[k, None if k == "features" else v] for k, v in self.before_top.items()]
        return {"top": top, "features": diff_features(self.before_features, self.after.features)}


class History:
    """The undo history of every plot of one store."""

    def __init__(self, store: ArtifactStore, max_entries: int = MAX_ENTRIES):
        self.store = store
        self.max_entries = max_entries

    def _index(self, plot: str) -> str:
        return f"history/{plot}/index"

    def entries(self, plot: str) -> list[dict[str, Any]]:
        doc = self.store.read_doc(NS, self._index(plot), {"entries": []})
        entries = doc.get("entries") if isinstance(doc, dict) else None
        return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []

    def record(
        self,
        plot: str,
        *,
        summary: str,
        file: FileChange | None = None,
        selection: tuple[list[str], list[str]] | None = None,
    ) -> None:
        if file is None and selection is None:
            return
        entry_id = f"{time.time_ns():x}-{uuid.uuid4().hex[:8]}"
        entry: dict[str, Any] = {"id": entry_id, "at": now_iso(), "summary": summary[:500]}
        if file is not None:
            raw = json.dumps(file.body(), ensure_ascii=False, separators=_SEP).encode("utf-8")
            atomic_write_bytes(self.store.doc_file(NS, f"history/{plot}/{entry_id}"), raw)
            entry["file"] = {"before": file.before_revision, "after": file.after_revision}
        if selection is not None:
            entry["selection"] = {"before": selection[0], "after": selection[1]}

        def add(doc: Any) -> tuple[Any, list[str]]:
            entries = list(doc.get("entries", [])) if isinstance(doc, dict) else []
            entries.append(entry)
            dropped = entries[: max(0, len(entries) - self.max_entries)]
            return {"entries": entries[len(dropped) :]}, [str(e.get("id")) for e in dropped if e.get("file")]

        for old in self.store.update_doc(NS, self._index(plot), {"entries": []}, add):
            self._drop_body(plot, old)

    def _drop_body(self, plot: str, entry_id: str) -> None:
        try:
            self.store.doc_file(NS, f"history/{plot}/{entry_id}").unlink()
        except (OSError, ValueError):
            pass

    def pick(self, plot: str, revision: str, selection: list[str]) -> dict[str, Any]:
        """The entry to undo now, or ``CONFLICT`` / nothing-to-undo explaining why not."""
        entries = self.entries(plot)
        if not entries:
            raise validation_failed(
                "history", f"nothing to undo: no change made through this server is recorded for {plot!r}"
            )
        entry = entries[-1]
        file = entry.get("file")
        if file and file.get("after") != revision:
            # Two processes may record their changes in the other order: the last change is the
            # one whose result is the file as it is now.
            entry = next((e for e in reversed(entries) if (e.get("file") or {}).get("after") == revision), entry)
            file = entry.get("file")
        if file and file.get("after") != revision:
            raise Conflict(
                f"plot {plot!r} changed since the last change made through this server "
                f"(that change left revision {file.get('after')}, the file is now {revision}); "
                "undo will not overwrite the newer change",
                details={"filename": plot, "expected_revision": file.get("after"), "revision": revision},
            )
        sel = entry.get("selection")
        if sel and list(sel.get("after") or []) != selection:
            raise Conflict(
                f"the selection of {plot!r} changed since the last change made through this server; "
                "undo will not overwrite it",
                details={"filename": plot, "expected_selection": sel.get("after"), "selection": selection},
            )
        return entry

    def body(self, plot: str, entry: dict[str, Any]) -> dict[str, Any]:
        try:
            body = read_json(self.store.doc_file(NS, f"history/{plot}/{entry['id']}"))
        except (OSError, ValueError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("features"), list):
            self.forget(plot, str(entry.get("id")), None, None)
            raise validation_failed(
                "history", f"the recorded change {entry.get('summary')!r} of {plot!r} is unreadable; it was dropped"
            )
        return body

    def forget(self, plot: str, entry_id: str, old_revision: str | None, new_revision: str | None) -> int:
        """Remove an undone entry; entries that ended at ``old_revision`` now end at ``new_revision``
        (an undo restores the same value, not always the same bytes). Returns how many remain."""

        def drop(doc: Any) -> tuple[Any, int]:
            entries = [e for e in (doc.get("entries", []) if isinstance(doc, dict) else []) if e.get("id") != entry_id]
            for e in entries:
                file = e.get("file")
                if file and old_revision and new_revision and file.get("after") == old_revision:
                    file["after"] = new_revision
            return {"entries": entries}, len(entries)

        remaining = self.store.update_doc(NS, self._index(plot), {"entries": []}, drop)
        self._drop_body(plot, entry_id)
        return remaining


def restore_data(data: dict[str, Any], body: dict[str, Any]) -> None:
    """Put the recorded earlier value back into a draft's data (in place)."""
    features = rebuild(body["features"], data["features"])
    top = body.get("top")
    if top is None:
        data["features"] = features
        return
    rebuilt = {str(k): (features if k == "features" else v) for k, v in top}
    data.clear()
    data.update(rebuilt)
