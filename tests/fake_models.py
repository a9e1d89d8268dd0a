"""Loopback fakes of Anthropic's Messages API and Google's Gemini API, each speaking its real
wire protocol (the OpenAI one is ``tests/fake_openai.py``; the same :class:`Reply` scripts all).

- Anthropic: ``POST /v1/messages`` with ``stream: true`` → Server-Sent Events ``message_start``,
  ``content_block_start`` / ``_delta`` (``text_delta``, ``input_json_delta``) / ``_stop``, ``ping``,
  ``message_delta``, ``message_stop``; errors as Anthropic's JSON error body, or as an ``error``
  event in the middle of the stream (``Reply.error`` with ``status=200``).
- Gemini: ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (or ``/v1/``, as newer SDKs ask) → ``data:`` events, each a
  ``GenerateContentResponse`` (text parts; a ``functionCall`` part whole, with a
  ``thoughtSignature`` the client must send back); errors as Google's JSON error body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_openai import Reply

__all__ = ["FakeAnthropic", "FakeGemini", "Reply"]

_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip


class _Fake:
    path_ok: Callable[[str], bool]

    def __init__(self, reply: Callable[[dict[str, Any]], Reply]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.disconnected = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                fake.paths.append(self.path)
                if not fake.path_ok(self.path):
                    self._json(404, fake.error_body(404, f"no route {self.path}"))
                    return
                reply = fake.reply(body)
                if reply.status != 200:
                    self._json(reply.status, fake.error_body(reply.status, reply.error or "failed"))
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for event in fake.events(body, reply):
                        if reply.delay_s:
                            time.sleep(reply.delay_s)
                        self.wfile.write(event)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    fake.disconnected.set()
                self.close_connection = True

            def _json(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def events(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        raise NotImplementedError

    def __enter__(self) -> _Fake:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class FakeAnthropic(_Fake):
    def path_ok(self, path: str) -> bool:  # type: ignore[override]
        return path.split("?", maxsplit=1)[0] == "/v1/messages"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}

    def events(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": body.get("model", "fake"),
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        yield _sse("message_start", {"type": "message_start", "message": message})
        index = 0
        if reply.text:
            block = {"type": "text", "text": ""}
            yield _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block})
            yield _sse("ping", {"type": "ping"})
            for piece in reply.text:
                delta = {"type": "text_delta", "text": piece}
                yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            if reply.error:  # an error event in the middle of the stream, as Anthropic sends them
                yield _sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": reply.error}})
                return
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
            index = 1
        for offset, (call_id, name, pieces) in enumerate(reply.calls):
            at = index + offset
            block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            yield _sse("content_block_start", {"type": "content_block_start", "index": at, "content_block": block})
            for piece in pieces:
                delta = {"type": "input_json_delta", "partial_json": piece}
                yield _sse("content_block_delta", {"type": "content_block_delta", "index": at, "delta": delta})
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": at})
        stop = "tool_use" if reply.calls else "end_turn"
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})


class FakeGemini(_Fake):
    SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0"  # base64, as Gemini's thought signatures are

    def path_ok(self, path: str) -> bool:  # type: ignore[override]
        return ":streamGenerateContent" in path and path.startswith(("/v1beta/models/", "/v1/models/"))

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "UNKNOWN")}}

    def events(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            usage = {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12}
            return _sse(None, {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "fake"})

        for piece in reply.text:
            yield chunk([{"text": piece}])
        for call_id, name, pieces in reply.calls:
            arguments = json.loads("".join(pieces))
            part = {
                "functionCall": {"id": call_id, "name": name, "args": arguments},
                "thoughtSignature": self.SIGNATURE,
            }
            yield chunk([part])
        yield chunk([{"text": ""}], "STOP")
