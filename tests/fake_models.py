"""Loopback fakes of the three model APIs the host speaks, each on its real wire protocol, all
scripted alike: a test gives a ``reply`` function (the request body in, a :class:`Reply` out).

- OpenAI chat completions: ``POST /v1/chat/completions`` with ``stream: true`` → Server-Sent
  Events as OpenAI sends them (``chat.completion.chunk`` objects, tool-call arguments in pieces by
  ``index``, a last chunk with ``finish_reason``, ``data: [DONE]``); one ``chat.completion`` JSON
  object when the request does not stream (or ``Reply.whole`` says to answer so anyway).
- Anthropic: ``POST /v1/messages`` with ``stream: true`` → ``message_start``,
  ``content_block_start`` / ``_delta`` (``text_delta``, ``input_json_delta``) / ``_stop``, ``ping``,
  ``message_delta``, ``message_stop``; an ``error`` event in the middle of the stream
  (``Reply.error`` with ``status=200``).
- Gemini: ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` (or ``/v1/``, as newer
  SDKs ask) → ``data:`` events, each a ``GenerateContentResponse``; a ``functionCall`` part comes
  whole, with a ``thoughtSignature`` the client must send back.

Errors are each API's own JSON error body with its HTTP status. Standard library only, in a
thread, so the code under test meets them over a real socket; ``requests``, ``headers`` and
``paths`` record what came, ``disconnected`` is set when the client hung up mid-stream.
"""

from __future__ import annotations

import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeAnthropic", "FakeGemini", "FakeOpenAI", "Reply", "call", "say"]


@dataclass
class Reply:
    """What the fake answers: text pieces and tool calls, or an HTTP error."""

    text: list[str] = field(default_factory=list)
    # (call id, function name, the arguments' JSON text in the pieces it is sent in)
    calls: list[tuple[str, str, list[str]]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    delay_s: float = 0.0  # before each chunk: a slow stream
    whole: bool = False  # OpenAI: answer one chat.completion JSON object even when asked to stream


def say(text: str, size: int = 7) -> Reply:
    return Reply(text=[text[i : i + size] for i in range(0, len(text), size)])


def call(name: str, arguments: dict[str, Any], *, call_id: str = "call_1", pieces: int = 4) -> Reply:
    raw = json.dumps(arguments)
    step = max(1, len(raw) // pieces)
    return Reply(calls=[(call_id, name, [raw[i : i + step] for i in range(0, len(raw), step)])])


_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}  # fmt: skip


class _Fake(ABC):
    """One loopback HTTP server; a subclass says which path it serves and how it answers."""

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
                whole = fake.whole(body, reply)
                if whole is not None:
                    self._json(200, whole)
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

    @abstractmethod
    def path_ok(self, path: str) -> bool:
        """Whether the API answers at this path."""

    @abstractmethod
    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The API's own JSON body for an HTTP error."""

    @abstractmethod
    def events(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        """The answer as the API streams it: its Server-Sent Events."""

    def whole(self, body: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
        """A whole JSON answer instead of a stream, where the API gives one."""
        return None

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
    def path_ok(self, path: str) -> bool:
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

    def path_ok(self, path: str) -> bool:
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


class FakeOpenAI(_Fake):
    """``fake.base_url`` ends in ``/v1``, as OpenAI-compatible servers' do."""

    @property
    def base_url(self) -> str:
        return super().base_url + "/v1"

    def path_ok(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/chat/completions"

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "message": message,
                "type": "server_error" if status >= 500 else "invalid_request_error",
                "code": None,
            }
        }

    def events(self, body: dict[str, Any], reply: Reply) -> Iterator[bytes]:
        return iter(_chunks(body.get("model", "fake"), reply))

    def whole(self, body: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
        return _completion(body.get("model", "fake"), reply) if reply.whole or not body.get("stream") else None


def _chunks(model: str, reply: Reply) -> list[bytes]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode()

    out = [event({"role": "assistant", "content": ""})]
    out += [event({"content": piece}) for piece in reply.text]
    for index, (call_id, name, pieces) in enumerate(reply.calls):
        first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(event({"tool_calls": [first]}))
        out += [event({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces]
    out.append(event({}, "tool_calls" if reply.calls else "stop"))
    out.append(b"data: [DONE]\n\n")
    return out


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": "".join(pieces)}}
        for call_id, name, pieces in reply.calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.text) or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
