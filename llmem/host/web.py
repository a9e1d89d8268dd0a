"""The host's web side (seed 004 §2.1): the page at ``/``, ``GET /health`` and the WebSocket at ``/ws``.

Security, in order of the checks: on loopback the Host header must name this host (no DNS
rebinding); with a token (required beyond loopback), every request and the WebSocket carry it
(``Authorization: Bearer``, the ``token`` query parameter, or the cookie the page gets when opened
with ``?token=``), compared in constant time; the WebSocket's Origin, when a browser sends one,
must be this host's own (or one given with ``--allow-origin``), so no other site's page can drive
it; each session has a rate limit. Secrets (the provider's key, the token) are scrubbed from
every frame before it leaves.

MCP Apps views (a tool result's ``ui://`` view, shown live on the page) run in a sandbox proxy
served by :func:`build_apps_app` on a second port, so on another origin than the page: that
origin cannot open ``/ws`` (its Origin is not the page's), the page's CSP lets it be framed
(``frame-src``) and the proxy lets only the page frame it (``frame-ancestors``). A view's
``tools/call`` and ``resources/read`` come through the page as ``app`` frames, to the view's own
server only, under their own rate limit.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import TaskGroup
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from llmem.core.http import LOOPBACK, is_loopback  # the servers' own rule for what loopback is
from llmem.host.apps import APP_MIME, ViewRefused, refused_origins, view_csp
from llmem.host.chat import ChatMessage, new_id
from llmem.host.coordinator import Coordinator
from llmem.host.errors import HostError
from llmem.host.orchestrator import OUTCOME_NOTES, SYSTEM_MESSAGES, Orchestrator
from llmem.host.sessions import MAX_PAGES, Session, SessionManager
from llmem.host.steps import step_title

__all__ = ["LOOPBACK", "WebSettings", "build_app", "build_apps_app", "is_loopback"]

log = logging.getLogger("llmem.host.web")

COOKIE = "llmem_host_token"
MAX_TEXT = 20_000
_PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    "/apps.js": ("apps.js", "text/javascript; charset=utf-8"),
    "/apps.css": ("apps.css", "text/css; charset=utf-8"),
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
REPLACED = (
    f"This page was disconnected: more than {MAX_PAGES} pages were open on this chat. Reconnect to carry on here."
)
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
    info: dict[str, Any] = field(default_factory=dict)  # provider, servers…: the connection payload


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


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _token_of(conn: HTTPConnection) -> str | None:
    auth = conn.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return conn.query_params.get("token") or conn.cookies.get(COOKIE)


def _host_name(header: str) -> str:
    host = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    return host.strip("[]").lower()


def _page_history(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as the page draws it after a reconnect."""
    calls = {c.id: c for m in history for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in history:
        if m.role in ("user", "assistant"):
            if m.content.strip():
                out.append({"role": m.role, "content": m.content})
        else:
            call = calls.get(m.tool_call_id or "")
            try:
                result: Any = json.loads(m.content)
            except ValueError:
                result = m.content[:20_000]
            result = OUTCOME_NOTES.get(m.outcome, result)  # the person's words, not the model's
            out.append(
                {
                    "role": "tool",
                    "tool": m.tool_name,
                    "callId": m.tool_call_id,
                    "arguments": call.arguments if call else None,
                    "result": result,
                    "isError": m.is_error,
                    "outcome": m.outcome or ("failed" if m.is_error else "done"),
                    "title": step_title(m.tool_name or "", call.arguments if call else None),
                    "headline": m.headline,
                    "durationMs": m.duration_ms,
                    "images": m.images,
                    **({"app": m.app} if m.app else {}),
                }
            )
            out += m.host_steps  # the callback's store, which the host ran itself, after the call
    return out


def _origins(names: set[str], port: int) -> list[str]:
    """``http://name:port`` for each name this host answers to."""
    return sorted(f"http://{f'[{n}]' if ':' in n else n}:{port}" for n in names)


def _csp_source(origin: str) -> str:
    """An origin as a CSP source: CSP has no IPv6 literals, so ``[::1]`` becomes any host on that port."""
    parts = urlsplit(origin)
    return f"{parts.scheme}://*:{parts.port}" if parts.hostname and ":" in parts.hostname else origin


async def _view_request(coordinator: Coordinator, payload: dict[str, Any]) -> dict[str, Any]:
    """A view's ``tools/call`` or ``resources/read`` (the page says which server the view belongs
    to): its JSON-RPC ``result`` or ``error``. Only the view's own server is asked; a tool must
    let views call it (its MCP Apps visibility has "app")."""
    server, method, params = payload.get("server"), payload.get("method"), payload.get("params")
    params = params if isinstance(params, dict) else {}
    if not isinstance(server, str) or server not in coordinator.servers:
        return _rpc_error(INVALID_PARAMS, f"payload.server must name a running server, not {server!r}")
    try:
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments")
            if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
                return _rpc_error(
                    INVALID_PARAMS, "tools/call needs params.name (a string) and params.arguments (an object)"
                )
            called = await coordinator.call_from_view(server, name, arguments)
            return {"result": called.result.model_dump(mode="json", by_alias=True, exclude_none=True)}
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str) or not uri:
                return _rpc_error(INVALID_PARAMS, "resources/read needs params.uri (a string)")
            read = await coordinator.read_resource(server, uri)
            for content in read.contents:
                ui = (content.meta or {}).get("ui")
                csp = ui.get("csp") if isinstance(ui, dict) else None
                if content.mime_type == APP_MIME:
                    log.info("view %s of %s runs under the CSP: %s", uri, server, view_csp(csp))
                    dropped = refused_origins(csp if isinstance(csp, dict) else {})
                    if dropped:
                        log.warning("view %s of %s: declared origins left out of its CSP: %s", uri, server, dropped)
            return {"result": read.model_dump(mode="json", by_alias=True, exclude_none=True)}
    except ViewRefused as exc:
        log.warning("a view's %s refused: %s", method, exc)
        return _rpc_error(exc.code, str(exc))
    except HostError as exc:
        return _rpc_error(INTERNAL_ERROR, str(exc))
    return _rpc_error(METHOD_NOT_FOUND, f"a view may ask for tools/call or resources/read, not {method!r}")


def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


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
        if local and _host_name(request.headers.get("host", "")) not in names:
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
    local = is_loopback(settings.host)
    names = {settings.host.lower(), *(LOOPBACK if local else ())}
    extra_origins = {o.rstrip("/").lower() for o in settings.allowed_origins}
    page = resources.files("llmem.host") / "page"
    sockets: dict[str, WebSocket] = {}  # each connected page's socket, by connection id

    def refused(conn: HTTPConnection) -> str | None:
        """Why this request may not come in, or None."""
        if local and _host_name(conn.headers.get("host", "")) not in names:
            return "this host answers only to its own name (Host header refused)"
        if token is not None and not _same(_token_of(conn), token):
            return "a valid token is required (Authorization: Bearer <token>, or open the page with ?token=<token>)"
        return None

    def origin_ok(ws: WebSocket) -> bool:
        origin = ws.headers.get("origin")
        if origin is None:  # not a browser: nothing a foreign page could use
            return True
        parts = urlsplit(origin.lower())
        if origin.rstrip("/").lower() in extra_origins:
            return True
        return parts.scheme in ("http", "https") and parts.netloc == ws.headers.get("host", "").lower()

    async def serve_page(request: Request) -> Response:
        why = refused(request)
        if why:
            return PlainTextResponse(why, status_code=401 if token and "token" in why else 403)
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
        why = refused(request)
        if why:
            return JSONResponse(
                {"status": "refused", "error": why}, status_code=401 if token and "token" in why else 403
            )
        return JSONResponse(
            {
                "status": "ok",
                "provider": settings.info.get("provider"),
                "standIn": settings.info.get("standIn", False),
                "servers": settings.info.get("servers", []),
                "failedServers": settings.info.get("failedServers", []),
                "tools": len(orchestrator.tools),
                "promptTokens": orchestrator.fixed_tokens,
                "sessions": len(sessions),
            }
        )

    async def list_sessions(request: Request) -> Response:
        """The conversations the host keeps, for the page's list of earlier chats."""
        why = refused(request)
        if why:
            return JSONResponse({"error": why}, status_code=401 if token and "token" in why else 403)
        return JSONResponse({"sessions": sessions.listing()}, headers={"Cache-Control": "no-store"})

    async def chat_socket(ws: WebSocket) -> None:
        why = refused(ws)
        if why or not origin_ok(ws):
            log.warning("websocket refused: %s", why or f"foreign Origin {ws.headers.get('origin')!r}")
            await ws.close(code=1008)
            return
        await ws.accept()
        session = sessions.get(ws.query_params.get("session"))
        resumed = session is not None
        unknown = ws.query_params.get("session") if not resumed else None
        if session is None:
            session = sessions.create()
        lock = anyio.Lock()
        connection_id = new_id("ws-")

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

        note = (
            "Reconnected: the conversation goes on."
            if resumed
            else f"Session {unknown!r} is gone (the host restarted or it expired); this is a new one."
            if unknown
            else SYSTEM_MESSAGES["WELCOME"]
        )
        await send(
            {
                "type": "connection",
                "payload": {
                    "state": "reconnected" if resumed else "connected",
                    "message": note,
                    "sessionId": session.id,
                    "turnRunning": session.turn_running,
                    **{k: v for k, v in settings.info.items() if k != "secrets"},
                    "tools": len(orchestrator.tools),
                    "appsPort": settings.apps_port or None,  # MCP Apps views: the sandbox proxy's port
                },
            }
        )
        try:
            # registered with no wait before its history goes, so every later frame comes after it
            history = _page_history(session.history) if resumed else None
            session.connections[connection_id] = send
            sockets[connection_id] = ws
            log.info(
                "page connected", extra={"session": session.id, "resumed": resumed, "pages": len(session.connections)}
            )
            if history is not None:
                await send({"type": "history", "payload": {"messages": history}})
                for pending in list(session.confirms.values()):
                    await send(pending.message)
            while len(session.connections) > MAX_PAGES:  # the oldest page goes, and hears why
                oldest = next(iter(session.connections))
                await _replaced(session, oldest)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:  # a binary frame: the protocol is JSON text
                    await send({"type": "error", "payload": {"message": "send JSON text frames, not binary ones"}})
                    continue
                await _handle_frame(session, raw, send, connection_id)
        except WebSocketDisconnect:
            pass
        finally:
            if session.connections.get(connection_id) is send:
                del session.connections[connection_id]
            sockets.pop(connection_id, None)
            log.info("page disconnected", extra={"session": session.id})

    async def _replaced(session: Session, connection_id: str) -> None:
        """A page dropped for a newer one: told so (it stops waiting and offers to reconnect)."""
        send = session.connections.pop(connection_id)
        ws = sockets.pop(connection_id, None)
        try:
            await send({"type": "connection", "payload": {"state": "replaced", "message": REPLACED}})
            if ws is not None:
                await ws.close(code=4000)
        except Exception:  # gone already
            log.info("a replaced page was gone already")

    async def _handle_frame(
        session: Session, raw: str, send: Callable[[dict[str, Any]], Any], connection_id: str
    ) -> None:
        try:
            frame = json.loads(raw)
        except ValueError:
            frame = None
        kind = frame.get("type") if isinstance(frame, dict) else None
        payload = frame.get("payload") if isinstance(frame, dict) else None
        payload = payload if isinstance(payload, dict) else {}
        # counted before anything else, even unreadable frames; a view's requests have their own limit
        limited = kind != "app" and not session.limiter.allow()

        async def error(message: str) -> None:
            await send({"type": "error", "payload": {"message": message}})
            if kind == "message" and not session.turn_running:
                # the page started a turn for this message: end it, or its Send stays a Stop
                await send({"type": "done", "payload": {}})

        if kind == "app":  # a view's tools/call or resources/read: its own limit, answered in its own task
            if not session.app_limiter.allow():
                await send(
                    {
                        "type": "app",
                        "payload": {
                            "id": payload.get("id"),
                            "error": {
                                "code": -32000,
                                "message": (
                                    f"too many requests from the views (retry in {session.app_limiter.retry_in_s():.1f} s)"
                                ),
                            },
                        },
                    }
                )
            else:
                turns.start_soon(app_request, session, payload, send)
            return
        if limited:
            await error(SYSTEM_MESSAGES["RATE_LIMITED"] + f" (retry in {session.limiter.retry_in_s():.1f} s)")
            return
        if frame is None:
            await error('a frame must be one JSON object like {"type": "message", "payload": {"text": "…"}}')
            return
        if kind == "message":
            text = payload.get("text")
            if not isinstance(text, str) or not text.strip():
                await error("payload.text must be a non-empty string")
            elif len(text) > MAX_TEXT:
                await error(f"payload.text is {len(text)} characters; the limit is {MAX_TEXT}")
            elif session.turn_running:
                await error(SYSTEM_MESSAGES["BUSY"])
            else:
                scope = anyio.CancelScope()
                session.turn = scope  # busy from now, before the turn's task starts
                # the other pages on this session show the question as this one does
                await session.emit({"type": "user", "payload": {"text": text}}, skip=connection_id)
                turns.start_soon(orchestrator.handle_input, session, text, scope)
        elif kind == "confirm":
            request_id, approve = payload.get("requestId"), payload.get("approve")
            pending = session.confirms.get(request_id) if isinstance(request_id, str) else None
            if not isinstance(approve, bool):
                await error("payload.approve must be true or false")
            elif pending is None:
                await error(f"no confirmation {request_id!r} is waiting (it was answered, or its turn ended)")
            else:
                pending.approve = approve
                tool = pending.message["payload"]["tool"]
                if approve and payload.get("always") is True:  # "allow this tool for the rest of the session"
                    session.always_allowed.add(tool)
                pending.answered.set()
                # the other pages settle their card as this one did
                await session.emit(
                    {"type": "confirmed", "payload": {"requestId": request_id, "approve": approve}},
                    skip=connection_id,
                )
        elif kind == "cancel":
            if session.turn is not None:
                session.turn.cancel()
        elif kind == "zoom":  # beside the turn, so a Stop or a confirmation is not kept waiting
            turns.start_soon(_zoom, payload, send)
        else:
            await error(f"unknown frame type {kind!r}; the page sends 'message', 'confirm', 'cancel', 'app' or 'zoom'")

    async def app_request(session: Session, payload: dict[str, Any], send: Callable[[dict[str, Any]], Any]) -> None:
        """A view's request, passed on by the page: answered with the same ``id``."""
        answer = await _view_request(orchestrator.coordinator, payload)
        try:
            await send({"type": "app", "payload": {"id": payload.get("id"), **answer}})
        except (WebSocketDisconnect, WebSocketDisconnected):  # the page (and its view) went while the server answered
            log.info("a view's answer found its page gone", extra={"session": session.id})

    async def _zoom(payload: dict[str, Any], send: Callable[[dict[str, Any]], Any]) -> None:
        """ "Open full size": the step's picture drawn again, larger, by its own tool."""
        zoom_id, tool, arguments = payload.get("zoomId"), payload.get("tool"), payload.get("arguments")
        drawn = payload.get("drawn")
        answer: dict[str, Any] = {"zoomId": zoom_id}
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            answer["error"] = "payload.tool (a tool name) and payload.arguments (an object) are required"
        elif drawn is not None and not isinstance(drawn, dict):
            answer["error"] = "payload.drawn, when given, must be the step's answer (an object with its time, revision)"
        else:
            try:
                answer.update(await orchestrator.larger_picture(tool, arguments, drawn))
            except HostError as exc:
                answer["error"] = str(exc)
            except Exception as exc:  # in the turns' task group: a failure here must not end them all
                log.exception("zoom failed")
                answer["error"] = f"the picture could not be drawn again: {exc}"
        try:
            await send({"type": "zoomed", "payload": answer})
        except Exception:  # the page went away meanwhile
            log.info("zoomed picture not delivered: the page is gone")

    routes: list[BaseRoute] = [Route(path, serve_page, methods=["GET"]) for path in _PAGE_FILES]
    routes += [
        Route("/health", health, methods=["GET"]),
        Route("/sessions", list_sessions, methods=["GET"]),
        WebSocketRoute("/ws", chat_socket),
    ]
    return Starlette(routes=routes)
