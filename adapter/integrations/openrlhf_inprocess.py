"""OpenRLHF's in-process reward: ``reward_func(queries, prompts, labels)`` backed by the judge.

    JUDGE_REWARD_CONFIG=configs/openrlhf.yaml python -m openrlhf.cli.train_ppo_ray \\
        --reward.remote_url "$(judge-vllm openrlhf-rm --print-reward-func-path)" \\
        --data.label_key answer ...

OpenRLHF 0.11 loads a ``.py`` given to ``--reward.remote_url`` in each rollout (vLLM) actor
(``SingleTurnAgentExecutor``: ``spec_from_file_location`` + ``reward_module.reward_func``) and
calls ``reward_func`` from a worker thread, one query per call, many at once: the adapter's
micro-batcher gathers them into judge batches. The file to pass is ``openrlhf_reward_func.py``,
which only re-exports ``reward_func`` from here, so every load in one process shares one adapter.

The adapter is built on first use from the YAML named by ``JUDGE_REWARD_CONFIG`` (else the
``JUDGE_MODEL_URL`` family of environment variables); ``JUDGE_ANSWER_TYPE`` types every query
(like ``openrlhf-rm --answer-type``). The reply is what OpenRLHF's examples return: float
tensors ``rewards``, ``scores`` and ``extra_logs`` (``openrlhf_protocol`` lists its keys).

No HTTP, so no 180 s limit and no retries by OpenRLHF: a reward comes back within the config's
``reward_timeout``. With ``fallback_to_rule: false`` a reward the judge could not give raises
``JudgeError`` (logged here at warning; OpenRLHF logs it at info and leaves the sample
without a reward, which fails the training step), never a made-up number.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import torch
from typing_extensions import TypedDict

from adapter.config import RewardConfig
from adapter.factory import create_judge_reward
from adapter.integrations.openrlhf_protocol import OpenRLHFRewards, reward_items, unavailable_message
from adapter.integrations.process_rewards import ProcessRewards
from adapter.reward import BaseJudgeReward
from judge_vllm.errors import JudgeError

__all__ = [
    "ANSWER_TYPE_ENV",
    "CONFIG_ENV",
    "RewardTensors",
    "close_reward_system",
    "get_reward_system",
    "reward_func",
]

logger = logging.getLogger(__name__)

CONFIG_ENV = "JUDGE_REWARD_CONFIG"
ANSWER_TYPE_ENV = "JUDGE_ANSWER_TYPE"

_systems = ProcessRewards()


class RewardTensors(TypedDict):
    """What ``reward_func`` returns to OpenRLHF (``OpenRLHFRewards``' fields as tensors)."""

    rewards: torch.Tensor
    scores: torch.Tensor
    extra_logs: dict[str, torch.Tensor]


def get_reward_system() -> BaseJudgeReward:
    """The process's judge reward, created on first use from ``JUDGE_REWARD_CONFIG`` or the env."""
    return _systems.get(None, _build_reward_system)


def _build_reward_system() -> BaseJudgeReward:
    source = os.environ.get(CONFIG_ENV) or None
    config = RewardConfig.from_any(source)
    # once per rollout actor: says which judge this process's rewards come from
    logger.warning(
        "OpenRLHF reward_func: judge %s from %s (rule fallback %s)",
        config.judge_urls or config.judge_url,
        source or f"the environment ({CONFIG_ENV} unset)",
        "on" if config.fallback_to_rule else "off",
    )
    return create_judge_reward(config)


def close_reward_system() -> None:
    """Close the process's judge reward; the next call builds a new one from the environment."""
    _systems.close()


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[object], **kwargs: object
) -> RewardTensors:
    """OpenRLHF's ``reward_func``: one reward per query (prompt + response), its label the
    reference answer; ``kwargs`` (none in OpenRLHF 0.11) are ignored."""
    answer_type = os.environ.get(ANSWER_TYPE_ENV) or None
    items = reward_items(queries, prompts, labels, [answer_type] * len(queries))
    results = get_reward_system().reward_batch(items)
    unavailable = unavailable_message(results)
    if unavailable is not None:
        logger.warning("OpenRLHF reward_func: %s", unavailable)
        raise JudgeError(unavailable)
    rewards = OpenRLHFRewards.from_results(results)
    return {
        "rewards": torch.tensor(rewards.rewards, dtype=torch.float32),
        "scores": torch.tensor(rewards.scores, dtype=torch.float32),
        "extra_logs": {
            name: torch.tensor(values, dtype=torch.float32) for name, values in rewards.extra_logs.items()
        },
    }
