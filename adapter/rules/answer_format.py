"""Answer format: completions that commit to no final answer, so their reward is 0 by rule.

Generative judges reward "master key" completions (":", ".", "Let's solve this problem step by
step.") (arXiv 2507.08794), and a list of candidates rewards the policy for hedging. The rule
reward gates NUMBER, MATH_EXPRESSIONS and MULTIPLE_CHOICE on these checks; the judge's pre-checks
(``adapter.pipeline.prechecks``) run them too, around their own defences. Each check is a pure function of
the texts, linear in their length, and expects the completion folded by
``adapter.rules.lookalikes.fold_lookalikes`` (so that "Ｌｅｔ'ｓ ｔｈｉｎｋ" is an opener too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapter.rules.extraction.anchors import anchored_answer

__all__ = ["MASTER_KEYS", "FormatIssue", "format_issue", "missing_answer", "uncommitted_answer"]

# Normalised (lowercase, no punctuation, single spaces) openers that carry no answer.
MASTER_KEYS = frozenset(
    {
        "",
        "thought process",
        "lets solve this problem step by step",
        "lets solve this step by step",
        "lets think step by step",
        "let me think step by step",
        "lets solve this",
        "let me solve this",
        "solution",
        "the solution is",
        "the answer is",
        "answer",
        "final answer",
        "the final answer is",
        "step 1",
        "i think the answer is",
        "解",
        "答案",
        "correct",
        "yes",
        "this is correct",
        "the answer is correct",
    }
)
# The longest master key's length: a text whose start alone normalises longer is none of them.
_MASTER_KEY_CHARS = max(len(key) for key in MASTER_KEYS)
# How much of a text is normalised to tell (normalising a 15 KB completion whole took ~1 ms).
_MASTER_KEY_PROBE_CHARS = 256
_NON_WORD = re.compile(r"[^\w\s]+", re.UNICODE)
_SPACES = re.compile(r"\s+")
_DIGIT_OR_NUMBER_WORD = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|billion|half|third|quarter)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_LETTER = re.compile(r"(?<![A-Za-z])\(?([A-J])\)?(?![A-Za-z])")
_WORD = re.compile(r"\S+")
# A word that is one candidate once the punctuation around it is stripped: "42,", "(C)", "[B]".
_AROUND = r"[.,;:()\[\]{}]*"
_TOKENS = {
    "number": re.compile(rf"(?<!\S){_AROUND}[-+]?\d+(?:[.,]\d+)*{_AROUND}(?!\S)"),
    "letter": re.compile(rf"(?<!\S){_AROUND}[A-J]{_AROUND}(?!\S)"),
}
_ALNUM = re.compile(r"[^\W_]")
_OPTION_SET = re.compile(r"[A-J ,()]+")
SPRAY_MIN_CANDIDATES = {"number": 5, "letter": 3}
SPRAY_MIN_SHARE = 0.6
# A hedged list ("40, 41 or 42") needs one more letter candidate but a smaller share of the text.
HEDGED_MIN_SHARE = 0.4


@dataclass(frozen=True)
class FormatIssue:
    """Why a completion has no final answer to grade."""

    reason: str
    explanation: str


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.lower().replace("'", ""))).strip()


def _count(pattern: re.Pattern[str], text: str) -> int:
    """Matches of ``pattern`` in ``text``, counted in C (no list of millions of words)."""
    return pattern.subn("", text)[1]


def _spray(completion: str, answer: str) -> bool:
    """A completion that is mostly a list of candidate answers, more than the reference has."""
    words = _count(_WORD, completion)
    if not words:
        return False
    hedged = bool(_HEDGE.search(completion)) and "=" not in completion  # "=" means shown work
    for kind, pattern in (("number", _NUMBER), ("letter", _LETTER)):
        share = _count(_TOKENS[kind], completion) / words
        if share < min(SPRAY_MIN_SHARE, HEDGED_MIN_SHARE):
            continue  # mostly prose: no need to collect the candidates
        candidates = set(pattern.findall(completion))
        reference = set(pattern.findall(answer))
        if kind == "letter" and _OPTION_SET.fullmatch(answer.strip()):
            reference = set(re.findall(r"[A-J]", answer))  # multi-select such as "ABD"
        needed = max(SPRAY_MIN_CANDIDATES[kind], len(reference) + 2)
        if len(candidates) >= needed and share >= SPRAY_MIN_SHARE:
            return True
        hedged_needed = needed + (1 if kind == "letter" else 0)
        if hedged and len(candidates) >= hedged_needed and share >= HEDGED_MIN_SHARE:
            return True
    return False


def _one_candidate(committed: str | None) -> bool:
    """Whether a marked answer names at most one number and at most one letter."""
    return committed is not None and all(len(set(p.findall(committed))) <= 1 for p in (_NUMBER, _LETTER))


def missing_answer(completion: str) -> FormatIssue | None:
    """Empty, punctuation only, or a known answer-free opener ("Let's think step by step.")."""
    stripped = completion.strip()
    if not stripped:
        return FormatIssue("empty", "empty completion")
    if not _ALNUM.search(stripped):
        return FormatIssue("punctuation_only", "completion has no letters or digits")
    # A text normalises to at least as many characters as its start does (the start's last run of
    # punctuation or space is at most one space, and it is stripped), so a start longer than every
    # master key settles it without normalising the whole text.
    if (
        len(_normalise(stripped[:_MASTER_KEY_PROBE_CHARS])) <= _MASTER_KEY_CHARS
        and _normalise(stripped) in MASTER_KEYS
    ):
        return FormatIssue("master_key", "completion is a known answer-free opener")
    return None


def uncommitted_answer(completion: str, answer: str, needs_a_number: bool = False) -> FormatIssue | None:
    """A spray of candidate answers, or no number at all where the answer type needs one. A
    completion whose marker, box or bold span names one candidate commits to it: a reasoning line
    that lists divisors ("1, 2, 3, 6, 9, 18") above "The answer is: 6" is no spray."""
    if _spray(completion.strip(), answer) and not _one_candidate(anchored_answer(completion)):
        return FormatIssue("answer_spray", "completion lists many candidate answers")
    if needs_a_number and not _DIGIT_OR_NUMBER_WORD.search(completion):
        return FormatIssue("no_final_answer", "a number is the answer, and the completion has none")
    return None


def format_issue(completion: str, answer: str, needs_a_number: bool = False) -> FormatIssue | None:
    """The first reason the completion has no final answer to grade, else None."""
    return missing_answer(completion) or uncommitted_answer(completion, answer, needs_a_number)
