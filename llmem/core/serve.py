"""Server bootstrap shared by the suite: one MCPServer subclass that every server wires into.

It adds what the SDK leaves to each server: unknown tools answered with JSON-RPC −32602,
schema failures and domain errors returned as structured tool errors (``isError`` with the
error object in ``structuredContent``), internal failures logged with their traceback and
answered with ``INTERNAL``, the answer-size and input-size caps, a per-tool timeout, sync
tools run in a worker thread, a rate limit per client (``ratelimit.py``: over it a call is
refused ``RATE_LIMITED`` with ``retry_after`` before it runs), one JSON log line per call, and
the ``tool-descriptions`` prompt generated from the registered tools.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from llmem.core.arguments import argument_error
from llmem.core.envelope import Envelope
from llmem.core.errors import SuiteError
from llmem.core.images import WithImages
from llmem.core.ratelimit import RateLimiter
from llmem.core.runtime import Runtime
from llmem.core.schema import compact_schema, tool_annotations

__all__ = ["ErrorPayload", "Runtime", "SuiteServer", "compact_schema", "tool_annotations", "with_images"]

calls_log = logging.getLogger("llmem.calls")
log = logging.getLogger("llmem.core.serve")

ErrorPayload = Callable[[SuiteError, float], dict[str, Any]]


class SuiteServer(MCPServer[Any]):
    """An MCPServer with the suite's error, limit, logging and guide conventions."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        name: str,
        version: str,
        instructions: str,
        purpose: str,
        protocol_notes: str,
        error_payload: ErrorPayload,
        argument_error_code: str = "INVALID_ARGUMENT",
        guide_sections: list[tuple[str, str]] | None = None,
    ):
        super().__init__(name=name, version=version, instructions=instructions)
        self._guide_sections = list(guide_sections or [])
        self.runtime = runtime
        self.limits = runtime.limits
        self._purpose = purpose
        self._protocol_notes = protocol_notes
        self._error_payload = error_payload
        self._argument_error_code = argument_error_code
        self._tool_order: list[tuple[str, str]] = []
        self._payload_for: dict[str, ErrorPayload] = {}
        self._returns: dict[str, Callable[..., Any]] = {}
        self._listed: list[Any] | None = None
        self._answer_caps: dict[str, int] = {}
        lim = self.limits
        self.rate_limiter = RateLimiter(
            writes_per_minute=lim.writes_per_minute,
            write_burst=lim.write_burst,
            reads_per_minute=lim.reads_per_minute,
            read_burst=lim.read_burst,
        )
        self.add_prompt_fn()

    # -- registration -------------------------------------------------------------------

    def add_suite_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        description: str,
        annotations: ToolAnnotations,
        correlation: str | None = "ticket",
        error_payload: ErrorPayload | None = None,
        meta: dict[str, Any] | None = None,
        answer_chars: int | None = None,
    ) -> None:
        """Register ``fn``; ``error_payload`` overrides the server's error shape for this tool,
        ``meta`` is the tool's ``_meta`` (an MCP App's ``ui`` link), and ``answer_chars`` its own
        answer cap: only for tools whose answers never reach the model (an app-only tool feeding a
        view), since the cap exists to keep the model's context whole.

        The answer is always a ``CallToolResult`` with structured content (``_enforce_answer_cap``),
        so the SDK is not asked to build an output model and its JSON schema for each tool at
        start-up: the schema clients are sent keeps only the members errors carry too
        (:meth:`_output_schema`) and is made from the return model's fields at the first
        ``tools/list``.
        """
        wrapped = self._wrap(fn, name, correlation, error_payload or self._error_payload)
        self._payload_for[name] = error_payload or self._error_payload
        self._returns[name] = fn
        if answer_chars is not None:
            self._answer_caps[name] = answer_chars
        self.add_tool(
            wrapped, name=name, description=description, annotations=annotations, structured_output=False, meta=meta
        )
        if "model" in ((meta or {}).get("ui") or {}).get("visibility", ["model"]):
            self._tool_order.append((name, description))  # a view's own tool (MCP Apps) is not the model's
        self._listed = None

    def _wrap(
        self, fn: Callable[..., Any], name: str, correlation: str | None, payload: ErrorPayload
    ) -> Callable[..., Awaitable[Any]]:
        is_async = inspect.iscoroutinefunction(fn)

        @functools.wraps(fn)
        async def tool(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            code: str | None = None
            corr = kwargs.get(correlation) if correlation else None
            step: Any = None
            try:
                if not self.runtime.ready:
                    await self.runtime.settle_from_client(_find_ctx(args, kwargs))
                with anyio.fail_after(self.limits.tool_timeout_s):
                    if is_async:
                        result = await fn(*args, **kwargs)
                    else:
                        from anyio import to_thread

                        call = functools.partial(fn, *args, **kwargs)
                        result = await to_thread.run_sync(call, abandon_on_cancel=True)
                corr = corr or _find_correlation(result)
                step = _find_step(result)
                result = self._enforce_answer_cap(name, result)
                if isinstance(result, CallToolResult) and result.is_error:
                    code = str((result.structured_content or {}).get("error", {}).get("code", "ERROR"))
                return result
            except SuiteError as err:
                code = err.code
                step = err.details.get("step")
                return self.error_result(err, started, payload)
            except anyio.get_cancelled_exc_class():
                code = "CANCELLED"  # the client went away or cancelled: nothing to answer
                raise
            except TimeoutError:
                code = "TIMEOUT"
                timeout = SuiteError(
                    f"{name} did not finish within {self.limits.tool_timeout_s} s; nothing was reported as done",
                    code="TIMEOUT",
                    details={"limit_s": self.limits.tool_timeout_s},
                    next_action="Narrow the request (a smaller folder, fewer features) and call again.",
                )
                return self.error_result(timeout, started, payload)
            except Exception:
                code = "INTERNAL"
                log.exception("tool %s failed unexpectedly", name)
                internal = SuiteError(
                    f"{name} failed with an internal error; the details are in the server log",
                    code="INTERNAL",
                )
                return self.error_result(internal, started, payload)
            finally:
                calls_log.info(
                    "tool call",
                    extra={
                        "tool": name,
                        "correlation_id": corr,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                        "success": code is None,
                        "error_code": code,
                        "step": step,
                    },
                )

        return tool

    def error_result(self, err: SuiteError, started: float, shape: ErrorPayload | None = None) -> CallToolResult:
        payload = (shape or self._error_payload)(err, round((time.perf_counter() - started) * 1000, 3))
        payload = _within(payload, self.limits.answer_chars)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structured_content=payload,
            is_error=True,
        )

    def error_answer(self, tool: str, err: SuiteError) -> CallToolResult:
        """What ``tool`` answers when it fails with ``err`` (its own error shape)."""
        return self.error_result(err, time.perf_counter(), self._payload_for.get(tool))

    def _enforce_answer_cap(self, name: str, result: Any) -> Any:
        """Serialise a model once, for both the text and the structured content, within the cap."""
        cap = self._answer_caps.get(name, self.limits.answer_chars)
        if isinstance(result, CallToolResult):
            # Built by the tool itself (images, say): its text parts are what count against the cap.
            size = sum(len(c.text) for c in result.content if isinstance(c, TextContent))
            if size > cap:
                raise SuiteError(
                    f"the answer of {name} would be {size} characters, over the cap of {cap}",
                    code="RESULT_TOO_LARGE",
                    details={"size": size, "limit": cap},
                )
            return result
        if isinstance(result, BaseModel):
            payload = result.wire_content() if isinstance(result, Envelope) else result.model_dump(mode="json")
            # pydantic-core's encoder: compact, UTF-8 as is, and several times faster than ``json``.
            text = to_json(payload).decode()
            size = len(text)
            if size > cap:
                raise SuiteError(
                    f"the answer of {name} would be {size} characters, over the cap of {cap}",
                    code="RESULT_TOO_LARGE",
                    details={"size": size, "limit": cap},
                    next_action="Ask for less: pass a smaller limit, use the cursor, or a narrower path.",
                )
            return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)
        return result

    async def list_tools(self) -> list[Any]:
        # Tool schemas cost the host's context on every turn (suite.md §9): send them compacted.
        if self._listed is None:
            tools = await super().list_tools()
            for t in tools:
                t.input_schema = compact_schema(t.input_schema)
                if t.name in self._returns:
                    t.output_schema = self._output_schema(t.name)
            self._listed = tools
        return self._listed

    def _output_schema(self, name: str) -> dict[str, Any]:
        """The output schema of a tool: an object with the required members of its return model
        that its error answers carry too, each with its ``type`` (and ``enum``).

        Clients such as the TypeScript SDK and the Inspector check ``structuredContent`` against
        the schema even when ``isError`` is set, so a member only successes carry cannot be
        required; the guide (``tool-descriptions``) documents the rest.
        """
        from pydantic import TypeAdapter

        payload = self._payload_for.get(name, self._error_payload)
        sample = payload(SuiteError("sample", code="SAMPLE"), 0.0)
        model = _return_model(self._returns[name])
        properties: dict[str, Any] = {}
        for field_name, info in model.model_fields.items() if model is not None else ():
            key = info.alias or field_name
            if info.is_required() and key in sample and info.annotation is not None:
                schema = TypeAdapter(info.annotation).json_schema()
                properties[key] = {k: v for k, v in schema.items() if k in ("type", "enum")}
        out: dict[str, Any] = {"properties": properties}
        if properties:
            out["required"] = list(properties)
        out["type"] = "object"
        return out

    # -- the SDK's call path --------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        registered = self._tool_manager.get_tool(name)
        if registered is None:
            # The MCP specification answers an unknown tool with a protocol error, not a tool result.
            shown = name if len(name) <= 100 else name[:100] + "…"
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {shown!r}. Available: {', '.join(n for n, _ in self._tool_order)}",
                data={"tool": shown},
            )
        started = time.perf_counter()
        read_only = bool(registered.annotations and registered.annotations.read_only_hint)
        verdict = self.rate_limiter.check(_client_key(context), "read" if read_only else "write")
        if not verdict.allowed:
            calls_log.info(
                "tool call", extra={"tool": name, "success": False, "error_code": "RATE_LIMITED", "duration_ms": 0.0}
            )
            return self.error_result(
                SuiteError(
                    f"too many {verdict.kind} calls: this client may make {verdict.rate_per_minute} a minute "
                    f"(bursts of {verdict.burst}); nothing was done. Call again in {verdict.retry_after:g} s",
                    code="RATE_LIMITED",
                    details={
                        "retry_after": verdict.retry_after,
                        "kind": verdict.kind,
                        "per_minute": verdict.rate_per_minute,
                        "burst": verdict.burst,
                    },
                    next_action=f"Wait {verdict.retry_after:g} s, then make the same call again.",
                ),
                started,
                self._payload_for.get(name),
            )
        size = len(json.dumps(arguments, default=str))
        if size > self.limits.input_bytes:
            return self.error_result(
                SuiteError(
                    f"the arguments are {size} bytes, over the input cap of {self.limits.input_bytes}: "
                    "pass a reference (a plot or a workspace path) instead of inline data",
                    code="PAYLOAD_TOO_LARGE",
                    details={"size": size, "limit": self.limits.input_bytes},
                    next_action="Pass a reference (a workspace path or a plot) instead of inline data.",
                ),
                started,
                self._payload_for.get(name),
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                err = argument_error(exc.__cause__, self._argument_error_code)
                calls_log.info(
                    "tool call",
                    extra={"tool": name, "success": False, "error_code": err.code, "duration_ms": 0.0},
                )
                return self.error_result(err, started, self._payload_for.get(name))
            raise

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        # The SDK answers an unknown prompt or bad prompt arguments with code 0 and an error log;
        # both are the caller's mistake: invalid params, as for an unknown tool.
        prompts = {p.name: p for p in await self.list_prompts()}
        shown = name if len(name) <= 100 else name[:100] + "…"
        if name not in prompts:
            raise MCPError(
                code=INVALID_PARAMS, message=f"Unknown prompt: {shown!r}. Available: {', '.join(sorted(prompts))}"
            )
        allowed = {a.name for a in prompts[name].arguments or []}
        extra = sorted(set(arguments or {}) - allowed)
        if extra:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"prompt {shown!r} takes no argument(s) {', '.join(a[:40] for a in extra[:10])}",
            )
        return await super().get_prompt(name, arguments, context)

    # -- the tool-descriptions prompt ------------------------------------------------------

    def add_prompt_fn(self) -> None:
        def tool_descriptions() -> str:
            return self.guide()

        self.prompt(
            name="tool-descriptions",
            title="How to use this server",
            description="A one-page guide: what the server is for, its workspace and store, its tools in order.",
        )(tool_descriptions)

    def guide(self) -> str:
        rt = self.runtime
        ws = (
            str(rt.workspace)
            if rt.ready
            else "not chosen yet (the client's roots or the current directory at first call)"
        )
        store = str(rt.store.root) if rt.ready else f"'{rt.config.store}' mode"
        lines = [
            f"# {self.name}",
            "",
            self._purpose,
            "",
            f"Workspace: {ws} ({rt.workspace_source}).",
            f"Artifact store: {store} (shared by every server of the suite and every process).",
            "",
            "## Tools, in the order a host uses them",
        ]
        lines += [f"- `{n}`: {d}" for n, d in self._tool_order]
        for heading, body in self._guide_sections:
            lines += ["", f"## {heading}", body]
        lines += ["", "## The callback protocol", self._protocol_notes, "", "## Limits"]
        lim = self.limits
        lines.append(
            f"Answers stay under {lim.answer_chars} characters (use cursor/limit to page); inputs over "
            f"{lim.input_bytes} bytes are refused; a callback ticket allows {lim.max_steps} attempts and "
            f"expires after {lim.ticket_ttl_s} s; each call times out after {lim.tool_timeout_s} s. "
            f"A client may make {lim.writes_per_minute} write calls a minute (bursts of {lim.write_burst}) and "
            f"{lim.reads_per_minute} reads (bursts of {lim.read_burst}); over that a call is refused "
            "RATE_LIMITED with details.retry_after (seconds) and nothing is done: wait, then call again "
            "(settings LLMEM_WRITES_PER_MINUTE, LLMEM_WRITE_BURST, LLMEM_READS_PER_MINUTE, LLMEM_READ_BURST)."
        )
        return "\n".join(lines)

    # -- transports -------------------------------------------------------------------------

    def serve(self) -> None:
        cfg = self.runtime.config
        if cfg.transport == "stdio":
            anyio.run(self.run_stdio_async)
            return
        anyio.run(self.serve_http)

    async def run_stdio_async(self) -> None:
        from llmem.core.stdio import run_stdio

        await run_stdio(self._lowlevel_server)

    async def serve_http(self) -> None:
        from llmem.core.http import serve_http

        await serve_http(self, self.runtime.config)


def _within(payload: dict[str, Any], cap: int) -> dict[str, Any]:
    """An error answer cut to the cap: errors echo client input (ids, names), which may be huge."""
    if len(json.dumps(payload, ensure_ascii=False)) <= cap:
        return payload
    for text_max, list_max in ((2_000, 50), (300, 10), (80, 3)):
        cut: dict[str, Any] = _shorten(payload, text_max, list_max)
        if len(json.dumps(cut, ensure_ascii=False)) <= cap:
            return cut
    last: dict[str, Any] = _shorten(payload, 80, 0)
    return {k: v for k, v in last.items() if k != "details"}


def _shorten(value: Any, text_max: int, list_max: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= text_max else value[:text_max] + f"… ({len(value)} characters)"
    if isinstance(value, list):
        head = [_shorten(v, text_max, list_max) for v in value[:list_max]]
        return [*head, f"… and {len(value) - list_max} more"] if len(value) > list_max else head
    if isinstance(value, dict):
        return {k: _shorten(v, text_max, list_max) for k, v in value.items()}
    return value


def _return_model(fn: Callable[..., Any]) -> type[BaseModel] | None:
    """The pydantic model ``fn`` answers with (for ``Annotated[CallToolResult, Model]``, the model)."""
    import typing

    hint = typing.get_type_hints(fn, include_extras=True).get("return")
    candidates = [hint, *getattr(hint, "__metadata__", ())]
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)


def _client_key(context: Context[Any, Any] | None) -> str:
    """Who is calling: over HTTP the session the client carries; over stdio the one client of
    this process (see ``ratelimit.py``)."""
    if context is None:
        return "client"
    try:
        headers = context.headers
    except Exception:  # outside a request (in-memory tests): the one client
        return "client"
    session = headers.get("mcp-session-id") if headers else None
    return f"session:{session}" if session else "client"


def _find_ctx(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Context[Any, Any] | None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, Context):
            return value
    return None


def _find_correlation(result: Any) -> str | None:
    args = getattr(result, "callbackArgs", None)
    if isinstance(args, dict):
        ticket = args.get("ticket")
        return str(ticket) if ticket else None
    return None


def _find_step(result: Any) -> Any:
    data = getattr(result, "data", None)
    return data.get("step") if isinstance(data, dict) else None


def with_images(answer: WithImages) -> CallToolResult:
    """An answer with pictures as the tool sends it: its JSON as text and structured content, then
    each of its ``images`` as image content (base64)."""
    import base64

    payload = answer.model_dump(mode="json")
    blocks: list[Any] = [TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))]
    blocks += [
        ImageContent(type="image", data=base64.b64encode(i.data).decode(), mime_type=i.media_type)
        for i in answer.images
    ]
    return CallToolResult(content=blocks, structured_content=payload)
