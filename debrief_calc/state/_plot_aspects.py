"""Reading and setting a plot's features (paged), selection, time and viewport."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from debrief_calc.plotstate import read_selection, update_selection
from debrief_calc.state import metadata
from debrief_calc.state._answer_budget import Answer, compact_json, fit_prefix
from debrief_calc.state._plot_commands import PlotCommands
from debrief_calc.state.errors import Conflict, feature_not_found, validation_failed
from debrief_calc.state.plotfile import PlotDoc

__all__ = ["PlotAspects"]


class PlotAspects(PlotCommands):
    """The features, selection, time and viewport of a plot; the writes go through :meth:`write`."""

    def summaries(self, doc: PlotDoc) -> list[dict[str, Any]]:
        """Feature summaries of a plot, computed once per revision."""
        from debrief_calc.features import feature_summary

        key = str(doc.path)
        with self._lock:
            hit = self._summaries.get(key)
            if hit is not None and hit[0] == doc.revision:
                self._summaries.move_to_end(key)
                return hit[1]
        out = [feature_summary(f) for f in doc.features]
        with self._lock:
            self._summaries[key] = (doc.revision, out)
            while len(self._summaries) > 8:
                self._summaries.popitem(last=False)
        return out

    def get_features(
        self,
        filename: str | None,
        ids: list[str] | None,
        kinds: list[str] | None,
        detail: str,
        limit: int | None,
        cursor: str | None,
    ) -> Answer:
        from debrief_calc.features import KINDS

        name, _path, doc = self.load(filename)
        positions = list(range(len(doc.features)))
        if ids:
            index = doc.index_by_id()
            wanted = list(dict.fromkeys(str(i) for i in ids))
            missing = [i for i in wanted if i not in index]
            if missing:
                raise feature_not_found(missing, filename=name)
            positions = [index[i] for i in wanted]
        summaries = self.summaries(doc) if detail == "summary" or kinds else None
        if kinds:
            unknown = sorted(set(kinds) - set(KINDS))
            if unknown:
                raise validation_failed("kinds", f"unknown kind(s) {unknown}; valid kinds are {', '.join(KINDS)}")
            assert summaries is not None
            positions = [p for p in positions if summaries[p]["kind"] in kinds]
        query = hashlib.sha256(compact_json([ids, kinds, detail]).encode()).hexdigest()[:8]
        start = _read_cursor(cursor, doc.revision, query) if cursor else 0
        limit = limit or (100 if detail == "summary" else 20)
        page: list[dict[str, Any]] = []
        omitted: list[dict[str, Any]] = []
        used, i = 0, start
        while i < len(positions) and len(page) < limit:
            p = positions[i]
            item = summaries[p] if summaries is not None and detail == "summary" else doc.features[p]
            size = len(compact_json(item)) + 1
            if size > self.budget:  # one feature larger than a whole answer: say so, never cut it
                omitted.append({"id": doc.features[p].get("id"), "chars": size, "reason": "larger than the answer cap"})
                i += 1
                continue
            if used + size > self.budget:
                break
            page.append(item)
            used += size
            i += 1
        return {
            "filename": name,
            "revision": doc.revision,
            "detail": detail,
            "total": len(positions),
            "count": len(page),
            "features": page,
            "next_cursor": _make_cursor(i, doc.revision, query) if i < len(positions) else None,
            "omitted": omitted,
        }

    def get_selection(self, filename: str | None) -> Answer:
        name, _path, doc = self.load(filename)
        index = doc.index_by_id()
        ids = read_selection(self.store, name)
        present = [i for i in ids if i in index]
        shown, cut = fit_prefix(present, self.budget)
        return {
            "filename": name,
            "revision": doc.revision,
            "selectedIds": shown,
            "count": len(present),
            "truncated": cut,
            "missing_ids": [i for i in ids if i not in index][:100],
        }

    def set_selection(self, ids: list[str], filename: str | None) -> tuple[Answer, list[str]]:
        name, _path, doc = self.load(filename)
        clean = list(dict.fromkeys(str(i) for i in ids))
        index = doc.index_by_id()
        missing = [i for i in clean if i not in index]
        if missing:
            raise feature_not_found(missing, filename=name)
        before = read_selection(self.store, name)
        after = update_selection(self.store, name, clean)
        changed = before != after
        if changed:
            self.history.record(name, summary=f"selected {len(after)} feature(s)", selection=(before, after))
        shown, cut = fit_prefix(after, self.budget)
        answer = {
            "filename": name,
            "revision": doc.revision,
            "selectedIds": shown,
            "count": len(after),
            "truncated": cut,
        }
        return answer, ["selection"] if changed else []

    def get_time(self, filename: str | None) -> Answer:
        name, _path, doc = self.load(filename)
        state = doc.get_time_state()
        note = None if state else "This plot has no time state yet; set one with debrief_set_time."
        return {"filename": name, "revision": doc.revision, "timeState": state, "message": note}

    def set_time(self, state: dict[str, Any], filename: str | None, expected: str | None) -> tuple[Answer, list[str]]:
        clean = metadata.check_time_state(state, "timeState")
        name, path = self.resolve(filename)
        doc, _out, aspects = self.write(name, path, {"command": "setTimeState", "payload": clean}, expected)
        return {"filename": name, "revision": doc.revision, "timeState": clean}, aspects

    def get_viewport(self, filename: str | None) -> Answer:
        name, _path, doc = self.load(filename)
        state = doc.get_viewport()
        note = None if state else "This plot has no viewport yet; set one with debrief_set_viewport."
        return {"filename": name, "revision": doc.revision, "viewportState": state, "message": note}

    def set_viewport(
        self, state: dict[str, Any], filename: str | None, expected: str | None
    ) -> tuple[Answer, list[str]]:
        bounds = metadata.check_bounds(state, "viewportState")
        name, path = self.resolve(filename)
        doc, _out, aspects = self.write(name, path, {"command": "setViewport", "payload": bounds}, expected)
        return {"filename": name, "revision": doc.revision, "viewportState": {"bounds": bounds}}, aspects

    def zoom_to_selection(self, filename: str | None, padding: float, expected: str | None) -> tuple[Answer, list[str]]:
        from debrief_calc.features import feature_bounds

        name, path, doc = self.load(filename)
        selected = [i for i in read_selection(self.store, name) if i in doc.index_by_id()]
        if not selected:
            raise validation_failed(
                "selection", f"nothing is selected in {name!r}; select features first with debrief_set_selection"
            )
        boxes = [b for i in selected if (b := feature_bounds(doc.features[doc.index_by_id()[i]])) is not None]
        if not boxes:
            raise validation_failed("selection", "the selected features have no positions to zoom to")
        w, s = min(b[0] for b in boxes), min(b[1] for b in boxes)
        e, n = max(b[2] for b in boxes), max(b[3] for b in boxes)
        dx, dy = max(e - w, 0.01) * padding, max(n - s, 0.01) * padding
        bounds = [max(w - dx, -180.0), max(s - dy, -90.0), min(e + dx, 180.0), min(n + dy, 90.0)]
        doc, _out, aspects = self.write(name, path, {"command": "setViewport", "payload": bounds}, expected)
        answer = {
            "filename": name,
            "revision": doc.revision,
            "viewportState": {"bounds": bounds},
            "selectedIds": selected,
        }
        return answer, aspects


def _make_cursor(offset: int, revision: str, query: str) -> str:
    raw = compact_json({"o": offset, "r": revision, "q": query}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str, revision: str, query: str) -> int:
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, rev, q = int(raw["o"]), str(raw["r"]), str(raw["q"])
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise validation_failed("cursor", "is not a cursor this server issued; call again without it") from None
    if q != query:
        raise validation_failed("cursor", "belongs to another query (ids, kinds or detail differ); pass the same ones")
    if rev != revision:
        raise Conflict(
            f"the plot changed since this cursor was issued (revision {rev}, now {revision}); start again without cursor",
            details={"expected_revision": rev, "revision": revision},
        )
    return max(offset, 0)
