"""``create_judge_reward``: the judge reward a config asks for (one judge, or an ensemble)."""

from __future__ import annotations

from adapter.config import ConfigLike, RewardConfig
from adapter.multi import MultiJudge
from adapter.reward import BaseJudgeReward, JudgeRewardSystem

__all__ = ["create_judge_reward"]


def create_judge_reward(config: ConfigLike = None) -> BaseJudgeReward:
    """A judge reward for a config: an ensemble (``MultiJudge``) when it lists several judge_urls."""
    resolved = RewardConfig.from_any(config)
    if resolved.judge_urls and len(resolved.judge_urls) > 1:
        return MultiJudge(resolved)
    if resolved.judge_urls:
        resolved = resolved.model_copy(update={"judge_url": resolved.judge_urls[0], "judge_urls": None})
    return JudgeRewardSystem(resolved)
