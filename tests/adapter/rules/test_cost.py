import math

import pytest
import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse

from adapter.rules.cost import MAX_RESULT_DIGITS, result_digits, too_costly


def _parsed(latex: str) -> object:
    return parse(f"${latex}$", (LatexExtractionConfig(), ExprExtractionConfig()), parsing_timeout=None)[0]


@pytest.mark.parametrize(
    ("latex", "costly"),
    [
        # Towers, however written: the cost is read from the tree, not from the notation.
        ("10^{10^{10}}", True), ("10^(10^10)", True), ("{10}^{10^{10}}", True), ("10^{-10^{10}}", True),
        ("10^{(10^{10})}", True), ("\\frac{1}{10^{10^{10}}}", True), ("9^{9^{9^{9}}}", True), ("9^{9^9}", True),
        ("7^{1000000}", True), ("\\sqrt{2}^{10^{10}}", True), ("(1+i)^{10^{10}}", True), ("\\pi^{10^{10}}", True),
        ("\\left(\\frac{1}{2}\\right)^{10^{6}}", True), ("(x+1)^{10^{8}}", True), ("x^{10^{10^{10}}}", True),
        # Factorial-like growth, and variables bound by limits.
        ("100000!", True), ("(10^{10})!", True), ("\\Gamma(10^{10})", True), ("10!!!!", True),
        ("\\binom{10^{10}}{10^{9}}", True), ("\\prod_{i=1}^{10^{6}} i", True), ("\\sum_{i=1}^{10^{7}} i^{i}", True),
        ("\\lim_{x \\to 10} x^{10^{10}}", True), ("\\int_0^{10} x^{10^{10}} dx", True),
        ("\\sin(10^{10^{10}})", True), ("\\max(10^{10^{10}}, 2)", True), ("\\{10^{10^{10}}, 2\\}", True),
        ("x = 10^{10^{10}}", True), ("\\begin{pmatrix}2\\end{pmatrix}^{10^{10}}", True),
        # Ordinary answers, large numbers that are cheap to build, and symbols.
        ("2^{10}", False), ("10^{-7}", False), ("2004!", False), ("\\frac{1}{2004!}", False),
        ("2^{2^{2^{2^{2}}}}", False), ("x^{100000000}", False), ("(x+1)^{300}", False), ("e^{10^{10}}", False),
        ("\\binom{2000}{1000}", False), ("\\sum_{i=1}^{n} i^{2}", False), ("\\int_0^{1} x^{2} dx", False),
        ("\\frac{\\sqrt{3}}{2}", False), ("[1, \\infty)", False), ("\\{1, 2\\}", False), ("3.14159", False),
    ],
)  # fmt: skip
def test_too_costly_is_read_from_the_unevaluated_tree(latex, costly):
    assert too_costly(_parsed(latex)) is costly


def test_the_bound_is_close_for_towers_that_are_cheap():
    digits = result_digits(_parsed("2^{2^{2^{2^{2}}}}"))  # 2^65536: 19,729 digits
    assert 19_700 < digits < 20_000 < MAX_RESULT_DIGITS


def test_a_tree_too_deep_to_walk_is_unbounded():
    expr = sympy.Symbol("x")
    for _ in range(5000):
        expr = sympy.Pow(expr, 2, evaluate=False)
    assert result_digits(expr) == math.inf and too_costly(expr)


def test_strings_and_matrices():
    assert result_digits("10^{10^{10}}") == 0.0  # math-verify's string form is never evaluated
    assert too_costly(sympy.Matrix([[sympy.Pow(10, sympy.Pow(10, 10, evaluate=False), evaluate=False)]]))
