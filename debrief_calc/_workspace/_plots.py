"""The plot files of a Workspace: list, create, open, close, read features, apply commands, undo
(tools of ``debrief-state-mcp``, one method each)."""

from __future__ import annotations

import base64
from typing import Annotated, Literal

from pydantic import Field

from debrief_calc._workspace._arguments import CommandArg, FeaturesArg, Filename, Ids, Revision, Time
from debrief_calc._workspace._base import WorkspaceBase, tool_method
from debrief_calc.state.answers import (
    ApplyAnswer,
    CloseAnswer,
    CreateAnswer,
    FeaturesAnswer,
    OpenAnswer,
    PlotList,
    UndoAnswer,
)
from llmem.core.images import Image

__all__ = ["Plots"]


class Plots(WorkspaceBase):
    """The plot files and their features; every write goes through the plot's lock and answers
    the plot's new ``revision`` (pass it as ``expected_revision`` to refuse a stale write)."""

    @tool_method
    def list_plots(self) -> PlotList:
        """The plots of the workspace (tool ``debrief_list_plots``).

        Returns:
            :class:`PlotList`: ``open_plots`` (filename, title), ``other_plots`` (the other
            ``.plot.json`` files) and ``rep_files`` (what ``import-rep`` reads).

        Raises:
            Nothing of its own: a plot that disappeared is dropped from the open set and named in
            ``closed_missing``.

        Example:
            >>> ws.list_plots().rep_files  # doctest: +SKIP
            ['boat1.rep', 'boat2.rep', 'narrative.rep']
        """
        return PlotList(**self._state.list_plots())

    @tool_method
    def create_plot(
        self,
        filename: Annotated[str, Field(description="New .plot.json path in the workspace, e.g. 'exercise.plot.json'")],
        *,
        title: Annotated[str | None, Field(max_length=200)] = None,
        features: FeaturesArg = None,
        time_start: Time = None,
        time_end: Time = None,
    ) -> CreateAnswer:
        """Create a plot file from features or references, and open it (tool ``debrief_create_plot``);
        its time window and viewport are fitted to its features, and its current time is the window's
        end, so that a picture of it drawn at once shows every track solid (not faint, as the future).

        Args:
            filename: the new file, relative to the workspace, ending ``.plot.json``.
            title: the plot's title (default: the file's name).
            features: GeoJSON Features and/or references (``{"ref": <an import's stored ref>}``,
                ``{"ref": "debrief-state:plots/<file>#<id>"}``), or one reference; a reference may
                carry its own ``time_start``/``time_end``.
            time_start: ISO-8601: everything copied is cut to the window (tracks with a fix
                interpolated at each edge, as every tool cuts them), which is saved as the new
                plot's window.
            time_end: ISO-8601.

        Returns:
            :class:`CreateAnswer`: ``revision``, ``added_ids``, ``added_refs``, ``timeState``,
            ``viewportState``, ``open_plots``; ``window`` (and ``left_out``) with a window.

        Raises:
            PlotExists: the file exists (nothing is changed). InvalidFilename: not a
            ``.plot.json`` inside the workspace. InvalidCommand, ValidationFailed: bad features.

        Example:
            >>> ws.create_plot("exercise.plot.json", features=[{"ref": boat1}, {"ref": boat2}]).added_ids  # doctest: +SKIP
            ['rep-nelson', 'rep-collingwood']
        """
        data, aspects = self._state.create_plot(filename, title, features, time_start, time_end)
        self._changed(filename, aspects)
        return CreateAnswer(**data)

    @tool_method
    def open_plot(self, filename: str) -> OpenAnswer:
        """Mark a plot open for every client and process (tool ``debrief_open_plot``): calls
        without ``filename`` then use it, while it is the only one open.

        Args:
            filename: the plot file, relative to the workspace.

        Returns:
            :class:`OpenAnswer`: ``revision``, ``title``, ``open_plots`` (and ``open_note`` when
            more than one is open).

        Raises:
            PlotNotFound: no such file. InvalidFilename: not a ``.plot.json`` in the workspace.

        Example:
            >>> ws.open_plot("exercise.plot.json").open_plots  # doctest: +SKIP
            ['exercise.plot.json']
        """
        data, aspects = self._state.open_plot(filename)
        self._changed(filename, aspects)
        return OpenAnswer(**data)

    @tool_method
    def close_plot(self, filename: str) -> CloseAnswer:
        """Mark a plot closed (tool ``debrief_close_plot``); the file is untouched.

        Args:
            filename: the plot file, relative to the workspace.

        Returns:
            :class:`CloseAnswer`: ``was_open`` and the ``open_plots`` left.

        Raises:
            InvalidFilename: not a ``.plot.json`` name inside the workspace.

        Example:
            >>> ws.close_plot("exercise.plot.json").was_open  # doctest: +SKIP
            True
        """
        data, aspects = self._state.close_plot(filename)
        self._changed(filename, aspects)
        return CloseAnswer(**data)

    @tool_method
    def get_features(
        self,
        *,
        filename: Filename = None,
        ids: Ids | None = None,
        kinds: list[Annotated[str, Field(max_length=40)]] | None = None,
        detail: Literal["summary", "full"] = "summary",
        limit: Annotated[int | None, Field(ge=1, le=1000)] = None,
        cursor: Annotated[str | None, Field(max_length=512)] = None,
        time_start: Time = None,
        time_end: Time = None,
    ) -> FeaturesAnswer:
        """A page of a plot's features (tool ``debrief_get_features``).

        Args:
            filename: the plot (default: the one open plot).
            ids: only these features, in this order.
            kinds: only these kinds (``track``, ``zone``, ``point``, ``annotation``, …).
            detail: ``summary`` (id, kind, name, point count, time span, bounds, ``ref``) or
                ``full`` (whole GeoJSON).
            limit: features a page (default 100 summaries, 20 full).
            cursor: the previous page's ``next_cursor``.
            time_start: ISO-8601: tracks cut to this window (a fix interpolated at each edge, as
                every tool cuts them), other timed features kept while active.
            time_end: ISO-8601.

        Returns:
            :class:`FeaturesAnswer`: ``features``, ``total``, ``revision``, ``window`` (the one
            asked, else the whole data's period, with a note when the plot's saved window is
            narrower) and ``next_cursor`` (None on the last page). A feature too large for a page comes in parts
            (``part.points`` [a, b) of N), in order.

        Raises:
            PlotNotFound, MultiplePlots (no filename and several open), FeatureNotFound,
            ValidationFailed; Conflict: the plot changed since the cursor was issued.

        Example:
            >>> [f["id"] for f in ws.get_features(filename="exercise.plot.json", kinds=["track"]).features]  # doctest: +SKIP
            ['rep-nelson', 'rep-collingwood']
        """
        id_list = [str(i) for i in ids] if ids is not None else None
        return FeaturesAnswer(
            **self._state.get_features(filename, id_list, kinds, detail, limit, cursor, time_start, time_end)
        )

    @tool_method
    def apply_command(
        self, command: CommandArg, *, filename: Filename = None, expected_revision: Revision = None
    ) -> ApplyAnswer:
        """Apply a DebriefCommand, or a list of them, to a plot, all or nothing, under the plot's
        lock (tool ``debrief_apply_command``): the universal way to change a plot, whoever wrote
        the command (:meth:`run_tool`, a script, a model).

        Args:
            command: ``{"command": <name>, "payload": ...}`` (addFeatures, updateFeatures,
                deleteFeatures, setFeatureCollection, setViewport, setSelection, setTimeState,
                showText, showData, showImage, logMessage, composite; aliases highlightFeatures,
                updateViewport), a list of them (run in order), or a debrief-calc ``{"ref"}``.
            filename: the plot (default: the one open plot).
            expected_revision: refuse with :class:`Conflict` unless the plot is at this revision.

        Returns:
            :class:`ApplyAnswer`: ``revision``, ``changed``, ``added_ids``, ``updated_ids``,
            ``deleted_ids``, ``selectedIds``, ``display`` (what show*/logMessage asked to show;
            their pictures in ``images``).

        Raises:
            InvalidCommand: a wrong name or payload (``details.at`` and ``details.expected``).
            Conflict: the plot is not at ``expected_revision`` (nothing changed). PlotNotFound,
            MultiplePlots, FeatureNotFound.

        Example:
            >>> note = {"type": "Feature", "geometry": None,
            ...         "properties": {"dataType": "annotation", "annotationType": "comment", "text": "checked"}}
            >>> ws.apply_command({"command": "addFeatures", "payload": [note]},
            ...                  filename="exercise.plot.json", expected_revision=rev).revision  # doctest: +SKIP
        """
        data, aspects = self._state.apply(command, filename, expected_revision)
        self._changed(data["filename"], aspects)
        images = [Image(media_type=i["mediaType"], data=base64.b64decode(i["data"])) for i in data.pop("images")]
        return ApplyAnswer(**data, images=images)

    @tool_method
    def undo(self, *, filename: Filename = None) -> UndoAnswer:
        """Undo the last change of a plot made through any Workspace or server on this store (tool
        ``debrief_undo``), as one step however many features it touched.

        Args:
            filename: the plot (default: the one open plot).

        Returns:
            :class:`UndoAnswer`: ``undone`` (what was undone), ``remaining``, ``revision``.

        Raises:
            ValidationFailed: nothing to undo, or the plot changed since that change (undoing it
            would lose the later one). PlotNotFound, MultiplePlots.

        Example:
            >>> ws.undo(filename="exercise.plot.json").undone  # doctest: +SKIP
            'added 1 feature'
        """
        data, aspects = self._state.undo(filename)
        self._changed(data["filename"], aspects)
        return UndoAnswer(**data)
