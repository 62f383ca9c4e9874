"""What judge-eval says first: statistics with intervals, baselines, and the verdict in words."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from eval.coverage import judge_coverage
from eval.intervals import accuracy, auroc, bootstrap, false_positive_rate, kappa
from eval.scoring import ScoredRow
from eval.verdict import assess, baselines, scorer_stats


def _row(i: int, label: float, rule: float, judge: float, source: str = "judge") -> ScoredRow:
    return ScoredRow(
        id=str(i), line=i + 1, answer_type=None, label=label, rule=rule, rule_explanation="",
        judge=judge, judge_source=source, prompt="p", completion="c", answer="a",
    )  # fmt: skip


def _rows(labels, rule, judge, sources=None):
    sources = sources or ["judge"] * len(labels)
    return [_row(i, *values) for i, values in enumerate(zip(labels, rule, judge, sources, strict=True))]


LABELS = np.array([1, 1, 1, 0, 0, 0, 1, 0], dtype=float)


@pytest.mark.parametrize(
    ("scores", "acc", "fpr"),
    [
        ([1, 1, 1, 0, 0, 0, 1, 0], 1.0, 0.0),
        ([1, 1, 1, 1, 1, 1, 1, 1], 0.5, 1.0),
        ([0.9, 0.2, 0.6, 0.7, 0.1, 0.4, 0.5, 0.49], 0.75, 0.25),
    ],
)
def test_accuracy_and_false_positive_rate(scores, acc, fpr):
    s = np.array(scores, dtype=float)
    assert accuracy(s, LABELS) == pytest.approx(acc)
    assert false_positive_rate(s, LABELS) == pytest.approx(fpr)


def test_auroc_matches_mann_whitney_and_kappa_is_cohens():
    scores = np.array([0.9, 0.2, 0.6, 0.7, 0.1, 0.4, 0.5, 0.5])
    positive = LABELS == 1
    u = mannwhitneyu(scores[positive], scores[~positive]).statistic
    assert auroc(scores, LABELS) == pytest.approx(u / (positive.sum() * (~positive).sum()))
    assert kappa(np.array([1, 1, 1, 0, 0, 0, 1, 0.0]), LABELS) == pytest.approx(1.0)
    # observed 0.75; both columns half positive -> expected 0.5 -> kappa 0.5
    assert kappa(np.array([1, 1, 0, 1, 0, 0, 1, 0.0]), LABELS) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("statistic", "scores", "labels"),
    [(auroc, [0.3, 0.7], [1, 1]), (false_positive_rate, [0.3, 0.7], [1, 1]), (kappa, [], [])],
)
def test_undefined_statistics_are_nan_not_a_number_made_up(statistic, scores, labels):
    assert np.isnan(statistic(np.array(scores, dtype=float), np.array(labels, dtype=float)))


def test_bootstrap_is_reproducible_with_its_seed():
    rng = np.random.default_rng(1)
    scores, labels = rng.random(60), (rng.random(60) > 0.5).astype(float)
    first = bootstrap(auroc, scores, labels, seed=7)
    assert first == bootstrap(auroc, scores, labels, seed=7)
    assert first != bootstrap(auroc, scores, labels, seed=8)
    assert first is not None and first.low < auroc(scores, labels) < first.high


def test_bootstrap_refuses_an_interval_it_cannot_support():
    assert bootstrap(auroc, np.array([0.5]), np.array([1.0])) is None
    assert bootstrap(auroc, np.array([0.1, 0.9]), np.array([1.0, 1.0])) is None


def _noise_rows(n: int = 80, seed: int = 3):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) > 0.5).astype(float)
    return _rows(labels, labels, rng.random(n))  # the rule is perfect, the judge is noise


def test_a_chance_judge_is_called_chance_in_the_first_line():
    rows = _noise_rows()
    lines = assess(rows, judge_coverage(r.judge_source for r in rows)).lines
    assert lines[0].startswith("The judge is indistinguishable from chance on the 80 rows it decided")
    assert any(line.endswith("the rule is better.") for line in lines)


def test_a_good_judge_beats_a_bad_rule_and_says_how_much_was_judged():
    n = 80
    labels = np.array([i % 2 for i in range(n)], dtype=float)
    judge = labels * 0.8 + 0.1  # separates perfectly
    rule = np.zeros(n)  # pays nothing: right only on the wrong answers
    sources = ["judge"] * (n - 20) + ["rule"] * 20
    rows = _rows(labels, rule, judge, sources)
    lines = assess(rows, judge_coverage(sources)).lines
    assert lines[0].startswith("The judge ranks better than chance on the 60 rows it decided (AUROC 1.00")
    assert lines[1].endswith("the judge is better.")
    assert lines[-1].startswith("75% of rows were judged (60 of 80)")


@pytest.mark.parametrize(
    ("inverted", "first_line"),
    [
        (True, "The judge ranks worse than chance on the 80 rows it decided (AUROC 0."),
        (False, "The judge ranks better than chance on the 80 rows it decided (AUROC 0."),
    ],
    ids=["interval-below-half", "interval-above-half"],
)
def test_an_auroc_interval_wholly_on_one_side_of_half_is_said_for_that_side(inverted, first_line):
    rng = np.random.default_rng(5)
    labels = np.array([i % 2 for i in range(80)], dtype=float)
    signal = np.clip(0.5 + 0.25 * (labels - 0.5) + rng.normal(0, 0.2, 80), 0, 1)  # AUROC near 0.8
    judge = 1 - signal if inverted else signal
    lines = assess(_rows(labels, labels, judge), judge_coverage(["judge"] * 80)).lines
    stats = scorer_stats("judge", _rows(labels, labels, judge), "judge", 0)
    assert stats.auroc_ci is not None and (stats.auroc_ci.high < 0.5 if inverted else stats.auroc_ci.low > 0.5)
    assert lines[0].startswith(first_line)
    assert ("inverted" in lines[0]) is inverted


def test_a_judge_no_better_than_the_majority_label_is_told_so():
    labels = [1.0] * 9 + [0.0]
    rows = _rows(labels, labels, [1.0] * 5 + [0.0] * 5)
    lines = assess(rows, judge_coverage(["judge"] * 10)).lines
    assert any(line.startswith("Always answering the majority label agrees 0.90") for line in lines)


def test_baselines_know_nothing():
    rows = _noise_rows(200)
    majority, random_rewards = baselines(rows)
    assert majority.kappa == 0.0 and majority.auroc == 0.5
    assert random_rewards.auroc_ci is not None and random_rewards.auroc_ci.covers(0.5)


def test_judge_auroc_uses_only_the_rows_the_judge_decided():
    labels = [1.0, 0.0, 1.0, 0.0]
    rows = _rows(labels, labels, [0.9, 0.1, 0.0, 1.0], ["judge", "judge", "rule_fallback", "rule"])
    stats = scorer_stats("judge", rows, "judge")
    assert stats.auroc_rows == 2 and stats.auroc == 1.0


def test_escalation_line_says_what_the_second_judge_cost_and_gained():
    rows = [
        _row(0, 1.0, 1.0, 1.0).model_copy(update={"judge_scores": {"first": 1.0, "second": None}}),
        _row(1, 0.0, 0.0, 0.1).model_copy(update={"judge_scores": {"first": 0.6, "second": 0.1}}),
        _row(2, 1.0, 0.0, 0.9).model_copy(update={"judge_scores": {"first": 0.4, "second": 0.9}}),
        _row(3, 0.0, 0.0, 0.0).model_copy(update={"judge_scores": {"first": 0.0, "second": None}}),
    ]
    lines = assess(rows, judge_coverage(r.judge_source for r in rows)).lines
    (line,) = [line for line in lines if line.startswith("Escalation:")]
    assert "decided 2 of the 4 labelled rows" in line and "500 extra judgments per 1,000 rows" in line
    assert "0.50 for the first judge alone, 1.00 with escalation (0.00 -> 1.00 on the escalated rows)" in line


def test_no_escalation_line_without_a_second_judge():
    rows = _rows([1, 0], [1, 0], [1, 0])
    assert not [
        line for line in assess(rows, judge_coverage(["judge", "judge"])).lines if "Escalation" in line
    ]


def test_under_the_cascade_the_verdict_opens_with_the_rows_the_rules_could_not_decide():
    decided_by_rule = [
        _row(i, 1.0, 1.0, 1.0, "rule").model_copy(update={"judge_reason": "cascade"}) for i in range(4)
    ]
    sent = _rows([1, 1, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0], [0.9, 0.8, 0.1, 0.2, 0.7, 0.3])
    lines = assess(decided_by_rule + sent, judge_coverage(["rule"] * 4 + ["judge"] * 6)).lines
    assert lines[0].startswith(
        "On the 6 rows the rules could not decide (the cascade sent them to the judge)"
    )
    assert (
        "judge agreement 1.00" in lines[0] and "vs rule 0.50" in lines[0] and "judge AUROC 1.00" in lines[0]
    )


def test_without_the_cascade_there_is_no_undecided_line():
    rows = _rows([1, 0], [1, 0], [1, 0])
    assert not [
        line for line in assess(rows, judge_coverage(["judge"] * 2)).lines if "could not decide" in line
    ]
