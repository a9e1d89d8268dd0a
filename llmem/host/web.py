"""The host's web side (seed 004 §2.1): the page at ``/``, ``GET /health`` and the WebSocket at ``/ws``.

Security, in order of the checks: on loopback the Host header must name this host (no DNS
rebinding); with a token (required beyond loopback), every request and the WebSocket carry it
(``Authorization: Bearer``, the ``token`` query parameter, or the cookie the page gets when opened
with ``?token=``), compared in constant time; the WebSocket's Origin, when a browser sends one,
must be this host's own (or one given with ``--allow-origin``), so no other site's page can drive
it; each session has a rate limit. Secrets (the provider's key, the token) are scrubbed from
every frame before it leaves.
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
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from llmem.core.http import LOOPBACK, is_loopback  # the servers' own rule for what loopback is
from llmem.host.chat import ChatMessage, new_id
from llmem.host.errors import HostError
from llmem.host.orchestrator import SYSTEM_MESSAGES, Orchestrator
from llmem.host.sessions import Session, SessionManager
from llmem.host.steps import step_title

__all__ = ["LOOPBACK", "WebSettings", "build_app", "is_loopback"]

log = logging.getLogger("llmem.host.web")

COOKIE = "llmem_host_token"
MAX_TEXT = 20_000
_PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_HEADERS = {
    # nothing from outside: scripts, styles and sockets from this host only, pictures inline
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass
class WebSettings:
    host: str = "127.0.0.1"
    port: int = 60120
    auth_token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()  # scrubbed from every frame
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
                }
            )
            out += m.host_steps  # the callback's store, which the host ran itself, after the call
    return out


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
        response = Response((page / name).read_bytes(), media_type=media, headers=_HEADERS)
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

        session.send, session.connection_id = send, connection_id
        log.info("page connected", extra={"session": session.id, "resumed": resumed})
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
                },
            }
        )
        if resumed:
            await send({"type": "history", "payload": {"messages": _page_history(session.history)}})
            for pending in list(session.confirms.values()):
                await send(pending.message)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:  # a binary frame: the protocol is JSON text
                    await send({"type": "error", "payload": {"message": "send JSON text frames, not binary ones"}})
                    continue
                await _handle_frame(session, raw, send)
        except WebSocketDisconnect:
            pass
        finally:
            if session.connection_id == connection_id:
                session.send, session.connection_id = None, None
            log.info("page disconnected", extra={"session": session.id})

    async def _handle_frame(session: Session, raw: str, send: Callable[[dict[str, Any]], Any]) -> None:
        limited = not session.limiter.allow()  # counted before anything else, even unreadable frames
        try:
            frame = json.loads(raw)
        except ValueError:
            frame = None
        kind = frame.get("type") if isinstance(frame, dict) else None
        payload = frame.get("payload") if isinstance(frame, dict) else None
        payload = payload if isinstance(payload, dict) else {}

        async def error(message: str) -> None:
            await send({"type": "error", "payload": {"message": message}})
            if kind == "message" and not session.turn_running:
                # the page started a turn for this message: end it, or its Send stays a Stop
                await send({"type": "done", "payload": {}})

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
        elif kind == "cancel":
            if session.turn is not None:
                session.turn.cancel()
        elif kind == "zoom":  # beside the turn, so a Stop or a confirmation is not kept waiting
            turns.start_soon(_zoom, payload, send)
        else:
            await error(f"unknown frame type {kind!r}; the page sends 'message', 'confirm', 'cancel' or 'zoom'")

    async def _zoom(payload: dict[str, Any], send: Callable[[dict[str, Any]], Any]) -> None:
        """ "Open full size": the step's picture drawn again, larger, by its own tool."""
        zoom_id, tool, arguments = payload.get("zoomId"), payload.get("tool"), payload.get("arguments")
        answer: dict[str, Any] = {"zoomId": zoom_id}
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            answer["error"] = "payload.tool (a tool name) and payload.arguments (an object) are required"
        else:
            try:
                answer.update(await orchestrator.larger_picture(tool, arguments))
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
