"""The verdict cache: a bounded on-disk map from ``cache_key`` (adapter/cache/keys.py) to verdict.

Only judge verdicts are stored, never fallbacks. The directory is created 0700; several processes may share it (diskcache uses
SQLite with its own locking). Values are plain SQLite text, always inline (no compression,
no second JSON pass: a hit costs one SELECT and one pydantic parse); a row in any other form
(pickled, or naming a file, as a planted row could) is refused, and no file a row names is
ever read or deleted.

Writes are write-behind: ``set`` hands the verdict to one writer thread that stores what
has queued up in SQLite transactions of at most ``WRITE_BATCH_MAX`` writes, so the event loop
never waits on SQLite (nor a fork, nor another process, on a long transaction); until
it lands, ``get`` answers from memory (a process reads its own writes at once). ``close``
writes everything still queued. The queue is bounded (``MAX_PENDING_WRITES``, plus the batch
in the writer's hands): past it a verdict is not stored, and counted. The bound on disk is a
count: each transaction ends by evicting the least recently stored entries beyond ``max_entries``.

A cache that fails is a miss, never an error: ``get`` and ``set`` do not raise; a failed
read answers None, a failed write is dropped, both are counted (``errors``) and the first
is logged at warning. Opening the store (a corrupt database moved aside, a directory that
cannot hold a cache left as a working no-op) is adapter/cache/store.py. A forked child gets its own writer and SQLite connections.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypedDict

import diskcache

from adapter.cache.store import SQLITE_TIMEOUT_S, NoStore, open_store
from judge_vllm.schemas import Verdict

__all__ = ["CacheStats", "VerdictCache"]

logger = logging.getLogger(__name__)

# How long ``close`` waits for the writer to store what is queued; past it, a stuck writer is
# left to finish (or not) on its own. Two lock waits: the batch in progress and the last one.
CLOSE_TIMEOUT_S = 2 * SQLITE_TIMEOUT_S

# Verdicts waiting for the writer at most: past it (a disk slower than the judge, a stuck lock),
# a new verdict is not stored (counted in ``errors``) rather than held in memory without end.
MAX_PENDING_WRITES = 10_000

# Writes the writer applies in one transaction at most. Other processes wait for its lock, and
# a fork for the transaction in progress (the writer holds its SQLite gate throughout; it ends
# the transaction early for a pending fork): a whole queue of writes in one transaction took 3
# to 60 s with four other threads busy (each statement gives up the GIL and waits to get it
# back), once over 10 minutes; 100 writes took 0.6 s at most.
WRITE_BATCH_MAX = 100

# A writer job: store (key, text) or delete (key, None); None on the queue stops the writer.
_Job = tuple[str, str | None]


class CacheStats(TypedDict):
    """What ``VerdictCache.stats`` reports, for metrics."""

    entries: int  # verdicts on disk (shared with any other process using the directory)
    errors: int  # failed reads and writes since open: each a miss or a dropped write
    evictions: int  # entries this instance evicted to stay within max_entries
    enabled: bool  # False if no cache could be opened (every lookup a miss), and after close


class VerdictCache:
    """A bounded on-disk map from ``cache_key`` to ``Verdict``; thread- and process-safe.

    A cache that fails is a miss, never an error: ``get`` and ``set`` do not raise. The first
    failure is a warning; later ones are counted in ``errors`` and logged at debug.
    """

    def __init__(self, directory: Path, max_entries: int) -> None:
        with _IN_SQLITE.entered():
            store = open_store(directory, max_entries)
        self._cache: diskcache.Cache | NoStore = NoStore() if store is None else store
        self._max_entries = max_entries
        self._evictions = 0
        self._errors = 0
        self._errors_lock = threading.Lock()
        self._unwritten: dict[str, str] = {}
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._stop_writer_if_collected: weakref.finalize[[_Job | None], VerdictCache] | None = None
        if store is not None:
            self._start_writer(store)
        _LIVE_CACHES.add(self)

    def get(self, key: str) -> Verdict | None:
        """The cached verdict, or None: a missing, invalid or unreadable entry is a miss."""
        try:
            value = self._unwritten.get(key)
            if value is None:
                with _IN_SQLITE.entered():
                    value = self._cache.get(key)
            return None if value is None else Verdict.model_validate_json(value)
        except ValueError as err:  # an entry not in the form this cache writes: drop it
            self._record_failure("a read found an invalid entry; it counts as a miss and is deleted", err)
            self._queue.put((key, None))
            return None
        except Exception as err:  # SQLite, OS, lock timeout: a cache must never fail a reward
            self._record_failure("a read failed; it counts as a miss", err)
            return None

    def set(self, key: str, verdict: Verdict) -> None:
        """Store a judge verdict (readable at once; on disk shortly after). Never raises."""
        if self._writer is None:
            logger.debug("verdict cache: closed or none open, verdict %s not stored", key[:12])
            return
        try:
            text = verdict.model_dump_json()
        except ValueError as err:  # a lone surrogate in the explanation has no UTF-8 form
            self._record_failure("a verdict could not be written as JSON and was dropped", err)
            return
        if self._queue.qsize() >= MAX_PENDING_WRITES:
            self._record_failure(
                f"{MAX_PENDING_WRITES} verdicts are waiting for the disk; this one was not stored",
                OSError("write-behind queue full"),
            )
            return
        self._unwritten[key] = text
        self._queue.put((key, text))

    def __len__(self) -> int:
        """The number of entries on disk; 0 if they cannot be counted."""
        try:
            with _IN_SQLITE.entered():
                return len(self._cache)
        except Exception as err:
            self._record_failure("counting the entries failed", err)
            return 0

    @property
    def errors(self) -> int:
        """Failed reads and writes since open (each answered as a miss or dropped)."""
        return self._errors

    @property
    def enabled(self) -> bool:
        """Whether lookups reach a disk cache: False if none could be opened, and after close."""
        return self._writer is not None

    @property
    def evictions(self) -> int:
        """Entries this instance evicted to keep the cache within ``max_entries``."""
        return self._evictions

    def stats(self) -> CacheStats:
        """Entries, errors, evictions and whether a disk cache is open, for metrics."""
        return CacheStats(
            entries=len(self), errors=self._errors, evictions=self._evictions, enabled=self.enabled
        )

    def close(self) -> None:
        """Store what is still queued (waiting up to ``CLOSE_TIMEOUT_S``), then close. Idempotent.

        After close, ``get`` misses and ``set`` drops the verdict.
        """
        writer, self._writer = self._writer, None
        store, self._cache = self._cache, NoStore()
        _LIVE_CACHES.discard(self)
        if writer is not None:
            self._queue.put(None)
            writer.join(CLOSE_TIMEOUT_S)
            if writer.is_alive():
                logger.warning(
                    "verdict cache: still writing %g s into close; verdicts not stored by now may be lost",
                    CLOSE_TIMEOUT_S,
                )
        if self._stop_writer_if_collected is not None:
            self._stop_writer_if_collected.detach()
        self._unwritten.clear()
        with _IN_SQLITE.entered():
            store.close()

    def _record_failure(self, what: str, err: Exception) -> None:
        """Count a failure; warn about the first only (a broken cache fails every call)."""
        with self._errors_lock:
            self._errors += 1
            first = self._errors == 1
        if first:
            logger.warning(
                "verdict cache: %s (%s: %s). Later cache failures are counted in VerdictCache.errors "
                "and logged at debug.",
                what,
                type(err).__name__,
                err,
            )
        else:
            logger.debug("verdict cache: %s (%s: %s)", what, type(err).__name__, err)

    def _start_writer(self, store: diskcache.Cache) -> None:
        """Start the writer thread on a fresh queue; it holds this cache weakly, so it can be collected."""
        self._queue = queue.SimpleQueue()
        self._writer = threading.Thread(
            target=_write_loop,
            args=(weakref.ref(self), self._queue, store),
            name="verdict-cache-writer",
            daemon=True,
        )
        self._stop_writer_if_collected = weakref.finalize(self, self._queue.put, None)
        self._stop_writer_if_collected.atexit = False
        self._writer.start()

    def _apply(self, jobs: list[_Job], store: diskcache.Cache) -> list[_Job]:
        """In the writer thread: apply queued stores and deletes in one transaction, then evict.

        A fork that comes meanwhile waits for this transaction, so it ends early (after at least
        one write, so the writer always gets on): the jobs it left are returned, for after the fork.
        """
        applied = jobs
        try:
            with store.transact():
                for done, (key, text) in enumerate(jobs, start=1):
                    if text is None:
                        store.delete(key)
                    else:
                        store.set(key, text)
                    if not _NO_FORK_PENDING.is_set():
                        applied = jobs[:done]
                        break
                evicted = _evict_oldest(store, self._max_entries)
        except Exception as err:  # disk full, directory gone, lock timeout
            self._record_failure(f"a write of {len(jobs)} cache changes failed; they were dropped", err)
            applied = jobs
        else:
            self._evictions += evicted
        for key, text in applied:
            if text is not None and self._unwritten.get(key) == text:
                self._unwritten.pop(key, None)
        return jobs[len(applied) :]

    def _after_fork_in_child(self) -> None:
        """Make this cache work in a forked child, where only the forking thread lives on."""
        self._errors_lock = threading.Lock()  # another thread may have held it at the fork
        self._unwritten = {}  # the parent's writer stores these
        if not isinstance(self._cache, diskcache.Cache):
            return
        # SQLite connections must not cross a fork. The other threads' went with their thread
        # states at the fork; this thread's goes before the child opens any, so SQLite's
        # per-process lock bookkeeping starts clean. diskcache then reconnects per thread.
        self._cache.close()
        self._cache._txn_id = None  # a transaction the parent's writer had open is not the child's
        if self._stop_writer_if_collected is not None:
            self._stop_writer_if_collected.detach()
        self._start_writer(self._cache)


# The caches alive in this process, for the fork hook: weak, so they can still be collected.
_LIVE_CACHES: weakref.WeakSet[VerdictCache] = weakref.WeakSet()


class _SQLiteGate(threading.local):
    """Per thread, a lock held while the thread is inside SQLite; a fork takes them all.

    A thread inside SQLite at a fork can leave SQLite's global mutexes (its allocator's, its
    file locking's) locked in the child for good, and the child's first SQLite call hangs.
    One lock per thread, so threads never wait on each other: only a fork waits, for calls
    in progress (a read, or the writer's transaction, which ends at the next write once a fork
    is pending, after a wait of at most ``SQLITE_TIMEOUT_S`` for another process's lock).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        _GATES.add(self.lock)

    @contextmanager
    def entered(self) -> Iterator[None]:
        """Hold this thread's gate while inside SQLite; first let a pending fork through (a
        thread that calls SQLite without pause would otherwise re-take its gate before the fork
        gets it, and the fork would wait for seconds, or for good)."""
        _NO_FORK_PENDING.wait()
        with self.lock:
            yield


_GATES: weakref.WeakSet[threading.Lock] = weakref.WeakSet()  # a thread's goes with the thread
_NO_FORK_PENDING = threading.Event()
_NO_FORK_PENDING.set()
_IN_SQLITE = _SQLiteGate()
_GATES_HELD: list[threading.Lock] = []  # taken by the fork in progress


def _before_fork() -> None:
    """Wait until no thread is inside SQLite, and keep it so through the fork (threads about to
    enter wait for the fork instead of racing it for their gates)."""
    _NO_FORK_PENDING.clear()
    for gate in list(_GATES):
        gate.acquire()
        _GATES_HELD.append(gate)


def _after_fork_in_parent() -> None:
    """Let the threads go on."""
    while _GATES_HELD:
        _GATES_HELD.pop().release()
    _NO_FORK_PENDING.set()


def _after_fork_in_child() -> None:
    """A forked child (a dataloader worker, a pre-fork server) gets working caches."""
    global _NO_FORK_PENDING
    _NO_FORK_PENDING = threading.Event()  # another thread may have been inside the old one's lock
    _NO_FORK_PENDING.set()
    while _GATES_HELD:
        _GATES_HELD.pop().release()
    for cache in list(_LIVE_CACHES):
        cache._after_fork_in_child()


os.register_at_fork(
    before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child
)


def _write_loop(
    cache_ref: weakref.ref[VerdictCache],
    jobs: queue.SimpleQueue[_Job | None],
    store: diskcache.Cache,
) -> None:
    """The writer thread: apply what has queued up, batch by batch, until ``None`` comes."""
    done = False
    while not done:
        batch = [jobs.get()]
        while len(batch) < WRITE_BATCH_MAX and not jobs.empty():  # with writers that never pause
            batch.append(jobs.get())  # the queue is never empty: without a bound, nor is the batch
        done = None in batch
        cache = cache_ref()
        if cache is None:  # collected without close: nothing left to write for
            break
        work = [job for job in batch if job is not None]
        while work:  # in parts if forks come meanwhile: each waits for one write, not a batch
            with _IN_SQLITE.entered():
                work = cache._apply(work, store)
        del cache  # held only while writing, so the cache can be collected between batches
    with _IN_SQLITE.entered():
        store.close()  # this thread's SQLite connection


def _evict_oldest(store: diskcache.Cache, max_entries: int) -> int:
    """Delete the least recently stored entries beyond ``max_entries``; how many went.

    Run inside the writer's transaction, so the count is exact even with several processes
    sharing the directory. Rows go without their value files: this cache writes none.
    """
    excess = len(store) - max_entries
    if excess <= 0:
        return 0
    # diskcache has no count bound and no public "delete the n oldest"; its Cache table and
    # store_time index are stable across 5.x, and its triggers keep len() right.
    store._sql(
        "DELETE FROM Cache WHERE rowid IN (SELECT rowid FROM Cache ORDER BY store_time LIMIT ?)", (excess,)
    )
    return excess
