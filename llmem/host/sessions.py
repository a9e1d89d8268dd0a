"""Chat sessions (seed 004 §2.5): history, the running turn, pending confirmations, a rate limit.

A session outlives its WebSocket: the page reconnects with ``?session=<id>`` and finds its
history, its running turn and any confirmation still waiting. Sessions without a connection are
dropped after ``idle_s``. In memory only, like the seed's MVP.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from llmem.core.ratelimit import TokenBucket
from llmem.host.chat import ChatMessage

__all__ = ["PendingConfirm", "RateLimiter", "Session", "SessionManager"]

Send = Callable[[dict[str, Any]], Awaitable[None]]


RateLimiter = TokenBucket  # a page's messages, limited as the servers limit calls
APP_RATE, APP_BURST = 20.0, 60  # requests per second from a page's views, and the burst


@dataclass
class PendingConfirm:
    """A destructive call waiting for the person's answer."""

    request_id: str
    message: dict[str, Any]
    answered: anyio.Event = field(default_factory=anyio.Event)
    approve: bool = False


@dataclass
class Session:
    id: str
    limiter: RateLimiter
    history: list[ChatMessage] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    send: Send | None = None  # the connected page, if any
    connection_id: str | None = None
    turn: anyio.CancelScope | None = None
    confirms: dict[str, PendingConfirm] = field(default_factory=dict)
    always_allowed: set[str] = field(default_factory=set)  # tools the person allowed for the session
    #: the MCP Apps views' tools/call and resources/read: a live view polls and follows a slider
    app_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(APP_RATE, APP_BURST))

    @property
    def turn_running(self) -> bool:
        return self.turn is not None

    async def emit(self, message: dict[str, Any]) -> None:
        """Send to the page if one is connected; a turn goes on while the page is away."""
        self.last_active = time.monotonic()
        send = self.send
        if send is None:
            return
        try:
            await send(message)
        except Exception:  # the page went away mid-send: it will resume from the history
            if self.send is send:
                self.send = None


class SessionManager:
    def __init__(self, *, rate: float = 1.0, burst: int = 10, idle_s: float = 3600.0) -> None:
        self.rate, self.burst, self.idle_s = rate, burst, idle_s
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self) -> Session:
        session = Session(id=secrets.token_urlsafe(16), limiter=RateLimiter(self.rate, self.burst))
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        return self._sessions.get(session_id) if session_id else None

    def sweep(self) -> list[str]:
        """Drop sessions with no page and no turn for ``idle_s``; the ids dropped."""
        now = time.monotonic()
        gone = [
            s.id
            for s in self._sessions.values()
            if s.send is None and s.turn is None and now - s.last_active > self.idle_s
        ]
        for session_id in gone:
            del self._sessions[session_id]
        return gone
