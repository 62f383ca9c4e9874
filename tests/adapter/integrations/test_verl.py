"""verl reward functions, called exactly as verl's reward managers call them.

Calls quoted from volcengine/verl (main, 2026-01):
- verl/workers/reward_manager/naive.py:85
  ``score = self.compute_score(data_source=data_source, solution_str=response_str,
  ground_truth=ground_truth, extra_info=extra_info)``, then ``reward_tensor[i, valid_response_length - 1]
  = reward`` and, for a dict, ``reward_extra_info[key].append(value)`` for every key.
- verl/workers/reward_manager/batch.py:70
  ``scores = self.compute_score(data_sources=data_sources, solution_strs=responses_str,
  ground_truths=ground_truths, extra_infos=extras, **self.reward_kwargs)``
- verl/experimental/reward_loop/reward_manager/naive.py:30 and :67
  ``self.is_async_reward_score = inspect.iscoroutinefunction(self.compute_score)``;
  ``result = await self.compute_score(data_source=data_source, solution_str=response_str,
  ground_truth=ground_truth, extra_info=extra_info, **extra_reward_kwargs)`` where
  ``extra_reward_kwargs`` holds ``reward_router_address`` and ``reward_model_tokenizer``.
- verl/trainer/ppo/reward.py:get_custom_reward_fn wraps the function in
  ``functools.partial(_call_with_kwargs[_async], raw_fn, reward_kwargs)``.
"""

from __future__ import annotations

import functools
import inspect
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from adapter.integrations import verl
from judge_vllm.errors import JudgeError
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

REPO = Path(__file__).resolve().parents[3]
KEYS = {"score", "source", "judge_latency_ms", "fallback"}


def _extra_info(question: str, answer_type: str | None = None) -> dict[str, Any]:
    """An ``extra_info`` as verl's data preprocessing and reward managers fill it."""
    info: dict[str, Any] = {"split": "train", "index": 0, "question": question}
    if answer_type is not None:
        info["answer_type"] = answer_type
    return {**info, "num_turns": None, "rollout_reward_scores": {}}


def _use_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **config: Any) -> None:
    path = tmp_path / "verl.yaml"
    path.write_text(yaml.safe_dump({"mode": "fast", "cache_dir": str(tmp_path / "cache"), **config}))
    monkeypatch.setenv(verl.CONFIG_ENV, str(path))


@pytest.fixture(autouse=True)
def fresh_adapter(fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test builds the shared adapter from its own environment; closed before the judge stops."""
    for var in (verl.CONFIG_ENV, "JUDGE_MODEL_URL", "JUDGE_MODEL_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    verl.close_adapter()
    yield
    verl.close_adapter()


@pytest.fixture
def configured(
    fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> FakeJudgeServer:
    _use_config(monkeypatch, tmp_path, judge_url=fake_judge.url)
    return fake_judge


def test_public_api():
    documented = {
        "compute_score",
        "compute_score_async",
        "compute_score_batch",
        "get_adapter",
        "close_adapter",
    }
    assert documented <= set(verl.__all__)
    assert all(hasattr(verl, name) for name in verl.__all__)


def test_naive_reward_manager_call(configured):
    reward_tensor = torch.zeros(2, 8)
    reward_extra_info: dict[str, list[Any]] = defaultdict(list)
    for i, (response_str, ground_truth) in enumerate([("The answer is 4.", "4"), ("It is 5.", "4")]):
        score = verl.compute_score(
            data_source="openai/gsm8k",
            solution_str=response_str,
            ground_truth=ground_truth,
            extra_info=_extra_info("What is 2+2?", "NUMBER"),
        )
        assert set(score) == KEYS
        reward_tensor[i, 7] = score["score"]
        for key, value in score.items():
            reward_extra_info[key].append(value)
    # The fake judge scores 5 (reward ~1) when the reference answer is in the response, else 1.
    assert reward_tensor[:, 7].round().tolist() == [1.0, 0.0]
    assert reward_extra_info["source"] == ["judge", "judge"]
    assert reward_extra_info["fallback"] == [False, False]
    assert all(ms > 0.0 for ms in reward_extra_info["judge_latency_ms"])


def test_batch_reward_manager_call_is_one_judge_call(configured):
    ground_truths = ["4", "Paris", "4"]
    scores = verl.compute_score_batch(
        data_sources=np.array(["gsm8k", "trivia", "gsm8k"], dtype=object),
        solution_strs=["4", "Lyon", "five"],
        ground_truths=ground_truths,
        extra_infos=np.array([_extra_info("2+2?", "NUMBER"), _extra_info("Capital?"), {}], dtype=object),
        **{"custom_kwarg": 1},  # verl forwards custom_reward_function.reward_kwargs
    )
    assert [set(s) for s in scores] == [KEYS] * 3
    assert [round(s["score"]) for s in scores] == [1, 0, 0]
    assert [s["source"] for s in scores] == ["judge", "judge", "judge"]
    assert configured.counts["/v1/chat/completions/batch"] == 1


async def test_async_reward_loop_call(configured):
    wrapped = functools.partial(verl.compute_score_async)  # as get_custom_reward_fn wraps it
    assert inspect.iscoroutinefunction(wrapped) and not inspect.iscoroutinefunction(verl.compute_score)
    score = await wrapped(
        data_source="gsm8k",
        solution_str="#### 4",
        ground_truth="4",
        extra_info=_extra_info("2+2?", "NUMBER"),
        reward_router_address=None,
        reward_model_tokenizer=None,
    )
    assert set(score) == KEYS and round(score["score"]) == 1 and score["source"] == "judge"


def test_one_adapter_per_process_created_lazily_from_the_config_file(configured, tmp_path):
    with ThreadPoolExecutor(8) as pool:
        adapters = list(pool.map(lambda _: verl.get_adapter(), range(8)))
    assert all(a is adapters[0] for a in adapters)
    assert adapters[0].config.judge_url == configured.url and adapters[0].config.mode == "fast"
    verl.compute_score("gsm8k", "4", "4", None)
    assert verl.get_adapter() is adapters[0]
    verl.close_adapter()
    assert verl.get_adapter() is not adapters[0]


def test_without_a_config_file_the_env_vars_configure_it(fake_judge, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # the default cache directory lives under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    monkeypatch.setenv("JUDGE_MAX_BATCH_SIZE", "3")
    score = verl.compute_score("gsm8k", "The answer is 4.", "4", {"answer_type": "NUMBER"})
    assert verl.get_adapter().config.max_batch_size == 3
    assert round(score["score"]) == 1 and score["source"] == "judge"
    assert fake_judge.counts["ok"] == 1  # one judge call answered


def test_the_shipped_config(fake_judge, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # its cache directory lives under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    monkeypatch.setenv(verl.CONFIG_ENV, str(REPO / "configs" / "verl.yaml"))
    score = verl.compute_score("gsm8k", "The answer is 4.", "4", {"answer_type": "NUMBER"})
    assert round(score["score"]) == 1 and score["source"] == "judge"
    assert verl.get_adapter().config.fallback_to_rule and verl.get_adapter().config.mode == "fast"


def test_a_failure_falls_back_to_rules_flagged(configured, monkeypatch, tmp_path):
    configured.set_plan(FaultPlan(error_rate=1.0))
    _use_config(monkeypatch, tmp_path, judge_url=configured.url, max_retries=0)
    scores = verl.compute_score_batch(["a", "b"], ["The answer is 4.", "5"], ["4", "4"], [None, None])
    assert [s["score"] for s in scores] == [1.0, 0.0]
    assert [(s["source"], s["fallback"]) for s in scores] == [("rule_fallback", True)] * 2


def test_a_failure_without_fallback_raises_rather_than_inventing_a_score(configured, monkeypatch, tmp_path):
    configured.set_plan(FaultPlan(error_rate=1.0))
    _use_config(monkeypatch, tmp_path, judge_url=configured.url, max_retries=0, fallback_to_rule=False)
    with pytest.raises(JudgeError, match="set fallback_to_rule: true"):
        verl.compute_score("gsm8k", "The answer is 4.", "4", None)
    with pytest.raises(JudgeError, match="verl cannot mask a missing reward"):
        verl.compute_score_batch(["gsm8k"], ["4"], ["4"], [None])


@pytest.mark.parametrize("opt_in", [True, False])
def test_verls_reward_router_is_the_judge_only_when_the_config_opts_in(
    fake_judge, monkeypatch, tmp_path, opt_in
):
    dead = "http://127.0.0.1:9"  # nothing listens: only the router address can answer
    _use_config(monkeypatch, tmp_path, judge_url=dead, verl_reward_router=opt_in, max_retries=0)
    router = fake_judge.url.removeprefix("http://")  # verl passes host:port
    score = verl.compute_score("gsm8k", "The answer is 4.", "4", None, reward_router_address=router)
    assert verl.get_adapter().config.judge_url == (fake_judge.url if opt_in else dead)
    assert score["source"] == ("judge" if opt_in else "rule_fallback")
