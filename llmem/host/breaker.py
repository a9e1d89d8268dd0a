"""A circuit breaker per server: stop calling a server that keeps failing, retry after a cool-down."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from llmem.host.errors import CircuitOpen

__all__ = ["CircuitBreaker"]

log = logging.getLogger("llmem.host")


class CircuitBreaker:
    """Consecutive-failure breaker: closed → open (fail fast) → half-open (one trial) → closed."""

    def __init__(self, server: str, threshold: int, cooldown_s: float, clock: Callable[[], float]) -> None:
        if threshold < 1 or cooldown_s < 0:
            raise ValueError("threshold must be ≥ 1 and cooldown_s ≥ 0")
        self.server, self.threshold, self.cooldown_s, self.clock = server, threshold, cooldown_s, clock
        self.failures = 0
        self.last_failure = ""
        self._opened_at: float | None = None
        self._trial = False

    @property
    def state(self) -> Literal["closed", "open", "half-open"]:
        if self._opened_at is None:
            return "closed"
        return "half-open" if self.clock() >= self._opened_at + self.cooldown_s else "open"

    def acquire(self) -> None:
        """Let a call through, or raise ``CircuitOpen``; in half-open only one trial at a time."""
        state = self.state
        if state == "closed":
            return
        assert self._opened_at is not None
        retry_at = self._opened_at + self.cooldown_s
        if state == "half-open" and not self._trial:
            self._trial = True
            return
        wait = max(0.0, retry_at - self.clock())
        if state == "half-open":
            why, when = "half-open: a trial call is in flight", "retry once it has answered"
        else:
            why, when = f"after {self.failures} consecutive failures", f"the next call is let through in {wait:.1f} s"
        raise CircuitOpen(
            f"the circuit of server {self.server!r} is open ({why}; last: {self.last_failure}); calls fail fast, {when}",
            self.server,
            self.failures,
            retry_at,
            wait,
        )

    def success(self) -> None:
        if self._opened_at is not None:
            log.info("circuit of %s closed again", self.server)
        self.failures, self._opened_at, self._trial = 0, None, False

    def failure(self, what: str) -> None:
        self.failures += 1
        self.last_failure = what
        if self._trial or self.failures >= self.threshold:
            self._opened_at = self.clock()
            log.warning("circuit of %s opened after %d failures (%s)", self.server, self.failures, what)
        self._trial = False

    def release(self) -> None:
        """The trial ended without a verdict (cancelled): let another call try."""
        self._trial = False


# -- the registry ---------------------------------------------------------------------------
