"""``EscalatingJudge``: a second judge asked only where the first is unsure (``escalate_to``).

The escalation is a ``JudgeBackend`` (``EscalationBackend``) behind one reward system: one loop
thread, one cache, one dispatcher and breaker; the pre-checks, the cascade and the rule fallback
run once. Its two judges are members (``adapter/dispatch/members.py``), each with its own client
(or pool over its ``judge_replicas``) and circuit breaker:

- the first is this config's judge. Its reward is calibrated as this config says
  (``calibration_file``, then ``calibration``), so the band applies to calibrated P(correct)
  when there is a curve;
- the second is the judge the reward config ``escalate_to`` names: its URL, profile, mode,
  model, key, timeouts (within this reward's judge budget), breaker and calibration.

A first reward inside ``escalation_band`` is replaced by the second judge's reward; outside the
band, or when the second judge cannot answer, the first judge's stands. When the first judge
cannot answer the reward falls back without asking the second. Only a reward's own judgment
escalates: a part (a rubric criterion, a group comparison) is the first judge's. ``judge_scores``
holds ``{"first": ..., "second": ...}`` (second None when not asked or not answered);
``get_metrics()`` adds ``escalations``, each judge's metrics, and their calls added up. The
reward system itself calibrates nothing more.
"""

from __future__ import annotations

import asyncio
import time

from adapter.config import ConfigLike, RewardConfig
from adapter.dispatch.members import JudgeMember, MemberSnapshot
from adapter.dispatch.startup_check import JudgeAddress, server_urls
from adapter.metrics_dict import MetricsDict
from adapter.pipeline.calibration import JudgeCalibration
from adapter.reward import BaseJudgeReward, judge_budget_s, judge_client_config
from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.budget import latest_judge_by
from judge_vllm.errors import JudgeError, JudgeTimeoutError
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["EscalatingJudge", "EscalationBackend"]

MIN_SECOND_S = 0.001


class EscalationBackend(JudgeBackend):
    """Two judges as one backend: the first's calibrated reward, or the second's where the first's
    is in ``band``."""

    def __init__(self, first: RewardConfig, second: RewardConfig, budget_s: float, reserve_s: float) -> None:
        self.first = JudgeMember.of("first", first, judge_client_config(first, budget_s))
        self.second = JudgeMember.of("second", second, judge_client_config(second, budget_s))
        self.first_calibration = JudgeCalibration(first, lambda: self.first.known_model)
        self.second_calibration = JudgeCalibration(second, lambda: self.second.known_model)
        self.band = first.escalation_band
        # The second judge gets what is left of the judge budget after the first, less the time
        # an item may have waited for its batch.
        self._budget_s = budget_s - reserve_s
        self.escalations = 0

    @property
    def known_model(self) -> str | None:
        """Both judges' models, their calibrations and the band, once both are known: the
        escalation's verdicts are cached under it."""
        first, second = self.first.known_model, self.second.known_model
        return None if first is None or second is None else self._name(first, second)

    async def model_name(self) -> str:
        """Both judges' models, asked of their servers if need be (fails when one cannot say)."""
        first, second = await asyncio.gather(self.first.model_name(), self.second.model_name())
        return self._name(first, second)

    def endpoint(self, items: int) -> str:
        """Where a call goes, for logs: the first judge (the second only where it is unsure)."""
        return "the first judge, then the second where it is unsure"

    @property
    def context_cuts(self) -> int:
        return self.first.context_cuts + self.second.context_cuts

    @property
    def coarse_fast_verdicts(self) -> int:
        return self.first.coarse_fast_verdicts + self.second.coarse_fast_verdicts

    async def aclose(self) -> None:
        """Close both judges' connections."""
        await asyncio.gather(self.first.aclose(), self.second.aclose())

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """The first judge on every request (one call); the second on the main judgments whose
        first reward is in the band (one call), within what is left of their budget (the judge
        budget from now for requests that carry none)."""
        started = time.monotonic()
        firsts = await self.first.judge_many(requests)
        outcomes: list[Outcome] = []
        unsure: dict[int, Verdict] = {}  # the first judge's reward in the band, by request
        for i, (request, outcome) in enumerate(zip(requests, firsts, strict=True)):
            if request.profile is not None:  # a part: the first judge's, as it is
                outcomes.append(outcome)
            elif isinstance(outcome, JudgeError):
                outcomes.append(type(outcome)(f"first judge: {outcome}"))
            else:
                calibrated = self.first_calibration.apply(outcome.score, outcome.confidence, request)
                first = Verdict(score=calibrated.reward, explanation=calibrated.explained(outcome.explanation),
                                judge_scores={"first": calibrated.reward, "second": None})  # fmt: skip
                outcomes.append(first)
                if self._in_band(first.score):
                    unsure[i] = first
        if unsure:
            self.escalations += len(unsure)
            escalated = [requests[i] for i in unsure]
            judge_by = latest_judge_by([r.budget for r in escalated])
            if judge_by is None:  # asked outside a reward call: the judge budget from the start
                judge_by = started + self._budget_s
            seconds = await self._second(escalated, max(judge_by - time.monotonic(), MIN_SECOND_S))
            for (i, first), second in zip(unsure.items(), seconds, strict=True):
                outcomes[i] = self._escalated(first, second, requests[i])
        return outcomes

    def complete(self, verdict: Verdict) -> bool:
        """Whether ``verdict`` is final: not a first reward in the band that the second judge could
        not answer (asked again, it may)."""
        scores = verdict.judge_scores or {}
        first = scores.get("first")
        return first is None or scores.get("second") is not None or not self._in_band(first)

    def snapshot(self) -> dict[str, MemberSnapshot]:
        """Both judges' metrics, as ``first`` and ``second``."""
        return {"first": self.first.snapshot(), "second": self.second.snapshot()}

    def _in_band(self, reward: float) -> bool:
        low, high = self.band
        return low <= reward <= high

    def _name(self, first: str, second: str) -> str:
        low, high = self.band
        return (
            f"{_named(first, self.first_calibration)} escalating [{low:g}, {high:g}] "
            f"to {_named(second, self.second_calibration)}"
        )

    async def _second(self, requests: list[JudgeRequest], budget_s: float) -> list[Outcome]:
        try:
            return await asyncio.wait_for(self.second.judge_many(requests), budget_s)
        except (TimeoutError, asyncio.TimeoutError):  # the same class only from Python 3.11
            late = JudgeTimeoutError(f"no answer within the {budget_s:.1f} s left after the first judge")
            return [late] * len(requests)

    def _escalated(self, first: Verdict, second: Outcome, request: JudgeRequest) -> Verdict:
        """The second judge's calibrated reward, or the first's when the second did not answer."""
        if isinstance(second, JudgeError):
            explanation = (
                f"first judge {first.score:.2f} unsure, second judge unavailable ({second.reason}): "
                f"{first.explanation}"
            )
            return first.model_copy(update={"explanation": explanation})
        calibrated = self.second_calibration.apply(second.score, second.confidence, request)
        low, high = self.band
        return Verdict(
            score=calibrated.reward,
            explanation=f"escalated: first judge {first.score:.2f} in [{low:g}, {high:g}]; "
            f"second judge: {calibrated.explained(second.explanation)}",
            judge_scores={"first": first.score, "second": calibrated.reward},
        )


def _named(model: str, calibration: JudgeCalibration) -> str:
    fingerprint = calibration.fingerprint
    return f"{model} ({fingerprint})" if fingerprint else model


class EscalatingJudge(BaseJudgeReward):
    """A judge reward that asks ``escalate_to``'s judge where its own reward is unsure: one reward
    system whose backend is an ``EscalationBackend``."""

    def __init__(self, config: ConfigLike = None) -> None:
        shared = RewardConfig.from_any(config)
        if shared.escalate_to is None:
            raise ValueError("EscalatingJudge needs escalate_to: the second judge's reward config")
        # The judges' rewards are calibrated in the backend (the band needs the first's); never again.
        outer = shared.model_copy(
            update={
                "calibration_file": None,
                "trajectory_calibration_file": None,
                "calibration": None,
                "escalate_to": None,
            }
        )
        budget_s = judge_budget_s(outer)
        second = RewardConfig.from_any(shared.escalate_to)
        self.escalation = EscalationBackend(shared, second, budget_s, outer.batch_wait)
        self._address = JudgeAddress(
            server_urls(shared, shared.judge_replicas) + server_urls(second, second.judge_replicas)
        )
        super().__init__(outer, backend=self.escalation)

    def _judge_address(self) -> JudgeAddress:
        """Both judges: the first's servers, then the second's."""
        return self._address

    @property
    def band(self) -> tuple[float, float]:
        """``escalation_band``: first rewards in [low, high] go to the second judge."""
        return self.escalation.band

    @property
    def escalations(self) -> int:
        """Rewards the second judge was asked for so far."""
        return self.escalation.escalations

    def _cacheable(self, verdict: Verdict) -> bool:
        return self.escalation.complete(verdict)

    def get_metrics(self) -> MetricsDict:
        """This system's metrics, escalations, both judges' metrics, and their calls added up."""
        snapshot = super().get_metrics()
        judges = self.escalation.snapshot()
        snapshot["escalations"] = self.escalation.escalations
        snapshot["judges"] = judges
        snapshot["judge_calls"] = sum(m["judge_calls"] for m in judges.values())
        snapshot["model"] = judges["first"]["model"]
        return snapshot
