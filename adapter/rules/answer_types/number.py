"""NUMBER: one number, exactly the value of the digits written (grammar: ``number.lark``).

Reading: a number is an exact rational of its digits ("1,234" is 1234, "0.1" is 1/10, "3 \\times
10^{4}" is 30000, an integer of any length exactly, the minus sign U+2212 is minus); "%" divides by
100 on both sides. Allow-lists: a currency sign only where the reference carries it, the question
asks in dollars, or its asking sentence asks "how much" money of amounts written in "$" or dollars
(``_in_dollars``); "%" only where the question or the reference does; a unit only where the
sentence that asks (or says how to write the answer) asks for it, whole ("how many days", "number
of apples", "in minutes"; not "km" for "in km/h", "feet" for "how many square feet" or "boxes" for
"How many apples does he pack in boxes?": ``Question.allows_unit``) or the reference carries it,
never converted.

Equality: the same exact value, with "%" on both sides or neither ("0.25" for "25%" is the
judge's). A different value is a proven mismatch, except where one may be a rounding of the other:
of the answer at the reference's last digit, where the reference is a decimal whose last digit's
place is at most ``rules.rel_tol`` of its value (by default every decimal: "3.3333" and "2/3" for
"3.33" and "0.67"; "123.454" for "123.45"), or of the reference at the answer's own ("0.33" for
"1/3"). The judge decides those; no rounding is paid by rule. A reference that is no number in the grammar ("2\\sqrt{3}") is compared
symbolically, and only with an exact answer (a decimal is no proof of an exact constant). Every link of a chain
("6 \\times 7 = 42", "x = 42") is evaluated exactly and must be the final number: exactly for an
integer or fraction, within half a unit of its last digit for a decimal.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from fractions import Fraction

from lark import Token, Tree

from adapter.rules.answer_types.base import (
    MINUS,
    CanonicalAnswer,
    Equality,
    Question,
    grammar_file,
    in_ascii_tex,
    same_word,
    words,
)
from adapter.rules.extraction.numbers import final_number_text
from adapter.rules.statement import Reading, readings, span, unwrap
from adapter.rules.symbolic import math_equal

__all__ = ["GRAMMAR", "NumberGrammar", "Quantity"]

MAX_EXPONENT = 64
MAX_BITS = 4_096


# How a number is written: positional digits ("4200", "0.75"), powers of ten ("4.2 \\times 10^{3}",
# "4.2e3"), or a fraction and its terms as written ("3/4" and "\\frac{3}{4}" alike; "6/8" is another).
Notation = tuple[object, ...]
# Money other than dollars: where a question names one, "$" is no proof of which it counts.
_OTHER_MONEY = frozenset({"cent", "cents", "euro", "euros", "pound", "pounds", "yen", "yuan", "rupee", "rupees",
                          "peso", "pesos", "franc", "francs", "pence", "penny", "pennies"})  # fmt: skip
# What "how much" may come straight before where it asks money, and the words that say it does.
_MONEY_OR_VERB = frozenset({"money", "did", "does", "do", "will", "would", "is", "was", "are", "were", "has",
                            "have", "had", "can", "could", "should", "must"})  # fmt: skip
_MONEY_WORDS = frozenset({"money", "pay", "pays", "paid", "cost", "costs", "spend", "spends", "spent", "earn",
                          "earns", "earned", "make", "makes", "made", "save", "saves", "saved", "charge",
                          "charges", "charged", "owe", "owes", "owed", "price", "worth", "sell", "sells",
                          "sold", "buy", "buys", "bought", "profit", "tip", "budget", "income", "salary",
                          "revenue", "fee", "donate", "donated"})  # fmt: skip
_COMPARING = frozenset({"more", "less"})
# Words by which a question asks for a notation ("as a fraction in lowest terms", "in scientific
# notation", "as a decimal"): there the answer is written in the reference's.
_NOTATION_WORDS = frozenset({"fraction", "fractions", "decimal", "decimals", "scientific", "notation", "lowest",
                             "simplest", "reduce", "reduced", "simplify", "simplified", "mixed", "improper"})  # fmt: skip


class NotExact(ValueError):
    """A link's value is out of bounds (too large an exponent or number, a division by zero)."""


@dataclass(frozen=True)
class Quantity:
    """A number as written: its exact value ("%" applied), the number before "%" (what a chain's
    links equal), the place value of its last written digit ("3.14": 0.01, "42": 1; 0 for a
    fraction), whether it is exact as written (an integer or a fraction; a decimal may be a
    rounding), whether it carries "%", its unit words, and its notation (``notation``)."""

    value: Fraction
    written: Fraction
    place: Fraction
    exact: bool
    percent: bool
    units: tuple[str, ...]
    notation: Notation = ("positional",)

    def inexact(self, rel_tol: float) -> bool:
        """A decimal whose last digit's place is at most ``rel_tol`` of its value (a rounded value)."""
        return not self.exact and self.value != 0 and self.place / abs(self.value) <= rel_tol

    def rounds_to(self, reference: Quantity) -> bool:
        """Written at least as finely as ``reference``, and rounds to it at its last digit
        ("3.1415927" for "3.14159265" does not; "3.141592654" does)."""
        return self.place <= reference.place and abs(self.value - reference.value) <= reference.place / 2

    def may_round(self, other: Fraction) -> bool:
        """``other`` rounds to this value at its own last digit ("0.33" and 1/3, "3" and 3.0001)."""
        return abs(self.value - other) <= self.place / 2


@dataclass(frozen=True)
class Chain:
    """A stated chain: the final quantity and each earlier link's exact value (None: a name)."""

    final: Quantity
    links: tuple[Fraction | None, ...]


# The grammar's named terminals: the other tokens of a tree are its literal brackets and signs.
_NAMED = frozenset({"SIGN", "INT", "DECIMAL", "E_NOTATION", "DIGIT", "CURRENCY", "PERCENT", "UNIT_WORD", "TIMES",
                    "ADD", "MUL", "NAME"})  # fmt: skip


def _tokens(node: Tree[Token]) -> list[Token]:
    return [child for child in node.children if isinstance(child, Token) and child.type in _NAMED]


def _parts(node: Tree[Token]) -> list[Tree[Token] | Token]:
    return [c for c in node.children if isinstance(c, Tree) or c.type in _NAMED]


def _trees(node: Tree[Token]) -> list[Tree[Token]]:
    return [c for c in node.children if isinstance(c, Tree)]


def _magnitude(token: Token) -> tuple[Fraction, Fraction]:
    """(value, place value of the last digit) of an INT, DECIMAL or E_NOTATION token."""
    text = str(token).replace(",", "")
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    power = int(exponent or 0)
    if abs(power) > MAX_BITS:
        raise NotExact("exponent out of bounds")
    return Fraction(mantissa) * Fraction(10) ** power, Fraction(10) ** (power - decimals)


def _number(node: Tree[Token]) -> tuple[Fraction, Fraction, bool]:
    """(exact value, place value of the last digit, exact as written) of a ``number`` node."""
    tokens = _tokens(node)
    sign = -1 if tokens and tokens[0].type == "SIGN" and tokens[0] in MINUS else 1
    if node.data == "plain":
        (digits,) = _tokens(_trees(node)[0])
        value, place = _magnitude(digits)
        return sign * value, place, digits.type == "INT"
    ints = [Fraction(str(t).replace(",", "")) for t in tokens if t.type == "INT"]
    if node.data in ("ratio", "tex_fraction"):
        signs = [t for t in tokens if t.type == "SIGN"]
        if node.data == "tex_fraction" and len(signs) == 2 and signs[1] in MINUS:
            sign = -sign
        if ints[-1] == 0:
            raise NotExact("division by zero")
        return sign * ints[0] / ints[1], Fraction(0), True
    (digits,) = _tokens(_trees(node)[0])  # scientific: the mantissa, then "10^" and its exponent
    value, place = _magnitude(digits)
    times = next(i for i, t in enumerate(tokens) if t.type == "TIMES")
    exponent = int(
        "".join("-" if t in MINUS else str(t).replace(",", "") for t in tokens[times + 1 :] if t.type != "SIGN" or t in MINUS)
    )
    if abs(exponent) > MAX_BITS:
        raise NotExact("exponent out of bounds")
    scale = Fraction(10) ** exponent
    return sign * value * scale, place * scale, False


def _notation(node: Tree[Token]) -> Notation:
    """The notation of a ``number`` node (see ``Notation``)."""
    if node.data in ("ratio", "tex_fraction"):
        return ("fraction", *(Fraction(str(t).replace(",", "")) for t in _tokens(node) if t.type == "INT"))
    if node.data == "plain" and not any(t.type == "E_NOTATION" for t in _tokens(_trees(node)[0])):
        return ("positional",)
    return ("powers of ten",)


def _bounded(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS:
        raise NotExact("value out of bounds")
    return value


def _evaluate(node: Tree[Token] | Token) -> Fraction:
    """The exact value of an arithmetic link."""
    if isinstance(node, Token):
        if node.type in ("INT", "DECIMAL", "E_NOTATION"):
            return _magnitude(node)[0]
        if node.type == "DIGIT":
            return Fraction(int(node))
        raise NotExact(f"unexpected {node!s}")
    children = [c for c in _parts(node) if not (isinstance(c, Token) and c.type == "FRAC")]
    if node.data == "binary":
        left, op, right = children
        a, b = _evaluate(left), _evaluate(right)
        if op == "+" or op in MINUS:
            return _bounded(a + b if op == "+" else a - b)
        if op in ("/", "\\div", "\u00f7"):
            if b == 0:
                raise NotExact("division by zero")
            return _bounded(a / b)
        return _bounded(a * b)
    if node.data == "negated":
        sign, inner = children
        return -_evaluate(inner) if sign in MINUS else _evaluate(inner)
    if node.data == "raised":
        base, exponent = (_evaluate(c) for c in children)
        if exponent.denominator != 1 or abs(exponent) > MAX_EXPONENT or (base == 0 and exponent < 0):
            raise NotExact("exponent out of bounds")
        return _bounded(base ** int(exponent))
    if node.data == "fraction":
        top, bottom = (_evaluate(c) for c in children)
        if bottom == 0:
            raise NotExact("division by zero")
        return _bounded(top / bottom)
    (inner,) = children  # sum, product, factor, atom, exponent, literal, magnitude: one part
    return _evaluate(inner)


def _in_dollars(question: Question) -> bool:
    """The answer may carry "$": the reference does, the question asks in dollars ("how many
    dollars", "in dollars": ``Question.allows_unit``), or its asking sentence asks "how much" money
    (``_asks_money``) of amounts it writes in "$" or dollars only (no other currency sign or name)."""
    prompt = question.prompt
    return (
        "$" in question.reference
        or question.allows_unit(("dollars",))
        or (
            ("$" in prompt or bool({"dollar", "dollars"} & question.words))
            and not _OTHER_MONEY & question.words
            and all(char == "$" or unicodedata.category(char) != "Sc" for char in prompt)
            and _asks_money(question.asking_sentence)
        )
    )


def _asks_money(sentence: str) -> bool:
    """``sentence`` asks "how much" (and "more" or "less") straight before "money" or a verb, and
    names money ("How much did he pay?", "How much more money does she need?"; not "How much
    flour ...?" or "How much does the bag weigh?")."""
    found = words(sentence)
    for i in range(len(found) - 2):
        if (found[i], found[i + 1]) != ("how", "much"):
            continue
        at = i + 2
        while at < len(found) and found[at] in _COMPARING:
            at += 1
        if at < len(found) and found[at] in _MONEY_OR_VERB and _MONEY_WORDS & set(found):
            return True
    return False


class NumberGrammar:
    """NUMBER: see the module docstring."""

    name = "NUMBER"
    value_grammar = grammar_file(__file__)
    bare_values_state_answers = True
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = True
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/number.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The final number stated (``rules.extraction.numbers.final_number_text``)."""
        return final_number_text(text, anchored)

    def _quantity(self, node: Tree[Token], question: Question | None) -> Quantity | None:
        """A ``quantity`` node as a Quantity, or None where an allow-list refuses it (``question``
        None: the reference itself, which allows what it writes)."""
        tokens = _tokens(node)
        number = next(c for c in _trees(node) if c.data != "unit")
        unit = next((c for c in _trees(node) if c.data == "unit"), None)
        units = tuple(str(t).lower() for t in _tokens(unit)) if unit is not None else ()
        percent = any(t.type == "PERCENT" for t in tokens)
        if question is not None:
            if any(t.type == "CURRENCY" for t in tokens) and not _in_dollars(question):
                return None
            if percent and not ("%" in question.prompt + question.reference or "percent" in question.words):
                return None
            carried = frozenset(words(question.reference))
            if units and not (question.allows_unit(units) or all(same_word(u, carried) for u in units)):
                return None
        try:
            written, place, exact = _number(number)
        except NotExact:
            return None
        value = written / 100 if percent else written
        return Quantity(
            value, written, place / 100 if percent else place, exact, percent, units, _notation(number)
        )

    def _chain(self, value: Tree[Token], question: Question | None) -> Chain | None:
        links: list[Fraction | None] = []
        while value.data == "chain":
            link, slot = _trees(value)
            if link.data == "name":
                if question is not None and not question.asks_for(str(_tokens(link)[0])):
                    return None
                links.append(None)
            else:
                try:
                    links.append(_evaluate(link))
                except NotExact:
                    return None
            value, _ = unwrap(slot)
        final = self._quantity(_trees(value)[0], question)
        return None if final is None else Chain(final, tuple(links))

    def read(self, reading: Reading, question: Question) -> CanonicalAnswer | None:
        """The reading's number, through the allow-lists, keyed by its exact value."""
        chain = self._chain(reading.value, question)
        if chain is None:
            return None
        final = chain.final
        text = (
            span(_final_node(reading.value), reading.source)
            if reading.value.data == "chain"
            else reading.text
        )
        return CanonicalAnswer(text=text.strip(), key=final.value, detail=chain)

    def reference(self, question: Question) -> Quantity | None:
        """The reference as a number in the grammar, or None (then it is compared symbolically)."""
        values = {
            chain.final
            for found in readings(self.value_grammar, question.reference.strip(), start="slot")
            if (chain := self._chain(found.value, None)) is not None
        }
        return values.pop() if len(values) == 1 else None

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """The final number against the reference (exact; a rounding either way is the judge's); an
        equal one is proven only with every link of its chain."""
        chain = answer.detail
        if not isinstance(chain, Chain):
            return Equality.UNPROVEN
        equality = self._final_equality(chain.final, answer.text, question, timeout_s)
        if equality is Equality.EQUAL and not self._links_hold(chain):
            return Equality.UNPROVEN
        return equality

    def _links_hold(self, chain: Chain) -> bool:
        """Every arithmetic link is the final number as written: exactly for an integer or a
        fraction, within half a unit of its last digit for a decimal."""
        final = chain.final
        tolerance = 0 if final.exact else final.place * (100 if final.percent else 1) / 2
        return all(link is None or abs(link - final.written) <= tolerance for link in chain.links)

    def _final_equality(self, final: Quantity, text: str, question: Question, timeout_s: float) -> Equality:
        reference = self.reference(question)
        if reference is None:
            if final.exact and math_equal(question.reference, in_ascii_tex(text), timeout_s):
                return Equality.EQUAL
            return Equality.UNPROVEN
        if final.percent != reference.percent:
            return Equality.UNPROVEN  # "0.25" for "25%": the question may ask for a percent
        if final.value == reference.value:
            # "0.75" for "3/4" is the judge's where the question asks for a notation
            notation_asked = bool(_NOTATION_WORDS & question.words)
            return Equality.UNPROVEN if notation_asked and final.notation != reference.notation else Equality.EQUAL
        if (reference.inexact(question.settings.rel_tol) and final.rounds_to(reference)) or final.may_round(
            reference.value
        ):  # the reference may be a rounding of the answer ("3.3333" for "3.33"), or the answer of the
            # reference ("0.33" for "1/3"): the judge's
            return Equality.UNPROVEN
        return Equality.DIFFERENT


def _final_node(value: Tree[Token]) -> Tree[Token]:
    """The final quantity's value node of a chain."""
    while value.data == "chain":
        value, _ = unwrap(_trees(value)[1])
    return value


GRAMMAR = NumberGrammar()
