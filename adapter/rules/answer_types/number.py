"""NUMBER: a plain ASCII number, as a rule can prove it equal.

The grammar of X (docs/canonical-answers.md)::

    X      := [currency] number ["%"] [unit]
    number := ["-" | "+"] digits ["." digits] [("e" | "E") ["-" | "+"] digits]
            | ["-"] digits "/" digits  |  ["-"] \\frac{digits}{digits}
            | number ("\\times" | "\\cdot") "10^" ["{"] exponent ["}"]
    digits := 0-9, with thousands commas ("3,600") allowed

A currency sign ("$", "\\$") only where the question writes amounts with it or says "dollar"; "%"
only where the question or the reference does; a unit is one or two words that the question or
the reference names, never a word that changes the value ("thousand", "more", "squared") and
never one of several units of one kind the question names ("72 minutes" when it names hours and
minutes, unless it is the one asked: "How many seconds ..."). The final statement may be a chain
"E = ... = X" whose links are arithmetic (``arithmetic``), each equal to X at X's precision, after
an optional one-letter name ("x = 42").

Equality: ``numbers_equal`` (tolerances and exactness as in the rule settings); a reference that
is no plain number ("2\\sqrt{3}") is compared symbolically, and a difference there is no proof.
"""

from __future__ import annotations

import re
from fractions import Fraction

from adapter.rules.answer_types.arithmetic import NotArithmetic, evaluate
from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question
from adapter.rules.number import final_number_text, numbers_equal, parse_number
from adapter.rules.symbolic import math_equal

__all__ = ["GRAMMAR", "NumberGrammar"]

_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)"
_NUMBER = re.compile(
    r"(?P<number>[-+]?(?:" + _DIGITS + r"(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"|-?\d+\s*/\s*\d+"
    r"|-?\\[dt]?frac\{\s*\d+\s*\}\{\s*\d+\s*\}"
    r"|[-+]?" + _DIGITS + r"(?:\.\d+)?\s*\\(?:times|cdot)\s*10\s*\^\s*(?:\{\s*[-+]?\d+\s*\}|[-+]?\d))"
)
_VALUE = re.compile(
    r"(?P<currency>\\?\$)?(?P<number>[^%$]+?)\s*(?P<percent>%)?"
    r"(?:\s+(?P<unit>[A-Za-z]+(?: [A-Za-z]+)?))?"
)
_TIMES_TEN = re.compile(r"\s*\\(?:times|cdot)\s*10\s*\^\s*\{?\s*([-+]?\d+)\s*\}?$")
_FRAC = re.compile(r"(-?)\\[dt]?frac\{\s*(\d+)\s*\}\{\s*(\d+)\s*\}")
_WORD = re.compile(r"[A-Za-z]+")
_NAME = re.compile(r"[A-Za-z]")
# Words that change a number's value or commitment: never a unit.
_NOT_UNITS = frozenset(
    [
        "hundred",
        "hundreds",
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "billions",
        "trillion",
        "trillions",
        "dozen",
        "dozens",
        "grand",
        "k",
        "m",
        "b",
        "bn",
        "more",
        "less",
        "fewer",
        "greater",
        "smaller",
        "larger",
        "higher",
        "lower",
        "over",
        "under",
        "above",
        "below",
        "least",
        "most",
        "times",
        "squared",
        "cubed",
        "percent",
        "plus",
        "minus",
        "not",
        "no",
        "or",
        "and",
        "maybe",
        "about",
        "approximately",
        "roughly",
        "nearly",
        "almost",
        "exactly",
        "only",
        "is",
        "are",
        "was",
        "were",
    ]
)
# Units by kind: the question naming two of one kind asks in one of them.
_UNIT_KINDS = {
    "time": "second seconds sec secs minute minutes min mins hour hours hr hrs h day days week weeks month "
    "months year years",
    "length": "metre metres meter meters m km kilometre kilometres kilometer kilometers cm centimetre "
    "centimetres centimeter centimeters mm millimetre millimetres millimeter millimeters mile miles foot "
    "feet ft inch inches yard yards",
    "mass": "gram grams g kg kilogram kilograms mg milligram milligrams pound pounds lb lbs ounce ounces oz "
    "tonne tonnes ton tons",
    "volume": "litre litres liter liters l ml millilitre millilitres milliliter milliliters gallon gallons",
    "money": "dollar dollars cent cents euro euros penny pennies pence",
}
_ASKED_UNIT = re.compile(r"\b(?:how many|how much|number of|in)\s+([A-Za-z]+)", re.IGNORECASE)
_KIND_OF = {unit: kind for kind, units in _UNIT_KINDS.items() for unit in units.split()}


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _unit_ok(unit: str, question: Question) -> bool:
    """A unit the question or reference names, that changes no value, of a kind the question does
    not name twice."""
    named = _words(question.prompt) | _words(question.reference)
    words = unit.lower().split()
    if any(w not in named or w in _NOT_UNITS for w in words):
        return False
    kinds = {_KIND_OF[w] for w in words if w in _KIND_OF}
    same_kind = {w.rstrip("s") for w in _words(question.prompt) if _KIND_OF.get(w) in kinds}
    if len(same_kind) <= 1:
        return True
    asked = {w.lower() for w in _ASKED_UNIT.findall(question.prompt)}
    return all(w in asked for w in words if w in _KIND_OF)


def _plain(number: str) -> str:
    """The number as ``numbers_equal`` reads it ("\\frac{1}{2}" -> "1/2", "3 \\times 10^{4}" -> "3e4")."""
    frac = _FRAC.fullmatch(number)
    if frac:
        return f"{frac.group(1)}{frac.group(2)}/{frac.group(3)}"
    ten = _TIMES_TEN.search(number)
    if ten:
        return f"{number[: ten.start()].strip()}e{ten.group(1)}"
    return number.replace(" ", "")


def _value(plain: str) -> Fraction | None:
    try:
        if "/" in plain:
            top, bottom = plain.split("/")
            return Fraction(top.replace(",", "")) / Fraction(bottom) if Fraction(bottom) else None
        return Fraction(plain.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None


def _precision(plain: str) -> Fraction:
    """Half a unit of the number's last written digit (a fraction is exact)."""
    if "/" in plain:
        return Fraction(0)
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return Fraction(1, 2) * Fraction(10) ** (int(exponent or 0) - decimals)


class NumberGrammar:
    """NUMBER: see the module docstring."""

    name = "NUMBER"
    bare_value_is_whole_completion = False
    bare_values_state_answers = True
    chains = True
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = True
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/number.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The final number stated (``rules.number.final_number_text``)."""
        return final_number_text(text, anchored)

    def canonical(self, text: str, question: Question) -> CanonicalAnswer | None:
        """``text`` as a number in the grammar, keyed by its exact value, or None."""
        if not text.isascii():
            return None
        match = _VALUE.fullmatch(text.strip())
        if match is None or not _NUMBER.fullmatch(match.group("number")):
            return None
        if match.group("currency") and not ("$" in question.prompt or "dollar" in _words(question.prompt)):
            return None
        asks_percent = "%" in question.prompt + question.reference or "percent" in _words(question.prompt)
        if match.group("percent") and not asks_percent:
            return None
        if match.group("unit") and not _unit_ok(match.group("unit"), question):
            return None
        plain = _plain(match.group("number")) + (match.group("percent") or "")
        value = _value(plain.rstrip("%"))
        return None if value is None else CanonicalAnswer(text=plain, key=value)

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """Equal within the rule's tolerances; different when both are plain numbers."""
        settings = question.settings
        if numbers_equal(question.reference, answer.text, settings.rel_tol, settings.abs_tol):
            return Equality.EQUAL
        if parse_number(question.reference) is not None:
            return Equality.DIFFERENT
        equal = math_equal(question.reference, answer.text, timeout_s)
        return Equality.EQUAL if equal else Equality.UNPROVEN

    def link_in_grammar(self, link: str, question: Question) -> bool:
        """A link is arithmetic, or a name ("x = 42")."""
        if _NAME.fullmatch(link):
            return True
        try:
            evaluate(link)
        except NotArithmetic:
            return False
        return True

    def link_holds(self, link: str, answer: CanonicalAnswer, question: Question, timeout_s: float) -> bool:
        """The link names the answer ("x"), or is arithmetic whose exact value, rounded at the
        answer's precision, is it."""
        if _NAME.fullmatch(link):
            return True
        value = answer.key
        if not isinstance(value, Fraction):
            return False
        try:
            link_value = evaluate(link)
        except NotArithmetic:
            return False
        return abs(link_value - value) <= _precision(answer.text.rstrip("%"))


GRAMMAR = NumberGrammar()
