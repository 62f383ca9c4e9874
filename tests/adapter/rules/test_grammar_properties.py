"""Properties of the rule, on statements generated from the grammar files themselves.

Hypothesis writes final statements from each answer type's grammar (``hypothesis.extra.lark``
over statement.lark joined to the type's .lark file): every generated statement parses back, a
generated statement of the right value is paid, and no mutation that changes what it means is
paid: another value, a qualifier before the value, on the line above or above an answer header,
another statement before it, a look-alike character, a line break inside the value, words after it,
a unit or "$" the question says without asking for it.
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

import lark
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from adapter.rules import RuleSettings
from adapter.rules.answer_types import GRAMMARS, CanonicalAnswer, Question
from adapter.rules.answer_types.text import same_text
from adapter.rules.proof import prove
from adapter.rules.statement import MAX_READINGS, STATEMENT_GRAMMAR, Reading, readings

SETTINGS = RuleSettings()
# Derandomized: the same examples on every run (a CI run fails or passes for the code, not the draw).
PROPERTIES = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
# The question allows every slot the grammar has: a unit it asks for, "$" and "%".
# The words a subject uses are the asking sentence's own, and it asks for "the cost of apples"
# (a generated subject it does not ask for, "Bob's cost", is left out: test_reward_hacks holds those).
NUMBER_QUESTION = (
    "What is the cost of apples, in $ or as a percent, or how many apples did Bob's 3 friends pick (the remaining cost)?"
)
CHOICE_QUESTION = "Which is the cost of apples, red (Bob's remaining cost)? (A) blood (B) sky (C) grass (D) sea"
TEXT_QUESTION = "Which is the cost of apples, the capital of France (Bob's remaining cost)?"
# What a policy might put before a value to hedge it, or after it.
QUALIFIERS = ["about ", "not ", "approx. ", "roughly ", "at least ", "almost ", "maybe ", "~", "over ", "-"]
AFTERTHOUGHTS = [" or 43", " (I think)", "?", " or so", ", roughly", " at most", " is wrong"]
LOOKALIKES = {"0": "\uff10", "1": "\u0661", "2": "\U0001d7ee", "3": "\u0663", "4": "\uff14", "5": "\u0665",
              "6": "\uff16", "7": "\u0667", "8": "\uff18", "9": "\u0669", "A": "\u0391", "B": "\u0412",
              "C": "\u0421", "a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440"}  # fmt: skip

_NUMERALS = st.integers(0, 10**25).map(str) | st.integers(1_000, 10**9).map("{:,}".format)
_DECIMALS = st.builds(lambda i, f: f"{i}.{f}", st.integers(0, 999), st.integers(0, 999_999))
_TERMINALS = {
    "_S": st.just(" "),
    "INT": _NUMERALS,
    "DECIMAL": _DECIMALS,
    "UNIT_WORD": st.just("apples"),
    "SUBJECT_WORD": st.just("apples "),
    "MEASURE": st.just("cost "),
    "NAME": st.sampled_from(["x", "n"]),
    "DETERMINER": st.sampled_from(["the ", "The ", "this ", "our "]),
    "POSSESSIVE": st.just("Bob's "),
    "ASKED_QUALIFIER": st.just("remaining "),
    "TEXT": st.sampled_from(["Paris", "paris", "PARIS", "Lyon"]),
    "OPTION_TEXT": st.sampled_from(["blood", "Blood", "sky", "grass"]),
    # A run of letters ends where no letter follows: two runs written side by side are one run.
    "LETTERS": st.sampled_from(["x ", "y ", "xy ", "A "]),
    # What a function or the root sign takes unbracketed: nothing after it may be under it too.
    "ARGUMENT": st.sampled_from(["x", "y"]),
    "RADICAND": st.sampled_from(["3", "12"]),
}


_WORD_END = "(?![A-Za-z])"


def _generated(kind: str, start: str = "start") -> st.SearchStrategy[str]:
    """Statements (or another rule's texts) from the grammar. A word terminal ends where no letter
    follows (its regex says so): the generator writes a space after each, as the spaces the grammar
    ignores may be left out."""
    grammar = lark.Lark(STATEMENT_GRAMMAR + "\n" + GRAMMARS[kind].value_grammar, start=start)
    terminals = {t.name: t for t in grammar.terminals}
    explicit = {name: strategy for name, strategy in _TERMINALS.items() if name in terminals}
    for name, terminal in terminals.items():
        pattern = terminal.pattern.value
        if name not in explicit and terminal.pattern.type == "re" and pattern.endswith(_WORD_END):
            words = st.from_regex(pattern.removesuffix(_WORD_END), fullmatch=True)
            explicit[name] = words.map(lambda word: word + " ")
    return from_lark(grammar, start=start, explicit=explicit).filter(lambda text: len(text) <= 300)


def _answer(kind: str, prompt: str, text: str, reference: str) -> tuple[Reading, CanonicalAnswer] | None:
    """The one answer the whole of ``text`` states, as the type reads it (None: none, or ambiguous)."""
    grammar = GRAMMARS[kind]
    question = Question(prompt=prompt, reference=reference, settings=SETTINGS)
    found = readings(grammar.value_grammar, text)
    read = [(r, a) for r in found if (a := grammar.read(r, question))]
    # More readings than the rule tells apart ("$$$$$$\\boxed{0}$$$$$$") is ambiguous by design.
    return read[0] if len({a.key for _, a in read}) == 1 and len(found) <= MAX_READINGS else None


def _asks(prompt: str, reading: Reading) -> bool:
    """Whether the question asks for what the reading's subject names (or it names nothing)."""
    return not reading.phrase or bool(reading.counted) or Question(prompt, "0", SETTINGS).says(reading.phrase)


def _exact(value: Fraction, percent: bool) -> str:
    number = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    return number + ("%" if percent else "")


def _paid(prompt: str, completion: str, reference: str, kind: str) -> bool:
    return prove(prompt, completion, reference, kind, SETTINGS).outcome == "match"


@pytest.mark.parametrize("kind", ["NUMBER", "MULTIPLE_CHOICE", "TEXT", "MATH_EXPRESSIONS"])
def test_every_statement_the_grammar_generates_parses_back(kind):
    @PROPERTIES
    @given(_generated(kind))
    def check(text: str) -> None:
        assert readings(GRAMMARS[kind].value_grammar, text), text

    check()


def _number_statement() -> st.SearchStrategy[tuple[str, str, Reading]]:
    """A generated NUMBER statement that states one plain (unchained) number, with its exact
    reference."""

    def stated(text: str) -> tuple[str, str, Reading] | None:
        found = _answer("NUMBER", NUMBER_QUESTION, text, "0")
        if found is None or found[0].value.data == "chain":
            return None
        if not _asks(NUMBER_QUESTION, found[0]):
            return None
        chain = found[1].detail
        final = chain.final  # type: ignore[attr-defined]
        if max(final.written.numerator.bit_length(), final.written.denominator.bit_length()) > 300:
            return None  # a reference is short
        reference = _exact(final.written, final.percent)
        return (text, reference, found[0]) if len(reference) <= 100 else None  # a reference is short

    return _generated("NUMBER").map(stated).filter(lambda found: found is not None)  # type: ignore[return-value]


@PROPERTIES
@given(_number_statement(), st.integers(1, 10**6))
def test_a_generated_number_statement_is_paid_and_no_other_value_is(stated, shift):
    text, reference, _ = stated
    assert _paid(NUMBER_QUESTION, text, reference, "NUMBER"), (text, reference)
    value = Fraction(reference.rstrip("%")) + shift
    other = _exact(value, reference.endswith("%"))
    assert not _paid(NUMBER_QUESTION, text, other, "NUMBER"), (text, other)


def _value_start(reading: Reading) -> int:
    tokens = list(reading.value.scan_values(lambda v: isinstance(v, lark.Token)))
    return min(t.start_pos or 0 for t in tokens)


@PROPERTIES
@given(_number_statement(), st.sampled_from(QUALIFIERS))
def test_a_qualifier_before_the_value_is_never_paid(stated, qualifier):
    text, reference, reading = stated
    at = _value_start(reading)
    mutated = text[:at] + qualifier + text[at:]
    assert not _paid(NUMBER_QUESTION, mutated, reference, "NUMBER"), mutated


@PROPERTIES
@given(
    _number_statement(),
    st.sampled_from(["It is not", "It is approximately", "The answer is not", "Nobody says"]),
)
def test_a_qualifier_on_the_line_above_is_never_paid(stated, qualifier):
    text, reference, _ = stated
    # A Markdown heading ("#### 42") or an <answer> element is a block of its own: no line runs into it.
    assume(not text.lstrip().startswith(("#", "<answer>")))
    assert not _paid(NUMBER_QUESTION, f"{qualifier}\n{text}", reference, "NUMBER"), text


@PROPERTIES
@given(
    _number_statement(),
    st.sampled_from([
        "A common wrong answer, from students who skip step 3", "Only under the false assumption $a = b$",
        "$\\text{This is NOT the answer:}$", "\\[\\text{Not the answer:}\\]", "This value is wrong\u2460",
        "It fails the check of step 2", "We reject it since $x < 40$", "Wrong $\\Rightarrow$",
    ]),
    st.sampled_from(["\n", "\n\n", "\n---\n"]),
)  # fmt: skip
def test_a_line_above_that_does_not_end_its_sentence_is_never_paid(stated, lead_in, between):
    """A line that ends in a digit, a formula or words inside math leads into what follows, blank
    lines and a thematic break between or not (round 10)."""
    text, reference, _ = stated
    assume(not text.lstrip().startswith(("#", "<answer>")))
    completion = f"{lead_in}{between}{text}"
    assert not _paid(NUMBER_QUESTION, completion, reference, "NUMBER"), completion


@PROPERTIES
@given(
    _number_statement(),
    _generated("NUMBER", start="header"),
    st.sampled_from(["It is not", "A tempting but wrong result is", "The following is NOT the answer:"]),
)
def test_a_qualifier_above_an_answer_header_is_never_paid(stated, header, qualifier):
    text, reference, _ = stated
    for between in ("\n", "\n---\n"):  # a thematic break is passed over
        completion = f"{qualifier}{between}{header}\n{text}"
        assert not _paid(NUMBER_QUESTION, completion, reference, "NUMBER"), completion


@PROPERTIES
@given(_number_statement(), st.integers(1, 99))
def test_another_statement_before_the_final_one_is_never_paid(stated, shift):
    text, reference, _ = stated
    other = _exact(Fraction(reference.rstrip("%")) + shift, reference.endswith("%"))
    for before in (f"The answer is {other}.", f"\\boxed{{{other}}}", f"Answer: {other}"):
        assert not _paid(NUMBER_QUESTION, f"{before}\n\n{text}", reference, "NUMBER"), (before, text)


@PROPERTIES
@given(_number_statement(), st.data())
def test_a_lookalike_character_or_a_line_break_in_the_value_is_never_paid(stated, data):
    text, reference, reading = stated
    value_text = reading.text
    spots = [i for i, char in enumerate(value_text) if char in LOOKALIKES]
    assume(spots)
    at = data.draw(st.sampled_from(spots))
    start = _value_start(reading)
    swapped = text[: start + at] + LOOKALIKES[value_text[at]] + text[start + at + 1 :]
    assert unicodedata.normalize("NFKC", swapped) != swapped or swapped != text
    assert not _paid(NUMBER_QUESTION, swapped, reference, "NUMBER"), swapped
    if at > 0 and value_text[at - 1].isdigit() and value_text[at].isdigit():
        broken = text[: start + at] + "\n" + text[start + at :]
        assert not _paid(NUMBER_QUESTION, broken, reference, "NUMBER"), broken


# The unit and "$" the generated statements write, said in the question but not asked by it.
SAID_NOT_ASKED = "Bob counts his fruit in apples at the dollar store, $5 a crate. What is the cost of apples?"


@PROPERTIES
@given(_number_statement())
def test_a_unit_or_dollar_the_question_says_but_does_not_ask_is_never_paid(stated):
    text, reference, reading = stated
    kinds = {t.type for t in reading.value.scan_values(lambda v: isinstance(v, lark.Token))}
    assume(kinds & {"UNIT_WORD", "CURRENCY"} and "PERCENT" not in kinds)
    assert not _paid(SAID_NOT_ASKED, text, reference, "NUMBER"), text


@PROPERTIES
@given(_number_statement(), st.sampled_from(AFTERTHOUGHTS))
def test_words_after_the_value_are_never_paid(stated, afterthought):
    text, reference, _ = stated
    assert not _paid(NUMBER_QUESTION, text.rstrip().removesuffix(".") + afterthought, reference, "NUMBER")


@PROPERTIES
@given(_generated("MULTIPLE_CHOICE"), st.sampled_from(["A", "B", "C", "D"]))
def test_a_generated_choice_is_paid_only_for_its_own_letter(text, reference):
    found = _answer("MULTIPLE_CHOICE", CHOICE_QUESTION, text, reference)
    assume(found is not None and _asks(CHOICE_QUESTION, found[0]))
    _, answer = found  # type: ignore[misc]
    assert _paid(CHOICE_QUESTION, text, reference, "MULTIPLE_CHOICE") == (answer.key == frozenset(reference))


@PROPERTIES
@given(_generated("TEXT"), st.sampled_from(["Paris", "Lyon", "Paris, France", "Pari"]))
def test_a_generated_text_is_paid_exactly_when_it_is_the_reference(text, reference):
    paid = _paid(TEXT_QUESTION, text, reference, "TEXT")
    found = readings(GRAMMARS["TEXT"].value_grammar, text)
    assume(len(found) <= MAX_READINGS and all(_asks(TEXT_QUESTION, r) for r in found))
    # A text is another text's answer only when it is that text: one reading of it suffices.
    assert paid == any(same_text(r.text, reference) for r in found), (text, reference)
