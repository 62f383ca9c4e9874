"""``python -m eval.bench_group_size``: one group and a concurrent single reward, against the fake."""

from eval.bench_group_size import group_items, one_group
from judge_vllm.testing.fake_server import FakeJudgeServer


def test_a_row_counts_what_the_fake_judged_for_the_group_and_where_the_rewards_came_from():
    with FakeJudgeServer() as judge:
        row = one_group(judge.url, 6, 5.0, {"mode": "pairwise"})
    assert row["judged"] == 30  # all pairs of 6, both orders
    assert row["group_sources"] == {"judge": 6} and row["single_source"] == "judge"
    assert "refused" not in row and row["peak_rss_mb"] > 0


def test_a_group_over_the_size_limit_is_a_refused_row_with_nothing_judged():
    with FakeJudgeServer() as judge:
        row = one_group(judge.url, 6, 5.0, {"mode": "pairwise", "max_members": 4, "max_comparisons": 8})
    assert "max_members (4)" in row["refused"] and row["judged"] == 0


def test_the_group_is_one_prompt_with_some_members_right():
    items = group_items(10)
    assert {i["prompt"] for i in items} == {items[0]["prompt"]} and sum("42." in i["completion"] for i in items) == 2
