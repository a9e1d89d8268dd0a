"""The analysis side of a Workspace: the tools of ``debrief-calc-mcp``, one method each."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from debrief_calc._workspace._arguments import ContextType, ResultTask
from debrief_calc._workspace._base import WorkspaceBase, tool_method
from debrief_calc.calc.answers import PlotFeatures, RunAnswer, SeriesAnswer, StoredAnswer, ToolDescription, ToolList
from debrief_calc.errors import error_from
from llmem.core.envelope import Envelope
from llmem.core.images import Image

__all__ = ["Analysis"]


class Analysis(WorkspaceBase):
    """``list_tools``, ``describe_tool``, ``run_tool``, ``get_result``, ``render_series`` and the
    results' callback pair (``generate_analysis_prompt`` → ``store_analysis_llm_result``)."""

    @tool_method
    def list_tools(self, *, context_type: ContextType | None = None, kinds: list[str] | None = None) -> ToolList:
        """The analysis tools ``run_tool`` runs (tool ``list_tools`` of debrief-calc-mcp).

        Args:
            context_type: only the tools that take this context: ``single`` (one feature),
                ``multi`` (several), ``region`` (a bounding box) or ``none`` (no features).
            kinds: only the tools that take features of these kinds (``track``, ``zone``, …).

        Returns:
            :class:`ToolList`: ``tools``, one summary each (name, description, input kinds, context).

        Raises:
            ValidationFailed: an unknown ``context_type``.

        Example:
            >>> [t["name"] for t in ws.list_tools(kinds=["track"]).tools]  # doctest: +SKIP
            ['track-stats', 'closest-approach', 'range-bearing', ...]
        """
        return ToolList(tools=self._calc.list_tools(context_type, kinds))

    @tool_method
    def describe_tool(self, name: Annotated[str, Field(max_length=200)]) -> ToolDescription:
        """One analysis tool with every parameter (tool ``describe_tool``).

        Args:
            name: the tool's name, as :meth:`list_tools` gives it (``closest-approach``).

        Returns:
            :class:`ToolDescription`: its input kinds, context, output kind and ``parameters``
            (each with its type, default, choices and unit).

        Raises:
            ToolNotFound: no analysis tool by that name (the message lists them).

        Example:
            >>> [p["name"] for p in ws.describe_tool("track-legs").parameters]  # doctest: +SKIP
            ['course_tolerance', 'speed_tolerance', 'min_leg_duration_s', ...]
        """
        return ToolDescription(**self._calc.describe(name))

    @tool_method
    def run_tool(
        self,
        tool: Annotated[str, Field(max_length=200)],
        *,
        features: Annotated[
            list[dict[str, Any]] | None, Field(description='GeoJSON Features and/or {"ref": ...} items')
        ] = None,
        plot: PlotFeatures | None = None,
        bounds: Annotated[list[float] | None, Field(min_length=4, max_length=4)] = None,
        parameters: dict[str, Any] | None = None,
        time_start: Annotated[str | None, Field(max_length=64)] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> RunAnswer:
        """Run an analysis tool (tool ``run_tool``): the results are kept in the store, and changes
        to a plot come back as DebriefCommands for :meth:`apply_command`, never written here.

        Args:
            tool: the analysis tool (:meth:`list_tools`), e.g. ``import-rep``, ``track-stats``,
                ``closest-approach``, ``range-bearing``, ``track-legs``.
            features: GeoJSON Features and/or references from earlier answers:
                ``{"ref": "debrief-calc:runs/<id>"}`` (a whole run), ``…:results/<id>`` (one result),
                ``{"ref": "debrief-state:plots/<file>#<id>"}`` (one feature of a plot); a reference
                may carry its own ``time_start``/``time_end``.
            plot: features of a plot instead: ``{"filename": "x.plot.json", "feature_ids": [...]}``,
                or ``{"filename": ..., "selection": True}`` (a :class:`PlotFeatures` or a dict).
            bounds: ``[west, south, east, north]`` for the tools that take a region.
            parameters: the tool's parameters (:meth:`describe_tool` lists them), e.g.
                ``{"distance_unit": "yd"}`` or, for ``import-rep``, ``{"path": "boat1.rep"}``.
            time_start: ISO-8601; every input is cut to the window: tracks keep their fixes
                inside it plus a fix interpolated exactly at each edge. Without one, a measuring
                tool reads features from a plot through the plot's saved window.
            time_end: ISO-8601, the window's other end (either may be left out).

        Returns:
            :class:`RunAnswer`: ``features`` (the results, each with ``properties.provenance``),
            ``commands`` (DebriefCommands), ``report``, ``warnings``, ``window`` (``{start, end,
            source}``: asked, the plot's saved window, or the whole data); over the answer
            cap, summaries and ``stored["ref"]``, the reference of the whole run (for
            :meth:`get_result`, :meth:`create_plot` or another run).

        Raises:
            ToolNotFound, InvalidContext, KindMismatch, ValidationFailed, ExecutionError,
            PlotNotFound, FeatureNotFound: the tool's own error, with the code the tool answers.

        Example:
            >>> boat1 = ws.run_tool("import-rep", parameters={"path": "boat1.rep"}).stored["ref"]  # doctest: +SKIP
            >>> boat2 = ws.run_tool("import-rep", parameters={"path": "boat2.rep"}).stored["ref"]  # doctest: +SKIP
            >>> cpa = ws.run_tool("closest-approach", features=[{"ref": boat1}, {"ref": boat2}],
            ...                   parameters={"distance_unit": "yd"})  # doctest: +SKIP
            >>> cpa.features[0]["properties"]["range"], cpa.features[0]["properties"]["time"]  # doctest: +SKIP
            (119.544, '1995-12-12T10:45:08.902Z')
        """
        plot_ref = plot.model_dump() if plot else None
        answer = self._calc.run(tool, features, plot_ref, bounds, parameters, time_start, time_end)
        if not answer["success"]:
            raise error_from(answer["error"])
        return RunAnswer(**answer)

    @tool_method
    def get_result(
        self,
        ref: Annotated[str, Field(max_length=300, description="A ref or a result id")],
        *,
        cursor: Annotated[str | None, Field(max_length=1000)] = None,
        kinds: Annotated[
            list[str] | None, Field(max_length=10, description="Only these kinds, e.g. [annotation]")
        ] = None,
        format: Annotated[
            Literal["csv", "tsv", "markdown"] | None,
            Field(description="range-bearing results as a report table"),
        ] = None,
    ) -> StoredAnswer:
        """Read back any reference an answer gave, one page at a time (tool ``get_result``).

        Args:
            ref: ``debrief-calc:runs/<id>``, ``debrief-calc:results/<id>`` (or the bare result id),
                a narrative's ``…/narrative``, or a stored command payload's reference.
            cursor: the previous page's ``next_cursor``.
            kinds: only features of these kinds, e.g. ``["annotation"]`` (an import's narratives).
            format: ``csv``, ``tsv`` or ``markdown``: range-bearing results as legacy Debrief's
                table (Time, Depth, Speed, Course, Range (yd), Bearing, Brg Rate) in ``text``.

        Returns:
            :class:`StoredAnswer`: ``features`` (or ``text``), ``total`` and ``next_cursor`` (None on
            the last page). A feature too large for one page comes in parts (``part``), in order.

        Raises:
            ValidationFailed: a malformed reference or cursor. ArtifactNotFound: nothing is kept
            under it.

        Example:
            >>> page, features = ws.get_result(run_ref), []  # doctest: +SKIP
            >>> while True:  # doctest: +SKIP
            ...     features += page.features or []
            ...     if page.next_cursor is None:
            ...         break
            ...     page = ws.get_result(run_ref, cursor=page.next_cursor)
        """
        return StoredAnswer(**self._calc.get_result(ref, cursor, kinds, format))

    @tool_method
    def render_series(
        self,
        *,
        features: list[Any] | None = None,
        plot: dict[str, Any] | None = None,
        time_start: str | None = None,
        time_end: str | None = None,
        quantities: list[str] | None = None,
        narratives: list[Any] | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> SeriesAnswer:
        """A PNG of a series against time, Debrief's time-variable plot, or the analyst's
        relative-motion plot (tool ``render_series``).

        Args:
            features: a range-bearing result (``[{"ref": <its ref>}]``), or tracks (inline or by
                reference): then range-bearing runs on the primary's fixes, its result is kept and
                every quantity is drawn between fixes (the curve reaches the peaks it marks); and
                close-quarters results, whose periods (of the pair drawn) are shaded; or a
                bearing-residuals result, or a sensor with its candidate target and host tracks:
                the stacked dots (each cut's bearing error above ownship's course).
            plot: tracks of a plot instead, as :meth:`run_tool` reads them.
            time_start: ISO-8601; the tracks (as :meth:`run_tool` cuts them; without one, a plot's
                tracks through its saved window) or the series cut to the window.
            time_end: ISO-8601.
            quantities: panels to draw (default range, bearing, bearing_rate; one track: speed,
                course; also rate_of_turn); any numeric column of the series (range_rate,
                primary_course, secondary_rate_of_turn...).
            narratives: annotations with a time (or ``{"ref"}`` items) to mark; by default the
                plot's narrative entries.
            parameters: ``primary``, ``secondary`` (for a sensor: the target track),
                ``distance_unit``, ``width``, ``height``;
                ``picture`` (``"time"``, the default, or ``"relative-motion"``: the secondary
                around ownship at the centre, north up, range rings, bearing ticks, times along
                its track, the CPA and passes marked); ``y_range`` (``{quantity: [low, high]}``,
                the time plot's axes: otherwise they span the values, not from zero);
                ``max_range`` (the relative plot's outer ring); ``close_quarters`` (a threshold in
                ``distance_unit``: close-quarters is run on the two tracks and shaded).

        Returns:
            :class:`SeriesAnswer`: ``picture``, ``panels`` (the time plot's), ``span``,
            ``samples``, ``curve`` (drawn between fixes), ``cpa`` (``edge`` when the least range is
            at the span's start or end: not a CPA), ``passes``, ``close_quarters``,
            ``narratives``, ``window``, ``source`` (the series' ref), ``residuals`` (stacked dots:
            rms_error, verdict); for a relative-motion picture ``scale`` (centre, px_per_unit: a contact at range R on bearing B is drawn at
            ``centre + px_per_unit * (R sin B, -R cos B)``), ``track`` and ``time_marks``; the PNG
            is ``images[0]`` (``save_image(path)`` writes it).

        Raises:
            ValidationFailed: a bad source, quantity, parameter or window (naming the field).

        Example:
            >>> ws.render_series(features=[{"ref": rb_ref}]).save_image("range.png")  # doctest: +SKIP
            >>> ws.render_series(features=[a, b], parameters={"picture": "relative-motion"})  # doctest: +SKIP
        """
        from debrief_calc.calc.series import render_series as draw

        data, png = draw(
            self._calc,
            features=features,
            plot=plot,
            time_start=time_start,
            time_end=time_end,
            quantities=quantities,
            narratives=narratives,
            parameters=parameters,
        )
        return SeriesAnswer(**data, images=[Image(media_type="image/png", data=png)])

    @tool_method
    def generate_analysis_prompt(
        self,
        target: Annotated[str | list[str], Field(description="Result id(s) or ref(s) (a run ref: all its results)")],
        task: ResultTask,
        *,
        time_start: Annotated[str | None, Field(max_length=64)] = None,
        time_end: Annotated[str | None, Field(max_length=64)] = None,
    ) -> Envelope:
        """A prompt for your model about analysis results (debrief-calc's ``generate_prompt``).
        Nothing calls a model: run ``promptForHostLLM`` with yours, then pass its answer to
        :meth:`store_analysis_llm_result`.

        Args:
            target: a result id or reference, a list of them, or a run's reference (all its results).
            task: ``narrate-result`` (one result) or ``summarize-analysis`` (several).
            time_start: ISO-8601: tell about this window only (the series rows inside it).
            time_end: ISO-8601.

        Returns:
            :class:`~llmem.core.envelope.Envelope` with ``status == "prompt_ready"``,
            ``promptForHostLLM`` and ``callbackArgs`` (ticket, target, task).

        Raises:
            ValidationFailed: no such result, or the wrong number for the task.
            UnsupportedTask: an unknown task.

        Example:
            >>> env = ws.generate_analysis_prompt(cpa_ref, "narrate-result")  # doctest: +SKIP
            >>> ws.store_analysis_llm_result(**env.callbackArgs, result=my_model(env.promptForHostLLM))  # doctest: +SKIP
        """
        return self._calc.prompt(target, task, time_start, time_end).with_success()

    @tool_method
    def store_analysis_llm_result(
        self,
        ticket: Annotated[str, Field(max_length=64)],
        target: str,
        task: ResultTask,
        result: str,
        *,
        model: Annotated[str | None, Field(max_length=200)] = None,
    ) -> Envelope:
        """Check and keep your model's narrative for a :meth:`generate_analysis_prompt` ticket
        (debrief-calc's ``store_llm_result``).

        Args:
            ticket: ``callbackArgs["ticket"]``.
            target: ``callbackArgs["target"]``.
            task: ``callbackArgs["task"]``.
            result: the model's answer, Markdown.
            model: the model's name, kept in the narrative's provenance.

        Returns:
            :class:`~llmem.core.envelope.Envelope` with ``data["ref"]`` (read it back with
            :meth:`get_result`) and ``data["command"]``, the addFeatures command that keeps it in a
            plot (:meth:`apply_command`).

        Raises:
            TicketError: an unknown, expired or used ticket (``TICKET_UNKNOWN``, ``TICKET_EXPIRED``,
            ``STEP_LIMIT``). SourceChanged: the results changed since the prompt. ResultInvalid:
            an empty or over-long answer (the same ticket can be sent again, corrected).

        Example:
            >>> ws.store_analysis_llm_result(**env.callbackArgs, result="NELSON passed ...").data["ref"]  # doctest: +SKIP
            'debrief-calc:results/.../narrative'
        """
        return self._calc.store_result(ticket, target, task, result, model).with_success()
