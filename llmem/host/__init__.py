"""The host's MCP coordinator (seed 004, §2.4): many stdio servers behind one registry of tools.

A chat host reads an ``mcp_config.json``, starts every server over stdio, lists their tools
under qualified names ``server:tool``, reads each server's ``tool-descriptions`` prompt (or
writes a fallback guide from ``tools/list`` when a server has none), and calls tools with the
arguments checked against each tool's JSON Schema first, a timeout on every call and a circuit
breaker per server. No server module imports this one: it is the client side of the suite.

Usage::

    specs = load_config("mcp_config.json", {"${workspaceFolder}": "/home/me/project"})
    async with Coordinator(specs) as host:
        guide = host.descriptions("llmem")
        result = await host.call("llmem:generate_artifact", {"path": "."}, timeout_s=60)

Errors (all raised by the coordinator derive from ``HostError``)::

    HostError
    ├── ConfigError    the config file is missing, unreadable or malformed; an unresolved placeholder
    ├── NameConflict   two servers with one name; two tools with one qualified name; a bare tool
    │                  name that several servers offer (``candidates`` lists the qualified names)
    ├── UnknownTool    no tool of that name (``suggestions`` lists close names)
    ├── ArgumentError  the arguments break the tool's schema (``path``, ``rule``); nothing was sent
    ├── CallTimeout    no answer within the call's timeout; the request was cancelled
    ├── CircuitOpen    the server failed too often; calls fail fast until ``retry_at``
    └── ServerFailed   the server could not start, its transport broke, or it answered a
                       JSON-RPC error that says it is unwell (internal error, connection closed)

What trips the breaker: a broken transport, a JSON-RPC internal error and a timeout: signs that
the server is unwell. A result with ``isError`` is a proper answer (a domain error the server
explained), and a JSON-RPC error refusing the request (−32602, −32601) is the caller's mistake:
both count as the server working. After ``failure_threshold`` consecutive failures the breaker
opens; calls then fail fast with ``CircuitOpen`` until ``cooldown_s`` has passed on the injected
clock; then it is half-open and lets one call through: success closes it, failure re-opens it.
"""

from __future__ import annotations

from llmem.host.breaker import CircuitBreaker
from llmem.host.config import ServerSpec, load_config, parse_config
from llmem.host.coordinator import Attached, Coordinator, ToolEntry, ToolResult
from llmem.host.errors import (
    ArgumentError,
    CallTimeout,
    CircuitOpen,
    ConfigError,
    HostError,
    NameConflict,
    ServerFailed,
    UnknownTool,
)

__all__ = [
    "ArgumentError",
    "Attached",
    "CallTimeout",
    "CircuitBreaker",
    "CircuitOpen",
    "ConfigError",
    "Coordinator",
    "HostError",
    "NameConflict",
    "ServerFailed",
    "ServerSpec",
    "ToolEntry",
    "ToolResult",
    "UnknownTool",
    "load_config",
    "parse_config",
]
