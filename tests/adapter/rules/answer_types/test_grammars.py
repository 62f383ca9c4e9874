"""The answer-type grammars, one table each: what a value reads as, and what is proven."""

from __future__ import annotations

from fractions import Fraction

import pytest

from adapter.rules import RuleSettings
from adapter.rules.answer_types import GRAMMARS, AnswerTypeGrammar, CanonicalAnswer, Equality, Question
from adapter.rules.proof import prove
from adapter.rules.statement import readings
from judge_vllm.schemas import AnswerType

SETTINGS = RuleSettings()
NUMBER, CHOICE, TEXT, MATH = (
    GRAMMARS[name] for name in ("NUMBER", "MULTIPLE_CHOICE", "TEXT", "MATH_EXPRESSIONS")
)


def _question(prompt: str, reference: str) -> Question:
    return Question(prompt=prompt, reference=reference, settings=SETTINGS)


def _read(grammar: AnswerTypeGrammar, text: str, question: Question) -> CanonicalAnswer | None:
    """``text`` as one value of the type (in its wrappers), or None."""
    answers = {
        a.key: a
        for r in readings(grammar.value_grammar, text, start="slot")
        if (a := grammar.read(r, question))
    }
    return next(iter(answers.values())) if len(answers) == 1 else None


def test_the_registry_has_a_grammar_for_every_built_in_answer_type():
    assert {t.value for t in AnswerType} <= set(GRAMMARS)  # and one per module added since
    assert all(GRAMMARS[name].name == name for name in GRAMMARS)


@pytest.mark.parametrize(
    ("prompt", "reference", "text", "value"),
    [
        ("q", "42", "42", Fraction(42)),
        ("q", "3600", "3,600", Fraction(3600)),
        ("q", "0.5", "\\frac{1}{2}", Fraction(1, 2)),
        ("q", "0.5", "-\\frac{-1}{2}", Fraction(1, 2)),
        ("q", "30000", "3 \\times 10^{4}", Fraction(30000)),
        ("q", "1500", "1.5e3", Fraction(1500)),
        ("q", "1", "12345678901234567890123", Fraction(12345678901234567890123)),
        ("How many pens can you buy?", "9", "9 pens", Fraction(9)),
        ("How many seconds are in an hour?", "3600", "3600 seconds", Fraction(3600)),
        ("How long is it, in minutes?", "5", "5 minutes", Fraction(5)),
        ("What percent is red?", "15", "15%", Fraction(15, 100)),
        ("What percent is red?", "15", "15\\%", Fraction(15, 100)),
        ("It costs $3. How much for 2?", "6", "\\$6", None),  # "how much" names no money: the judge's
        ("It costs $3. How much do 2 cost?", "6", "\\$6", Fraction(6)),
        ("q", "42 days", "42 days", Fraction(42)),
        ("q", "42", "\\text{42}", Fraction(42)),
        ("q", "-3", "\u22123", Fraction(-3)),  # the minus sign (U+2212) is minus
        ("q", "-0.5", "\\frac{\u22121}{2}", Fraction(-1, 2)),
        # Outside the grammar or an allow-list.
        ("q", "42", "42K", None),
        ("q", "42", "42 grand", None),
        ("How many dollars?", "42", "42 cents", None),
        ("How many socks are in 21 pairs?", "42", "42 pairs", None),
        ("How many days are in 6 weeks?", "42", "42 weeks", None),
        ("How many marbles in each bag?", "42", "42 per bag", None),
        ("q", "42", "\u201342", None),
        ("q", "42", "\uff14\uff12", None),
        ("q", "42", "\u0664\u0662", None),
        ("q", "15", "15%", None),
        ("q", "15", "1,5", None),
        ("q", "15", "4,2", None),
        ("q", "2.5", "2 1/2", None),
        ("q", "12", "\\frac123", None),
        ("q", "0.01", "10^{-}", None),
        ("q", "5", "101_2", None),
        ("q", "42", "about 42", None),
        ("q", "42", "42?", None),
    ],
)
def test_number_reads_the_exact_value_of_the_digits_written(prompt, reference, text, value):
    answer = _read(NUMBER, text, _question(prompt, reference))
    assert (answer.key if answer else None) == value


@pytest.mark.parametrize(
    ("reference", "text", "equality"),
    [
        ("42", "42.0", Equality.EQUAL),
        ("42", "41", Equality.DIFFERENT),
        ("42%", "0.42%", Equality.DIFFERENT),  # "%" means one thing on both sides
        ("42%", "0.42", Equality.UNPROVEN),  # "%" on one side only: the judge's
        ("42%", "42", Equality.UNPROVEN),  # "%" on one side only: the judge's
        ("12345678901234567", "12345678901234568", Equality.DIFFERENT),  # exact at any length
        ("6.62607015e-34", "6.626070150e-34", Equality.EQUAL),  # the same value
        ("6.62607015e-34", "6.626e-34", Equality.UNPROVEN),  # written more coarsely: the judge's
        ("0.1428571429", "0.14285714286", Equality.UNPROVEN),  # may be a rounding: the judge's
        ("0.1428571429", "0.1428571428", Equality.DIFFERENT),  # truncated, not rounded
        ("0.1428571429", "0.142857", Equality.UNPROVEN),
        ("6.62607015e-34", "0", Equality.UNPROVEN),  # no absolute tolerance: a rounding, the judge's
        ("6.62607015e-34", "7e-34", Equality.UNPROVEN),
        ("6.62607015e-34", "6.6e-35", Equality.DIFFERENT),
        ("1/3", "0.3333", Equality.UNPROVEN),  # an exact reference: no tolerance
        ("0.5", "0.5001", Equality.UNPROVEN),  # 0.5 may be a rounding of it
        ("0.5", "0.6", Equality.DIFFERENT),
        ("2\\sqrt{3}", "3", Equality.UNPROVEN),
        ("\\sqrt{16}", "4", Equality.EQUAL),
        ("\\pi", "3.141593", Equality.UNPROVEN),  # a decimal is no proof of an exact constant
    ],
)
def test_number_proof(reference, text, equality):
    question = _question("What percent?", reference)
    answer = _read(NUMBER, text, question)
    assert answer is not None and NUMBER.compare(answer, question, 2.0) is equality


@pytest.mark.parametrize(
    ("chain", "equality"),
    [
        ("6 \\times 7 = 42", Equality.EQUAL),
        ("x = 6 \\times 7 = 42", Equality.EQUAL),
        ("2^{10} - 982 = 42", Equality.EQUAL),
        ("6 \\times 8 = 42", Equality.UNPROVEN),  # a false link: no proof
        ("x = 3 = 42", Equality.UNPROVEN),
        ("6 \\times 7 = 41", Equality.DIFFERENT),  # the final value decides a mismatch
        ("49 \u2212 7 = 42", Equality.EQUAL),  # the minus sign (U+2212) subtracts
        ("49 \u2212 6 = 42", Equality.UNPROVEN),
        ("84 / 2 = 42", Equality.EQUAL),
        ("85 / 2 = 42", Equality.UNPROVEN),  # an integer is exact: 42.5 is not 42
    ],
)
def test_every_link_of_a_number_chain_is_proven(chain, equality):
    question = _question("If x + 1 = 43, what is x?", "42")
    answer = _read(NUMBER, chain, question)
    assert answer is not None and NUMBER.compare(answer, question, 2.0) is equality


def test_a_decimal_link_holds_at_the_final_values_precision():
    question = _question("q", "3.33")
    held, broken = (_read(NUMBER, text, question) for text in ("10/3 = 3.33", "10/4 = 3.33"))
    assert held is not None and NUMBER.compare(held, question, 1.0) is Equality.EQUAL
    assert broken is not None and NUMBER.compare(broken, question, 1.0) is Equality.UNPROVEN


@pytest.mark.parametrize(
    ("prompt", "text", "read"),
    [
        ("If 2x + 1 = 85, what is x?", "x = 42", True),
        ("If 2x + 1 = 85, what is x?", "y = 42", False),
        ("If x + y = 50 and x - y = 34, what is x?", "x = 42", False),  # the question names two
        ("Solve for b: a = 2b and a + b = 12.", "a = 42", False),
        ("A shirt costs $6. How much do 7 shirts cost?", "$42", True),
        ("A book costs 6 dollars. How much do 7 cost?", "$42", True),
        ("A book costs 6 dollars. What do 7 cost?", "$42", False),  # asks no "how much" of money
        ("A pencil costs 6 cents and a pen $2. How much do 7 pencils cost, in cents?", "$42", False),
        ("A book costs \u20ac6, about $7. How many euros do 7 books cost?", "$42", False),
        ("A snack costs 6 yen (about $1). How much do 7 snacks cost?", "$42", False),  # "how much", but yen
    ],
)
def test_number_names_and_currency_are_the_questions(prompt, text, read):
    assert (_read(NUMBER, text, _question(prompt, "42")) is not None) == read


@pytest.mark.parametrize(
    ("prompt", "reference", "text", "equality"),
    [
        ("What is 1/3 + 1/6?", "0.5", "1/2", Equality.EQUAL),
        ("Write 0.75 as a fraction in lowest terms.", "3/4", "0.75", Equality.UNPROVEN),
        ("Reduce 18/24 to lowest terms.", "3/4", "18/24", Equality.UNPROVEN),
        ("Reduce 18/24 to lowest terms.", "3/4", "\\frac{3}{4}", Equality.EQUAL),
        ("Write 7/2 as a decimal.", "3.5", "\\frac{7}{2}", Equality.UNPROVEN),
        ("Express 4200 in scientific notation.", "4.2 \\times 10^{3}", "4200", Equality.UNPROVEN),
        ("Express 4200 in scientific notation.", "4.2 \\times 10^{3}", "4.2e3", Equality.EQUAL),
    ],
)
def test_a_number_is_in_the_references_notation_where_the_question_asks_for_one(prompt, reference, text, equality):
    question = _question(prompt, reference)
    answer = _read(NUMBER, text, question)
    assert answer is not None and NUMBER.compare(answer, question, 2.0) is equality


OPTIONS = "Which? (A) blood (B) sky (C) grass"


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("B", "B"),
        ("(B)", "B"),
        ("option B", "B"),
        ("(B) sky", "B"),
        ("B. sky", "B"),
        ("sky (B)", "B"),
        ("sky", "B"),
        ("sky (A)", None),
        ("(A) sky", None),
        ("sky?", None),
        ("D", None),
        ("b", None),
        ("\u0412", None),
        ("A and B", None),  # several letters for a one-letter reference
    ],
)
def test_multiple_choice_grammar(text, letters):
    answer = _read(CHOICE, text, _question(OPTIONS, "B"))
    assert (answer.text if answer else None) == letters


@pytest.mark.parametrize(
    ("prompt", "reference", "text", "letters"),
    [
        ("Which are prime? (A) 2 (B) 4 (C) 5 (D) 9", "AC", "AC", "AC"),
        ("Which? (A) AAA (B) C (C) D (D) 9-volt", "A", "AA", None),  # each letter once
        ("I. 2 is prime. II. 9 is prime.\n(A) I only (B) II only (I) I and II", "I", "II", None),
        ("I. 2 is prime. II. 9 is prime.\n(A) I only (B) II only (I) I and II", "I", "I", None),  # a numeral
        ("Which? (H) gold (I) iron (J) tin", "I", "I", "I"),
        ("Which note? (A) A (B) G (C) F (D) E", "B", "B", None),  # an option's text is a letter
        ("Which note? (A) A (B) G (C) F (D) E", "B", "(B) G", "B"),
        ("Which is sodium? (A) S (B) So (C) Na (D) Sd", "C", "C", "C"),  # S is no option letter
        ("How many legs? (A) 4 (B) 2 (C) 6 (D) 8", "A", "4", None),  # the fourth option, or "4"?
        ("How many legs? (A) 4 (B) 2 (C) 6 (D) 8", "A", "(A) 4", "A"),
        ("How many legs? (A) 40 (B) 20 (C) 60 (D) 80", "A", "40", "A"),
    ],
)
def test_multiple_choice_letters_and_texts_mean_one_thing(prompt, reference, text, letters):
    answer = _read(CHOICE, text, _question(prompt, reference))
    assert (answer.text if answer else None) == letters


@pytest.mark.parametrize(
    ("reference", "text", "read"),
    [
        ("Paris", "paris", False),  # case counts where the reference writes capitals
        ("green", "Green", False),  # case counts: "True" is not "true"
        ("none", "NONE", False),
        ("None", "none", False),
        ("String", "string", False),
        ("Paris", "Paris!", False),
        ("Paris", "Paris?", False),
        ("Washington, D.C.", "Washington, D.C", True),  # a final period is the statement's
        ("Paris | Paris, France", "Paris, France", True),
        ("Paris", "PARIS", False),
        ("Masse", "Ma\u00dfe", False),
        ("Bu\u00dfe", "Busse", False),
        ("The Hobbit", "A Hobbit", False),  # only "the" is dropped
        ("Lushan", "An Lushan", False),
        ("The Old Man and the Sea", "Old Man and the Sea", False),  # an article is a word: the judge's
        ("The Who", "Who", False),
        ("S\u00e3o Paulo", "Sa\u0303o Paulo", True),  # the same letters, decomposed
        ("S\u00e3o Paulo", "Sao Paulo", False),  # an accent is a letter of its own
        ("av\u00f3", "av\u00f4", False),
        ("sch\u00f6n", "schon", False),
        ("zahlen", "z\u00e4hlen", False),
        ("Co", "CO", False),  # a symbol keeps its case
        ("Hf", "HF", False),
        ("M", "m", False),
        ("No", "NO", False),
        ("NaCl", "NACL", False),  # a capital inside a word is meant
        ("Paris", "P\u0430ris", False),  # a Cyrillic a
        ("Paris", "\uff30aris", False),  # a full-width P
        ("Paris", "near Paris", False),
        ("the heart", "heart", False),
        ("C++", "C", False),
        ("B+", "B", False),
        ("O-", "O", False),
        ("Vitamin A", "Vitamin", False),
        ("Aswan", "Swan", False),  # an article is dropped as a whole word only
        ("1:2", "12", False),
    ],
)
def test_text_folds_spaces_and_the_and_keeps_every_mark_and_case(reference, text, read):
    assert (_read(TEXT, text, _question("q", reference)) is not None) == read


@pytest.mark.parametrize(
    ("reference", "text", "read"),
    [
        ("2x + 2", "2(x+1)", True),
        ("5\\sqrt{2}", "\\sqrt{50}", True),
        ("ab^2", "a b^2", True),
        ("\\frac{\\pi}{2}", "\\dfrac{\\pi}{2}", True),
        ("x_1 + x_2", "x_1 + x_2", True),
        ("4x", "4x + 0y", False),  # another letter
        ("4x", "4x or 2x", False),
        ("4x", "4x \\approx 2x", False),
        ("1000", "1 000", False),  # no product of two numbers
        ("\\frac{1}{23}", "\\frac123", False),  # braced arguments only
        ("10^{-2}", "10^{-}", False),  # no dangling operator
        ("5", "101_2", False),  # no subscript the reference does not write
        ("\\sqrt{2}", "\\sqrt2", False),
        ("x = 2, x = 3", "x = 3, x = 2", True),
        ("4", "3, 4", False),  # a list only for a list
        ("3x^2\\sin x + x^3\\cos x", "3x^2\\sin x + x^3\\cos x", True),  # a function of one letter
        ("\\sin(x^2)", "\\sin x^2", False),  # renders sin x², whose square it does not say
        ("\\sin(x)", "\\sin x(x)", False),
        ("2 + \\sqrt{3}", "2 + \u221a3", True),  # the root sign, over digits or one letter
        ("\\sqrt{x+1}", "\u221a(x+1)", True),
        ("\\sqrt{3}x", "\u221a3x", False),  # is x under it?
        ("\\sqrt{13}", "\u221a13.5", False),
        ("6\\pi", "6\u03c0", True),
        ("[1, 3)", "\\left[1, 3\\right)", True),  # an interval, its brackets as written
        ("(-\\infty, 2] \\cup [5, \\infty)", "[5, \\infty) \\cup (-\\infty, 2]", True),
        ("[1, 3)", "[1, 3", False),
    ],
)
def test_math_expressions_grammar(reference, text, read):
    assert (_read(MATH, text, _question("q", reference)) is not None) == read


@pytest.mark.parametrize(
    ("reference", "text", "equality"),
    [
        ("2x + 2", "2 + 2x", Equality.EQUAL),  # the same form, in another order
        ("(x-1)(x+1)", "(x + 1)(x - 1)", Equality.EQUAL),
        ("\\frac{1}{2}", "1/2", Equality.EQUAL),
        ("ab^2", "a b^2", Equality.EQUAL),
        ("2x + 2", "2(x+1)", Equality.UNPROVEN),  # the value in another form: the judge's
        ("(x-1)(x+1)", "x^2 - 1", Equality.UNPROVEN),
        ("x^2 - 1", "(x-1)(x+1)", Equality.UNPROVEN),
        ("2\\sqrt{2}", "\\sqrt{8}", Equality.UNPROVEN),
        ("x^6", "(x^2)^3", Equality.UNPROVEN),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", Equality.UNPROVEN),
        ("x^2 + C", "2x^2 + C", Equality.DIFFERENT),
        ("\\pi", "3.141593", Equality.UNPROVEN),
        ("1/2", "0.5", Equality.UNPROVEN),
        ("x = 2", "x = 2", Equality.EQUAL),
        ("x = 2", "x = 3 = 2", Equality.UNPROVEN),  # every link, whatever the reference
        ("2x", "y = x + x = 2x", Equality.EQUAL),
        ("x^2 + y^2 = 1", "1", Equality.UNPROVEN),  # an equation is matched whole only
        ("\\sin(x)", "\\sin x", Equality.EQUAL),
        ("2 + \\sqrt{3}", "2 + \u221a3", Equality.EQUAL),
        ("\\sqrt{x+1}", "\u221ax+1", Equality.DIFFERENT),  # the root of x, plus one
        ("6\\pi", "6\u03c0", Equality.EQUAL),
        ("6\\pi", "7\u03c0", Equality.DIFFERENT),
        ("\\frac{x+3}{2}", "(x + 3)/2", Equality.EQUAL),
        ("[1, 3)", "[1,3)", Equality.EQUAL),
        ("(-\\infty, 2] \\cup [5, \\infty)", "[5, \\infty) \\cup (-\\infty, 2]", Equality.EQUAL),  # in any order
        ("[1, 3)", "(1, 3)", Equality.UNPROVEN),  # another interval: the judge's
        ("(-\\infty, 2] \\cup [5, \\infty)", "(-\\infty, 2]", Equality.UNPROVEN),
        ("x - 1", "x \u2212 1", Equality.EQUAL),  # the minus sign (U+2212) is minus
        ("x - 1", "x \u2212 2", Equality.DIFFERENT),
        ("-x", "\u2212x", Equality.EQUAL),
    ],
)
def test_math_expressions_proof(reference, text, equality):
    question = _question("Simplify.", reference)
    answer = _read(MATH, text, question)
    assert answer is not None and MATH.compare(answer, question, 5.0) is equality


QUESTION = "How many apples are left?"


@pytest.mark.parametrize(
    ("completion", "outcome"),
    [
        # The styles policies write.
        ("Work.\n\n**Final Answer**\n\\[\n\\boxed{42}\n\\]", "match"),
        ("Work.\n\n### Final Answer\n\n$$\n\\boxed{42}\n$$", "match"),
        ("<think>\nwork\n</think>\n\n<answer>42</answer>", "match"),
        ("<think>\nwork\n</think> <answer> \\boxed{42} </answer>", "match"),
        ("Final Answer: The final answer is $42$. I hope it is correct.", "match"),
        ("Thus, the number of apples is \\(\\boxed{42}\\).", "match"),
        ("So, the number of apples left is:\n\\[\n\\boxed{42}\n\\]", "match"),
        ("The final answer is: $\\boxed{42}$", "match"),
        ("6 * 7 = <<6*7=42>>42\n#### 42", "match"),
        ("It is 6 * 7.\nThe answer is: 42", "match"),
        ("**Final Answer:** \\boxed{42}", "match"),
        ("6 \\times 7 = 42, so the answer is 42.", "match"),
        ("42", "match"),
        ("### Final Answer\n\n42", "match"),
        ("Work.\n\nThus, the answer is\n\n\\boxed{42}", "match"),  # read as one with the line above
        ("Work.\n\n### \u2705 Final Answer:\n$$\n\\boxed{42}\n$$", "match"),
        ("Work.\n\n\u2705 **Final Answer: \\(42\\)**", "match"),
        ("Work.\n\n**Therefore, the answer is 42.**", "match"),  # a statement in bold
        ("Work.\n\n### Final Answer:\nThe number of apples is **42**.", "match"),
        ("So the answer is 6 \\times 7.\n\n**Final Answer**\n\\[\\boxed{42}\\]", "unsure"),
        ("I counted. The answer is 41.", "mismatch"),
        # Not a statement, or not only one.
        ("It's approx. 42", "unsure"),
        ("It's 41 vs. 42", "unsure"),
        ("It is not\n42", "unsure"),
        ("It is not\nThe answer is 42.", "unsure"),
        ("The sum is not equal to\n$$\n\\boxed{42}\n$$", "unsure"),
        ("Let me see.\n42", "unsure"),  # a bare value is a statement only alone or under a header
        ("Work.\n\nThus, the answer is not\n\n\\boxed{42}", "unsure"),  # the two parse as no statement
        ("Work.\n\nI would guess the answer is\n\n\\boxed{42}", "unsure"),
        ("Work.\n\n**Therefore, the answer is 42.** Or not.", "unsure"),
        ("Work.\n\n\u274c **Final Answer: 42**", "unsure"),  # only a check mark opens a statement
        ("The answer is 41. The answer is 42.", "unsure"),
        ("Answer: 41\nAnswer: 42", "unsure"),
        ("\\boxed{41} or \\boxed{42}", "unsure"),
        ("The answer is 42 weeks.", "unsure"),
        ("The answer is about 42.", "unsure"),
        ("The answer is 42!", "unsure"),
        ("Nope! 42", "unsure"),
        ("Work.\n\n    The answer is 42.", "unsure"),  # an indented code block
        ("```\nThe answer is 42.\n```", "unsure"),
        ("<think>\n```\n</think>\n```\nnot done\n\n\\boxed{42}", "unsure"),  # a </think> in code is text
    ],
)
def test_the_final_statement_is_read_by_construction(completion, outcome):
    assert prove(QUESTION, completion, "42", "NUMBER", SETTINGS).outcome == outcome


@pytest.mark.parametrize(
    ("completion", "outcome"),
    [
        ("<think>The answer is 41, no.</think>\n\nThe answer is 42.", "match"),
        ("The answer is 41, no.\n</think>\n\nThe answer is 42.", "match"),  # the template opened it
        (
            "<think>a</think>\nThe answer is 41.\n</think>\n\nThe answer is 42.",
            "unsure",
        ),  # the first close ends it
        (
            "I think <think>41</think>\n\nThe answer is 42.",
            "unsure",
        ),  # mid-text: text, leading into the answer
        ("<think>\n```\n</think>\n```\nThe answer is 42.", "unsure"),  # never closed outside code
    ],
)
def test_one_reasoning_block_is_set_aside(completion, outcome):
    assert prove(QUESTION, completion, "42", "NUMBER", SETTINGS).outcome == outcome


@pytest.mark.parametrize(
    ("completion", "outcome"),
    [
        ("The answer is (C).", "match"),
        ("Grass is green, so the answer is C.", "match"),
        ("\\boxed{(C) grass}", "match"),
        ("\\boxed{(A) grass}", "unsure"),
        ("The answer is A.", "mismatch"),
    ],
)
def test_multiple_choice_statements(completion, outcome):
    assert (
        prove(OPTIONS.replace("sky", "sea"), completion, "C", "MULTIPLE_CHOICE", SETTINGS).outcome == outcome
    )


@pytest.mark.parametrize(
    ("completion", "outcome"),
    [
        ("It is in France.\n\nThe answer is Paris.", "match"),  # "It is in France." is prose
        ("Paris.", "match"),
        ("The answer is \\boxed{\\text{Paris}}.", "match"),
        ("Paris", "match"),
        ("Lyon is big.\nParis", "unsure"),
        ("The answer is London.\n\nThe answer is Paris.", "unsure"),
    ],
)
def test_text_statements(completion, outcome):
    assert prove("What is the capital of France?", completion, "Paris", "TEXT", SETTINGS).outcome == outcome


def test_a_reference_that_ends_in_a_period_is_stated_with_one():
    completion = "It is the capital.\n\nThe answer is Washington, D.C."
    assert prove("Which city?", completion, "Washington, D.C.", "TEXT", SETTINGS).outcome == "match"
