"""``python -m eval.bench_group_size``: one group and a concurrent single reward, against the fake."""

from eval.bench_group_size import group_items, one_group
from judge_vllm.testing.fake_server import FakeJudgeServer


def test_a_row_counts_what_the_fake_judged_for_the_group_and_where_the_rewards_came_from():
    with FakeJudgeServer() as judge:
        row = one_group(judge.url, 6, 5.0, {"mode": "pairwise"})
    assert row["judged"] == 30  # all pairs of 6, both orders
    assert row["group_sources"] == {"judge": 6} and row["single_source"] == "judge"
    assert row["group_reasons"] == {"pairwise": 6} and row["peak_rss_mb"] > 0


def test_a_group_over_the_size_limit_is_compared_in_sub_groups_within_the_budget():
    """Issue 41: such a group was refused (JudgeInputError) with nothing judged."""
    with FakeJudgeServer() as judge:
        row = one_group(judge.url, 6, 5.0, {"mode": "pairwise", "max_members": 4, "max_comparisons": 8})
    assert row["group_sources"] == {"judge": 6} and row["group_reasons"] == {"pairwise_subgroup": 6}
    assert row["judged"] == 2 * 6  # two sub-groups of 3, each a cycle in both orders


def test_the_group_is_one_prompt_with_some_members_right():
    items = group_items(10)
    assert {i["prompt"] for i in items} == {items[0]["prompt"]} and sum("42." in i["completion"] for i in items) == 2
