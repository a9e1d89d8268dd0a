"""The operations of ``debrief-state-mcp``, knowing nothing about MCP.

All state lives in files, so every process of every client sees the same plots: the features,
time and viewport in the ``.plot.json`` file itself; the open set (``docs/debrief-state/open``),
the selections (:mod:`debrief_calc.plots.plotstate`, shared with the calc server) and the undo history
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

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from debrief_calc.errors import ValidationFailed, feature_not_found, validation_failed
from debrief_calc.formats import metadata
from debrief_calc.formats.plotfile import plot_title
from debrief_calc.plots.plotstate import read_selection
from debrief_calc.state._answer_budget import Answer, fit_prefix
from debrief_calc.state._plot_aspects import PlotAspects

if TYPE_CHECKING:
    from debrief_calc.plots.render._common import CutsDrawn

__all__ = ["Answer", "StateService"]

#: The view's data of the last few (plot, revision, point budget): a view reopened or a second
#: view of the same plot reads a million-point track once per revision, not once per call. The
#: selection lives in the store, outside the revision, so it is read afresh every time.
_VIEWS: OrderedDict[tuple[str, str, int, Any], dict[str, Any]] = OrderedDict()
_VIEWS_KEPT = 4
_VIEWS_LOCK = threading.Lock()  # tools run in worker threads


class StateService(PlotAspects):
    """The plot-state operations on one workspace and its store: the open set and which plot
    (:class:`~debrief_calc.state._open_plots.OpenPlots`), commands and undo
    (:class:`~debrief_calc.state._plot_commands.PlotCommands`), features, selection, time and
    viewport (:class:`~debrief_calc.state._plot_aspects.PlotAspects`), and rendering."""

    def view(
        self,
        filename: str | None,
        since_revision: str | None,
        max_points: int,
        time_start: str | None = None,
        time_end: str | None = None,
        tote_at: str | None = None,
        tote_primary: str | None = None,
    ) -> Answer:
        """What the live view draws (:func:`debrief_calc.state.view.view_data`): the tracks cut to
        the window (``time_start``/``time_end``, as a picture drew it, else the plot's saved
        window), as every picture cuts them; with ``since_revision`` equal to the plot's, only
        ``changed: false`` and the selection (which lives in the store, so it changes without a
        new revision). ``tote_at``: also the readout at that time, the tote from ``tote_primary``
        (else the plot's first track) to each selected track (:mod:`.view._readout`)."""
        from debrief_calc.plots.render._window import cut_tracks
        from debrief_calc.state.view.data import view_data
        from debrief_calc.tracks.times import parse_window

        name, path, doc = self.load(filename)
        selection = read_selection(self.store, name)
        extra = self._readout(doc, selection, tote_at, tote_primary)
        if since_revision is not None and since_revision == doc.revision:
            return {"filename": name, "revision": doc.revision, "changed": False, "selection": selection, **extra}
        window = self.window_of(doc, parse_window(time_start, time_end))
        key = (str(path), doc.revision, max_points, window)
        with _VIEWS_LOCK:
            cached = _VIEWS.get(key)
            if cached is not None:
                _VIEWS.move_to_end(key)
        if cached is not None:
            return {**cached, "selection": selection, "changed": True, **extra}
        viewport = (doc.get_viewport() or {}).get("bounds")
        try:
            if viewport is not None:
                metadata.check_bounds(viewport, "viewport")
        except ValidationFailed:
            viewport = None
        features, _left_out, _empty = cut_tracks(doc.data.get("features") or [], window, strict=False)
        data = view_data(
            features,
            filename=name,
            revision=doc.revision,
            title=plot_title(path, cache=self.cache),
            time_state=self.get_time(name)["timeState"],
            viewport=viewport,
            selection=selection,
            max_points=max_points,
        )
        data["window"] = self.window_stated(doc, window)
        with _VIEWS_LOCK:
            _VIEWS[key] = data
            while len(_VIEWS) > _VIEWS_KEPT:
                _VIEWS.popitem(last=False)
        return {**data, "changed": True, **extra}

    @staticmethod
    def _readout(doc: Any, selection: Sequence[str], tote_at: str | None, primary: str | None) -> dict[str, Any]:
        """The view's readout at ``tote_at`` (``{"tote": …}``), or nothing when none is asked."""
        if tote_at is None:
            return {}
        from debrief_calc.state.view._readout import readout
        from debrief_calc.tracks.times import parse_iso

        try:
            at = parse_iso(tote_at)
        except (ValidationFailed, ValueError):
            raise validation_failed(
                "tote_at", f"{tote_at!r} is not an ISO-8601 time; e.g. '2024-11-14T21:16:53Z'"
            ) from None
        return {"tote": readout(doc.data.get("features") or [], selection, at, primary, str(doc.revision))}

    def render(
        self,
        filename: str | None,
        width: int,
        height: int,
        time: str | None,
        fit: str | Sequence[float] = "viewport",
        show_future: bool = True,
        cpa: Sequence[str] | None = None,
        time_start: str | None = None,
        time_end: str | None = None,
    ) -> tuple[Answer, bytes]:
        """The plot as a PNG of at most ``width`` × ``height``, at ``time`` (default the plot's
        current), showing ``fit``; the saved viewport is read, never changed. The answer adds the
        range drawn for ``cpa``, the zones and points in view left out as not active then, the
        narrative entries due then that no track holds, and a note when the area was padded.
        The tracks are drawn over the window (``time_start``/``time_end``, else the plot's saved
        window, else all of them; ``window`` says which, ``span`` the period drawn); the plot's
        current time outside it is taken to the nearer end (``note`` says so)."""
        from debrief_calc.plots.render import render_plot
        from debrief_calc.tracks.times import SOURCES, iso, parse_iso, parse_window

        name, path, doc = self.load(filename)
        state = doc.get_time_state()
        shown = time or (state or {}).get("current")
        try:
            seconds = parse_iso(shown) if shown else None
        except (ValidationFailed, ValueError):
            raise validation_failed("time", f"{shown!r} is not an ISO-8601 time; e.g. '2024-11-14T21:16:53Z'") from None
        window = self.window_of(doc, parse_window(time_start, time_end))
        moved = None
        if window.source != "data" and seconds is not None and not window.contains(seconds):
            if time:
                another = "" if window.source == "asked" else "; or pass time_start/time_end to draw another window"
                raise validation_failed(
                    "time",
                    f"{time} is outside the window {window.text} ({SOURCES[window.source]}): give a time inside it, "
                    f"or leave time out{another}",
                )
            inside = window.clamp(seconds)
            moved = f"the plot's current time {shown} is outside the window: drawn at {iso(inside)}"
            seconds, shown = inside, iso(inside)
        viewport = (doc.get_viewport() or {}).get("bounds")
        try:
            if viewport is not None:
                metadata.check_bounds(viewport, "viewport")
        except ValidationFailed:
            viewport = None  # a broken viewport in the file: fit the data instead
        pair: tuple[str, str] | None = None
        if cpa is not None:
            if len(cpa) != 2:
                raise validation_failed("cpa", "give the ids of two tracks", value=list(cpa))
            pair = (str(cpa[0]), str(cpa[1]))
            known = {str(f.get("id")) for f in doc.data.get("features") or [] if isinstance(f, dict)}
            if missing := [i for i in pair if i not in known]:
                raise feature_not_found(missing, filename=name)
        selection = read_selection(self.store, name)
        rendered = render_plot(
            doc.data,
            max_width=width,
            max_height=height,
            selection=selection,
            current_time=seconds,
            fit=fit,
            viewport=viewport,
            title=plot_title(path, cache=self.cache),
            show_future=show_future,
            cpa=pair,
            window=window,
        )
        answer = {
            "filename": name,
            "revision": doc.revision,
            "mediaType": "image/png",
            "width": rendered.width,
            "height": rendered.height,
            "bytes": len(rendered.png),
            "time": shown,
            "time_source": (
                "asked"
                if time
                else "the plot's current time (a new plot's is its window's end: every track solid)"
                if shown
                else "none: the plot has no time, every track drawn solid"
            ),
            "fit": rendered.fit,
            "bounds": rendered.bounds,
            "selectedIds": fit_prefix(selection, 2_000)[0],
        }
        if rendered.hidden_inactive:
            answer["hidden_inactive"] = rendered.hidden_inactive[:100]
        if rendered.unplaced:
            answer["unplaced"] = rendered.unplaced[:100]
        answer["window"] = self.window_stated(doc, window)
        if rendered.span is not None:
            answer["span"] = [iso(rendered.span[0]), iso(rendered.span[1])]
        if rendered.outside_window:
            answer["outside_window"] = rendered.outside_window[:100]
        if rendered.framed is not None:
            answer["framed"] = {k: ids[:100] for k, ids in rendered.framed.items()}
        if rendered.cuts:
            answer["cuts"] = [_cuts_shown(c) for c in rendered.cuts[:100]]
        if notes := [n for n in (moved, rendered.empty_window, rendered.note) if n]:
            answer["note"] = "; ".join(notes)
        if (drawn := rendered.range) is not None:
            answer["range"] = {
                "between": list(drawn.ids),
                "time": iso(drawn.t),
                "value": drawn.value,
                "unit": drawn.unit,
                "text": drawn.text,
                "inset": drawn.inset,
                "cpa_bounds": drawn.cpa_bounds,
            }
        return answer, rendered.png


def _cuts_shown(drawn: CutsDrawn) -> dict[str, Any]:
    """A sensor's line in the render's answer (:class:`~debrief_calc.state.answers.CutsShown`)."""
    from debrief_calc.tracks.features import iso

    out: dict[str, Any] = {
        "id": drawn.id,
        "name": drawn.name,
        "host": drawn.host,
        "cuts": drawn.total,
        "active": drawn.active,
        "drawn": drawn.drawn,
        "every": drawn.every,
        "ambiguous_drawn": drawn.ambiguous,
        "without_range": drawn.without_range,
    }
    if drawn.without_range:
        out["no_range_length_nm"] = round(drawn.no_range_m / 1852.0, 2)
    if drawn.times:
        out["times"] = [iso(t) if math.isfinite(t) else "no time" for t in drawn.times]
    return out
