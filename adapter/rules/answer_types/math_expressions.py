"""MATH_EXPRESSIONS: a LaTeX or plain expression from a restricted token set, proven equal.

The grammar of X (docs/canonical-answers.md)::

    X     := [name "="] expr ("," [name "="] expr)*     (a list or a relation only when the
                                                       reference is one)
    expr  := ASCII digits, ".", "+ - * / ^ _ ( ) [ ] { }", spaces, the reference's own letters
             (a run of letters is a product of them: "ab"), the functions sin cos tan sec csc cot
             log ln exp sqrt and their arc- forms, and the LaTeX commands \\frac \\dfrac \\tfrac
             \\sqrt \\cdot \\times \\div \\left \\right \\infty \\pi \\sin ... \\ln, the spacing
             commands "\\, \\; \\! \\ ", and the reference's own Greek letters
    name  := one of the reference's letters, optionally "(" its letters ")": "y", "f(x)"

Digits separated by a space ("1 000") are not in the grammar either. Anything else (a word, "\\text", "\\neq", "\\approx", "\\pm", another letter) is not in the
grammar. The final statement may be a chain "E = ... = X" whose every link is proven equal to X.
Equality is math-verify's (``symbolic.math_equal``, bounded in time); a difference is proven only
by different exact values at a rational point (``symbolic.math_differs``): relations, sets and
expressions math-verify reads oddly are left to the judge.
"""

from __future__ import annotations

import re

from adapter.rules.answer_types.base import CanonicalAnswer, Equality, Question
from adapter.rules.extract import trailing_expression
from adapter.rules.symbolic import math_differs, math_equal

__all__ = ["GRAMMAR", "MathExpressionsGrammar"]

_FUNCTIONS = frozenset(
    [
        "sin",
        "cos",
        "tan",
        "sec",
        "csc",
        "cot",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "log",
        "ln",
        "exp",
        "sqrt",
    ]
)
_GREEK = frozenset(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "theta",
        "lambda",
        "mu",
        "nu",
        "rho",
        "sigma",
        "tau",
        "phi",
        "omega",
    ]
)
_COMMANDS = (
    frozenset({"frac", "dfrac", "tfrac", "cdot", "times", "div", "left", "right", "infty", "pi"}) | _FUNCTIONS
)
_SPACING = re.compile(r"\\[,;! ]")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_LETTERS = re.compile(r"[A-Za-z]+")
_ALLOWED = re.compile(r"[0-9A-Za-z.+\-*/^_()\[\]{}, =\\]*")
# "1 000": a thousands space or two numbers; either way no one expression.
_SPACED_DIGITS = re.compile(r"\d\s+\d")
_NAME = re.compile(r"\s*[A-Za-z](?:\s*\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])*\s*\))?\s*")


def _reference_symbols(reference: str) -> tuple[frozenset[str], frozenset[str]]:
    """The reference's single letters (outside commands and function names) and Greek letters."""
    greek = frozenset(c for c in _COMMAND.findall(reference) if c in _GREEK)
    bare = _COMMAND.sub(" ", reference)
    letters = {c for run in _LETTERS.findall(bare) if run not in _FUNCTIONS for c in run}
    return frozenset(letters), greek


def _balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    for char in text:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] -= 1
            if depth[closing[char]] < 0:
                return False
    return not any(depth.values())


def in_grammar(text: str, reference: str) -> bool:
    """Whether ``text`` is built only from the grammar's tokens, for this reference."""
    if not text.strip() or not _ALLOWED.fullmatch(text) or not _balanced(text) or _SPACED_DIGITS.search(text):
        return False
    letters, greek = _reference_symbols(reference)
    spaced = _SPACING.sub(" ", text)
    for command in _COMMAND.findall(spaced):
        if command not in _COMMANDS and command not in greek:
            return False
    if "\\" in _COMMAND.sub(" ", spaced):
        return False  # a lone backslash or "\\\\"
    for run in _LETTERS.findall(_COMMAND.sub(" ", spaced)):
        if run not in _FUNCTIONS and not set(run) <= letters:
            return False
    return True


class MathExpressionsGrammar:
    """MATH_EXPRESSIONS: see the module docstring."""

    name = "MATH_EXPRESSIONS"
    bare_value_is_whole_completion = False
    bare_values_state_answers = False
    chains = True
    mismatch_is_proof = True
    format_gated = True
    needs_a_number = False
    judge_hints: str | None = None  # built in: judge_prompts/profiles/rubric/math_expressions.j2

    def extract(self, text: str, anchored: str | None) -> str | None:
        """The marked answer, else the expression the completion ends on."""
        return anchored or trailing_expression(text)

    def canonical(self, text: str, question: Question) -> CanonicalAnswer | None:
        """``text`` in the grammar (a relation or list only for such a reference), or None."""
        text = text.strip()
        if not in_grammar(text, question.reference):
            return None
        relation = "=" in question.reference
        if not relation and ("=" in text or "," in text.replace("{,}", "")):
            return None
        return CanonicalAnswer(text=text, key=re.sub(r"\s|\\[,;! ]", "", text))

    def compare(self, answer: CanonicalAnswer, question: Question, timeout_s: float) -> Equality:
        """math-verify's equivalence; different only with different values at a rational point."""
        if math_equal(question.reference, answer.text, timeout_s):
            return Equality.EQUAL
        if math_differs(question.reference, answer.text, timeout_s):
            return Equality.DIFFERENT
        return Equality.UNPROVEN

    def link_in_grammar(self, link: str, question: Question) -> bool:
        """A name ("y", "f(x)") or an expression in the grammar."""
        return bool(_NAME.fullmatch(link)) or in_grammar(link, question.reference)

    def link_holds(self, link: str, answer: CanonicalAnswer, question: Question, timeout_s: float) -> bool:
        """A name ("y", "f(x)") that is not in the answer states it; any other link is proven equal."""
        name = _NAME.fullmatch(link)
        if name:
            return link.strip()[0] not in _COMMAND.sub(" ", answer.text)
        return in_grammar(link, question.reference) and math_equal(answer.text, link, timeout_s)


GRAMMAR = MathExpressionsGrammar()
