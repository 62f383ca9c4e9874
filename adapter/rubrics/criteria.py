"""A rubric's score: its criteria (``adapter.settings.Criterion``), each judged yes/no on its own,
combined into one reward.

``score_rubric`` takes each criterion's P(yes) (the judge's probability in
fast mode, 1.0 / 0.0 for a sampled yes / no; None when the criterion could not be judged) and
gives the weighted mean over the judged criteria, 0 when any judged veto criterion is "no"
(P(yes) < 0.5), and None when no criterion was judged or when a veto criterion was not judged
and no other veto said "no" (``unjudged_vetoes``): the other criteria cannot prove that a veto
would have passed, so such an item is unsure, never paid (the caller falls back, with the reason).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from adapter.settings import Criterion

__all__ = ["VETO_NOT_JUDGED", "CriterionScore", "RubricScore", "score_rubric"]

VETO_BELOW = 0.5
VETO_NOT_JUDGED = "veto_not_judged"  # the reason a rubric item is unsure when a veto went unanswered


class CriterionScore(BaseModel):
    """A criterion and what the judge said of it (``p_yes`` None: not judged)."""

    model_config = ConfigDict(frozen=True)

    criterion: str
    weight: float
    veto: bool
    p_yes: float | None


class RubricScore(BaseModel):
    """The rubric's reward (None when no criterion, or not every veto criterion, was judged) and
    each criterion's score; ``unjudged_vetoes`` the veto criteria the judge did not answer."""

    model_config = ConfigDict(frozen=True)

    reward: float | None
    criteria: list[CriterionScore]
    vetoed_by: list[str]
    explanation: str
    unjudged_vetoes: list[str] = []



def score_rubric(criteria: Sequence[Criterion], p_yes: Sequence[float | None]) -> RubricScore:
    """The rubric reward from each criterion's P(yes), in the same order."""
    if len(criteria) != len(p_yes):
        raise ValueError(f"{len(criteria)} criteria but {len(p_yes)} judgments")
    scored = [
        CriterionScore(criterion=c.criterion, weight=c.weight, veto=c.veto, p_yes=p)
        for c, p in zip(criteria, p_yes, strict=True)
    ]
    judged = [s for s in scored if s.p_yes is not None]
    vetoed_by = [s.criterion for s in judged if s.veto and s.p_yes is not None and s.p_yes < VETO_BELOW]
    if not judged:
        return RubricScore(reward=None, criteria=scored, vetoed_by=[], explanation="no criterion was judged")
    mean = sum(s.weight * (s.p_yes or 0.0) for s in judged) / sum(s.weight for s in judged)
    missing = len(scored) - len(judged)
    note = f"; {missing} of {len(scored)} criteria not judged" if missing else ""
    if vetoed_by:
        return RubricScore(
            reward=0.0,
            criteria=scored,
            vetoed_by=vetoed_by,
            explanation=f"vetoed by {len(vetoed_by)} criterion(s): {vetoed_by[0]!r}{note}",
        )
    unjudged_vetoes = [s.criterion for s in scored if s.veto and s.p_yes is None]
    if unjudged_vetoes:
        return RubricScore(
            reward=None,
            criteria=scored,
            vetoed_by=[],
            unjudged_vetoes=unjudged_vetoes,
            explanation=f"veto criterion {unjudged_vetoes[0]!r} was not judged{note}",
        )
    return RubricScore(
        reward=mean,
        criteria=scored,
        vetoed_by=[],
        explanation=f"weighted mean {mean:.2f} over {len(judged)} criteria{note}",
    )
