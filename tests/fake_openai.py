"""A loopback fake of the OpenAI chat-completions API, speaking its real wire protocol.

``POST /v1/chat/completions`` with ``stream: true`` answers Server-Sent Events exactly as OpenAI
does (``chat.completion.chunk`` objects, tool-call arguments in pieces by ``index``, a last chunk
with ``finish_reason``, then ``data: [DONE]``); an error is OpenAI's JSON error body with its
HTTP status. A test gives a ``reply`` function: request body in, :class:`Reply` out. Standard
library only, in a thread, so the code under test meets it over a real socket.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the fake answers: text pieces and tool calls, or an HTTP error."""

    text: list[str] = field(default_factory=list)
    # (call id, function name, the arguments' JSON text in the pieces it is sent in)
    calls: list[tuple[str, str, list[str]]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    delay_s: float = 0.0  # before each chunk: a slow stream
    whole: bool = False  # answer one chat.completion JSON object even when asked to stream


def say(text: str, size: int = 7) -> Reply:
    return Reply(text=[text[i : i + size] for i in range(0, len(text), size)])


def call(name: str, arguments: dict[str, Any], *, call_id: str = "call_1", pieces: int = 4) -> Reply:
    raw = json.dumps(arguments)
    step = max(1, len(raw) // pieces)
    return Reply(calls=[(call_id, name, [raw[i : i + step] for i in range(0, len(raw), step)])])


class FakeOpenAI:
    """``with FakeOpenAI(reply) as fake:`` → ``fake.base_url`` (ends in ``/v1``), ``fake.requests``."""

    def __init__(self, reply: Callable[[dict[str, Any]], Reply]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
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
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                reply = fake.reply(body)
                if reply.status != 200:
                    self._json(
                        reply.status,
                        {"error": {"message": reply.error or "failed", "type": "server_error", "code": None}},
                    )
                    return
                if reply.whole or not body.get("stream"):
                    self._json(200, _completion(body.get("model", "fake"), reply))
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                try:
                    for chunk in _chunks(body.get("model", "fake"), reply):
                        if reply.delay_s:
                            time.sleep(reply.delay_s)
                        self.wfile.write(chunk)
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
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


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
