"""The chat's own vocabulary, shared by providers, the orchestrator and the web handler.

Nothing here knows a provider's wire format or the web: a conversation is a list of
:class:`ChatMessage`; a model's stream is a sequence of :class:`TextDelta` and
:class:`ToolCallEvent`; a tool the model may call is a :class:`ToolSpec` under its qualified
name (``server:tool``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ChatMessage",
    "Role",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallEvent",
    "ToolSpec",
    "new_id",
]

Role = Literal["user", "assistant", "tool"]


def new_id(prefix: str = "") -> str:
    return prefix + uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: its qualified name, description and JSON Schema."""

    name: str
    description: str
    input_schema: dict[str, Any]
    destructive: bool = False


@dataclass
class ToolCall:
    """A call the model asked for.

    ``native``: it came through the provider's tool-call API (else from a ```tool block in the
    text). ``arguments`` is None when the JSON could not be read; ``error`` then says why, and
    ``raw`` keeps what the model wrote so the answer to the model can quote it.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    native: bool = True
    raw: str = ""
    error: str | None = None


@dataclass
class ChatMessage:
    """One entry of a session's history.

    ``role="assistant"``: ``content`` is the text the model wrote (``tool_calls`` what it asked).
    ``role="tool"``: ``content`` is the result as the model will read it, ``tool_call_id`` and
    ``tool_name`` the call it answers, ``native`` whether that call was native (a block call's
    result goes back to the model as user text). ``provider_data`` keeps what a provider must
    send back verbatim (Gemini's thought signatures), keyed by provider name.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None
    native: bool = True
    is_error: bool = False
    id: str = field(default_factory=lambda: new_id("m-"))
    created_at: float = field(default_factory=time.time)
    provider_data: dict[str, Any] = field(default_factory=dict)
    # for the page only, never sent to the model: a tool's pictures and how long the call took,
    # so a page that reconnects can draw the conversation again whole
    images: list[dict[str, str]] = field(default_factory=list)
    app: dict[str, Any] | None = None  # a tool result's MCP Apps view (server, uri, input, result), for the page
    duration_ms: int | None = None
    # a tool step's state beyond is_error ("declined", "cancelled"; "" when it ran) and its one-line
    # headline, so a reload draws each step as it ended
    outcome: str = ""
    headline: str = ""
    host_steps: list[dict[str, Any]] = field(default_factory=list)  # what the host ran for this call itself
    # a question with files attached: ``content`` (what the model reads) says where they were saved;
    # ``shown`` is what the person typed, ``attachments`` the files ({name, size})
    shown: str | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text, as it arrived."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A whole native tool call (its argument pieces already assembled by the provider)."""

    call: ToolCall


StreamEvent = TextDelta | ToolCallEvent
