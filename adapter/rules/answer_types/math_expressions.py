"""MATH_EXPRESSIONS: an expression in a strict LaTeX subset, proven equal (grammar:
``math_expressions.lark``).

Allow-lists: the form the reference writes (``written_form``: the same operations on the same
operands, up to the order of a sum's terms or a product's factors, brackets and spelling), so a
value equal in another form ("x^2 - 1" for "(x-1)(x+1)", "\\sqrt{8}" for "2\\sqrt{2}") is the
judge's, for the question may ask for the form; the reference's own letters (a run of letters is a product of them) and Greek
letters; a subscript only where the reference writes one; a list only where the reference is one;
an interval as its brackets and ends, a union of them and a set's members in any order.
Equality is math-verify's (``symbolic.math_equal``, bounded in time), never for a decimal where the
reference writes none (3.141593 is not \\pi). A difference is proven only by different exact values
at a rational point (``symbolic.math_differs``). A chain "E = ... = X" is proven link by link: a
name ("y", "f(x)") states X (where the reference is "name = value", the same name), every other
link is proven equal to X. A reference that is an equation ("x^2 + y^2 = 1") is matched only
whole, by an equation math-verify proves the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from lark import Token, Tree

from adapter.rules.answer_types.base import (
    MINUS,
    CanonicalAnswer,
    Equality,
    Question,
    grammar_file,
    in_ascii_tex,
)
from adapter.rules.extraction.anchors import trailing_expression
from adapter.rules.statement import Reading, readings, span, unwrap
from adapter.rules.symbolic import math_differs, math_equal

__all__ = ["GRAMMAR", "MathExpressionsGrammar"]

_FUNCTIONS = frozenset(["sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "log", "ln", "exp", "sqrt"])


# The terminals that carry meaning in a parsed expression; the others are brackets and braces.
_MEANINGFUL = frozenset({"INTERVAL_OPENS", "INTERVAL_CLOSES", "NUMBER", "DIGIT", "RADICAND", "LETTERS", "ARGUMENT",
                         "CONSTANT", "GREEK", "FUNCTION", "ADD", "SIGN", "MUL"})  # fmt: skip
# The letters a value is written in: the reference's own only.
_LETTER_TOKENS = frozenset({"LETTERS", "ARGUMENT"})
# Constants written in Unicode, as their TeX names.
_CONSTANTS = {"\u03c0": "pi"}
_QUOTIENTS = frozenset({"/", "\\div"})
Form = tuple[object, ...]


@dataclass(frozen=True)
class Statement:
    """A stated expression: its final value as written, each earlier link (names included), and
    the final value's written form (None where the grammar read no single form)."""

    final: str
    links: tuple[str, ...]
    form: Form | None = field(default=None, compare=False)


def _meaningful(node: Tree[Token]) -> list[Tree[Token] | Token]:
    return [c for c in node.children if isinstance(c, Tree) or c.type in _MEANINGFUL]


def _flat(kind: str, parts: list[Form]) -> Form:
    """A sum or product of ``parts``, nested ones of the same kind merged, in a fixed order."""
    merged: list[Form] = []
    for part in parts:
        merged.extend(part[1] if part[0] == kind else [part])  # type: ignore[arg-type]
    return (kind, tuple(sorted(merged, key=repr)))


def _letters(run: str) -> list[Form]:
    """A run of letters is a product of them ("ab" is a times b)."""
    return [("letter", char) for char in run]


def written_form(node: Tree[Token] | Token) -> Form:
    """The form an expression is written in: its operations and operands, up to the order of a
    sum's terms and a product's factors, brackets, and spelling ("\\dfrac" is "\\frac", "a/b" is
    "\\frac{a}{b}", "\\cdot" is "*", a number is its value)."""
    if isinstance(node, Token):
        if node.type in ("NUMBER", "DIGIT", "RADICAND"):
            return ("number", Fraction(str(node)))
        if node.type in _LETTER_TOKENS:
            letters = _letters(str(node))
            return letters[0] if len(letters) == 1 else _flat("product", letters)
        if node.type in ("INTERVAL_OPENS", "INTERVAL_CLOSES"):
            return ("bracket", str(node)[-1])  # "\\left[" is "["
        return ("symbol", _CONSTANTS.get(str(node), str(node).lstrip("\\")))
    parts = _meaningful(node)
    if node.data == "signed":
        sign, inner = parts
        return ("negated", written_form(inner)) if sign in MINUS else written_form(inner)
    if node.data == "implicit_product":
        return _flat("product", [written_form(part) for part in parts])
    if node.data == "binary":
        left, operator, right = parts
        if operator == "+" or operator in MINUS:
            term = written_form(right)
            return _flat("sum", [written_form(left), ("negated", term) if operator in MINUS else term])
        if operator in _QUOTIENTS:
            return ("fraction", written_form(left), written_form(right))
        return _flat("product", [written_form(left), written_form(right)])
    if node.data == "power":
        base, exponent = parts[0], parts[-1]
        runs = [str(t) for t in base.scan_values(lambda v: isinstance(v, Token))] if isinstance(base, Tree) else [str(base)]
        if isinstance(base, Tree) and base.data == "letters" and len(runs[0]) > 1:  # ab^2 is a times b^2
            *factors, last = _letters(runs[0])
            return _flat("product", [*factors, ("power", last, written_form(exponent))])
        return ("power", written_form(base), written_form(exponent))
    if node.data == "root" and len(parts) == 1:
        return ("root", ("number", Fraction(2)), written_form(parts[0]))
    if node.data == "list":  # relations ("x = 2, x = 3") in any order; values ("3, 2") as ordered
        items = [written_form(part) for part in parts]
        named = all(isinstance(part, Tree) and len(_meaningful(part)) == 2 for part in parts)
        return ("list", tuple(sorted(items, key=repr) if named else items))
    if node.data in ("union", "set"):
        return (node.data, tuple(sorted((written_form(part) for part in parts), key=repr)))
    if node.data == "function":
        name, argument = parts
        return ("function", str(name).lstrip("\\"), written_form(argument))
    if len(parts) == 1 and node.data not in ("root", "fraction", "subscript"):
        return written_form(parts[0])  # a number, letters, a constant, brackets
    return (node.data, *(written_form(part) for part in parts))


def _run(text: str, at: int) -> int:
    """Where the run of ASCII letters starting at ``at`` ends."""
    while at < len(text) and text[at].isascii() and text[at].isalpha():
        at += 1
    return at


def _symbols(reference: str) -> tuple[frozenset[str], frozenset[str]]:
    """The reference's single letters (outside commands and function names) and its commands."""
    letters: set[str] = set()
    commands: set[str] = set()
    at = 0
    while at < len(reference):
        if reference[at] == "\\":
            end = _run(reference, at + 1)
            commands.add(reference[at + 1 : end])
        elif reference[at].isascii() and reference[at].isalpha():
            end = _run(reference, at)
            if reference[at:end] not in _FUNCTIONS:
                letters.update(reference[at:end])
        else:
            end = at + 1
        at = max(end, at + 1)
    return frozenset(letters), frozenset(commands)


def _is_name(link: str) -> bool:
    """ "y", "f(x)", "g(x, y)": a name a chain may start with."""
    text = "".join(link.split())
    if len(text) == 1:
        return text.isalpha()
    head, _, rest = text.partition("(")
    return len(head) == 1 and head.isalpha() and rest.endswith(")") and rest[:-1].replace(",", "").isalpha()


def _has_decimal(text: str) -> bool:
    return any(
        text[i] == "." and text[i - 1].isdigit() and text[i + 1].isdigit() for i in range(1, len(text) - 1)
    )


class MathExpressionsGrammar:
    """MATH_EXPRESSIONS: see the module docstring."""

    name = "MATH_EXPRESSIONS"
    value_grammar = grammar_file(__file__)
    bare_values_state_answers = False
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/math_expressions.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The marked answer, else the expression the completion ends on."""
        return anchored or trailing_expression(text)

    def _statement(self, value: Tree[Token], source: str) -> tuple[Statement, list[Tree[Token]]] | None:
        """The statement a value makes, and the parts whose letters the allow-list reads (a name
        that starts a chain introduces its letter: "y = 2x"); None for a chain that ends in a list
        ("x = 3, x = 2" is a list of two relations)."""
        links: list[str] = []
        checked: list[Tree[Token]] = []
        while value.data == "chain":
            link, slot = (c for c in value.children if isinstance(c, Tree))
            links.append(in_ascii_tex(span(link, source)).strip())
            if not _is_name(links[-1]):
                checked.append(link)
            value, _ = unwrap(slot)
        if links and value.data == "list":
            return None
        checked.append(value)
        final = in_ascii_tex(span(value, source)).strip()
        return Statement(final=final, links=tuple(links), form=written_form(value)), checked

    def _reference(self, question: Question) -> tuple[Tree[Token], Statement] | None:
        found = readings(self.value_grammar, question.reference.strip(), start="slot")
        stated = [(r.value, made[0]) for r in found if (made := self._statement(r.value, r.source))]
        if len({statement for _, statement in stated}) != 1:
            return None
        return stated[0]

    def read(self, reading: Reading, question: Question) -> CanonicalAnswer | None:
        """The reading's expression, when it uses only what the allow-lists give, or None."""
        letters, commands = _symbols(question.reference)
        made = self._statement(reading.value, reading.source)
        if made is None:
            return None
        statement, checked = made
        tokens = [t for part in checked for t in part.scan_values(lambda v: isinstance(v, Token))]
        for token in tokens:
            if token.type in _LETTER_TOKENS and not set(str(token)) <= letters:
                return None
            if token.type == "GREEK" and str(token)[1:] not in commands:
                return None
        if "_" not in question.reference and any(reading.value.find_data("subscript")):
            return None
        reference = self._reference(question)
        is_list = reference[0].data == "list" if reference else "," in question.reference
        if reading.value.data == "list" and not is_list:
            return None
        # One written form is one answer ("(x + 3)/2" above a final "\\frac{x+3}{2}" states no other).
        key = statement.form if statement.form is not None else "".join(statement.final.split())
        return CanonicalAnswer(text=statement.final, key=key, detail=statement)

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """Math-verify's equivalence, in the reference's written form, with every link proven;
        different only at a rational point."""
        statement = answer.detail
        if not isinstance(statement, Statement):
            return Equality.UNPROVEN
        found = self._reference(question)
        reference = found[1] if found else Statement(final=question.reference.strip(), links=())
        names = [link for link in reference.links if _is_name(link)]
        if len(names) != len(reference.links):  # an equation: matched whole only
            whole = " = ".join((*statement.links, statement.final))
            same_shape = len(statement.links) == len(reference.links)
            return (
                Equality.EQUAL
                if same_shape and math_equal(question.reference, whole, timeout_s)
                else Equality.UNPROVEN
            )
        equality = _final_equality(statement.final, reference.final, timeout_s)
        if equality is Equality.DIFFERENT and not _proves_a_difference(statement, reference, found is not None, names):
            return Equality.UNPROVEN
        if equality is Equality.EQUAL and (
            statement.form is None
            or statement.form != reference.form
            or not self._links_hold(statement, names, question, timeout_s)
        ):
            return Equality.UNPROVEN  # another form of the value, or a link unproven: the judge's
        return equality

    def _links_hold(self, statement: Statement, names: list[str], question: Question, timeout_s: float) -> bool:
        """Every link is a name (the reference's own where it names one, else the one the question
        asks for; not a variable of the final value) or proven equal to the final."""
        named = {"".join(name.split()) for name in names}
        final_letters = _symbols(statement.final)[0]
        for link in statement.links:
            if _is_name(link):
                written = "".join(link.split())
                if (written not in named if named else not question.asks_for(written)) or written[0] in final_letters:
                    return False  # another name, or a variable of the value itself ("x = 4x")
            elif not math_equal(statement.final, link, timeout_s):
                return False
        return True


def _proves_a_difference(statement: Statement, reference: Statement, read: bool, names: list[str]) -> bool:
    """A final value that differs from the reference's proves the answer wrong only where both say
    the same thing of it: the reference reads in the grammar (not "90^\\circ") and is no decimal
    (it may be a rounding), and where the reference names its value ("y = 2x + 1"), each link of
    the statement is that name (not "2x + 1 = y", "x - 2 = 0" or "2 = x" for "x = 2": another
    arrangement of the equation, the judge's). Under a plain reference, links are the work."""
    named = {"".join(name.split()) for name in names}
    return (
        read
        and not _has_decimal(reference.final)
        and (not named or all("".join(link.split()) in named for link in statement.links))
    )


def _exact(text: str) -> Fraction | None:
    """A plain decimal or ratio ("0.5", "-3/4") as its exact value, else None."""
    try:
        return Fraction("".join(text.split()))
    except (ValueError, ZeroDivisionError):
        return None


def _final_equality(final: str, reference: str, timeout_s: float) -> Equality:
    """The final expression against the reference's: a decimal only as an exact rational."""
    if _has_decimal(final) and not _has_decimal(reference):  # 3.141593 is not \pi; 0.5 is 1/2
        mine, theirs = _exact(final), _exact(reference)
        if mine is None or theirs is None:
            return Equality.UNPROVEN
        return Equality.EQUAL if mine == theirs else Equality.UNPROVEN  # a rounding is the judge's
    if math_equal(reference, final, timeout_s):
        return Equality.EQUAL
    if math_differs(reference, final, timeout_s):
        return Equality.DIFFERENT
    return Equality.UNPROVEN


GRAMMAR = MathExpressionsGrammar()
