"""``grade``: the rule reward for one completion, a pure function that never raises."""

from __future__ import annotations

import logging
import re
import time

from adapter.rules.answer_format import format_issue
from adapter.rules.choice import chosen_letters, gold_letters
from adapter.rules.extract import anchored_answer, trailing_expression
from adapter.rules.lookalikes import exponents_from_superscripts, fold_lookalikes, without_struck_text
from adapter.rules.number import final_number_text, numbers_equal, parse_number, signs_from_words
from adapter.rules.proof import doubt
from adapter.rules.settings import RuleSettings, RuleVerdict
from adapter.rules.symbolic import SymbolicTimeout, TooCostly, completion_matches, math_equal
from adapter.rules.text import text_match
from judge_vllm.schemas import AnswerType, coerce_text

__all__ = ["grade", "infer_answer_type"]

logger = logging.getLogger(__name__)

_MATHY = re.compile(r"\\|\^|[a-z]\s*[-+*/=]|[-+*/=]\s*[a-z]|\d[a-z]\b|sqrt|pi\b", re.IGNORECASE)
_FORMAT_GATED = {AnswerType.NUMBER.value, AnswerType.MATH_EXPRESSIONS.value, AnswerType.MULTIPLE_CHOICE.value}
_LATEX_OR_RELATION = re.compile(r"\$|\\[a-zA-Z]|[<>≤≥]|^[(\[][^\n,]*,.*[)\]]$")
DEFAULT_SETTINGS = RuleSettings()
MAX_ANSWER_CHARS = 10_000
_TYPES = frozenset(t.value for t in AnswerType)
_SIGNED_TYPES = frozenset({AnswerType.NUMBER.value, AnswerType.MATH_EXPRESSIONS.value})
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
    """Reward 0 for NUMBER, MATH_EXPRESSIONS and MULTIPLE_CHOICE completions without a final answer:
    empty, punctuation, answer-free openers, and sprays of candidates that commit to none (a spray
    behind a marker is graded: the marked answer is then compared as a whole)."""
    if kind not in _FORMAT_GATED:
        return None
    issue = format_issue(fold_lookalikes(completion), answer, kind)
    if issue is None:
        return None
    if issue.reason == "answer_spray" and anchored_answer(completion) is not None:
        return None
    return _verdict(0.0, issue.reason, issue.explanation, None)


def _verdict(reward: float, reason: str, explanation: str, extracted: str | None) -> RuleVerdict:
    return RuleVerdict(reward=reward, reason=reason, explanation=explanation, extracted=extracted)


def _grade_number(completion: str, answer: str, settings: RuleSettings) -> RuleVerdict:
    pred = final_number_text(completion, anchored_answer(completion))
    if pred is None:
        return _verdict(0.0, "no_final_answer", "no single final number found", None)
    if numbers_equal(answer, pred, settings.rel_tol, settings.abs_tol):
        return _verdict(1.0, "match", f"final number {pred} equals {answer}", pred)
    if parse_number(answer) is not None and parse_number(pred) is not None:
        return _verdict(0.0, "mismatch", f"final number {pred} differs from {answer}", pred)
    # "2^3", "\sqrt{4}" or a reference like "2\sqrt{3}": sympy decides.
    return _symbolic_verdict(answer, pred, settings, settings.symbolic_timeout)


def _undecided(err: SymbolicTimeout | TooCostly, pred: str | None, settings: RuleSettings) -> RuleVerdict:
    """Reward 0 when sympy ran out of time, or would build a number too large to bound."""
    if isinstance(err, TooCostly):
        verdict = _verdict(0.0, "too_costly", str(err), pred)
    else:
        verdict = _verdict(
            0.0, "timeout", f"symbolic checks took longer than {settings.symbolic_timeout:.2g} s", pred
        )
    logger.info("rule reward: %s (reward 0)", verdict.explanation)
    return verdict


def _symbolic_verdict(answer: str, pred: str, settings: RuleSettings, timeout_s: float) -> RuleVerdict:
    try:
        equal = math_equal(answer, pred, timeout_s)
    except (SymbolicTimeout, TooCostly) as err:
        return _undecided(err, pred, settings)
    if equal:
        return _verdict(1.0, "match", f"{pred} is equivalent to {answer}", pred)
    return _verdict(0.0, "mismatch", f"{pred} is not equivalent to {answer}", pred)


def _grade_math(completion: str, answer: str, settings: RuleSettings) -> RuleVerdict:
    """LaTeX-formatted completions: math-verify's own extraction (several boxes, delimiters);
    plain text, or when it finds nothing: our final-answer span. Both checks share one
    ``symbolic_timeout``."""
    deadline = time.monotonic() + settings.symbolic_timeout
    pred = anchored_answer(completion) or trailing_expression(completion)
    if pred is not None and numbers_equal(answer, pred, settings.rel_tol, settings.abs_tol):
        return _verdict(1.0, "match", f"{pred} equals {answer} as a number", pred)
    latex = any(mark in completion for mark in ("$", "\\(", "\\[")) or completion.count("\\boxed") > 1
    if latex:
        try:
            equal = completion_matches(answer, completion, settings.symbolic_timeout)
        except (SymbolicTimeout, TooCostly) as err:
            return _undecided(err, pred, settings)
        if equal is not None:
            shown = pred or "math-verify's extraction"
            if equal:
                return _verdict(1.0, "match", f"{shown} is equivalent to {answer}", pred)
            return _verdict(0.0, "mismatch", f"{shown} is not equivalent to {answer}", pred)
    if pred is None:
        return _verdict(0.0, "no_final_answer", "no final expression found", None)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return _undecided(SymbolicTimeout(), pred, settings)
    return _symbolic_verdict(answer, pred, settings, remaining)


def _grade_choice(prompt: str, completion: str, answer: str) -> RuleVerdict:
    gold = gold_letters(answer)
    if not gold:
        return _grade_text(completion, answer)
    chosen = chosen_letters(completion, prompt)
    if not chosen:
        return _verdict(0.0, "no_final_answer", "no committed option letter", None)
    picked = "".join(sorted(chosen))
    if chosen == gold:
        return _verdict(1.0, "match", f"chose {picked}", picked)
    return _verdict(0.0, "mismatch", f"chose {picked}, reference {''.join(sorted(gold))}", picked)


def _grade_text(completion: str, answer: str) -> RuleVerdict:
    span = anchored_answer(completion) or completion.strip().splitlines()[-1]
    ok, why = text_match(answer, span)
    return _verdict(1.0 if ok else 0.0, why, f"text {why}: {span[:80]!r} vs {answer[:80]!r}", span[:200])


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
    completion_s = without_struck_text(
        exponents_from_superscripts(_encodable(completion_s[-settings.max_completion_chars :]))
    )
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
    inferred = kind not in _TYPES
    if inferred:
        kind = infer_answer_type(answer_s)
    if kind in _SIGNED_TYPES:
        completion_s = signs_from_words(completion_s)
    gate = _format_gate(completion_s, answer_s, kind)
    if gate is not None:
        verdict = gate
    elif kind == AnswerType.NUMBER.value:
        verdict = _grade_number(completion_s, answer_s, settings)
    elif kind == AnswerType.MATH_EXPRESSIONS.value:
        verdict = _grade_math(completion_s, answer_s, settings)
    elif kind == AnswerType.MULTIPLE_CHOICE.value:
        verdict = _grade_choice(prompt_s, completion_s, answer_s)
    else:
        verdict = _grade_text(completion_s, answer_s)
    if verdict.reason == "match":
        why_not = doubt(prompt_s, completion_s, answer_s, kind, verdict.extracted)
        if why_not:
            verdict = _verdict(
                settings.unsure_reward,
                "unsure",
                f"unsure, for the judge: {why_not} (else: {verdict.explanation})",
                verdict.extracted,
            )
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
