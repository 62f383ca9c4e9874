"""One budget per call, carried down every layer: each judgment a reward needs (its verdict, a
rubric's criteria, a group's comparisons, an agent's turns) carries the ``Budget`` its call
started with, and the layers below bound their work by it (judge_vllm/budget.py)."""

import pytest

from adapter import JudgeRewardSystem
from adapter.config import RewardConfig
from adapter.reward import judge_budget_s
from judge_vllm.testing.fake_backend import ComparingBackend

QUESTION = "What is 2 + 2?"
REWARD_TIMEOUT_S = 7.0
GROUP_DEADLINE_S = 3.0
GROUP = ["The answer is 4.", "It is 5.", "I think 3."]


def _config(tmp_path, **extra):
    # No start-up check: the tests read every request the backend gets, each a reward's.
    return {"cache_dir": str(tmp_path / "cache"), "use_cache": False, "batch_wait": 0.0, "startup_check": "off",
            "reward_timeout": REWARD_TIMEOUT_S, "judge_timeout": 5.0, **extra}  # fmt: skip


def _spans(budget):
    return budget.judge_by - budget.started, budget.answer_by - budget.started


def test_a_single_reward_judgment_carries_its_calls_budget(tmp_path):
    backend = ComparingBackend()
    config = _config(tmp_path)
    with JudgeRewardSystem(config, backend=backend) as rs:
        assert rs.reward(QUESTION, "The answer is 4.", "4")["source"] == "judge"
    (asked,) = backend.requests
    judge_s = judge_budget_s(RewardConfig.from_any(config))
    assert _spans(asked.budget) == pytest.approx((judge_s, REWARD_TIMEOUT_S))
    assert "budget" not in asked.model_dump()  # never part of what is judged, cached or logged


def test_a_rubric_items_criteria_share_one_budget(tmp_path):
    backend = ComparingBackend()
    with JudgeRewardSystem(_config(tmp_path), backend=backend) as rs:
        assert rs.reward(QUESTION, "2 + 2 = 4", rubric=["Gives a number", "Shows the sum"])["source"] == "judge"
    budgets = {id(r.budget) for r in backend.requests}
    assert len(backend.requests) == 2 and len(budgets) == 1 and None not in {r.budget for r in backend.requests}


def test_a_groups_comparisons_are_due_at_the_group_deadline(tmp_path):
    backend = ComparingBackend(preference=len)
    config = _config(tmp_path, group={"mode": "pairwise", "deadline": GROUP_DEADLINE_S})
    with JudgeRewardSystem(config, backend=backend) as rs:
        results = rs.reward_group([{"prompt": QUESTION, "completion": c, "answer": "4"} for c in GROUP])
    assert {r["source"] for r in results} == {"judge"}
    spans = {_spans(r.budget) for r in backend.comparisons}
    assert len(backend.comparisons) == 6 and len(spans) == 1
    assert spans.pop() == pytest.approx((GROUP_DEADLINE_S, GROUP_DEADLINE_S + REWARD_TIMEOUT_S))


def test_an_agents_turns_are_judged_within_the_outcomes_budget(tmp_path):
    backend = ComparingBackend()
    config = _config(tmp_path, trajectory_view="full", process={"aggregate": "mean"})
    messages = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}}]},
        {"role": "tool", "tool_call_id": "1", "content": "4"},
        {"role": "assistant", "content": "The answer is 4."},
    ]  # fmt: skip
    with JudgeRewardSystem(config, backend=backend) as rs:
        result = rs.reward(QUESTION, messages, "4")
    assert result["source"] == "judge" and result["step_scores"]
    steps = [r for r in backend.requests if r.profile == "step"]
    outcome = [r for r in backend.requests if r.profile is None]
    assert steps and len(outcome) == 1
    assert {(r.budget.started, r.budget.judge_by) for r in steps} == {(outcome[0].budget.started, outcome[0].budget.judge_by)}
