"""Token buckets: how often a client may call the tools (seed 000, §4.2).

A model in a loop can call a write tool hundreds of times a second; each call rewrites a plot or
a note under a lock, so an unbounded burst starves every other client of the same files. Every
server refuses a call over its client's budget with ``RATE_LIMITED`` and ``retry_after`` (in
seconds) before the tool runs, so a refused call changes nothing. Writes (tools not marked
read-only) and reads have separate buckets; reads are generous.

A client is one connection: over stdio, the process (every client launches its own); over HTTP,
the ``mcp-session-id`` the client carries, or, for stateless requests without one, all such
requests together.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["RateLimiter", "TokenBucket", "Verdict"]

CallKind = Literal["read", "write"]

#: buckets kept at once; the least recently used client's is dropped first (it refills anyway)
_MAX_CLIENTS = 1024


class TokenBucket:
    """``rate`` calls a second on average, bursts of ``burst``."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs rate > 0 and burst >= 1 (got {rate}, {burst})")
        self.rate, self.burst, self.clock = rate, burst, clock
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now

    def allow(self) -> bool:
        """Take a token if there is one."""
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def retry_in_s(self) -> float:
        """Seconds until the next token."""
        self._refill()
        return max(0.0, (1.0 - self._tokens) / self.rate)


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    kind: CallKind
    retry_after: float = 0.0
    rate_per_minute: int = 0
    burst: int = 0


class RateLimiter:
    """One read bucket and one write bucket per client."""

    def __init__(
        self,
        *,
        writes_per_minute: int,
        write_burst: int,
        reads_per_minute: int,
        read_burst: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings: dict[CallKind, tuple[int, int]] = {
            "write": (writes_per_minute, write_burst),
            "read": (reads_per_minute, read_burst),
        }
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, CallKind], TokenBucket] = OrderedDict()

    def check(self, client: str, kind: CallKind) -> Verdict:
        """Take a token of ``kind`` for ``client``; the verdict says when to come back if none."""
        per_minute, burst = self._settings[kind]
        key = (client, kind)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(per_minute / 60.0, burst, self._clock)
            while len(self._buckets) > _MAX_CLIENTS:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        if bucket.allow():
            return Verdict(True, kind)
        retry = round(bucket.retry_in_s(), 3)
        return Verdict(False, kind, retry_after=max(retry, 0.001), rate_per_minute=per_minute, burst=burst)
