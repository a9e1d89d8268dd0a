"""Settings every server of the suite shares: workspace, store location, limits.

Nothing here depends on the current directory unless no workspace was given at all, and
every limit can be overridden by an environment variable (``LLMEM_MAX_ANSWER_CHARS`` …).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["DEFAULT_PORTS", "Limits", "ServerConfig", "resolve_store_root", "user_data_root"]

Transport = Literal["stdio", "streamable-http"]

DEFAULT_PORTS = {"llmem-mcp": 60125, "debrief-calc-mcp": 60124, "debrief-state-mcp": 60123}


def _env_int(name: str, default: int, minimum: int = 1) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise ValueError(
            f"environment variable {name}={raw!r} must be " + ("positive" if minimum == 1 else f"at least {minimum}")
        )
    return value


@dataclass(frozen=True)
class Limits:
    """Caps enforced by every server (suite.md §7); each is reported in the errors it causes."""

    answer_chars: int = 20_000
    input_bytes: int = 5_000_000
    result_chars: int = 200_000
    tool_timeout_s: int = 300
    max_steps: int = 3
    ticket_ttl_s: int = 3_600
    max_file_bytes: int = 1_000_000
    #: How long a folder parse answers within; past it the parse goes on in the background.
    parse_budget_s: int = 20
    #: How long a read (a search, a folder prompt) may spend re-parsing files changed since they
    #: were outlined before it answers; what it could not reach it marks stale. A read about one
    #: file always brings that file up to date. 0: never wait, mark every changed file stale.
    refresh_budget_ms: int = 1_000
    #: Calls a client may make (token buckets, ``llmem.core.ratelimit``): writes on average per
    #: minute and in one burst; reads likewise, generously.
    writes_per_minute: int = 600
    write_burst: int = 60
    reads_per_minute: int = 6_000
    read_burst: int = 600

    @classmethod
    def from_env(cls) -> Limits:
        d = cls()
        return cls(
            answer_chars=_env_int("LLMEM_MAX_ANSWER_CHARS", d.answer_chars),
            input_bytes=_env_int("LLMEM_MAX_INPUT_BYTES", d.input_bytes),
            result_chars=_env_int("LLMEM_MAX_RESULT_CHARS", d.result_chars),
            tool_timeout_s=_env_int("LLMEM_TOOL_TIMEOUT", d.tool_timeout_s),
            max_steps=_env_int("LLMEM_MAX_STEPS", d.max_steps),
            ticket_ttl_s=_env_int("LLMEM_TICKET_TTL", d.ticket_ttl_s),
            max_file_bytes=_env_int("LLMEM_MAX_FILE_BYTES", d.max_file_bytes),
            parse_budget_s=_env_int("LLMEM_PARSE_BUDGET", d.parse_budget_s),
            refresh_budget_ms=_env_int("LLMEM_REFRESH_BUDGET_MS", d.refresh_budget_ms, minimum=0),
            writes_per_minute=_env_int("LLMEM_WRITES_PER_MINUTE", d.writes_per_minute),
            write_burst=_env_int("LLMEM_WRITE_BURST", d.write_burst),
            reads_per_minute=_env_int("LLMEM_READS_PER_MINUTE", d.reads_per_minute),
            read_burst=_env_int("LLMEM_READ_BURST", d.read_burst),
        )


def user_data_root() -> Path:
    """The per-user data folder; ``LLMEM_DATA_DIR`` overrides it (tests point it at a temp dir)."""
    override = os.environ.get("LLMEM_DATA_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("llmem", appauthor=False))


def resolve_store_root(store: str, workspace: Path) -> Path:
    """``workspace`` → ``<ws>/.llmem``; ``user`` → a per-workspace folder under the user data dir."""
    if store == "workspace":
        return workspace / ".llmem"
    if store == "user":
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", workspace.name).strip("-") or "workspace"
        digest = hashlib.sha256(str(workspace).encode("utf-8")).hexdigest()[:10]
        return user_data_root() / "stores" / f"{slug}-{digest}"
    return Path(store).expanduser().resolve()


@dataclass
class ServerConfig:
    """What a server was started with, after the CLI and the environment were read."""

    server_name: str
    workspace: Path | None  # None: pick the client's roots or the current directory at first use
    store: str = "workspace"
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int | None = None
    log_level: str = "info"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits.from_env)
    auth_token: str | None = field(default=None, repr=False)  # HTTP only: the Bearer token every request needs
