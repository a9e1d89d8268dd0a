"""The stdio transport, with one repair: requests the SDK's parser refuses still get an answer.

The SDK validates each stdin line with pydantic-core, whose JSON parser stops at a nesting
depth (~200) that Python's ``json`` does not. Such a line is a well-formed request the client
waits on, but the SDK only logs it and never answers, so the client hangs. Here the refused
line is read again with ``json``; when it is a request with an id, it gets a JSON-RPC
``Invalid Request`` error naming the problem. Lines that are not JSON at all stay ignored.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import anyio
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = ["answer_for_refused_line", "run_stdio"]

log = logging.getLogger("llmem.stdio")


def answer_for_refused_line(exc: Exception) -> JSONRPCError | None:
    """The error answer owed for a line the SDK could not parse, if it was a request with an id."""
    if not isinstance(exc, ValidationError):
        return None
    for err in exc.errors(include_url=False):
        raw = err.get("input")
        if err.get("type") != "json_invalid" or not isinstance(raw, str):
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


async def run_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server
    from mcp.shared._context_streams import create_context_streams
    from mcp.shared.message import SessionMessage

    async with stdio_server() as (sdk_read, write):
        send, read = create_context_streams[SessionMessage | Exception](0)

        async def pump() -> None:
            async with send:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        reply = answer_for_refused_line(item)
                        if reply is not None:
                            log.info("answered a request the parser refused", extra={"rpc_id": reply.id})
                            await write.send(SessionMessage(reply))
                    await send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            await server.run(read, write, server.create_initialization_options())
            tg.cancel_scope.cancel()
