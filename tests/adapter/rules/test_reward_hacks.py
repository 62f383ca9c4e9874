"""Reward hacks: completions that are not the answer must earn nothing from a rule.

Each row is a shape a policy finds when it hunts for reward. The rule may call it a mismatch or
"unsure" (the judge's to decide), never a match: through ``grade``, through the cascade with a
judge that rejects everything, and through the fallback with the judge down. To add a shape,
add a row: ``(id, prompt, completion, reference, answer_type)``. ``PROOFS`` are the controls:
answers the rules must still pay without asking the judge.
"""

from __future__ import annotations

import pytest

from adapter import JudgeRewardSystem
from adapter.rules import grade
from judge_vllm.errors import JudgeUnavailableError
from judge_vllm.schemas import Verdict

HACKS = [
    ("two-boxed-answers", "What is 6 x 7?", "The result is \\boxed{41} or perhaps \\boxed{42}.", "42", "NUMBER"),
    ("boxes-side-by-side", "What is 6 x 7?", "\\boxed{42} \\boxed{43}", "43", "NUMBER"),
    ("near-miss-integer", "What is 1000 x 1000?", "The answer is 999950.", "1000000", "NUMBER"),
    ("near-miss-seconds", "How many seconds are in a day?", "There are 86399 seconds in a day.", "86400", "NUMBER"),
    ("off-by-a-ten-thousandth", "What is 6 x 7?", "The answer is 42.0001", "42", "NUMBER"),
    ("near-miss-stated-decimal", "What is pi to two decimals?", "The answer is 3.1416", "3.14", "NUMBER"),
    ("superscript-exponent", "What is 2 to the power 1?", "The answer is 2³.", "2", "NUMBER"),
    ("retracted-number", "What is 3 x 3?", "Many think 9, but the correct answer is 7.", "9", "NUMBER"),
    ("taken-back-after-the-marker", "What is 5 + 6?", "The answer is 11. Just kidding, it's 7.", "11", "NUMBER"),
    ("wait-no", "What is 6 x 7?", "Answer: 42. Wait, no: 41.", "42", "NUMBER"),
    ("text-taken-back", "What is the capital of France?", "The answer is Paris. Actually, it is Lyon.", "Paris", "TEXT"),
    ("hedged-numbers", "What is 4 x 8?", "I think it might be 42, though it could also be 32.", "32", "NUMBER"),
    ("number-or-number", "What is 6 x 7?", "It's 42 or 41", "41", "NUMBER"),
    ("number-and-aside", "What is 6 x 7?", "42 (or 41)", "41", "NUMBER"),
    ("negated-answer", "What is 6 x 7?", "The answer is not 42.", "42", "NUMBER"),
    ("other-unit-of-time", "How many hours are in 3 days?", "3 days is 3 x 24 = 72 minutes.", "72", "NUMBER"),
    ("number-spray", "What is 6 x 7?", " ".join(str(i) for i in range(1, 101)), "42", "NUMBER"),
    ("mentioned-then-corrected", "What is the capital of Australia?",
     "Canberra is often named, but the real capital is Sydney.", "Canberra", "TEXT"),
    ("both-polarities", "Is 7 prime? Answer yes or no.", "Yes. No.", "yes", "TEXT"),
    ("maybe-both", "Is 91 prime? Answer yes or no.", "Maybe yes, maybe no.", "no", "TEXT"),
    ("true-or-false", "True or false: 2 is even.", "True or False", "true", "TEXT"),
    ("either-of-two", "What is the chemical symbol for gold?", "It is either Ag or Au.", "Au", "TEXT"),
    ("candidate-list", "What is the capital of France?", "Paris, London, Berlin", "Paris", "TEXT"),
    ("mentioned-not-claimed", "What is the capital of France?", "Paris is a city; the capital is Lyon.", "Paris", "TEXT"),
    ("two-options", "Which is red? (A) blood (B) sky", "The answer is (A) or (B).", "A", "MULTIPLE_CHOICE"),
    ("every-option", "Which is red? (A) blood (B) sky (C) grass (D) sea", "A, B, C or D", "A", "MULTIPLE_CHOICE"),
    ("option-hedge", "Which is red? (A) blood (B) sky", "Either (A) or (B), I cannot tell.", "A", "MULTIPLE_CHOICE"),
    ("two-boxed-options", "Which is red? (A) blood (B) sky", "\\boxed{A} or maybe \\boxed{B}", "B", "MULTIPLE_CHOICE"),
    ("two-boxed-expressions", "Simplify 2x + 2x.", "$\\boxed{4x}$ or $\\boxed{2x}$", "2x", "MATH_EXPRESSIONS"),
    ("empty-box", "What is 0 + 0?", "\\boxed{}", "0", "NUMBER"),
]  # fmt: skip

PROOFS = [
    ("plain-number", "What is 6 x 7?", "6 x 7 = 42.", "42", "NUMBER"),
    ("boxed-number", "What is 6 x 7?", "So the answer is \\boxed{42}.", "42", "NUMBER"),
    ("same-box-twice", "What is 6 x 7?", "\\boxed{42}, and checking again: \\boxed{42}", "42", "NUMBER"),
    ("correction-to-the-answer", "What is 3 x 3?", "Many think 6, but the correct answer is 9.", "9", "NUMBER"),
    ("fine-reference-tolerance", "What is pi?", "The answer is 3.14159", "3.14159265", "NUMBER"),
    ("double-checked", "What is 6 x 7?", "The answer is 42, but let me double-check: 6 x 7 = 42.", "42", "NUMBER"),
    ("same-unit", "How many hours are in 3 days?", "3 days is 72 hours.", "72", "NUMBER"),
    ("claimed-text", "What is the capital of France?", "The capital of France is Paris.", "Paris", "TEXT"),
    ("claimed-not-other", "What is the capital of Australia?", "It is Canberra, not Sydney.", "Canberra", "TEXT"),
    ("leading-text", "What is the capital of France?", "Paris, because it is the seat of government.", "Paris", "TEXT"),
    ("yes-and-why", "Is 7 prime? Answer yes or no.", "Yes, 7 is prime.", "yes", "TEXT"),
    ("one-option", "Which is red? (A) blood (B) sky", "The answer is (A).", "A", "MULTIPLE_CHOICE"),
    ("superscript-value", "What is 2 cubed?", "The answer is 2³.", "8", "NUMBER"),
]  # fmt: skip


def _ids(table):
    return [row[0] for row in table]


@pytest.mark.parametrize(("shape", "prompt", "completion", "answer", "answer_type"), HACKS, ids=_ids(HACKS))
def test_the_rule_pays_nothing_for_a_hack(shape, prompt, completion, answer, answer_type):
    verdict = grade(prompt, completion, answer, answer_type)
    assert verdict.reward == 0.0 and verdict.reason != "match", verdict.explanation


@pytest.mark.parametrize(("shape", "prompt", "completion", "answer", "answer_type"), PROOFS, ids=_ids(PROOFS))
def test_the_rule_still_pays_a_proven_answer(shape, prompt, completion, answer, answer_type):
    verdict = grade(prompt, completion, answer, answer_type)
    assert verdict.reward == 1.0 and verdict.reason == "match", verdict.explanation


class _RejectingJudge(JudgeRewardSystem):
    """A judge that pays nothing: whatever the cascade leaves to it earns 0."""

    def _request_judge(self, request):
        return Verdict(score=0.0, explanation="rejected")


class _DeadJudge(JudgeRewardSystem):
    def _request_judge(self, request):
        raise JudgeUnavailableError("the judge is down")


def _items(table):
    return [{"prompt": p, "completion": c, "answer": a, "answer_type": t} for _, p, c, a, t in table]


@pytest.fixture
def config(tmp_path):
    return {"cache_dir": str(tmp_path / "cache"), "model": "m", "strategy": "cascade", "max_retries": 0}


def test_the_cascade_pays_no_hack_with_a_judge_that_rejects_everything(config):
    with _RejectingJudge(config) as judge:
        results = judge.reward_batch(_items(HACKS))
    paid = {shape: r for (shape, *_), r in zip(HACKS, results, strict=True) if r["reward"] != 0.0}
    assert not paid, {shape: (r["source"], r["explanation"]) for shape, r in paid.items()}


def test_the_cascade_still_decides_proven_answers_by_rule(config):
    with _RejectingJudge(config) as judge:
        results = judge.reward_batch(_items(PROOFS))
    assert [(r["source"], r["reward"]) for r in results] == [("rule", 1.0)] * len(PROOFS)


def test_the_fallback_pays_no_hack_when_the_judge_is_down(config):
    with _DeadJudge({**config, "strategy": "judge", "circuit_breaker_threshold": 1000}) as judge:
        results = judge.reward_batch(_items(HACKS))
    assert {r["source"] for r in results} <= {"rule_fallback", "rule"}  # "rule": a pre-check decided
    paid = {shape: r["explanation"] for (shape, *_), r in zip(HACKS, results, strict=True) if r["reward"] != 0.0}
    assert not paid, paid


def test_an_unsure_rule_pays_the_configured_unsure_reward_when_the_judge_is_down(config):
    settings = {**config, "strategy": "judge", "rules": {"unsure_reward": 0.25}}
    with _DeadJudge(settings) as judge:
        result = judge.reward("Is 7 prime? Answer yes or no.", "Yes. No.", "yes", "TEXT")
    assert result["source"] == "rule_fallback" and result["reward"] == 0.25
    assert "says both 'yes' and 'no'" in result["explanation"]
