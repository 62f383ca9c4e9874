"""What a trainer's process does around rewards: cancel, close, fork, bad text, debug logs."""

import asyncio
import logging
import os
import signal
import threading
import time

import pytest

import adapter.pipeline.steps as steps_module
from adapter import JudgeRewardSystem
from judge_vllm.schemas import Verdict
from judge_vllm.testing.fake_server import FaultPlan

SURROGATE = "The answer is 4 \ud800"


def _system(url, tmp_path, **overrides):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.01, **overrides}
    return JudgeRewardSystem(config)


@pytest.mark.parametrize("use_cache", [True, False])
def test_lone_surrogates_get_a_defined_reward_everywhere(fake_judge, tmp_path, use_cache):
    with _system(fake_judge.url, tmp_path, use_cache=use_cache) as rs:
        single = rs.reward("q \ud800", SURROGATE, "4", "NUMBER")
        batch = rs.reward_batch([{"prompt": "q", "completion": SURROGATE, "answer": "4"},
                                 {"prompt": "q", "completion": "The answer is 5", "answer": "5"}])  # fmt: skip
        async_result = asyncio.run(rs.areward("q", SURROGATE, "4"))
    assert single["source"] == "judge" and single["reward"] == 1.0
    assert [r["source"] for r in batch] == ["judge", "judge"]
    assert async_result["reward"] == 1.0


def test_bad_input_never_opens_the_breaker(fake_judge, tmp_path):
    config = {"use_cache": False, "circuit_breaker_threshold": 2, "invalid_rows": "zero"}
    with _system(fake_judge.url, tmp_path, **config) as rs:
        for _ in range(5):
            rs.reward("q", SURROGATE, "4")
            rs.reward("q", ["not", "text"], "4")
        clean = rs.reward_batch([{"prompt": "q", "completion": f"The answer is {i}", "answer": str(i)}
                                 for i in range(4)])  # fmt: skip
        state = rs.get_metrics()["circuit_breaker"]["state"]
    assert state == "closed" and {r["source"] for r in clean} == {"judge"}


def test_a_waiter_gets_the_result_when_the_request_it_joined_is_cancelled(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(latency_s=1.0))
    with _system(fake_judge.url, tmp_path, reward_timeout=5.0) as rs:

        async def run():
            first = asyncio.ensure_future(rs.areward("q", "The answer is 4", "4", "NUMBER"))
            await asyncio.sleep(0.2)
            second = asyncio.ensure_future(rs.areward("q", "The answer is 4", "4", "NUMBER"))
            await asyncio.sleep(0.2)
            first.cancel()
            started = time.monotonic()
            return await second, time.monotonic() - started

        result, waited = asyncio.run(run())
    assert result["source"] == "judge" and result["reward"] == 1.0
    assert waited < 3.0  # the judge answers after 1 s; the waiter's own timeout is 5 s


def test_close_during_an_in_flight_reward_returns_that_reward(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(latency_s=1.0))
    rs = _system(fake_judge.url, tmp_path, reward_timeout=10.0)
    outcomes: list[object] = []

    def call():
        try:
            outcomes.append(rs.reward("q", "The answer is 4", "4", "NUMBER"))
        except Exception as err:  # recorded, so the assertion below shows it
            outcomes.append(err)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.3)
    rs.close()
    caller.join(15)
    assert len(outcomes) == 1 and isinstance(outcomes[0], dict), outcomes
    assert outcomes[0]["source"] in ("judge", "rule_fallback") and outcomes[0]["reward"] == 1.0


def test_rewards_work_in_a_forked_child(fake_judge, tmp_path):
    rs = _system(fake_judge.url, tmp_path, reward_timeout=5.0)
    assert rs.reward("q", "The answer is 1", "1", "NUMBER")["source"] == "judge"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report source, seconds per call, seconds to close
        try:
            started = time.monotonic()
            result = rs.reward("q", "The answer is 2", "2", "NUMBER")
            call_s = time.monotonic() - started
            started = time.monotonic()
            rs.close()
            os.write(write_end, f"{result['source']} {call_s:.2f} {time.monotonic() - started:.2f}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 30
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.05)
    source, call_s, close_s = os.read(read_end, 100).decode().split()
    os.close(read_end)
    rs.close()
    assert source == "judge" and float(call_s) < 3.0 and float(close_s) < 3.0


def test_prechecks_run_once_per_reward(fake_judge, tmp_path, monkeypatch):
    calls = []
    original = steps_module.precheck

    def counting(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(steps_module, "precheck", counting)
    with _system(fake_judge.url, tmp_path, use_cache=False) as rs:
        rs.reward("q", "The answer is 4", "4", "NUMBER")
        rs.reward_batch([{"prompt": "q", "completion": "It is 5", "answer": "5"}])
    assert len(calls) == 2


def test_debug_logging_has_a_line_per_judge_call_and_per_fallback(fake_judge, tmp_path, caplog):
    items = [{"prompt": f"q{i}", "completion": f"The answer is {i}", "answer": str(i)} for i in range(48)]
    with caplog.at_level(logging.DEBUG, logger="JudgeReward"), _system(fake_judge.url, tmp_path, max_retries=0) as rs:
        rs.reward_batch(items)
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        rs.reward("q", "The answer is 99", "99")
    calls = [r.getMessage() for r in caplog.records if r.getMessage().startswith("judge call:")]
    assert calls and all("/v1/chat/completions" in c and " ms: " in c for c in calls)
    assert sum(int(c.split()[2]) for c in calls[:-1]) == 48  # item counts add up
    assert any("rule fallback" in r.getMessage() for r in caplog.records)


class _UnsureJudge(JudgeRewardSystem):
    def _request_judge(self, request):
        return Verdict(score=1.0, confidence=0.3, explanation="unsure")


@pytest.mark.parametrize(("calibration", "expected"), [(None, 1.0), ({"threshold": 0.5, "factor": 0.8}, 0.8)])
def test_confidence_calibration_is_off_by_default(tmp_path, calibration, expected):
    config = {
        "cache_dir": str(tmp_path / "cache"),
        "model": "m",
        "calibration": calibration,
        "startup_check": "off",  # no judge server: the judgment is _UnsureJudge's
    }
    with _UnsureJudge(config) as rs:
        result = rs.reward("q", "The answer is 4", "4")
    assert result["reward"] == pytest.approx(expected) and result["confidence"] == 0.3
    assert ("shrunk x0.8" in result["explanation"]) is (calibration is not None)


def test_fast_mode_without_label_logprobs_warns_once_and_is_counted(fake_judge, tmp_path, caplog):
    fake_judge.set_plan(FaultPlan(tokenize=False))
    items = [{"prompt": f"q{i}", "completion": f"The answer is {i}", "answer": str(i)} for i in range(6)]
    # No start-up check: its tiny judgment would be a seventh verdict read from the label alone.
    system = _system(fake_judge.url, tmp_path, mode="fast", startup_check="off")
    with caplog.at_level(logging.WARNING), system as rs:
        results = rs.reward_batch(items)
        metrics = rs.get_metrics()
    warnings = [r for r in caplog.records if "no label logprobs" in r.getMessage()]
    assert {r["source"] for r in results} == {"judge"} and all(r["confidence"] is None for r in results)
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert metrics["coarse_fast_verdicts"] == 6


def test_a_cache_directory_removed_while_running_is_a_miss_not_an_error(fake_judge, tmp_path):
    import shutil

    with _system(fake_judge.url, tmp_path) as rs:
        assert rs.reward("q", "The answer is 1", "1", "NUMBER")["source"] == "judge"
        for _ in range(50):  # the write-behind writer may still be adding a file as the tree goes
            shutil.rmtree(tmp_path / "cache", ignore_errors=True)
            if not (tmp_path / "cache").exists():
                break
            time.sleep(0.02)
        results: list[dict] = []
        # a new thread opens its own SQLite connection: in the removed directory, it cannot
        caller = threading.Thread(
            target=lambda: results.extend(
                rs.reward("q", f"The answer is {i}", str(i), "NUMBER") for i in range(2, 6)
            )
        )
        caller.start()
        caller.join(30)
        again = rs.reward("q", "The answer is 2", "2", "NUMBER")
    assert {r["source"] for r in results} == {"judge"} and again["source"] in ("cache", "judge")
