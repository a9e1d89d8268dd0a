"""The plot-state server ``debrief-state-mcp``: :mod:`.service` (its operations on the plots of
the workspace, knowing nothing about MCP, with the open set, answers cut to the cap and the
callback tasks beside it) and :mod:`.server` (its wiring to MCP tools, resources and the live
view), the same shape as :mod:`debrief_calc.calc`. The plot files themselves are
:mod:`debrief_calc.formats`; commands, history and pictures :mod:`debrief_calc.plots`."""
