"""Entry points of ``debrief-calc-mcp`` and ``debrief-state-mcp`` (the shared command line)."""

from __future__ import annotations

import sys

from llmem.core.cli import ServerFactory, server_command

__all__ = ["main_calc", "main_state"]


def _calc_factory() -> ServerFactory:
    from debrief_calc.calc.server import build_server

    return build_server


def _state_factory() -> ServerFactory:
    from debrief_calc.state.server import build_server

    return build_server


def main_calc(argv: list[str] | None = None) -> None:
    """Entry point of ``debrief-calc-mcp``."""
    command = server_command(
        "debrief-calc-mcp",
        _calc_factory,
        "Serve Debrief maritime analysis tools (track statistics, range and bearing, closest approach, "
        "zone transits, REP import) over MCP (stdio by default).",
    )
    command.main(args=argv if argv is not None else sys.argv[1:], prog_name="debrief-calc-mcp")


def main_state(argv: list[str] | None = None) -> None:
    """Entry point of ``debrief-state-mcp``."""
    command = server_command(
        "debrief-state-mcp",
        _state_factory,
        "Serve the state of Debrief .plot.json plots (features, selection, time, viewport, commands) "
        "over MCP (stdio by default).",
    )
    command.main(args=argv if argv is not None else sys.argv[1:], prog_name="debrief-state-mcp")
