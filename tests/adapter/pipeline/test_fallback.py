"""The rule fallback: what answers when the judge did not."""

import pytest

from adapter.pipeline import fallback as fallback_module
from adapter.pipeline.fallback import RuleFallback
from adapter.rules import RuleSettings
from judge_vllm.errors import JudgeTimeoutError
from judge_vllm.schemas import JudgeRequest
from judge_vllm.testing.ports import free_port

REQUEST = JudgeRequest(prompt="2+2?", completion="The answer is 4.", answer="4", answer_type="NUMBER")


def test_with_time_left_the_rule_grades():
    decided = RuleFallback(RuleSettings(), enabled=True).decide(REQUEST, JudgeTimeoutError("slow"), 1.0)
    assert (decided.reward, decided.source, decided.reason) == (1.0, "rule_fallback", "Timeout waiting for results")


@pytest.mark.parametrize("time_left_s", [0.0, -3.0])
def test_past_the_timeout_the_unsure_reward_comes_at_once_without_grading(monkeypatch, time_left_s):
    def never(*args, **kwargs):
        raise AssertionError("graded past the reward's timeout")

    monkeypatch.setattr(fallback_module, "grade", never)
    settings = RuleSettings(unsure_reward=0.25)
    decided = RuleFallback(settings, enabled=True).decide(REQUEST, JudgeTimeoutError("slow"), time_left_s)
    assert (decided.reward, decided.source) == (0.25, "rule_fallback")
    assert "no time left to grade by rule" in decided.explanation


def test_with_fallback_off_no_rule_fallback_is_logged(caplog):
    caplog.set_level("WARNING", logger="JudgeReward")
    decided = RuleFallback(RuleSettings(), enabled=False).decide(REQUEST, JudgeTimeoutError("slow"))
    assert (decided.reward, decided.source) == (None, "error")
    (line,) = [r.getMessage() for r in caplog.records]
    assert "rule fallback" not in line and "no reward" in line and "#1 for 'Timeout waiting for results'" in line


@pytest.mark.parametrize(
    ("count", "reported"), [(1, True), (2, False), (9, False), (10, True), (100, True), (101, False), (2000, True)]
)
def test_a_repeated_warning_is_reported_at_1_10_100_and_every_1000(count, reported):
    from adapter.observability.repeats import is_reported

    assert is_reported(count) is reported


def test_a_dead_judge_is_one_warning_with_its_cause_and_judge_unavailable(tmp_path, caplog):
    """The port closed, fallback off: each reward says the judge is unavailable (not a timeout),
    the failed model discovery is one line with its cause, and no rule fallback is claimed."""
    from adapter import JudgeRewardSystem

    port = free_port()  # a port nobody listens on
    caplog.set_level("DEBUG", logger="JudgeReward")
    # No start-up check: the judge is dead from the first reward on.
    config = {"judge_url": f"http://127.0.0.1:{port}", "fallback_to_rule": False, "cache_dir": str(tmp_path),
              "reward_timeout": 2.0, "max_retries": 20, "circuit_breaker_threshold": 100,
              "startup_check": "off"}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        rewards = [rs.reward("What is 2+2?", f"The answer is {i}.", "4", "NUMBER") for i in range(4)]
    assert [(r["source"], r["reason"]) for r in rewards] == [("error", "Judge unavailable")] * 4
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    discovery = [w for w in warnings if "not discovered" in w]
    assert len(discovery) == 1 and "cannot connect to the judge server" in discovery[0], warnings
    assert not [w for w in warnings if "rule fallback" in w]


def test_the_fallback_warning_names_the_judge_it_cannot_reach_and_how_to_check_it(tmp_path, caplog):
    from adapter import JudgeRewardSystem

    port = free_port()  # a port nobody listens on
    caplog.set_level("WARNING", logger="JudgeReward")
    config = {"judge_url": f"http://alice:pw-warning-3391@127.0.0.1:{port}", "cache_dir": str(tmp_path),
              "reward_timeout": 2.0, "max_retries": 0, "model": "m", "startup_check": "off"}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        result = rs.reward("What is 2+2?", "The answer is 5.", "4", "NUMBER")
    assert (result["source"], result["reason"]) == ("rule_fallback", "Judge unavailable")
    (line,) = [r.getMessage() for r in caplog.records if "rule fallback #1" in r.getMessage()]
    url = f"http://***@127.0.0.1:{port}"
    assert f"cannot connect to the judge server at {url}: " in line
    assert line.endswith(f"check: judge-vllm health --url {url}") and "pw-warning-3391" not in line
