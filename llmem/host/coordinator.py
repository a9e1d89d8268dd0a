"""The coordinator: servers started over stdio, tools under qualified names, checked and timed calls."""

from __future__ import annotations

import difflib
import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TextIO

import anyio
from anyio.abc import TaskGroup, TaskStatus
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema.validators import Draft202012Validator, validator_for  # type: ignore[import-untyped]
from mcp import Client, MCPError
from mcp.client import Transport
from mcp.client.stdio import stdio_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp_types import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolResult,
    ImageContent,
    ReadResourceResult,
    TextContent,
    Tool,
)

from llmem.host.apps import APP_MIME, ViewRefused, app_callable, model_visible
from llmem.host.apps import visibility as app_visibility
from llmem.host.breaker import CircuitBreaker
from llmem.host.config import ServerSpec, tool_offered
from llmem.host.errors import (
    ArgumentError,
    CallTimeout,
    ConfigError,
    HostError,
    NameConflict,
    ServerFailed,
    UnknownTool,
)
from llmem.host.launch import StderrTail, failure_report

__all__ = ["Attached", "Coordinator", "ServerState", "ToolEntry", "ToolResult"]

log = logging.getLogger("llmem.host")

_MAX_PAGES = 100


@dataclass
class ToolEntry:
    """A tool of the registry, with its validator and call figures."""

    qualified_name: str
    server: str
    tool: Tool
    validator: Any = field(repr=False, default=None)
    calls: int = 0
    failures: int = 0
    total_ms: float = 0.0

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.calls if self.calls else 0.0


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: ``is_error`` is the server's own verdict (a domain error, explained)."""

    qualified_name: str
    result: CallToolResult
    duration_ms: float

    @property
    def is_error(self) -> bool:
        return bool(self.result.is_error)

    @property
    def structured(self) -> dict[str, Any]:
        data = self.result.structured_content
        return data if isinstance(data, dict) else {}

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.result.content if isinstance(c, TextContent))

    @property
    def images(self) -> list[ImageContent]:
        return [c for c in self.result.content if isinstance(c, ImageContent)]


@dataclass(frozen=True)
class Attached:
    """A server reached without launching it: anything ``mcp.Client`` accepts (an in-process
    ``MCPServer`` or ``Server``, a ``Transport``), or a ``Client`` not yet entered. For tests,
    and for hosts that embed servers."""

    name: str
    target: MCPServer[Any] | Server[Any] | Transport | Client
    timeout_s: float | None = None
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()

    def offers(self, tool: str) -> bool:
        return tool_offered(tool, self.include_tools, self.exclude_tools)


@dataclass(frozen=True)
class ServerState:
    """A configured server as the person sees it: ``running``; ``failing`` (its breaker is open:
    calls fail fast for a while); ``stopped`` (it ended after it started); ``failed`` (it never
    started). ``error`` says why, with its last stderr lines and a hint when it died."""

    name: str
    state: Literal["running", "failing", "stopped", "failed"]
    tools: int = 0
    error: str | None = None


@dataclass
class _Connection:
    name: str
    client: Client
    tools: list[Tool]
    guide: str
    guide_generated: bool
    breaker: CircuitBreaker
    timeout_s: float | None
    views: dict[str, ReadResourceResult] = field(default_factory=dict)  # ui:// HTML, read once
    last_error: str = ""  # the last failure that counted against its breaker
    ended: str | None = None  # why it stopped, once its stderr closed while it was meant to run
    tail: StderrTail | None = None  # its stderr, when the host launched it


def _fallback_guide(server: str, tools: Sequence[Tool]) -> str:
    """A ``tool-descriptions`` stand-in written from ``tools/list``: names, descriptions, arguments."""
    lines = [
        f"# {server}",
        "",
        "(Written by the host from tools/list: this server offers no `tool-descriptions` prompt.)",
        "",
        f"## Tools (call them as `{server}:<tool>`)",
    ]
    for tool in (t for t in tools if model_visible(t)):
        lines.append(f"- `{tool.name}`: {(tool.description or '(no description)').strip()}")
        props = tool.input_schema.get("properties") or {}
        required = set(tool.input_schema.get("required") or [])
        args = []
        for name, raw in props.items():
            sub = raw if isinstance(raw, dict) else {}
            kind = sub.get("type", "any")
            bits = ["|".join(kind) if isinstance(kind, list) else str(kind)]
            if name in required:
                bits.append("required")
            else:
                bits.append(f"default {json.dumps(sub['default'])}" if "default" in sub else "optional")
            if "enum" in sub:
                bits.append("one of " + ", ".join(json.dumps(v) for v in sub["enum"]))
            text = f"`{name}` ({'; '.join(bits)})"
            args.append(f"{text}: {sub['description']}" if sub.get("description") else text)
        lines.append("  Arguments: " + ("; ".join(args) if args else "none"))
        ann = tool.annotations
        if ann is not None:
            hints = [h for h, on in (("read-only", ann.read_only_hint), ("destructive", ann.destructive_hint)) if on]
            if hints:
                lines.append("  Hints: " + ", ".join(hints))
    if not tools:
        lines.append("(no tools discovered)")
    return "\n".join(lines)


def _validator(server: str, tool: Tool) -> Any:
    schema = tool.input_schema
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        log.warning(
            "the input schema of %s:%s is not valid JSON Schema (%s); arguments go unchecked",
            server,
            tool.name,
            exc.message,
        )
        return None
    return cls(schema)


# -- the coordinator ------------------------------------------------------------------------


class Coordinator:
    """Launch the servers, keep the registry, call tools with validation, timeout and breaker.

    ``servers``: stdio ``ServerSpec``s (from :func:`load_config`) and ``Attached`` servers.
    ``mode``: the ``mcp.Client`` connect mode (``"legacy"``: the initialize handshake every IDE
    uses; ``"auto"``: the stateless era with fallback). ``timeout_s``: the default per-call
    timeout (a spec's ``timeout_s`` and ``call(..., timeout_s=)`` override it). ``clock``: the
    breaker's clock, injectable for tests. ``strict``: a server that cannot start fails the
    whole start (else it is left out and listed in ``failed``). ``errlog``: where the servers'
    stderr goes (default: this process's stderr).
    """

    def __init__(
        self,
        servers: Iterable[ServerSpec | Attached],
        *,
        mode: str = "legacy",
        timeout_s: float = 30.0,
        startup_timeout_s: float = 30.0,
        failure_threshold: int = 3,
        cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        strict: bool = True,
        errlog: TextIO | None = None,
    ) -> None:
        self._specs = list(servers)
        names = [s.name for s in self._specs]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise NameConflict(
                f"two servers are named {twice[0]!r}; give each server of the config its own name", twice
            )
        self.mode, self.timeout_s, self.startup_timeout_s = mode, timeout_s, startup_timeout_s
        self.failure_threshold, self.cooldown_s, self.clock = failure_threshold, cooldown_s, clock
        self.strict, self.errlog = strict, errlog
        self.failed: dict[str, ServerFailed] = {}
        self._conns: dict[str, _Connection] = {}
        self._registry: dict[str, ToolEntry] = {}
        self._by_bare: dict[str, list[str]] = {}
        self._stack: AsyncExitStack | None = None
        self._stop: anyio.Event | None = None
        self._stopping = False  # set from a signal handler: the servers' ends from now on are expected

    # -- lifetime ----------------------------------------------------------------------------

    async def __aenter__(self) -> Coordinator:
        if self._stack is not None:
            raise RuntimeError("a Coordinator is entered once")
        stack = AsyncExitStack()
        self._stack, self._stop = stack, anyio.Event()
        try:
            tg = await stack.enter_async_context(anyio.create_task_group())
            started: dict[str, _Connection] = {}
            async with anyio.create_task_group() as starters:  # every server starts at once
                for spec in self._specs:
                    starters.start_soon(self._start_one, tg, spec, started)
            if self.failed and self.strict:
                first = next(iter(self.failed.values()))
                others = (
                    f" (also: {', '.join(n for n in self.failed if n != first.server)})" if len(self.failed) > 1 else ""
                )
                raise ServerFailed(f"{first}{others}", first.server, first.rpc_code)
            for spec in self._specs:  # registry in config order, whatever order the servers came up in
                if spec.name in started:
                    self._register(started[spec.name])
        except BaseException:
            self._stop.set()
            await stack.aclose()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # The body's own exception propagates as it is: the servers are stopped, not cancelled
        # into an exception group (each stdio shutdown is bounded: stdin closed, then terminate).
        if self._stop is not None:
            self._stop.set()
        if self._stack is not None:
            await self._stack.aclose()

    def stopping(self) -> None:
        """The host is stopping (Ctrl+C reaches the servers too): their ends are no failure."""
        self._stopping = True

    async def _start_one(self, tg: TaskGroup, spec: ServerSpec | Attached, started: dict[str, _Connection]) -> None:
        try:
            started[spec.name] = await tg.start(self._serve, spec)
        except Exception as exc:
            failure = (
                exc
                if isinstance(exc, ServerFailed)
                else ServerFailed(f"server {spec.name!r} could not start: {_describe(exc)}", spec.name)
            )
            log.error("%s", failure)
            self.failed[spec.name] = failure

    def _client(self, spec: ServerSpec | Attached, tail: StderrTail | None) -> Client:
        if isinstance(spec, ServerSpec):
            errlog = self.errlog if self.errlog is not None else tail.writer if tail is not None else None
            if errlog is not None:
                return Client(stdio_client(spec.parameters(), errlog=errlog), mode=self.mode)
            return Client(spec.parameters(), mode=self.mode)
        return spec.target if isinstance(spec.target, Client) else Client(spec.target, mode=self.mode)

    async def _serve(self, spec: ServerSpec | Attached, *, task_status: TaskStatus[_Connection]) -> None:
        """One server's lifetime, in its own task: connect, discover, then stay up until the end.
        A launched server's stderr is kept (:class:`StderrTail`): a server that dies, at start or
        later, is reported with its last lines and a hint."""
        live = False
        tail = None
        if isinstance(spec, ServerSpec) and self.errlog is None:
            tail = StderrTail(spec.name, on_end=lambda: self._stderr_ended(spec))
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.startup_timeout_s) as scope:
                try:
                    async with self._client(spec, tail) as client:
                        if tail is not None:
                            tail.close()  # the server has its copy: the stream ends when the server does
                        conn = await self._discover(spec, client)
                        conn.tail = tail
                        scope.deadline = math.inf
                        live = True
                        task_status.started(conn)
                        assert self._stop is not None
                        await self._stop.wait()
                except Exception as exc:
                    if not live:
                        raise self._start_failure(spec, exc, tail) from exc
                    log.warning("server %s ended with an error: %s", spec.name, _describe(exc))
            if scope.cancelled_caught and not live:
                raise self._start_failure(
                    spec,
                    None,
                    tail,
                    f"it did not answer its handshake and tools/list within {self.startup_timeout_s} s",
                )
        finally:
            if tail is not None:
                tail.close()

    def _start_failure(
        self, spec: ServerSpec | Attached, exc: BaseException | None, tail: StderrTail | None, what: str = ""
    ) -> ServerFailed:
        """Why ``spec`` did not start: what happened, its last stderr lines, a hint."""
        root = _leaf(exc) if exc is not None else None
        if root is not None and not what:
            closed = isinstance(root, MCPError) and root.error.code == CONNECTION_CLOSED
            what = "it ended before it answered (the connection closed)" if closed else _describe(root)
        if not isinstance(spec, ServerSpec):
            return ServerFailed(f"server {spec.name!r} could not start: {what}", spec.name)
        if tail is not None:
            tail.close()
        lines = tail.lines(wait_s=2.0) if tail is not None else []  # a dead server's last words, still in the pipe
        return ServerFailed(failure_report(spec.name, spec.command, spec.args, root, what, lines), spec.name)

    def _stderr_ended(self, spec: ServerSpec) -> None:
        """A running server's stderr closed (in its reader's thread): it has ended, unless the host is stopping."""
        conn = self._conns.get(spec.name)
        if conn is None or self._stopping or (self._stop is not None and self._stop.is_set()):
            return
        tail = conn.tail
        conn.ended = failure_report(
            spec.name,
            spec.command,
            spec.args,
            None,
            "its process ended (its stderr closed); calls to it fail until llmem-host is restarted",
            tail.lines() if tail is not None else [],
            stage="stopped",
        )
        log.error("%s", conn.ended)

    async def _discover(self, spec: ServerSpec | Attached, client: Client) -> _Connection:
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        hidden = [t.name for t in tools if not spec.offers(t.name)]
        if hidden:  # never offered, never callable: the config's allow/deny lists (seed 7.3)
            log.info("server %s: tools left out by includeTools/excludeTools: %s", spec.name, ", ".join(hidden))
            tools = [t for t in tools if spec.offers(t.name)]
        guide, generated = await self._guide(spec.name, client, tools)
        return _Connection(
            name=spec.name,
            client=client,
            tools=tools,
            guide=guide,
            guide_generated=generated,
            breaker=CircuitBreaker(spec.name, self.failure_threshold, self.cooldown_s, self.clock),
            timeout_s=spec.timeout_s,
        )

    async def _guide(self, server: str, client: Client, tools: Sequence[Tool]) -> tuple[str, bool]:
        why = "it declares no prompts"
        try:  # anything wrong with the prompt (missing, malformed, refused) falls back to tools/list
            if client.server_capabilities.prompts is not None:
                names, cursor = [], None
                for _ in range(_MAX_PAGES):
                    page = await client.list_prompts(cursor=cursor)
                    names += [p.name for p in page.prompts]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                why = "it lists no such prompt"
                if "tool-descriptions" in names:
                    prompt = await client.get_prompt("tool-descriptions")
                    first = (
                        prompt.messages[0].content if prompt.messages and prompt.messages[0].role == "user" else None
                    )
                    if isinstance(first, TextContent) and first.text.strip():
                        return first.text, False
                    why = "its prompt is not a user text message"
        except MCPError as exc:
            why = f"its prompt could not be read ({exc.error.message})"
        except Exception as exc:
            why = f"its prompt could not be read ({_describe(exc)})"
        log.warning(
            "no usable 'tool-descriptions' from server %s (%s): using a guide written from tools/list", server, why
        )
        return _fallback_guide(server, tools), True

    def _register(self, conn: _Connection) -> None:
        self._conns[conn.name] = conn
        for tool in conn.tools:
            qualified = f"{conn.name}:{tool.name}"
            if qualified in self._registry:
                other = self._registry[qualified]
                raise NameConflict(
                    f"the qualified name {qualified!r} is claimed twice: by tool {other.tool.name!r} of server "
                    f"{other.server!r} and by tool {tool.name!r} of server {conn.name!r}; rename one of the servers",
                    [qualified],
                )
            self._registry[qualified] = ToolEntry(qualified, conn.name, tool, _validator(conn.name, tool))
            if model_visible(tool):
                self._by_bare.setdefault(tool.name, []).append(qualified)

    # -- the registry --------------------------------------------------------------------------

    @property
    def servers(self) -> list[str]:
        return list(self._conns)

    def tools(self, server: str | None = None, *, include_app_only: bool = False) -> list[ToolEntry]:
        """The tools a model may see and call; with ``include_app_only``, also those only a view
        of their server may call (MCP Apps ``_meta.ui.visibility: ["app"]``)."""
        return [
            e
            for e in self._registry.values()
            if (server is None or e.server == server) and (include_app_only or model_visible(e.tool))
        ]

    def states(self) -> list[ServerState]:
        """Every configured server in config order: running, failing, stopped or failed, and why."""
        out = []
        for spec in self._specs:
            if spec.name in self.failed:
                out.append(ServerState(spec.name, "failed", 0, str(self.failed[spec.name])))
                continue
            conn = self._conns.get(spec.name)
            if conn is None:
                continue
            tools = sum(1 for t in conn.tools if model_visible(t))
            if conn.ended is not None:
                out.append(ServerState(spec.name, "stopped", tools, conn.ended))
            elif conn.breaker.state != "closed":
                why = conn.last_error or conn.breaker.last_failure
                out.append(ServerState(spec.name, "failing", tools, f"its calls fail fast for a while: {why}"))
            else:
                out.append(ServerState(spec.name, "running", tools))
        return out

    def descriptions(self, server: str) -> str:
        """The server's ``tool-descriptions`` prompt, or the guide written from its tools/list."""
        return self._conn(server).guide

    def descriptions_generated(self, server: str) -> bool:
        return self._conn(server).guide_generated

    def breaker(self, server: str) -> CircuitBreaker:
        return self._conn(server).breaker

    def _conn(self, server: str) -> _Connection:
        try:
            return self._conns[server]
        except KeyError:
            raise ConfigError(
                f"no server named {server!r}; this host runs: {', '.join(self._conns) or 'none'}"
            ) from None

    def resolve(self, name: str) -> ToolEntry:
        """A qualified ``server:tool`` name, or a bare tool name that only one server offers."""
        if name in self._registry:
            entry = self._registry[name]
            if not model_visible(entry.tool):
                raise UnknownTool(
                    f"{name} is callable only by the views of server {entry.server!r} (MCP Apps visibility "
                    f"{list(app_visibility(entry.tool))}), not by the model",
                    name,
                )
            return entry
        candidates = self._by_bare.get(name, [])
        if len(candidates) == 1:
            return self._registry[candidates[0]]
        if candidates:
            raise NameConflict(
                f"the tool name {name!r} is ambiguous: {', '.join(candidates)} offer it; call it by its qualified name",
                candidates,
            )
        visible = [q for q, e in self._registry.items() if model_visible(e.tool)]
        close = difflib.get_close_matches(name, visible + list(self._by_bare), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known tools: {', '.join(visible)}"
        raise UnknownTool(f"no tool named {name!r}{hint}", name, close)

    def validate(self, name: str, arguments: Mapping[str, Any] | None) -> ToolEntry:
        """Check the arguments against the tool's JSON Schema; ``ArgumentError`` names path and rule."""
        entry = self.resolve(name)
        args: Any = {} if arguments is None else arguments
        if entry.validator is None:
            return entry
        errors = sorted(
            entry.validator.iter_errors(args), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path)))
        )
        if errors:
            listed = [{"path": e.json_path, "rule": str(e.validator), "message": e.message} for e in errors]
            first = listed[0]
            more = f" (and {len(listed) - 1} more)" if len(listed) > 1 else ""
            raise ArgumentError(
                f"arguments of {entry.qualified_name} break its schema at {first['path']} "
                f"(rule {first['rule']!r}): {first['message']}{more}; nothing was sent",
                entry.qualified_name,
                first["path"],
                first["rule"],
                listed,
            )
        return entry

    # -- calls ----------------------------------------------------------------------------------

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> ToolResult:
        """Call a tool: resolve, validate, pass the breaker, call under a timeout, record the verdict."""
        return await self._call(self.validate(name, arguments), arguments, timeout_s)

    async def _call(self, entry: ToolEntry, arguments: Mapping[str, Any] | None, timeout_s: float | None) -> ToolResult:
        conn = self._conns[entry.server]
        conn.breaker.acquire()
        limit = timeout_s if timeout_s is not None else conn.timeout_s if conn.timeout_s is not None else self.timeout_s
        started = time.perf_counter()
        verdict = False
        try:
            with anyio.fail_after(limit):
                result = await conn.client.call_tool(entry.tool.name, dict(arguments or {}))
        except Exception as exc:
            error, counted = _classify(entry, limit, exc)
            verdict = True
            if counted:
                entry.failures += 1
                conn.last_error = str(error)
                conn.breaker.failure(f"{type(error).__name__} on {entry.tool.name}")
                if conn.breaker.state != "closed":
                    error.args = (
                        f"{error}; the circuit of {conn.name!r} is now open for {conn.breaker.cooldown_s:g} s",
                    )
            else:
                conn.breaker.success()  # the server answered: it is working
            raise error from exc
        else:
            verdict = True
            conn.breaker.success()
        finally:
            if not verdict:  # cancelled from outside: no verdict on the server
                conn.breaker.release()
            entry.calls += 1
            entry.total_ms += (time.perf_counter() - started) * 1000.0
        return ToolResult(entry.qualified_name, result, (time.perf_counter() - started) * 1000.0)

    # -- MCP Apps: what a view may ask of its own server ----------------------------------------

    async def call_from_view(self, server: str, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        """A view's ``tools/call``: only a tool of the view's own server whose visibility has "app"
        (the specification); ``ViewRefused`` (JSON-RPC invalid params) for any other."""
        entry = self._registry.get(f"{server}:{name}")
        if entry is None:
            raise ViewRefused(
                INVALID_PARAMS,
                f"a view of server {server!r} may call only that server's tools, and it has no tool {name!r}",
            )
        if not app_callable(entry.tool):
            raise ViewRefused(
                INVALID_PARAMS,
                f"tool {name!r} of server {server!r} is not callable from a view: its MCP Apps visibility is "
                f'{list(app_visibility(entry.tool))}, without "app"',
            )
        if entry.validator is not None:
            errors = sorted(entry.validator.iter_errors(dict(arguments or {})), key=lambda e: list(map(str, e.path)))
            if errors:
                raise ViewRefused(
                    INVALID_PARAMS,
                    f"arguments of {entry.qualified_name} break its schema at {errors[0].json_path}: "
                    f"{errors[0].message}; nothing was sent",
                )
        return await self._call(entry, arguments, None)

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """``resources/read`` on one server, for the page (a view's HTML) and for views. A view's
        ``ui://`` HTML is read once per server and address, then served from memory."""
        conn = self._conn(server)
        cached = conn.views.get(uri)
        if cached is not None:
            return cached
        limit = conn.timeout_s if conn.timeout_s is not None else self.timeout_s
        try:
            with anyio.fail_after(limit):
                result = await conn.client.read_resource(uri)
        except TimeoutError:
            raise CallTimeout(
                f"resources/read {uri} on {server!r} did not answer within {limit:g} s", uri, limit
            ) from None
        except MCPError as exc:
            raise ViewRefused(exc.error.code, f"server {server!r} could not read {uri}: {exc.error.message}") from exc
        if uri.startswith("ui://") and any(c.mime_type == APP_MIME for c in result.contents):
            conn.views[uri] = result
        return result


def _classify(entry: ToolEntry, limit: float, exc: Exception) -> tuple[HostError, bool]:
    """The error to raise for a failed call, and whether it counts against the server's breaker."""
    q, server = entry.qualified_name, entry.server
    if isinstance(exc, TimeoutError):
        return CallTimeout(f"{q} did not answer within {limit:g} s; the call was cancelled", q, limit), True
    if not isinstance(exc, MCPError):  # the transport itself broke: server gone, stream closed, garbage
        return ServerFailed(f"the connection to server {server!r} failed during {q}: {_describe(exc)}", server), True
    code, message = exc.error.code, exc.error.message
    if code == METHOD_NOT_FOUND or (code == INVALID_PARAMS and "unknown tool" in message.lower()):
        return UnknownTool(f"server {server!r} says: {message}", q), False
    if code == INVALID_PARAMS:
        return ArgumentError(
            f"server {server!r} refused the arguments of {q}: {message}", q, "$", f"server (JSON-RPC {code})"
        ), False
    if code == REQUEST_TIMEOUT:
        return CallTimeout(f"{q} timed out in the client session: {message}", q, limit), True
    unwell = {CONNECTION_CLOSED: "connection closed", INTERNAL_ERROR: "internal error"}.get(
        code, f"JSON-RPC error {code}"
    )
    return ServerFailed(f"server {server!r} failed on {q} ({unwell}): {message}", server, code), True


def _leaf(exc: BaseException) -> BaseException:
    """The first exception at the bottom of an exception group (or ``exc`` itself)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
