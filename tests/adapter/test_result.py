"""The reward dict's TypedDict says exactly what ``RewardResult.to_dict()`` holds."""

from typing import get_type_hints

import pytest

from adapter.result import (
    AnchoredMix,
    GroupComparison,
    GroupComparisonDict,
    RewardDict,
    RewardResult,
    right_only,
)
from adapter.rules.settings import RuleVerdict
from adapter.rules.system import RuleRewardDict, RuleRewardSystem


def test_reward_dict_has_the_result_fields_in_order():
    assert list(RewardDict.__annotations__) == list(RewardResult.model_fields)
    assert list(GroupComparisonDict.__annotations__) == list(GroupComparison.model_fields)
    assert RewardDict.__required_keys__ == frozenset(RewardResult.model_fields)


def test_to_dict_is_the_model_dump_and_owns_its_values():
    result = RewardResult(
        reward=0.5,
        source="judge",
        request_id="r1",
        detailed_scores={"a": 1.0},
        judge_scores={"first": 0.5, "second": None},
        comparisons=[GroupComparison(shown=[0, 1], p_first=0.7, source="judge")],
    )
    as_dict = result.to_dict()
    assert as_dict == result.model_dump()
    assert list(as_dict) == list(result.model_dump())
    as_dict["detailed_scores"]["a"] = 0.0
    as_dict["comparisons"][0]["shown"].append(2)
    assert result.detailed_scores == {"a": 1.0}
    assert result.comparisons is not None and result.comparisons[0].shown == [0, 1]


def test_rule_reward_dict_is_the_verdict_with_its_source():
    assert set(get_type_hints(RuleRewardDict)) == {"source", *RuleVerdict.model_fields}
    reward = RuleRewardSystem().reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
    assert list(reward) == list(RuleRewardDict.__annotations__)
    assert reward["source"] == "rule" and reward["reward"] == 1.0


@pytest.mark.parametrize(
    ("alone", "score", "reward"),
    [
        (1.0, 1.0, 1.0),  # right, best of its peers: its own judgment
        (1.0, 0.0, 0.5),  # right, worst of its peers: lowered by the whole weight
        (0.8, 0.5, 0.6),  # 0.8 x (1 - 0.5 x 0.5)
        (1.0, None, 1.0),  # right, compared with nothing
        (0.4, 1.0, 0.2),  # wrong: whatever the comparisons say, 0.4 x (1 - 0.5)
        (0.4, None, 0.2),
        (0.0, 1.0, 0.0),  # a hedge judged wrong that every comparison preferred
    ],
)
def test_an_anchored_member_earns_its_own_judgment_which_comparisons_only_lower(alone, score, reward):
    mixed, explanation = AnchoredMix(score, 0.5, "compared").mixed(alone)
    assert mixed == pytest.approx(reward)
    assert explanation.startswith("anchored: judged " + ("right" if alone >= 0.5 else "wrong"))


def test_a_member_judged_right_never_earns_less_than_one_judged_wrong():
    lowest_right = min(right_only(p / 100, r / 10, 0.7) for p in range(50, 101) for r in range(11))
    highest_wrong = max(right_only(p / 100, r / 10, 0.7) for p in range(50) for r in range(11))
    assert lowest_right > highest_wrong
