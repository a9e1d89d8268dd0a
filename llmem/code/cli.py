"""Entry point of ``llmem-mcp``: the shared command line serving the code memory."""

from __future__ import annotations

import sys

from llmem.core.cli import ServerFactory, server_command

__all__ = ["main"]


def _llmem_factory() -> ServerFactory:
    from llmem.code.server import build_server

    return build_server


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``llmem-mcp``."""
    command = server_command(
        "llmem-mcp",
        _llmem_factory,
        "Serve code outlines and LLM-written notes about a codebase over MCP (stdio by default).",
    )
    command.main(args=argv if argv is not None else sys.argv[1:], prog_name="llmem-mcp")
