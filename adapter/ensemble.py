"""``MultiJudge``: several judge servers scoring the same request, aggregated.

The ensemble is a judge reward whose ``_request_judge`` (the documented extension point)
asks every member: each member is a full ``JudgeRewardSystem`` with its own batching,
cache, breaker and fallback. Members that could not judge (fallback or error) are left
out of the aggregate; when none could, the ensemble falls back like any judge reward.
Per-judge scores are reported in ``judge_scores``.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from collections.abc import Iterable

from adapter.config import ConfigLike, RewardConfig
from adapter.metrics_dict import MetricsDict
from adapter.result import judged_reward
from adapter.reward import BaseJudgeReward, JudgeRewardSystem
from judge_vllm.errors import JudgeError, JudgeUnavailableError
from judge_vllm.redaction import redact_url
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["MultiJudge", "aggregate_scores", "first_answer"]

logger = logging.getLogger("JudgeReward")
REPLICAS_HINT = (
    "judge_urls is an ensemble: every item is judged by each entry; to spread items over copies of "
    "one judge, list them in judge_replicas"
)


def aggregate_scores(scores: list[float], how: str) -> float:
    """Mean, median, or majority vote (1.0 when more than half score >= 0.5, else 0.0)."""
    if how == "median":
        return float(statistics.median(scores))
    if how == "vote":
        return 1.0 if sum(s >= 0.5 for s in scores) * 2 > len(scores) else 0.0
    return float(statistics.fmean(scores))


async def first_answer(judges: Iterable[BaseJudgeReward], request: JudgeRequest) -> Verdict:
    """A part judgment (a criterion, a comparison) by the first judge that answers, in order: a
    ranking has no mean, and a part is no reward to aggregate or escalate. Raises the first error."""
    errors: list[JudgeError] = []
    for judge in judges:
        judged = await judge._member_judgment(request)
        if isinstance(judged.outcome, Verdict):
            return judged.outcome
        errors.append(judged.outcome)
    raise errors[0]


class MultiJudge(BaseJudgeReward):
    """An ensemble of judges behind the same API as ``JudgeRewardSystem``."""

    def __init__(self, config: ConfigLike = None) -> None:
        shared = RewardConfig.from_any(config)
        # The members cache their own verdicts; the ensemble keeps no cache and runs the
        # pre-checks once for all of them.
        super().__init__(shared.model_copy(update={"use_cache": False}))
        urls = shared.judge_urls or [shared.judge_url]
        if len(set(urls)) < len(urls):
            logger.warning("judge_urls lists the same server more than once. %s.", REPLICAS_HINT)
        self._same_model_checked = False
        # The ensemble serves the metrics endpoint (if any) and logs its judgments (each member's
        # score is in judge_scores); members would only repeat its port and its lines.
        member = {"judge_urls": None, "prechecks": False, "metrics_port": None, "judgment_log_path": None}
        # Each member caches in its own folder: members serving the same model name would
        # otherwise answer from each other's verdicts, and the ensemble would not be one.
        self.judges = {
            url: JudgeRewardSystem(
                shared.model_copy(
                    update={**member, "judge_url": url, "cache_dir": shared.cache_dir / f"judge-{i}"}
                )
            )
            for i, url in enumerate(urls)
        }

    async def _request_judge(self, request: JudgeRequest) -> Verdict:
        """Every member's reward for the request, aggregated (fails when no member judged); a part
        judgment, the first member's that answers."""
        if request.profile is not None:
            return await first_answer(self.judges.values(), request)
        fields = request.model_dump(exclude={"metadata", "final_answer", "profile"})
        results = await asyncio.gather(*(judge.areward(**fields) for judge in self.judges.values()))
        self._check_same_model()
        per_judge = {redact_url(url): judged_reward(r) for url, r in zip(self.judges, results, strict=True)}
        scores = [s for s in per_judge.values() if s is not None]
        if not scores:
            reasons = sorted({str(r["reason"]) for r in results})
            raise JudgeUnavailableError(f"none of {len(self.judges)} judges answered: {', '.join(reasons)}")
        return Verdict(
            score=aggregate_scores(scores, self.config.aggregate),
            explanation=f"{self.config.aggregate} of {len(scores)}/{len(self.judges)} judges",
            judge_scores=per_judge,
        )

    def _check_same_model(self) -> None:
        """Warn once when every member serves the same model: that is a pool, not an ensemble."""
        if self._same_model_checked:
            return
        models = [judge._known_model() for judge in self.judges.values()]
        if None in models:
            return
        self._same_model_checked = True
        if len(models) > 1 and len(set(models)) == 1:
            logger.warning("every judge in judge_urls serves %s. %s.", models[0], REPLICAS_HINT)

    def get_metrics(self) -> MetricsDict:
        """The ensemble's metrics plus each judge's."""
        snapshot = super().get_metrics()
        snapshot["judges"] = {redact_url(url): judge.get_metrics() for url, judge in self.judges.items()}
        return snapshot

    def close(self) -> None:
        """Close the ensemble, then every member judge."""
        super().close()
        for judge in self.judges.values():
            judge.close()
