"""The judge rewards a trainer process shares: built on first use, one per config, closed together.

verl and OpenRLHF call module-level reward functions from many threads at once; each process
(a Ray actor, a rollout worker) must build its judge reward once, not per call and not in
the driver that imported the module. They are closed at interpreter exit, if not before.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Hashable

from adapter.reward import BaseJudgeReward

__all__ = ["ProcessRewards"]


class ProcessRewards:
    """Reward systems keyed by what configures them (a config path, or None for the environment)."""

    def __init__(self) -> None:
        self._systems: dict[Hashable, BaseJudgeReward] = {}
        self._lock = threading.Lock()
        # At exit, answer what is in flight and close cleanly: no "Task was destroyed but it is
        # pending!" and no unclosed sockets from the loop thread of a process that never closed us.
        atexit.register(self.close)

    def get(self, key: Hashable, build: Callable[[], BaseJudgeReward]) -> BaseJudgeReward:
        """The reward system for ``key``, built by ``build`` on the first call in this process."""
        with self._lock:
            system = self._systems.get(key)
            if system is None:
                system = self._systems[key] = build()
            return system

    def close(self) -> None:
        """Close every reward system; the next ``get`` builds afresh."""
        with self._lock:
            systems = list(self._systems.values())
            self._systems.clear()
        for system in systems:
            system.close()
