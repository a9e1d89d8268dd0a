"""Debrief maritime analysis (debrief-calc-mcp) and plot state (debrief-state-mcp)."""
