"""Rubric rewards: a list of criteria, each one yes/no judgment, combined into one reward.
``criteria``: parsing a rubric and scoring it; ``judge``: the criteria of an item judged in one batch."""

from adapter.rubrics.criteria import Criterion, CriterionScore, RubricScore, parse_rubric, score_rubric

__all__ = ["Criterion", "CriterionScore", "RubricScore", "parse_rubric", "score_rubric"]
