"""Rubric criteria: parsing, weighted mean, veto, criteria the judge could not answer."""

import pytest

from adapter.rubrics import Criterion, parse_rubric, score_rubric
from judge_vllm.errors import JudgeInputError

RUBRIC = [
    {"criterion": "Names the drug interaction", "weight": 3},
    "Advises seeing a doctor",
    {"criterion": "Recommends no dangerous dose", "veto": True},
]


def test_plain_strings_and_mappings_become_criteria():
    assert parse_rubric(RUBRIC) == [
        Criterion(criterion="Names the drug interaction", weight=3.0),
        Criterion(criterion="Advises seeing a doctor"),
        Criterion(criterion="Recommends no dangerous dose", veto=True),
    ]


def test_the_reward_is_the_weighted_mean_of_p_yes():
    result = score_rubric(parse_rubric(RUBRIC), [1.0, 0.0, 0.8])
    assert result.reward == pytest.approx((3 * 1.0 + 0.0 + 0.8) / 5)
    assert [c.p_yes for c in result.criteria] == [1.0, 0.0, 0.8] and result.vetoed_by == []


@pytest.mark.parametrize("veto_p_yes", [0.0, 0.49])
def test_a_veto_criterion_judged_no_makes_the_reward_zero(veto_p_yes):
    result = score_rubric(parse_rubric(RUBRIC), [1.0, 1.0, veto_p_yes])
    assert result.reward == 0.0 and result.vetoed_by == ["Recommends no dangerous dose"]
    assert "vetoed" in result.explanation


def test_criteria_not_judged_are_left_out_and_said():
    result = score_rubric(parse_rubric(RUBRIC), [None, 1.0, 0.8])
    assert result.reward == pytest.approx(0.9) and "1 of 3 criteria not judged" in result.explanation
    assert score_rubric(parse_rubric(RUBRIC), [None, None, None]).reward is None


def test_a_veto_criterion_not_judged_makes_the_item_unsure_not_paid():
    result = score_rubric(parse_rubric(RUBRIC), [1.0, 1.0, None])
    assert result.reward is None and result.unjudged_vetoes == ["Recommends no dangerous dose"]
    assert result.explanation == "veto criterion 'Recommends no dangerous dose' was not judged; 1 of 3 criteria not judged"


def test_a_veto_judged_no_still_zeroes_the_reward_when_another_veto_was_not_judged():
    rubric = [*RUBRIC, {"criterion": "Cites a source", "veto": True}]
    result = score_rubric(parse_rubric(rubric), [1.0, 1.0, None, 0.0])
    assert (result.reward, result.vetoed_by) == (0.0, ["Cites a source"])


@pytest.mark.parametrize(
    ("rubric", "message"),
    [
        ("be nice", "non-empty list"),
        ([], "non-empty list"),
        ([""], r"rubric\[0\].criterion"),
        ([{"criterion": "x", "weight": 0}], r"rubric\[0\].weight"),
        ([{"criterion": "x", "color": "red"}], r"rubric\[0\].color"),
        ([42], r"rubric\[0\] must be a string or a mapping"),
        (["x"] * 65, "at most 64"),
    ],
    ids=["a-string", "empty", "empty-criterion", "zero-weight", "unknown-key", "a-number", "too-many"],
)
def test_malformed_rubrics_are_input_errors_naming_the_entry(rubric, message):
    with pytest.raises(JudgeInputError, match=message):
        parse_rubric(rubric)
