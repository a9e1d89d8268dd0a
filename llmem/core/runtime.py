"""The workspace and store a server works on, settled at start-up or at the first call."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.server.mcpserver import Context

from llmem.core.config import Limits, ServerConfig
from llmem.core.errors import SuiteError
from llmem.core.store import ArtifactStore

__all__ = ["Runtime"]

T = TypeVar("T")

log = logging.getLogger("llmem.core.serve")


class Runtime:
    """The workspace and store a server works on, settled at the first call when not given."""

    def __init__(self, config: ServerConfig):
        self.config = config
        self.limits = config.limits
        self._workspace: Path | None = None
        self._store: ArtifactStore | None = None
        self._services: dict[Callable[..., Any], Any] = {}
        self.workspace_source = "unset"
        if config.workspace is not None:
            self._settle(config.workspace, "--workspace / LLMEM_WORKSPACE")

    def _settle(self, workspace: Path, source: str) -> None:
        from llmem.core.config import resolve_store_root

        ws = workspace.expanduser().resolve()
        if not ws.is_dir():
            raise SuiteError(f"workspace {str(ws)!r} is not a folder", code="WORKSPACE_INVALID")
        self._workspace = ws
        self._store = ArtifactStore(resolve_store_root(self.config.store, ws), ws)
        self.workspace_source = source
        log.info("workspace chosen", extra={"workspace": str(ws), "source": source, "store": str(self._store.root)})

    def service(self, factory: Callable[[ArtifactStore, Limits], T]) -> T:
        """The one ``factory(store, limits)`` of this server, made at first use (after the workspace)."""
        made = self._services.get(factory)
        if made is None:
            made = self._services[factory] = factory(self.store, self.limits)
        return made

    @property
    def ready(self) -> bool:
        return self._workspace is not None

    @property
    def workspace(self) -> Path:
        if self._workspace is None:
            self._settle(Path.cwd(), "current directory (no --workspace and no client roots)")
        assert self._workspace is not None
        return self._workspace

    @property
    def store(self) -> ArtifactStore:
        _ = self.workspace
        assert self._store is not None
        return self._store

    async def settle_from_client(self, ctx: Context[Any, Any] | None) -> None:
        """Without --workspace: the client's first file:// root if it offers roots, else the cwd."""
        if self.ready:
            return
        try:
            caps = ctx.client_capabilities if ctx is not None else None
            if ctx is not None and caps is not None and caps.roots is not None:
                with anyio.fail_after(5), warnings.catch_warnings():
                    # Deprecated in the 2026-07-28 era, but the handshake-era IDEs still offer roots.
                    warnings.simplefilter("ignore")
                    roots = await ctx.session.list_roots()
                for root in roots.roots:
                    uri = str(root.uri)
                    if uri.startswith("file://"):
                        from urllib.parse import unquote, urlparse

                        candidate = Path(unquote(urlparse(uri).path))
                        if candidate.is_dir() and not self.ready:
                            self._settle(candidate, f"client root {uri}")
                            return
        except Exception as exc:  # roots are best effort: any failure falls back to the cwd
            log.info("client roots unavailable: %r", exc)
        _ = self.workspace
