"""The Python API of Debrief: :class:`Workspace`, one method per tool of both Debrief servers.

The servers are a thin layer over it: each tool of ``debrief-calc-mcp`` and ``debrief-state-mcp``
is made from the Workspace method of the same name (:mod:`debrief_calc._mcp_tools`), its input
schema from the method's signature, so the two cannot drift apart.
"""

from __future__ import annotations

from debrief_calc._workspace._analysis import Analysis
from debrief_calc._workspace._base import Change, recording_changes
from debrief_calc._workspace._plot_state import PlotState
from debrief_calc._workspace._plots import Plots
from debrief_calc._workspace._views import Views

__all__ = ["Change", "Workspace", "recording_changes"]


class Workspace(Analysis, Plots, PlotState, Views):
    """A Debrief workspace for scripts: the folder of ``.plot.json`` and REP files, and the
    artifact store the servers share, with one method per tool of both Debrief servers.

    The same arguments (by the tools' parameter names; required ones may be positional), the
    same checks, the same answers (the tools' pydantic models: ``answer.model_dump(mode="json")``
    is the tool's JSON; pictures in ``answer.images``), and the same errors, raised as the
    exception of the tool's error code (:class:`Conflict` for ``CONFLICT``, …; all are
    :class:`SuiteError`, with ``code``, ``message`` and ``details``). Every write takes the same
    cross-process locks as the servers, so a script and a running server can change the same plot
    at once and nothing is lost; a server (and its live view) sees a script's writes, and the
    script sees the server's, because the state is in files.

    Answers keep to the servers' size cap (``limits.answer_chars``): long lists come in pages
    (``cursor``/``next_cursor``) and large runs as a stored reference, exactly as a model gets them.
    What a server adds for its transport does not apply to a script: the input size cap, the rate
    limit, the per-call timeout, the final check of an answer's size. One Workspace may be used
    from several threads (a server does); its plot changes are the servers' ``resources/updated``
    notifications only when made through a server.

    Args:
        path: the workspace folder (``--workspace`` of the servers).
        store: where the artifact store is, as the servers' ``--store`` says it: ``workspace``
            (``<path>/.llmem``), ``user`` (under the user's data folder), or a path; by default
            ``LLMEM_STORE`` if it is set, else ``workspace``, as for the servers. Give the
            servers' setting, so that the script shares their results, selections and history.
        limits: the limits (default: the servers', from the ``LLMEM_*`` environment variables).

    Raises:
        ValidationFailed: ``path`` is not a folder, or ``store`` is empty.

    Example:
        >>> import debrief_calc as dc
        >>> ws = dc.Workspace("exercise")  # doctest: +SKIP
        >>> boat1 = ws.run_tool("import-rep", parameters={"path": "boat1.rep"}).stored["ref"]  # doctest: +SKIP
        >>> ws.create_plot("exercise.plot.json", features=[{"ref": boat1}])  # doctest: +SKIP
    """
