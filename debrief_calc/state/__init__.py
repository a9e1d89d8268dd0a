"""The plot-state domain of ``debrief-state-mcp``, knowing nothing about MCP.

- :mod:`.filenames` which plot names a client may give; :mod:`.plotfile` lossless load and
  save, the parse cache, ``modify_plot`` (locked read-modify-write); :mod:`.plotdoc` one parsed
  plot and its drafts; :mod:`.jsonfmt` the layout-keeping writer; :mod:`.metadata` the time and
  viewport features inside a plot.
- :mod:`.cmdcheck` and :mod:`.commands` the DebriefCommand, checked then applied all or nothing.
- :mod:`.render` a PNG picture of a plot.
- :mod:`.errors` the state error codes with their JSON-RPC numbers.

The names below are imported on first use, so ``import debrief_calc.state`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CommandOutcome": "commands",
    "apply_command": "commands",
    "apply_to_plot": "commands",
    "PLOT_CACHE": "plotfile",
    "PlotCache": "plotfile",
    "PlotDoc": "plotfile",
    "create_plot_file": "plotfile",
    "list_plot_files": "plotfile",
    "load_plot": "plotfile",
    "modify_plot": "plotfile",
    "plot_title": "plotfile",
    "save_plot": "plotfile",
    "validate_plot_filename": "plotfile",
    "render_plot_png": "render",
}

__all__ = [
    "PLOT_CACHE",
    "CommandOutcome",
    "PlotCache",
    "PlotDoc",
    "apply_command",
    "apply_to_plot",
    "create_plot_file",
    "list_plot_files",
    "load_plot",
    "modify_plot",
    "plot_title",
    "render_plot_png",
    "save_plot",
    "validate_plot_filename",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
