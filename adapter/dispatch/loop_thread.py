"""One background event loop thread that the sync facade drives (never ``asyncio.run`` per call)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import TypeVar

from adapter.fork_safety import reset_after_fork
from judge_vllm.errors import JudgeError

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """Starts lazily, runs coroutines submitted from any thread, closes cleanly once.

    In a forked child the parent's thread does not exist: the child starts its own loop
    on first use.
    """

    def __init__(self, name: str = "judge-reward-loop") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._loop = None
        self._thread = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, started on first use."""
        with self._lock:
            if self._closed:
                raise JudgeError("Cannot use a reward system once it has been closed.")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(loop, ready), name=self._name, daemon=True
                )
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    def in_loop_thread(self) -> bool:
        """True when called from the loop's own thread (blocking there would deadlock)."""
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[object, None, T]) -> concurrent.futures.Future[T]:
        """Schedule a coroutine on the loop from any thread."""
        try:
            loop = self.loop
        except JudgeError:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def run(self, coro: Coroutine[object, None, T], timeout_s: float | None = None) -> T:
        """Run a coroutine on the loop and block for its result (not from the loop's thread)."""
        if self.in_loop_thread():
            coro.close()
            raise JudgeError("reward() was called from the judge loop itself: use 'await areward()' there")
        return self.submit(coro).result(timeout_s)

    def close(self, shutdown: Coroutine[object, None, None] | None = None, timeout_s: float = 10.0) -> None:
        """Run ``shutdown`` on the loop, then stop and join the thread. Idempotent."""
        with self._lock:
            if self._closed:
                if shutdown is not None:
                    shutdown.close()
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            if shutdown is not None:
                shutdown.close()
            return
        if shutdown is not None:
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(shutdown, loop).result(timeout_s)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout_s)
        if not thread.is_alive():
            loop.close()
