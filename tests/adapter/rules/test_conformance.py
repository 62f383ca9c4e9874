"""Our rule reward against math-verify's own test cases (its sdist is fetched from PyPI, cached)."""

import pytest

from eval.math_verify_conformance import run, to_markdown


@pytest.mark.slow
def test_no_verdict_the_rule_calls_proven_contradicts_math_verify():
    report = run()
    assert report.total > 250  # the cases were actually found
    assert report.proven >= 50, to_markdown(report)  # the grammar proves a share, not nothing
    assert report.wrong_proofs == 0, to_markdown(report)
