import contextlib
import gc
import json
import logging
import os
import pickle
import select
import shutil
import signal
import sqlite3
import stat
import threading
import time
import weakref

import diskcache
import pytest

import adapter.cache.store
import adapter.cache.verdict_cache
from adapter.cache.keys import _settings_digest, cache_key
from adapter.cache.verdict_cache import VerdictCache
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig
from judge_vllm.trajectory import CallStep, ResultStep, Trajectory

CONFIG = JudgeClientConfig()


def _req(**kw):
    base = {"prompt": "p", "completion": "c", "answer": "a", "answer_type": "TEXT"}
    return JudgeRequest(**{**base, **kw})


def test_key_depends_on_every_field_but_not_request_id():
    base = cache_key(_req(), "m", CONFIG)
    assert base == cache_key(_req(request_id="other"), "m", CONFIG)
    assert base == cache_key(_req(metadata={"step": 3}), "m", CONFIG)
    variants = [
        cache_key(_req(prompt="p2"), "m", CONFIG),
        cache_key(_req(completion="c2"), "m", CONFIG),
        cache_key(_req(answer="a2"), "m", CONFIG),
        cache_key(_req(answer_type="NUMBER"), "m", CONFIG),
        cache_key(_req(), "m2", CONFIG),
        cache_key(_req(), "m", JudgeClientConfig(mode="verdict")),
        cache_key(_req(), "m", JudgeClientConfig(max_explanation_chars=50)),
    ]
    assert base not in variants and len(set(variants)) == len(variants)


def test_key_is_collision_safe_on_field_boundaries():
    assert cache_key(_req(prompt="ab", completion="c"), "m", CONFIG) != cache_key(
        _req(prompt="a", completion="bc"), "m", CONFIG
    )


def test_a_comparison_s_key_holds_each_response_s_steps_in_the_order_shown():
    failed = Trajectory(steps=(CallStep(name="lookup"), ResultStep(content="Error: timeout")))
    worked = Trajectory(steps=(CallStep(name="lookup"), ResultStep(content="709,037")))
    compared = _req(completion="", responses=("709,037", "709,037"), profile="pairwise")
    keys = {
        cache_key(compared.model_copy(update={"traces": traces}), "m", CONFIG)
        for traces in ((), (failed, worked), (worked, failed), (worked, None))
    }
    assert len(keys) == 4  # the same replies after other steps are another comparison


def test_key_of_text_with_lone_surrogates_is_stable_and_distinct():
    lone = "The answer is 4 \ud800"
    keys = {
        cache_key(_req(prompt=lone), "m", CONFIG),
        cache_key(_req(completion=lone), "m", CONFIG),
        cache_key(_req(answer=lone), "m", CONFIG),
        cache_key(_req(answer_type="\udfff"), "m", CONFIG),
        cache_key(_req(), "m\ud800", CONFIG),
        cache_key(_req(completion="The answer is 4 \udbff"), "m", CONFIG),
        cache_key(_req(completion="\ud83d\ude00"), "m", CONFIG),
        cache_key(_req(completion="The answer is 4 "), "m", CONFIG),
        cache_key(_req(), "m", CONFIG),
    }
    # JudgeRequest turns lone surrogates into U+FFFD (and joins a pair spelt as two halves),
    # so "...4 \ud800" and "...4 \udbff" are one request with one key; the rest differ.
    assert len(keys) == 8
    assert cache_key(_req(completion=lone), "m", CONFIG) == cache_key(_req(completion=lone), "m", CONFIG)


def test_key_of_valid_text_is_unchanged():
    # pinned: a change here silently invalidates every existing cache (bump KEY_SCHEMA_VERSION instead)
    digest = _settings_digest("m", CONFIG).copy()
    digest.update('["p", "c é", "a", "TEXT"]'.encode())
    assert cache_key(_req(completion="c é"), "m", CONFIG) == digest.hexdigest()


def test_roundtrip_is_json_and_survives_reopen(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=0.75, explanation="e"))
    cache.close()
    reopened = VerdictCache(tmp_path / "c", 100)
    assert reopened.get("k") == Verdict(score=0.75, explanation="e")
    assert reopened.get("missing") is None
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700
    # values are JSON, not pickle: no pickle opcodes in the store
    assert b"\x80\x04" not in b"".join(p.read_bytes() for p in (tmp_path / "c").iterdir() if p.is_file())


def test_an_invalid_entry_is_a_counted_miss_and_deleted(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache._cache.set("k", '{"score": 7}')
    cache._cache.set("garbled", "{not json")
    assert cache.get("k") is None
    assert cache.get("garbled") is None
    assert cache.errors == 2
    cache.close()
    assert len(VerdictCache(tmp_path / "c", 100)) == 0


def _plant(directory, key, mode, filename=None, value=None):
    """Write a Cache row straight into SQLite, as anyone who can write the database could."""
    now = time.time()
    with contextlib.closing(sqlite3.connect(directory / "cache.db")) as db, db:
        db.execute(
            "INSERT OR REPLACE INTO Cache (key, raw, store_time, expire_time, access_time, access_count,"
            " tag, size, mode, filename, value) VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, ?, ?, ?)",
            (key, now, now, mode, filename, value),
        )


def test_a_row_naming_a_file_is_refused_and_the_file_left_alone(tmp_path):
    verdict_file = tmp_path / "outside.json"
    verdict_file.write_text('{"score": 1.0, "explanation": "planted"}')
    other_file = tmp_path / "notes.txt"
    other_file.write_text("not a verdict")
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("real", Verdict(score=0.5))
    cache.close()
    _plant(tmp_path / "c", "verdict", diskcache.core.MODE_TEXT, str(verdict_file))
    _plant(tmp_path / "c", "other", diskcache.core.MODE_TEXT, str(other_file))
    _plant(tmp_path / "c", "binary", diskcache.core.MODE_BINARY, str(verdict_file))
    _plant(tmp_path / "c", "own-db", diskcache.core.MODE_TEXT, "cache.db")  # inside the directory
    _plant(tmp_path / "c", "overwritten", diskcache.core.MODE_TEXT, str(other_file))

    cache = VerdictCache(tmp_path / "c", 100)
    assert [cache.get(key) for key in ("verdict", "other", "binary", "own-db")] == [None] * 4
    cache.set("overwritten", Verdict(score=0.25))  # diskcache removes the file of a row it replaces
    cache.close()

    assert verdict_file.read_text() == '{"score": 1.0, "explanation": "planted"}'
    assert other_file.read_text() == "not a verdict"
    reopened = VerdictCache(tmp_path / "c", 100)
    assert reopened.get("real") == Verdict(score=0.5)
    assert reopened.get("overwritten") == Verdict(score=0.25)
    assert len(reopened) == 2  # the refused rows were deleted, their files were not


def test_a_pickled_entry_is_refused_not_loaded(tmp_path):
    VerdictCache(tmp_path / "c", 100).close()
    _plant(tmp_path / "c", "k", diskcache.core.MODE_PICKLE, value=pickle.dumps({"score": 0.5}))
    cache = VerdictCache(tmp_path / "c", 100)
    assert cache.get("k") is None
    cache.close()
    assert len(VerdictCache(tmp_path / "c", 100)) == 0


def test_a_large_verdict_is_stored_inline(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set(
        "k", Verdict(score=1.0, explanation="x" * 100_000)
    )  # diskcache's default moves >32 KiB to a file
    cache.close()
    assert VerdictCache(tmp_path / "c", 100).get("k") == Verdict(score=1.0, explanation="x" * 100_000)
    assert {path.name for path in (tmp_path / "c").iterdir()} <= {"cache.db", "cache.db-wal", "cache.db-shm"}


@pytest.mark.parametrize(("max_entries", "inserted"), [(10, 100), (1000, 1500), (50, 3000)])
def test_max_entries_counts_entries_and_evicts_the_least_recently_stored(tmp_path, max_entries, inserted):
    cache = VerdictCache(tmp_path / "c", max_entries)
    for i in range(inserted):
        cache.set(f"k{i}", Verdict(score=0.5, explanation="x" * 100))
    cache.close()
    reopened = VerdictCache(tmp_path / "c", max_entries)
    assert max_entries * 0.9 <= len(reopened) <= max_entries
    assert reopened.get(f"k{inserted - 1}") == Verdict(score=0.5, explanation="x" * 100)
    assert reopened.get("k0") is None
    assert cache.evictions == inserted - len(reopened)


def test_a_rewritten_entry_counts_as_recently_stored(tmp_path):
    cache = VerdictCache(tmp_path / "c", 10)
    for i in range(10):
        cache.set(f"k{i}", Verdict(score=0.5))
    cache.close()
    cache = VerdictCache(tmp_path / "c", 10)
    cache.set("k0", Verdict(score=0.25))
    cache.set("new", Verdict(score=0.5))
    cache.close()
    reopened = VerdictCache(tmp_path / "c", 10)
    assert reopened.get("k0") == Verdict(score=0.25)
    assert reopened.get("k1") is None and len(reopened) == 10


def test_a_write_is_readable_at_once_and_on_disk_after_close(tmp_path):
    cache = VerdictCache(tmp_path / "c", 1000)
    for i in range(200):
        cache.set(f"k{i}", Verdict(score=i / 200))
    assert cache.get("k199") == Verdict(score=199 / 200)
    cache.close()
    reopened = VerdictCache(tmp_path / "c", 1000)
    assert [reopened.get(f"k{i}").score for i in range(200)] == [i / 200 for i in range(200)]


def _warnings(caplog):
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("adapter.cache.") and r.levelno >= logging.WARNING
    ]


def _in_fresh_threads(calls):
    """Run each call in a thread of its own (a new SQLite connection); what each returned or raised."""
    outcomes = []

    def run(call):
        try:
            outcomes.append(call())
        except BaseException as err:  # the assertion names it
            outcomes.append(err)

    for call in calls:
        thread = threading.Thread(target=run, args=(call,))
        thread.start()
        thread.join()
    return outcomes


def test_a_failed_write_is_dropped_counted_and_warned_about_once(tmp_path, caplog, monkeypatch):
    cache = VerdictCache(tmp_path / "c", 100)

    def disk_full(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(cache._cache, "set", disk_full)
    cache.set("k", Verdict(score=1.0))
    cache.set("k2", Verdict(score=1.0))
    cache.close()
    assert len(_warnings(caplog)) == 1
    assert "failed; they were dropped (OSError: No space left on device)" in _warnings(caplog)[0]
    assert cache.errors in (1, 2)  # one batch or two, as the writer happened to take them
    assert cache._unwritten == {}


def test_a_removed_directory_is_a_miss_not_an_error(tmp_path, caplog):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=1.0))
    cache.close()
    cache = VerdictCache(tmp_path / "c", 100)
    shutil.rmtree(tmp_path / "c")
    outcomes = _in_fresh_threads([lambda: cache.get("k")] * 10 + [lambda: len(cache)])
    assert outcomes == [None] * 10 + [0]
    cache.set("k2", Verdict(score=1.0))
    cache.close()
    assert cache.errors >= 12  # ten reads, the count, the write
    assert (
        len(_warnings(caplog)) == 1
        and "(OperationalError: unable to open database file)" in _warnings(caplog)[0]
    )


def test_a_database_corrupted_while_running_is_a_miss(tmp_path, caplog):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=1.0))
    cache.close()
    cache = VerdictCache(tmp_path / "c", 100)
    with open(tmp_path / "c" / "cache.db", "r+b") as db:
        db.write(b"\xa5" * 4096)
    assert _in_fresh_threads([lambda: cache.get("k")] * 30) == [None] * 30
    cache.set("k2", Verdict(score=1.0))
    cache.close()
    assert cache.errors >= 31
    assert len(_warnings(caplog)) == 1 and "DatabaseError" in _warnings(caplog)[0]


def test_a_verdict_without_a_utf8_form_is_dropped(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=1.0, explanation="cut \ud800"))
    assert cache.get("k") is None and cache.errors == 1
    cache.close()


def test_stats(tmp_path):
    cache = VerdictCache(tmp_path / "c", 2)
    for i in range(3):
        cache.set(f"k{i}", Verdict(score=1.0))
    cache.close()
    assert (cache.errors, cache.evictions) == (0, 1)
    reopened = VerdictCache(tmp_path / "c", 2)
    assert reopened.stats() == {"entries": 2, "errors": 0, "evictions": 0, "enabled": True}


def _fill(directory, entries):
    cache = VerdictCache(directory, entries)
    for i in range(entries):
        cache.set(f"k{i}", Verdict(score=0.5, explanation="x" * 100))
    cache.close()


@pytest.mark.parametrize("damaged_page", ["header", "middle"])
def test_a_database_corrupt_at_start_is_moved_aside_and_replaced(tmp_path, caplog, damaged_page):
    _fill(tmp_path / "c", 2000)
    database = tmp_path / "c" / "cache.db"
    offset = 0 if damaged_page == "header" else database.stat().st_size // 4096 // 2 * 4096
    with open(database, "r+b") as db:
        db.seek(offset)
        db.write(b"\xa5" * 4096)

    cache = VerdictCache(tmp_path / "c", 100)

    (moved,) = (tmp_path / "c").glob("cache.db.corrupt-*[0-9]Z")
    assert moved.read_bytes()[offset : offset + 4096] == b"\xa5" * 4096
    (warning,) = _warnings(caplog)
    assert f"{database} is corrupt" in warning and f"moved it to {moved}" in warning
    assert cache.enabled and len(cache) == 0 and cache.get("k1") is None
    cache.set("k", Verdict(score=1.0))
    cache.close()
    assert VerdictCache(tmp_path / "c", 100).get("k") == Verdict(score=1.0)


@pytest.mark.parametrize("place", ["under a file", "database is a directory"])
def test_a_cache_that_cannot_be_opened_is_a_working_no_op(tmp_path, caplog, place):
    if place == "under a file":  # as unwritable as it gets for root, who ignores permission bits
        (tmp_path / "file").write_text("")
        directory = tmp_path / "file" / "c"
    else:
        directory = tmp_path / "c"
        (directory / "cache.db").mkdir(parents=True)

    cache = VerdictCache(directory, 100)

    (warning,) = _warnings(caplog)
    assert warning.startswith(f"verdict cache disabled: cannot open a cache in {directory}")
    assert "every lookup is a miss" in warning
    cache.set("k", Verdict(score=1.0))
    assert cache.get("k") is None and len(cache) == 0 and not cache.enabled
    assert cache.stats() == {"entries": 0, "errors": 0, "evictions": 0, "enabled": False}
    cache.close()
    cache.close()


def _in_forked_child(work, timeout_s=30, fork_waits=None):
    """What ``work()`` returned (JSON) in a forked child; {"hung": True} if it did not finish.

    ``fork_waits``, if given, gets how long ``os.fork()`` took in the parent (the fork gate's wait).
    """
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid and fork_waits is not None:
        fork_waits.append(time.monotonic() - started)
    if pid == 0:  # the child: report through the pipe, never return into pytest
        try:
            os.close(read_end)
            os.write(write_end, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        finished = select.select([pipe], [], [], timeout_s)[0]
        if not finished:
            os.kill(pid, signal.SIGKILL)
        report = json.loads(pipe.read() or b"{}") if finished else {"hung": True}
    os.waitpid(pid, 0)
    return report


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")  # Python 3.12+: forking with threads
def test_a_forked_child_reads_writes_and_closes(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("parent", Verdict(score=0.5))
    cache.close()
    cache = VerdictCache(tmp_path / "c", 100)
    assert cache.get("parent") == Verdict(score=0.5)  # this thread's connection crosses the fork
    cache.set("parent2", Verdict(score=0.5))  # so does the writer's

    def child():
        report = {"read": cache.get("parent") == Verdict(score=0.5)}
        cache.set("child", Verdict(score=0.25))
        report["read_own_write"] = cache.get("child") == Verdict(score=0.25)
        started = time.monotonic()
        cache.close()
        report["close_s"] = time.monotonic() - started
        report["stored"] = VerdictCache(tmp_path / "c", 100).get("child") == Verdict(score=0.25)
        report["errors"] = cache.errors
        return report

    report = _in_forked_child(child)
    close_s = report.pop("close_s", None)
    assert report == {"read": True, "read_own_write": True, "stored": True, "errors": 0}
    assert close_s < 2.0
    # the parent's cache still works, and sees the child's write
    cache.set("parent3", Verdict(score=0.75))
    assert cache.get("child") == Verdict(score=0.25)
    cache.close()
    assert VerdictCache(tmp_path / "c", 100).get("parent3") == Verdict(score=0.75)


@pytest.mark.slow
@pytest.mark.timeout(300)  # a fork that never gets through fails here, not at the run's 600 s
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_forks_while_threads_hammer_the_cache_never_hang(tmp_path):
    """The fork gate under stress: 4 threads read and write without pause (the write-behind
    queue stays full) while the main thread forks 20 times; every fork gets through within 2 s
    and every child reads, writes and closes within its time. Before the gate, about one
    child in eight hung for good on SQLite's allocator mutex; before the writer's transactions
    were bounded, a fork waited for a whole queue of writes (3 to 60 s, once over 10 minutes)."""
    cache = VerdictCache(tmp_path / "c", 10_000)
    stop = threading.Event()

    def hammer(worker: int) -> None:
        n = 0
        while not stop.is_set():
            cache.get(f"w{(worker + 1) % 4}-{n % 200}")  # in SQLite all the time
            cache.set(f"w{worker}-{n % 200}", Verdict(score=(n % 5) / 4))  # faster than a disk
            n += 1

    threads = [threading.Thread(target=hammer, args=(w,), daemon=True) for w in range(4)]
    for thread in threads:
        thread.start()

    def child():
        cache.set("child", Verdict(score=1.0))
        ok = cache.get("child") == Verdict(score=1.0)
        cache.close()
        return {"ok": ok}

    fork_waits: list[float] = []
    try:
        reports = [_in_forked_child(child, timeout_s=20, fork_waits=fork_waits) for _ in range(20)]
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
        cache.close()
    assert reports == [{"ok": True}] * 20
    assert max(fork_waits) < 2.0, sorted(fork_waits)  # measured 0.09 to 0.43 s; 3 to 60 s before


def test_verdicts_beyond_the_write_behind_bound_are_counted_not_held(tmp_path, monkeypatch):
    monkeypatch.setattr(adapter.cache.verdict_cache, "MAX_PENDING_WRITES", 50)
    cache = VerdictCache(tmp_path / "c", 10_000)
    disk_free = threading.Event()
    original = cache._apply
    monkeypatch.setattr(cache, "_apply", lambda jobs, store: (disk_free.wait(10), original(jobs, store))[1])
    for n in range(500):  # the writer is stuck on a slow disk while the judge keeps answering
        cache.set(f"k{n}", Verdict(score=0.5))
    held = len(cache._unwritten)
    disk_free.set()
    cache.close()
    assert held <= 100  # the batch in the writer's hands (at most the bound), then the bound
    assert cache.errors >= 400
    reopened = VerdictCache(tmp_path / "c", 10_000)
    assert reopened.get("k0") == Verdict(score=0.5) and reopened.get("k499") is None
    reopened.close()


def test_the_writer_stores_a_long_queue_in_bounded_transactions(tmp_path, monkeypatch):
    cache = VerdictCache(tmp_path / "c", 10_000)
    disk_free = threading.Event()
    batches = []
    original = cache._apply

    def slow_apply(jobs, store):
        disk_free.wait(10)
        batches.append(len(jobs))
        return original(jobs, store)

    monkeypatch.setattr(cache, "_apply", slow_apply)
    for n in range(1_000):  # queued while the writer is busy: a fork would wait for one transaction
        cache.set(f"k{n}", Verdict(score=0.5))
    disk_free.set()
    cache.close()
    assert max(batches) == adapter.cache.verdict_cache.WRITE_BATCH_MAX and sum(batches) == 1_000
    reopened = VerdictCache(tmp_path / "c", 10_000)
    assert len(reopened) == 1_000 and reopened.errors == 0
    reopened.close()


def test_a_pending_fork_ends_the_writers_transaction_after_one_write(tmp_path, monkeypatch):
    cache = VerdictCache(tmp_path / "c", 100)
    monkeypatch.setattr(adapter.cache.verdict_cache, "_NO_FORK_PENDING", threading.Event())  # pending
    text = Verdict(score=0.5).model_dump_json()
    left = cache._apply([("a", text), ("b", text), ("c", text)], cache._cache)
    assert left == [("b", text), ("c", text)]  # for after the fork
    assert cache._cache.get("a") == text and cache._cache.get("b") is None and cache.errors == 0
    monkeypatch.undo()
    cache.close()


def test_a_cache_dropped_without_close_is_collected_and_its_writer_stops(tmp_path):
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=0.5))
    writer, collected = cache._writer, weakref.ref(cache)
    del cache
    gc.collect()
    assert collected() is None
    writer.join(timeout=5)
    assert not writer.is_alive()


def test_close_is_idempotent_and_later_calls_are_quiet_misses(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="adapter")
    cache = VerdictCache(tmp_path / "c", 100)
    cache.set("k", Verdict(score=0.5))
    writer = cache._writer
    cache.close()
    cache.close()
    assert not writer.is_alive()
    cache.set("late", Verdict(score=0.5))
    assert "closed or none open, verdict late not stored" in caplog.text
    assert cache.get("k") is None and cache.get("late") is None and len(cache) == 0
    assert cache.errors == 0 and not cache.enabled and _warnings(caplog) == []
    reopened = VerdictCache(tmp_path / "c", 100)
    assert reopened.get("k") == Verdict(score=0.5) and reopened.get("late") is None


def _hold_write_lock(directory):
    """Another process's write transaction, as far as this one can tell."""
    holder = sqlite3.connect(directory / "cache.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_close_returns_promptly_when_another_process_holds_the_lock(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(adapter.cache.store, "SQLITE_TIMEOUT_S", 0.2)
    cache = VerdictCache(tmp_path / "c", 100)
    holder = _hold_write_lock(tmp_path / "c")
    cache.set("k", Verdict(score=0.5))
    started = time.monotonic()
    cache.close()  # diskcache's default lock wait was 60 s
    assert time.monotonic() - started < 2.0
    holder.rollback()
    holder.close()
    assert cache.errors == 1 and "they were dropped (Timeout" in _warnings(caplog)[0]


def test_close_stops_waiting_for_a_stuck_writer(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(adapter.cache.store, "SQLITE_TIMEOUT_S", 3.0)
    monkeypatch.setattr(adapter.cache.verdict_cache, "CLOSE_TIMEOUT_S", 0.2)
    cache = VerdictCache(tmp_path / "c", 100)
    holder = _hold_write_lock(tmp_path / "c")
    cache.set("k", Verdict(score=0.5))
    started = time.monotonic()
    cache.close()
    assert time.monotonic() - started < 1.0
    assert _warnings(caplog) == [
        "verdict cache: still writing 0.2 s into close; verdicts not stored by now may be lost"
    ]
    holder.rollback()
    holder.close()
