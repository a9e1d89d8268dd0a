"""Entry point of ``llmem-mcp``: the shared command line serving the code memory."""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING, Any

from llmem.core.cli import ServerFactory, server_command

if TYPE_CHECKING:
    from llmem.core.config import ServerConfig

__all__ = ["main"]

log = logging.getLogger("llmem.code.cli")


def _llmem_factory() -> ServerFactory:
    from llmem.code.server import build_server

    def build(config: ServerConfig) -> Any:  # the SuiteServer build_server made
        server = build_server(config)
        if server.runtime.ready:
            # The first answer of a process compares every outlined file with its outline once
            # (llmem.code.freshness): begun now, it is mostly done when the client's first
            # question comes after its handshake.
            threading.Thread(target=_compare_outlines, args=(server,), name="llmem-freshness", daemon=True).start()
        return server

    return build


def _compare_outlines(server: Any) -> None:
    try:
        from llmem.code.search import search_index_for

        store = server.runtime.store
        index = search_index_for(store, server.limits.max_file_bytes)
        if index.db.file.is_file():  # a store that was never searched is not built here
            index.freshness.changed(".")
    except Exception:  # the first question compares them instead
        log.info("comparing the outlines with their files at start-up failed", exc_info=True)


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``llmem-mcp``."""
    command = server_command(
        "llmem-mcp",
        _llmem_factory,
        "Serve code outlines and LLM-written notes about a codebase over MCP (stdio by default).",
    )
    command.main(args=argv if argv is not None else sys.argv[1:], prog_name="llmem-mcp")
