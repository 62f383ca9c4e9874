"""Counting who decided a judged run's rows: the judge, the rules, or nobody."""

import pytest

from eval.coverage import judge_coverage


@pytest.mark.parametrize(
    ("sources", "sent", "decided", "fails_at_0_9"),
    [
        (["judge", "cache", "rule"], 2, 2, False),
        (["judge"] * 9 + ["rule_fallback"], 10, 9, False),
        (["judge"] * 8 + ["rule_fallback", "error"], 10, 8, True),
        (["rule_fallback"] * 5, 5, 0, True),
        (["rule", "rule"], 0, 0, True),  # nothing reached the judge: it was not tested
        ([None, "judge"], 2, 1, True),  # a row with no judge result counts as sent and not decided
        ([], 0, 0, True),
    ],
)
def test_coverage_counts_and_threshold(sources, sent, decided, fails_at_0_9):
    coverage = judge_coverage(sources)
    assert (coverage.sent, coverage.decided) == (sent, decided)
    assert (coverage.failure(0.9) is not None) is fails_at_0_9


def test_shortfall_names_what_the_undecided_rows_got():
    coverage = judge_coverage(["judge", "rule_fallback", "rule_fallback", "error", "rule"])
    assert coverage.shortfall() == (
        "the judge decided 1 of the 4 rows sent to it (25%); the others got no verdict (1 error, 2 rule_fallback)"
    )


def test_shortfall_says_why_the_judge_gave_no_verdict_most_frequent_first():
    sources = ["judge", "rule_fallback", "error", "rule_fallback", "rule", "rule_fallback"]
    reasons = [None, "Timeout waiting for results", "Invalid judge output", "Timeout waiting for results",
               "cascade", None]  # fmt: skip
    coverage = judge_coverage(sources, reasons)
    assert coverage.reasons == {"Timeout waiting for results": 2, "Invalid judge output": 1, "no reason given": 1}
    assert coverage.shortfall().endswith(
        "because: Timeout waiting for results (2); Invalid judge output (1); no reason given (1)"
    )
    many = judge_coverage(["error"] * 5, [f"reason {k}" for k in range(5)])
    assert many.shortfall().endswith("reason 2 (1); 2 other reason(s)")


def test_full_coverage_has_no_shortfall():
    assert judge_coverage(["judge", "cache", "rule"]).shortfall() is None


def test_all_rule_decided_says_no_row_reached_the_judge():
    assert judge_coverage(["rule"] * 3).shortfall() == (
        "no row reached the judge: all 3 were decided by rules (pre-checks or cascade)"
    )
