"""Agreement statistics on small hand-made data, checked against values worked out by hand."""

import math

import pytest

from eval.metrics import (
    Confusion,
    binarize,
    cohen_kappa,
    compare,
    confusion,
    pearson,
    spearman,
    summarize,
    top_disagreements,
)
from eval.scoring import ScoredRow


def _row(i, rule, judge=None, label=None, answer_type=None, source=None, latency=None):
    return ScoredRow(id=f"r{i}", line=i, answer_type=answer_type, label=label, rule=rule, rule_explanation="",
                     judge=judge, judge_source=source, latency_ms=latency, prompt="p", completion="c", answer="a")  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), [(0.0, 0), (0.49, 0), (0.5, 1), (1.0, 1)])
def test_binarize_at_one_half(value, expected):
    assert binarize(value) == expected


def test_confusion_counts_pairs():
    assert confusion([0, 0, 1, 1, 1], [0, 1, 0, 1, 0.9]) == Confusion(n00=1, n01=1, n10=1, n11=2)


def test_kappa_by_hand():
    # 20 rows: 8 both yes, 7 both no, 3 a-yes/b-no, 2 a-no/b-yes.
    # po = 15/20 = 0.75; pa1 = 11/20, pb1 = 10/20; pe = 0.55*0.5 + 0.45*0.5 = 0.5; kappa = 0.5.
    assert cohen_kappa(Confusion(n00=7, n01=2, n10=3, n11=8)) == pytest.approx(0.5)


@pytest.mark.parametrize("c", [Confusion(), Confusion(n11=5), Confusion(n00=3)])
def test_kappa_is_undefined_without_chance_disagreement(c):
    assert cohen_kappa(c) is None


def test_kappa_of_perfect_disagreement_is_negative():
    assert cohen_kappa(Confusion(n01=5, n10=5)) == pytest.approx(-1.0)


def test_pearson_and_spearman_by_hand():
    a, b = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    # mean 2.5; cov = 1.5*1.5 + 0.5*(-0.5)... = 2.25 + (-0.5)(0.5) + (0.5)(-0.5) + 2.25 = 4.0; var = 5.0 each
    assert pearson(a, b) == pytest.approx(0.8)
    assert spearman(a, b) == pytest.approx(0.8)
    assert spearman([1, 2, 3], [10, 20, 1000]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [10, 20, 1000]) < 1.0


@pytest.mark.parametrize(("a", "b"), [([], []), ([1.0], [0.0]), ([1, 1, 1], [0, 1, 0])])
def test_correlations_are_undefined_on_degenerate_data(a, b):
    assert pearson(a, b) is None
    assert spearman(a, b) is None


def test_compare_drops_missing_pairs_and_scores_f1():
    labels = [1, 1, 1, 0, 0, None]
    preds = [1, 1, 0, 1, 0, 1]
    pair = compare("label", labels, "rule", preds)
    assert pair.n == 5
    assert pair.confusion == Confusion(n00=1, n01=1, n10=1, n11=2)
    assert pair.agreement == pytest.approx(3 / 5)
    assert pair.precision == pytest.approx(2 / 3)
    assert pair.recall == pytest.approx(2 / 3)
    assert pair.f1 == pytest.approx(2 / 3)


def test_compare_with_no_positive_predictions_has_no_precision():
    pair = compare("label", [1, 0], "rule", [0, 0])
    assert pair.precision is None
    assert pair.recall == 0.0
    assert pair.f1 == 0.0


def test_top_disagreements_largest_gap_first():
    rows = [_row(1, 1.0, 0.45), _row(2, 0.0, 0.9), _row(3, 1.0, 0.8), _row(4, 0.0, 0.6), _row(5, None, 0.9)]
    assert [r.id for r in top_disagreements(rows, 10)] == ["r2", "r4", "r1"]
    assert [r.id for r in top_disagreements(rows, 1)] == ["r2"]


def test_summarize_rule_only():
    rows = [_row(1, 1.0, label=1, answer_type="NUMBER"), _row(2, 0.0, label=1), _row(3, 0.0, label=0)]
    summary = summarize(rows)
    assert not summary.judged
    assert summary.rule_vs_judge is None and summary.judge_vs_label is None and summary.sources == []
    assert summary.rule_vs_label is not None and summary.rule_vs_label.agreement == pytest.approx(2 / 3)
    assert [(g.name, g.n, g.rule_accuracy) for g in summary.per_answer_type] == [
        ("(none)", 2, 0.5),
        ("NUMBER", 1, 1.0),
    ]


def test_summarize_with_judge_sources_latency_and_missing_values():
    rows = [
        _row(1, 1.0, 0.9, 1, "NUMBER", "judge", 100.0),
        _row(2, 0.0, 0.8, 1, "NUMBER", "cache", 1.0),
        _row(3, 0.0, 0.0, 0, "TEXT", "rule", 2.0),
        _row(4, 0.0, None, 0, "TEXT", "error", 300.0),
        _row(5, None, 0.2, None, "TEXT", "judge", 50.0),
    ]
    summary = summarize(rows)
    assert (
        summary.judged and summary.judge_missing == 1 and summary.rule_missing == 1 and summary.labelled == 4
    )
    assert summary.rule_vs_judge is not None and summary.rule_vs_judge.n == 3
    assert summary.rule_vs_judge.agreement == pytest.approx(2 / 3)
    assert summary.judge_vs_label is not None and summary.judge_vs_label.agreement == 1.0
    assert {s.source: s.n for s in summary.sources} == {"cache": 1, "error": 1, "judge": 2, "rule": 1}
    assert math.isclose(sum(s.share for s in summary.sources), 1.0)
    assert summary.latency is not None
    assert (summary.latency.p50, summary.latency.p99) == (50.0, 300.0)
    assert [r.id for r in summary.disagreements] == ["r2"]
