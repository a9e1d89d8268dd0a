"""The operations of ``debrief-state-mcp``, knowing nothing about MCP.

All state lives in files, so every process of every client sees the same plots: the features,
time and viewport in the ``.plot.json`` file itself; the open set (``docs/debrief-state/open``),
the selections (:mod:`debrief_calc.plotstate`, shared with the calc server) and the undo history
(:mod:`.history`) in the artifact store. Every plot change goes through :func:`modify_plot` with
a shallow draft (locked, re-read, all or nothing, atomic), as ``apply_to_plot`` does, keeping the
features it replaced for undo.

Which plot: an explicit ``filename``; else the one open plot; none open → ``PLOT_NOT_FOUND``
listing the plot files; several → ``MULTIPLE_PLOTS`` with ``available_plots``. An open plot
whose file disappeared is dropped from the open set, and the error says so.

Write methods return ``(answer, aspects)``: the aspects (``list``, ``features``, ``selection``,
``time``, ``viewport``) say which resources changed, for the server's notifications.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from debrief_calc.errors import PlotNotFound, ValidationFailed
from debrief_calc.plotstate import STATE_NS, read_selection, resolve_ref, update_selection
from debrief_calc.state import metadata
from debrief_calc.state.commands import CommandOutcome, apply_command
from debrief_calc.state.errors import RPC_CODES, Conflict, MultiplePlots, feature_not_found, validation_failed
from debrief_calc.state.history import FileChange, History, restore_data
from debrief_calc.state.plotfile import PLOT_CACHE, PlotCache, PlotDoc, list_plot_files, modify_plot, plot_title
from debrief_calc.state.plotfile import validate_plot_filename as _validate
from llmem.config import Limits
from llmem.errors import SuiteError
from llmem.store import ArtifactStore

__all__ = ["Answer", "StateService"]

Answer = dict[str, Any]
OPEN_DOC = "open"
MAX_OPEN = 50
SHOWN_FILES = 50
_SEP = (",", ":")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_SEP)


def _fit(items: list[Any], budget: int) -> tuple[list[Any], bool]:
    """The longest prefix of ``items`` whose JSON fits in ``budget`` characters."""
    used = 0
    for i, item in enumerate(items):
        used += len(_dumps(item)) + 1
        if used > budget:
            return items[:i], True
    return items, False


def _find(features: list[Any], fid: str) -> Any:
    return next((f for f in features if isinstance(f, dict) and str(f.get("id")) == fid), None)


class StateService:
    """The plot-state operations on one workspace and its store."""

    def __init__(self, store: ArtifactStore, limits: Limits, cache: PlotCache = PLOT_CACHE):
        self.store = store
        self.workspace = store.workspace
        self.limits = limits
        self.cache = cache
        self.history = History(store)
        self.budget = max(limits.answer_chars - 2_000, 1_000)  # room for the envelope around a list
        self._summaries: OrderedDict[str, tuple[str, list[dict[str, Any]]]] = OrderedDict()
        self._lock = threading.Lock()

    # -- the open set and which plot ------------------------------------------------------

    def open_names(self) -> list[str]:
        doc = self.store.read_doc(STATE_NS, OPEN_DOC, {"open": []})
        names = doc.get("open") if isinstance(doc, dict) else None
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def _drop_open(self, gone: list[str]) -> None:
        def rmw(doc: Any) -> tuple[Any, None]:
            names = doc.get("open", []) if isinstance(doc, dict) else []
            return {"open": [n for n in names if n not in gone]}, None

        self.store.update_doc(STATE_NS, OPEN_DOC, {"open": []}, rmw)

    def _path(self, name: str) -> Path:
        return _validate(self.workspace, name)

    def _exists(self, name: str) -> bool:
        try:
            return self._path(name).is_file()
        except SuiteError:  # a name in the open doc that no longer validates
            return False

    def _alive_open(self) -> tuple[list[str], list[str]]:
        names = self.open_names()
        alive = [n for n in names if self._exists(n)]
        gone = [n for n in names if n not in alive]
        if gone:
            self._drop_open(gone)
        return alive, gone

    def title(self, name: str) -> str:
        try:
            return plot_title(self._path(name), cache=self.cache)
        except SuiteError:
            return name

    def _files(self) -> list[str]:
        return list_plot_files(self.workspace)[:SHOWN_FILES]

    def resolve(self, filename: str | None) -> tuple[str, Path]:
        """The plot a call is about, by the rules of the module docstring."""
        if filename is not None:
            return filename, self._path(filename)
        alive, gone = self._alive_open()
        if len(alive) == 1:
            return alive[0], self._path(alive[0])
        if alive:
            plots = [{"filename": n, "title": self.title(n)} for n in alive]
            raise MultiplePlots(
                f"{len(alive)} plots are open ({', '.join(alive)}); pass filename to say which one",
                details={"available_plots": plots},
            )
        if gone:
            why = f"the open plot file{'s' if len(gone) > 1 else ''} {', '.join(map(repr, gone))} disappeared from the workspace and {'were' if len(gone) > 1 else 'was'} closed"
        else:
            why = "no plot is open"
        raise PlotNotFound(
            f"{why}; pass filename, or open a plot with debrief_open_plot(filename) (plot_files lists them)",
            details={"rpc_code": RPC_CODES["PLOT_NOT_FOUND"], "plot_files": self._files(), "closed": gone},
        )

    def _missing(self, name: str) -> PlotNotFound:
        was_open = name in self.open_names()
        if was_open:
            self._drop_open([name])
        return PlotNotFound(
            f"plot file {name!r} does not exist in the workspace"
            + (" (it was open and has been closed)" if was_open else "")
            + "; plot_files lists the plots there are",
            details={
                "rpc_code": RPC_CODES["PLOT_NOT_FOUND"],
                "filename": name,
                "plot_files": self._files(),
                "closed": [name] if was_open else [],
            },
        )

    def load(self, filename: str | None) -> tuple[str, Path, PlotDoc]:
        name, path = self.resolve(filename)
        try:
            return name, path, self.cache.get(path, name=name)
        except PlotNotFound:
            raise self._missing(name) from None

    # -- plots ----------------------------------------------------------------------------

    def list_plots(self) -> Answer:
        alive, gone = self._alive_open()
        others = [f for f in list_plot_files(self.workspace) if f not in set(alive)]
        shown, cut = _fit(others, self.budget // 2)
        return {
            "open_plots": [{"filename": n, "title": self.title(n)} for n in alive],
            "other_plots": shown,
            "more_plots": len(others) - len(shown) if cut else 0,
            "closed_missing": gone,
        }

    def open_plot(self, filename: str) -> tuple[Answer, list[str]]:
        path = self._path(filename)
        try:
            doc = self.cache.get(path, name=filename)
        except PlotNotFound:
            raise self._missing(filename) from None

        def rmw(doc_: Any) -> tuple[Any, list[str]]:
            names = [n for n in (doc_.get("open", []) if isinstance(doc_, dict) else []) if isinstance(n, str)]
            if filename not in names:
                if len(names) >= MAX_OPEN:
                    raise validation_failed("filename", f"at most {MAX_OPEN} plots can be open; close one first")
                names.append(filename)
            return {"open": names}, names

        names = self.store.update_doc(STATE_NS, OPEN_DOC, {"open": []}, rmw)
        answer = {"filename": filename, "revision": doc.revision, "title": self.title(filename), "open_plots": names}
        return answer, ["list"]

    def close_plot(self, filename: str) -> tuple[Answer, list[str]]:
        self._path(filename)  # the same name rules as everywhere, even for a plot that is gone

        def rmw(doc: Any) -> tuple[Any, tuple[bool, list[str]]]:
            names = [n for n in (doc.get("open", []) if isinstance(doc, dict) else []) if isinstance(n, str)]
            return {"open": [n for n in names if n != filename]}, (filename in names, names)

        was_open, names = self.store.update_doc(STATE_NS, OPEN_DOC, {"open": []}, rmw)
        rest = [n for n in names if n != filename]
        return {"filename": filename, "was_open": was_open, "open_plots": rest}, ["list"] if was_open else []

    # -- features -------------------------------------------------------------------------

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
        query = hashlib.sha256(_dumps([ids, kinds, detail]).encode()).hexdigest()[:8]
        start = _read_cursor(cursor, doc.revision, query) if cursor else 0
        limit = limit or (100 if detail == "summary" else 20)
        page: list[dict[str, Any]] = []
        omitted: list[dict[str, Any]] = []
        used, i = 0, start
        while i < len(positions) and len(page) < limit:
            p = positions[i]
            item = summaries[p] if summaries is not None and detail == "summary" else doc.features[p]
            size = len(_dumps(item)) + 1
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

    # -- selection ------------------------------------------------------------------------

    def get_selection(self, filename: str | None) -> Answer:
        name, _path, doc = self.load(filename)
        index = doc.index_by_id()
        ids = read_selection(self.store, name)
        present = [i for i in ids if i in index]
        shown, cut = _fit(present, self.budget)
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
        shown, cut = _fit(after, self.budget)
        answer = {
            "filename": name,
            "revision": doc.revision,
            "selectedIds": shown,
            "count": len(after),
            "truncated": cut,
        }
        return answer, ["selection"] if changed else []

    # -- time and viewport ----------------------------------------------------------------

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

    # -- commands -------------------------------------------------------------------------

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
        display, images = _split_display(out.display, self.budget // 3)
        ids = self.budget // 10
        message = "; ".join(out.summary)
        answer = {
            "filename": name,
            "revision": doc.revision,
            "changed": bool(set(aspects) - {"list"}),
            "message": message if len(message) <= 1_000 else message[:999] + "…",
            "added_ids": _fit(out.added_ids, ids)[0],
            "updated_ids": _fit(out.updated_ids, ids)[0],
            "deleted_ids": _fit(out.deleted_ids, ids)[0],
            "selectedIds": _fit(out.selection, self.budget // 6)[0] if out.selection is not None else None,
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
            "selectedIds": _fit(selected, self.budget // 2)[0] if selected is not None else None,
        }
        return answer, aspects

    # -- render ---------------------------------------------------------------------------

    def render(self, filename: str | None, width: int, height: int, time: str | None) -> tuple[Answer, bytes]:
        from debrief_calc.features import parse_iso
        from debrief_calc.state.render import render_plot_png

        name, path, doc = self.load(filename)
        state = doc.get_time_state()
        shown = time or (state or {}).get("current")
        try:
            seconds = parse_iso(shown) if shown else None
        except (ValidationFailed, ValueError):
            raise validation_failed("time", f"{shown!r} is not an ISO-8601 time; e.g. '2024-11-14T21:16:53Z'") from None
        viewport = (doc.get_viewport() or {}).get("bounds")
        try:
            if viewport is not None:
                metadata.check_bounds(viewport, "viewport")
        except ValidationFailed:
            viewport = None  # a broken viewport in the file: fit the data instead
        selection = read_selection(self.store, name)
        png = render_plot_png(
            doc.data,
            width=width,
            height=height,
            selection=selection,
            current_time=seconds,
            viewport=viewport,
            title=plot_title(path, cache=self.cache),
        )
        answer = {
            "filename": name,
            "revision": doc.revision,
            "mediaType": "image/png",
            "width": max(width, 64),
            "height": max(height, 64),
            "bytes": len(png),
            "time": shown,
            "selectedIds": _fit(selection, 2_000)[0],
        }
        return answer, png


def _meta_changes(before: list[Any], after: list[Any]) -> list[str]:
    """Which of the state features a change replaced (features are replaced, never altered)."""
    out = []
    for fid, aspect in ((metadata.TIME_ID, "time"), (metadata.VIEWPORT_ID, "viewport")):
        if _find(before, fid) is not _find(after, fid):
            out.append(aspect)
    return out


def _make_cursor(offset: int, revision: str, query: str) -> str:
    raw = _dumps({"o": offset, "r": revision, "q": query}).encode()
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


def _split_display(display: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Display items for the answer, within ``budget``; images go out as image content."""
    out: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    used = 0
    for given in display:
        item = given
        if item.get("type") == "image":
            images.append({"mediaType": item["mediaType"], "data": item["data"]})
            item = {k: v for k, v in item.items() if k != "data"} | {"image": len(images) - 1}
        text = _dumps(item)
        if used + len(text) > budget:
            item = {"type": item.get("type"), "truncated": True, "chars": len(text), "preview": text[:300]}
            text = _dumps(item)
        out.append(item)
        used += len(text)
    return out, images
