"""``MultiJudge``: several judge servers scoring the same request, aggregated.

Each judge is a full ``JudgeRewardSystem`` (its own batching, cache, breaker). Judges
that fail are left out of the aggregate; if all fail, the first judge's fallback answers.
Per-judge scores are reported in ``judge_scores``.
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from adapter.config import RewardConfig
from adapter.result import RewardResult
from adapter.reward import BaseJudgeReward, ConfigLike, JudgeRewardSystem
from judge_vllm.schemas import JudgeRequest

__all__ = ["MultiJudge", "aggregate_scores"]

JUDGED = ("judge", "cache")


def aggregate_scores(scores: list[float], how: str) -> float:
    """Mean, median, or majority vote (1.0 when more than half score >= 0.5, else 0.0)."""
    if how == "median":
        return float(statistics.median(scores))
    if how == "vote":
        return 1.0 if sum(s >= 0.5 for s in scores) * 2 > len(scores) else 0.0
    return float(statistics.fmean(scores))


class MultiJudge(BaseJudgeReward):
    """An ensemble of judges behind the same API as ``JudgeRewardSystem``."""

    def __init__(self, config: ConfigLike = None) -> None:
        shared = RewardConfig.from_any(config)
        # The members cache their own verdicts; the ensemble itself keeps no cache.
        super().__init__(shared.model_copy(update={"use_cache": False}))
        urls = shared.judge_urls or [shared.judge_url]
        self.judges = {
            url: JudgeRewardSystem(shared.model_copy(update={"judge_url": url, "judge_urls": None}))
            for url in urls
        }

    async def _score(self, request: JudgeRequest, started: float, checked: bool = False) -> RewardResult:
        if not checked:
            quick = self._quick(request, started)
            if quick is not None:
                return quick
        results = await asyncio.gather(
            *(judge.areward(**request.model_dump(exclude={"metadata"})) for judge in self.judges.values())
        )
        per_judge = {
            url: r["reward"] if r["source"] in JUDGED else None
            for url, r in zip(self.judges, results, strict=True)
        }
        scores = [s for s in per_judge.values() if s is not None]
        if not scores:
            first = RewardResult.model_validate(results[0])
            return self._finish(
                request, started, first.reward, first.source, first.explanation,
                reason=first.reason, error=first.error, judge_scores=per_judge,
            )  # fmt: skip
        value = aggregate_scores(scores, self.config.aggregate)
        return self._finish(
            request,
            started,
            value,
            "judge",
            f"{self.config.aggregate} of {len(scores)}/{len(self.judges)} judges",
            judge_scores=per_judge,
        )

    def get_metrics(self) -> dict[str, Any]:
        """The ensemble's metrics plus each judge's."""
        snapshot = super().get_metrics()
        snapshot["judges"] = {url: judge.get_metrics() for url, judge in self.judges.items()}
        return snapshot

    def close(self) -> None:
        """Close every member judge, then the ensemble."""
        for judge in self.judges.values():
            judge.close()
        super().close()
