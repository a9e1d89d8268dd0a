"""The analysis server ``debrief-calc-mcp``: :mod:`.service` (the registry served, plot
references read, results kept; no MCP), :mod:`.results` and :mod:`.series` (stored results read
back and drawn) and :mod:`.server` (its wiring to MCP tools), the same shape as
:mod:`debrief_calc.state`. The tools themselves are :mod:`debrief_calc.analysis`."""
