"""The last step of every reward: the result, counted in the metrics (and the fallback share's
window) and offered to the judgment log.

Every ``RewardResult`` the reward system returns is made here: bad input (``invalid``), a
verdict from the judge or the cache (``from_verdict``: the ``calibration_file`` curve, then the
confidence shrink), and the rule's or the fallback's rewards (``finish``).

``finish`` is also the one check every reward passes on its way out: None (source ``error``) or
a finite number in [0, 1]. Anything else (a NaN from a broken curve or a user's backend, an
out-of-range sum) never reaches the trainer: it becomes the fallback's unsure reward (source
``rule_fallback``), or None (source ``error``) with ``fallback_to_rule: false``, reason
``invalid_reward`` and ``error`` saying what the value was and where it came from. An agent's
``step_scores`` leave as finite numbers in [0, 1] or None (``ProcessMix.checked``): a turn's
score that is not one is left out, and the reward is then mixed from what is left.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable

from typing_extensions import TypedDict, Unpack

from adapter.config import RewardConfig
from adapter.observability.fallback_watch import FallbackWatch
from adapter.observability.integrity import JudgeIntegrity
from adapter.observability.judgment_log import JudgmentLog
from adapter.observability.metrics import INVALID_INPUT, RewardMetrics
from adapter.pipeline.calibration import JudgeCalibration
from adapter.pipeline.inputs import InvalidInput
from adapter.result import AnchoredMix, GroupComparison, ProcessMix, RewardResult, Source
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["INVALID_REWARD", "ResultDetails", "RewardFinisher", "reward_problem"]

logger = logging.getLogger(__name__)

INVALID_REWARD = "invalid_reward"


def reward_problem(reward: float | None) -> str | None:
    """Why ``reward`` may not leave the system (None when it may: None, or finite in [0, 1])."""
    if reward is None or (math.isfinite(reward) and 0.0 <= reward <= 1.0):
        return None
    return f"reward {reward!r} is not a finite number in [0, 1]"


class ResultDetails(TypedDict, total=False):
    """The ``RewardResult`` fields a step may add to a reward, beyond its value and source."""

    detailed_scores: dict[str, float] | None
    confidence: float | None
    reason: str | None
    error: str | None
    judge_scores: dict[str, float | None] | None
    label: str | None
    judge_score: float | None
    calibration: str | None
    comparisons: list[GroupComparison] | None
    step_scores: list[float | None] | None


class RewardFinisher:
    """Builds the results of one reward system, and records each in its metrics, its judgment log
    and its integrity figures (the share of rewards that fell back)."""

    def __init__(
        self,
        config: RewardConfig,
        metrics: RewardMetrics,
        judgment_log: JudgmentLog,
        model: Callable[[], str | None],
        fallback_watch: FallbackWatch | None = None,
        integrity: JudgeIntegrity | None = None,
    ) -> None:
        self.config = config
        self.metrics = metrics
        self.integrity = integrity
        self.judgment_log = judgment_log
        self.fallback_watch = fallback_watch
        self._invalid_rewards = itertools.count(1)
        self._invalid_step_scores = itertools.count(1)
        self.calibration = JudgeCalibration(config, model)

    def invalid(self, invalid: InvalidInput) -> RewardResult:
        """The defined reward for input that cannot be judged: 0, by rule, with the reason."""
        self.metrics.record("rule", 0.0, INVALID_INPUT, 0.0, None)
        if self.integrity is not None:
            self.integrity.record_reward("rule")
        result = RewardResult(
            reward=0.0,
            source="rule",
            request_id=invalid.request_id,
            reason=INVALID_INPUT,
            explanation=f"invalid input, reward 0: {invalid.problem}",
        )
        self.judgment_log.record(result, None)
        return result

    def from_verdict(
        self,
        request: JudgeRequest,
        started: float,
        verdict: Verdict,
        source: Source,
        process: ProcessMix | None = None,
        anchor: AnchoredMix | None = None,
    ) -> RewardResult:
        """The reward of the judge's ``verdict`` (calibrated), mixed with an agent's per-turn
        scores when ``process`` holds them, or with a group member's comparisons when ``anchor``
        does (the verdict is then the member's own judgment: docs/groups.md)."""
        calibrated = self.calibration.apply(verdict.score, verdict.confidence, request)
        reward, steps, compared = calibrated.reward, None, None
        if process is not None:
            process = self._checked(process)
            reward, steps = process.mixed(reward)
        if anchor is not None:
            reward, compared = anchor.mixed(reward)
        notes = "; ".join(note for note in (calibrated.notes, steps, compared) if note)
        return self.finish(
            request,
            started,
            reward,
            source,
            f"{verdict.explanation} ({notes})" if notes else verdict.explanation,
            detailed_scores=verdict.detailed_scores,
            confidence=verdict.confidence,
            judge_scores=verdict.judge_scores,
            label=verdict.label,
            judge_score=verdict.score,
            calibration=calibrated.applied,
            score=verdict.score,
            step_scores=None if process is None else process.scores,
            comparisons=None if anchor is None else anchor.comparisons,
            reason=None if anchor is None else anchor.reason,
        )

    def finish(
        self,
        request: JudgeRequest,
        started: float,
        reward: float | None,
        source: Source,
        explanation: str,
        score: float | None = None,
        **extra: Unpack[ResultDetails],
    ) -> RewardResult:
        problem = reward_problem(reward)
        if problem is not None:
            reward, source, explanation, extra = self._refused(problem, source, explanation, extra)
        latency_ms = (time.monotonic() - started) * 1000
        self.metrics.record(source, latency_ms, extra.get("reason"), reward, request.answer_type)
        if self.fallback_watch is not None:
            self.fallback_watch.record(source, extra.get("reason"))
        if self.integrity is not None:
            self.integrity.record_reward(source)
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

    def _checked(self, process: ProcessMix) -> ProcessMix:
        """``process`` with every turn score a finite number in [0, 1] or None; a bad one said."""
        checked = process.checked()
        if checked is not process:
            count = next(self._invalid_step_scores)
            if count == 1 or count % 1000 == 0:  # a bug upstream: said, but never once per turn
                logger.warning("invalid step scores #%d left out: %r", count, process.scores)
        return checked

    def _refused(
        self, problem: str, source: Source, explanation: str, extra: ResultDetails
    ) -> tuple[float | None, Source, str, ResultDetails]:
        """The defined outcome for a reward that may not leave: the unsure reward, or None."""
        error = f"{problem} (from source {source}: {explanation})"
        count = next(self._invalid_rewards)
        if count == 1 or count % 1000 == 0:  # a bug upstream: said, but never once per reward
            logger.warning("invalid reward #%d refused: %s", count, error)
        details: ResultDetails = {**extra, "reason": INVALID_REWARD, "error": error}
        if not self.config.fallback_to_rule:
            return None, "error", error, details
        explanation = f"rule fallback ({INVALID_REWARD}): {problem}: the unsure reward"
        return self.config.rules.unsure_reward, "rule_fallback", explanation, details
