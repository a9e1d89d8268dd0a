"""What the ``debrief-calc-mcp`` tools (and the :class:`~debrief_calc.Workspace` methods that are
their Python side) answer, and the ``plot`` argument of ``run_tool``. Nothing here knows MCP:
a picture travels in ``images``, beside the JSON (``model_dump``), never inside it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from llmem.core.arguments import no_schema_description
from llmem.core.images import WithImages

__all__ = ["PlotFeatures", "RunAnswer", "SeriesAnswer", "StoredAnswer", "ToolDescription", "ToolList"]


class ToolList(BaseModel):
    """``list_tools``: one summary per analysis tool (name, description, input kinds, context)."""

    success: bool = True
    tools: list[dict[str, Any]]


class ToolDescription(BaseModel):
    """``describe_tool``: one analysis tool with every parameter (type, default, choices, unit)."""

    success: bool = True
    name: str
    description: str = ""
    version: str = ""
    input_kinds: list[str] = []
    output_kind: str | None = None
    context_type: str = ""
    parameters: list[dict[str, Any]] = []
    context_types: list[str] = []
    output_kinds: list[str] = []


class RunAnswer(BaseModel):
    """``run_tool``: the result features, the DebriefCommands that would change a plot, and where
    the results are kept (``stored``, ``keep``); a run over the answer cap gives summaries and a
    reference. Members that are null are left out of the JSON."""

    success: bool
    features: list[dict[str, Any]] = []
    commands: list[dict[str, Any]] = []
    duration_ms: float
    error: dict[str, Any] | None = None
    warnings: list[str] | None = None
    report: dict[str, Any] | None = None
    stored: dict[str, Any] | None = None
    keep: str | None = None
    window: dict[str, Any] | None = None
    narratives: dict[str, Any] | None = None
    skipped: dict[str, list[str]] | None = None  # features of a whole plot left out, ids by kind

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


class StoredAnswer(BaseModel):
    """``get_result``: one page of what a reference holds (features, or a report table's text);
    ``next_cursor`` is null on the last page."""

    success: bool
    ref: str = ""
    kind: str = ""
    total: int | None = None
    features: list[dict[str, Any]] | None = None
    format: str | None = None
    chars: int | None = None
    text: str | None = None
    next_cursor: str | None = None
    note: str | None = None
    narrative: dict[str, str] | None = None
    kinds: list[str] | None = None

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        out = super().model_dump(**kwargs)
        out["next_cursor"] = self.next_cursor  # null says "that was the last page"
        return out


class PlotFeatures(BaseModel):
    """Features read from a plot of the workspace: ``filename`` and ``feature_ids`` (or
    ``selection: true``, the plot's current selection); none of them: the whole plot."""

    # time_start/time_end are read here too (the service refuses any other member), but left
    # out of the schema: the run's own time_start/time_end is the one window to advertise
    model_config = ConfigDict(extra="allow", json_schema_extra=no_schema_description)
    filename: str
    feature_ids: list[str | int] | None = None
    selection: bool = False


class SeriesAnswer(WithImages):
    """``render_series``: what the picture shows (panels, span, samples, the CPA, passes, close
    quarters, narratives; for a relative-motion picture its scale) and where its series is
    (``source``); the PNG is ``images[0]``."""

    success: bool = True
    mediaType: str
    picture: str = "time"  # "time" (panels against time) or "relative-motion"
    title: str  # from the quantities drawn
    width: int
    height: int
    bytes: int
    span: list[str]  # [first, last] instant drawn, ISO-8601
    samples: int  # rows of the series (source.ref holds them)
    # quantity, label, axis [low, high], min, max, extrema (sampled|curve), extremes, limits, true_min, true_peak
    panels: list[dict[str, Any]] | None = None
    source: dict[str, Any]  # where the series is: a result's ref (get_result reads its numbers) or the track
    window: dict[str, Any] | None = None  # {start, end, source: asked|plot|data}: the window the series was cut to
    # the curve drawn between fixes (from tracks): {samples, between_fixes, note}
    curve: dict[str, Any] | None = None
    # time, label, source (cpa_time, closest-approach, min_range_time), range, unit; edge: a least range at the
    # span's start or end (not a CPA), with its note
    cpa: dict[str, Any] | None = None
    passes: list[dict[str, Any]] | None = None  # every pass drawn: pass, time, range, unit, bearing, is_cpa, label
    close_quarters: dict[str, Any] | None = None  # threshold, unit, periods [{start, end, ..., drawn}], ref
    # relative-motion: {centre [x, y] px, px_per_unit, unit, outer_ring, ring_step}; track; time_marks
    scale: dict[str, Any] | None = None
    track: dict[str, Any] | None = None
    time_marks: list[dict[str, Any]] | None = None
    suggest: dict[str, Any] | None = None  # {max_range, note}: the CPA under a tenth of the outer ring
    # given, marked, marked_at, labelled, outside_span, untimed, untimed_ids, untimed_note, from_plot
    narratives: dict[str, Any] | None = None
    others: list[dict[str, Any]] | None = None  # the other secondaries' results, to plot with result=<ref>
    # bearing residuals (stacked dots): mean_error, rms_error, residual_count, cut_count, verdict, …
    residuals: dict[str, Any] | None = None
    warnings: list[str] | None = None  # what the bearing-residuals run drawn said

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)
