"""Our rule reward against math-verify's own test cases (its sdist is fetched from PyPI, cached)."""

import pytest

from eval.math_verify_conformance import run, to_markdown


@pytest.mark.slow
def test_agrees_with_math_verify_on_at_least_95_percent_of_its_cases():
    report = run()
    assert report.total > 250  # the cases were actually found
    assert report.rate >= 0.95, to_markdown(report)
    assert report.rate_inferred >= 0.95, to_markdown(report)
