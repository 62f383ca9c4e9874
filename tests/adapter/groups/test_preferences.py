"""Group scores from comparisons: position bias cancels, Bradley-Terry recovers known strengths."""

import pytest

from adapter.groups import (
    Comparison,
    all_pairs,
    anchored,
    bradley_terry,
    cyclic_shifts,
    listwise_scores,
    pair_preferences,
    round_robin,
    subgroups,
    win_rates,
    within_budget,
)
from adapter.settings import GroupSettings


def _judged(pairs, prefers):
    """Comparisons from a judge given as ``prefers(first, second) -> P(first better)``."""
    return [Comparison(first=i, second=j, p_first=prefers(i, j)) for i, j in pairs]


@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize(
    "schedule", [all_pairs, lambda n: round_robin(n, 2), anchored, lambda n: anchored(n, 0)],
    ids=["all_pairs", "round_robin", "anchor-reference", "anchor-member"],
)  # fmt: skip
def test_a_judge_that_always_prefers_the_first_shown_gives_every_member_the_same_reward(n, schedule):
    preferences = pair_preferences(_judged(schedule(n), lambda i, j: 1.0))
    assert set(preferences.values()) == {0.5}  # every pair a tie
    for scores in (win_rates(n, preferences), bradley_terry(n, preferences)):
        assert [s for s in scores if s is not None] == pytest.approx(
            [0.5] * sum(s is not None for s in scores)
        )


def test_a_listwise_judge_that_returns_the_order_shown_gives_every_member_the_same_reward():
    shown = cyclic_shifts(5)
    assert listwise_scores(5, shown) == pytest.approx([0.5] * 5)


def test_each_position_is_held_once_by_every_member_over_the_cyclic_shifts():
    orders = cyclic_shifts(4)
    assert all(sorted(order[p] for order in orders) == [0, 1, 2, 3] for p in range(4))


def test_two_disagreeing_verdicts_on_one_pair_are_a_tie_and_agreeing_ones_a_win():
    comparisons = _judged([(0, 1), (1, 0), (0, 2), (2, 0)], lambda i, j: 1.0 if i == 0 else 0.0)
    comparisons += _judged([(1, 2), (2, 1)], lambda i, j: 1.0)  # 1 vs 2: position bias only
    assert pair_preferences(comparisons) == {(0, 1): 1.0, (0, 2): 1.0, (1, 2): 0.5}


def test_bradley_terry_recovers_known_strengths_without_prior_ties():
    strengths = [4.0, 2.0, 1.0]  # geometric mean 2
    comparisons = _judged(all_pairs(3), lambda i, j: strengths[i] / (strengths[i] + strengths[j]))
    fitted = bradley_terry(3, pair_preferences(comparisons), prior_ties=0.0)
    assert fitted == pytest.approx([4 / 6, 2 / 4, 1 / 3], abs=1e-6)


def test_bradley_terry_keeps_a_clean_sweep_finite_and_orders_the_rest():
    order = [3, 1, 0, 2]  # 3 beats everyone, then 1, 0, 2
    rank = {member: k for k, member in enumerate(order)}
    comparisons = _judged(all_pairs(4), lambda i, j: 1.0 if rank[i] < rank[j] else 0.0)
    fitted = bradley_terry(4, pair_preferences(comparisons))
    assert all(0.0 < s < 1.0 for s in fitted)
    assert sorted(range(4), key=lambda m: -fitted[m]) == order
    assert win_rates(4, pair_preferences(comparisons)) == pytest.approx([1 / 3, 2 / 3, 0.0, 1.0])


def test_the_reference_is_an_opponent_not_a_member():
    comparisons = _judged(anchored(3), lambda i, j: 1.0 if i == 0 or j == 2 else 0.0)
    assert win_rates(3, pair_preferences(comparisons)) == [1.0, 0.5, 0.0]
    assert len(bradley_terry(3, pair_preferences(comparisons))) == 3


def test_members_no_comparison_reached_get_none():
    comparisons = _judged([(0, 1), (1, 0)], lambda i, j: 1.0 if i == 0 else 0.0)
    assert win_rates(3, pair_preferences(comparisons)) == [1.0, 0.0, None]
    assert bradley_terry(3, pair_preferences(comparisons))[2] is None
    assert listwise_scores(3, [[1, 0]]) == [0.5, 1.0, None]
    assert bradley_terry(2, {}) == [None, None]


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (all_pairs(8), 56),
        (round_robin(8, 2), 32),
        (round_robin(4, 9), 12),
        (anchored(8), 16),
        (anchored(8, 0), 14),
    ],
    ids=["all_pairs-8", "round_robin-8x2", "round_robin-capped", "anchor-reference-8", "anchor-member-8"],
)
def test_schedules_ask_each_pair_in_both_orders_and_cost_what_the_docs_say(pairs, expected):
    assert len(pairs) == expected == len(set(pairs))
    assert all((j, i) in pairs for i, j in pairs)


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: round_robin(4, 0), "at least 1"), (lambda: anchored(3, 5), "not a member"), (lambda: cyclic_shifts(3, 4), "1 to 3")],
    ids=["no-opponents", "anchor-outside", "too-many-shifts"],
)  # fmt: skip
def test_impossible_schedules_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("n", "pairs", "budget", "expected"),
    [
        (16, all_pairs(16), 256, 240),  # fits: unchanged
        (17, all_pairs(17), 256, 238),  # 272 > 256: round_robin, 7 opponents
        (128, all_pairs(128), 256, 256),  # 16,256 > 256: one opponent each
        (40, round_robin(40, 8), 256, 240),  # 8 opponents -> 3
        (100, anchored(100), 256, 200),  # 2n fits
    ],
    ids=["all_pairs-16-fits", "all_pairs-17", "all_pairs-128", "round_robin-fewer", "anchor-fits"],
)
def test_a_schedule_over_the_budget_asks_round_robin_within_it_and_still_compares_every_member(
    n, pairs, budget, expected
):
    budgeted = within_budget(n, pairs, budget)
    assert len(budgeted) == expected <= budget
    assert set(budgeted) == {(j, i) for i, j in budgeted}  # both orders
    assert {k for pair in budgeted for k in pair} >= set(range(n))
    if len(pairs) <= budget:
        assert budgeted == pairs


def test_the_budget_must_let_the_largest_group_compare_each_member_once():
    with pytest.raises(ValueError, match=r"max_comparisons \(256\) .* at least 400"):
        GroupSettings(max_members=200)
    assert GroupSettings(max_members=200, max_comparisons=400).too_large(201) is not None
    assert GroupSettings().too_large(128) is None and "max_members (128)" in (GroupSettings().too_large(129) or "")
    assert GroupSettings(mode="pointwise").too_large(10_000) is None  # judged alone: nothing compared


@pytest.mark.parametrize(
    ("n", "max_members", "expected"),
    [
        (4, 4, [[0, 1, 2, 3]]),
        (5, 4, [[0, 2, 4], [1, 3]]),
        (10, 4, [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]),
        (3, 2, [[0, 2], [1]]),  # a sub-group of one: judged alone
        (0, 4, []),
    ],
)
def test_a_group_over_max_members_is_dealt_into_the_fewest_sub_groups_that_fit(n, max_members, expected):
    assert subgroups(n, max_members) == expected


def test_two_blocks_of_one_prompt_are_spread_over_both_sub_groups():
    """TRL with a prompt twice in one batch: 65 + 65 completions of one prompt, in two blocks."""
    parts = subgroups(130, 128)
    assert [len(p) for p in parts] == [65, 65]
    assert all(sum(k < 65 for k in part) in (32, 33) for part in parts)
