"""Group rewards through the reward system (in-process backends: plumbing and bias, never quality).

``position_biased()`` always prefers what it is shown first (pairwise "A", listwise "A>B>C..."):
asked in both orders / in every cyclic shift, it must favour nobody. ``prefers_marked()`` prefers the
response that holds more "+" signs, so the expected order of a group is known. Both are
``judge_vllm.testing.ComparingBackend``.
"""

import time

import pytest

from adapter import JudgeRewardSystem
from judge_vllm.errors import JudgeInputError
from judge_vllm.schemas import Verdict
from judge_vllm.testing.fake_backend import ComparingBackend

QUESTION = "Write a slogan for a bakery."


def position_biased() -> ComparingBackend:
    """A judge that prefers the first response shown, always."""
    return ComparingBackend()


def prefers_marked(hang_on: str | None = None) -> ComparingBackend:
    """A judge that prefers the response with more "+" in it (ties: the first shown). Members are
    words, not letters: a one-letter completion is a verdict string, which the pre-checks zero."""
    return ComparingBackend(lambda text: text.count("+"), hang_on)


def _system(tmp_path, backend, **group):
    config = {
        "startup_check": "off",  # the tests read every request the backend gets
        "use_cache": False,
        "batch_wait": 0.01,
        "reward_timeout": 5,
        "cache_dir": str(tmp_path / "c"),
        "group": group,
    }
    return JudgeRewardSystem(config, backend=backend)


def _items(*completions, answer=""):
    return [{"prompt": QUESTION, "completion": c, "answer": answer} for c in completions]


GROUP = ["Fresh every morning.", "Bread you can trust.", "Rise and shine with us.", "Crumbs of joy."]


@pytest.mark.parametrize(
    "group",
    [
        {"mode": "pairwise", "schedule": "all_pairs"},
        {"mode": "pairwise", "schedule": "all_pairs", "scoring": "win_rate"},
        {"mode": "pairwise", "schedule": "round_robin", "opponents": 1},
        {"mode": "pairwise", "schedule": "anchor", "anchor": "first"},
        {"mode": "listwise"},
    ],
    ids=["all_pairs_bt", "all_pairs_win_rate", "round_robin", "anchor_first", "listwise"],
)
def test_a_judge_that_always_prefers_the_first_shown_favours_nobody(tmp_path, group):
    with _system(tmp_path, position_biased(), **group) as rs:
        results = rs.reward_group(_items(*GROUP))
    rewards = [r["reward"] for r in results]
    assert all(r["source"] == "judge" and r["reason"] == group["mode"] for r in results)
    assert rewards == pytest.approx([rewards[0]] * len(GROUP))


def test_identical_members_ranked_listwise_get_equal_rewards_whatever_permutations_says(tmp_path):
    """Issue 41: with fewer orders than members the position leaked: four identical members
    earned 0.5/0.83/0.5/0.17 from a judge that ranks them as shown, with permutations: 2."""
    backend = position_biased()
    with (
        pytest.warns(FutureWarning, match="group.permutations is ignored"),
        _system(tmp_path, backend, mode="listwise", permutations=2) as rs,
    ):
        results = rs.reward_group(_items(*["Fresh every morning."] * 4))
    assert [r["reward"] for r in results] == pytest.approx([0.5] * 4)
    assert sorted(tuple(c["shown"]) for c in results[0]["comparisons"]) == [
        (0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)
    ]  # fmt: skip


def test_one_order_only_would_have_favoured_the_first_shown(tmp_path):
    """The check above can fail: without the second order, the biased judge's favourite wins."""
    from adapter.groups import Comparison, bradley_terry, pair_preferences

    one_order = [Comparison(first=i, second=j, p_first=1.0) for i in range(4) for j in range(i + 1, 4)]
    scores = bradley_terry(4, pair_preferences(one_order))
    assert scores[0] > scores[3] + 0.3


@pytest.mark.parametrize(
    "group",
    [
        {"mode": "pairwise"},
        {"mode": "pairwise", "schedule": "round_robin", "opponents": 2},
        {"mode": "pairwise", "scoring": "win_rate"},
        {"mode": "listwise"},
    ],
)
def test_members_are_ordered_by_what_the_judge_prefers(tmp_path, group):
    completions = ["ok +", "best +++", "poor", "good ++"]
    with _system(tmp_path, prefers_marked(), **group) as rs:
        rewards = [r["reward"] for r in rs.reward_group(_items(*completions))]
    assert rewards[1] > rewards[3] > rewards[0] > rewards[2]
    assert all(0.0 <= r <= 1.0 for r in rewards)


def test_pairwise_asks_every_pair_in_both_orders_and_lists_each_members_comparisons(tmp_path):
    backend = prefers_marked()
    with _system(tmp_path, backend, mode="pairwise") as rs:
        results = rs.reward_group(_items("first +", "second", "third ++"))
    shown = sorted(tuple(r.responses) for r in backend.requests)
    assert len(backend.requests) == 6 and len(set(shown)) == 6
    member_1 = results[1]["comparisons"]
    assert sorted(tuple(c["shown"]) for c in member_1) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert all(c["p_first"] in (0.0, 1.0) and c["source"] == "judge" for c in member_1)


def test_anchor_on_the_reference_shows_it_as_a_response_not_as_the_key(tmp_path):
    backend = prefers_marked()
    with _system(tmp_path, backend, mode="pairwise", schedule="anchor") as rs:
        results = rs.reward_group(_items("x ++", "y", answer="ref +"))
    assert len(backend.requests) == 4  # 2n
    assert all(r.answer == "" and "ref +" in r.responses for r in backend.requests)
    assert results[0]["reward"] > results[1]["reward"]
    assert {tuple(c["shown"]) for c in results[0]["comparisons"]} == {(0, -1), (-1, 0)}


def test_the_reference_is_shown_with_the_question_when_members_meet_each_other(tmp_path):
    backend = position_biased()
    with _system(tmp_path, backend, mode="listwise") as rs:
        rs.reward_group(_items("one", "two", "three", answer="42"))
    assert {r.answer for r in backend.requests} == {"42"} and len(backend.requests) == 3


def test_a_hanging_comparison_costs_at_most_the_deadline_and_every_member_is_rewarded(tmp_path):
    backend = prefers_marked(hang_on="hang")
    config = {
        "use_cache": False,
        "batch_wait": 0.0,
        "max_batch_size": 1,
        "reward_timeout": 2,
        "cache_dir": str(tmp_path / "c"),
        "group": {"mode": "pairwise", "deadline": 1.0},
    }
    with JudgeRewardSystem(config, backend=backend) as rs:
        started = time.monotonic()
        results = rs.reward_group(_items("a +", "b ++", "hang"))
        elapsed = time.monotonic() - started
    assert elapsed < 1.0 + 2 + 1.0  # the deadline plus one timeout (and scheduling slack)
    assert [r["source"] for r in results[:2]] == ["judge", "judge"]
    assert results[1]["reward"] > results[0]["reward"]
    assert results[2]["source"] == "rule_fallback" and results[2]["reward"] is not None
    assert "group deadline" in results[2]["error"] or "could be judged" in results[2]["error"]


def test_members_decided_by_a_precheck_are_not_compared(tmp_path):
    backend = position_biased()
    with _system(tmp_path, backend, mode="pairwise") as rs:
        results = rs.reward_group(_items("Fresh bread.", "", "Warm loaves."))
    assert results[1]["source"] == "rule" and results[1]["reward"] == 0.0
    assert all("" not in r.responses for r in backend.requests) and len(backend.requests) == 2


def test_cascade_members_the_rule_proves_are_not_compared_unless_asked(tmp_path):
    items = [{"prompt": "2+2?", "completion": c, "answer": "4", "answer_type": "NUMBER"} for c in
             ("The answer is 4.", "The answer is 5.", "Four, I think, or maybe five", "I would say four")]  # fmt: skip
    backend = position_biased()
    config = {"use_cache": False, "reward_timeout": 5, "strategy": "cascade", "group": {"mode": "pairwise"},
              "startup_check": "off"}  # fmt: skip
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = rs.reward_group(items)
    assert [r["source"] for r in results[:2]] == ["rule", "rule"] and results[0]["reward"] == 1.0
    # The two the rule was unsure of, each judged alone: the rule decided others, so no comparison.
    assert len(backend.requests) == 2 and backend.comparisons == []


def test_compare_decided_compares_the_members_the_rule_proves_right_with_those_judged_right(tmp_path):
    """Issue 41: compare_decided compared every member on the relative scale, so a hedge could
    out-earn the member the rule proves wrong. Now the rule proves "4." right and "5." wrong, the
    judge finds "I would say four" right and the hedge wrong, and only the two right are compared."""
    completions = ["The answer is 4.", "The answer is 5.", "Four, I think, or maybe five", "I would say four"]
    items = [{"prompt": "2+2?", "completion": c, "answer": "4", "answer_type": "NUMBER"} for c in completions]
    backend = FairJudge({"I would say four"})  # of the two right ones, it prefers the words
    group = {"mode": "pairwise", "compare_decided": True}
    config = {"use_cache": False, "reward_timeout": 5, "strategy": "cascade", "group": group,
              "startup_check": "off"}  # the backend's calls are counted
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = rs.reward_group(items)
    assert len([r for r in backend.requests if not r.responses]) == 2  # the two the rule is unsure of
    assert sorted(tuple(c.responses) for c in backend.comparisons) == [
        ("I would say four", "The answer is 4."), ("The answer is 4.", "I would say four")
    ]  # fmt: skip
    assert [(r["source"], r["reward"]) for r in results[1:3]] == [("rule", 0.0), ("judge", 0.0)]
    assert results[3]["reward"] > results[0]["reward"] >= 0.5  # right by rule, lowered by at most half
    assert [r["reason"] for r in (results[0], results[3])] == ["pairwise", "pairwise"]
    assert results[0]["explanation"].startswith("decided by rule")


class FairJudge(ComparingBackend):
    """A fair judge of "What is 6*7?": alone, a completion is right when it is in ``right``; of two,
    the right one is better (two equally right or wrong tie: both orders cancel out)."""

    def __init__(self, right: set[str]) -> None:
        super().__init__(lambda text: float(text in right))
        self.right = right

    def _judge(self, request):
        if request.responses:
            return super()._judge(request)
        right = request.completion in self.right
        return Verdict(score=1.0 if right else 0.0, label="right" if right else "wrong")


SIX_SEVENS = ["42", "41", "41 or 42", r"\boxed{41} \boxed{42}", "Maybe 41, maybe 42.", "Just kidding, it's 41",
              "Six sevens make forty-two."]  # fmt: skip
WORDS_RIGHT = "Six sevens make forty-two."


def _six_sevens(*completions):
    return [
        {"prompt": "What is 6*7?", "completion": c, "answer": "42", "answer_type": "NUMBER"}
        for c in completions
    ]


def test_under_the_cascade_an_unsure_member_never_out_earns_a_plainly_wrong_one_unless_judged_right(tmp_path):
    """Issue 33: compared only among themselves, hedges earned 0.5 each next to a plain wrong 0."""
    backend = FairJudge({WORDS_RIGHT})
    config = {"use_cache": False, "reward_timeout": 5, "strategy": "cascade", "group": {"mode": "pairwise"},
              "startup_check": "off"}  # fmt: skip  # the backend's calls are counted
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = dict(zip(SIX_SEVENS, rs.reward_group(_six_sevens(*SIX_SEVENS)), strict=True))
    assert (results["42"]["source"], results["42"]["reward"]) == ("rule", 1.0)
    assert (results["41"]["source"], results["41"]["reward"]) == ("rule", 0.0)
    unsure = {c: r for c, r in results.items() if r["source"] != "rule"}
    assert len(unsure) >= 2  # the hedges the rule cannot settle; else this test checks nothing
    for completion, result in unsure.items():
        judged = 1.0 if completion == WORDS_RIGHT else results["41"]["reward"]
        assert (completion, result["reward"], result["comparisons"]) == (completion, judged, None)


RIGHT_DIGITS = "Forty-two, since 6*7 is 42 and 7*6 is too."
HEDGE = "Either 41 or 42, hard to say."
WRONG_WORDS = "I believe it's forty-one."


def test_under_the_cascade_a_group_the_rule_decides_nothing_of_compares_only_the_members_judged_right(tmp_path):
    """Each member is judged alone against the reference; those judged right are compared among
    themselves (here equals: a tie), those judged wrong keep their own judgment and meet nobody."""
    backend = FairJudge({WORDS_RIGHT, RIGHT_DIGITS})
    completions = ["41 or 42", "Maybe 41, maybe 42.", WORDS_RIGHT, RIGHT_DIGITS]
    config = {"use_cache": False, "reward_timeout": 5, "strategy": "cascade", "group": {"mode": "pairwise"},
              "startup_check": "off"}  # fmt: skip  # the backend's calls are counted
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = rs.reward_group(_six_sevens(*completions))
    assert all(r["source"] == "judge" for r in results)  # the rule decided none of them
    assert len([r for r in backend.requests if not r.responses]) == 4  # each judged alone, once
    assert sorted(tuple(c.responses) for c in backend.comparisons) == [
        (RIGHT_DIGITS, WORDS_RIGHT), (WORDS_RIGHT, RIGHT_DIGITS)
    ]  # fmt: skip
    assert [(r["reward"], r["comparisons"]) for r in results[:2]] == [(0.0, None), (0.0, None)]
    for result in results[2:]:  # right, tied with the other right one: 1 x (1 - 0.5 x (1 - 0.5))
        assert (result["reward"], result["reason"]) == (pytest.approx(0.75), "pairwise")
        assert {tuple(c["shown"]) for c in result["comparisons"]} == {(2, 3), (3, 2)}


class HedgeFooledJudge(ComparingBackend):
    """Alone, a fair judge of "What is 6*7?" (right when the completion is in ``right``); comparing,
    a judge a hedge can fool: it prefers whichever response writes the digits "42"."""

    def __init__(self, right: set[str], ranks: bool) -> None:
        super().__init__(lambda text: float("42" in text), ranks=ranks)
        self.right = right

    def _judge(self, request):
        if request.responses:
            return super()._judge(request)
        right = request.completion in self.right
        return Verdict(score=1.0 if right else 0.0, label="right" if right else "wrong")


@pytest.mark.parametrize("mode", ["pairwise", "listwise"])
def test_where_the_rule_decides_no_member_a_hedge_earns_no_more_than_a_wrong_answer(tmp_path, mode):
    """Issue 41: compared among themselves, "Either 41 or 42, hard to say." earned 0.57 (pairwise)
    and 0.67 (listwise) beside "I believe it's forty-one."'s 0.30 and 0.0, and more than a right
    answer in words, though no judgment ever called it right."""
    completions = [WORDS_RIGHT, HEDGE, WRONG_WORDS, RIGHT_DIGITS]
    backend = HedgeFooledJudge({WORDS_RIGHT, RIGHT_DIGITS}, ranks=mode == "listwise")
    config = {"use_cache": False, "reward_timeout": 5, "strategy": "cascade", "group": {"mode": mode}}
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = dict(zip(completions, rs.reward_group(_six_sevens(*completions)), strict=True))
    assert all(r["source"] == "judge" for r in results.values())  # the rule decided none of them
    rewards = {c: r["reward"] for c, r in results.items()}
    assert rewards[HEDGE] <= rewards[WRONG_WORDS]
    assert min(rewards[WORDS_RIGHT], rewards[RIGHT_DIGITS]) > max(rewards[HEDGE], rewards[WRONG_WORDS])
    assert rewards[RIGHT_DIGITS] > rewards[WORDS_RIGHT]  # the comparisons still order the right ones
    assert not any(HEDGE in c.responses or WRONG_WORDS in c.responses for c in backend.comparisons)


def test_a_large_group_asks_at_most_its_budget_of_comparisons_and_compares_every_member(tmp_path):
    """Issue 33: all_pairs (the default) asked n(n-1): 9,900 comparisons for 100 members."""
    backend = prefers_marked()
    completions = [f"slogan {k} " + "+" * (k % 7) for k in range(100)]
    with _system(tmp_path, backend, mode="pairwise", max_comparisons=256) as rs:
        results = rs.reward_group(_items(*completions))
    assert 200 <= len(backend.comparisons) <= 256
    assert all(r["source"] == "judge" and r["comparisons"] for r in results)
    assert results[6]["reward"] > results[0]["reward"]  # still ordered by what the judge prefers


def test_a_group_over_max_members_is_compared_in_sub_groups_and_every_reward_says_so(tmp_path):
    """Issue 41: such a group raised JudgeInputError into the trainer (TRL, verl, OpenRLHF)."""
    backend = prefers_marked()
    completions = [f"slogan {k} " + "+" * (k % 5) for k in range(10)]
    with _system(tmp_path, backend, mode="pairwise", max_members=4, max_comparisons=36) as rs:
        results = rs.reward_group(_items(*completions))
    assert len(results) == 10
    assert all(r["source"] == "judge" and r["reason"] == "pairwise_subgroup" for r in results)
    assert "sub-group 1 of 3 (4 of the 10 members compared" in results[0]["explanation"]
    # dealt in turn: members 0, 3, 6, 9 | 1, 4, 7 | 2, 5, 8; never compared across sub-groups
    part_of = {completions[k]: k % 3 for k in range(10)}
    assert all(len({part_of[r] for r in c.responses}) == 1 for c in backend.comparisons)
    assert {tuple(c["shown"]) for c in results[0]["comparisons"]} == {(0, k) for k in (3, 6, 9)} | {
        (k, 0) for k in (3, 6, 9)
    }
    assert len(backend.comparisons) == 12 + 6 + 6  # all pairs of each: within the shared 36
    rewards = [r["reward"] for r in results]
    assert rewards[9] > rewards[3] > rewards[6] > rewards[0]  # "+" 4, 3, 1, 0: ordered within its sub-group


def test_a_group_of_one_is_judged_on_its_own(tmp_path):
    from judge_vllm.testing.fake_backend import FakeBackend

    with _system(tmp_path, FakeBackend(), mode="pairwise") as rs:
        (result,) = rs.reward_group([{"prompt": "2+2?", "completion": "4", "answer": "4"}])
    assert result["source"] == "judge" and result["comparisons"] is None


def test_pointwise_mode_is_reward_batch(tmp_path):
    from judge_vllm.testing.fake_backend import FakeBackend

    items = [{"prompt": "2+2?", "completion": c, "answer": "4"} for c in ("4", "5")]
    with _system(tmp_path, FakeBackend(), mode="pointwise") as rs:
        assert [r["reward"] for r in rs.reward_group(items)] == [1.0, 0.0]


def test_members_of_different_prompts_are_refused_with_the_item_named(tmp_path):
    with (
        _system(tmp_path, position_biased()) as rs,
        pytest.raises(JudgeInputError, match="item 1 has another prompt"),
    ):
        rs.reward_group([{"prompt": "a", "completion": "x"}, {"prompt": "b", "completion": "y"}])


def test_a_group_too_large_to_rank_is_judged_pointwise_not_refused(tmp_path, caplog):
    backend = position_biased()
    with _system(tmp_path, backend, mode="listwise") as rs:
        results = rs.reward_group(_items(*(f"slogan {k}" for k in range(17)), answer="slogan"))
    assert len(results) == 17 and all(r["source"] == "judge" and r["comparisons"] is None for r in results)
    assert not any(r.responses for r in backend.requests)  # no ranking was asked
    assert "listwise ranks at most 16" in caplog.text


def test_comparisons_are_cached_by_the_order_shown(tmp_path):
    backend = position_biased()
    config = {"cache_dir": str(tmp_path / "c"), "reward_timeout": 5, "group": {"mode": "pairwise"},
              "startup_check": "off"}  # fmt: skip
    with JudgeRewardSystem(config, backend=backend) as rs:
        first = rs.reward_group(_items("one", "two"))
    with JudgeRewardSystem(config, backend=backend) as rs:
        second = rs.reward_group(_items("one", "two"))
    assert len(backend.requests) == 2  # (a, b) and (b, a): two keys, each asked once
    assert {c["source"] for c in second[0]["comparisons"]} == {"cache"}
    assert [r["reward"] for r in first] == [r["reward"] for r in second]


async def test_the_async_api_scores_groups_too(tmp_path):
    with _system(tmp_path, prefers_marked(), mode="listwise") as rs:
        results = await rs.areward_group(_items("one +", "two +++", "three ++"))
    assert [r["reward"] for r in results] == [0.0, 1.0, 0.5]
