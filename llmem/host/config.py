"""Reading an ``mcp_config.json`` (the ``mcpServers`` form or VS Code's ``servers`` form)."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from llmem.host.errors import ConfigError, NameConflict
from llmem.host.launch import server_environment

__all__ = ["ServerSpec", "load_config", "parse_config", "tool_offered"]

_PLACEHOLDER = re.compile(r"\$\{[^}]+\}|/absolute/path/to/[\w./-]*")


@dataclass(frozen=True)
class ServerSpec:
    """One stdio server of a client configuration."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    timeout_s: float | None = None  # the seed's per-server ``timeoutMs``, when the config gives one
    # Gemini CLI's per-server ``includeTools``/``excludeTools`` (seed 7.3): glob patterns of bare
    # tool names; a tool is offered when it matches an include (or there is none) and no exclude.
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()

    def offers(self, tool: str) -> bool:
        return tool_offered(tool, self.include_tools, self.exclude_tools)

    def parameters(self) -> StdioServerParameters:
        """How to launch it: its command, with the environment a server needs to start (see
        :func:`llmem.host.launch.server_environment`) and the config's ``env`` on top."""
        return StdioServerParameters(
            command=self.command, args=list(self.args), env=server_environment(self.env), cwd=self.cwd
        )


def tool_offered(tool: str, include: tuple[str, ...] | None, exclude: tuple[str, ...]) -> bool:
    """Whether the allow (include) and deny (exclude) globs let the host offer this tool."""
    if any(fnmatch.fnmatchcase(tool, p) for p in exclude):
        return False
    return include is None or any(fnmatch.fnmatchcase(tool, p) for p in include)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise NameConflict(f"the key {key!r} appears twice in one object of the config; names must be unique")
        seen[key] = value
    return seen


def load_config(path: str | Path, substitutions: Mapping[str, str] | None = None) -> list[ServerSpec]:
    """Read a client configuration: the ``mcpServers`` form (Claude Desktop, Cursor, Antigravity)
    or the VS Code ``servers`` form, replacing each key of ``substitutions`` by its value."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the config {str(file)!r}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file.name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from exc
    return parse_config(data, substitutions, source=file.name)


def parse_config(
    data: Any, substitutions: Mapping[str, str] | None = None, *, source: str = "config"
) -> list[ServerSpec]:
    """The servers of an already-parsed configuration (see :func:`load_config`)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a JSON object")
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None or not isinstance(data[key], dict):
        raise ConfigError(
            f"{source}: expected an object under 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code)"
        )
    subs = sorted((substitutions or {}).items(), key=lambda kv: -len(kv[0]))  # longest placeholder first

    def sub(value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {where} must be a string, not {type(value).__name__}")
        text: str = value
        for old, new in subs:
            text = text.replace(old, new)
        left = _PLACEHOLDER.search(text)
        if left:
            raise ConfigError(
                f"{source}: {where} still holds the placeholder {left.group(0)!r}: replace it in the file, or run "
                f"llmem-host with --set '{left.group(0)}=VALUE' (--workspace fills ${{workspaceFolder}})"
            )
        return text

    specs = []
    for name, entry in data[key].items():
        where = f"{key}.{name}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{source}: {where} must be an object")
        kind = entry.get("type", "stdio")
        if kind != "stdio" or "url" in entry:
            raise ConfigError(f"{source}: {where} is a {kind!r} server; this host launches stdio servers only")
        if "command" not in entry:
            raise ConfigError(f"{source}: {where} has no 'command'")
        args = entry.get("args", [])
        env = entry.get("env")
        if not isinstance(args, list):
            raise ConfigError(f"{source}: {where}.args must be a list of strings")
        if env is not None and not isinstance(env, dict):
            raise ConfigError(f"{source}: {where}.env must be an object of strings")
        lists: dict[str, tuple[str, ...] | None] = {}
        for field_name in ("includeTools", "excludeTools"):
            value = entry.get(field_name)
            if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
                raise ConfigError(
                    f"{source}: {where}.{field_name} must be a list of tool names (globs like 'debrief_*')"
                )
            lists[field_name] = tuple(value) if value is not None else None
        timeout = entry.get("timeoutMs")
        if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
            raise ConfigError(f"{source}: {where}.timeoutMs must be a positive number")
        specs.append(
            ServerSpec(
                name=name,
                command=sub(entry["command"], f"{where}.command"),
                args=tuple(sub(a, f"{where}.args[{i}]") for i, a in enumerate(args)),
                env={k: sub(v, f"{where}.env.{k}") for k, v in env.items()} if env else None,
                cwd=sub(entry["cwd"], f"{where}.cwd") if entry.get("cwd") is not None else None,
                timeout_s=timeout / 1000.0 if timeout is not None else None,
                include_tools=lists["includeTools"],
                exclude_tools=lists["excludeTools"] or (),
            )
        )
    return specs


# -- the circuit breaker --------------------------------------------------------------------
