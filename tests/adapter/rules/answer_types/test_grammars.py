"""The answer-type grammars, one table each: what is canonical, and what is proven."""

from __future__ import annotations

from fractions import Fraction

import pytest

from adapter.rules import RuleSettings
from adapter.rules.answer_types import GRAMMARS, Equality, Question
from adapter.rules.answer_types.arithmetic import NotArithmetic, evaluate
from adapter.rules.answer_types.statement import final_statement, split_chain, stated_answers
from judge_vllm.schemas import AnswerType

SETTINGS = RuleSettings()


def _question(prompt: str, reference: str) -> Question:
    return Question(prompt=prompt, reference=reference, settings=SETTINGS)


def test_the_registry_has_a_grammar_for_every_built_in_answer_type():
    assert {t.value for t in AnswerType} <= set(GRAMMARS)  # and one per module added since
    assert all(GRAMMARS[name].name == name for name in GRAMMARS)


@pytest.mark.parametrize(
    ("completion", "value", "marked"),
    [
        ("Work.\nThe final answer is $\\boxed{90}$.", "90", True),
        ("So, the answer is 42.", "42", True),
        ("**Final Answer:** 42", "42", True),
        ("#### 42", "42", True),
        ("It is Paris.", "Paris", True),
        ("12 - 5 = 7, so the answer is 7.", "7", True),
        ("$$\\boxed{x + 1}$$", "x + 1", True),
        ("42", "42", False),
        ("First 41. Then 42.", "Then 42", False),
        ("\\boxed{41} \\boxed{42}", "\\boxed{41} \\boxed{42}", False),
        ("$41$ or $42$", "$41$ or $42$", False),
        ("The answer is:", None, None),
    ],
)
def test_the_final_statement_is_the_last_sentence_without_lead_marker_and_wrappers(completion, value, marked):
    statement = final_statement(completion)
    if value is None:
        assert statement is None
    else:
        assert statement is not None and (statement.value, statement.marked) == (value, marked)


def test_a_chain_splits_at_top_level_equals_and_unwraps_each_link():
    assert split_chain("f(x=1) = \\boxed{42}") == ["f(x=1)", "42"]
    assert split_chain("6 * 7 = 42") == ["6 * 7", "42"]


def test_stated_answers_are_boxes_marker_clauses_and_statement_lines():
    stated = stated_answers("Try \\boxed{41}. The answer is 40; no.\n43\nIt is 44.\n")
    assert stated.answers == ["41", "40"]
    assert ("43", False) in stated.statements and ("44", True) in stated.statements


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("60 × 60", Fraction(3600)),
        ("3,600", Fraction(3600)),
        ("1/3 + 1/6", Fraction(1, 2)),
        ("2^{10}", Fraction(1024)),
        ("-8 + 3", Fraction(-5)),
        ("4 x 60", Fraction(240)),
        ("\\frac{1}{2} \\cdot 4", Fraction(2)),
        ("(2 + 3) * 4", Fraction(20)),
    ],
)
def test_arithmetic_is_exact(text, value):
    assert evaluate(text) == value


@pytest.mark.parametrize("text", ["2 ** 3", "41 \\gg 42", "9^9^9", "2(3)", "1,2", "1/0", "x + 1", "√4"])
def test_what_is_not_arithmetic_is_refused(text):
    with pytest.raises(NotArithmetic):
        evaluate(text)


NUMBER = GRAMMARS["NUMBER"]


@pytest.mark.parametrize(
    ("prompt", "reference", "text", "canonical"),
    [
        ("q", "42", "42", "42"),
        ("q", "3600", "3,600", "3,600"),
        ("q", "0.5", "\\frac{1}{2}", "1/2"),
        ("q", "30000", "3 \\times 10^{4}", "3e4"),
        ("How many pens can you buy?", "9", "9 pens", "9"),
        ("How many seconds are in an hour?", "3600", "3600 seconds", "3600"),
        ("What percent is red?", "15", "15%", "15%"),
        ("It costs $3. How much for 2?", "6", "$6", "6"),
        ("q", "42", "42K", None),
        ("q", "42", "42 grand", None),
        ("How many dollars?", "42", "42 cents", None),
        ("How many pens?", "42", "42 thousand pens", None),
        ("How many hours are in 3 days?", "72", "72 days", None),
        ("q", "42", "\u201342", None),
        ("q", "42", "\uff14\uff12", None),
        ("q", "15", "15%", None),
    ],
)
def test_number_grammar(prompt, reference, text, canonical):
    answer = NUMBER.canonical(text, _question(prompt, reference))
    assert (answer.text if answer else None) == canonical


@pytest.mark.parametrize(
    ("reference", "text", "equality"),
    [("42", "42.0", Equality.EQUAL), ("42", "41", Equality.DIFFERENT), ("2\\sqrt{3}", "3", Equality.UNPROVEN)],
)
def test_number_proof(reference, text, equality):
    question = _question("q", reference)
    answer = NUMBER.canonical(text, question)
    assert answer is not None and NUMBER.compare(answer, question, 2.0) is equality


def test_a_number_chain_link_holds_at_the_answers_precision():
    question = _question("q", "0.333")
    answer = NUMBER.canonical("0.333", question)
    assert answer is not None
    assert NUMBER.link_holds("1/3", answer, question, 1.0) and not NUMBER.link_holds("1/4", answer, question, 1.0)


CHOICE = GRAMMARS["MULTIPLE_CHOICE"]
OPTIONS = "Which? (A) blood (B) sky (C) grass"


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("B", "B"),
        ("(B)", "B"),
        ("option B", "B"),
        ("(B) sky", "B"),
        ("sky (B)", "B"),
        ("sky", "B"),
        ("sky (A)", None),
        ("sky?", None),
        ("D", None),
        ("b", None),
        ("\u0412", None),
        ("A and B", None),
    ],
)
def test_multiple_choice_grammar(text, letters):
    answer = CHOICE.canonical(text, _question(OPTIONS, "B"))
    assert (answer.text if answer else None) == letters


TEXT = GRAMMARS["TEXT"]


@pytest.mark.parametrize(
    ("reference", "text", "canonical"),
    [
        ("Paris", "paris", True),
        ("Paris", "Paris!", False),
        ("Paris", "Paris?", False),
        ("Washington, D.C.", "washington, d.c.", True),
        ("Paris | Paris, France", "Paris, France", True),
        ("Paris", "P\u0430ris", False),
        ("Paris", "near Paris", False),
        ("the heart", "heart", True),
    ],
)
def test_text_grammar(reference, text, canonical):
    assert (TEXT.canonical(text, _question("q", reference)) is not None) == canonical


MATH = GRAMMARS["MATH_EXPRESSIONS"]


@pytest.mark.parametrize(
    ("reference", "text", "canonical"),
    [
        ("2x + 2", "2(x+1)", True),
        ("5\\sqrt{2}", "\\sqrt{50}", True),
        ("ab^2", "a b^2", True),
        ("4x", "4x + 0y", False),
        ("4x", "4x or 2x", False),
        ("4x", "\\text{4x}", False),
        ("4x", "4x \\approx 2x", False),
        ("1000", "1 000", False),
        ("x = 2, x = 3", "x = 3, x = 2", True),
        ("4x", "x = 4x", False),
    ],
)
def test_math_expressions_grammar(reference, text, canonical):
    assert (MATH.canonical(text, _question("q", reference)) is not None) == canonical


@pytest.mark.parametrize(
    ("reference", "text", "equality"),
    [
        ("2x + 2", "2(x+1)", Equality.EQUAL),
        ("x^2 + C", "2x^2 + C", Equality.DIFFERENT),
        ("x = 2, x = 3", "x = 2, x = 4", Equality.UNPROVEN),
    ],
)
def test_math_expressions_proof(reference, text, equality):
    question = _question("q", reference)
    answer = MATH.canonical(text, question)
    assert answer is not None and MATH.compare(answer, question, 2.0) is equality
