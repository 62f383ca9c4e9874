"""``grade``: the rule reward for one completion, a pure function that never raises."""

from __future__ import annotations

import logging
import re

from adapter.rules.answer_format import format_issue
from adapter.rules.answer_types import GRAMMARS
from adapter.rules.choice import gold_letters
from adapter.rules.extraction.numbers import parse_number
from adapter.rules.lookalikes import exponents_from_superscripts, fold_lookalikes
from adapter.rules.proof import Proof, prove
from adapter.rules.settings import RuleSettings, RuleVerdict
from judge_vllm.schemas import AnswerType, coerce_text

__all__ = ["grade", "infer_answer_type"]

logger = logging.getLogger(__name__)

_MATHY = re.compile(r"\\|\^|[a-z]\s*[-+*/=]|[-+*/=]\s*[a-z]|\d[a-z]\b|sqrt|pi\b", re.IGNORECASE)
_LATEX_OR_RELATION = re.compile(r"\$|\\[a-zA-Z]|[<>≤≥]|^[(\[][^\n,]*,.*[)\]]$")
DEFAULT_SETTINGS = RuleSettings()
MAX_ANSWER_CHARS = 10_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def infer_answer_type(answer: str) -> str:
    """A best guess for rows without an answer_type: choice letters, number, math, or text."""
    if gold_letters(answer) and re.fullmatch(
        r"\(?[A-J]\)?|[A-J]{2,10}|[A-J](?:\s*,\s*[A-J])+", answer.strip()
    ):
        return AnswerType.MULTIPLE_CHOICE.value
    if _LATEX_OR_RELATION.search(answer.strip()):
        return AnswerType.MATH_EXPRESSIONS.value
    if parse_number(answer) is not None:
        return AnswerType.NUMBER.value
    if _MATHY.search(answer):
        return AnswerType.MATH_EXPRESSIONS.value
    return AnswerType.TEXT.value


def _format_gate(completion: str, answer: str, kind: str) -> RuleVerdict | None:
    """Reward 0 for a completion without a final answer where its type says so (``format_gated``):
    empty, punctuation, answer-free openers, and sprays of candidates that commit to none
    (``answer_format.uncommitted_answer``: where a marker says what the answer is, only that)."""
    grammar = GRAMMARS[kind]
    if not grammar.format_gated:
        return None
    issue = format_issue(fold_lookalikes(completion), answer, grammar.needs_a_number)
    if issue is None:
        return None
    return _verdict(0.0, issue.reason, issue.explanation, None)


def _verdict(reward: float, reason: str, explanation: str, extracted: str | None) -> RuleVerdict:
    return RuleVerdict(reward=reward, reason=reason, explanation=explanation, extracted=extracted)


def _from_proof(proof: Proof, settings: RuleSettings) -> RuleVerdict:
    """1 for a proven match, 0 for a proven mismatch, else the unsure reward."""
    reward = {"match": 1.0, "mismatch": 0.0}.get(proof.outcome, settings.unsure_reward)
    return RuleVerdict(
        reward=reward, reason=proof.outcome, explanation=proof.explanation, extracted=proof.extracted,
        proven=proof.proven,
    )  # fmt: skip


def _encodable(text: str) -> str:
    """Lone surrogates (left by a bad decode upstream) as U+FFFD: a verdict quotes the texts, and
    must encode as UTF-8 for JSON and logs."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def _type_note(answer_type: object, kind: str) -> str:
    if isinstance(answer_type, str) and answer_type:
        return f" (answer_type {answer_type[:40]!r} unknown: graded as {kind})"
    if answer_type is not None and not isinstance(answer_type, str):
        return f" (answer_type of type {type(answer_type).__name__} ignored: graded as {kind})"
    return f" (graded as {kind})"


def _grade(
    prompt: object, completion: object, answer: object, answer_type: object, settings: RuleSettings
) -> RuleVerdict:
    try:
        prompt_s, completion_s, answer_s = (coerce_text(v, n) for v, n in
                                             ((prompt, "prompt"), (completion, "completion"), (answer, "answer")))  # fmt: skip
    except ValueError as err:
        return _verdict(0.0, "invalid_input", str(err), None)
    completion_s = _encodable(completion_s)
    answer_s = exponents_from_superscripts(answer_s.strip())
    if not completion_s.strip():
        return _verdict(0.0, "empty", "empty completion", None)
    if not answer_s:
        return _verdict(0.0, "no_reference", "no reference answer to compare with", None)
    if len(answer_s) > MAX_ANSWER_CHARS:
        return _verdict(
            0.0, "invalid_input", f"reference answer longer than {MAX_ANSWER_CHARS} characters", None
        )
    answer_s = _encodable(answer_s)
    kind = answer_type.strip().upper() if isinstance(answer_type, str) else ""
    inferred = kind not in GRAMMARS
    if inferred:
        kind = infer_answer_type(answer_s)
    too_long = len(completion_s) > settings.max_completion_chars  # the proof says so, unread
    gate = None if too_long else _format_gate(completion_s, answer_s, kind)
    verdict = gate or _from_proof(prove(prompt_s, completion_s, answer_s, kind, settings), settings)
    if inferred:
        verdict = verdict.model_copy(
            update={"explanation": verdict.explanation + _type_note(answer_type, kind)}
        )
    return verdict


def grade(
    prompt: object,
    completion: object,
    answer: object,
    answer_type: object = None,
    settings: RuleSettings = DEFAULT_SETTINGS,
) -> RuleVerdict:
    """The rule reward in [0, 1] for one completion; never raises, on any input (texts of any type,
    lone surrogates, any size; an answer_type that is not a string is ignored)."""
    try:
        return _grade(prompt, completion, answer, answer_type, settings)
    except Exception as err:  # a defined reward, never an exception into the trainer
        logger.warning("rule reward failed on malformed input (%s: %s); reward 0", type(err).__name__, err)
        return _verdict(0.0, "unparseable", f"could not grade: {type(err).__name__}", None)
