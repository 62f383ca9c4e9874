"""math-verify and sympy: the equality and difference checks ``adapter.rules.symbolic`` runs
under its time bound. Imported on the first check, not with the reward (0.3 s)."""

from __future__ import annotations

import logging

import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from adapter.rules.cost import MAX_RESULT_DIGITS, too_costly

__all__ = ["TOO_COSTLY", "differs", "equal"]

TOO_COSTLY = f"refused: evaluating could build a number with over {MAX_RESULT_DIGITS:,} digits"

NUMERIC_REL_TOL = 1e-6
_CONFIGS = (LatexExtractionConfig(), ExprExtractionConfig())
# Exact rational points at which two expressions are evaluated to prove them different.
_PROBE_SHIFTS = (sympy.Rational(7, 13), sympy.Rational(-5, 11))
_PROBE_DIGITS = 40
_PROBE_REL_TOL = sympy.Float("1e-25", _PROBE_DIGITS)


class _OwnTimeoutNotice(logging.Filter):
    """Drop math-verify's "timeout is disabled" warning: run_bounded is the timeout."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutNotice())


def _parse(text: str) -> list[object]:
    parsed: list[object] = parse(text, extraction_config=_CONFIGS, parsing_timeout=None)
    return parsed


def _parse_answer(text: str) -> list[object]:
    return _parse(text if "$" in text or "\\boxed" in text else f"${text}$")


def _numbers_agree(gold: object, pred: object) -> bool:
    """False when both are numbers that differ relatively by more than ``NUMERIC_REL_TOL``.
    math-verify rounds to 6 decimals, so 1/2004! and 1/2006! would both be 0 for it."""
    if not (isinstance(gold, sympy.Expr) and isinstance(pred, sympy.Expr)):
        return True
    if not (gold.is_number and pred.is_number):
        return True
    try:  # sympy floats: 1/2004! is far below the smallest machine float
        g, p = gold.evalf(30), pred.evalf(30)
        return bool(abs(g - p) <= NUMERIC_REL_TOL * sympy.Max(abs(g), abs(p)))
    except (TypeError, ValueError, ArithmeticError):
        return True  # an undecidable comparison (nan, zoo): math-verify's verdict stands


def _verified(gold_parsed: list[object], pred_parsed: list[object]) -> bool | None:
    if not gold_parsed or not pred_parsed:
        return False
    if any(too_costly(parsed) for parsed in (*gold_parsed, *pred_parsed)):
        if gold_parsed[0] == pred_parsed[0]:  # structural: the same expression, not evaluated
            return True
        return None
    if not verify(gold_parsed, pred_parsed, timeout_seconds=None):
        return False
    return _numbers_agree(gold_parsed[0], pred_parsed[0])


def equal(gold: str, pred: str) -> bool | None:
    """Are ``gold`` and ``pred`` mathematically equivalent? None: refused, evaluating could build
    too large a number (``TOO_COSTLY``). Unbounded in time: run it under ``run_bounded``."""
    return _verified(_parse_answer(gold), _parse_answer(pred))


def _value_at(expr: sympy.Expr, point: dict[sympy.Symbol, sympy.Rational]) -> sympy.Expr | None:
    value = expr.subs(point).evalf(_PROBE_DIGITS)
    return value if value.is_number and value.is_finite else None


def differs(gold: str, pred: str) -> bool:
    """A proof that ``gold`` and ``pred`` differ (unbounded: run it under ``run_bounded``)."""
    gold_parsed, pred_parsed = _parse_answer(gold), _parse_answer(pred)
    if not gold_parsed or not pred_parsed:
        return False
    g, p = gold_parsed[0], pred_parsed[0]
    if not (isinstance(g, sympy.Expr) and isinstance(p, sympy.Expr)) or too_costly(g) or too_costly(p):
        return False
    symbols = sorted(g.free_symbols | p.free_symbols, key=str)
    for shift in _PROBE_SHIFTS:
        point = {symbol: shift + sympy.Rational(i + 1, 3) for i, symbol in enumerate(symbols)}
        g_value, p_value = _value_at(g, point), _value_at(p, point)
        if g_value is None or p_value is None:
            return False
        if abs(g_value - p_value) > _PROBE_REL_TOL * max(1, abs(g_value), abs(p_value)):
            return True
    return False
