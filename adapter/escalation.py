"""``EscalatingJudge``: a second judge asked only where the first is unsure (``escalate_to``).

The first judge is this config's judge (with its ``calibration_file``, so the band applies to
calibrated P(correct) when there is one); the second is the reward config ``escalate_to``
names. A first reward inside ``escalation_band`` is replaced by the second judge's reward;
outside the band, or when the second judge cannot answer, the first judge's stands. Both are
full ``JudgeRewardSystem``s (own batching, cache, breaker); the escalating system runs the
pre-checks and the cascade once, and falls back like any judge reward when the first judge
cannot answer. ``judge_scores`` holds ``{"first": ..., "second": ...}`` (second None when not
asked or not answered); ``get_metrics()`` adds ``escalations`` and each judge's metrics.
"""

from __future__ import annotations

from adapter.config import ConfigLike, RewardConfig
from adapter.ensemble import first_answer
from adapter.metrics_dict import MetricsDict
from adapter.result import judged_reward
from adapter.reward import BaseJudgeReward, JudgeRewardSystem
from judge_vllm.errors import JudgeUnavailableError
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["EscalatingJudge"]

# The escalating system answers the pre-checks, serves metrics and logs judgments; its judges
# would only repeat them.
_MEMBER = {
    "prechecks": False,
    "strategy": "judge",
    "metrics_port": None,
    "judgment_log_path": None,
    "escalate_to": None,
}


class EscalatingJudge(BaseJudgeReward):
    """A judge reward that asks ``escalate_to``'s judge where its own reward is unsure."""

    def __init__(self, config: ConfigLike = None) -> None:
        shared = RewardConfig.from_any(config)
        if shared.escalate_to is None:
            raise ValueError("EscalatingJudge needs escalate_to: the second judge's reward config")
        super().__init__(
            shared.model_copy(
                update={
                    "use_cache": False,
                    "calibration_file": None,
                    "calibration": None,
                    "escalate_to": None,
                }
            )
        )
        self.band = shared.escalation_band
        second = RewardConfig.from_any(shared.escalate_to)
        self.first = JudgeRewardSystem(shared.model_copy(update=_MEMBER))
        self.second = JudgeRewardSystem(second.model_copy(update=_MEMBER))
        self.escalations = 0

    async def _request_judge(self, request: JudgeRequest) -> Verdict:
        """The first judge's reward, or the second's where the first's is in the band; a part
        judgment (a criterion, a comparison), the first judge's."""
        if request.profile is not None:
            return await first_answer([self.first], request)
        fields = request.model_dump(exclude={"metadata", "final_answer", "profile"})
        first = await self.first.areward(**fields)
        first_reward = judged_reward(first)
        if first_reward is None:
            raise JudgeUnavailableError(f"first judge: {first['reason']}")
        low, high = self.band
        if not low <= first_reward <= high:
            return Verdict(
                score=first_reward,
                explanation=first["explanation"],
                judge_scores={"first": first_reward, "second": None},
            )
        self.escalations += 1
        second = await self.second.areward(**fields)
        second_reward = judged_reward(second)
        if second_reward is None:
            return Verdict(
                score=first_reward,
                explanation=f"first judge {first_reward:.2f} unsure, second judge unavailable "
                f"({second['reason']}): {first['explanation']}",
                judge_scores={"first": first_reward, "second": None},
            )
        return Verdict(
            score=second_reward,
            explanation=f"escalated: first judge {first_reward:.2f} in [{low:g}, {high:g}]; "
            f"second judge: {second['explanation']}",
            judge_scores={"first": first_reward, "second": second_reward},
        )

    def get_metrics(self) -> MetricsDict:
        """This system's metrics, escalations, both judges' metrics, and their calls added up."""
        snapshot = super().get_metrics()
        judges = {"first": self.first.get_metrics(), "second": self.second.get_metrics()}
        snapshot["escalations"] = self.escalations
        snapshot["judges"] = judges
        snapshot["judge_calls"] = sum(m.get("judge_calls") or 0 for m in judges.values())
        snapshot["model"] = judges["first"].get("model")
        return snapshot

    def close(self) -> None:
        """Close this system, then both judges."""
        super().close()
        self.first.close()
        self.second.close()
