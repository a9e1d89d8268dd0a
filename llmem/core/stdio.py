"""The stdio transport: the SDK's wire contract, served from the event loop where it can be.

The SDK's ``stdio_server`` reads and writes the standard streams through worker threads: every
line read, every message written and every flush is a thread hand-over, three per call on top of
the tool's own. When stdin and stdout are pipes or sockets (what every MCP client gives a server
it launches), this module serves them from the event loop instead, with non-blocking
descriptors, and keeps everything else the SDK does:

- while serving, fd 0 reads the null device and fd 1 writes to stderr, so a stray ``print`` or a
  child process cannot corrupt the protocol stream; the wire is served from private duplicates
  and both descriptors (and their blocking mode) are restored on exit;
- lines are UTF-8 with undecodable bytes replaced, of any length; each is validated as one
  JSON-RPC message, and a line that fails goes to the server as the exception, as the SDK does;
- each message is written as ``model_dump_json(by_alias=True, exclude_unset=True)`` plus a
  newline, one message at a time, waiting while the client's pipe is full;
- stdin EOF ends the session cleanly once the requests already read are answered (bounded by
  :data:`EOF_ANSWER_WAIT_S`: ``printf '<requests>' | server`` gets every answer, where the SDK
  ends the session at once and drops them), and a client that closed its end ends it quietly.

Anything else (a terminal, a regular file, Windows, another event loop than asyncio) is served
by the SDK's own ``stdio_server``.

One repair applies to both paths: the SDK validates each line with pydantic-core, whose JSON
parser stops at a nesting depth (~200) that Python's ``json`` does not. Such a line is a
well-formed request the client waits on, but the SDK only logs it and never answers, so the
client hangs. Here the refused line is read again with ``json``; when it is a request with an
id, it gets a JSON-RPC ``Invalid Request`` error naming the problem.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from pydantic import ValidationError

if TYPE_CHECKING:
    import asyncio

    from mcp.server.lowlevel.server import Server
    from mcp.shared.message import SessionMessage

__all__ = ["answer_for_refused_line", "pipe_capable", "run_stdio"]

log = logging.getLogger("llmem.core.stdio")

#: How much is read from stdin at a time; lines longer than this are joined across reads.
READ_CHUNK = 1 << 16
#: How long pending answers may take to reach the client once the session has ended.
DRAIN_TIMEOUT_S = 5.0
#: How long requests read before stdin's EOF may take to be answered before the session ends.
EOF_ANSWER_WAIT_S = 30.0


def answer_for_refused_line(exc: Exception) -> JSONRPCError | None:
    """The error answer owed for a line the SDK could not parse, if it was a request with an id."""
    if not isinstance(exc, ValidationError):
        return None
    for err in exc.errors(include_url=False):
        raw = err.get("input")
        if err.get("type") != "json_invalid" or not isinstance(raw, str | bytes):
            continue
        try:
            value: Any = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        msg_id = value.get("id") if isinstance(value, dict) else None
        if isinstance(msg_id, bool) or not isinstance(msg_id, str | int) or "method" not in value:
            return None
        reason = str(err.get("msg", "unparsable"))
        return JSONRPCError(
            jsonrpc="2.0",
            id=msg_id,
            error=ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {reason[:200]}"),
        )
    return None


def pipe_capable(fd: int) -> bool:
    """Whether ``fd`` can be served from the event loop: a pipe or a socket, on POSIX.

    Terminals are left to the SDK on purpose: making one non-blocking would change it for the
    shell that shares it.
    """
    if os.name != "posix":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def run_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until stdin ends."""
    if _on_asyncio() and pipe_capable(0) and pipe_capable(1):
        log.debug("stdio: pipes, served from the event loop")
        async with _event_loop_stdio() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    log.debug("stdio: not pipes (a terminal or a file), served by the SDK's threads")
    await _run_sdk_stdio(server)


def _on_asyncio() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio) runs this task
        return False
    return True


async def _run_sdk_stdio(server: Server[Any]) -> None:
    """The SDK's threaded stdio, with refused requests answered by a pump in front of the server."""
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (sdk_read, write):
        send, read = create_context_streams[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        reply = _refused_reply(item)
                        if reply is not None:
                            await write.send(reply)
                    await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()


def _refused_reply(exc: Exception) -> SessionMessage | None:
    from mcp.shared.message import SessionMessage

    reply = answer_for_refused_line(exc)
    if reply is None:
        return None
    log.info("answered a request the parser refused", extra={"rpc_id": reply.id})
    return SessionMessage(reply)


@asynccontextmanager
async def _event_loop_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for ``Server.run``, served from non-blocking stdin and stdout."""
    import asyncio

    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        wire_in = stack.enter_context(_Claimed(0))
        wire_out = stack.enter_context(_Claimed(1))
        reader = asyncio.StreamReader()
        in_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        stack.callback(_close, in_transport)
        out_transport, out_protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
            os.fdopen(wire_out, "wb", buffering=0, closefd=False),
        )
        stack.callback(_close, out_transport, abort=True)  # what could not be delivered by then is dropped
        out = _LineWriter(asyncio.StreamWriter(out_transport, out_protocol, None, loop))

        read_send, read_recv = create_context_streams[SessionMessage | Exception](0)
        write_send, write_recv = create_context_streams[SessionMessage](0)
        writer_done = anyio.Event()
        unanswered = _Unanswered()

        async def stdin_reader() -> None:
            async with read_send:
                async for line in _lines(reader):
                    item = _message(line)
                    if isinstance(item, Exception) and (reply := _refused_reply(item)) is not None:
                        await out.send(reply)
                    if not isinstance(item, Exception):
                        unanswered.read(item.message)
                    await read_send.send(item)
                # The client is done sending, maybe not reading: answer what it asked first.
                with anyio.move_on_after(EOF_ANSWER_WAIT_S):
                    await unanswered.all_answered()

        async def stdout_writer() -> None:
            try:
                async with write_recv:
                    async for message in write_recv:
                        await out.send(message)
                        unanswered.written(message.message)
            finally:
                writer_done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(stdin_reader)
            tg.start_soon(stdout_writer)
            try:
                yield read_recv, write_send
            finally:
                write_send.close()
                # What the server wrote reaches the client before the descriptors are handed back.
                with anyio.move_on_after(DRAIN_TIMEOUT_S, shield=True):
                    await writer_done.wait()
                    await out.close()
                tg.cancel_scope.cancel()


class _Unanswered:
    """The ids of the client's requests that have no answer yet (cancelled ones excluded)."""

    def __init__(self) -> None:
        self.ids: set[str | int] = set()
        self.empty = anyio.Event()
        self.empty.set()

    def read(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
            if self.empty.is_set():
                self.empty = anyio.Event()
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self._drop((message.params or {}).get("requestId"))

    def written(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._drop(message.id)

    def _drop(self, request_id: Any) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.empty.set()

    async def all_answered(self) -> None:
        await self.empty.wait()


def _close(transport: asyncio.BaseTransport, *, abort: bool = False) -> None:
    if transport.is_closing():  # closed already (EOF, or the writer's own close)
        return
    if abort:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.abort()
    else:
        transport.close()


class _LineWriter:
    """Writes one JSON-RPC message per line to an asyncio stream, waiting while the pipe is full."""

    def __init__(self, writer: asyncio.StreamWriter):
        self.writer = writer
        self.gone = False

    async def send(self, item: SessionMessage) -> None:
        if self.gone:
            return
        # One write() per message puts the whole line in the transport's buffer, so the reader's
        # error answers and the server's messages never interleave within a line.
        line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        self.writer.write(line.encode("utf-8"))
        try:
            await self.writer.drain()
        except (BrokenPipeError, ConnectionResetError):
            self.gone = True
            log.info("the client closed its end of stdout; later answers are dropped")

    async def close(self) -> None:
        self.gone = True
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str]:
    """The lines of ``reader`` (newline-terminated, the last one possibly not), of any length."""
    buf = bytearray()
    scanned = 0  # bytes of ``buf`` already known to hold no newline
    while True:
        chunk = await reader.read(READ_CHUNK)
        if not chunk:
            if buf:
                yield buf.decode("utf-8", "replace")
            return
        buf += chunk
        start = 0
        while (end := buf.find(b"\n", max(start, scanned))) >= 0:
            yield buf[start : end + 1].decode("utf-8", "replace")
            start = end + 1
        del buf[:start]
        scanned = len(buf)


def _message(line: str) -> SessionMessage | Exception:
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception as exc:
        return exc


class _Claimed:
    """Serve ``fd`` from a private duplicate while ``fd`` itself points elsewhere.

    fd 0 reads the null device and fd 1 writes to stderr meanwhile (as the SDK arranges), so
    nothing else in the process, or a child it starts, reads the client's requests or writes into
    the protocol stream. On exit ``fd`` points at the wire again, in its original blocking mode.
    """

    def __init__(self, fd: int):
        self.fd = fd
        self.private: int | None = None
        self.blocking = True

    def __enter__(self) -> int:
        import fcntl

        self.blocking = os.get_blocking(self.fd)
        self.private = fcntl.fcntl(self.fd, fcntl.F_DUPFD_CLOEXEC, 3)
        diversion = os.open(os.devnull, os.O_RDONLY) if self.fd == 0 else os.dup(2)
        try:
            os.dup2(diversion, self.fd)
        finally:
            os.close(diversion)
        if self.fd == 1:
            sys.stdout.flush()
        return self.private

    def __exit__(self, *exc: object) -> None:
        if self.private is None:
            return
        try:
            os.set_blocking(self.private, self.blocking)
            os.dup2(self.private, self.fd)
        except OSError:
            log.warning("could not restore fd %d after serving stdio", self.fd)
        finally:
            os.close(self.private)
            self.private = None
