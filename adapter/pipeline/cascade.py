"""The rule-first cascade (``strategy: cascade``): the rule reward decides where it is sure.

Sure means: a proven match (one final answer, committed to and verified equal: see
``adapter.rules.proof`` for what a match must survive), or, for NUMBER and MULTIPLE_CHOICE, a
clear mismatch. Everything else goes to the judge: "unsure" (several answers, hedges, both
polarities, a mention without commitment), no answer extracted, TEXT and expression mismatches,
expressions the rules cannot parse or bound in time. On the bundled labelled sample the rule
reward has no false positive, which is what makes its matches safe to keep (docs/robustness.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from adapter.rules import RuleSettings, RuleVerdict, grade, infer_answer_type
from judge_vllm.schemas import AnswerType, JudgeRequest

__all__ = ["CascadeDecision", "rule_first"]

_SURE_MISMATCH_TYPES = frozenset({AnswerType.NUMBER.value, AnswerType.MULTIPLE_CHOICE.value})


@dataclass(frozen=True)
class CascadeDecision:
    """The rule reward's verdict, and whether it decides the reward (else the judge does)."""

    verdict: RuleVerdict
    decided: bool


def rule_first(request: JudgeRequest, settings: RuleSettings) -> CascadeDecision:
    """Grade by rule and say whether that is sure enough to skip the judge (may take up to
    ``settings.symbolic_timeout``: call it off any event loop)."""
    verdict = grade(request.prompt, request.completion, request.answer, request.answer_type, settings)
    kind = request.answer_type or infer_answer_type(request.answer.strip())
    sure_match = verdict.reason == "match" and verdict.reward == 1.0
    sure_mismatch = verdict.reason == "mismatch" and kind in _SURE_MISMATCH_TYPES
    return CascadeDecision(verdict, sure_match or sure_mismatch)
