"""One judge seam: a reward system's single rewards, group comparisons and rubric criteria all go
through its one loop thread, cache, dispatcher and breaker (issue: nested reward systems)."""

import threading
import time

import pytest

from adapter import JudgeRewardSystem
from adapter.reward import FACADE_GRACE_S
from judge_vllm.testing.fake_server import FaultPlan

QUESTION = "What is 2 + 2?"
GROUP = ["The answer is 4.", "It is 5.", "I think 3."]
CRITERIA = ["Gives a number", "Shows the sum"]


def _config(url, tmp_path, **extra):
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.0,
            "group": {"mode": "pairwise"}, **extra}  # fmt: skip


def _named(prefix: str) -> int:
    return sum(t.name.startswith(prefix) for t in threading.enumerate())


def _score_all_three(rs):
    item = rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")
    group = rs.reward_group([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
    rubric = rs.reward(QUESTION, "2 + 2 = 4, so 4.", rubric=CRITERIA)
    return item, group, rubric


def test_an_item_a_group_and_a_rubric_item_run_on_one_loop_thread_and_one_cache_writer(fake_judge, tmp_path):
    loops, writers = _named("judge-reward-loop"), _named("verdict-cache-writer")
    with JudgeRewardSystem(_config(fake_judge.url, tmp_path)) as rs:
        item, group, rubric = _score_all_three(rs)
        assert (_named("judge-reward-loop") - loops, _named("verdict-cache-writer") - writers) == (1, 1)
        metrics = rs.get_metrics()
    assert item["source"] == "judge" and {r["source"] for r in group} == {"judge"} and rubric["source"] == "judge"
    comparisons = len(GROUP) * (len(GROUP) - 1)  # all_pairs, both orders
    assert metrics["judged_items"] == 1 + comparisons + len(CRITERIA)  # every judgment, in one place


@pytest.mark.parametrize("kind", ["ensemble", "escalation"])
def test_an_ensemble_or_an_escalation_runs_one_loop_thread_and_one_cache_writer(fake_judge, tmp_path, kind):
    """Their judges are backends of one reward system, not reward systems of their own."""
    from adapter import create_judge_reward

    other = fake_judge.url.replace("127.0.0.1", "localhost")
    extra = (
        {"judge_urls": [fake_judge.url, other]}
        if kind == "ensemble"
        else {"escalation_band": [0.0, 1.0], "escalate_to": {"judge_url": other, "cache_dir": str(tmp_path / "2")}}
    )
    loops, writers = _named("judge-reward-loop"), _named("verdict-cache-writer")
    with create_judge_reward(_config(fake_judge.url, tmp_path, **extra)) as judge:
        item, group, rubric = _score_all_three(judge)
        assert (_named("judge-reward-loop") - loops, _named("verdict-cache-writer") - writers) == (1, 1)
        metrics = judge.get_metrics()
    assert item["source"] == "judge" and {r["source"] for r in group} == {"judge"} and rubric["source"] == "judge"
    assert len(item["judge_scores"]) == 2 and set(metrics["judges"]) == set(item["judge_scores"])
    assert (_named("judge-reward-loop"), _named("verdict-cache-writer")) == (loops, writers)  # closed


def test_the_judgments_of_a_group_and_a_rubric_are_cached_like_single_rewards(fake_judge, tmp_path):
    with JudgeRewardSystem(_config(fake_judge.url, tmp_path)) as rs:
        first = _score_all_three(rs)
        asked = sum(fake_judge.judged_prompts.values())
        again = _score_all_three(rs)
    assert sum(fake_judge.judged_prompts.values()) == asked  # nothing asked twice
    assert [r["reward"] for r in again[1]] == [r["reward"] for r in first[1]]
    assert again[2]["reward"] == first[2]["reward"] and again[0]["source"] == "cache"


def test_a_judge_outage_seen_by_a_group_opens_the_breaker_that_rubrics_and_items_then_see(fake_judge, tmp_path):
    config = _config(fake_judge.url, tmp_path, max_retries=0, circuit_breaker_threshold=1, use_cache=False)
    with JudgeRewardSystem(config) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))  # the judge goes down after the start
        group = rs.reward_group([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
        assert rs.get_metrics()["circuit_breaker"]["state"] == "open"
        calls = fake_judge.counts["error"]
        rubric = rs.reward(QUESTION, "2 + 2 = 4, so 4.", rubric=CRITERIA)
        item = rs.reward(QUESTION, "It is 4.", "4", "NUMBER")
    assert {r["source"] for r in group} == {"rule_fallback"}
    assert fake_judge.counts["error"] == calls  # the open breaker kept both from the server
    assert rubric["source"] == "rule_fallback" and "Circuit breaker open" in rubric["error"]
    assert item["source"] == "rule_fallback" and item["reason"] == "Circuit breaker open"


def test_an_ensemble_judges_the_parts_of_groups_and_rubrics_with_its_first_judge_that_answers(fake_judge, tmp_path):
    from adapter import create_judge_reward
    from judge_vllm.testing.fake_server import FakeJudgeServer

    with FakeJudgeServer(FaultPlan(error_rate=1.0)) as down:
        config = _config(down.url, tmp_path, judge_urls=[down.url, fake_judge.url], max_retries=0)
        with create_judge_reward(config) as ensemble:
            group = ensemble.reward_group([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
            rubric = ensemble.reward(QUESTION, "2 + 2 = 4, so 4.", rubric=CRITERIA)
    assert {r["source"] for r in group} == {"judge"} and rubric["source"] == "judge"
    assert down.counts["error"] > 0  # asked first, failed, and the next judge answered


async def _hold_the_loop(seconds: float) -> None:
    time.sleep(seconds)  # blocks the loop thread, as a stuck callback would


@pytest.mark.parametrize("call", ["rubric", "group", "batch"])
def test_a_stuck_loop_holds_no_rubric_group_or_batch_call_past_its_timeout(fake_judge, tmp_path, call):
    """The sync rubric, group and batch calls wait for the loop thread a bounded time, as a single
    reward does; then each item's reward is made in the caller's thread."""
    config = _config(fake_judge.url, tmp_path, reward_timeout=1.0, group={"mode": "pairwise", "deadline": 1.0})
    with JudgeRewardSystem(config) as rs:
        rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")  # the loop is up
        rs._loop.submit(_hold_the_loop(FACADE_GRACE_S + 4.0))
        started = time.monotonic()
        if call == "rubric":
            results = [rs.reward(QUESTION, "2 + 2 = 4, so 4.", rubric=CRITERIA)]
        elif call == "group":
            results = rs.reward_group([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
        else:
            results = rs.reward_batch([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
        elapsed = time.monotonic() - started
    waited = 1.0 + (1.0 if call == "group" else 0.0) + FACADE_GRACE_S
    assert elapsed < waited + 1.0  # not the 5 s the loop is held
    assert {r["source"] for r in results} == {"rule_fallback"}
    assert all(r["reason"] == "Timeout waiting for results" for r in results)
