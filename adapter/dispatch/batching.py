"""Micro-batching: gather requests for up to ``batch_wait`` or ``max_batch_size``, then
send them in one judge call, with at most ``max_concurrent`` calls in flight.

The queue is bounded: ``submit`` answers ``QueueFullError`` instead of growing without
limit. Requests whose caller gave up (timed out) are dropped before sending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from judge_vllm.backend import Outcome
from judge_vllm.errors import JudgeError, JudgeUnavailableError, QueueFullError
from judge_vllm.schemas import JudgeRequest

__all__ = ["BatchResult", "MicroBatcher", "Outcome", "SendBatch"]

logger = logging.getLogger(__name__)

SendBatch = Callable[[list[JudgeRequest]], Awaitable[list[Outcome]]]


class BatchResult(NamedTuple):
    """One request's outcome, and whether it is its batch call's own (``sent``: the call that
    produced it reported to the circuit breaker) or the batcher's (queue full, closed)."""

    outcome: Outcome
    sent: bool


class MicroBatcher:
    """Runs on one event loop; ``submit`` from that loop only."""

    def __init__(
        self,
        send: SendBatch,
        max_batch_size: int,
        batch_wait_s: float,
        max_concurrent: int,
        max_queue_size: int,
    ) -> None:
        self._send = send
        self._max_batch_size = max_batch_size
        self._batch_wait_s = batch_wait_s
        self._slots = asyncio.Semaphore(max_concurrent)
        self._queue: asyncio.Queue[tuple[JudgeRequest, asyncio.Future[BatchResult]]] = asyncio.Queue(
            max_queue_size
        )
        self._tasks: set[asyncio.Task[None]] = set()
        self._collector: asyncio.Task[None] | None = None
        self._closed = False
        self.inflight = 0

    @property
    def queue_size(self) -> int:
        """Requests waiting to be sent."""
        return self._queue.qsize()

    async def submit(self, request: JudgeRequest) -> BatchResult:
        """Queue one request and wait for its outcome (a verdict or that item's error)."""
        if self._closed:
            return BatchResult(JudgeUnavailableError("the reward system was closed"), sent=False)
        if self._collector is None:
            self._collector = asyncio.get_running_loop().create_task(self._collect())
        future: asyncio.Future[BatchResult] = asyncio.get_running_loop().create_future()
        try:
            self._queue.put_nowait((request, future))
        except asyncio.QueueFull:
            full = QueueFullError(
                "Request queue full: rewards are requested faster than the judge scores them; "
                "raise max_queue_size or max_concurrent_requests, or reduce max_batch_size"
            )
            return BatchResult(full, sent=False)
        return await future

    async def _collect(self) -> None:
        while True:
            await self._slots.acquire()
            batch = [await self._queue.get()]
            deadline = asyncio.get_running_loop().time() + self._batch_wait_s
            while len(batch) < self._max_batch_size:
                remaining = deadline - asyncio.get_running_loop().time()
                try:
                    item = (
                        self._queue.get_nowait()
                        if remaining <= 0
                        else await asyncio.wait_for(self._queue.get(), remaining)
                    )
                except (asyncio.QueueEmpty, TimeoutError, asyncio.TimeoutError):
                    break
                batch.append(item)
            live = [(r, f) for r, f in batch if not f.done()]
            if not live:
                self._slots.release()
                continue
            task = asyncio.get_running_loop().create_task(self._dispatch(live))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _dispatch(self, batch: list[tuple[JudgeRequest, asyncio.Future[BatchResult]]]) -> None:
        self.inflight += len(batch)
        sent = False
        try:
            outcomes: list[Outcome] = await self._send([r for r, _ in batch])
            sent = True
        except JudgeError as err:
            outcomes = [err] * len(batch)
        except asyncio.CancelledError:
            outcomes = [JudgeUnavailableError("the reward system was closed")] * len(batch)
            raise
        except Exception as err:  # a bug or an unexpected library error must not strand callers
            logger.exception("judge batch failed unexpectedly")
            outcomes = [JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")] * len(batch)
        finally:
            self.inflight -= len(batch)
            self._slots.release()
            for (_, future), outcome in zip(batch, outcomes, strict=True):
                if not future.done():
                    future.set_result(BatchResult(outcome, sent))

    async def aclose(self) -> None:
        """Stop collecting; fail whatever is still queued or in flight, and what comes later."""
        self._closed = True
        tasks = [t for t in (self._collector, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while not self._queue.empty():
            _, future = self._queue.get_nowait()
            if not future.done():
                future.set_result(BatchResult(JudgeUnavailableError("the reward system was closed"), sent=False))
