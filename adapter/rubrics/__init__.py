"""Rubric rewards: a list of criteria, each one yes/no judgment, combined into one reward.
``criteria``: scoring a rubric (read by ``adapter.settings.parse_rubric``); ``judge``: the criteria
of an item judged in one batch."""

from adapter.rubrics.criteria import CriterionScore, RubricScore, score_rubric
from adapter.settings import Criterion, parse_rubric

__all__ = ["Criterion", "CriterionScore", "RubricScore", "parse_rubric", "score_rubric"]
