"""The host's HTTP API beside the WebSocket: the chats (listed, searched, renamed, deleted and
brought back, exported) and the files a person attaches.

    GET    /sessions?q=words            the chats, latest first; with q: those holding every word
    PATCH  /sessions/{id}  {"title"}    rename ("" gives it back its first question as its name)
    DELETE /sessions/{id}               delete; {"undoS"}: how long POST …/restore can bring it back
    POST   /sessions/{id}/restore       undo a delete
    GET    /sessions/{id}/export?format=markdown|json   a download: the chat with its pictures
    POST   /files?name=N[&replace=1]    the request's body saved as N in the workspace: 201
                                         {name, size, kind, replaced}; 200 {…, unchanged: true}
                                         when N holds these very bytes already (nothing written);
                                         409 {error, suggested} when N is taken by another file;
                                         400 a name or content refused; 413 too large

Every request passes :class:`~llmem.host.access.Access`; those that change something must come
from this host's own page (their Origin).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from llmem.host.access import Access
from llmem.host.models import Models
from llmem.host.sessions import Session, SessionManager
from llmem.host.transcript import export_name, to_json, to_markdown
from llmem.host.uploads import UploadRefused, check_name, save_upload

__all__ = ["chat_routes"]

log = logging.getLogger("llmem.host.web")

_NO_STORE = {"Cache-Control": "no-store"}


def _error(message: str, status: int, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status, headers=_NO_STORE)


def chat_routes(
    *,
    access: Access,
    sessions: SessionManager,
    models: Models,
    workspace: Path,
    upload_limit: int,
    on_deleted: Callable[[Session], Awaitable[None]],
) -> list[BaseRoute]:
    """The routes; ``on_deleted`` is told of a deleted chat (its open pages hear of it)."""

    def session_of(request: Request, *, change: bool = False) -> Session | JSONResponse:
        """The chat the path names, or the answer refusing the request (access, or no such chat)."""
        refused = access.refusal(request, change=change)
        if refused:
            return refused
        session_id = request.path_params["session_id"]
        session = sessions.get(session_id)
        if session is None:
            return _error(f"no chat {session_id!r} (it was deleted, or the host restarted)", 404)
        return session

    async def listing(request: Request) -> Response:
        refused = access.refusal(request)
        if refused:
            return refused
        query = request.query_params.get("q", "")
        return JSONResponse({"sessions": sessions.listing(query), "query": query}, headers=_NO_STORE)

    async def rename(request: Request) -> Response:
        session = session_of(request, change=True)
        if isinstance(session, JSONResponse):
            return session
        try:
            body = await request.json()
        except ValueError:
            body = None
        title = body.get("title") if isinstance(body, dict) else None
        if not isinstance(title, str):
            return _error('send {"title": "the chat\'s new name"} as JSON ("" gives it back its first question)', 400)
        sessions.rename(session.id, title)
        return JSONResponse({"session": session.summary()}, headers=_NO_STORE)

    async def delete(request: Request) -> Response:
        session = session_of(request, change=True)
        if isinstance(session, JSONResponse):
            return session
        sessions.delete(session.id)
        log.info("chat deleted", extra={"session": session.id})
        await on_deleted(session)
        return JSONResponse({"deleted": session.id, "undoS": sessions.undo_s}, headers=_NO_STORE)

    async def restore(request: Request) -> Response:
        refused = access.refusal(request, change=True)
        if refused:
            return refused
        session_id = request.path_params["session_id"]
        try:
            session = sessions.restore(session_id)
        except KeyError:
            return _error(f"chat {session_id!r} cannot be brought back: it was not deleted, or too long ago", 404)
        return JSONResponse({"session": session.summary()}, headers=_NO_STORE)

    async def export(request: Request) -> Response:
        session = session_of(request)
        if isinstance(session, JSONResponse):
            return session
        kind = request.query_params.get("format", "markdown")
        model = models.get(session.model).label
        if kind in ("markdown", "md"):
            body, media, suffix = to_markdown(session, model), "text/markdown; charset=utf-8", ".md"
        elif kind == "json":
            body, media, suffix = None, "application/json", ".json"
        else:
            return _error(f"format must be markdown or json, not {kind!r}", 400)
        headers = {**_NO_STORE, "Content-Disposition": f'attachment; filename="{export_name(session, suffix)}"'}
        if body is None:
            return JSONResponse(to_json(session, model), headers=headers, media_type=media)
        return Response(body, media_type=media, headers=headers)

    async def upload(request: Request) -> Response:
        refused = access.refusal(request, change=True)
        if refused:
            return refused
        name = request.query_params.get("name")
        if name is None:
            return _error("say the file's name: POST /files?name=boat1.rep with the file as the body", 400)
        try:
            check_name(name)  # before the body is read
        except UploadRefused as exc:
            return _error(str(exc), exc.status)
        replace = request.query_params.get("replace") in ("1", "true")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > upload_limit:
                return _error(
                    f"{name} is over the limit of {upload_limit:,} bytes (llmem-host --max-upload-mb)",
                    413,
                    limit=upload_limit,
                )
        try:
            saved = await anyio.to_thread.run_sync(
                lambda: save_upload(workspace, name, bytes(data), overwrite=replace, limit=upload_limit)
            )
        except UploadRefused as exc:
            extra = {"suggested": exc.suggested} if exc.suggested else {}
            return _error(str(exc), exc.status, **extra)
        said = "file already in the workspace, the same bytes" if saved.unchanged else "file saved in the workspace"
        log.info(said, extra={"file": saved.name, "bytes": saved.size})
        answer = {"name": saved.name, "size": saved.size, "kind": saved.kind, "replaced": saved.replaced}
        if saved.unchanged:
            answer["unchanged"] = True
        return JSONResponse(answer, status_code=200 if saved.unchanged else 201, headers=_NO_STORE)

    return [
        Route("/sessions", listing, methods=["GET"]),
        Route("/sessions/{session_id}", rename, methods=["PATCH"]),
        Route("/sessions/{session_id}", delete, methods=["DELETE"]),
        Route("/sessions/{session_id}/restore", restore, methods=["POST"]),
        Route("/sessions/{session_id}/export", export, methods=["GET"]),
        Route("/files", upload, methods=["POST"]),
    ]
