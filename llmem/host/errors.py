"""The errors of the host coordinator (drawn in ``llmem.host``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ArgumentError",
    "CallTimeout",
    "CircuitOpen",
    "ConfigError",
    "HostError",
    "NameConflict",
    "ProviderError",
    "ServerFailed",
    "UnknownTool",
]


class HostError(Exception):
    """Anything the coordinator refuses or cannot do; the message says what and what to do."""


class ConfigError(HostError):
    """The configuration cannot be used."""


class NameConflict(HostError):
    """Two things share a name; ``candidates`` are the qualified names to choose from."""

    def __init__(self, message: str, candidates: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.candidates = tuple(candidates)


class UnknownTool(HostError):
    """No tool of that name; ``suggestions`` are the closest qualified names."""

    def __init__(self, message: str, name: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.suggestions = tuple(suggestions)


class ArgumentError(HostError):
    """Arguments that break the tool's JSON Schema: ``path`` (JSON path) and ``rule`` (keyword)."""

    def __init__(self, message: str, tool: str, path: str, rule: str, errors: Sequence[dict[str, str]] = ()) -> None:
        super().__init__(message)
        self.tool, self.path, self.rule = tool, path, rule
        self.errors = list(errors)


class CallTimeout(HostError):
    """The call did not finish within ``timeout_s``."""

    def __init__(self, message: str, tool: str, timeout_s: float) -> None:
        super().__init__(message)
        self.tool, self.timeout_s = tool, timeout_s


class CircuitOpen(HostError):
    """The server's breaker is open: ``retry_at`` (on the coordinator's clock) is when it half-opens."""

    def __init__(self, message: str, server: str, failures: int, retry_at: float, retry_in_s: float) -> None:
        super().__init__(message)
        self.server, self.failures, self.retry_at, self.retry_in_s = server, failures, retry_at, retry_in_s


class ServerFailed(HostError):
    """The server could not start, its transport broke, or it answered that it is unwell."""

    def __init__(self, message: str, server: str, rpc_code: int | None = None) -> None:
        super().__init__(message)
        self.server, self.rpc_code = server, rpc_code


class ProviderError(HostError):
    """The model provider failed: ``retryable`` when trying again may help (connection, timeout,
    rate limit, 5xx); ``status`` is the HTTP status when there was one. The message never holds
    a key."""

    def __init__(self, message: str, provider: str, *, retryable: bool = False, status: int | None = None) -> None:
        super().__init__(message)
        self.provider, self.retryable, self.status = provider, retryable, status
