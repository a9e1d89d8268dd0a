"""The one interface every model provider implements, and what they share.

A provider turns (system prompt, history, tools) into a stream of :class:`TextDelta` and whole
native :class:`ToolCallEvent` s. It never parses ```tool blocks (the orchestrator does, for every
provider alike), never retries (the orchestrator does, with backoff) and never logs a key.
Failures are :class:`ProviderError`, ``retryable`` when trying again may help.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import ClassVar

from llmem.host.chat import ChatMessage, StreamEvent, TextDelta, ToolSpec
from llmem.host.errors import ProviderError

__all__ = ["CALLBACK_SYSTEM", "Provider", "ProviderSettings", "WireNames", "tool_result_text"]

CALLBACK_SYSTEM = (
    "You are the model of an MCP host. A tool has handed you a prompt to answer. Answer exactly as "
    "the prompt asks (its format, its keys, its length); write nothing before or after the answer."
)

_WIRE_OK = re.compile(r"[^a-zA-Z0-9_-]")


class ProviderSettings:
    """What the command line and environment give a provider: model, base URL, key, limits."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_tokens: int = 4096,
        temperature: float | None = None,
    ) -> None:
        self.model, self.base_url, self.api_key = model, base_url, api_key
        self.timeout_s, self.max_tokens, self.temperature = timeout_s, max_tokens, temperature

    def __repr__(self) -> str:  # the key never reaches a log line or a traceback
        return f"ProviderSettings(model={self.model!r}, base_url={self.base_url!r}, api_key={'***' if self.api_key else None})"


class WireNames:
    """Qualified tool names (``debrief-calc:run_tool``) as the function names providers accept
    (``^[a-zA-Z0-9_-]{1,64}$``: no colon), and back. A name the model invents maps to itself."""

    def __init__(self, qualified: Iterable[str]) -> None:
        self._to_wire: dict[str, str] = {}
        self._to_qualified: dict[str, str] = {}
        for name in qualified:
            if name in self._to_wire:
                continue
            wire = _WIRE_OK.sub("_", name.replace(":", "__"))
            if len(wire) > 64 or wire in self._to_qualified:
                wire = wire[:55] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
            self._to_wire[name] = wire
            self._to_qualified[wire] = name

    def wire(self, qualified: str) -> str:
        return self._to_wire.get(qualified, qualified)

    def qualified(self, wire: str) -> str:
        return self._to_qualified.get(wire, wire)


def tool_result_text(message: ChatMessage) -> str:
    """A tool result as user text, for calls that came as ```tool blocks (or providers without tools)."""
    state = "error" if message.is_error else "result"
    return f"[tool {state} for {message.tool_name} (call {message.tool_call_id})]\n{message.content}"


class Provider(ABC):
    """A model behind one interface. ``name`` is the ``--provider`` value."""

    name: ClassVar[str]
    #: True when the provider passes tools natively (else they are only in the system prompt)
    native_tools: bool = True
    #: what the page offers to ask (empty: the page's own examples); the stand-in's are what it can play
    suggestions: tuple[str, ...] = ()

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def label(self) -> str:
        """What the page shows: provider, model and where it runs; never a key."""
        where = f" at {self.settings.base_url}" if self.settings.base_url else ""
        return f"{self.name} · {self.settings.model}{where}"

    @abstractmethod
    def stream(
        self, system: str, history: Sequence[ChatMessage], tools: Sequence[ToolSpec]
    ) -> AsyncIterator[StreamEvent]:
        """The model's answer to ``history``, as it arrives. Raises :class:`ProviderError`."""

    async def complete(self, prompt: str, *, task: str | None = None) -> str:
        """A one-shot answer to a tool's prompt (the callback protocol): no tools, whole text."""
        parts: list[str] = []
        async for event in self.stream(CALLBACK_SYSTEM, [ChatMessage(role="user", content=prompt)], []):
            if isinstance(event, TextDelta):
                parts.append(event.text)
        return "".join(parts)

    async def aclose(self) -> None:
        """Release the provider's connections (the stand-in has none)."""
        return None

    def _missing(self, package: str, extra: str) -> ProviderError:
        """The error of a provider whose SDK (an optional extra) is not installed."""
        return self._fail(
            f"the {package!r} package is not installed; install the extra: pip install 'llmem-debrief-mcp[{extra}]'"
        )

    def _fail(self, message: str, *, retryable: bool = False, status: int | None = None) -> ProviderError:
        key = self.settings.api_key
        if key and key in message:  # a server that echoes the key back in its error
            message = message.replace(key, "[redacted]")
        return ProviderError(f"{self.name}: {message}", self.name, retryable=retryable, status=status)
