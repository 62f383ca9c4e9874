"""TRL reward functions with a ``group:`` block: each prompt's completions judged together.

GRPOTrainer passes ``num_generations`` completions per prompt, in blocks; the reward function
groups them by prompt (never by position), judges each group with ``reward_group`` and answers
in TRL's order. The judges here are in-process ``ComparingBackend``: with no preference it always prefers the
response shown first, so a fair group judgment gives every member the same reward.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapter import JudgeRewardSystem
from adapter.integrations import trl as trl_integration
from adapter.integrations.trl import async_judge_reward_func, judge_reward_func, prompt_groups
from judge_vllm.backend import JudgeBackend
from judge_vllm.errors import JudgeInputError
from judge_vllm.testing.fake_backend import ComparingBackend
from tiny_grpo import reward_step_trainer

SLOGAN = "Write a slogan for a bakery."
MOTTO = "Write a motto for a library."
# Two prompts' completions, in GRPOTrainer's blocks of num_generations (4).
QUESTIONS = [SLOGAN] * 4 + [MOTTO] * 4
GROUPS = ["Fresh daily.", "Bread you trust.", "Rise with us.", "Crumbs of joy."]
GROUPS += ["Quiet pages.", "Read more.", "Books for all.", "Stories live here."]


def marks(text: str) -> float:
    """``ComparingBackend``'s preference: the response with more "+" signs wins."""
    return float(text.count("+"))


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> dict[str, JudgeBackend]:
    """The reward functions' judge: set ``backend["judge"]`` before the first call."""
    holder: dict[str, JudgeBackend] = {}
    monkeypatch.setattr(
        trl_integration,
        "create_judge_reward",
        lambda config: JudgeRewardSystem(config, backend=holder["judge"]),
    )
    return holder


def _config(**group: Any) -> dict[str, Any]:
    # No start-up check: the tests read every request the backend gets, each a reward's.
    return {
        "use_cache": False,
        "batch_wait": 0.01,
        "reward_timeout": 5,
        "group": group,
        "startup_check": "off",
    }


def _columns(n: int) -> dict[str, Any]:
    return {"answer": [""] * n, "completion_ids": [[1]] * n, "trainer_state": object()}


@pytest.mark.parametrize(
    ("prompts", "answers", "groups"),
    [
        (["a", "b", "a", "b"], ["1", "2", "1", "2"], [[0, 2], [1, 3]]),
        (["a", "a", "a"], ["1", "1", "2"], [[0, 1], [2]]),  # one text, two references: two prompts
        # equal conversations, distinct objects (TRL fetches a prompt once per generation)
        ([[{"role": "user", "content": q}] for q in "qqr"], ["", "", ""], [[0, 1], [2]]),
    ],
    ids=["interleaved", "by_reference", "conversations"],
)
def test_prompt_groups_read_the_prompt_not_the_position(prompts, answers, groups):
    items = [
        {"prompt": trl_integration.prompt_text(p), "answer": a} for p, a in zip(prompts, answers, strict=True)
    ]
    assert prompt_groups(items) == groups


@pytest.mark.parametrize("variant", ["sync", "async"])
@pytest.mark.parametrize("group", [{"mode": "pairwise"}, {"mode": "listwise"}], ids=["pairwise", "listwise"])
def test_interleaved_prompts_are_judged_per_prompt_and_answered_in_order(backend, variant, group):
    judge = backend["judge"] = ComparingBackend(marks)
    prompts = [SLOGAN, MOTTO, SLOGAN, MOTTO, SLOGAN, MOTTO]
    completions = ["fresh +", "quiet", "warm +++", "read ++", "crumbs", "books +"]
    make = judge_reward_func if variant == "sync" else async_judge_reward_func
    func = make(_config(**group))
    try:
        called = func(prompts, completions, **_columns(6))
        rewards = asyncio.run(called) if variant == "async" else called
    finally:
        func.close()
    slogans, mottos = rewards[0::2], rewards[1::2]
    assert slogans[1] > slogans[0] > slogans[2]  # warm +++ > fresh + > crumbs
    assert mottos[1] > mottos[2] > mottos[0]  # read ++ > books + > quiet
    by_prompt = {SLOGAN: set(completions[0::2]), MOTTO: set(completions[1::2])}
    assert judge.requests and all(set(r.responses) <= by_prompt[r.prompt] for r in judge.requests)


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_a_judge_that_prefers_the_first_shown_gives_every_member_the_same_reward(backend, variant):
    backend["judge"] = ComparingBackend()
    prompts = [
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}] for q in QUESTIONS
    ]
    completions = [[{"role": "assistant", "content": c}] for c in GROUPS]
    extra: dict[str, list[Any]] = {}
    make = judge_reward_func if variant == "sync" else async_judge_reward_func
    func = make(_config(mode="pairwise"))
    try:
        called = func(prompts, completions, log_extra=extra.__setitem__, **_columns(8))
        rewards = asyncio.run(called) if variant == "async" else called
    finally:
        func.close()
    assert rewards[:4] == pytest.approx([rewards[0]] * 4) and rewards[4:] == pytest.approx([rewards[4]] * 4)
    assert extra["judge_source"] == ["judge"] * 8 and extra["judge_reason"] == ["pairwise"] * 8


def test_without_a_group_block_the_batch_is_scored_pointwise(backend, monkeypatch):
    backend["judge"] = ComparingBackend()
    for group in (None, {"mode": "pointwise"}):
        config = {**_config(), "group": group}
        func = judge_reward_func(config)
        try:
            monkeypatch.setattr(func.reward_system, "reward_group", None)  # never called
            rewards = func([SLOGAN, SLOGAN], ["Fresh daily.", "Warm loaves."], **_columns(2))
        finally:
            func.close()
        assert not func.grouped and len(rewards) == 2


@pytest.mark.parametrize(
    ("prompts", "completions", "answers", "message"),
    [
        (None, ["x"], ["1"], "prompts: expected a list"),
        (["q"], "x", ["1"], "completions: expected a list"),
        (["q", "r"], ["x"], ["1"], "prompts: 2 values for 1 completions"),
        (["q"], ["x"], [], "answer: 0 values for 1 completions"),
    ],
)
def test_a_malformed_batch_is_still_an_error_naming_the_column(
    backend, prompts, completions, answers, message
):
    backend["judge"] = ComparingBackend()
    func = judge_reward_func(_config(mode="pairwise"))
    try:
        with pytest.raises(JudgeInputError, match=message):
            func(prompts, completions, answer=answers)
    finally:
        func.close()


@pytest.mark.parametrize("variant", ["sync", "async"])
def test_trls_reward_step_rewards_130_completions_of_one_prompt(backend, tmp_path, variant):
    """Issue 41: a prompt twice in one generation batch (2 rows x 65 generations) is one group of
    130, more than group.max_members (128): TRL's reward step raised JudgeInputError. Now each
    completion gets a reward, compared in sub-groups; a judge that always prefers the first shown
    gives them all the same one."""
    judge = backend["judge"] = ComparingBackend()
    make = judge_reward_func if variant == "sync" else async_judge_reward_func
    func = make(_config(mode="pairwise"))
    extra: dict[str, list[Any]] = {}
    try:
        trainer = reward_step_trainer(func, tmp_path, [SLOGAN, SLOGAN], num_generations=65)
        trainer._log_completion_extra = extra.__setitem__
        completions = [f"Fresh loaf number {k}." for k in range(130)]
        inputs = [{"prompt": SLOGAN, "answer": ""}] * 130
        rewards = trainer._calculate_rewards(inputs, [SLOGAN] * 130, completions, [[1]] * 130)
    finally:
        func.close()
    assert rewards.shape == (130, 1) and rewards[:, 0].tolist() == pytest.approx([0.5] * 130)
    assert extra["judge_source"] == ["judge"] * 130 and extra["judge_reason"] == ["pairwise_subgroup"] * 130
    assert 0 < len(judge.comparisons) <= 2 * 130  # two sub-groups of 65 sharing max_comparisons
