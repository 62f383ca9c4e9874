"""Every reward leaves through ``RewardFinisher.finish``: None or a finite number in [0, 1], never NaN."""

import math

import pytest

from adapter import JudgeRewardSystem
from adapter.pipeline.finish import reward_problem
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_backend import FakeBackend


class _RogueBackend(FakeBackend):
    """A user's backend that builds its verdicts unvalidated and returns ``score``."""

    def __init__(self, score: float) -> None:
        super().__init__()
        self.score = score

    def _judge(self, request: JudgeRequest) -> Verdict:
        return Verdict.model_construct(score=self.score, label="rogue", explanation="unchecked")


@pytest.mark.parametrize(
    ("reward", "allowed"),
    [
        (None, True),
        (0.0, True),
        (1.0, True),
        (0.5, True),
        (math.nan, False),
        (math.inf, False),
        (-0.1, False),
        (1.5, False),
    ],
)
def test_a_reward_may_leave_only_as_none_or_a_finite_number_in_the_unit_interval(reward, allowed):
    assert (reward_problem(reward) is None) is allowed


@pytest.mark.parametrize("score", [math.nan, math.inf, 1.5], ids=["nan", "inf", "above-one"])
@pytest.mark.parametrize(
    ("fallback", "expected"),
    [(True, (0.25, "rule_fallback")), (False, (None, "error"))],
    ids=["fallback", "no-fallback"],
)
def test_a_judged_reward_that_is_not_a_number_in_range_becomes_a_defined_outcome(
    tmp_path, score, fallback, expected
):
    config = {
        "use_cache": False, "batch_wait": 0.01, "cache_dir": str(tmp_path / "c"),
        "fallback_to_rule": fallback, "rules": {"unsure_reward": 0.25},
    }  # fmt: skip
    with JudgeRewardSystem(config, backend=_RogueBackend(score)) as rs:
        result = rs.reward("What is 2 + 2?", "The answer is 4", "4")
        metrics = rs.get_metrics()
    assert (result["reward"], result["source"], result["reason"]) == (*expected, "invalid_reward")
    assert f"reward {score!r} is not a finite number in [0, 1] (from source judge" in result["error"]
    assert result["label"] == "rogue"  # what the judge said is kept, for the audit
    assert metrics["sources"][expected[1]] == 1
