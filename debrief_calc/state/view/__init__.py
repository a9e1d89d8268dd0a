"""The live plot view: an MCP App (SEP-1865, ``io.modelcontextprotocol/ui``) of debrief-state.

One self-contained HTML5 document (``plot_view.html``: its script and styles inline, nothing
fetched from outside) that a host renders beside the results of the tools that link it by
``_meta.ui.resourceUri``. It draws the plot as vectors from ``view_data``, which it reads
through the host with ``tools/call`` of the app-only tool ``debrief_view_data``; its slider,
clicks and "save view" call ``debrief_set_time``, ``debrief_set_selection`` and
``debrief_set_viewport``, so every client of the plot sees what the analyst did.

Domain code: no MCP here. :func:`debrief_calc.state.view.data.view_data` is the drawing's data,
thinned to a point budget so a million-point track still reaches the page in one answer; every
track says how many points it has and how many are drawn, every sensor how many cuts (they share
the budget). The legend's rows hide and show features (``debrief_set_properties``' ``visible``);
a selected sensor's cuts are listed in an info panel. This module stays light (the
server imports it at start-up); the data module brings numpy and the render's readers.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Final

__all__ = ["DEFAULT_POINTS", "MIME_TYPE", "VIEW_META", "VIEW_URI", "view_html"]

VIEW_URI: Final = "ui://debrief-state/plot-view"
MIME_TYPE: Final = "text/html;profile=mcp-app"
#: No outside domain at all: the view needs nothing beyond the host's postMessage channel.
VIEW_META: Final[dict[str, Any]] = {"ui": {"csp": {}, "prefersBorder": True}}
#: points drawn of all tracks and cuts of all sensors together, shared out by their sizes
DEFAULT_POINTS: Final = 6_000


@functools.cache
def view_html() -> str:
    """The view's HTML document."""
    return resources.files(__package__).joinpath("plot_view.html").read_text(encoding="utf-8")
