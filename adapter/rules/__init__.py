"""The rule reward: answer-type-aware grading that never raises and is bounded in time."""

from adapter.rules.final_answer import extract_final_answer
from adapter.rules.grader import grade, infer_answer_type
from adapter.rules.settings import RuleSettings, RuleVerdict
from adapter.rules.system import RuleRewardSystem

__all__ = [
    "RuleRewardSystem",
    "RuleSettings",
    "RuleVerdict",
    "extract_final_answer",
    "grade",
    "infer_answer_type",
]
