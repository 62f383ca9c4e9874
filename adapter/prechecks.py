"""Pre-checks: completions that get a defined reward without ever reaching the judge.

Generative judges reward "master key" completions (":", ".", "Let's solve this problem
step by step.") and can be steered by text that imitates a chat turn (arXiv 2507.08794).
A policy under RL finds these quickly, so they are decided here, by rule, with a reason
that shows up in the metrics. Each check is a pure function of the texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MASTER_KEYS", "PrecheckVerdict", "precheck"]

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
_NON_WORD = re.compile(r"[^\w\s]+", re.UNICODE)
_SPACES = re.compile(r"\s+")
# Chat-template control tokens and role markers of common templates, or a line posing as a turn.
_SPOOF = re.compile(
    r"<\|(?:im_start|im_end|eot_id|start_header_id|end_header_id|endoftext|system|user|assistant)\|>"
    r"|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>"
    r"|^\s*(?:#+\s*)?(?:system|assistant|grader|judge)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
# Text addressed to the grader, or trying to close our response tags.
_INJECTION = re.compile(
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier|preceding) (?:instructions|rules|rubric)"
    r"|\b(?:grader|evaluator|grading model)\b|\bas the (?:official )?judge\b"
    r"|\b(?:highest|maximum|max|full|perfect|top) (?:score|marks|points|grade)\b"
    r"|\bscore(?: of|:)? ?[45](?:/5)?\b|\"score\"\s*:|</?response\b",
    re.IGNORECASE,
)
_DIGIT_OR_NUMBER_WORD = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty"
    r"|hundred|thousand|million|billion|half|third|quarter)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(?:or|either)\b", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_LETTER = re.compile(r"(?<![A-Za-z])\(?([A-J])\)?(?![A-Za-z])")
_WORD = re.compile(r"\S+")
_OPTION_SET = re.compile(r"[A-J ,()]+")
SPRAY_MIN_CANDIDATES = {"number": 5, "letter": 3}
SPRAY_MIN_SHARE = 0.6
# A hedged list ("40, 41 or 42") needs one more letter candidate but a smaller share of the text.
HEDGED_MIN_SHARE = 0.4


@dataclass(frozen=True)
class PrecheckVerdict:
    """A reward decided before the judge, and why."""

    reward: float
    reason: str
    explanation: str


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", _NON_WORD.sub(" ", text.lower().replace("'", ""))).strip()


def _spray(completion: str, answer: str) -> bool:
    """A completion that is mostly a list of candidate answers, more than the reference has."""
    words = _WORD.findall(completion)
    if not words:
        return False
    hedged = bool(_HEDGE.search(completion)) and "=" not in completion  # "=" means shown work
    for kind, pattern in (("number", _NUMBER), ("letter", _LETTER)):
        candidates = set(pattern.findall(completion))
        reference = set(pattern.findall(answer))
        if kind == "letter" and _OPTION_SET.fullmatch(answer.strip()):
            reference = set(re.findall(r"[A-J]", answer))  # multi-select such as "ABD"
        tokens = [w for w in words if pattern.fullmatch(w.strip(".,;:()[]{}"))]
        share = len(tokens) / len(words)
        needed = max(SPRAY_MIN_CANDIDATES[kind], len(reference) + 2)
        if len(candidates) >= needed and share >= SPRAY_MIN_SHARE:
            return True
        hedged_needed = needed + (1 if kind == "letter" else 0)
        if hedged and len(candidates) >= hedged_needed and share >= HEDGED_MIN_SHARE:
            return True
    return False


def precheck(completion: str, answer: str, answer_type: str | None = None) -> PrecheckVerdict | None:
    """A defined reward for completions the judge must not see, else None."""
    stripped = completion.strip()
    if not stripped:
        return PrecheckVerdict(0.0, "empty", "empty completion")
    if not any(ch.isalnum() for ch in stripped):
        return PrecheckVerdict(0.0, "punctuation_only", "completion has no letters or digits")
    if _normalise(stripped) in MASTER_KEYS:
        return PrecheckVerdict(0.0, "master_key", "completion is a known answer-free opener")
    if _SPOOF.search(completion):
        return PrecheckVerdict(0.0, "role_spoofing", "completion imitates a chat turn or control token")
    if _INJECTION.search(completion):
        return PrecheckVerdict(0.0, "injection", "completion addresses the grader or its instructions")
    if _spray(stripped, answer):
        return PrecheckVerdict(0.0, "answer_spray", "completion lists many candidate answers")
    if (answer_type or "").upper() == "NUMBER" and not _DIGIT_OR_NUMBER_WORD.search(completion):
        return PrecheckVerdict(0.0, "no_final_answer", "NUMBER answer expected, completion has no number")
    return None
