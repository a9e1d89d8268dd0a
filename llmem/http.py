"""The optional streamable-HTTP transport (suite.md §10): ``/mcp`` plus ``GET /health``.

Bound to loopback by default with Host and Origin checks on (DNS-rebinding protection).
Binding any other address keeps the checks on: only the hosts and origins given with
``--allow-host``/``--allow-origin`` (plus the bound address) are admitted, and a warning says so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from llmem.config import ServerConfig

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["security_settings", "serve_http"]

log = logging.getLogger("llmem.http")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def security_settings(host: str, port: int, extra_hosts: tuple[str, ...], extra_origins: tuple[str, ...]):  # type: ignore[no-untyped-def]
    from mcp.server.transport_security import TransportSecuritySettings

    names = {host, *(LOOPBACK if host in LOOPBACK else ())}
    hosts = sorted({*(f"{h}:{port}" for h in names), *names, *extra_hosts})
    origins = sorted({*(f"http://{h}:{port}" for h in names), *extra_origins})
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def build_app(server: MCPServer[Any], cfg: ServerConfig):  # type: ignore[no-untyped-def]
    """The server's streamable-HTTP app with ``GET /health`` (any MCPServer: this module knows
    nothing of the suite's bootstrap, which calls it)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    port = cfg.port or 0

    @server.custom_route("/health", methods=["GET"])  # type: ignore[untyped-decorator]
    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "server": server.name, "version": server.version})

    settings = security_settings(cfg.host, port, cfg.allowed_hosts, cfg.allowed_origins)
    return server.streamable_http_app(transport_security=settings, host=cfg.host)


async def serve_http(server: MCPServer[Any], cfg: ServerConfig) -> None:
    import uvicorn

    if cfg.host not in LOOPBACK:
        log.warning(
            "serving HTTP on %s, beyond loopback: only the allowed hosts %s and origins %s are admitted",
            cfg.host,
            list(cfg.allowed_hosts),
            list(cfg.allowed_origins),
        )
    app = build_app(server, cfg)
    config = uvicorn.Config(app, host=cfg.host, port=cfg.port or 0, log_level=cfg.log_level.lower(), log_config=None)
    await uvicorn.Server(config).serve()
