"""Chat sessions (seed 004 §2.5): history, the running turn, pending confirmations, a rate limit.

A session outlives its WebSocket, and may have several: every page open on it (a phone and a
desktop on the same ``?session=``) gets every frame. A page reconnects with ``?session=<id>`` and finds its
history, its running turn and any confirmation still waiting; "New chat" leaves the old one
here, and :meth:`SessionManager.listing` lists them so the page can go back to one. Sessions
without a connection are dropped after ``idle_s``. In memory only, like the seed's MVP.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from llmem.core.ratelimit import TokenBucket
from llmem.host.chat import ChatMessage

__all__ = ["MAX_PAGES", "PendingConfirm", "RateLimiter", "Session", "SessionManager"]

Send = Callable[[dict[str, Any]], Awaitable[None]]


#: questions that say nothing of what a chat is about: not its title when a real one follows
_SMALL_TALK = re.compile(r"^(what can you do|help|tools|hi|hello|hey|thanks|thank you)\W*$|^/tool\b", re.IGNORECASE)

RateLimiter = TokenBucket  # a page's messages, limited as the servers limit calls
APP_RATE, APP_BURST = 20.0, 60  # requests per second from a page's views, and the burst
MAX_PAGES = 8  # pages connected to one session at once; the oldest is told it was replaced
UNDO_S = 600.0  # a deleted chat can be brought back for this long
MAX_TITLE = 120  # characters of a chat's name


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
    last_active_at: float = field(default_factory=time.time)  # the same moment, on the clock, for the page
    #: the pages connected to it, by connection id, in the order they came: each gets every frame
    connections: dict[str, Send] = field(default_factory=dict)
    turn: anyio.CancelScope | None = None
    confirms: dict[str, PendingConfirm] = field(default_factory=dict)
    always_allowed: set[str] = field(default_factory=set)  # tools the person allowed for the session
    model: str | None = None  # the id of the model chosen on the page (None: the host's default)
    title: str | None = None  # the name the person gave the chat (None: its first question of substance)
    #: the MCP Apps views' tools/call and resources/read: a live view polls and follows a slider
    app_limiter: RateLimiter = field(default_factory=lambda: RateLimiter(APP_RATE, APP_BURST))

    @property
    def turn_running(self) -> bool:
        return self.turn is not None

    def questions(self) -> list[ChatMessage]:
        """The person's messages, in order: a question's index is its place here."""
        return [m for m in self.history if m.role == "user"]

    def rewind(self, index: int) -> ChatMessage:
        """Forget the question at ``index`` and everything after it (to ask it again, or another
        in its place); the question removed. ``IndexError`` when there is no such question."""
        asked = [i for i, m in enumerate(self.history) if m.role == "user"]
        if not 0 <= index < len(asked):
            raise IndexError(f"this chat has {len(asked)} questions; index {index} is none of them")
        removed = self.history[asked[index]]
        del self.history[asked[index] :]
        return removed

    def text(self) -> str:
        """What the chat says, for a search: its name, the questions, the answers, the steps' tools
        (in that order: a snippet is taken from the first line that holds the most words)."""
        parts = [self.title or ""]
        parts += [m.shown if m.shown is not None else m.content for m in self.history if m.role == "user"]
        parts += [m.content for m in self.history if m.role == "assistant"]
        parts += [m.tool_name or "" for m in self.history if m.role == "tool"]
        return "\n".join(parts)

    def summary(self) -> dict[str, Any]:
        """The session as the page's list of chats shows it: the name the person gave it, else its
        first question of substance (not "What can you do?" when a real one came later), and when
        it was last active."""
        asked = [" ".join((m.shown if m.shown is not None else m.content).split()) for m in self.questions()]
        first = next((q for q in asked if not _SMALL_TALK.match(q)), asked[0] if asked else "")
        title = self.title or first
        return {
            "id": self.id,
            "title": title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…",
            "named": self.title is not None,
            "messages": len(asked),
            "createdAt": self.created_at,
            "lastActiveAt": round(self.last_active_at, 3),
            "lastActiveS": round(time.monotonic() - self.last_active),
            "turnRunning": self.turn_running,
        }

    async def emit(self, message: dict[str, Any], *, skip: str | None = None) -> None:
        """Send to every connected page (but ``skip``, a connection id); a turn goes on while no
        page is there."""
        self.last_active, self.last_active_at = time.monotonic(), time.time()
        for connection_id, send in list(self.connections.items()):
            if connection_id == skip:
                continue
            try:
                await send(message)
            except Exception:  # the page went away mid-send: it will resume from the history
                if self.connections.get(connection_id) is send:
                    del self.connections[connection_id]


class SessionManager:
    """The host's chats. A deleted chat is kept for ``undo_s`` seconds, so the page can bring it back."""

    def __init__(
        self, *, rate: float = 1.0, burst: int = 10, idle_s: float = 7 * 24 * 3600.0, undo_s: float = UNDO_S
    ) -> None:
        self.rate, self.burst, self.idle_s, self.undo_s = rate, burst, idle_s, undo_s
        self._sessions: dict[str, Session] = {}
        self._deleted: dict[str, tuple[Session, float]] = {}  # id -> (session, when it was deleted)

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self) -> Session:
        session = Session(id=secrets.token_urlsafe(16), limiter=RateLimiter(self.rate, self.burst))
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        return self._sessions.get(session_id) if session_id else None

    def listing(self, query: str = "") -> list[dict[str, Any]]:
        """The sessions that hold a conversation, the latest first; with ``query``, those whose
        name, questions, answers or steps hold every word of it (any case), each with the line
        that holds the most of them (the first such line: a question before any answer), as
        ``match``."""
        kept = [s for s in self._sessions.values() if any(m.role == "user" for m in s.history)]
        ordered = sorted(kept, key=lambda s: s.last_active, reverse=True)
        words = query.lower().split()
        if not words:
            return [s.summary() for s in ordered]
        found = []
        for session in ordered:
            text = session.text()
            lowered = text.lower()
            if all(w in lowered for w in words):
                found.append({**session.summary(), "match": _line_with(text, words)})
        return found

    def rename(self, session_id: str, title: str) -> Session:
        """Give a chat a name ("" gives it back its first question as its name)."""
        session = self._sessions[session_id]
        name = " ".join(title.split())
        session.title = name[:MAX_TITLE] or None
        return session

    def delete(self, session_id: str) -> Session:
        """Remove a chat from the list; :meth:`restore` brings it back within ``undo_s`` seconds."""
        session = self._sessions.pop(session_id)
        if session.turn is not None:
            session.turn.cancel()
        self._deleted[session_id] = (session, time.monotonic())
        return session

    def restore(self, session_id: str) -> Session:
        session, when = self._deleted.pop(session_id)
        if time.monotonic() - when > self.undo_s:
            raise KeyError(session_id)
        self._sessions[session_id] = session
        return session

    def sweep(self) -> list[str]:
        """Drop sessions with no page and no turn for ``idle_s``; the ids dropped."""
        now = time.monotonic()
        gone = [
            s.id
            for s in self._sessions.values()
            if not s.connections and s.turn is None and now - s.last_active > self.idle_s
        ]
        for session_id in gone:
            del self._sessions[session_id]
        for session_id, (_, when) in list(self._deleted.items()):
            if now - when > self.undo_s:
                del self._deleted[session_id]
        return gone


def _line_with(text: str, words: list[str], width: int = 120) -> str:
    """The line of ``text`` holding the most of ``words`` (any case; the first of those), cut to
    about ``width`` around the first of them it holds."""
    lines = [line for line in text.split("\n") if line.strip()] or [""]
    best = max(lines, key=lambda line: sum(w in line.lower() for w in words))  # max keeps the first
    lowered = best.lower()
    # a letter whose lower case is longer than itself can move the place: then the line's start
    at = min((lowered.find(w) for w in words if w in lowered), default=0)
    line = best
    if len(line) > width:
        left = max(0, at - width // 3)
        line = ("…" if left else "") + line[left : left + width].strip() + "…"
    return " ".join(line.split())
