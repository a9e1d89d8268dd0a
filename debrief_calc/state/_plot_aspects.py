"""Reading and setting a plot's features (paged), selection, time and viewport."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from debrief_calc.errors import Conflict, ValidationFailed, feature_not_found, validation_failed
from debrief_calc.formats import metadata
from debrief_calc.formats.plotfile import PlotDoc
from debrief_calc.plots.plotstate import plot_feature_ref, read_selection, update_selection
from debrief_calc.state._answer_budget import Answer, compact_json, fit_prefix
from debrief_calc.state._plot_commands import PlotCommands
from debrief_calc.tracks.times import Window, cut_features, data_window, parse_window, saved_window

__all__ = ["PlotAspects"]


class PlotAspects(PlotCommands):
    """The features, selection, time and viewport of a plot; the writes go through :meth:`write`."""

    def summaries(self, doc: PlotDoc) -> list[dict[str, Any]]:
        """Feature summaries of a plot, computed once per revision."""
        from debrief_calc.tracks.features import feature_summary

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

    def window_of(self, doc: PlotDoc, asked: Window | None) -> Window:
        """The window of a picture or a measure of the plot: the one asked for, else the plot's
        saved window, else the whole data (its period)."""
        return asked or saved_window(doc.get_time_state()) or data_window(metadata.data_features(doc.features))

    def window_stated(self, doc: PlotDoc, window: Window, **extra: Any) -> dict[str, Any]:
        """``window`` as the answer states it, with the whole data's period when it leaves some out."""
        whole = data_window(metadata.data_features(doc.features))
        if window.source != "data" and any(window.cut_ends(whole)):
            extra["data"] = whole.shown
        return window.answer(**extra)

    def get_features(
        self,
        filename: str | None,
        ids: list[str] | None,
        kinds: list[str] | None,
        detail: str,
        limit: int | None,
        cursor: str | None,
        time_start: str | None = None,
        time_end: str | None = None,
    ) -> Answer:
        """A page of a plot's features (summaries or whole GeoJSON), optionally within a time
        window (tracks cut to the points inside it, other timed features kept while active).
        Nothing is ever left out: a feature larger than an answer comes in parts of its points
        (:mod:`debrief_calc.tracks.paging`), and the cursor can stop in the middle of one."""
        from debrief_calc.tracks.features import KINDS
        from debrief_calc.tracks.paging import page_features

        name, _path, doc = self.load(filename)
        positions = list(range(len(doc.features)))
        if ids:
            index = doc.index_by_id()
            wanted = list(dict.fromkeys(str(i) for i in ids))
            missing = [i for i in wanted if i not in index]
            if missing:
                raise feature_not_found(missing, filename=name)
            positions = [index[i] for i in wanted]
        if kinds:
            unknown = sorted(set(kinds) - set(KINDS))
            if unknown:
                raise validation_failed("kinds", f"unknown kind(s) {unknown}; valid kinds are {', '.join(KINDS)}")
            summaries = self.summaries(doc)
            positions = [p for p in positions if summaries[p]["kind"] in kinds]
        window = parse_window(time_start, time_end)
        items = [
            {**item, "ref": plot_feature_ref(name, item["id"])} if item.get("id") is not None else item
            for item in self._items(doc, positions, detail, window)
        ]
        query = hashlib.sha256(compact_json([ids, kinds, detail, time_start, time_end]).encode()).hexdigest()[:8]
        start = _read_cursor(cursor, doc.revision, query) if cursor else (0, 0)
        limit = limit or (100 if detail == "summary" else 20)
        page, after = page_features(items, start, budget=self.budget, limit=limit)
        answer: Answer = {
            "filename": name,
            "revision": doc.revision,
            "detail": detail,
            "total": len(items),
            "count": len(page),
            "features": page,
            "next_cursor": _make_cursor(after, doc.revision, query) if after is not None else None,
        }
        if any("part" in f for f in page):
            answer["note"] = PARTS_NOTE
        answer["window"] = self._features_window(doc, window)
        return answer

    def _features_window(self, doc: PlotDoc, window: Window | None) -> dict[str, Any]:
        """What a read of features states of its window: the one asked for, or the whole data,
        saying so when the plot's saved window (what its pictures and analyses use) is narrower."""
        if window is not None:
            return self.window_stated(doc, window)
        whole = data_window(metadata.data_features(doc.features))
        stated = whole.answer()
        saved = saved_window(doc.get_time_state())
        if saved is not None and any(saved.cut_ends(whole)):
            stated["note"] = (
                f"the features whole; the plot's saved window is {saved.text}, which its pictures and analyses "
                "use: pass time_start/time_end to read only that"
            )
        return stated

    def _items(self, doc: PlotDoc, positions: list[int], detail: str, window: Window | None) -> list[dict[str, Any]]:
        """The features (or summaries) at ``positions``, cut to ``window`` (tracks with a fix
        interpolated at each edge, as every tool cuts them); computed once per plot revision and
        window, so that paging through them costs a slice per page."""
        from debrief_calc.tracks.features import feature_summary

        if window is None:
            if detail == "summary":
                summaries = self.summaries(doc)
                return [summaries[p] for p in positions]
            return [doc.features[p] for p in positions]
        key = (str(doc.path), doc.revision, window)
        with self._lock:
            clipped = self._windows.get(key)
        if clipped is None:
            clipped = [
                (p, c)
                for p in range(len(doc.features))
                for c in cut_features([doc.features[p]], window, where="", require=False)[0]
            ]
            with self._lock:
                self._windows[key] = clipped
                while len(self._windows) > 4:
                    self._windows.popitem(last=False)
        by_position = dict(clipped)
        kept = [by_position[p] for p in positions if p in by_position]
        return [feature_summary(c) for c in kept] if detail == "summary" else kept

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
        """The saved time window, or else the period of the plot's timed features (``derived``)."""
        name, _path, doc = self.load(filename)
        state = doc.get_time_state()
        answer = {"filename": name, "revision": doc.revision, "timeState": state, "derived": False, "message": None}
        if state is None:
            state = metadata.derived_time_state(doc.data)
            answer.update(timeState=state, derived=state is not None)
            answer["message"] = (
                "This plot has no saved time window; this is the period of its timed features. "
                "debrief_set_time saves one (current alone is enough)."
                if state
                else "This plot has no saved time window and no timed features; debrief_set_time saves one."
            )
        return answer

    def set_time(self, state: dict[str, Any], filename: str | None, expected: str | None) -> tuple[Answer, list[str]]:
        """Save ``{current, start, end}``; a missing ``start``/``end`` is the saved window's (or the
        features' period), a missing ``current`` the saved one kept inside the window (or ``start``)."""
        given = {k: v for k, v in state.items() if v is not None}
        if not given:
            raise validation_failed("timeState", "give current, and start and end to change the window (ISO-8601)")
        name, path = self.resolve(filename)
        chosen: dict[str, dict[str, str]] = {}

        def command(data: dict[str, Any]) -> dict[str, Any]:
            saved = metadata.get_time_state(data) or metadata.derived_time_state(data) or {}
            full = {**{k: v for k, v in saved.items() if k in ("start", "end")}, **given}
            if "current" not in full and "current" in saved:
                full["current"] = _clamp(saved["current"], full.get("start"), full.get("end"))
            full.setdefault("current", full.get("start", ""))
            for key in ("start", "end"):
                if key not in full:
                    raise validation_failed(
                        f"timeState.{key}",
                        "is required: this plot has no saved time window and no timed features to take it from",
                    )
            chosen["state"] = metadata.check_time_state(full, "timeState")
            return {"command": "setTimeState", "payload": chosen["state"]}

        doc, _out, aspects = self.write(name, path, command, expected)
        return {"filename": name, "revision": doc.revision, "timeState": chosen["state"]}, aspects

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

    def zoom_to_selection(
        self, filename: str | None, padding: float, expected: str | None, ids: list[str] | None = None
    ) -> tuple[Answer, list[str]]:
        """The saved viewport becomes the padded bounds of ``ids`` (the selection when not given;
        the selection itself is left as it is)."""
        from debrief_calc.tracks.features import feature_bounds

        name, path, doc = self.load(filename)
        index = doc.index_by_id()
        if ids:
            shown = list(dict.fromkeys(str(i) for i in ids))
            if missing := [i for i in shown if i not in index]:
                raise feature_not_found(missing, filename=name)
            field = "ids"
        else:
            shown = [i for i in read_selection(self.store, name) if i in index]
            field = "selection"
            if not shown:
                raise validation_failed(
                    "selection",
                    f"nothing is selected in {name!r}; pass ids, or select features first with debrief_set_selection",
                )
        boxes = [b for i in shown if (b := feature_bounds(doc.features[index[i]])) is not None]
        if not boxes:
            raise validation_failed(field, "these features have no positions to zoom to")
        box = [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
        bounds = metadata.padded(box, padding)
        doc, _out, aspects = self.write(name, path, {"command": "setViewport", "payload": bounds}, expected)
        answer = {"filename": name, "revision": doc.revision, "viewportState": {"bounds": bounds}}
        return answer | ({"ids": shown} if ids else {"selectedIds": shown}), aspects


#: How a model puts a feature sent in parts back together.
PARTS_NOTE = (
    "Features too large for one answer come in parts, in order, with the same id: part.points [a, b) of N "
    "says which of the feature's points a part holds; join the parts' coordinates (and the per-point arrays "
    "part.arrays names) in order to get the whole feature."
)


def _make_cursor(at: tuple[int, int], revision: str, query: str) -> str:
    raw = compact_json({"o": at[0], "p": at[1], "r": revision, "q": query}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str, revision: str, query: str) -> tuple[int, int]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, point, rev, q = int(raw["o"]), int(raw.get("p", 0)), str(raw["r"]), str(raw["q"])
    except (ValueError, TypeError, KeyError, AttributeError, binascii.Error):
        raise validation_failed("cursor", "is not a cursor this server issued; call again without it") from None
    if q != query:
        raise validation_failed("cursor", "belongs to another query (ids, kinds or detail differ); pass the same ones")
    if rev != revision:
        raise Conflict(
            f"the plot changed since this cursor was issued (revision {rev}, now {revision}); start again without cursor",
            details={"expected_revision": rev, "revision": revision},
        )
    return max(offset, 0), max(point, 0)


def _clamp(current: str, start: str | None, end: str | None) -> str:
    """``current`` moved inside ``[start, end]`` (times that cannot be read are left to the check)."""
    from debrief_calc.tracks.times import iso, parse_iso

    try:
        t, window = parse_iso(current), parse_window(start, end)
    except (ValueError, ValidationFailed):
        return current
    return current if window is None or window.contains(t) else iso(window.clamp(t))
