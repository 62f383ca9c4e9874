"""A circuit breaker: closed -> open after N consecutive failures -> half-open after a pause.

Half-open lets exactly one probe through; its success closes the circuit, its failure
opens it again. Decisions are pure functions of state and an injected clock. State
changes are logged at warning under the ``JudgeReward`` logger, never per request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from enum import Enum

from typing_extensions import TypedDict

from adapter.fork_safety import reset_after_fork
from judge_vllm.errors import JudgeError

__all__ = ["BreakerSnapshot", "BreakerState", "CircuitBreaker", "call_failed"]

logger = logging.getLogger("JudgeReward")


class BreakerState(str, Enum):
    """The breaker's three states."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


def call_failed(outcomes: Sequence[object]) -> bool:
    """Whether a judge call counts as a failure: every outcome is an error of the server's making
    (a reply that does not parse, or a 4xx, proves the server is up)."""
    return bool(outcomes) and all(isinstance(o, JudgeError) and o.server_fault for o in outcomes)


class BreakerSnapshot(TypedDict):
    """A breaker's state (a ``BreakerState`` value) and consecutive failures, for metrics."""

    state: str
    failures: int


class CircuitBreaker:
    """Counts consecutive failures of the judge server and fails fast while it is down."""

    def __init__(self, threshold: int, reset_timeout_s: float, clock: Callable[[], float] = time.monotonic):
        self.threshold = threshold
        self.reset_timeout_s = reset_timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        reset_after_fork(self)
        self._state = BreakerState.CLOSED
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()  # a parent thread may have held it at fork

    @property
    def state(self) -> BreakerState:
        """The current state (an open breaker past its timeout reports half_open)."""
        with self._lock:
            if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.reset_timeout_s:
                return BreakerState.HALF_OPEN
            return self._state

    def allow(self) -> bool:
        """May a call go to the judge now? In half-open, only the first caller (the probe) may."""
        with self._lock:
            if self._state is BreakerState.CLOSED:
                return True
            if self._state is BreakerState.OPEN:
                if self._clock() - self._opened_at < self.reset_timeout_s:
                    return False
                self._transition(BreakerState.HALF_OPEN)
            if self._probing:
                return False
            self._probing = True
            return True

    def record_success(self) -> None:
        """A judge call succeeded."""
        with self._lock:
            self._failures = 0
            self._probing = False
            if self._state is not BreakerState.CLOSED:
                self._transition(BreakerState.CLOSED)

    def record_failure(self) -> None:
        """A judge call failed (server unreachable, 5xx or timeout after retries)."""
        with self._lock:
            self._failures += 1
            self._probing = False
            if self._state is BreakerState.HALF_OPEN or self._failures >= self.threshold:
                self._opened_at = self._clock()
                if self._state is not BreakerState.OPEN:
                    self._transition(BreakerState.OPEN)

    def record_neutral(self) -> None:
        """An allowed call that never reached the server (e.g. queue full): frees the probe slot."""
        with self._lock:
            self._probing = False

    def snapshot(self) -> BreakerSnapshot:
        """State and consecutive failures, for metrics."""
        return {"state": self.state.value, "failures": self._failures}

    def _transition(self, new: BreakerState) -> None:
        logger.warning(
            "circuit breaker %s -> %s (%d consecutive failures)%s",
            self._state.value,
            new.value,
            self._failures,
            "; judge server likely down, using the rule fallback" if new is BreakerState.OPEN else "",
        )
        self._state = new
