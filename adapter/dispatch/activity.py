"""Rewards in flight, and how long the reward system has been quiet: when background work may run.

A trainer waits on every reward it asks for; the shadow audit's judgments wait for nobody. So
they run in the gaps between rewards (a trainer generates between reward batches), where they
compete with no reward for the interpreter: ``RewardActivity`` counts the reward calls in
flight (every public entry point holds ``busy()``) and says how long none has been
(``quiet_for``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

from adapter.fork_safety import reset_after_fork

__all__ = ["RewardActivity"]


class RewardActivity:
    """Reward calls in flight and when the last one ended; ``clock`` is injected for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = 0
        self._last_end = clock()
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = 0
        self._last_end = self._clock()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Held for the whole of one reward call (sync or async)."""
        with self._lock:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                self._last_end = self._clock()

    def quiet_for(self) -> float:
        """Seconds since the last reward call ended, 0.0 while one is in flight."""
        with self._lock:
            return 0.0 if self._in_flight else max(0.0, self._clock() - self._last_end)
