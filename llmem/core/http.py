"""The optional streamable-HTTP transport (suite.md §10): ``/mcp`` plus ``GET /health``.

Bound to loopback by default with Host and Origin checks on (DNS-rebinding protection).
Binding any other address keeps the checks on: only the hosts and origins given with
``--allow-host``/``--allow-origin`` (plus the bound address) are admitted, and a warning says so.
Beyond loopback a token is required (the command refuses to start without one); with a token,
every request must carry ``Authorization: Bearer <token>``, compared in constant time.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from llmem.core.config import ServerConfig

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["BearerAuth", "is_loopback", "security_settings", "serve_http"]

log = logging.getLogger("llmem.core.http")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self._token = app, token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        import hmac

        if scope["type"] in ("http", "websocket"):
            given = b""
            for name, value in scope.get("headers", ()):
                if name == b"authorization" and value[:7].lower() == b"bearer ":
                    given = value[7:].strip()
            if not hmac.compare_digest(given, self._token):
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                body = b'{"error": "a valid token is required: Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="mcp"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


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
    app = server.streamable_http_app(transport_security=settings, host=cfg.host)
    return BearerAuth(app, cfg.auth_token) if cfg.auth_token else app


async def serve_http(server: MCPServer[Any], cfg: ServerConfig) -> None:
    import uvicorn

    if not is_loopback(cfg.host) and not cfg.auth_token:
        # the command refuses this already; a caller building the config by hand is refused here
        raise RuntimeError(f"serving HTTP on {cfg.host}, beyond loopback, needs an auth token")
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
