"""Rubric items judged: each criterion one Yes/No judgment by the ``criterion`` profile, in one batch.

The criteria go to a reward system of their own (``criterion_config``: the item's judge, profile
``criterion``, no rule fallback, no cascade, no pre-checks: the facade pre-checks the item once,
as ``item_profile``), which the facade builds and hands in: every request
carries the question and the response first and the criterion last, so one item's criteria share
their prompt prefix in vLLM's prefix cache. In fast mode a criterion's score is P(Yes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Protocol

from adapter.config import RewardConfig
from adapter.pipeline.inputs import RewardItem
from adapter.pipeline.result import RewardDict
from adapter.rubrics.criteria import Criterion, RubricScore, score_rubric
from judge_vllm.profiles import JudgeProfile, load_profile
from judge_vllm.schemas import JudgeRequest

__all__ = ["CRITERION_PROFILE", "CriteriaRewarder", "RubricJudge", "criterion_config", "item_profile"]

CRITERION_PROFILE = "criterion"


class CriteriaRewarder(Protocol):
    """What judges the criteria: a reward system's batch method."""

    async def areward_batch(self, items: Iterable[RewardItem]) -> list[RewardDict]: ...

    def close(self) -> None: ...


@cache
def item_profile() -> JudgeProfile:
    """What a rubric item is pre-checked as: the criterion profile, without its need for a
    reference (each criterion is one; the item has none of its own)."""
    return load_profile(CRITERION_PROFILE).model_copy(update={"needs_answer": False})


def criterion_config(config: RewardConfig) -> RewardConfig:
    """The item's judge settings for criteria: profile ``criterion``, judge only (a rule cannot
    grade a criterion), no pre-checks (the item had them, once) and none of the extras that
    belong to the item's own reward."""
    return config.for_part_judge(CRITERION_PROFILE, prechecks=False)


class RubricJudge:
    """Scores a rubric item: its criteria judged in one batch, combined by ``score_rubric``."""

    def __init__(self, criteria_judge: CriteriaRewarder) -> None:
        self.criteria_judge = criteria_judge

    async def score(
        self, request: JudgeRequest, criteria: Sequence[Criterion]
    ) -> tuple[RubricScore, str | None]:
        """The rubric's score, and the first judge error when some criterion could not be judged."""
        items = [
            {"prompt": request.prompt, "completion": request.completion, "answer": c.criterion}
            for c in criteria
        ]
        results = await self.criteria_judge.areward_batch(items)
        p_yes = [None if r["source"] == "error" else r["reward"] for r in results]
        errors = [str(r.get("error") or r.get("reason")) for r in results if r["source"] == "error"]
        return score_rubric(criteria, p_yes), (errors[0] if errors else None)

    def close(self) -> None:
        """Close the criteria's reward system."""
        self.criteria_judge.close()
