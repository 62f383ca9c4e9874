"""A rubric item's reward: pre-checked once, its criteria judged (``RubricJudge``), combined.

The item's own ``rubric``, or the config's for every item. The weighted mean of the criteria
judged; 0 on a failed veto; the fallback's unsure reward when no criterion, or a veto criterion,
could not be judged (no rule can grade a rubric).
"""

from __future__ import annotations

from adapter.dispatch.judgments import PartJudge
from adapter.observability.metrics import INVALID_INPUT
from adapter.pipeline.steps import RewardSteps
from adapter.result import RewardResult
from adapter.rubrics import parse_rubric
from adapter.rubrics.criteria import VETO_NOT_JUDGED
from adapter.rubrics.judge import RubricJudge, item_profile
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeError, JudgeInputError, JudgeUnavailableError
from judge_vllm.schemas import JudgeRequest

__all__ = ["RubricScoring"]


class RubricScoring:
    """Scores the rubric items of one reward system through its steps and its one seam."""

    def __init__(self, steps: RewardSteps, judge: PartJudge) -> None:
        self._steps = steps
        self._judge = RubricJudge(judge)

    async def score(self, request: JudgeRequest, budget: Budget) -> RewardResult:
        """The rubric item's reward within ``budget``."""
        finish = self._steps.finisher.finish
        try:
            criteria = parse_rubric(request.metadata.get("rubric", self._steps.config.rubric))
        except JudgeInputError as err:
            return finish(
                request, budget.started, 0.0, "rule", f"invalid rubric: {err}", reason=INVALID_INPUT
            )
        checked = self._steps.prechecked(request, budget, item_profile())  # once per item, not per criterion
        if isinstance(checked, RewardResult):
            return checked
        scored, error = await self._judge.score(checked, criteria, budget)
        per_criterion = {s.criterion: s.p_yes for s in scored.criteria if s.p_yes is not None}
        if scored.reward is not None:
            return finish(
                request, budget.started, scored.reward, "judge", scored.explanation,
                detailed_scores=per_criterion, reason="vetoed" if scored.vetoed_by else None,
            )  # fmt: skip
        if scored.unjudged_vetoes:  # the other criteria cannot prove the veto would have passed
            failed = JudgeUnavailableError(f"{scored.explanation}: {error}")
            return self.unjudged(request, budget, failed, VETO_NOT_JUDGED, scored.explanation)
        failed = JudgeUnavailableError(f"no rubric criterion could be judged: {error}")
        return self.unjudged(request, budget, failed, failed.reason, failed.reason)

    def unjudged(
        self, request: JudgeRequest, budget: Budget, failed: JudgeError, reason: str, why: str
    ) -> RewardResult:
        """A rubric item its judge could not score: the unsure reward (no rule grades a rubric)."""
        config, finish = self._steps.config, self._steps.finisher.finish
        if not config.fallback_to_rule:
            return finish(
                request, budget.started, None, "error", str(failed), reason=reason, error=str(failed)
            )
        explanation = f"rule fallback ({why}): no rule can grade a rubric: the unsure reward"
        return finish(
            request, budget.started, config.rules.unsure_reward, "rule_fallback", explanation,
            reason=reason, error=str(failed),
        )  # fmt: skip
