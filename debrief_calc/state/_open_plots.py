"""The open set of plots and which plot a call is about; the base of the state service."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from debrief_calc.errors import RPC_CODES, MultiplePlots, PlotNotFound, validation_failed
from debrief_calc.formats.filenames import list_workspace_files
from debrief_calc.formats.plotfile import PLOT_CACHE, PlotCache, PlotDoc, doc_title, list_plot_files, plot_title
from debrief_calc.formats.plotfile import validate_plot_filename as _validate
from debrief_calc.plots.history import History
from debrief_calc.plots.plotstate import STATE_NS
from debrief_calc.state._answer_budget import Answer, fit_prefix
from llmem.core.config import Limits
from llmem.core.errors import SuiteError
from llmem.core.store import ArtifactStore

__all__ = ["MAX_OPEN", "OPEN_DOC", "SHOWN_FILES", "OpenPlots", "open_note"]

OPEN_DOC = "open"
#: What PLOT_NOT_FOUND says when the workspace has no plot at all: how to make one.
CREATE_HINT = (
    "create one with debrief_create_plot(filename, title?, features?); from REP files, first run "
    "debrief-calc's run_tool(tool='import-rep', parameters={path}) and pass the {ref} it answers as features"
)
MAX_OPEN = 50
SHOWN_FILES = 50


def open_note(names: list[str]) -> str | None:
    """What an answer that opened a plot says when more than one is open now: every call must
    then name its plot (without filename it answers MULTIPLE_PLOTS)."""
    if len(names) < 2:
        return None
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return (
        f"{len(names)} plots are open now ({shown}): pass filename to every call, which without it answers "
        "MULTIPLE_PLOTS; debrief_close_plot closes one"
    )


#: what import-rep reads (debrief-calc), listed so a client can find its REP files
REP_SUFFIXES = (".rep", ".dsf", ".dtf")
#: legacy Debrief plots, what import-dpf reads
DPF_SUFFIXES = (".dpf",)


class OpenPlots:
    """The open set and the which-plot rules (see :mod:`debrief_calc.state.service`) on one
    workspace and its store, with the state every part of the service shares."""

    def __init__(self, store: ArtifactStore, limits: Limits, cache: PlotCache = PLOT_CACHE):
        self.store = store
        self.workspace = store.workspace
        self.limits = limits
        self.cache = cache
        self.scratch = store.scratch_dir("plots")  # the plots' lock and temporary files
        self.history = History(store)
        self.budget = max(limits.answer_chars - 2_000, 1_000)  # room for the envelope around a list
        self._summaries: OrderedDict[str, tuple[str, list[dict[str, Any]]]] = OrderedDict()
        #: (plot, revision, time window) → [(position, the feature cut to the window)]
        self._windows: OrderedDict[tuple[str, str, Any], list[tuple[int, dict[str, Any]]]] = OrderedDict()
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
        files = self._files()
        if not files:
            raise PlotNotFound(
                f"{why}, and the workspace has no .plot.json files yet; {CREATE_HINT}",
                details={"rpc_code": RPC_CODES["PLOT_NOT_FOUND"], "plot_files": [], "closed": gone},
                next_action=CREATE_HINT,
            )
        raise PlotNotFound(
            f"{why}; pass filename, or open a plot with debrief_open_plot(filename) (plot_files lists them)",
            details={"rpc_code": RPC_CODES["PLOT_NOT_FOUND"], "plot_files": files, "closed": gone},
        )

    def _missing(self, name: str) -> PlotNotFound:
        was_open = name in self.open_names()
        if was_open:
            self._drop_open([name])
        files = self._files()
        return PlotNotFound(
            f"plot file {name!r} does not exist in the workspace"
            + (" (it was open and has been closed)" if was_open else "")
            + ("; plot_files lists the plots there are" if files else f"; there are no plot files yet: {CREATE_HINT}"),
            next_action=None if files else CREATE_HINT,
            details={
                "rpc_code": RPC_CODES["PLOT_NOT_FOUND"],
                "filename": name,
                "plot_files": files,
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
        shown, cut = fit_prefix(others, self.budget // 2)
        reps = list_workspace_files(self.workspace, REP_SUFFIXES)
        reps_shown, reps_cut = fit_prefix(reps, self.budget // 4)
        dpfs = list_workspace_files(self.workspace, DPF_SUFFIXES)
        dpfs_shown, dpfs_cut = fit_prefix(dpfs, self.budget // 8)
        return {
            "open_plots": [{"filename": n, "title": self.title(n)} for n in alive],
            "other_plots": shown,
            "more_plots": len(others) - len(shown) if cut else 0,
            "closed_missing": gone,
            "rep_files": reps_shown,
            "more_rep_files": len(reps) - len(reps_shown) if reps_cut else 0,
            "dpf_files": dpfs_shown,
            "more_dpf_files": len(dpfs) - len(dpfs_shown) if dpfs_cut else 0,
        }

    def open_plot(self, filename: str, doc: PlotDoc | None = None) -> tuple[Answer, list[str]]:
        """Mark a plot open; ``doc``: the plot just written (not read again, so that a new small plot
        does not push a big one being read out of the cache)."""
        path = self._path(filename)
        given = doc is not None
        if doc is None:
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
        title = doc_title(doc) if given else self.title(filename)
        answer = {"filename": filename, "revision": doc.revision, "title": title, "open_plots": names}
        if note := open_note(names):
            answer["open_note"] = note
        return answer, ["list"]

    def close_plot(self, filename: str) -> tuple[Answer, list[str]]:
        self._path(filename)  # the same name rules as everywhere, even for a plot that is gone

        def rmw(doc: Any) -> tuple[Any, tuple[bool, list[str]]]:
            names = [n for n in (doc.get("open", []) if isinstance(doc, dict) else []) if isinstance(n, str)]
            return {"open": [n for n in names if n != filename]}, (filename in names, names)

        was_open, names = self.store.update_doc(STATE_NS, OPEN_DOC, {"open": []}, rmw)
        rest = [n for n in names if n != filename]
        return {"filename": filename, "was_open": was_open, "open_plots": rest}, ["list"] if was_open else []
