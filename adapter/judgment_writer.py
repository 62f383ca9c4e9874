"""The judgment log's file writer: a bounded queue, one writer thread, a rotating file.

The caller's thread only puts a line's renderer on the queue (``JudgmentWriter.put``, never
blocking: a full queue drops the line and counts it). The writer thread renders the lines,
groups them into chunks of at most ``max_bytes`` (``line_chunks``) and appends each chunk to
the file (``RotatingLines``, the stdlib's rotating handler), which rotates between chunks:
no file passes ``max_bytes`` unless a single line does. A failed write loses its chunk,
counted as errors, with a warning when writing starts failing and one when it works again.

Logs in one process that name the same file share its writer (``open_writer`` /
``release_writer``, reference-counted): two rotating handlers on one file would rotate it
under each other. A forked child starts with no writers and opens its own.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, Protocol

__all__ = ["JudgmentWriter", "LineSink", "RotatingLines", "line_chunks", "open_writer", "release_writer"]

logger = logging.getLogger("JudgeReward")

# Lines taken off the queue at once, to amortise the write.
BATCH_LINES = 256
CLOSE_TIMEOUT_S = 10.0


def line_chunks(lines: Sequence[str], max_chars: int) -> list[list[str]]:
    """``lines`` in order, grouped so that each group with its newlines fits in ``max_chars``
    (a longer line is a group of its own)."""
    chunks: list[list[str]] = []
    size = max_chars + 1
    for line in lines:
        if size + len(line) + 1 > max_chars:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += len(line) + 1
    return chunks


class LineSink(Protocol):
    """Where the writer thread puts lines (``write`` gets them joined by newlines, without the
    last one) and raises ``OSError`` when it cannot."""

    def write(self, text: str) -> None: ...

    def close(self) -> None: ...


class RotatingLines(logging.handlers.RotatingFileHandler):
    """The stdlib's rotating file, fed one chunk of lines per record.

    It opens on the first write (creating the folder), rolls over before a chunk that would
    pass ``max_bytes``, and raises the write's error instead of printing it. The lines are
    ASCII JSON, so the stdlib's character count is the byte count.
    """

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)
        self._failure: BaseException | None = None

    def _open(self) -> Any:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        """As the stdlib's, but never for an empty file (Python 3.11 rolls one over when the
        record alone reaches max_bytes, pushing a real backup out for nothing)."""
        rolls = bool(super().shouldRollover(record))
        return rolls and self.stream is not None and self.stream.tell() > 0

    def handleError(self, record: logging.LogRecord) -> None:
        """Keep the error for ``write`` and drop the stream: the next write reopens the file
        rather than flush a half-written buffer later."""
        self._failure = sys.exc_info()[1]
        if self.stream is not None:
            with suppress(OSError, ValueError):
                self.stream.close()
            self.stream = None

    def write(self, text: str) -> None:
        """Append ``text`` and a newline, and flush; raise on failure."""
        self._failure = None
        self.handle(logging.makeLogRecord({"msg": text}))
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure


class JudgmentWriter:
    """One file's queue and writer thread; ``logged``, ``dropped`` and ``errors`` count lines."""

    def __init__(self, path: Path, sink: LineSink, queue_size: int, chunk_chars: int) -> None:
        self.path = path
        self.logged = 0
        self.dropped = 0
        self.errors = 0
        self._users = 0
        self._sink = sink
        self._chunk_chars = chunk_chars
        self._queue: queue.Queue[Callable[[], str] | None] = queue.Queue(queue_size)
        self._lock = threading.Lock()
        self._dropping = False
        self._failing = False
        self._render_failed = False
        self._thread = threading.Thread(target=self._run, name="judgment-log", daemon=True)
        self._thread.start()

    def put(self, render: Callable[[], str]) -> None:
        """Queue a line (``render`` makes it on the writer thread); drop and count it when the
        writer is behind. Never blocks."""
        try:
            self._queue.put_nowait(render)
        except queue.Full:
            with self._lock:
                self.dropped += 1
                starts, self._dropping = not self._dropping, True
            if starts:
                logger.warning(
                    "judgment log %s: the writer is behind (slow disk?); lines are dropped and "
                    "counted in get_metrics()['judgment_log']['dropped'] until it catches up",
                    self.path,
                )
            return
        if self._dropping:
            self._dropping = False

    @property
    def queued(self) -> int:
        """Lines waiting for the writer."""
        return self._queue.qsize()

    def close(self) -> None:
        """Write what is queued, then close the file (bounded: a hung disk is left behind)."""
        with suppress(queue.Full):
            self._queue.put(None, timeout=CLOSE_TIMEOUT_S)
        self._thread.join(CLOSE_TIMEOUT_S)
        if self._thread.is_alive():
            logger.warning(
                "judgment log %s: the writer did not finish within %.0f s; %d lines not written",
                self.path,
                CLOSE_TIMEOUT_S,
                self.queued,
            )

    def _run(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < BATCH_LINES:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in batch
            lines = [line for line in map(self._render, filter(None, batch)) if line is not None]
            for chunk in line_chunks(lines, self._chunk_chars):
                self._write(chunk)
        with suppress(OSError, ValueError):
            self._sink.close()

    def _render(self, render: Callable[[], str]) -> str | None:
        try:
            return render()
        except Exception:  # a writer thread that died would drop every later line: lose this one
            with self._lock:
                self.errors += 1
                first, self._render_failed = not self._render_failed, True
            if first:
                logger.exception("judgment log %s: a line could not be made (counted in errors)", self.path)
            return None

    def _write(self, lines: list[str]) -> None:
        try:
            self._sink.write("\n".join(lines))
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


os.register_at_fork(after_in_child=_forget_writers)


def open_writer(
    path: Path, sink: Callable[[Path], LineSink], queue_size: int, chunk_chars: int
) -> JudgmentWriter:
    """The writer of ``path`` in this process, started on first use (the first caller's
    bounds apply); every call needs a ``release_writer``."""
    with _WRITERS_LOCK:
        writer = _WRITERS.get(path)
        if writer is None:
            writer = _WRITERS[path] = JudgmentWriter(path, sink(path), queue_size, chunk_chars)
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
