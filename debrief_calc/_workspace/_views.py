"""Looking at a plot: its picture, the live view's data, and the plot's callback pair (a prompt
about the plot for your model, and its answer kept) — tools of ``debrief-state-mcp``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from debrief_calc._workspace._arguments import Filename, Time
from debrief_calc._workspace._base import WorkspaceBase, tool_method
from debrief_calc.state.answers import RenderAnswer, ViewData
from debrief_calc.state.tasks import Task
from debrief_calc.state.view import DEFAULT_POINTS
from llmem.core.envelope import Envelope
from llmem.core.images import Image

__all__ = ["Views"]


class Views(WorkspaceBase):
    """``render_plot``, ``view_data`` and the plot prompts (``generate_plot_prompt`` →
    ``store_plot_llm_result``)."""

    @tool_method
    def render_plot(
        self,
        *,
        filename: Filename = None,
        width: Annotated[
            int, Field(ge=64, le=2048, description="Max px; image takes the area's shape (within 2:1)")
        ] = 1024,
        height: Annotated[int, Field(ge=64, le=2048, description="Max px")] = 768,
        time: Annotated[str | None, Field(max_length=64, description="ISO-8601; default: the plot's current")] = None,
        fit: Annotated[
            Literal["viewport", "all", "selection", "window"]
            | Annotated[list[float], Field(min_length=4, max_length=4)],
            Field(description="Area shown, or [w,s,e,n]; the saved viewport is unchanged"),
        ] = "viewport",
        show_future: Annotated[bool, Field(description="Tracks after time, faint")] = True,
        cpa: Annotated[
            list[Annotated[str, Field(max_length=512)]] | None,
            Field(min_length=2, max_length=2, description="Two track ids: range line at time"),
        ] = None,
        time_start: Time = None,
        time_end: Time = None,
    ) -> RenderAnswer:
        """A PNG of the plot at a time as Debrief draws it: ships, past and future track, DTGs,
        zones (tool ``debrief_render_plot``). The saved viewport is read, never changed.

        Args:
            filename: the plot (default: the one open plot).
            width: the picture's largest width in pixels (64 to 2048); it takes the area's shape.
            height: its largest height in pixels.
            time: ISO-8601 (default: the plot's current time).
            fit: the area shown: ``viewport`` (saved), ``all``, ``selection``, ``window`` (the
                tracks over the window drawn and the zones they were in), or
                ``[west, south, east, north]``.
            show_future: draw the tracks after ``time``, faint.
            cpa: two track ids: the range line between them at ``time``.
            time_start: ISO-8601: draw the tracks over this window alone (default: the plot's
                saved window, else all of them), cut as every tool cuts them.
            time_end: ISO-8601.

        Returns:
            :class:`RenderAnswer`: ``time``, ``fit``, ``bounds``, ``window`` (``{start, end,
            source}``: asked, the plot's or the whole data), ``span`` (what the tracks drawn
            cover), ``range`` (for ``cpa``), ``cuts`` (each sensor's cuts in all, active and drawn;
            a selected one's times), what was left out; the PNG is ``images[0]``
            (``save_image(path)`` writes it).

        Raises:
            ValidationFailed: a bad time, window or fit. FeatureNotFound (``cpa``), PlotNotFound,
            MultiplePlots.

        Example:
            >>> ws.render_plot(filename="exercise.plot.json", fit="all").save_image("exercise.png")  # doctest: +SKIP
        """
        data, png = self._state.render(filename, width, height, time, fit, show_future, cpa, time_start, time_end)
        return RenderAnswer(**data, images=[Image(media_type="image/png", data=png)])

    @tool_method
    def view_data(
        self,
        *,
        filename: Filename = None,
        since_revision: Annotated[str | None, Field(max_length=128, description="Only changes since")] = None,
        max_points: Annotated[
            int, Field(ge=100, le=50_000, description="Track points and cuts in all")
        ] = DEFAULT_POINTS,
        time_start: Time = None,
        time_end: Time = None,
        tote_at: Time = None,
        tote_primary: Annotated[str | None, Field(max_length=512)] = None,
    ) -> ViewData:
        """What the live plot view draws (the app-only tool ``debrief_view_data``): the features
        with their tracks and sensors' cuts thinned to ``max_points`` in all, target solutions'
        ellipses, the hidden features (for the legend), the time, viewport and selection.

        Args:
            filename: the plot (default: the one open plot).
            since_revision: the revision already drawn: if the plot is still at it, the answer is
                only ``changed: False`` and the selection (the view polls this way).
            max_points: track points and cuts sent in all (100 to 50,000).
            time_start: ISO-8601: the tracks and sensors cut to this window (a picture's), else to the plot's
                saved window, as every path cuts them.
            time_end: ISO-8601.
            tote_at: ISO-8601: also the view's readout at that time, ``tote``: the range and
                bearing (the tote's own figures) from the primary to each selected track.
            tote_primary: the primary's id (default: the plot's first track).

        Returns:
            :class:`ViewData`: ``revision``, ``changed``, ``selection`` and, when changed,
            ``features``, ``time``, ``viewport``, ``bounds``; with ``tote_at``, ``tote``
            (``{time, unit, primary, rows}``, or a ``note`` or ``error`` saying why there are none).

        Raises:
            PlotNotFound, MultiplePlots.

        Example:
            >>> ws.view_data(filename="exercise.plot.json", since_revision=rev).changed  # doctest: +SKIP
            False
        """
        return ViewData(
            **self._state.view(filename, since_revision, max_points, time_start, time_end, tote_at, tote_primary)
        )

    @tool_method
    def generate_plot_prompt(self, task: Task, *, target: Filename = None) -> Envelope:
        """A bounded prompt about a plot for your model (debrief-state's ``generate_prompt``): its
        features in brief, window, selection and the figures of its newest analyses, never its
        coordinates. Run ``promptForHostLLM`` with your model, then :meth:`store_plot_llm_result`.

        Args:
            task: ``summarize-plot``, ``describe-selection`` or ``narrate-timeline``.
            target: the plot (default: the one open plot).

        Returns:
            :class:`~llmem.core.envelope.Envelope` with ``status == "prompt_ready"``,
            ``promptForHostLLM`` and ``callbackArgs`` (ticket, target, task).

        Raises:
            ValidationFailed: ``describe-selection`` with nothing selected. PlotNotFound,
            MultiplePlots.

        Example:
            >>> env = ws.generate_plot_prompt("summarize-plot", target="exercise.plot.json")  # doctest: +SKIP
        """
        return self._tasks.prompt(target, task).with_success()

    @tool_method
    def store_plot_llm_result(
        self,
        ticket: Annotated[str, Field(max_length=64)],
        target: str,
        task: Task,
        result: Annotated[str, Field(description="Your model's answer (Markdown)")],
        *,
        model: Annotated[str | None, Field(max_length=200)] = None,
        add_annotation: bool = False,
    ) -> Envelope:
        """Keep your model's answer to a :meth:`generate_plot_prompt` ticket (debrief-state's
        ``store_llm_result``); ``add_annotation`` also puts it into the plot as an annotation.

        Args:
            ticket: ``callbackArgs["ticket"]``.
            target: ``callbackArgs["target"]`` (the plot).
            task: ``callbackArgs["task"]``.
            result: the model's answer, Markdown.
            model: the model's name, kept in the provenance.
            add_annotation: also add the text to the plot as an annotation feature (undoable).

        Returns:
            :class:`~llmem.core.envelope.Envelope` with ``data["text"]`` and, with
            ``add_annotation``, ``data["annotation"]`` (its id and the plot's new revision).

        Raises:
            TicketError: an unknown, expired or used ticket. SourceChanged: the plot (or, for
            describe-selection, the selection) changed since the prompt: ask for a new one.

        Example:
            >>> ws.store_plot_llm_result(**env.callbackArgs, result=summary, add_annotation=True).data["annotation"]  # doctest: +SKIP
            {'added': True, 'id': 'llm-summarize-plot-...', 'revision': '...'}
        """
        env, aspects = self._tasks.store(ticket, target, task, result, model, add_annotation)
        self._changed(target, aspects)
        return env.with_success()
