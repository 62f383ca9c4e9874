"""Opening the verdict cache's SQLite store (diskcache), and what stands in when none opens.

Values are JSON text inline in SQLite (``_TextDisk``): a row in any other form (pickled, or
naming a file, as a planted row could) is refused, and no file a row names is read or removed.
A database found corrupt on open is moved aside (``cache.db.corrupt-<UTC time>``) for a fresh
one; a directory that cannot hold a cache gives None, and the cache answers every lookup with
a miss (``NoStore``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path

import diskcache

__all__ = ["SQLITE_TIMEOUT_S", "NoStore", "open_store"]

logger = logging.getLogger(__name__)

# The bound is a count (``max_entries``), kept by the cache's eviction. diskcache's own bound is
# in bytes; it stays as a backstop for a disk, far above what verdicts (a few hundred bytes) take.
BACKSTOP_BYTES_PER_ENTRY = 64 * 1024

# How long SQLite waits for another connection's lock before a write fails (dropped, counted).
# It also bounds how long a fork or a close waits for a write in progress. diskcache's is 60 s.
SQLITE_TIMEOUT_S = 5.0


class _TextDisk(diskcache.Disk):  # type: ignore[misc]  # diskcache has no type hints
    """diskcache's storage narrowed to what this cache writes: JSON text, inline in SQLite.

    Anything else in the database was not written by this cache (an old format, a planted
    row): it is refused, never unpickled, and a file a row names is never read or removed.
    """

    def store(
        self, value: object, read: bool, key: object = diskcache.core.UNKNOWN
    ) -> tuple[int, int, None, str]:
        """Always inline, whatever the size: a value file is a path a planted row could name too."""
        if read or not isinstance(value, str):
            raise TypeError("the verdict cache stores JSON text only")
        return 0, diskcache.core.MODE_RAW, None, value

    def fetch(self, mode: int, filename: str | None, value: object, read: bool) -> str:
        """The inline text of an entry this cache wrote; a ValueError (a miss) for any other."""
        if mode != diskcache.core.MODE_RAW or filename is not None or not isinstance(value, str):
            raise ValueError(
                f"refusing a cache entry not stored inline as text (mode {mode}, file {filename!r})"
            )
        return value

    def remove(self, file_path: str) -> None:
        """Remove nothing: this cache writes no files, so a row naming one names someone else's."""


class _CorruptDatabase(Exception):
    """SQLite's integrity check found the cache database damaged."""


class NoStore:
    """Stands in for diskcache when no cache could be opened, and after close: every lookup misses."""

    def get(self, key: str) -> None:
        """Always a miss."""
        return None

    def close(self) -> None:
        """Nothing to close."""

    def __len__(self) -> int:
        return 0


def open_store(directory: Path, max_entries: int) -> diskcache.Cache | None:
    """The cache in ``directory`` (a corrupt database is moved aside first), or None if none opens.

    Never raises: a cache that cannot be opened must not stop a trainer from starting.
    """
    try:
        try:
            return _open_diskcache(directory, max_entries)
        except Exception as err:
            if not _is_corrupt(err):
                raise
            database = directory / diskcache.core.DBNAME
            moved_to = _move_aside(database, time.time())
            logger.warning(
                "verdict cache: %s is corrupt (%s: %s); moved it to %s and started an empty cache",
                database,
                type(err).__name__,
                err,
                moved_to,
            )
            return _open_diskcache(directory, max_entries)
    except Exception as err:
        logger.warning(
            "verdict cache disabled: cannot open a cache in %s (%s: %s); every lookup is a miss. "
            "Fix: make cache_dir a writable directory, or set use_cache: false.",
            directory,
            type(err).__name__,
            err,
        )
        return None


def _open_diskcache(directory: Path, max_entries: int) -> diskcache.Cache:
    """diskcache on ``directory`` (created 0700), its database checked for damage."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)
    store = diskcache.Cache(
        str(directory),
        timeout=SQLITE_TIMEOUT_S,
        disk=_TextDisk,
        size_limit=max_entries * BACKSTOP_BYTES_PER_ENTRY,
        eviction_policy="least-recently-stored",  # also creates the store_time index eviction uses
    )
    try:
        # Damage past the pages diskcache reads on open would otherwise fail reads for good
        # (each a miss); caught here, it is moved aside. 1-3 ms at 5000 entries, 30 ms at 50,000.
        ((result,),) = store._sql("PRAGMA quick_check(1)").fetchall()
        if result != "ok":
            raise _CorruptDatabase(result)
    except BaseException:
        store.close()
        raise
    return store


def _is_corrupt(err: Exception) -> bool:
    """Whether ``err`` says the database file is damaged (rather than locked, missing or read-only)."""
    # sqlite3 raises its base DatabaseError for SQLITE_CORRUPT and SQLITE_NOTADB (and codes a cache
    # never meets); locks, I/O, permissions and a full disk are OperationalError, a subclass.
    return isinstance(err, _CorruptDatabase) or type(err) is sqlite3.DatabaseError


def _move_aside(database: Path, now: float) -> Path:
    """Rename a broken database (with its WAL and WAL index) to ``<name>.corrupt-<UTC time>``."""
    target = database.with_name(
        f"{database.name}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))}"
    )
    # The WAL belongs to the broken file: a new database next to it would replay its frames.
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(database.with_name(database.name + suffix), target.with_name(target.name + suffix))
    return target
