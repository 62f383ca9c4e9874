"""TRL reward functions: the calling convention of TRL's GRPOTrainer, and a real trainer run.

TRL 1.x (trl/trainer/grpo_trainer.py, ``_calculate_rewards``) calls
``reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list,
**reward_kwargs)`` with the dataset columns, ``trainer_state``, ``log_extra`` and
``log_metric`` in ``reward_kwargs``, turns ``None`` into NaN, and awaits functions that
``trl.trainer.utils.is_async_callable`` reports as async on its own event loop (TRL >= 1.14).
``log_extra(column, values)`` adds a column, one value per completion, to the completions
table (``log_completions=True`` writes it to ``<output_dir>/completions/*.parquet``).
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from trl.trainer.utils import get_callable_name, is_async_callable

from adapter import JudgeRewardSystem
from adapter.integrations import trl as trl_integration
from adapter.integrations.trl import (
    DEFAULT_NAME,
    EXTRA_COLUMNS,
    async_judge_reward_func,
    batch_metrics,
    judge_reward_func,
    message_text,
    prompt_text,
)
from judge_vllm.errors import JudgeConfigError, JudgeError, JudgeInputError
from judge_vllm.testing.fake_backend import ComparingBackend
from judge_vllm.testing.fake_server import FaultPlan
from tiny_grpo import DIALOGUES, PROMPTS, SYSTEM, completions_table, run_grpo, step_logs

REPO = Path(__file__).resolve().parents[3]
ANSWERS = ["4", "Paris"]
CONVERSATIONS = [[{"role": "user", "content": p}] for p in PROMPTS]
# How prompt_text shows DIALOGUES[i] to the judge.
TRANSCRIPTS = [f"system: {SYSTEM}\n\nuser: What is 1+1?\n\nassistant: 2\n\nuser: {p}" for p in PROMPTS]
RESPONSE = re.compile(r"<response-[0-9a-z]+>\n(.*)\n</response-", re.S)


def _config(url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return {"judge_url": url, "mode": "fast", "cache_dir": str(tmp_path / "cache"), **overrides}


class TrlKwargs:
    """What TRL passes besides prompts and completions, with the metric sinks recorded."""

    def __init__(self, **columns: list[Any]) -> None:
        self.metrics: dict[str, float] = {}
        self.extra: dict[str, list[Any]] = {}
        self.columns = columns

    def __call__(self, completions: list[Any]) -> dict[str, Any]:
        return {
            "completion_ids": [[1, 2]] * len(completions),
            "trainer_state": object(),
            "log_extra": self.extra.__setitem__,
            "log_metric": self.metrics.__setitem__,
            **self.columns,
        }


def test_public_api():
    documented = {"judge_reward_func", "async_judge_reward_func", "JudgeRewardFunc", "AsyncJudgeRewardFunc"}
    assert documented <= set(trl_integration.__all__)
    assert all(hasattr(trl_integration, name) for name in trl_integration.__all__)


@pytest.mark.parametrize(
    ("value", "role", "expected"),
    [
        ("plain text", "user", "plain text"),
        ([{"role": "user", "content": "q"}], "user", "q"),
        ([{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"}], "user", "q"),
        ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "user", "a\n\nb"),
        ([{"role": "assistant", "content": "The answer is 4."}], "assistant", "The answer is 4."),
        ([{"role": "assistant", "content": None}], "assistant", ""),
        (
            [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what?"}]}],
            "user",
            "what?",
        ),
        ([], "assistant", ""),
    ],
)
def test_message_text(value, role, expected):
    assert message_text(value, role) == expected


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("plain text", "plain text"),
        ([{"role": "user", "content": "q"}], "q"),
        (
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"}],
            "system: be brief\n\nuser: q",
        ),
        (DIALOGUES[0], TRANSCRIPTS[0]),
        (
            [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "get"}}]},
                {"role": "tool", "content": "sunny"},
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "and here?"}]},
            ],
            "user: weather?\n\nassistant: get()\n\ntool: sunny\n\nuser: and here?",  # the call shown
        ),
        ([], ""),
    ],
)
def test_prompt_text_keeps_the_conversation(prompt, expected):
    assert prompt_text(prompt) == expected


def test_batch_metrics_counts_sources_and_latency():
    results = [
        {"source": "judge", "latency_ms": 10.0},
        {"source": "cache", "latency_ms": 0.0},
        {"source": "rule_fallback", "latency_ms": 20.0},
        {"source": "error", "latency_ms": 30.0},
    ]
    assert batch_metrics(results) == {
        "judge/cache_hit_rate": 0.25,
        "judge/fallback_rate": 0.5,
        "judge/none_rate": 0.25,
        "judge/latency_ms_mean": 15.0,
    }
    assert batch_metrics([]) == {}


def test_trl_sees_a_named_sync_and_an_async_reward_function(fake_judge, tmp_path):
    sync = judge_reward_func(_config(fake_judge.url, tmp_path), name="my_judge")
    asynchronous = async_judge_reward_func(_config(fake_judge.url, tmp_path))
    try:
        assert get_callable_name(sync) == "my_judge" and not is_async_callable(sync)
        assert get_callable_name(asynchronous) == DEFAULT_NAME and is_async_callable(asynchronous)
    finally:
        sync.close()
        asynchronous.close()


@pytest.mark.parametrize("conversational", [False, True])
def test_scores_the_group_in_one_batch(fake_judge, tmp_path, conversational):
    prompts = CONVERSATIONS if conversational else PROMPTS
    right, wrong = "The answer is 4.", "I think it is 5."
    completions: list[Any] = [right, wrong, "It is Paris.", "Berlin"]
    if conversational:
        completions = [[{"role": "assistant", "content": c}] for c in completions]
    kwargs = TrlKwargs(answer=[*ANSWERS[:1] * 2, *ANSWERS[1:] * 2], answer_type=["NUMBER", "NUMBER", "", ""])
    func = judge_reward_func(_config(fake_judge.url, tmp_path))
    try:
        rewards = func(
            prompts=[*prompts[:1] * 2, *prompts[1:] * 2], completions=completions, **kwargs(completions)
        )
    finally:
        func.close()
    # The fake judge scores 5 (reward ~1) when the reference answer is in the response, else 1.
    assert [round(r, 2) for r in rewards] == [1.0, 0.0, 1.0, 0.0]
    assert fake_judge.counts["/v1/chat/completions/batch"] == 1  # the whole group, one judge call
    assert set(kwargs.extra) == set(EXTRA_COLUMNS)
    assert kwargs.extra["judge_source"] == ["judge"] * 4 and kwargs.extra["judge_reason"] == [None] * 4
    # fast mode explains with the label probabilities
    assert [e.startswith("expected reward") for e in kwargs.extra["judge_explanation"]] == [True] * 4
    assert kwargs.metrics["judge/cache_hit_rate"] == 0.0 and kwargs.metrics["judge/none_rate"] == 0.0
    assert kwargs.metrics["judge/latency_ms_mean"] > 0.0


async def test_async_variant_scores_from_any_event_loop(fake_judge, tmp_path):
    kwargs = TrlKwargs(answer=ANSWERS)
    func = async_judge_reward_func(_config(fake_judge.url, tmp_path))
    try:
        rewards = await func(prompts=PROMPTS, completions=["4", "Rome"], **kwargs(PROMPTS))
    finally:
        func.close()
    assert [round(r, 2) for r in rewards] == [1.0, 0.0]
    assert kwargs.extra["judge_source"] == ["judge", "judge"]


def test_a_multi_turn_conversation_reaches_the_judge_whole(fake_judge, tmp_path):
    """The system prompt and earlier turns go to the judge as the prompt; the completion is the new turn."""
    completions = [
        [{"role": "assistant", "content": "The answer is 4."}],
        [{"role": "assistant", "content": "Rome"}],
    ]
    kwargs = TrlKwargs(answer=ANSWERS)
    func = judge_reward_func(_config(fake_judge.url, tmp_path, startup_check="off"))  # every prompt judged
    try:
        rewards = func(prompts=DIALOGUES, completions=completions, **kwargs(completions))
    finally:
        func.close()
    assert [round(r, 2) for r in rewards] == [1.0, 0.0]
    assert sorted(fake_judge.judged_prompts) == sorted(TRANSCRIPTS)
    assert fake_judge.last_body is not None
    graded = [RESPONSE.search(c[-1]["content"]).group(1) for c in fake_judge.last_body["messages"]]
    assert graded == ["The answer is 4.", "Rome"]


def test_the_completions_table_gets_the_explanation_and_the_reason(fake_judge, tmp_path):
    kwargs = TrlKwargs(answer=ANSWERS)
    verdicts = judge_reward_func(_config(fake_judge.url, tmp_path, mode="verdict"))
    try:
        verdicts(PROMPTS, ["4", "Rome"], **kwargs(PROMPTS))
    finally:
        verdicts.close()
    assert kwargs.extra == {
        "judge_source": ["judge", "judge"],
        "judge_explanation": ["fake judge", "fake judge"],  # the judge's own words
        "judge_reason": [None, None],
    }
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    fallback = judge_reward_func(
        _config(fake_judge.url, tmp_path / "other", max_retries=0, startup_check="off")
    )
    try:
        fallback(PROMPTS, ["4", "Rome"], **kwargs(PROMPTS))
    finally:
        fallback.close()
    assert kwargs.extra["judge_source"] == ["rule_fallback", "rule_fallback"]
    reasons = kwargs.extra["judge_reason"]
    assert all(isinstance(r, str) and r for r in reasons), reasons


async def test_a_pickled_reward_function_carries_its_config_not_its_judge(fake_judge, tmp_path):
    """AsyncGRPOTrainer pickles reward functions into its rollout worker: a copy builds its own judge."""
    kwargs = TrlKwargs(answer=ANSWERS)
    func = async_judge_reward_func(_config(fake_judge.url, tmp_path), answer_column="answer", name="judge")
    original = func.reward_system  # in use: a loop thread, connections, an open cache
    copy = pickle.loads(pickle.dumps(func))
    try:
        assert set(func.__getstate__()) == {"config", "answer_column", "answer_type_column", "name", "tools"}
        assert copy.config == func.config and get_callable_name(copy) == "judge" and is_async_callable(copy)
        assert copy.reward_system is not original
        rewards = await copy(prompts=PROMPTS, completions=["4", "Rome"], **kwargs(PROMPTS))
        assert [round(r, 2) for r in rewards] == [1.0, 0.0]
    finally:
        copy.close()
        func.close()
    copy.close()  # idempotent
    with pytest.raises(JudgeError, match="closed"):
        await func(prompts=PROMPTS, completions=["4", "Rome"], **kwargs(PROMPTS))
    unused = pickle.loads(pickle.dumps(func))  # a closed function's copy is a fresh one
    unused.close()  # never built a judge: nothing to close


@pytest.mark.parametrize(("version", "refused"), [("1.13.0", True), ("1.14.0.dev0", True), ("1.14.0", False)])
def test_the_async_function_refuses_a_trl_that_would_not_await_it(monkeypatch, tmp_path, version, refused):
    monkeypatch.setattr(trl_integration.metadata, "version", lambda name: version)
    config = _config("http://127.0.0.1:9", tmp_path)
    judge_reward_func(config).close()  # the sync function works with any TRL 1.x
    if refused:
        with pytest.raises(JudgeConfigError, match=r"TRL .* without awaiting it.*trl>=1\.14"):
            async_judge_reward_func(config)
    else:
        async_judge_reward_func(config).close()


def test_failures_are_none_without_fallback_and_rule_rewards_with_it(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))
    kwargs = TrlKwargs(answer=ANSWERS, answer_type=["NUMBER", "TEXT"])
    completions = ["The answer is 4.", "Rome"]
    # No start-up check: the judge fails from the first reward on (each system is built then).
    strict = judge_reward_func(
        _config(fake_judge.url, tmp_path, fallback_to_rule=False, max_retries=0, startup_check="off")
    )
    lenient = judge_reward_func(
        _config(fake_judge.url, tmp_path / "other", max_retries=0, startup_check="off")
    )
    try:
        masked = strict(prompts=PROMPTS, completions=completions, **kwargs(completions))
        assert kwargs.metrics["judge/none_rate"] == 1.0
        graded = lenient(prompts=PROMPTS, completions=completions, **kwargs(completions))
    finally:
        strict.close()
        lenient.close()
    assert masked == [None, None]
    assert graded == [1.0, 0.0]  # the rule reward: 4 matches, Rome is not Paris
    assert kwargs.extra["judge_source"] == ["rule_fallback", "rule_fallback"]
    assert kwargs.metrics["judge/fallback_rate"] == 1.0 and kwargs.metrics["judge/none_rate"] == 0.0


def test_answer_columns_are_configurable(fake_judge, tmp_path):
    kwargs = TrlKwargs(solution=ANSWERS, kind=["NUMBER", "TEXT"])
    func = judge_reward_func(
        _config(fake_judge.url, tmp_path), answer_column="solution", answer_type_column="kind"
    )
    try:
        assert [round(r, 2) for r in func(PROMPTS, ["4", "Paris"], **kwargs(PROMPTS))] == [1.0, 1.0]
        with pytest.raises(JudgeConfigError, match=r"no 'solution' column \(dataset columns: \['answer'\]\)"):
            func(PROMPTS, ["4", "Paris"], **TrlKwargs(answer=ANSWERS)(PROMPTS))
    finally:
        func.close()


def test_the_shipped_config(fake_judge, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # its cache directory lives under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    func = judge_reward_func(REPO / "configs" / "trl.yaml")
    try:
        rewards = func(PROMPTS, ["4", "Rome"], **TrlKwargs(answer=ANSWERS)(PROMPTS))
        config = func.reward_system.config
    finally:
        func.close()
    assert [round(r, 2) for r in rewards] == [1.0, 0.0]
    assert config.mode == "fast" and not config.fallback_to_rule


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["sync", "async_conversational"])
def test_grpo_trainer_logs_our_rewards(fake_judge, tmp_path, variant):
    make = judge_reward_func if variant == "sync" else async_judge_reward_func
    func = make(_config(fake_judge.url, tmp_path, startup_check="off"))  # every prompt judged is a reward's
    try:
        trainer, returned = run_grpo(func, tmp_path, conversational=variant != "sync")
    finally:
        func.close()
    logs = step_logs(trainer)
    assert len(logs) == 2 and [len(r) for r in returned] == [4, 4]
    for log, rewards in zip(logs, returned, strict=True):
        assert log[f"rewards/{DEFAULT_NAME}/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-6)
        assert log["judge/none_rate"] == 0.0 and "judge/cache_hit_rate" in log
    assert {round(r) for r in returned[0]} == {0, 1}  # the judge told completions apart
    assert fake_judge.counts["/v1/chat/completions/batch"] >= 1
    table = completions_table(tmp_path, 2)
    assert len(table) == 4 and list(table["judge_source"]) == ["judge"] * 4
    assert all(e.startswith("expected reward") for e in table["judge_explanation"])
    assert table["judge_reason"].isna().all()
    if variant != "sync":  # the system prompt and earlier turns reached the judge
        assert set(fake_judge.judged_prompts) == set(TRANSCRIPTS)


@pytest.mark.slow
def test_grpo_trainer_masks_judge_failures_when_fallback_is_off(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))  # from the first reward on: no start-up check
    func = judge_reward_func(
        _config(fake_judge.url, tmp_path, fallback_to_rule=False, max_retries=0, startup_check="off")
    )
    try:
        trainer, returned = run_grpo(func, tmp_path)
    finally:
        func.close()
    logs = step_logs(trainer)
    assert returned == [[None] * 4, [None] * 4]
    # TRL logs a metric with no valid value (every reward None, so NaN) as None.
    assert [log[f"rewards/{DEFAULT_NAME}/mean"] for log in logs] == [None, None]
    assert all(log["judge/none_rate"] == 1.0 and log["loss"] == 0.0 for log in logs)
    table = completions_table(tmp_path, 2)
    assert list(table["judge_source"]) == ["error"] * 4
    assert table["judge_reason"].notna().all() and (table["judge_reason"] != "").all()


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["sync", "async_conversational"])
def test_grpo_trainer_judges_each_prompts_generations_together(monkeypatch, tmp_path, variant):
    """With ``group: {mode: pairwise}`` each prompt's generations are compared with each other;
    a judge that always prefers the first shown gives both members of a group the same reward."""
    judge = ComparingBackend()
    monkeypatch.setattr(trl_integration, "create_judge_reward", lambda c: JudgeRewardSystem(c, backend=judge))
    make = judge_reward_func if variant == "sync" else async_judge_reward_func
    # No start-up check: every request the backend gets is a reward's.
    func = make(
        {"use_cache": False, "reward_timeout": 30, "group": {"mode": "pairwise"}, "startup_check": "off"}
    )
    try:
        trainer, returned = run_grpo(func, tmp_path, conversational=variant != "sync")
    finally:
        func.close()
    logs = step_logs(trainer)
    assert len(logs) == 2 and [len(r) for r in returned] == [2, 2, 2, 2]  # 2 steps x 2 prompts
    for log, groups in zip(logs, (returned[:2], returned[2:]), strict=True):
        rewards = [r for group in groups for r in group]
        assert log[f"rewards/{DEFAULT_NAME}/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-6)
    assert all(group[0] == pytest.approx(group[1]) for group in returned)
    shown = {tuple(r.responses) for r in judge.requests}
    assert len(judge.requests) == 8 and all((b, a) in shown for a, b in shown)  # both orders
    table = completions_table(tmp_path, 2)
    assert list(table["judge_reason"]) == ["pairwise"] * 4


@pytest.mark.parametrize(
    ("prompts", "completions", "answers", "message"),
    [
        (None, ["x"], ["1"], "prompts: expected a list"),
        (["q"], "x", ["1"], "completions: expected a list"),
        (["q"], ["x"], {"a": 1}, "answer: expected a list"),
        (["q", "r"], ["x"], ["1"], "prompts: 2 values for 1 completions"),
        (["q"], ["x"], [], "answer: 0 values for 1 completions"),
    ],
)
def test_a_malformed_batch_is_an_error_naming_the_column(fake_judge, prompts, completions, answers, message):
    reward = judge_reward_func({"judge_url": fake_judge.url, "use_cache": False})
    with pytest.raises(JudgeInputError, match=message):
        reward(prompts, completions, answer=answers)
    reward.close()


@pytest.mark.parametrize(
    "bad",
    [
        None,
        7,
        {"x": 1},
        [1],
        [None],
        [{"content": 3, "role": "user"}],
        [{"role": "user", "content": [1, {"type": "text", "text": 5}]}],
    ],
)
def test_malformed_prompts_and_completions_get_a_defined_reward(fake_judge, bad):
    reward = judge_reward_func({"judge_url": fake_judge.url, "use_cache": False})
    rewards = reward([bad], [bad], answer=["1"])
    reward.close()
    assert len(rewards) == 1 and isinstance(rewards[0], float)


def test_a_rubric_column_makes_rubric_rewards_and_needs_no_answer_column(fake_judge):
    reward = judge_reward_func({"judge_url": fake_judge.url, "use_cache": False})
    extra = {}
    rewards = reward(["Fever?", "Cough?"], ["Rest and drink water.", "Honey helps."],
                     rubric=[["Recommends rest"], ["Mentions honey", "Mentions a doctor"]],
                     log_extra=lambda column, values: extra.setdefault(column, values))  # fmt: skip
    reward.close()
    assert len(rewards) == 2 and all(isinstance(r, float) for r in rewards)
    assert extra["judge_source"] == ["judge", "judge"]  # the fake judged each criterion
    assert fake_judge.counts["/v1/chat/completions/batch"] >= 1
