"""The reward dict's TypedDict says exactly what ``RewardResult.to_dict()`` holds."""

from typing import get_type_hints

from adapter.result import GroupComparison, GroupComparisonDict, RewardDict, RewardResult
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
