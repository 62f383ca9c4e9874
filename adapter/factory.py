"""``create_judge_reward``: the judge reward a config asks for (one judge, an ensemble, or a judge
that escalates its unsure rewards to a second one)."""

from __future__ import annotations

from adapter.config import ConfigLike, RewardConfig
from adapter.ensemble import MultiJudge
from adapter.escalation import EscalatingJudge
from adapter.reward import BaseJudgeReward, JudgeRewardSystem

__all__ = ["create_judge_reward"]


def create_judge_reward(config: ConfigLike = None) -> BaseJudgeReward:
    """A judge reward for a config: an ensemble (``MultiJudge``) when it lists several judge_urls,
    an ``EscalatingJudge`` when it names ``escalate_to``."""
    resolved = RewardConfig.from_any(config)
    if resolved.escalate_to is not None:
        return EscalatingJudge(resolved)
    if resolved.judge_urls and len(resolved.judge_urls) > 1:
        return MultiJudge(resolved)
    if resolved.judge_urls:
        resolved = resolved.model_copy(update={"judge_url": resolved.judge_urls[0], "judge_urls": None})
    return JudgeRewardSystem(resolved)
