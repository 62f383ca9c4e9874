"""Rubric items judged: each criterion one Yes/No judgment by the ``criterion`` profile, in one batch.

The criteria are requests asked by profile ``criterion`` through the reward system's one seam
(``adapter/dispatch/judgments.py``): its cache, dispatcher and breaker, judge only (a rule cannot
grade a criterion), no pre-checks (the facade pre-checks the item once, as ``item_profile``).
Every request carries the question and the response first and the criterion last, so one item's
criteria share their prompt prefix in vLLM's prefix cache. In fast mode a criterion's score is
P(Yes).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from adapter.dispatch.judgments import PartJudge
from adapter.rubrics.criteria import RubricScore, score_rubric
from adapter.settings import Criterion
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeError
from judge_vllm.profiles import JudgeProfile, load_profile
from judge_vllm.schemas import JudgeRequest

__all__ = ["CRITERION_PROFILE", "RubricJudge", "item_profile"]

CRITERION_PROFILE = "criterion"


@cache
def item_profile() -> JudgeProfile:
    """What a rubric item is pre-checked as: the criterion profile, without its need for a
    reference (each criterion is one; the item has none of its own)."""
    return load_profile(CRITERION_PROFILE).model_copy(update={"needs_answer": False})


class RubricJudge:
    """Scores a rubric item: its criteria judged in one batch, combined by ``score_rubric``."""

    def __init__(self, judge: PartJudge) -> None:
        self.judge = judge

    async def score(
        self, request: JudgeRequest, criteria: Sequence[Criterion], budget: Budget
    ) -> tuple[RubricScore, str | None]:
        """The rubric's score within ``budget``, and the first judge error when some criterion
        could not be judged."""
        asked = [
            JudgeRequest(
                prompt=request.prompt,
                completion=request.completion,
                answer=c.criterion,
                profile=CRITERION_PROFILE,
                trajectory=request.trajectory,
                budget=budget,
            )
            for c in criteria
        ]
        judged = await self.judge(asked)
        p_yes = [None if isinstance(j.outcome, JudgeError) else j.outcome.score for j in judged]
        errors = [str(j.outcome) for j in judged if isinstance(j.outcome, JudgeError)]
        return score_rubric(criteria, p_yes), (errors[0] if errors else None)
