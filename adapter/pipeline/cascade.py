"""The rule-first cascade (``strategy: cascade``): the rule reward decides where it is sure.

Sure means proven (``RuleVerdict.proven``): a final answer in the canonical grammar of its answer
type, proven equal to the reference, or proven different (numbers, letters, expressions; see
``adapter.rules.proof`` and docs/canonical-answers.md). Everything else goes to the judge.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapter.rules import RuleSettings, RuleVerdict, grade
from judge_vllm.schemas import JudgeRequest

__all__ = ["CascadeDecision", "rule_first"]


@dataclass(frozen=True)
class CascadeDecision:
    """The rule reward's verdict, and whether it decides the reward (else the judge does)."""

    verdict: RuleVerdict
    decided: bool


def rule_first(request: JudgeRequest, settings: RuleSettings) -> CascadeDecision:
    """Grade by rule and say whether that is sure enough to skip the judge (may take up to
    ``settings.symbolic_timeout``: call it off any event loop)."""
    verdict = grade(request.prompt, request.completion, request.answer, request.answer_type, settings)
    return CascadeDecision(verdict, verdict.proven)
