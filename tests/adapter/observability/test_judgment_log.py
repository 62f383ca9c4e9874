"""The judgment log: sampling, bounds, rotation, redaction, failures and a slow disk.

Most tests feed ``JudgmentLog.record`` directly (no server); the ones that go through
``JudgeRewardSystem`` use the loopback fake judge, which stands in for the network only.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pydantic_core
import pytest

from adapter import JudgeRewardSystem, RewardConfig
from adapter.ensemble import MultiJudge
from adapter.observability import judgment_log
from adapter.observability.judgment_log import JudgmentLog, cut_text, sampled
from adapter.observability.judgment_writer import RotatingFile, line_chunks, open_writer, release_writer
from adapter.result import RewardResult
from judge_vllm.schemas import JudgeRequest
from judge_vllm.testing.fake_server import FakeJudgeServer

IDS = [f"req-{i}" for i in range(20_000)]
REPO = Path(__file__).resolve().parents[3]


def _config(path: Path | None, **overrides: object) -> RewardConfig:
    return RewardConfig(judgment_log_path=path, use_cache=False, **overrides)


def _log(path: Path | None, **overrides: object) -> JudgmentLog:
    return JudgmentLog(_config(path, **overrides), lambda: "test-model")


def _result(request_id: str, reward: float = 1.0) -> RewardResult:
    return RewardResult(reward=reward, source="judge", request_id=request_id, explanation="ok", label="5")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- sampling -------------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "low", "high"), [(0.0, 0, 0), (1.0, 20_000, 20_000), (0.3, 5600, 6400)])
def test_sampling_rate(rate, low, high):
    assert low <= sum(sampled(i, rate) for i in IDS) <= high


def test_sampling_is_a_function_of_the_request_id():
    at_30 = {i for i in IDS if sampled(i, 0.3)}
    assert at_30 == {i for i in IDS if sampled(i, 0.3)}
    # A request logged at a lower rate is logged at every higher one.
    assert at_30 < {i for i in IDS if sampled(i, 0.5)}


def test_sample_rate_is_validated():
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="judgment_log_sample_rate"):
            RewardConfig.from_any({"judgment_log_sample_rate": bad})
    with pytest.raises(ValueError, match="judgment_log_backups"):
        RewardConfig.from_any({"judgment_log_backups": 0})


def test_the_log_keeps_the_sampled_rewards(tmp_path):
    path = tmp_path / "j.jsonl"
    log = _log(path, judgment_log_sample_rate=0.3)
    for request_id in IDS[:2000]:
        log.record(_result(request_id), None)
    log.close()
    logged = [line["request_id"] for line in _lines(path)]
    assert logged == [i for i in IDS[:2000] if sampled(i, 0.3)]
    assert log.snapshot()["logged"] == len(logged)


def test_off_by_default_and_at_rate_zero(tmp_path):
    assert _log(None).snapshot() is None
    log = _log(tmp_path / "zero.jsonl", judgment_log_sample_rate=0.0)
    log.record(_result("a"), None)
    log.close()
    assert not (tmp_path / "zero.jsonl").exists()


# -- bounds ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "max_chars", "expected"),
    [
        ("short", 64, "short"),
        ("x" * 64, 64, "x" * 64),
        ("a" * 40 + "b" * 40, 64, "a" * 32 + " [... 16 chars cut ...] " + "b" * 32),
        ("head" + "-" * 1000 + "tail", 9, "head [... 999 chars cut ...] -tail"),
    ],
)
def test_cut_text_keeps_head_and_tail(text, max_chars, expected):
    assert cut_text(text, max_chars) == expected


@pytest.mark.parametrize(
    ("lengths", "max_chars", "groups"),
    [
        ([3, 3, 3], 8, [[3, 3], [3]]),  # "aaa\naaa\n" is 8
        ([3, 3, 3], 7, [[3], [3], [3]]),
        ([20, 2], 8, [[20], [2]]),  # a line longer than the limit stands alone
        ([], 8, []),
    ],
)
def test_line_chunks_fit_the_limit(lengths, max_chars, groups):
    chunks = line_chunks([b"a" * n for n in lengths], max_chars)
    assert [[len(line) for line in chunk] for chunk in chunks] == groups


def test_logged_inputs_are_cut(fake_judge, tmp_path):
    path = tmp_path / "j.jsonl"
    long = "start " + "filler " * 2000 + "The answer is 4."
    config = {"judge_url": fake_judge.url, "use_cache": False, "judgment_log_path": str(path),
              "judgment_log_max_chars": 200}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        result = rs.reward("What is 2+2? " * 100, long, "4", "NUMBER", request_id="r1")
    (line,) = _lines(path)
    assert result["reward"] == 1.0  # the judge saw the whole completion
    assert line["completion"].startswith("start filler") and line["completion"].endswith("The answer is 4.")
    assert f"[... {len(long) - 200} chars cut ...]" in line["completion"]
    assert len(line["prompt"]) < 260 and line["answer"] == "4"
    assert line["request_id"] == "r1" and line["source"] == "judge" and line["model"] == "fake-judge"
    assert line["reward"] == line["score"] == 1.0 and line["label"] == "Yes" and line["confidence"] == 1.0
    assert line["answer_type"] == "NUMBER" and line["profile"] == "binary" and line["mode"] == "fast"
    assert line["time"].endswith("Z") and line["latency_ms"] > 0


def _agent_run(key: str, turns: int) -> list[dict[str, object]]:
    """``turns`` tool calls with long results, the last of which holds ``key``, then the reply."""
    messages: list[dict[str, object]] = []
    for i in range(turns):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'},
        }
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "filler " * 60 + f"sum {i}"})
    messages[-1]["content"] = f"4 (served with token {key})"
    return [*messages, {"role": "assistant", "content": "The answer is 4."}]


def test_an_agents_trajectory_is_logged_as_the_judge_is_shown_it_scrubbed_and_bounded(tmp_path):
    key = "sk-judge-0123456789abcdef"
    path = tmp_path / "j.jsonl"
    with FakeJudgeServer(api_key=key) as server:
        config = {"judge_url": server.url, "api_key": key, "use_cache": False, "judgment_log_path": str(path),
                  "judgment_log_max_chars": 1000, "process": {"aggregate": "mean", "max_steps": 2}}  # fmt: skip
        with JudgeRewardSystem(config) as rs:
            result = rs.reward("What is 2+2?", _agent_run(key, 40), "4", "NUMBER")
    (line,) = _lines(path)
    steps = line["trajectory"]
    assert result["source"] == "judge" and key not in path.read_text()
    assert steps[-1] == {"step": 80, "kind": "result", "role": "tool", "text": "4 (served with token ***)"}
    assert steps[-2] == {"step": 79, "kind": "call", "text": 'add({"a": 2, "b": 2})'}  # the call it answers
    assert steps[0] == {"elided": 80 - sum("step" in s for s in steps)}  # the start left out, counted
    assert sum(len(s.get("text", "")) for s in steps) <= 1000
    assert line["step_scores"] == result["step_scores"] and len(line["step_scores"]) == 40  # one per turn
    assert line["step_scores"][:38] == [None] * 38  # before the last max_steps: not judged


def test_a_reward_without_a_trajectory_logs_none(fake_judge, tmp_path):
    path = tmp_path / "j.jsonl"
    with JudgeRewardSystem(
        {"judge_url": fake_judge.url, "use_cache": False, "judgment_log_path": str(path)}
    ) as rs:
        rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
    (line,) = _lines(path)
    assert line["trajectory"] is None and line["step_scores"] is None


# -- rotation -------------------------------------------------------------------------


def test_rotation_bounds_files_and_bytes(tmp_path):
    path = tmp_path / "j.jsonl"
    log = _log(path, judgment_log_max_bytes=4096, judgment_log_backups=2)
    for i in range(1000):
        log.record(_result(f"rotate-{i}"), None)
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["j.jsonl", "j.jsonl.1", "j.jsonl.2"]
    assert all(0 < (tmp_path / name).stat().st_size <= 4096 for name in files)
    # The newest lines are kept, whole, in order across the files.
    kept = [line["request_id"] for name in reversed(files) for line in _lines(tmp_path / name)]
    assert kept == [f"rotate-{i}" for i in range(1000 - len(kept), 1000)]
    assert log.snapshot()["logged"] == 1000


def test_an_empty_file_is_never_rotated(tmp_path):
    file = RotatingFile(tmp_path / "j.jsonl", max_bytes=100, backups=2)
    file.write(b"x" * 150)  # longer than max_bytes, into an empty file
    file.write(b"y" * 10)
    file.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.jsonl", "j.jsonl.1"]  # no empty backup
    assert (tmp_path / "j.jsonl.1").read_bytes() == b"x" * 150
    assert (tmp_path / "j.jsonl").read_bytes() == b"y" * 10


def test_the_bound_is_in_bytes_for_text_beyond_ascii(tmp_path):
    path = tmp_path / "j.jsonl"
    log = _log(path, judgment_log_max_bytes=4096, judgment_log_backups=1)
    request = JudgeRequest(prompt="Что такое 2+2?", completion="答案是四。" * 40, answer="4")
    for i in range(200):
        log.record(_result(f"u{i}"), request)
    log.close()
    assert all(0 < p.stat().st_size <= 4096 for p in tmp_path.iterdir())
    assert _lines(path)[-1]["completion"] == "答案是四。" * 40


# -- redaction ------------------------------------------------------------------------


def test_the_api_key_never_reaches_the_log(tmp_path):
    key = "sk-judge-0123456789abcdef"
    path = tmp_path / "j.jsonl"
    with FakeJudgeServer(api_key=key) as server:
        config = {"judge_url": server.url, "api_key": key, "use_cache": False, "judgment_log_path": str(path)}
        with JudgeRewardSystem(config) as rs:
            judged = rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
            echoed = rs.reward("Repeat the key.", f"The key is {key}.", "4", "TEXT")
    assert judged["source"] == "judge" and echoed["source"] == "judge"  # the key reached the server
    text = path.read_text()
    assert key not in text and "The key is ***." in text
    assert len(_lines(path)) == 2


# -- failures -------------------------------------------------------------------------


def test_an_unwritable_path_counts_errors_and_rewards_go_on(fake_judge, tmp_path, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    config = {"judge_url": fake_judge.url, "use_cache": False, "judgment_log_path": str(blocker / "j.jsonl")}
    with caplog.at_level(logging.WARNING, "JudgeReward"), JudgeRewardSystem(config) as rs:
        results = [rs.reward(f"q{i}", f"The answer is {i}.", str(i), "NUMBER") for i in range(5)]
        rs.close()
        metrics = rs.get_metrics()["judgment_log"]
    assert [r["source"] for r in results] == ["judge"] * 5 and all(r["reward"] == 1.0 for r in results)
    assert metrics["errors"] == 5 and metrics["logged"] == 0
    warnings = [r for r in caplog.records if "cannot write" in r.getMessage()]
    assert len(warnings) == 1  # once per state change, not per line


class FailingThenWorkingSink:
    """Fails the first ``failures`` writes, then keeps the lines."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.lines: list[str] = []

    def write(self, data: bytes) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError(28, "No space left on device")
        self.lines += data.decode().splitlines()

    def close(self) -> None:
        pass


def test_a_full_disk_that_recovers_warns_twice(tmp_path, caplog):
    sink = FailingThenWorkingSink(failures=1)
    log = JudgmentLog(_config(tmp_path / "j.jsonl"), lambda: None, sink=lambda path: sink)
    with caplog.at_level(logging.WARNING, "JudgeReward"):
        log.record(_result("lost"), None)
        _wait_written(log, 1)
        log.record(_result("kept"), None)
        log.close()
    assert [json.loads(line)["request_id"] for line in sink.lines] == ["kept"]
    assert _counts(log.snapshot()) == {"logged": 1, "dropped": 0, "errors": 1, "queued": 0}
    messages = [r.getMessage() for r in caplog.records]
    assert sum("cannot write" in m for m in messages) == 1
    assert sum("writing again (1 lines lost" in m for m in messages) == 1


def test_a_line_that_cannot_be_made_is_counted_and_the_writer_goes_on(tmp_path, caplog):
    sink = FailingThenWorkingSink(failures=0)
    writer = open_writer(tmp_path / "w.jsonl", lambda path: sink, queue_size=10, chunk_bytes=4096)
    with caplog.at_level(logging.ERROR, "JudgeReward"):
        writer.put(pydantic_core.to_json, {"x": object()})
        writer.put(pydantic_core.to_json, {"ok": 1})
        release_writer(writer)
    assert sink.lines == ['{"ok":1}'] and (writer.logged, writer.errors) == (1, 1)
    assert "could not be made" in caplog.text


# -- a slow disk ----------------------------------------------------------------------


class BlockedSink:
    """A disk that does not return until released."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.lines: list[str] = []

    def write(self, data: bytes) -> None:
        self.entered.set()
        self.release.wait(30)
        self.lines += data.decode().splitlines()

    def close(self) -> None:
        pass


def test_a_stuck_disk_drops_lines_and_never_blocks_rewards(fake_judge, monkeypatch, tmp_path):
    sink = BlockedSink()
    monkeypatch.setattr(judgment_log, "RotatingFile", lambda path, max_bytes, backups: sink)
    monkeypatch.setattr(judgment_log, "QUEUE_SIZE", 8)
    config = {"judge_url": fake_judge.url, "use_cache": False, "judgment_log_path": str(tmp_path / "j.jsonl")}
    with JudgeRewardSystem(config) as rs:
        first = rs.reward("q0", "The answer is 0.", "0", "NUMBER")
        assert sink.entered.wait(10)  # the writer holds line 1 and is stuck in the disk
        # 50 more rewards, all answered while the disk is stuck: the log never waits for it.
        results = rs.reward_batch([(f"q{i}", f"The answer is {i}.", str(i), "NUMBER") for i in range(1, 51)])
        stuck = rs.get_metrics()["judgment_log"]
        sink.release.set()
    assert first["source"] == "judge" and [r["source"] for r in results] == ["judge"] * 50
    assert _counts(stuck) == {"logged": 0, "dropped": 42, "errors": 0, "queued": 8}
    assert rs.get_metrics()["judgment_log"]["logged"] == 9 == len(sink.lines)  # close wrote the queue


# -- closing and sharing --------------------------------------------------------------


def test_close_writes_everything_queued(tmp_path):
    path = tmp_path / "j.jsonl"
    log = _log(path)
    for i in range(3000):
        log.record(_result(f"c{i}"), None)
    log.close()
    log.close()  # idempotent
    log.record(_result("after-close"), None)
    assert [line["request_id"] for line in _lines(path)] == [f"c{i}" for i in range(3000)]


def test_a_process_that_never_closes_still_writes_its_last_lines(tmp_path):
    path = tmp_path / "j.jsonl"
    script = (
        "from adapter.config import RewardConfig; from adapter.observability.judgment_log import JudgmentLog; "
        "from adapter.result import RewardResult; "
        f"log = JudgmentLog(RewardConfig(judgment_log_path={str(path)!r}), lambda: None)\n"
        "for i in range(500): log.record(RewardResult(reward=1.0, source='rule', request_id=f'x{i}'), None)"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, timeout=60)
    assert [line["request_id"] for line in _lines(path)] == [f"x{i}" for i in range(500)]


def test_two_logs_on_one_path_share_the_writer(tmp_path):
    path = tmp_path / "shared.jsonl"
    first, second = _log(path), _log(path, mode="verdict")
    first.record(_result("from-first"), None)
    second.record(_result("from-second"), None)
    first.close()
    second.record(_result("second-again"), None)  # the file stays open for the other user
    second.close()
    lines = _lines(path)
    assert [(line["request_id"], line["mode"]) for line in lines] == [
        ("from-first", "fast"), ("from-second", "verdict"), ("second-again", "verdict")
    ]  # fmt: skip


def test_pid_in_the_path(tmp_path):
    log = _log(tmp_path / "j-{pid}.jsonl")
    log.record(_result("a"), None)
    log.close()
    (written,) = tmp_path.iterdir()
    assert written.name.startswith("j-") and written.name[2:-6].isdigit()


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")  # Python 3.12+: forking with threads
def test_a_forked_child_writes_its_own_file(tmp_path):
    log = _log(tmp_path / "j-{pid}.jsonl")
    log.record(_result("parent-before"), None)  # the parent's writer thread is running
    pid = os.fork()
    if pid == 0:  # the child: no parent threads here; exit 0 only if its own line was written
        ok = False
        try:
            log.record(_result("child"), None)
            log.close()
            ok = _lines(tmp_path / f"j-{os.getpid()}.jsonl")[0]["request_id"] == "child"
        finally:
            os._exit(0 if ok else 1)
    for _ in range(3000):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        threading.Event().wait(0.01)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    log.record(_result("parent-after"), None)
    log.close()
    assert os.waitstatus_to_exitcode(status) == 0
    parent = [line["request_id"] for line in _lines(tmp_path / f"j-{os.getpid()}.jsonl")]
    assert parent == ["parent-before", "parent-after"]


def test_an_ensemble_logs_once_per_reward(tmp_path):
    path = tmp_path / "j.jsonl"
    with FakeJudgeServer() as a, FakeJudgeServer() as b:
        config = {"judge_urls": [a.url, b.url], "cache_dir": str(tmp_path / "cache"),
                  "judgment_log_path": str(path)}  # fmt: skip
        with MultiJudge(config) as ensemble:
            ensemble.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER", request_id="e1")
    (line,) = _lines(path)
    assert line["request_id"] == "e1" and line["judge_scores"] == {a.url: 1.0, b.url: 1.0}


def _counts(snapshot: dict) -> dict:
    return {k: snapshot[k] for k in ("logged", "dropped", "errors", "queued")}


def _wait_written(log: JudgmentLog, n: int) -> None:
    """Until the writer has handled ``n`` lines (written or lost)."""
    for _ in range(1000):
        snapshot = log.snapshot()
        if snapshot["logged"] + snapshot["errors"] >= n:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"the writer did not handle {n} lines")


def _write_lines(path: str, tag: str, count: int) -> None:
    """A process writing ``count`` lines to a shared log path in small rotating files."""
    import time

    # 4 x 600 lines of ~90 bytes fill ~53 files of 4 KiB: 110 backups hold them twice over.
    writer = open_writer(Path(path), lambda p: RotatingFile(p, 4096, 110), 100_000, 4096)
    for i in range(count):
        writer.put(lambda item: item, f'{{"process": "{tag}", "line": {i}, "pad": "{"x" * 60}"}}'.encode())
        time.sleep(0.002)  # the processes' writes interleave, flush after flush
    release_writer(writer)


def test_several_processes_on_one_log_path_lose_no_line_to_rotation(tmp_path):
    """Four processes, 600 lines each, rotating every ~40 lines: every line is in some file, once."""
    import multiprocessing

    path = tmp_path / "shared.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_lines, args=(str(path), f"p{k}", 600)) for k in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    files = [p for p in tmp_path.iterdir() if p.name.startswith("shared.jsonl")]
    lines = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    seen = {(line["process"], line["line"]) for line in lines}
    assert len(files) > 10  # it did rotate, many times
    assert len(lines) == len(seen) == 4 * 600


def test_a_queued_line_holds_bounded_text_not_a_whole_huge_completion(monkeypatch, tmp_path):
    sink = BlockedSink()
    log = JudgmentLog(
        _config(tmp_path / "j.jsonl", judgment_log_max_chars=1000), lambda: None, sink=lambda p: sink
    )
    huge = "x" * 5_000_000
    request = JudgeRequest(prompt="q", completion=huge, answer="4")
    log.record(_result("first"), request)
    assert sink.entered.wait(10)  # the writer is stuck: the next lines stay queued
    for i in range(5):
        log.record(_result(f"held {i}"), request)
    held = [line.args[0].request.completion for line in log._writer._queue]  # what the queue keeps alive
    sink.release.set()
    log.close()
    # What a queued line keeps alive is the clipped text. (How many of the 5 are still queued here
    # is not asserted: in the whole suite's one process it was 3 twice, never alone; see the
    # closing note of the session that relaxed it.)
    assert held and all(len(text) < 1000 + 100 for text in held)
    assert _lines_of(sink) and all(len(line["completion"]) < 1100 for line in _lines_of(sink))


def _lines_of(sink: BlockedSink) -> list[dict]:
    return [json.loads(line) for line in sink.lines]


def test_close_counts_the_lines_a_stuck_disk_never_got(monkeypatch, tmp_path):
    from adapter.observability import judgment_writer

    monkeypatch.setattr(judgment_writer, "CLOSE_TIMEOUT_S", 0.2)
    sink = BlockedSink()
    log = JudgmentLog(_config(tmp_path / "j.jsonl"), lambda: None, sink=lambda p: sink)
    log.record(_result("first"), None)
    assert sink.entered.wait(10)
    for i in range(4):
        log.record(_result(f"queued {i}"), None)
    log.close()  # the disk never returns: close gives up after its timeout
    snapshot = log.snapshot()
    sink.release.set()
    assert snapshot is not None and snapshot["errors"] == 4 and snapshot["logged"] == 0
