"""The rule-first cascade (``strategy: cascade``): the rule reward decides where it is sure.

Sure means proven (``RuleVerdict.proven``): a final answer in the canonical grammar of its answer
type, proven equal to the reference, or proven different (numbers, letters, expressions; see
``adapter.rules.proof`` and docs/canonical-answers.md). Everything else goes to the judge.

An agent's final reply proven equal is no proof that the task was done when the judge is shown
its steps (``trajectory_view: full``): a right number after a failed tool call is a guess, and
only the trace says so. Such a row goes to the judge; a final reply proven wrong stays a sure 0.
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
    paid_unseen_trace = request.trajectory is not None and verdict.reward > 0
    return CascadeDecision(verdict, verdict.proven and not paid_unseen_trace)
