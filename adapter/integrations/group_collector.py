"""Groups from calls that arrive one member at a time (verl 0.9 scores each sample on its own).

A call ``submit(key, member, size, window_s)`` waits until its group (the calls with the same
``key`` on the same event loop) has ``size`` members (None: no size, only the window), or until
``window_s`` has passed since the group's first member arrived (the first member's window
counts); then the group is judged once, in one ``judge(members)``
call, and each caller gets its own member's result, or the judge's exception. A member that
arrives after its group closed opens the next group of its key: nothing waits past its window.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["DEFAULT_GROUP_WINDOW_S", "GroupCollector"]

# How long a group collects its members by default: a trainer's calls of one step arrive together
# when rewards are scored after the rollout, spread over the rollout when they are streamed.
DEFAULT_GROUP_WINDOW_S = 10.0

logger = logging.getLogger(__name__)

M = TypeVar("M")
R = TypeVar("R")


@dataclass
class _OpenGroup(Generic[M, R]):
    """The members of a group still collecting, and their callers' futures."""

    members: list[M] = field(default_factory=list)
    waiters: list[asyncio.Future[R]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None


class GroupCollector(Generic[M, R]):
    """Collects concurrent calls into groups and judges each group once.

    ``judge`` takes a group's members and returns one result per member, in order. Groups
    never span event loops: each loop's calls meet only each other.
    """

    def __init__(self, judge: Callable[[list[M]], Awaitable[list[R]]]) -> None:
        self._judge = judge
        self._open: dict[tuple[asyncio.AbstractEventLoop, Hashable], _OpenGroup[M, R]] = {}
        self._judging: set[asyncio.Task[None]] = set()

    async def submit(self, key: Hashable, member: M, size: int | None, window_s: float) -> R:
        """This member's result, once its group of ``key`` is full (``size``) or ``window_s``
        after the group's first member arrived."""
        loop = asyncio.get_running_loop()
        slot = (loop, key)
        group = self._open.get(slot)
        if group is None:
            group = self._open[slot] = _OpenGroup()
            group.timer = loop.call_later(window_s, self._close, slot, group)
        waiter: asyncio.Future[R] = loop.create_future()
        group.members.append(member)
        group.waiters.append(waiter)
        if size is not None and len(group.members) >= size:
            self._close(slot, group)
        return await waiter

    @property
    def collecting(self) -> int:
        """How many groups are still collecting members."""
        return len(self._open)

    def _close(self, slot: tuple[asyncio.AbstractEventLoop, Hashable], group: _OpenGroup[M, R]) -> None:
        if self._open.get(slot) is not group:
            return  # closed already (full, then its timer fired)
        del self._open[slot]
        if group.timer is not None:
            group.timer.cancel()
        logger.debug("group %r closed with %d member(s)", slot[1], len(group.members))
        task = slot[0].create_task(self._judge_group(group))
        self._judging.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._judging.discard)

    async def _judge_group(self, group: _OpenGroup[M, R]) -> None:
        try:
            results = await self._judge(group.members)
            if len(results) != len(group.members):
                raise RuntimeError(
                    f"a group judge returned {len(results)} results for {len(group.members)} members"
                )
        except Exception as err:  # each caller raises it: a group's failure is its members'
            for waiter in group.waiters:
                if not waiter.done():
                    waiter.set_exception(err)
            return
        for waiter, result in zip(group.waiters, results, strict=True):
            if not waiter.done():  # a caller that was cancelled meanwhile wants nothing
                waiter.set_result(result)
