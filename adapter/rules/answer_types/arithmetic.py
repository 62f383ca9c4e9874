"""Exact arithmetic on the links of a stated chain ("60 × 60 = 3,600", "1/3 + 1/6 = 1/2").

The grammar: numbers (plain, with thousands commas, decimals), ``+ - * / ^``, ``×``, ``÷``,
``·``, `` x `` between numbers, ``\\times``, ``\\cdot``, ``\\div``, ``\\frac{a}{b}``, and
brackets ``( )`` or ``{ }``. Anything else is not arithmetic. Evaluation is exact (fractions)
and bounded: an exponent is an integer of at most ``MAX_EXPONENT``, and no value may grow past
``MAX_BITS``.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["NotArithmetic", "evaluate"]

MAX_EXPONENT = 64
MAX_BITS = 4_096
MAX_TOKENS = 200
_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<frac>\\[dt]?frac)|(?P<op>[-+*/^(){}×÷·]|\\times|\\cdot|\\div|(?<=[\d)\s])x(?=[\s\d(])))"
)
_OPERATORS = {"×": "*", "·": "*", "x": "*", "\\times": "*", "\\cdot": "*", "÷": "/", "\\div": "/"}


class NotArithmetic(ValueError):
    """The text is not in the arithmetic grammar, or its value is out of bounds."""


def _tokens(text: str) -> list[str]:
    tokens, at = [], 0
    stripped = text.rstrip()
    while at < len(stripped):
        match = _TOKEN.match(stripped, at)
        if match is None or match.end() == at:
            raise NotArithmetic(f"not arithmetic at {stripped[at : at + 12]!r}")
        token = match.group("number") or match.group("frac") or match.group("op")
        tokens.append(_OPERATORS.get(token, token))
        at = match.end()
    if len(tokens) > MAX_TOKENS:
        raise NotArithmetic("too long")
    return tokens


class _Parser:
    """expr := term (("+"|"-") term)*; term := unary (("*"|"/") unary)*;
    unary := ("+"|"-") unary | power; power := atom ("^" unary)?;
    atom := number | "(" expr ")" | "{" expr "}" | frac "{" expr "}" "{" expr "}"."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise NotArithmetic(f"expected {expected or 'more'}")
        self.at += 1
        return token

    def parse(self) -> Fraction:
        value = self._expr()
        if self._peek() is not None:
            raise NotArithmetic(f"unexpected {self._peek()!r}")
        return value

    def _expr(self) -> Fraction:
        value = self._term()
        while self._peek() in ("+", "-"):
            value = value + self._term() if self._take() == "+" else value - self._term()
        return _bounded(value)

    def _term(self) -> Fraction:
        value = self._unary()
        while self._peek() in ("*", "/"):
            if self._take() == "*":
                value *= self._unary()
                continue
            divisor = self._unary()
            if divisor == 0:
                raise NotArithmetic("division by zero")
            value /= divisor
        return _bounded(value)

    def _unary(self) -> Fraction:
        if self._peek() in ("+", "-"):
            return self._unary() if self._take() == "+" else -self._unary()
        return self._power()

    def _power(self) -> Fraction:
        base = self._atom()
        if self._peek() != "^":
            return base
        self._take("^")
        exponent = self._unary()
        if exponent.denominator != 1 or abs(exponent) > MAX_EXPONENT or (base == 0 and exponent < 0):
            raise NotArithmetic("exponent out of bounds")
        return _bounded(base ** int(exponent))

    def _atom(self) -> Fraction:
        token = self._take()
        if token in ("(", "{"):
            value = self._expr()
            self._take(")" if token == "(" else "}")
            return value
        if token.startswith("\\"):  # \frac{a}{b}
            self._take("{")
            top = self._expr()
            self._take("}")
            self._take("{")
            bottom = self._expr()
            self._take("}")
            if bottom == 0:
                raise NotArithmetic("division by zero")
            return _bounded(top / bottom)
        if token[0].isdigit() or token[0] == ".":
            return Fraction(token.replace(",", ""))
        raise NotArithmetic(f"unexpected {token!r}")


def _bounded(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS:
        raise NotArithmetic("value out of bounds")
    return value


def evaluate(text: str) -> Fraction:
    """The exact value of ``text`` in the arithmetic grammar; raises ``NotArithmetic``."""
    return _Parser(_tokens(text)).parse()
