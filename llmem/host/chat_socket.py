"""The chat's WebSocket (``/ws``): the protocol between the page and the host.

Every frame is one JSON text frame ``{"type": …, "payload": {…}}``.

From the page:

- ``message {text, attachments?}``: a question; ``attachments``: ``[{name, size}]``, files the
  page saved first with ``POST /files`` (the model is told where they are; ``text`` may then be
  empty).
- ``edit {index, text, attachments?}``: the question at ``index`` (0 is the chat's first)
  replaced by this one, everything after it forgotten, and the new one asked.
- ``regenerate {index}``: the question at ``index`` asked again, everything after it forgotten.
- ``model {id}``: answer this chat with another of the host's models (``connection.models``).
- ``confirm {requestId, approve, always?}``: the person's answer to a ``confirm``.
- ``cancel``: stop the running turn (the model's answer and the tool call running).
- ``zoom {zoomId, tool, arguments, drawn?}``: a step's picture drawn again, larger.
- ``app {id, server, method, params}``: a live view's ``tools/call`` or ``resources/read``.

From the host:

- ``connection {state, message, sessionId, turnRunning, title, model, models, provider,
  standIn, suggestions, servers, failedServers, serverStates, tools, appsPort, uploadLimit}``:
  first on every socket; ``state`` is ``connected``, ``reconnected`` (``?session=<id>``
  resumed), ``replaced`` (more than 8 pages on one chat: the oldest is closed) or ``deleted``
  (the chat was deleted: the socket closes). ``models``: ``[{id, label, standIn,
  suggestions}]``; ``serverStates``: ``[{name, state: running|failing|stopped|failed, tools,
  error}]``.
- ``history {messages}``: the conversation to draw, after a reconnect, and on every other page
  of the chat after an ``edit`` or ``regenerate``.
- ``user {text, attachments}``: a question asked on another page of the chat.
- ``model {id, label, standIn, suggestions}``: the chat's model changed.
- per turn: ``text {content}`` (streamed pieces); ``status {state: processing|complete, tool,
  message, data: {callId, arguments | result, isError, durationMs, title, headline, outcome,
  app?}}`` for each tool call; ``image {mimeType, data, callId}``; ``confirm {requestId, tool,
  title, change, arguments, message}`` before a destructive tool; ``confirmed {requestId,
  approve}`` (answered on another page); ``error {message}``; ``done {}`` at the end of every
  turn.
- ``zoomed {zoomId, mimeType, data, width, height, changed}`` or ``{zoomId, error}``;
  ``app {id, result | error}``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketDisconnected

from llmem.host.apps import APP_MIME, ViewRefused, refused_origins, view_csp
from llmem.host.chat import ChatMessage, new_id
from llmem.host.coordinator import Coordinator
from llmem.host.errors import HostError
from llmem.host.orchestrator import SYSTEM_MESSAGES, Orchestrator
from llmem.host.sessions import MAX_PAGES, Session, SessionManager
from llmem.host.transcript import page_history
from llmem.host.uploads import UploadRefused, attachment_note, check_name

__all__ = ["MAX_ATTACHMENTS", "MAX_TEXT", "REPLACED", "ChatSockets"]

log = logging.getLogger("llmem.host.web")

MAX_TEXT = 20_000
MAX_ATTACHMENTS = 20
REPLACED = (
    f"This page was disconnected: more than {MAX_PAGES} pages were open on this chat. Reconnect to carry on here."
)
DELETED = "The chat open here was deleted (its Undo, under Chats, brings it back for a few minutes); this is a new one."

Send = Callable[[dict[str, Any]], Awaitable[None]]


class ChatSockets:
    """The pages connected to the host's chats, and what their frames do."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        sessions: SessionManager,
        turns: TaskGroup,
        *,
        workspace: Path,
        hello: Callable[[Session], dict[str, Any]],
    ) -> None:
        self.orchestrator, self.sessions, self.turns = orchestrator, sessions, turns
        self.workspace, self.hello = workspace, hello
        self.sockets: dict[str, WebSocket] = {}  # each connected page's socket, by connection id

    async def serve(self, ws: WebSocket, send: Send) -> None:
        """One page's socket, accepted: hello, the history when it resumes, then its frames."""
        session = self.sessions.get(ws.query_params.get("session"))
        resumed = session is not None
        unknown = ws.query_params.get("session") if not resumed else None
        if session is None:
            session = self.sessions.create()
        connection_id = new_id("ws-")
        note = (
            "Reconnected: the conversation goes on."
            if resumed
            else f"Session {unknown!r} is gone (the host restarted, it expired or was deleted); this is a new one."
            if unknown
            else SYSTEM_MESSAGES["WELCOME"]
        )
        state = "reconnected" if resumed else "connected"
        await send({"type": "connection", "payload": {"state": state, "message": note, **self.hello(session)}})
        try:
            # registered with no wait before its history goes, so every later frame comes after it
            history = page_history(session.history) if resumed else None
            session.connections[connection_id] = send
            self.sockets[connection_id] = ws
            log.info(
                "page connected", extra={"session": session.id, "resumed": resumed, "pages": len(session.connections)}
            )
            if history is not None:
                await send({"type": "history", "payload": {"messages": history}})
                for pending in list(session.confirms.values()):
                    await send(pending.message)
            while len(session.connections) > MAX_PAGES:  # the oldest page goes, and hears why
                await self.drop(session, next(iter(session.connections)), "replaced", REPLACED)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:  # a binary frame: the protocol is JSON text
                    await send({"type": "error", "payload": {"message": "send JSON text frames, not binary ones"}})
                    continue
                await self.handle(session, raw, send, connection_id)
        except WebSocketDisconnect:
            pass
        finally:
            if session.connections.get(connection_id) is send:
                del session.connections[connection_id]
            self.sockets.pop(connection_id, None)
            log.info("page disconnected", extra={"session": session.id})

    async def drop(self, session: Session, connection_id: str, state: str, message: str) -> None:
        """A page dropped (replaced by a newer one, or its chat deleted): told why, then closed."""
        send = session.connections.pop(connection_id)
        ws = self.sockets.pop(connection_id, None)
        try:
            await send({"type": "connection", "payload": {"state": state, "message": message}})
            if ws is not None:
                await ws.close(code=4000)
        except Exception:  # gone already
            log.info("a dropped page was gone already")

    async def deleted(self, session: Session) -> None:
        """Every page of a deleted chat hears of it and is closed."""
        for connection_id in list(session.connections):
            await self.drop(session, connection_id, "deleted", DELETED)

    # -- frames -----------------------------------------------------------------------------------

    async def handle(self, session: Session, raw: str, send: Send, connection_id: str) -> None:
        try:
            frame = json.loads(raw)
        except ValueError:
            frame = None
        kind = frame.get("type") if isinstance(frame, dict) else None
        payload = frame.get("payload") if isinstance(frame, dict) else None
        payload = payload if isinstance(payload, dict) else {}
        # counted before anything else, even unreadable frames; a view's requests have their own limit
        limited = kind != "app" and not session.limiter.allow()
        starts_turn = kind in ("message", "edit", "regenerate")

        async def error(message: str) -> None:
            await send({"type": "error", "payload": {"message": message}})
            if starts_turn and not session.turn_running:
                # the page started a turn for this frame: end it, or its Send stays a Stop
                await send({"type": "done", "payload": {}})

        if kind == "app":  # a view's tools/call or resources/read: its own limit, answered in its own task
            await self._app(session, payload, send)
            return
        if limited:
            await error(SYSTEM_MESSAGES["RATE_LIMITED"] + f" (retry in {session.limiter.retry_in_s():.1f} s)")
            return
        if frame is None:
            await error('a frame must be one JSON object like {"type": "message", "payload": {"text": "…"}}')
            return
        if starts_turn and session.turn_running:
            await error(SYSTEM_MESSAGES["BUSY"])
        elif kind in ("message", "edit"):
            try:
                question = self._question(payload)
                index = self._index(session, payload) if kind == "edit" else None
            except ValueError as exc:
                await error(str(exc))
                return
            if index is not None:
                session.rewind(index)
                await self._redraw_others(session, connection_id)
            await self._start_turn(session, question, connection_id)
        elif kind == "regenerate":
            try:
                index = self._index(session, payload)
            except ValueError as exc:
                await error(str(exc))
                return
            asked = session.rewind(index)
            await self._redraw_others(session, connection_id)
            again = ChatMessage(role="user", content=asked.content, shown=asked.shown, attachments=asked.attachments)
            await self._start_turn(session, again, connection_id)
        elif kind == "model":
            await self._model(session, payload, error)
        elif kind == "confirm":
            await self._confirm(session, payload, error, connection_id)
        elif kind == "cancel":
            if session.turn is not None:
                session.turn.cancel()
        elif kind == "zoom":  # beside the turn, so a Stop or a confirmation is not kept waiting
            self.turns.start_soon(self._zoom, payload, send)
        else:
            await error(
                f"unknown frame type {kind!r}; the page sends 'message', 'edit', 'regenerate', 'model', 'confirm', "
                "'cancel', 'app' or 'zoom'"
            )

    def _question(self, payload: dict[str, Any]) -> ChatMessage:
        """The person's question of a ``message`` or ``edit`` frame, with the files it names
        (each a plain name of a file in the workspace: the page saved it there)."""
        text = payload.get("text")
        attached = payload.get("attachments") or []
        if not isinstance(attached, list) or len(attached) > MAX_ATTACHMENTS:
            raise ValueError(f"payload.attachments must be a list of at most {MAX_ATTACHMENTS} files ({{name, size}})")
        files: list[dict[str, Any]] = []
        for item in attached:
            name = item.get("name") if isinstance(item, dict) else None
            if not isinstance(name, str):
                raise ValueError("each of payload.attachments must be {name, size}")
            try:
                name = check_name(name)
            except UploadRefused as exc:
                raise ValueError(str(exc)) from None
            if not (self.workspace / name).is_file():
                raise ValueError(f"{name} is not in the workspace: attach it again (POST /files saves it)")
            files.append({"name": name, "size": (self.workspace / name).stat().st_size})
        if not isinstance(text, str) or not (text.strip() or files):
            raise ValueError("payload.text must be a non-empty string (or attachments given)")
        if len(text) > MAX_TEXT:
            raise ValueError(f"payload.text is {len(text)} characters; the limit is {MAX_TEXT}")
        if not files:
            return ChatMessage(role="user", content=text)
        note = attachment_note([str(f["name"]) for f in files], self.workspace)
        return ChatMessage(role="user", content=f"{text}\n\n{note}".strip(), shown=text, attachments=files)

    @staticmethod
    def _index(session: Session, payload: dict[str, Any]) -> int:
        index = payload.get("index")
        count = len(session.questions())
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
            raise ValueError(
                f"payload.index must be the place of one of this chat's {count} questions (0 to {count - 1})"
            )
        return index

    async def _redraw_others(self, session: Session, connection_id: str) -> None:
        """After an edit or a regeneration, the chat's other pages draw what is left of it."""
        messages = page_history(session.history)
        await session.emit({"type": "history", "payload": {"messages": messages}}, skip=connection_id)

    async def _start_turn(self, session: Session, question: ChatMessage, connection_id: str) -> None:
        scope = anyio.CancelScope()
        session.turn = scope  # busy from now, before the turn's task starts
        # the other pages on this session show the question as this one does
        shown = question.shown if question.shown is not None else question.content
        await session.emit(
            {"type": "user", "payload": {"text": shown, "attachments": question.attachments}}, skip=connection_id
        )
        self.turns.start_soon(self.orchestrator.handle_input, session, question, scope)

    async def _model(self, session: Session, payload: dict[str, Any], error: Callable[[str], Awaitable[None]]) -> None:
        models = self.orchestrator.models
        model_id = payload.get("id")
        if not isinstance(model_id, str) or not models.knows(model_id):
            ids = ", ".join(str(m["id"]) for m in models.listing())
            await error(f"payload.id must be one of this host's models: {ids}")
            return
        session.model = model_id
        log.info("model chosen", extra={"session": session.id, "model": model_id})
        await session.emit({"type": "model", "payload": models.describe(model_id)})

    async def _confirm(
        self, session: Session, payload: dict[str, Any], error: Callable[[str], Awaitable[None]], connection_id: str
    ) -> None:
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
                {"type": "confirmed", "payload": {"requestId": request_id, "approve": approve}}, skip=connection_id
            )

    async def _app(self, session: Session, payload: dict[str, Any], send: Send) -> None:
        if session.app_limiter.allow():
            self.turns.start_soon(self._app_request, session, payload, send)
            return
        retry = f"too many requests from the views (retry in {session.app_limiter.retry_in_s():.1f} s)"
        await send({"type": "app", "payload": {"id": payload.get("id"), "error": {"code": -32000, "message": retry}}})

    async def _app_request(self, session: Session, payload: dict[str, Any], send: Send) -> None:
        """A view's request, passed on by the page: answered with the same ``id``."""
        answer = await _view_request(self.orchestrator.coordinator, payload)
        try:
            await send({"type": "app", "payload": {"id": payload.get("id"), **answer}})
        except (WebSocketDisconnect, WebSocketDisconnected):  # the page (and its view) went while the server answered
            log.info("a view's answer found its page gone", extra={"session": session.id})

    async def _zoom(self, payload: dict[str, Any], send: Send) -> None:
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
                answer.update(await self.orchestrator.larger_picture(tool, arguments, drawn))
            except HostError as exc:
                answer["error"] = str(exc)
            except Exception as exc:  # in the turns' task group: a failure here must not end them all
                log.exception("zoom failed")
                answer["error"] = f"the picture could not be drawn again: {exc}"
        try:
            await send({"type": "zoomed", "payload": answer})
        except Exception:  # the page went away meanwhile
            log.info("zoomed picture not delivered: the page is gone")


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
