"""A plot's selection, time, viewport and feature properties (tools of ``debrief-state-mcp``).

The time and viewport are written into the plot file (each write a new revision); the selection
lives in the shared store, so changing it leaves the revision as it is.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from debrief_calc._workspace._arguments import Filename, Ids, Revision
from debrief_calc._workspace._base import WorkspaceBase, tool_method
from debrief_calc.state.answers import (
    PropertiesAnswer,
    SelectionAnswer,
    TimeAnswer,
    TimeChange,
    ViewportAnswer,
    ViewportState,
)

__all__ = ["PlotState"]


class PlotState(WorkspaceBase):
    """Selection, time window, viewport and properties of a plot."""

    @tool_method
    def get_selection(self, *, filename: Filename = None) -> SelectionAnswer:
        """The selected feature ids of a plot, shared by every client (tool ``debrief_get_selection``).

        Args:
            filename: the plot (default: the one open plot).

        Returns:
            :class:`SelectionAnswer`: ``selectedIds``, ``count``, ``missing_ids`` (selected ids the
            plot no longer has).

        Raises:
            PlotNotFound, MultiplePlots.

        Example:
            >>> ws.get_selection(filename="exercise.plot.json").selectedIds  # doctest: +SKIP
            ['rep-nelson']
        """
        return SelectionAnswer(**self._state.get_selection(filename))

    @tool_method
    def set_selection(self, selectedIds: Ids, *, filename: Filename = None) -> SelectionAnswer:
        """Select features by id, replacing the selection (tool ``debrief_set_selection``).

        Args:
            selectedIds: the ids to select (``[]`` clears the selection).
            filename: the plot (default: the one open plot).

        Returns:
            :class:`SelectionAnswer`: the new ``selectedIds``.

        Raises:
            FeatureNotFound: an id the plot does not have. PlotNotFound, MultiplePlots.

        Example:
            >>> ws.set_selection(["rep-nelson", "rep-collingwood"], filename="exercise.plot.json").count  # doctest: +SKIP
            2
        """
        data, aspects = self._state.set_selection([str(i) for i in selectedIds], filename)
        self._changed(data["filename"], aspects)
        return SelectionAnswer(**data)

    @tool_method
    def get_time(self, *, filename: Filename = None) -> TimeAnswer:
        """The plot's time state (tool ``debrief_get_time``).

        Args:
            filename: the plot (default: the one open plot).

        Returns:
            :class:`TimeAnswer`: ``timeState`` ``{current, start, end}`` (ISO-8601); ``derived``
            is True when the plot has no saved window and this is its features' period.

        Raises:
            PlotNotFound, MultiplePlots.

        Example:
            >>> ws.get_time(filename="exercise.plot.json").timeState.current  # doctest: +SKIP
            '1995-12-12T05:00:00Z'
        """
        return TimeAnswer(**self._state.get_time(filename))

    @tool_method
    def set_time(
        self, timeState: TimeChange, *, filename: Filename = None, expected_revision: Revision = None
    ) -> TimeAnswer:
        """Set the plot's time (tool ``debrief_set_time``): ``current`` alone moves it within the
        window; ``start``/``end`` change the window.

        Args:
            timeState: a :class:`TimeChange` or a dict with any of ``current``, ``start``, ``end``
                (ISO-8601); the others come from the saved window.
            filename: the plot (default: the one open plot).
            expected_revision: refuse with :class:`Conflict` unless the plot is at this revision.

        Returns:
            :class:`TimeAnswer`: the ``timeState`` saved and the new ``revision``.

        Raises:
            ValidationFailed: an unreadable time, or ``end`` before ``start``. Conflict,
            PlotNotFound, MultiplePlots.

        Example:
            >>> ws.set_time({"current": "1995-12-12T10:45:00Z"}, filename="exercise.plot.json").revision  # doctest: +SKIP
        """
        data, aspects = self._state.set_time(timeState.model_dump(exclude_none=True), filename, expected_revision)
        self._changed(data["filename"], aspects)
        return TimeAnswer(**data)

    @tool_method
    def get_viewport(self, *, filename: Filename = None) -> ViewportAnswer:
        """The plot's saved viewport (tool ``debrief_get_viewport``).

        Args:
            filename: the plot (default: the one open plot).

        Returns:
            :class:`ViewportAnswer`: ``viewportState`` ``{bounds: [west, south, east, north]}``, or
            None with a ``message`` when the plot has none.

        Raises:
            PlotNotFound, MultiplePlots.

        Example:
            >>> [round(b, 2) for b in ws.get_viewport(filename="exercise.plot.json").viewportState.bounds]  # doctest: +SKIP
            [-21.88, 21.88, -21.56, 22.2]
        """
        return ViewportAnswer(**self._state.get_viewport(filename))

    @tool_method
    def set_viewport(
        self, viewportState: ViewportState, *, filename: Filename = None, expected_revision: Revision = None
    ) -> ViewportAnswer:
        """Set the plot's viewport, written into the file (tool ``debrief_set_viewport``).

        Args:
            viewportState: a :class:`ViewportState` or ``{"bounds": [west, south, east, north]}``
                in degrees.
            filename: the plot (default: the one open plot).
            expected_revision: refuse with :class:`Conflict` unless the plot is at this revision.

        Returns:
            :class:`ViewportAnswer`: the ``viewportState`` saved and the new ``revision``.

        Raises:
            ValidationFailed: bounds out of range or the wrong way round. Conflict,
            PlotNotFound, MultiplePlots.

        Example:
            >>> ws.set_viewport({"bounds": [-22, 21.8, -21.5, 22.3]}, filename="exercise.plot.json").revision  # doctest: +SKIP
        """
        data, aspects = self._state.set_viewport(viewportState.model_dump(), filename, expected_revision)
        self._changed(data["filename"], aspects)
        return ViewportAnswer(**data)

    @tool_method
    def zoom_to_selection(
        self,
        *,
        filename: Filename = None,
        padding: Annotated[float, Field(ge=0, le=10, description="Fraction of the span added on each side")] = 0.1,
        expected_revision: Revision = None,
        ids: Annotated[Ids | None, Field(description="Zoom to these instead of the selection")] = None,
    ) -> ViewportAnswer:
        """Set the saved viewport to the padded bounds of the selection, or of ``ids`` (tool
        ``debrief_zoom_to_selection``); the selection itself is left as it is.

        Args:
            filename: the plot (default: the one open plot).
            padding: the fraction of the span added on each side (0 to 10).
            expected_revision: refuse with :class:`Conflict` unless the plot is at this revision.
            ids: zoom to these features instead of the selection.

        Returns:
            :class:`ViewportAnswer`: the ``viewportState`` saved, ``selectedIds`` or ``ids``.

        Raises:
            ValidationFailed: nothing selected, or no positions to zoom to. FeatureNotFound,
            Conflict, PlotNotFound, MultiplePlots.

        Example:
            >>> ws.zoom_to_selection(filename="exercise.plot.json", ids=["rep-nelson"]).viewportState.bounds  # doctest: +SKIP
        """
        id_list = [str(i) for i in ids] if ids else None
        data, aspects = self._state.zoom_to_selection(filename, padding, expected_revision, id_list)
        self._changed(data["filename"], aspects)
        return ViewportAnswer(**data)

    @tool_method
    def set_properties(
        self,
        ids: Ids,
        properties: Annotated[dict[str, Any], Field(description="Merged into each feature's properties; null deletes")],
        *,
        filename: Filename = None,
        expected_revision: Revision = None,
    ) -> PropertiesAnswer:
        """Change features' properties (rename, recolour) as one undoable change, without touching
        their geometry (tool ``debrief_set_properties``): a JSON merge patch, ``None`` deletes a key.

        Args:
            ids: the features to change.
            properties: merged into each feature's properties, e.g. ``{"name": "NELSON (own ship)",
                "stroke": "#d62728"}``.
            filename: the plot (default: the one open plot).
            expected_revision: refuse with :class:`Conflict` unless the plot is at this revision.

        Returns:
            :class:`PropertiesAnswer`: ``changed``, ``updated_ids``, ``relinked_ids`` (narrative
            entries that follow a renamed track), the new ``revision``.

        Raises:
            ValidationFailed: no ids or no properties. FeatureNotFound, Conflict, PlotNotFound,
            MultiplePlots.

        Example:
            >>> ws.set_properties(["rep-nelson"], {"stroke": "#d62728"}, filename="exercise.plot.json").changed  # doctest: +SKIP
            True
        """
        data, aspects = self._state.set_properties([str(i) for i in ids], properties, filename, expected_revision)
        self._changed(data["filename"], aspects)
        return PropertiesAnswer(**data)
