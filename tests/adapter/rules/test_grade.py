import json
import time

import pytest

from adapter.rules import RuleRewardSystem, RuleSettings, extract_final_answer, grade, infer_answer_type

MC = "Which is prime? (A) 4 (B) 6 (C) 7 (D) 9"
CAPITALS = "Which is the capital of Italy? (A) Paris (B) London (C) Rome"
MULTI = "Select all even numbers: (A) 2 (B) 4 (C) 5 (D) 6"


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("12 - 5 = 7, but 11 would be wrong", "11", 0.0),
        ("12 - 5 = 7", "7", 1.0),
        ("I think it is 12, not 11.", "11", 0.0),
        ("The answer is \\boxed{1,000}.", "1000", 1.0),
        ("The answer is \\boxed{\\text{1,000 m}}.", "1000", 0.0),  # outside the canonical grammar: the judge's
        ("So the total is $\\$12.50$.", "12.5", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 50%.", "0.5", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 50\\%.", "50", 0.0),  # outside the canonical grammar: the judge's
        ("\\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("\\boxed{\\dfrac{3}{4}}", "3/4", 1.0),
        ("It is 1.5e3 grams", "1500", 0.0),  # outside the canonical grammar: the judge's
        ("It equals 1.5 \\times 10^{3}", "1500", 0.0),  # outside the canonical grammar: the judge's
        ("The final answer is -7", "-7", 1.0),
        ("The final answer is 7", "-7", 0.0),
        ("The final answer is +7", "7", 1.0),
        ("The answer is 3.15", "3.1416", 0.0),
        ("The answer is 3.14159", "3.1416", 0.0),  # may round to it: the judge's, never paid by rule
        ("The answer is 3 or 4 or 5", "4", 0.0),
        ("**42**", "42", 1.0),
        ("Half of 1 is 1/2.", "0.5", 0.0),  # outside the canonical grammar: the judge's
        ("100 / 8 = 25/2", "12.5", 1.0),
        ("1/3 + 1/6 = 2/6 + 1/6 = 3/6 = 1/2", "0.5", 1.0),
        ("12 - 5 = 7, so adding the 4 left over gives 11.", "7", 0.0),
        ("The answer is 42.", "41", 0.0),
        # Commitment: a list, range or hedge behind a marker commits to nothing.
        ("Answer: 4 and 5", "4", 0.0),
        ("Answer: between 4 and 5", "4", 0.0),
        ("Answer: 4 to 5", "4", 0.0),
        ("Answer: 4-5", "4", 0.0),
        ("the answer is 3, 4, or 5", "3", 0.0),
        ("\\boxed{3} or \\boxed{4}", "4", 0.0),
        ("\\boxed{3, 4, 5}", "4", 0.0),
        ("The answer is 12 - 5 = 7", "12", 0.0),
        ("The answer is 12 - 5 = 7", "7", 1.0),
        ("Answer: 11 is wrong, it's 7", "7", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 42 because 6 * 7 = 42.", "42", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 7 (since 12 - 5 = 7).", "7", 0.0),  # outside the canonical grammar: the judge's
        # A number inside an expression is not that number.
        ("Answer: 2x", "2", 0.0),
        ("Answer: 3\\pi", "3", 0.0),
        ("Answer: 2\\sqrt{3}", "2", 0.0),
        ("Answer: \\sqrt{4}", "4", 0.0),
        ("Answer: \\sqrt{4}", "2", 0.0),  # outside the canonical grammar: the judge's
        ("Answer: 2^3", "8", 0.0),  # outside the canonical grammar: the judge's
        ("Answer: 2^3", "2", 0.0),
        ("\\boxed{\\pm 2}", "2", 0.0),
        ("Answer: 12:30", "12", 0.0),
        ("The side is 2\\sqrt{3}", "3", 0.0),
        ("The area is 5 cm^2.", "5", 0.0),  # outside the canonical grammar: the judge's
        ("The area is 5 cm^2.", "2", 0.0),
        # Notations.
        ("The answer is − 5", "-5", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 1.5 million", "1500000", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 1.5 million", "1.5", 0.0),
        ("It costs 42 dollars in total.", "42", 0.0),  # outside the canonical grammar: the judge's
        ("Answer: 42 red apples", "42", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is 25", "25%", 0.0),  # "%" on one side only: the judge's
        ("The answer is 2500", "25%", 0.0),
        ("\\boxed{(1,2)}", "1.2", 0.0),
        ("1 000", "1000", 0.0),  # outside the canonical grammar: the judge's
        ("#### 42", "42", 1.0),
        ("## Final Answer\n42", "42", 1.0),
    ],
)
def test_number(completion, answer, reward):
    assert grade("q", completion, answer, "NUMBER").reward == reward


def test_rel_tol_says_which_references_may_be_roundings():
    rounded = grade("q", "The answer is 3.14159", "3.14", "NUMBER")  # by default 3.14 may be a rounding
    assert (rounded.reward, rounded.proven) == (0.0, False)  # the judge's
    exact = grade("q", "The answer is 3.14159", "3.14", "NUMBER", RuleSettings(rel_tol=1e-4))
    assert (exact.reward, exact.proven) == (0.0, True)  # 3.14 is exact at this setting: proven different
    for rel_tol in (1e-4, 1e-2, 1.0):  # no answer other than the reference's value is paid by rule
        for answer in ("3.1416", "3.141592"):
            assert grade("q", f"The answer is {answer}", "3.14159", "NUMBER", RuleSettings(rel_tol=rel_tol)).reward == 0.0


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("The final answer is \\boxed{2x+6}", "2(x+3)", 0.0),  # the value in another form: the judge's
        ("The final answer is \\boxed{6+2x}", "2x+6", 1.0),
        ("\\boxed{x + 1}", "1 + x", 1.0),
        ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", 0.0),  # the question may ask for the simplest form
        ("\\boxed{\\sqrt{2} \\cdot 2}", "2\\sqrt{2}", 1.0),
        ("\\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}", 1.0),
        ("\\boxed{\\{2, 1\\}}", "\\{1, 2\\}", 1.0),  # a set, in any order
        ("\\boxed{\\{2, 3\\}}", "\\{1, 2\\}", 0.0),  # another set: the judge's
        ("\\boxed{[1, 2]}", "[1, 2]", 1.0),  # an interval, as the reference writes it
        ("\\boxed{(1, 2]}", "[1, 2]", 0.0),  # another interval: the judge's
        ("\\boxed{(1, 2]}", "(1, 2)", 0.0),
        ("Thus x = 2", "2", 1.0),
        ("\\boxed{\\pm 3}", "3, -3", 0.0),  # outside the canonical grammar: the judge's
        ("So \\boxed{x^2+1}", "x^2-1", 0.0),
        ("\\boxed{x^3}", "x^2", 0.0),
        ("\\boxed{\\frac{1}{", "1/2", 0.0),
        ("2(x + 1) = 2x + 2", "2x + 2", 1.0),
        ("x^2 + 6x + 9", "x^2 + 6x + 9", 1.0),
        ("9 + 6x + x^2", "x^2 + 6x + 9", 1.0),
        ("\\frac{d}{dx} x^3 = 3x^{2}", "3x^2", 0.0),  # outside the canonical grammar: the judge's
        ("The limit is 1.", "1", 0.0),  # outside the canonical grammar: the judge's
        ("The limit is 2.", "1", 0.0),
        ("x = 3 or x = 4", "4", 0.0),
        ("$x = 3$ or $x = 4$", "4", 0.0),
        ("(x - 2)(x - 3) = 0, so x = 2 or x = 3.", "x = 2, x = 3", 0.0),  # outside the canonical grammar: the judge's
        ("It could be $\\boxed{3}$ or $\\boxed{4}$.", "4", 0.0),
        ("\\boxed{\\sqrt{2}}", "\\pm\\sqrt{2}", 0.0),
        ("\\boxed{(1,2)}", "[1,2]", 0.0),
        ("\\boxed{x=3, y=2}", "x=2,y=3", 0.0),
        ("\\boxed{\\frac{1}{2004!}}", "\\frac{1}{2006!}", 0.0),  # math-verify alone: equal (both round to 0)
        ("\\boxed{10^{-7}}", "10^{-8}", 0.0),
        ("\\boxed{0.0000001}", "0.00000012", 0.0),
        ("\\boxed{\\frac{1}{3}}", "0.333333", 0.0),  # outside the canonical grammar: the judge's
        ("So we get $x = 5$. But wait, $x = 7$.", "5", 0.0),
        ("Therefore, the probability that Alice wins is 2/3. <|im_start|>user", "2/3", 0.0),  # outside the canonical grammar: the judge's
    ],
)
def test_math_expressions(completion, answer, reward):
    assert grade("Simplify.", completion, answer, "MATH_EXPRESSIONS").reward == reward


@pytest.mark.parametrize(
    ("prompt", "completion", "answer", "reward"),
    [
        (MC, "The answer is (C).", "C", 1.0),
        (MC, "Answer: c", "C", 0.0),  # outside the canonical grammar: the judge's
        (MC, "C) 7", "C", 1.0),
        (MC, "\\boxed{C}", "C", 1.0),
        (MC, "It's C", "C", 1.0),
        (MC, "\\boxed{B}", "C", 0.0),
        (MC, "It could be A, B, C or D", "C", 0.0),
        (MC, "(A) or (C), hard to say", "C", 0.0),
        (MC, "The answer is A good question", "C", 0.0),
        (CAPITALS, "The capital is Rome.", "C", 0.0),  # outside the canonical grammar: the judge's
        (CAPITALS, "The capital is London.", "C", 0.0),
        (MC, "Answer: (C) 7", "(C) 7", 1.0),
        (MULTI, "Answer: A, B and D", "ABD", 1.0),
        (MULTI, "Answer: D, B, A", "ABD", 1.0),
        (MULTI, "Answer: ABD", "A, B, D", 1.0),
        (MULTI, "Answer: A, B", "ABD", 0.0),
        (MC, "\\boxed{\\text{C}}", "C", 1.0),  # \\text{} is a wrapper
        (MC, "4 = 2*2, 6 = 2*3, 9 = 3*3, so C.", "C", 0.0),  # a clause counts only with a marker
        (MC, "4 = 2*2, 6 = 2*3, 9 = 3*3", "ABD", 0.0),  # option texts in working are not a choice
        (
            MC,
            "(A) is 4, not prime. (B) is 6, not prime. (C) is 7, prime. (D) is 9, not prime. Answer: C",
            "C",
            1.0,
        ),
        (MC, "(A) is 4, not prime. (B) is 6, not prime. (C) is 7, prime. (D) is 9, not prime.", "C", 0.0),
        (MC, "Answer: C is correct", "C", 0.0),  # outside the canonical grammar: the judge's
        (MC, "I think C is correct. A and B are wrong.", "C", 0.0),  # outside the canonical grammar: the judge's
        (MC, "It's not C, it's D.", "C", 0.0),
        (MC, "The answer is D, not C.", "C", 0.0),
        (MC, "\\boxed{D} and \\boxed{C}", "C", 0.0),
        (MC, "Answer: C or D", "C", 0.0),
        (MC, "Answer: ABCD", "C", 0.0),
        (MC, "A. Because B is not valid", "A", 0.0),  # outside the canonical grammar: the judge's
        (CAPITALS, "Not Paris, it's Rome", "C", 0.0),  # outside the canonical grammar: the judge's
        (CAPITALS, "Answer: not Rome", "C", 0.0),
        (CAPITALS, "Rome or Paris", "C", 0.0),
        ("Pick one:\nA) New York\nB) York\nC) Boston", "Answer: York", "B", 1.0),
        ("Pick one:\nA) New York\nB) York\nC) Boston", "Answer: New York", "B", 0.0),
    ],
)
def test_multiple_choice(prompt, completion, answer, reward):
    assert grade(prompt, completion, answer, "MULTIPLE_CHOICE").reward == reward


@pytest.mark.parametrize(
    ("completion", "answer", "reward"),
    [
        ("The capital of France is Paris.", "Paris", 0.0),  # outside the canonical grammar: the judge's
        ("the answer is: PARIS!", "Paris", 0.0),  # outside the canonical grammar: the judge's
        ("The Eiffel Tower", "the eiffel tower", 0.0),  # case counts: the judge's
        ("It is not Paris.", "Paris", 0.0),
        ("Paris or London", "Paris", 0.0),
        ("London", "Paris", 0.0),
        ("Answer: São Paulo", "Sao Paulo", 0.0),  # an accent is a letter: the judge's
        ("Answer: Sao Paulo", "Sao Paulo", 1.0),
        ("Jupiter is not the largest; Saturn is.", "Jupiter", 0.0),
        ("Not Michelangelo and not Raphael: Leonardo da Vinci.", "Leonardo da Vinci", 0.0),  # outside the canonical grammar: the judge's
        ("Paris is wrong.", "Paris", 0.0),
        ("It is London, not Paris.", "Paris", 0.0),
        ("It is Paris, not London.", "Paris", 0.0),  # outside the canonical grammar: the judge's
        ("Everyone says Paris, but it's actually Lyon.", "Paris", 0.0),
        ("Some think Lyon, but the answer is Paris.", "Paris", 0.0),  # outside the canonical grammar: the judge's
        ("The answer is Lyon. Paris is the capital though.", "Paris", 0.0),
        ("Paris, London, Berlin", "Paris", 0.0),
        ("Paris London Berlin Madrid Rome", "Paris", 0.0),
        ("Yes, it is Paris, France", "Paris", 0.0),  # outside the canonical grammar: the judge's
        ("\\boxed{\\text{Paris}}", "Paris", 1.0),  # \\text{} is a wrapper
    ],
)
def test_text(completion, answer, reward):
    assert grade("q", completion, answer, "TEXT").reward == reward


@pytest.mark.parametrize(
    ("completion", "answer_type", "reason"),
    [
        ("", "NUMBER", "empty"),
        (":", "NUMBER", "punctuation_only"),
        ("Let's solve this step by step.", "MATH_EXPRESSIONS", "master_key"),
        ("1 2 3 4 5 6 7 8 9", "NUMBER", "answer_spray"),
        ("A B C D", "MULTIPLE_CHOICE", "answer_spray"),
        ("I will think about it.", "NUMBER", "no_final_answer"),
    ],
)
def test_format_gate(completion, answer_type, reason):
    verdict = grade(MC, completion, "C" if answer_type == "MULTIPLE_CHOICE" else "4", answer_type)
    assert verdict.reward == 0.0 and verdict.reason == reason


@pytest.mark.parametrize(
    ("answer", "kind"),
    [("C", "MULTIPLE_CHOICE"), ("ABD", "MULTIPLE_CHOICE"), ("42", "NUMBER"), ("1/2", "NUMBER"),
     ("2x + 1", "MATH_EXPRESSIONS"), ("\\sqrt{2}", "MATH_EXPRESSIONS"), ("Paris", "TEXT")],
)  # fmt: skip
def test_unknown_answer_type_is_inferred(answer, kind):
    assert infer_answer_type(answer) == kind
    verdict = grade("q", f"The answer is {answer}", answer, "GEOMETRY")
    assert f"graded as {kind}" in verdict.explanation and "GEOMETRY" in verdict.explanation


@pytest.mark.parametrize(
    "value",
    [None, 42, 3.5, b"bytes", {"a": 1}, ["x"], "\\boxed{" * 500, "}" * 1000, "\\frac{" * 300 + "1",
     "$" * 999, "\x00\x01\x02", "A" * 10_000, "1" * 5000],
)  # fmt: skip
@pytest.mark.parametrize("answer_type", ["NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT", None])
def test_never_raises_on_hostile_input(value, answer_type):
    for args in ((value, value, "4"), ("q", value, "4"), ("q", "4", value)):
        verdict = grade(*args, answer_type)
        assert 0.0 <= verdict.reward <= 1.0 and verdict.reason


@pytest.mark.parametrize(
    "unit",
    ["\n", "**", "Answer: ", "\\boxed{", "A \t ", "1,", "(", "not ", "the answer is ", "\\frac{1}{", "x^"],
)
def test_repeated_patterns_do_not_backtrack(unit):
    text = unit * (1_000_000 // len(unit))
    started = time.monotonic()
    for answer_type in ("NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT"):
        grade(text, text, "C" if answer_type == "MULTIPLE_CHOICE" else "4", answer_type)
        extract_final_answer(text, answer_type)
    assert time.monotonic() - started < 30.0  # a hang detector; the time is reported in docs/rules.md


WIDE = RuleSettings(max_completion_chars=1_000_000)


@pytest.mark.parametrize(
    ("prompt", "completion", "answer", "answer_type"),
    [
        pytest.param(
            "q", "\\boxed{1}" + " " * 200_000 + "x\\boxed{2}", "2", "MATH_EXPRESSIONS", id="between-boxes"
        ),
        pytest.param("q", "Answer: 1" + " " * 200_000 + "x", "1", "NUMBER", id="before-explanation"),
        pytest.param("q", "Answer: 1 x" + "\t" * 200_000 + "x", "1", "NUMBER", id="tabs-before-explanation"),
        pytest.param("q", "Answer: (1" + ", 2" * 100_000 + "x", "1", "NUMBER", id="unclosed-pair"),
        pytest.param("q", "The answer is (1" + "," * 100_000 + "x", "1", "NUMBER", id="commas-in-a-pair"),
    ],
)
def test_long_runs_inside_an_answer_take_linear_time(prompt, completion, answer, answer_type):
    """At the largest max_completion_chars: each took 2-11 s at 19,000 characters before (quadratic)."""
    started = time.monotonic()
    verdict = grade(prompt, completion, answer, answer_type, WIDE)
    assert time.monotonic() - started < 30.0 and verdict.reason  # quadratic here would take minutes


def test_option_parsing_and_answer_type_inference_take_linear_time():
    """Prompts are cut to 20,000 characters for option parsing, references to 10,000: there the
    quadratic patterns took 3.8-6.6 s and 0.7-0.9 s."""
    started = time.process_time()  # this process's CPU time: other processes on the machine don't count
    assert grade("A) x" + " " * 19_990 + "y", "The answer is y", "A", "MULTIPLE_CHOICE").reward == 0.0
    assert infer_answer_type("(" + "," * 9_998 + "x") == "TEXT"
    assert time.process_time() - started < 0.5


def test_a_completion_longer_than_the_rule_reads_is_never_proven():
    completion = "Let me think. " * 80_000 + "The final answer is \\boxed{42}."
    assert len(completion) > 1_000_000
    for answer_type in ("NUMBER", "MATH_EXPRESSIONS"):
        verdict = grade("q", completion, "42", answer_type)
        assert (verdict.reward, verdict.reason, verdict.proven) == (0.0, "unsure", False)
        assert "longer than the 20,000 characters the rule reads" in verdict.explanation
    shorter = "Let me think. " * 70_000 + "The final answer is \\boxed{42}."
    assert grade("q", shorter, "42", "NUMBER", RuleSettings(max_completion_chars=1_000_000)).reward == 1.0


def test_extract_final_answer():
    assert extract_final_answer("so \\boxed{\\frac{1}{2}} done", "MATH_EXPRESSIONS") == "\\frac{1}{2}"
    assert extract_final_answer("12 - 5 = 7, but 11 would be wrong", "NUMBER") == "7"
    assert extract_final_answer("Let's solve this step by step.", "NUMBER") is None
    assert extract_final_answer("The answer is (B).", "MULTIPLE_CHOICE") == "B"


def test_reward_system_interface():
    system = RuleRewardSystem({"rel_tol": 0.01})
    result = system.reward("q", "The answer is 3.140", "3.14", "NUMBER")
    assert result["reward"] == 1.0 and result["source"] == "rule" and result["extracted"] == "3.140"
    assert {"reward", "source", "explanation", "extracted", "reason"} <= set(result)
    batch = system.reward_batch(
        [{"prompt": "q", "completion": "It is 4", "answer": "4"}, {"completion": None}]
    )
    assert [r["reward"] for r in batch] == [1.0, 0.0]


def test_public_api_and_settings_validation():
    from pydantic import ValidationError

    import adapter.rules

    assert set(adapter.rules.__all__) == {
        "RuleRewardSystem", "RuleSettings", "RuleVerdict", "extract_final_answer", "grade", "infer_answer_type"
    }  # fmt: skip
    for bad in ({"rel_tol": -1}, {"symbolic_timeout": 0}, {"max_completion_chars": 10}, {"unknown": 1}):
        with pytest.raises(ValidationError):
            RuleSettings(**bad)
    with pytest.raises(ValidationError):
        RuleRewardSystem(bad)


def test_answer_type_enum_and_case_are_accepted():
    from judge_vllm.schemas import AnswerType

    assert grade("q", "The answer is 7", "7", AnswerType.NUMBER).reason == "match"
    assert grade("q", "The answer is 7", "7", "number").explanation == "'7' equals '7'"


@pytest.mark.parametrize(
    "answer_type", [5, 3.5, float("nan"), ["NUMBER"], {"type": "NUMBER"}, object(), b"NUMBER"]
)
def test_an_answer_type_that_is_not_a_string_is_ignored(answer_type):
    verdict = grade("q", "The answer is 4", "4", answer_type)
    assert verdict.reward == 1.0 and "graded as NUMBER" in verdict.explanation
    assert RuleRewardSystem().reward("q", "The answer is 4", "4", answer_type)["reward"] == 1.0


@pytest.mark.parametrize(
    ("prompt", "completion", "answer"),
    [
        ("q", "4 \ud800", "4"),
        ("q", "The answer is \udfff4\ud800", "4"),
        ("q", "\\boxed{4}\ud800", "4"),
        ("q", "The answer is Paris\udc00", "Paris\ud800"),
        ("\ud800 (A) 4 (B) 5", "The answer is (A) \ud800", "A"),
        ("q", "\ud800" * 1000, "4"),
        ("q", "4", "\udfff"),
    ],
)
@pytest.mark.parametrize("answer_type", ["NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT", None])
def test_lone_surrogates_give_a_verdict_that_encodes_as_utf8(prompt, completion, answer, answer_type):
    """A bad decode upstream leaves lone surrogates; the verdict quotes the texts, and JSON or a log
    line of it must not fail (pydantic's model_dump_json raised on them)."""
    result = RuleRewardSystem().reward(prompt, completion, answer, answer_type)
    assert 0.0 <= result["reward"] <= 1.0 and result["reason"]
    json.dumps(result, ensure_ascii=False).encode("utf-8")
    grade(prompt, completion, answer, answer_type).model_dump_json()


def test_reward_batch_gives_items_that_are_not_mappings_a_defined_reward():
    results = RuleRewardSystem().reward_batch(
        [None, 4, "The answer is 4", {"completion": "4", "answer": "4"}]
    )
    assert [(r["reward"], r["reason"]) for r in results[:3]] == [(0.0, "invalid_input")] * 3
    assert results[3]["reward"] == 1.0 and all(r["source"] == "rule" for r in results)


@pytest.mark.slow
@pytest.mark.parametrize("answer_type", ["NUMBER", "MATH_EXPRESSIONS", "MULTIPLE_CHOICE", "TEXT", None])
def test_ten_megabyte_inputs_are_graded_in_bounded_time(answer_type):
    """Completions are cut to max_completion_chars, prompts to 20,000 characters for options, and
    references over 10,000 characters refused, before any work (measured: under 0.1 s each on an
    idle machine). The bound is a hang guard, not a speed test: quadratic work on 10 MB would
    take hours, while a busy CI machine took 9 s for all three."""
    completion = ("Let me think. " * 800_000)[:10_000_000] + " The answer is \\boxed{C}."
    system = RuleRewardSystem()
    started = time.monotonic()
    assert system.reward("(A) 1 (B) 2 (C) 3 " * 600_000, completion, "C", answer_type)["reward"] in (0.0, 1.0)
    assert system.reward("q", completion, "4" * 10_000_000, answer_type)["reason"] == "invalid_input"
    assert system.reward("q", "\ud800" * 10_000_000, "4", answer_type)["reward"] == 0.0
    assert time.monotonic() - started < 120.0
