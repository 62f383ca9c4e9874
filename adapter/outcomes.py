"""The last step of every reward: the result, counted in the metrics and offered to the judgment log.

Every ``RewardResult`` the reward system returns is made here: bad input (``invalid``), a
verdict from the judge or the cache (``from_verdict``, calibrated), and the rule's or the
fallback's rewards (``finish``).
"""

from __future__ import annotations

import time
from typing import Any

from adapter.calibration import calibrate
from adapter.config import RewardConfig
from adapter.inputs import InvalidInput
from adapter.judgment_log import JudgmentLog
from adapter.metrics import RewardMetrics
from adapter.result import RewardResult, Source
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["RewardOutcomes"]


class RewardOutcomes:
    """Builds the results of one reward system, and records each in its metrics and judgment log."""

    def __init__(self, config: RewardConfig, metrics: RewardMetrics, judgment_log: JudgmentLog) -> None:
        self.config = config
        self.metrics = metrics
        self.judgment_log = judgment_log

    def invalid(self, invalid: InvalidInput) -> RewardResult:
        """The defined reward for input that cannot be judged: 0, by rule, with the reason."""
        self.metrics.record("rule", 0.0, "invalid_input", 0.0, None)
        result = RewardResult(
            reward=0.0,
            source="rule",
            request_id=invalid.request_id,
            reason="invalid_input",
            explanation=f"invalid input, reward 0: {invalid.problem}",
        )
        self.judgment_log.record(result, None)
        return result

    def from_verdict(
        self, request: JudgeRequest, started: float, verdict: Verdict, source: Source
    ) -> RewardResult:
        reward, note = calibrate(verdict.score, verdict.confidence, self.config.calibration)
        return self.finish(
            request,
            started,
            reward,
            source,
            f"{verdict.explanation} ({note})" if note else verdict.explanation,
            detailed_scores=verdict.detailed_scores,
            confidence=verdict.confidence,
            judge_scores=verdict.judge_scores,
            label=verdict.label,
            score=verdict.score,
        )

    def finish(
        self,
        request: JudgeRequest,
        started: float,
        reward: float | None,
        source: Source,
        explanation: str,
        score: float | None = None,
        **extra: Any,
    ) -> RewardResult:
        latency_ms = (time.monotonic() - started) * 1000
        self.metrics.record(source, latency_ms, extra.get("reason"), reward, request.answer_type)
        result = RewardResult(
            reward=reward,
            source=source,
            request_id=request.request_id,
            explanation=explanation,
            latency_ms=latency_ms,
            **extra,
        )
        self.judgment_log.record(result, request, score)
        return result
