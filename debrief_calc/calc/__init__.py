"""The analysis server ``debrief-calc-mcp``: :mod:`.service` (the registry served, plot
references read, results kept; no MCP) and :mod:`.server` (its wiring to MCP tools), the same
shape as :mod:`debrief_calc.state`'s ``service`` and ``server``."""
