"""verl reward functions backed by the judge, one shared adapter per process.

    custom_reward_function.path=pkg://adapter.integrations.verl
    custom_reward_function.name=compute_score        # or compute_score_async (reward loop)
    # with reward_model.reward_manager=batch: custom_reward_function.name=compute_score_batch

The adapter is built on first use from the YAML file named by ``JUDGE_REWARD_CONFIG``,
else from the ``JUDGE_MODEL_URL`` family of environment variables. With
``verl_reward_router: true`` in that config, the reward-model router verl passes to reward
functions (``reward_router_address``, its reward-model servers) is the judge instead of
``judge_url``. verl's ``ground_truth``
is the reference answer; ``extra_info`` may carry ``answer_type`` and the ``question``
(verl's data preprocessing stores it there) used as the judge's prompt.

Each score is a dict: ``score`` plus ``source``, ``judge_latency_ms`` and ``fallback``,
which verl collects into ``reward_extra_info``. verl writes every score into a reward
tensor and has no way to mask one, so a judge failure with ``fallback_to_rule: false``
raises ``JudgeError`` instead of becoming a made-up number.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from adapter.config import RewardConfig
from adapter.factory import create_judge_reward
from adapter.reward import BaseJudgeReward
from judge_vllm.errors import JudgeError

__all__ = [
    "CONFIG_ENV",
    "close_adapter",
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "get_adapter",
]

CONFIG_ENV = "JUDGE_REWARD_CONFIG"

_adapter: BaseJudgeReward | None = None
# verl's reward loop calls sync reward functions from executor threads: build the adapter once.
_adapter_lock = threading.Lock()


def get_adapter(reward_router_address: str | None = None) -> BaseJudgeReward:
    """The process's judge reward, created on first use from ``JUDGE_REWARD_CONFIG`` or the env
    (on verl's reward-model router when the config opts in and verl passed one)."""
    global _adapter
    with _adapter_lock:
        if _adapter is None:
            config = RewardConfig.from_any(os.environ.get(CONFIG_ENV) or None)
            if config.verl_reward_router and reward_router_address:
                url = reward_router_address
                url = url if url.startswith(("http://", "https://")) else f"http://{url}"
                config = RewardConfig.model_validate(
                    {**dict(config), "judge_url": url, "judge_replicas": None}
                )
            _adapter = create_judge_reward(config)
        return _adapter


def close_adapter() -> None:
    """Close the shared judge reward; the next call builds a new one from the environment."""
    global _adapter
    with _adapter_lock:
        adapter, _adapter = _adapter, None
    if adapter is not None:
        adapter.close()


def _item(solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    info = extra_info or {}
    return {
        "prompt": info.get("question", ""),
        "completion": solution_str,
        "answer": ground_truth,
        "answer_type": info.get("answer_type"),
    }


def _to_verl(result: Mapping[str, Any]) -> dict[str, Any]:
    """verl's score dict; every key is present for every item, as ``reward_extra_info`` needs."""
    if result["reward"] is None:
        raise JudgeError(
            f"judge failed ({result['reason']}): {result['error']}; verl cannot mask a missing "
            "reward, so set fallback_to_rule: true to let the rule reward answer"
        )
    return {
        "score": result["reward"],
        "source": result["source"],
        "judge_latency_ms": result["latency_ms"],
        "fallback": result["source"] == "rule_fallback",
    }


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's ``compute_score``: judge one response. Other verl kwargs are accepted; only
    ``reward_router_address`` is read (see the module docs)."""
    adapter = get_adapter(kwargs.get("reward_router_address"))
    return _to_verl(adapter.reward_batch([_item(solution_str, ground_truth, extra_info)])[0])


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Async ``compute_score`` for verl's reward loop (awaited instead of run in a thread)."""
    adapter = get_adapter(kwargs.get("reward_router_address"))
    results = await adapter.areward_batch([_item(solution_str, ground_truth, extra_info)])
    return _to_verl(results[0])


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None],
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl's ``BatchRewardManager`` signature: judge all responses in one batch."""
    items = [
        _item(solution, truth, info)
        for solution, truth, info in zip(solution_strs, ground_truths, extra_infos, strict=True)
    ]
    return [_to_verl(result) for result in get_adapter().reward_batch(items)]
