"""The host's web side (seed 004 §2.1): the page at ``/``, ``GET /health``, the chats' and files'
HTTP API (:mod:`.chats_api`) and the WebSocket at ``/ws`` (:mod:`.chat_socket`, its protocol).

Who may come in is :class:`~llmem.host.access.Access`'s to say (Host header, token, Origin);
each session has a rate limit. Secrets (the providers' keys, the token) are scrubbed from every
frame before it leaves.

MCP Apps views (a tool result's ``ui://`` view, shown live on the page) run in a sandbox proxy
served by :func:`build_apps_app` on a second port, so on another origin than the page: that
origin cannot open ``/ws`` (its Origin is not the page's), the page's CSP lets it be framed
(``frame-src``) and the proxy lets only the page frame it (``frame-ancestors``). A view's
``tools/call`` and ``resources/read`` come through the page as ``app`` frames, to the view's own
server only, under their own rate limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from llmem.core.http import LOOPBACK, is_loopback  # the servers' own rule for what loopback is
from llmem.host.access import COOKIE, Access, host_name
from llmem.host.apps import view_csp
from llmem.host.chat_socket import ChatSockets
from llmem.host.chats_api import chat_routes
from llmem.host.orchestrator import Orchestrator
from llmem.host.sessions import Session, SessionManager
from llmem.host.uploads import DEFAULT_LIMIT

__all__ = ["LOOPBACK", "WebSettings", "build_app", "build_apps_app", "is_loopback"]

log = logging.getLogger("llmem.host.web")

_PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/apps.js": ("apps.js", "text/javascript; charset=utf-8"),
    "/apps.css": ("apps.css", "text/css; charset=utf-8"),
    "/chats.js": ("chats.js", "text/javascript; charset=utf-8"),
    "/attach.js": ("attach.js", "text/javascript; charset=utf-8"),
}
# nothing from outside: scripts, styles and sockets from this host only, pictures inline; frames
# only from the MCP Apps sandbox proxy (added per request: its port is known once it serves)
_PAGE_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
_HEADERS = {
    "Content-Security-Policy": _PAGE_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_SANDBOX_FILES = {
    "/sandbox.html": ("sandbox.html", "text/html; charset=utf-8"),
    "/sandbox.js": ("sandbox.js", "text/javascript; charset=utf-8"),
}


@dataclass
class WebSettings:
    host: str = "127.0.0.1"
    port: int = 60120
    auth_token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()  # scrubbed from every frame
    #: the MCP Apps sandbox proxy's port (another origin than the page); 0 while it is not serving
    apps_port: int = 0
    #: where files attached on the page are saved (the folder ``${workspaceFolder}`` stands for)
    workspace: Path = field(default_factory=Path.cwd)
    upload_limit: int = DEFAULT_LIMIT  # bytes of one attached file


class _Redactor:
    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = [s for s in secrets if s]

    def __call__(self, message: dict[str, Any]) -> str:
        text = json.dumps(message, ensure_ascii=False, default=str)
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, "[redacted]")
        return text


class _StreamScrubber:
    """Streamed text comes in pieces, and a secret the model writes can be cut across them: hold
    back the end of the text that could still be the start of a secret until the next piece (or
    any other frame) says what it is."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = [s for s in secrets if s]
        self.held = ""

    def piece(self, piece: str) -> str:
        text = self.held + piece
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        hold = max((k for s in self.secrets for k in range(1, len(s)) if text.endswith(s[:k])), default=0)
        self.held = text[len(text) - hold :] if hold else ""
        return text[: len(text) - hold] if hold else text

    def flush(self) -> str:
        held, self.held = self.held, ""
        return held


def _origins(names: set[str], port: int) -> list[str]:
    """``http://name:port`` for each name this host answers to."""
    return sorted(f"http://{f'[{n}]' if ':' in n else n}:{port}" for n in names)


def _csp_source(origin: str) -> str:
    """An origin as a CSP source: CSP has no IPv6 literals, so ``[::1]`` becomes any host on that port."""
    parts = urlsplit(origin)
    return f"{parts.scheme}://*:{parts.port}" if parts.hostname and ":" in parts.hostname else origin


def build_apps_app(settings: WebSettings) -> Starlette:
    """The sandbox proxy of MCP Apps views, on its own port: another origin than the page, so a
    view shares nothing with it (SEP-1865 "Sandbox proxy"). It serves the proxy page and its
    script, nothing else: no WebSocket, no token (the page is static and holds no secret). The
    proxy page's header carries the policy built from the view's declared ``csp`` (``?csp=``),
    which the view's srcdoc document inherits; the proxy adds the same policy as a meta tag."""
    local = is_loopback(settings.host)
    names = {settings.host.lower(), *(LOOPBACK if local else ())}
    files = resources.files("llmem.host") / "page"

    async def serve(request: Request) -> Response:
        if local and host_name(request.headers.get("host", "")) not in names:
            return PlainTextResponse("this host answers only to its own name (Host header refused)", status_code=403)
        name, media = _SANDBOX_FILES[request.url.path]
        policy = "default-src 'none'; frame-ancestors 'none'"
        if name == "sandbox.html":
            pages = {*_origins(names, settings.port), *(o.rstrip("/").lower() for o in settings.allowed_origins)}
            page_origin = request.query_params.get("host", "").lower()
            given = urlsplit(page_origin)
            # beyond loopback the page answers to any name (its token guards it): any name on its port
            anywhere = not local and given.scheme in ("http", "https") and given.port == settings.port
            if page_origin not in pages and not (anywhere and page_origin == f"{given.scheme}://{given.netloc}"):
                return PlainTextResponse(
                    "host must be the origin of this host's chat page (the only page that may embed a view)",
                    status_code=403,
                )
            try:
                declared = json.loads(request.query_params.get("csp") or "{}")
            except ValueError:
                return PlainTextResponse("csp must be the view's _meta.ui.csp as JSON", status_code=400)
            declared = declared if isinstance(declared, dict) else {}
            policy = f"{view_csp(declared)}; frame-ancestors {_csp_source(page_origin)}"
            log.info("sandbox proxy serves a view under the CSP: %s", policy)
        headers = {**_HEADERS, "Content-Security-Policy": policy}
        return Response((files / name).read_bytes(), media_type=media, headers=headers)

    return Starlette(routes=[Route(path, serve, methods=["GET"]) for path in _SANDBOX_FILES])


def build_app(
    orchestrator: Orchestrator,
    sessions: SessionManager,
    settings: WebSettings,
    turns: TaskGroup,
) -> Starlette:
    """The Starlette app. ``turns``: the task group turns run in, so a turn outlives its socket."""
    token = settings.auth_token
    redact = _Redactor([*settings.secrets, token or ""])
    access = Access(settings.host, token, settings.allowed_origins)
    page = resources.files("llmem.host") / "page"
    models = orchestrator.models

    def servers() -> dict[str, Any]:
        states = orchestrator.coordinator.states()
        return {
            "servers": [s.name for s in states if s.state in ("running", "failing")],
            "failedServers": [s.name for s in states if s.state in ("failed", "stopped")],
            "serverStates": [asdict(s) for s in states],
        }

    def hello(session: Session) -> dict[str, Any]:
        """What a page learns first: its chat, its model and the others, the servers and their state."""
        chosen = models.describe(session.model)
        return {
            "sessionId": session.id,
            "turnRunning": session.turn_running,
            "title": session.title,
            "model": chosen["id"],
            "models": models.listing(),
            "provider": chosen["label"],
            "standIn": chosen["standIn"],
            "suggestions": chosen["suggestions"],
            **servers(),
            "tools": len(orchestrator.tools),
            "appsPort": settings.apps_port or None,  # MCP Apps views: the sandbox proxy's port
            "uploadLimit": settings.upload_limit,
        }

    chats = ChatSockets(orchestrator, sessions, turns, workspace=settings.workspace, hello=hello)

    async def serve_page(request: Request) -> Response:
        why = access.refused(request)
        if why:
            return PlainTextResponse(why, status_code=access.status_of(why))
        name, media = _PAGE_FILES[request.url.path]
        headers = dict(_HEADERS)
        if settings.apps_port:  # the proxy: this page's host name, the proxy's port
            proxy = f"http://{request.headers.get('host', '').rsplit(':', 1)[0]}:{settings.apps_port}"
            headers["Content-Security-Policy"] = f"{_PAGE_CSP}; frame-src {_csp_source(proxy)}"
        response = Response((page / name).read_bytes(), media_type=media, headers=headers)
        if token is not None and request.query_params.get("token"):
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    async def health(request: Request) -> Response:
        why = access.refused(request)
        if why:
            return JSONResponse({"status": "refused", "error": why}, status_code=access.status_of(why))
        return JSONResponse(
            {
                "status": "ok",
                "provider": models.get(None).label,
                "standIn": models.describe()["standIn"],
                "models": models.listing(),
                **servers(),
                "tools": len(orchestrator.tools),
                "promptTokens": orchestrator.fixed_tokens,
                "sessions": len(sessions),
            },
            headers={"Cache-Control": "no-store"},
        )

    async def chat_socket(ws: WebSocket) -> None:
        why = access.refused(ws)
        if why or not access.origin_ok(ws):
            log.warning("websocket refused: %s", why or f"foreign Origin {ws.headers.get('origin')!r}")
            await ws.close(code=1008)
            return
        await ws.accept()
        lock = anyio.Lock()
        scrubber = _StreamScrubber(redact.secrets)

        async def send(message: dict[str, Any]) -> None:
            frames = []
            if message.get("type") == "text":
                shown = scrubber.piece(str(message["payload"]["content"]))
                if shown:
                    frames.append(redact({"type": "text", "payload": {"content": shown}}))
            else:
                held = scrubber.flush()
                if held:
                    frames.append(redact({"type": "text", "payload": {"content": held}}))
                frames.append(redact(message))
            async with lock:
                for frame in frames:
                    await ws.send_text(frame)

        await chats.serve(ws, send)

    routes: list[BaseRoute] = [Route(path, serve_page, methods=["GET"]) for path in _PAGE_FILES]
    routes += [Route("/health", health, methods=["GET"]), WebSocketRoute("/ws", chat_socket)]
    routes += chat_routes(
        access=access,
        sessions=sessions,
        models=models,
        workspace=settings.workspace,
        upload_limit=settings.upload_limit,
        on_deleted=chats.deleted,
    )
    return Starlette(routes=routes)
