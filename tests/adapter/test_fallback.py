"""The rule fallback: what answers when the judge did not."""

import pytest

from adapter.pipeline import fallback as fallback_module
from adapter.pipeline.fallback import RuleFallback
from adapter.rules import RuleSettings
from judge_vllm.errors import JudgeTimeoutError
from judge_vllm.schemas import JudgeRequest

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
