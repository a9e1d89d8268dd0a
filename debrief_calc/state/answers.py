"""What the ``debrief-state-mcp`` tools (and the :class:`~debrief_calc.Workspace` methods that
are their Python side) answer: the success models (the seed's ``selectedIds``, ``timeState``,
``viewportState`` at the top level; pictures in ``images``, beside the JSON) and the failure
payloads with their JSON-RPC code and ``nextAction``. Nothing here knows MCP."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from debrief_calc.errors import RPC_CODES
from llmem.core.arguments import no_schema_description
from llmem.core.envelope import failure_answer
from llmem.core.errors import SuiteError
from llmem.core.images import WithImages

__all__ = [
    "ApplyAnswer",
    "CloseAnswer",
    "CreateAnswer",
    "CutsShown",
    "FeaturesAnswer",
    "OpenAnswer",
    "PlotList",
    "PlotRef",
    "PropertiesAnswer",
    "RangeDrawn",
    "RenderAnswer",
    "SelectionAnswer",
    "TimeAnswer",
    "TimeChange",
    "TimeState",
    "UndoAnswer",
    "ViewportAnswer",
    "ViewportState",
    "envelope_error",
    "state_error",
]

_RPC_OTHER = {"INTERNAL": -32603, "TIMEOUT": -32603}
_NEXT = {
    "MULTIPLE_PLOTS": "Call the same tool again with filename set to one of error.details.available_plots.",
    "PLOT_NOT_FOUND": "Pass one of error.details.plot_files as filename, or open it with debrief_open_plot.",
    "FEATURE_NOT_FOUND": "Look up the plot's ids with debrief_get_features and call again with ids it has.",
    "INVALID_FILENAME": "Give the name of a .plot.json file relative to the workspace (debrief_list_plots lists them).",
    "INVALID_COMMAND": "Fix the command where error.details.at says (error.details.expected is the payload it "
    "takes) and call debrief_apply_command again; nothing was changed.",
    "CONFLICT": "Read the plot again (debrief_get_features; error.details.revision is its revision now) and retry "
    "with that expected_revision.",
    "PLOT_UNREADABLE": "Fix or restore the file error.details.filename names; debrief_list_plots lists the plots "
    "that still work.",
    "PLOT_EXISTS": "Call debrief_create_plot with another filename, or add to this plot with debrief_apply_command "
    "(addFeatures).",
    "VALIDATION_FAILED": "Correct what error.details.field names and call the tool again; nothing was changed.",
}


class _Ok(BaseModel):
    """A success: ``success`` is True (failures are raised, or answered as ``state_error``)."""

    success: bool = True
    #: members left out of the answer when they are null: they only say something when set
    _if_set: ClassVar[frozenset[str]] = frozenset()

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        out = super().model_dump(**kwargs)
        return {k: v for k, v in out.items() if v is not None or k not in self._if_set}


class _OnPlot(_Ok):
    """A success about one plot: its ``filename`` and its ``revision`` (after a write, the new one)."""

    filename: str
    revision: str


class PlotRef(BaseModel):
    """An open plot: its file and title."""

    filename: str
    title: str


class PlotList(_Ok):
    """``debrief_list_plots``: the open plots, the other plot files and the REP files."""

    open_plots: list[PlotRef]
    other_plots: list[str] = []
    more_plots: int = 0
    closed_missing: list[str] = []
    rep_files: list[str] = []  # .rep/.dsf/.dtf files in the workspace, for debrief-calc's import-rep
    more_rep_files: int = 0
    dpf_files: list[str] = []  # legacy Debrief .dpf plots, for debrief-calc's import-dpf
    more_dpf_files: int = 0


class OpenAnswer(_OnPlot):
    """``debrief_open_plot``: the plot opened and every plot open now."""

    _if_set = frozenset({"open_note"})
    title: str = ""
    open_plots: list[str] = []
    open_note: str | None = None  # with more than one plot open: pass filename to every call


class CloseAnswer(_Ok):
    """``debrief_close_plot``: whether it was open, and the plots still open."""

    filename: str
    was_open: bool = False
    open_plots: list[str] = []


class FeaturesAnswer(_OnPlot):
    """``debrief_get_features``: one page of features (``next_cursor`` None on the last)."""

    features: list[dict[str, Any]]
    detail: str = "summary"
    total: int = 0
    count: int = 0
    next_cursor: str | None = None
    note: str | None = None
    window: dict[str, Any] | None = None  # {start, end, source: asked|data}, and the plot's saved window's note


class SelectionAnswer(_OnPlot):
    """``debrief_get_selection``/``debrief_set_selection``: the selected ids."""

    selectedIds: list[str]
    count: int = 0
    truncated: bool = False
    missing_ids: list[str] = []


class TimeState(BaseModel):
    """A plot's time: the ``current`` time and the window ``start``..``end`` (ISO-8601)."""

    current: str = Field(max_length=64)
    start: str = Field(max_length=64)
    end: str = Field(max_length=64)


class TimeChange(BaseModel):
    """Any of current, start, end (ISO-8601); the others come from the saved window."""

    current: str | None = Field(default=None, max_length=64)
    start: str | None = Field(default=None, max_length=64)
    end: str | None = Field(default=None, max_length=64)


class ViewportState(BaseModel):
    """A viewport: ``bounds`` ``[west, south, east, north]`` in degrees."""

    model_config = ConfigDict(json_schema_extra=no_schema_description)
    bounds: Annotated[list[float], Field(min_length=4, max_length=4, description="[west, south, east, north]")]


class TimeAnswer(_OnPlot):
    """``debrief_get_time``/``debrief_set_time``: the time state (``derived``: from the features)."""

    _if_set = frozenset({"derived", "message"})
    timeState: TimeState | None = None
    derived: bool | None = None
    message: str | None = None


class ViewportAnswer(_OnPlot):
    """``debrief_get_viewport``, ``debrief_set_viewport``, ``debrief_zoom_to_selection``."""

    _if_set = frozenset({"message", "selectedIds", "ids"})
    viewportState: ViewportState | None = None
    message: str | None = None
    selectedIds: list[str] | None = None
    ids: list[str] | None = None


class ApplyAnswer(_OnPlot, WithImages):
    """``debrief_apply_command``: what changed, and what show*/logMessage asked to show
    (``display``; its pictures in ``images``)."""

    _if_set = frozenset({"selectedIds"})
    changed: bool
    message: str = ""
    added_ids: list[str] = []
    updated_ids: list[str] = []
    deleted_ids: list[str] = []
    selectedIds: list[str] | None = None
    display: list[dict[str, Any]] = []


class PropertiesAnswer(_OnPlot):
    """``debrief_set_properties``: the features changed (and narrative entries relinked)."""

    _if_set = frozenset({"relinked_ids"})
    changed: bool
    message: str = ""
    updated_ids: list[str] = []
    relinked_ids: list[str] | None = None


class CreateAnswer(_OnPlot):
    """``debrief_create_plot``: the new plot, its features' ids and refs, its time and viewport, and
    the window the copies were cut to (saved as the plot's) when one was asked."""

    _if_set = frozenset({"open_note", "window"})
    title: str
    open_plots: list[str] = []
    open_note: str | None = None  # with more than one plot open: pass filename to every call
    added_ids: list[str] = []
    added_refs: list[str] = []
    timeState: TimeState | None = None
    viewportState: ViewportState | None = None
    message: str = ""
    window: dict[str, Any] | None = None  # the window the copies were cut to, saved as the plot's


class UndoAnswer(_OnPlot):
    """``debrief_undo``: what was undone and how many changes are left to undo."""

    _if_set = frozenset({"selectedIds"})
    undone: str
    remaining: int = 0
    selectedIds: list[str] | None = None


class RangeDrawn(BaseModel):
    """The range line of ``cpa``: between which tracks, when, how far as labelled (yd below
    10,000 yd, else nm), whether an inset magnifies it (too short to see), and the bounds to
    render as ``fit`` to see it large."""

    between: list[str]
    time: str
    value: float
    unit: str
    text: str
    inset: bool = False
    cpa_bounds: list[float]


class CutsShown(BaseModel):
    """One sensor's cuts on a picture: its cuts in all, those active then (from their time to 30
    minutes after it, at the picture's time; inside its window), and those drawn (every
    ``every``-th active one by number, and the newest, when more than 60 are active); the
    ambiguous bearings drawn (dashed), the cuts drawn without a range and the length they are drawn
    to (nm), and for a selected sensor the times of the cuts drawn."""

    model_config = ConfigDict(extra="forbid")
    id: str
    name: str
    host: str | None = None
    cuts: int
    active: int
    drawn: int
    every: int = 1
    ambiguous_drawn: int = 0
    without_range: int = 0
    no_range_length_nm: float | None = None
    times: list[str] | None = None


class RenderAnswer(_OnPlot, WithImages):
    """``debrief_render_plot``: what the picture shows; the PNG is ``images[0]``."""

    _if_set = frozenset({"range", "hidden_inactive", "unplaced", "note", "span", "outside_window", "framed", "cuts"})
    mediaType: str
    width: int = 0
    height: int = 0
    bytes: int = 0
    time: str | None = None
    time_source: str | None = None  # asked, or the plot's current time (a new plot's: its window's end)
    fit: str  # what was shown: viewport, all (also when the plot has no viewport), selection, window, bounds
    bounds: list[float]  # [west, south, east, north] of the area shown, padded to at most 2:1 (or 1:2)
    selectedIds: list[str] = []
    range: RangeDrawn | None = None
    hidden_inactive: list[str] | None = None  # zones/points in view but not active at time, so not drawn
    unplaced: list[str] | None = None  # narrative entries due at time that no track of the plot holds, not drawn
    note: str | None = None  # the area shown padded beyond the one asked (to at most 2:1)
    span: list[str] | None = None  # the period the tracks drawn cover
    outside_window: list[str] | None = None  # tracks with nothing in the window, not drawn
    framed: dict[str, list[str]] | None = None  # fit="window": the tracks, and the zones they were in (or selected)
    window: dict[str, Any] | None = None  # {start, end, source: asked|plot|data}: the window drawn
    cuts: list[CutsShown] | None = None  # each sensor's cuts: in all, active at time, drawn (thinned beyond 60)


class ViewData(_OnPlot):
    """The live view's data (``debrief_calc.state.view.view_data``); with ``changed: false``
    only the revision and the selection."""

    _if_set = frozenset({"title", "time", "viewport", "bounds", "features", "max_points", "window", "tote"})
    changed: bool = True
    selection: list[str] = []
    title: str | None = None
    time: dict[str, Any] | None = None
    viewport: list[float] | None = None
    bounds: list[float] | None = None
    features: list[dict[str, Any]] | None = None
    max_points: int | None = None
    window: dict[str, Any] | None = None  # {start, end, source}: the window the tracks are cut to
    # tote_at: {time, unit, primary {id, name}, rows [{id, name, range, bearing, ...}], note, error}
    tote: dict[str, Any] | None = None


def _rpc(err: SuiteError) -> SuiteError:
    """The error with its JSON-RPC number in ``details.rpc_code`` and its details bounded."""
    details: dict[str, Any] = {}
    for key, value in err.details.items():
        if isinstance(value, list) and len(value) > 50:
            details[f"{key}_count"] = len(value)
            details[key] = value[:50]
        elif isinstance(value, str) and len(value) > 2_000:
            details[key] = value[:2_000] + "…"
        else:
            details[key] = value
    details.setdefault("rpc_code", RPC_CODES.get(err.code, _RPC_OTHER.get(err.code, -32602)))
    err.details = details
    if len(err.message) > 2_000:
        err.message = err.message[:2_000] + "…"
    return err


def state_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The state tools' failure: ``{success: false, error: {code, message, details}, nextAction}``."""
    return {
        "success": False,
        "error": _rpc(err).to_dict(),
        "nextAction": err.next_action or _NEXT.get(err.code, "Read error.message, correct the call and try again."),
    }


def envelope_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    """The callback pair's failure: ``{success: false, error, nextAction}`` as every other tool of
    the server answers (and ``callbackArgs`` for an answer that can be sent again)."""
    return failure_answer(_rpc(err))
