"""The cost of evaluating a parsed expression, bounded from its tree before anything is evaluated.

Big-integer arithmetic runs in C and holds the GIL, so no in-process time bound can stop sympy
once it builds ``10^{10^{10}}`` or ``(10^{10})!``. Instead each parsed, unevaluated expression
is walked and two bounds are computed bottom-up for every node, in decimal digits:

- ``digits``: the size of any exact number evaluating the node can build (numerator plus
  denominator digits for a rational, coefficient digits for a polynomial);
- ``log_mag``: how large (or how small) its value can be, ``|log10 |value||``, which bounds an
  exponent, a factorial's argument or a count of terms.

``Pow(b, e)`` builds ``|e| * digits(b)`` digits with ``|e| <= 10^log_mag(e)``; sums and products
add; elementary functions (exp, log, trigonometry, abs, floor, min, relations, sets) build no new
exact number; every other function (factorial, binomial, gamma, ...) and any node type not
known here is assumed to grow like a factorial of its largest argument, ``n log10 n`` digits;
``Sum``/``Product``/``Integral``/``Limit`` bind their variable to their limits. A free symbol
is a unit (``x^{10^8}`` builds nothing; ``(x+1)^{10^8}`` has ``10^8 * log10 2`` digits of
binomial coefficients). Anything deeper than the recursion limit is unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.core.function import AppliedUndef
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.miscellaneous import MinMaxBase
from sympy.functions.elementary.trigonometric import InverseTrigonometricFunction, TrigonometricFunction
from sympy.logic.boolalg import Boolean
from sympy.matrices import MatrixBase
from sympy.sets.sets import Set

__all__ = ["MAX_RESULT_DIGITS", "result_digits", "too_costly"]

MAX_RESULT_DIGITS = 100_000
LOG10_2 = math.log10(2)
LOG10_E = math.log10(math.e)
# 10.0 ** 308 is the largest power of ten a float holds; anything above is unbounded.
_MAX_FLOAT_LOG = 300.0
# Node types that build no exact number larger than their arguments.
_ELEMENTARY = (
    sympy.Tuple,
    sympy.Abs,
    sympy.sign,
    sympy.floor,
    sympy.ceiling,
    sympy.frac,
    sympy.re,
    sympy.im,
    sympy.arg,
    sympy.conjugate,
    sympy.log,
    sympy.Mod,
    sympy.Piecewise,
    sympy.UnevaluatedExpr,
    MinMaxBase,
    TrigonometricFunction,
    InverseTrigonometricFunction,
    HyperbolicFunction,
    AppliedUndef,
    Boolean,  # relations (Eq, Lt, ...), And, Or, Not
    Set,  # FiniteSet, Interval, Union, ...
)


@dataclass(frozen=True)
class _Bound:
    digits: float
    log_mag: float


_UNIT = _Bound(0.0, 0.0)
_CONSTANT = _Bound(1.0, 1.0)  # pi, e, the golden ratio: below 10
_Env = Mapping[sympy.Symbol, _Bound]


def _power_of_ten(log_mag: float) -> float:
    return math.inf if log_mag > _MAX_FLOAT_LOG else 10.0**log_mag


def _times(count: float, digits: float) -> float:
    """``count * digits`` where no digits means no growth, even for an unbounded count."""
    return 0.0 if digits == 0.0 else count * digits


def _log10(n: int) -> float:
    """``log10 |n|``, 0 for 0 and 1: those build nothing (``1^{10^{10}}`` is 1)."""
    return math.log10(abs(n)) if n else 0.0


def _number(node: sympy.Number) -> _Bound:
    if node.is_Rational:
        num, den = _log10(node.p), _log10(node.q)
        return _Bound(num + den, abs(num - den))
    if node.is_Float:
        _, mantissa, exponent, bits = node._mpf_
        log_mag = abs(exponent + bits) * LOG10_2 if mantissa else 0.0
        return _Bound(log_mag + node._prec * LOG10_2, log_mag)
    return _UNIT  # oo, nan, zoo: symbolic


def _combined(bounds: list[_Bound]) -> _Bound:
    """Arguments kept side by side: a tuple, a set, a relation, ``|x|``, ``\\lfloor x \\rfloor``."""
    return _Bound(sum(b.digits for b in bounds), max((b.log_mag for b in bounds), default=0.0))


def _power(base: _Bound, exponent: _Bound) -> _Bound:
    times = _power_of_ten(exponent.log_mag)
    return _Bound(_times(times, base.digits) + exponent.digits, _times(times, base.log_mag))


def _factorial_like(bounds: list[_Bound]) -> _Bound:
    """``n log10 n`` digits for arguments up to ``n``: factorial, gamma, binomial, fibonacci, ..."""
    largest = max((b.log_mag for b in bounds), default=0.0)
    digits = _power_of_ten(largest) * max(largest, 1.0) + sum(b.digits for b in bounds)
    return _Bound(digits, digits)


def _with_limits(node: ExprWithLimits, env: _Env) -> _Bound:
    """A sum, product or integral: its variable takes values up to its limits."""
    inner = dict(env)
    limits, count = [], 1.0
    for limit in node.limits:
        ends = [_bound(end, env) for end in limit[1:]]
        span = _combined(ends)
        inner[limit[0]] = span
        limits.append(span)
        count *= 2.0 * _power_of_ten(span.log_mag) if ends else 1.0
    body = _bound(node.function, inner)
    around = sum(b.digits for b in limits)
    if isinstance(node, sympy.Product):
        return _Bound(_times(count, body.digits) + around, _times(count, body.log_mag))
    if isinstance(node, sympy.Sum):
        return _Bound(_times(count, body.digits) + around, body.log_mag + math.log10(count))
    return _Bound(body.digits + around, body.log_mag + max((b.log_mag for b in limits), default=0.0))


def _bound(node: object, env: _Env) -> _Bound:
    if isinstance(node, MatrixBase):
        return _combined([_bound(entry, env) for entry in node])
    if not isinstance(node, sympy.Basic):
        return _UNIT  # math-verify's string form
    if isinstance(node, sympy.Symbol):
        return env.get(node, _UNIT)
    if node.is_Number:
        return _number(node)
    if node.is_NumberSymbol:
        return _CONSTANT
    if node.is_Atom:
        return _UNIT  # I, sets such as Reals, true/false
    if isinstance(node, ExprWithLimits):
        return _with_limits(node, env)
    if isinstance(node, sympy.Limit):
        expr, variable, point = node.args[:3]
        return _combined([_bound(expr, {**env, variable: _bound(point, env)}), _bound(point, env)])
    args = [_bound(arg, env) for arg in node.args]
    if node.is_Pow:
        return _power(args[0], args[1])
    if isinstance(node, sympy.exp):
        return _Bound(args[0].digits, _times(_power_of_ten(args[0].log_mag), LOG10_E))
    if node.is_Add:
        spread = math.log10(len(args))
        return _Bound(sum(b.digits for b in args) + spread, max(b.log_mag for b in args) + spread)
    if node.is_Mul:
        return _Bound(sum(b.digits for b in args), sum(b.log_mag for b in args))
    if isinstance(node, _ELEMENTARY):
        return _combined(args)
    return _factorial_like(args)


def result_digits(expr: object) -> float:
    """An upper bound on the decimal digits of the exact numbers evaluating ``expr`` builds
    (``math.inf`` when there is none, e.g. nested too deep to walk)."""
    try:
        return _bound(expr, {}).digits
    except RecursionError:
        return math.inf


def too_costly(expr: object) -> bool:
    """True when evaluating ``expr`` could build a number with over ``MAX_RESULT_DIGITS`` digits."""
    return result_digits(expr) > MAX_RESULT_DIGITS
