"""``reward_timeout`` bounds the whole reward call; ``request_timeout`` one HTTP attempt.

Faults are planned once a system has started: its start-up check found the judge answering."""

import time

import pytest

from adapter import JudgeRewardSystem, RewardConfig
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.fake_server import FaultPlan


def _system(url, tmp_path, **overrides):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.0, **overrides}
    return JudgeRewardSystem(config)


def test_a_hung_attempt_is_retried_within_the_reward_timeout(fake_judge, tmp_path):
    config = {"reward_timeout": 8.0, "request_timeout": 1.0, "max_retries": 2, "startup_check": "off"}
    fake_judge.set_plan(FaultPlan(script=["hang", "ok"]))  # every call the judge gets: no start-up check
    with _system(fake_judge.url, tmp_path, **config) as rs:
        started = time.monotonic()
        result = rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
        elapsed = time.monotonic() - started
    assert result["source"] == "judge" and result["reward"] == 1.0
    assert fake_judge.counts["hang"] == 1 and fake_judge.counts["ok"] == 1
    assert elapsed < 8.0


def test_request_timeout_defaults_to_a_third_of_timeout():
    assert RewardConfig(reward_timeout=9.0).attempt_timeout_s == pytest.approx(3.0)
    assert RewardConfig(reward_timeout=9.0, request_timeout=2.0).attempt_timeout_s == 2.0


def test_request_timeout_longer_than_timeout_is_a_config_error():
    with pytest.raises(JudgeConfigError, match=r"request_timeout .* must not exceed judge_timeout"):
        RewardConfig.from_any({"reward_timeout": 5, "request_timeout": 6})


def test_every_reward_returns_within_timeout_when_every_attempt_hangs(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, reward_timeout=2.0, max_retries=3) as rs:
        fake_judge.set_plan(FaultPlan(hang_rate=1.0))
        started = time.monotonic()
        result = rs.reward("q", "The answer is 3", "3", "NUMBER")
        elapsed = time.monotonic() - started
    assert result["source"] == "rule_fallback" and result["reason"] == "Timeout waiting for results"
    assert result["reward"] == 1.0 and elapsed < 2.0 + 0.5


def test_retry_after_is_honoured_within_the_budget(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, reward_timeout=10.0, max_retries=1) as rs:
        fake_judge.set_plan(FaultPlan(script=["busy", "ok"], retry_after_s=1.5))
        started = time.monotonic()
        result = rs.reward("q", "The answer is 4.", "4", "NUMBER")
        elapsed = time.monotonic() - started
    assert result["source"] == "judge" and fake_judge.counts["busy"] == 1
    assert elapsed >= 1.5 and elapsed < 10.0  # waited as asked, not the 0.5 s backoff


def test_a_retry_after_past_the_timeout_falls_back_at_once(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, reward_timeout=5.0, max_retries=3) as rs:
        fake_judge.set_plan(FaultPlan(script=["busy", "ok"], retry_after_s=30.0))
        started = time.monotonic()
        result = rs.reward("q", "The answer is 4.", "4", "NUMBER")
        elapsed = time.monotonic() - started
    assert result["source"] == "rule_fallback" and result["reason"] == "Judge unavailable"
    assert elapsed < 2.0 and fake_judge.counts["busy"] == 1


@pytest.mark.parametrize(
    ("completion", "answer"),
    [
        ("So the result is $10^(10^10)$", "5"),  # a power tower on the fallback path
        ("a" + "\n" * 15_000 + "a", "4"),  # quadratic pre-check regex before the fix
        ("The answer is \\boxed{5}", "{10}^{10^{10}}"),
    ],
)
def test_hostile_text_with_a_failing_judge_still_returns_within_timeout(
    fake_judge, tmp_path, completion, answer
):
    with _system(fake_judge.url, tmp_path, reward_timeout=3.0, max_retries=0) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        started = time.monotonic()
        result = rs.reward("q", completion, answer, "MATH_EXPRESSIONS")
        elapsed = time.monotonic() - started
    assert result["reward"] is not None and result["source"] in ("rule", "rule_fallback")
    assert elapsed < 3.0 + 1.0


def _a_symbolic_check_that_never_ends(gold: str, pred: str) -> bool:
    while True:  # short sleeps: the asynchronous stop lands between them
        time.sleep(0.01)


@pytest.mark.parametrize("strategy", ["judge", "cascade"])
@pytest.mark.parametrize("timeout", [1.0, 2.0])
def test_a_timeout_below_the_symbolic_budget_is_honoured(fake_judge, tmp_path, monkeypatch, timeout, strategy):
    """The symbolic check is paid inside the timeout, once: the cascade's rules get a share of the
    judge's budget and the fallback what is left (before: 3.9 s and 5.5 s for timeout 1). The check
    is made endless by injection: no real expression is slow on every machine."""
    from adapter.rules import sympy_checks

    monkeypatch.setattr(sympy_checks, "equal", _a_symbolic_check_that_never_ends)
    with _system(fake_judge.url, tmp_path, reward_timeout=timeout, strategy=strategy, model="fake-judge") as rs:
        fake_judge.set_plan(FaultPlan(hang_rate=1.0))
        started = time.monotonic()
        result = rs.reward("Simplify", "The answer is $\\sin(x)\\cos(x)$", "\\sin(x)", "MATH_EXPRESSIONS")
        elapsed = time.monotonic() - started
    assert result["source"] == "rule_fallback" and "symbolic checks took longer than" in result["explanation"]
    assert elapsed < timeout + 1.0
