"""Debrief maritime analysis and plot state, for servers and for scripts.

``debrief-calc-mcp`` and ``debrief-state-mcp`` serve it over MCP; a Python script uses the same
operations through :class:`Workspace`, one method per tool of both servers::

    import debrief_calc as dc

    ws = dc.Workspace("exercise")  # the servers' --workspace (and --store, if not the default)
    run = ws.run_tool("import-rep", parameters={"path": "boat1.rep"})
    ws.create_plot("exercise.plot.json", features=[{"ref": run.stored["ref"]}])
    try:
        ws.apply_command(command, filename="exercise.plot.json", expected_revision=revision)
    except dc.Conflict as err:  # err.code == "CONFLICT", as the tool answers
        ...

Everything here is loaded when first used: ``import debrief_calc`` costs next to nothing, and
nothing of it ever imports MCP.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: importing typing would be most of this module's cost
if TYPE_CHECKING:
    from typing import Any

    from debrief_calc._workspace import Workspace
    from debrief_calc.calc.answers import (
        PlotFeatures,
        RunAnswer,
        SeriesAnswer,
        StoredAnswer,
        ToolDescription,
        ToolList,
    )
    from debrief_calc.errors import (
        CalcError,
        Conflict,
        ExecutionError,
        FeatureNotFound,
        InvalidCommand,
        InvalidContext,
        InvalidFilename,
        KindMismatch,
        MultiplePlots,
        PayloadTooLarge,
        PlotExists,
        PlotNotFound,
        PlotUnreadable,
        StateError,
        ToolNotFound,
        ValidationFailed,
    )
    from debrief_calc.state.answers import (
        ApplyAnswer,
        CloseAnswer,
        CreateAnswer,
        FeaturesAnswer,
        OpenAnswer,
        PlotList,
        PropertiesAnswer,
        RenderAnswer,
        SelectionAnswer,
        TimeAnswer,
        TimeChange,
        UndoAnswer,
        ViewData,
        ViewportAnswer,
        ViewportState,
    )
    from llmem.core.config import Limits
    from llmem.core.envelope import Envelope
    from llmem.core.errors import (
        ArtifactNotFound,
        PathOutsideWorkspace,
        ResultInvalid,
        ResultTooLarge,
        SourceChanged,
        SuiteError,
        TicketError,
        UnsupportedTask,
    )
    from llmem.core.images import Image

#: Where each exported name is defined (loaded at first use).
_HOMES: dict[str, str] = {
    "Workspace": "debrief_calc._workspace",
    "Limits": "llmem.core.config",
    "Image": "llmem.core.images",
    "Envelope": "llmem.core.envelope",
    **dict.fromkeys(
        ("PlotFeatures", "RunAnswer", "SeriesAnswer", "StoredAnswer", "ToolDescription", "ToolList"),
        "debrief_calc.calc.answers",
    ),
    **dict.fromkeys(
        (
            "ApplyAnswer",
            "CloseAnswer",
            "CreateAnswer",
            "FeaturesAnswer",
            "OpenAnswer",
            "PlotList",
            "PropertiesAnswer",
            "RenderAnswer",
            "SelectionAnswer",
            "TimeAnswer",
            "TimeChange",
            "UndoAnswer",
            "ViewData",
            "ViewportAnswer",
            "ViewportState",
        ),
        "debrief_calc.state.answers",
    ),
    **dict.fromkeys(
        (
            "CalcError",
            "Conflict",
            "ExecutionError",
            "FeatureNotFound",
            "InvalidCommand",
            "InvalidContext",
            "InvalidFilename",
            "KindMismatch",
            "MultiplePlots",
            "PayloadTooLarge",
            "PlotExists",
            "PlotNotFound",
            "PlotUnreadable",
            "StateError",
            "ToolNotFound",
            "ValidationFailed",
        ),
        "debrief_calc.errors",
    ),
    **dict.fromkeys(
        (
            "ArtifactNotFound",
            "PathOutsideWorkspace",
            "ResultInvalid",
            "ResultTooLarge",
            "SourceChanged",
            "SuiteError",
            "TicketError",
            "UnsupportedTask",
        ),
        "llmem.core.errors",
    ),
}

__all__ = [
    "ApplyAnswer",
    "ArtifactNotFound",
    "CalcError",
    "CloseAnswer",
    "Conflict",
    "CreateAnswer",
    "Envelope",
    "ExecutionError",
    "FeatureNotFound",
    "FeaturesAnswer",
    "Image",
    "InvalidCommand",
    "InvalidContext",
    "InvalidFilename",
    "KindMismatch",
    "Limits",
    "MultiplePlots",
    "OpenAnswer",
    "PathOutsideWorkspace",
    "PayloadTooLarge",
    "PlotExists",
    "PlotFeatures",
    "PlotList",
    "PlotNotFound",
    "PlotUnreadable",
    "PropertiesAnswer",
    "RenderAnswer",
    "ResultInvalid",
    "ResultTooLarge",
    "RunAnswer",
    "SelectionAnswer",
    "SeriesAnswer",
    "SourceChanged",
    "StateError",
    "StoredAnswer",
    "SuiteError",
    "TicketError",
    "TimeAnswer",
    "TimeChange",
    "ToolDescription",
    "ToolList",
    "ToolNotFound",
    "UndoAnswer",
    "UnsupportedTask",
    "ValidationFailed",
    "ViewData",
    "ViewportAnswer",
    "ViewportState",
    "Workspace",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'debrief_calc' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
