"""The judgment log's file writer: a bounded queue, one writer thread, a rotating file.

The caller's thread only appends a line's renderer to the queue (``JudgmentWriter.put``, never
blocking: a full queue drops the line and counts it). The writer thread, every
``FLUSH_INTERVAL_S`` and at close, renders the lines, groups them into chunks of at most
``max_bytes`` (``line_chunks``) and appends each chunk to the file (``RotatingFile``), which
rotates between chunks: no file passes ``max_bytes`` unless a single line does. Rendering
holds the GIL, so the writer pauses every ``YIELD_EVERY_LINES`` lines: a reward's thread
waits for it a fraction of a millisecond, not a whole switch interval. A failed write loses its chunk,
counted as errors, with a warning when writing starts failing and one when it works again.

Logs in one process that name the same file share its writer (``open_writer`` /
``release_writer``, reference-counted). Processes that name the same file take turns on it
(``RotatingFile``: an advisory lock on the folder around each write and rotation, and a file
reopened when another process has rotated it away), so no line is lost to a rotation. A forked child starts with no writers and opens its own; at exit, every
writer still open writes what is queued.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar

__all__ = ["JudgmentWriter", "LineSink", "RotatingFile", "line_chunks", "open_writer", "release_writer"]

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger("JudgeReward")
Item = TypeVar("Item")

# Lines rendered and written at once (in chunks of at most max_bytes).
BATCH_LINES = 1024
# How often the writer takes the queued lines: the log is at most this far behind.
FLUSH_INTERVAL_S = 0.1
CLOSE_TIMEOUT_S = 10.0
# Rendering holds the GIL: the writer pauses every few lines so that a reward's thread never
# waits a whole switch interval (5 ms) for it.
YIELD_EVERY_LINES = 16
YIELD_S = 0.0001


def line_chunks(lines: Sequence[bytes], max_bytes: int) -> list[list[bytes]]:
    """``lines`` in order, grouped so that each group with its newlines fits in ``max_bytes``
    (a longer line is a group of its own)."""
    chunks: list[list[bytes]] = []
    size = max_bytes + 1
    for line in lines:
        if size + len(line) + 1 > max_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += len(line) + 1
    return chunks


class LineSink(Protocol):
    """Where the writer thread puts whole lines (newlines included); ``write`` raises
    ``OSError`` when it cannot."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class RotatingFile:
    """Appends to ``path``; before a write that would take it past ``max_bytes`` it rotates:
    ``path.<backups>`` is deleted, ``path.<i>`` becomes ``path.<i+1>``, ``path`` becomes
    ``path.1`` (the stdlib's ``RotatingFileHandler`` scheme, in bytes rather than characters,
    and never rotating an empty file). The folder is created on the first write."""

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self._file: BinaryIO | None = None

    def write(self, data: bytes) -> None:
        """Append ``data`` and flush, under the file's lock; on failure the file is closed (the
        next write reopens it rather than flush a half-written buffer later) and the error raised."""
        try:
            with self._locked():
                file = self._current()
                size = os.fstat(file.fileno()).st_size
                if size and size + len(data) > self.max_bytes:
                    self._rotate()
                    file = self._open()
                file.write(data)
                file.flush()
        except (OSError, ValueError):
            self.close()
            raise

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Processes that log into one folder take turns (an advisory lock on the folder, so no
        lock file sits among the logs): a write and a rotation are never interleaved with another
        process's."""
        if fcntl is None:  # no flock (Windows): one process per path
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        folder = os.open(self.path.parent, os.O_RDONLY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            yield
        finally:
            os.close(folder)  # closing the descriptor releases the lock

    def _current(self) -> BinaryIO:
        """The open file, if it still is ``path`` (another process may have rotated it away)."""
        file = self._file
        if file is not None:
            try:
                same = os.path.samestat(os.fstat(file.fileno()), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                return file
            self.close()
        return self._open()

    def _open(self) -> BinaryIO:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("ab")
        return self._file

    def _rotate(self) -> None:
        self.close()
        backup = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self.backups + 1)]
        for i in range(self.backups - 1, 0, -1):
            if backup[i].exists():
                os.replace(backup[i], backup[i + 1])
        os.replace(self.path, backup[1])

    def close(self) -> None:
        """Close the file (a later write reopens it)."""
        file, self._file = self._file, None
        if file is not None:
            with suppress(OSError, ValueError):
                file.close()


class JudgmentWriter:
    """One file's queue and writer thread; ``logged``, ``dropped`` and ``errors`` count lines.

    The queue is a deque the writer drains every ``FLUSH_INTERVAL_S``: putting a line takes
    no lock and wakes no thread, so the rewards' threads pay an append, and the file gets a
    few large writes a second instead of one per line.
    """

    def __init__(self, path: Path, sink: LineSink, queue_size: int, chunk_bytes: int) -> None:
        self.path = path
        self.logged = 0
        self.dropped = 0
        self.errors = 0
        self._users = 0
        self._sink = sink
        self._chunk_bytes = chunk_bytes
        self._max_queued = queue_size
        self._queue: deque[Callable[[], bytes]] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._dropping = False
        self._failing = False
        self._render_failed = False
        self._thread = threading.Thread(target=self._run, name="judgment-log", daemon=True)
        self._thread.start()

    def put(self, render: Callable[[Item], bytes], item: Item) -> None:
        """Queue a line (``render(item)`` makes it on the writer thread); drop and count it when
        the writer is behind. Never blocks."""
        # Several threads may pass the check at once: the bound can be passed by a few lines.
        if len(self._queue) < self._max_queued:
            self._queue.append(partial(render, item))
            if self._dropping:
                self._dropping = False
            return
        with self._lock:
            self.dropped += 1
            starts, self._dropping = not self._dropping, True
        if starts:
            logger.warning(
                "judgment log %s: the writer is behind (slow disk?); lines are dropped and "
                "counted in get_metrics()['judgment_log']['dropped'] until it catches up",
                self.path,
            )

    @property
    def queued(self) -> int:
        """Lines waiting for the writer."""
        return len(self._queue)

    def close(self) -> None:
        """Write what is queued, then close the file (bounded: a hung disk is left behind)."""
        self._stop.set()
        self._thread.join(CLOSE_TIMEOUT_S)
        if self._thread.is_alive():
            unwritten = self.queued
            with self._lock:
                self.errors += unwritten  # counted, so get_metrics() says what the log lacks
            logger.warning(
                "judgment log %s: the writer did not finish within %.0f s; %d lines not written "
                "(counted in errors)",
                self.path,
                CLOSE_TIMEOUT_S,
                unwritten,
            )

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_INTERVAL_S):
            self._drain()
        self._drain()
        with suppress(OSError, ValueError):
            self._sink.close()

    def _drain(self) -> None:
        """Write every queued line (only this thread takes lines off the queue)."""
        while self._queue:
            lines = []
            for i in range(min(BATCH_LINES, len(self._queue))):
                if i and i % YIELD_EVERY_LINES == 0:
                    time.sleep(YIELD_S)
                line = self._render(self._queue.popleft())
                if line is not None:
                    lines.append(line)
            for chunk in line_chunks(lines, self._chunk_bytes):
                self._write(chunk)

    def _render(self, render: Callable[[], bytes]) -> bytes | None:
        try:
            return render()
        except Exception:  # a writer thread that died would drop every later line: lose this one
            with self._lock:
                self.errors += 1
                first, self._render_failed = not self._render_failed, True
            if first:
                logger.exception("judgment log %s: a line could not be made (counted in errors)", self.path)
            return None

    def _write(self, lines: list[bytes]) -> None:
        try:
            self._sink.write(b"\n".join(lines) + b"\n")
        except (OSError, ValueError) as err:
            with self._lock:
                self.errors += len(lines)
            if not self._failing:
                self._failing = True
                logger.warning(
                    "judgment log %s: cannot write (%s); rewards go on, the lines are lost and counted "
                    "in get_metrics()['judgment_log']['errors']",
                    self.path,
                    err,
                )
            return
        with self._lock:
            self.logged += len(lines)
        if self._failing:
            self._failing = False
            logger.warning("judgment log %s: writing again (%d lines lost so far)", self.path, self.errors)


_WRITERS: dict[Path, JudgmentWriter] = {}
_WRITERS_LOCK = threading.Lock()


def _forget_writers() -> None:
    # A forked child has none of its parent's writer threads: its logs open their own.
    global _WRITERS_LOCK
    _WRITERS.clear()
    _WRITERS_LOCK = threading.Lock()


def _close_all() -> None:
    # A trainer that never calls close() still gets the last lines of its run.
    with _WRITERS_LOCK:
        writers = list(_WRITERS.values())
    for writer in writers:
        writer.close()


os.register_at_fork(after_in_child=_forget_writers)
atexit.register(_close_all)


def open_writer(
    path: Path, sink: Callable[[Path], LineSink], queue_size: int, chunk_bytes: int
) -> JudgmentWriter:
    """The writer of ``path`` in this process, started on first use (the first caller's
    bounds apply); every call needs a ``release_writer``."""
    with _WRITERS_LOCK:
        writer = _WRITERS.get(path)
        if writer is None:
            writer = _WRITERS[path] = JudgmentWriter(path, sink(path), queue_size, chunk_bytes)
        writer._users += 1
        return writer


def release_writer(writer: JudgmentWriter) -> None:
    """Let go of a writer; the last user's release writes what is queued and closes the file."""
    with _WRITERS_LOCK:
        writer._users -= 1
        last = writer._users == 0
        if last and _WRITERS.get(writer.path) is writer:
            del _WRITERS[writer.path]
    if last:
        writer.close()
