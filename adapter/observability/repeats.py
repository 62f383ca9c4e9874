"""Warnings that repeat: the first of a kind at warning, then a count every so often.

A dead judge fails every call; one line per call floods a trainer's terminal and hides what
changed. ``RepeatCounter`` counts each kind and says which counts are worth a warning: the 1st,
10th, 100th and every 1,000th (the rest go to debug).
"""

from __future__ import annotations

import threading
from collections import Counter

from adapter.fork_safety import reset_after_fork

__all__ = ["RepeatCounter", "is_reported"]

REPORTED_COUNTS = (1, 10, 100)
REPORT_EVERY = 1000


def is_reported(count: int) -> bool:
    """Whether the ``count``-th repeat of one kind is logged at warning."""
    return count in REPORTED_COUNTS or count % REPORT_EVERY == 0


class RepeatCounter:
    """Counts of repeated events by kind; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()  # a parent thread may have held it at fork

    def add(self, kind: str) -> int:
        """Count one more ``kind``; its count so far."""
        with self._lock:
            self._counts[kind] += 1
            return self._counts[kind]

    def pop(self, kind: str) -> int:
        """The count of ``kind``, which starts again from zero."""
        with self._lock:
            return self._counts.pop(kind, 0)
