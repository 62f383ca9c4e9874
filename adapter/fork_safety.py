"""Fork safety: after ``os.fork()`` (dataloader workers, pre-fork servers) a child has
none of its parent's threads, and any lock a thread held stays held. Objects that own
threads, locks or an event loop register here and re-create them in the child."""

from __future__ import annotations

import os
import weakref
from typing import Protocol

__all__ = ["ForkAware", "reset_after_fork"]


class ForkAware(Protocol):
    """Something that re-creates its threads and locks in a forked child."""

    def _after_fork_in_child(self) -> None: ...


_REGISTERED: weakref.WeakSet[ForkAware] = weakref.WeakSet()


def reset_after_fork(obj: ForkAware) -> None:
    """Call ``obj._after_fork_in_child()`` in every forked child while ``obj`` lives."""
    _REGISTERED.add(obj)


def _reset_all() -> None:
    for obj in list(_REGISTERED):
        obj._after_fork_in_child()


os.register_at_fork(after_in_child=_reset_all)
