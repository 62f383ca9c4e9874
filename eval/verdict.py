"""What the data supports, in words: each scorer against the labels, baselines, and a verdict.

``scorer_stats`` measures one reward column against the labels with bootstrap intervals:
agreement, kappa, AUROC on the rows the judge itself decided (pre-check, cascade and fallback
rows are rules: they would flatter a judge), the false-positive rate (reward >= 0.5 on a
label-0 row: what RL learns to exploit) and the cost per 1,000 rows. ``baselines`` adds two
scorers that know nothing: always the majority label, and uniform random rewards.
``verdict_lines`` states the headline: is the judge better than chance, better than the
rule, and how much of the data it actually judged. ``Assessment.inverted`` holds the headline of
a judge whose scores are inverted (its AUROC's interval wholly below 0.5): judge-eval exits 4.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from eval.coverage import JUDGE_DECIDED, JudgeCoverage
from eval.intervals import (
    Array,
    Interval,
    Statistic,
    accuracy,
    auroc,
    bootstrap,
    false_positive_rate,
    kappa,
)
from eval.metrics import THRESHOLD
from eval.scoring import ScoredRow

__all__ = [
    "Assessment",
    "ScorerStats",
    "assess",
    "baselines",
    "is_inverted",
    "scorer_stats",
    "verdict_lines",
]


class ScorerStats(BaseModel):
    """One reward column against the labels, with 95% bootstrap intervals."""

    model_config = ConfigDict(frozen=True)

    name: str
    n: int
    accuracy: float | None
    accuracy_ci: Interval | None
    kappa: float | None
    kappa_ci: Interval | None
    auroc_rows: int
    auroc: float | None
    auroc_ci: Interval | None
    false_positive_rate: float | None
    false_positive_rate_ci: Interval | None
    judge_calls_per_1000: float | None = None
    seconds_per_1000: float | None = None


def _defined(value: float) -> float | None:
    return None if np.isnan(value) else value


def _measure(
    statistic: Statistic, scores: Array, labels: Array, seed: int
) -> tuple[float | None, Interval | None]:
    return _defined(statistic(scores, labels)), bootstrap(statistic, scores, labels, seed=seed)


def _stats(
    name: str, scores: Array, labels: Array, decided: NDArray[np.bool_], seed: int, **cost: float | None
) -> ScorerStats:
    acc, acc_ci = _measure(accuracy, scores, labels, seed)
    kap, kap_ci = _measure(kappa, scores, labels, seed)
    auc, auc_ci = _measure(auroc, scores[decided], labels[decided], seed)
    fpr, fpr_ci = _measure(false_positive_rate, scores, labels, seed)
    return ScorerStats(
        name=name,
        n=len(scores),
        accuracy=acc,
        accuracy_ci=acc_ci,
        kappa=kap,
        kappa_ci=kap_ci,
        auroc_rows=int(decided.sum()),
        auroc=auc,
        auroc_ci=auc_ci,
        false_positive_rate=fpr,
        false_positive_rate_ci=fpr_ci,
        **cost,
    )


def _labelled(rows: Sequence[ScoredRow], column: str) -> list[ScoredRow]:
    return [r for r in rows if r.label is not None and getattr(r, column) is not None]


def scorer_stats(
    name: str,
    rows: Sequence[ScoredRow],
    column: str,
    seed: int = 0,
    judge_calls: int | None = None,
    seconds: float | None = None,
) -> ScorerStats:
    """``column`` ("rule" or "judge") of the labelled rows against their labels.

    The judge's AUROC is taken on the rows it decided (source judge or cache); the rule's on
    every labelled row. ``judge_calls`` and ``seconds`` are the run's, spread per 1,000 rows.
    """
    kept = _labelled(rows, column)
    scores = np.array([getattr(r, column) for r in kept], dtype=float)
    labels = np.array([r.label for r in kept], dtype=float)
    if column == "judge":
        decided = np.array([r.judge_source in JUDGE_DECIDED for r in kept], dtype=bool)
    else:
        decided = np.ones(len(kept), dtype=bool)
    per_1000 = 1000 / len(rows) if rows else None
    return _stats(
        name,
        scores,
        labels,
        decided,
        seed,
        judge_calls_per_1000=None if judge_calls is None or per_1000 is None else judge_calls * per_1000,
        seconds_per_1000=None if seconds is None or per_1000 is None else seconds * per_1000,
    )


def baselines(rows: Sequence[ScoredRow], seed: int = 0) -> list[ScorerStats]:
    """Scorers that know nothing: always the majority label, and uniform random rewards."""
    labels = np.array([r.label for r in rows if r.label is not None], dtype=float)
    if not len(labels):
        return []
    everything = np.ones(len(labels), dtype=bool)
    majority = 1.0 if np.mean(labels >= THRESHOLD) >= 0.5 else 0.0
    constant = np.full(len(labels), majority)
    noise = np.random.default_rng(seed).random(len(labels))
    return [
        _stats(f"always {'correct' if majority else 'wrong'} (majority)", constant, labels, everything, seed),
        _stats("random rewards", noise, labels, everything, seed),
    ]


def _figure(value: float | None, ci: Interval | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" + (f" (95% CI {ci.low:.2f}-{ci.high:.2f})" if ci else "")


def _difference(rows: Sequence[ScoredRow], seed: int) -> tuple[float, Interval | None] | None:
    """Judge accuracy minus rule accuracy on the rows both scored, with a paired interval."""
    both = [r for r in _labelled(rows, "judge") if r.rule is not None]
    if not both:
        return None
    judge = np.array([r.judge for r in both], dtype=float)
    rule = np.array([r.rule for r in both], dtype=float)
    labels = np.array([r.label for r in both], dtype=float)

    def gain(j: Array, r: Array, y: Array) -> float:
        return accuracy(j, y) - accuracy(r, y)

    return gain(judge, rule, labels), bootstrap(gain, judge, rule, labels, seed=seed)


# Fewer judged rows than this and a bootstrap interval says little: no run fails on it.
MIN_INVERTED_ROWS = 20


def is_inverted(judge: ScorerStats) -> bool:
    """Whether the judge ranks worse than chance: its AUROC's 95% interval lies wholly below 0.5,
    on at least MIN_INVERTED_ROWS judged rows (3 rows of a noise judge can look inverted)."""
    return judge.auroc_ci is not None and judge.auroc_ci.high < 0.5 and judge.auroc_rows >= MIN_INVERTED_ROWS


def _chance_line(judge: ScorerStats) -> str | None:
    if judge.auroc is None:
        return f"The judge's ranking cannot be measured: the {judge.auroc_rows} rows it decided hold one label only."
    if judge.auroc_ci is None or judge.auroc_ci.covers(0.5):
        return (
            f"The judge is indistinguishable from chance on the {judge.auroc_rows} rows it decided "
            f"(AUROC {_figure(judge.auroc, judge.auroc_ci)}): its rewards carry no signal on this data."
        )
    if is_inverted(judge):
        return (
            f"The judge ranks worse than chance on the {judge.auroc_rows} rows it decided "
            f"(AUROC {_figure(judge.auroc, judge.auroc_ci)}): its scores are inverted, it pays wrong answers "
            "over right ones; check the profile's labels and the reward's direction before training on it."
        )
    return None


def _undecided_line(rows: Sequence[ScoredRow], seed: int) -> str | None:
    """Under the cascade: the judge against the rule on the rows the rules could not decide."""
    if not any(r.judge_reason == "cascade" for r in rows):
        return None
    sent = [r for r in _labelled(rows, "judge") if r.judge_source in JUDGE_DECIDED and r.rule is not None]
    if not sent:
        return "The cascade's rules decided every labelled row: the judge was not compared."
    judge = scorer_stats("judge", sent, "judge", seed)
    rule = scorer_stats("rule", sent, "rule", seed)
    found = _difference(sent, seed)
    assert found is not None  # every row in ``sent`` has both rewards and a label
    diff, ci = found
    outcome = (
        "the judge is better"
        if ci and ci.low > 0
        else "the rule is better"
        if ci and ci.high < 0
        else "no clear difference"
    )
    return (
        f"On the {len(sent)} rows the rules could not decide (the cascade sent them to the judge): judge agreement "
        f"{_figure(judge.accuracy, judge.accuracy_ci)} vs rule {_figure(rule.accuracy, rule.accuracy_ci)}, "
        f"difference {diff:+.2f}"
        + (f" (95% CI {ci.low:+.2f} to {ci.high:+.2f})" if ci else "")
        + f": {outcome}; "
        f"judge AUROC {_figure(judge.auroc, judge.auroc_ci)}."
    )


def _comparison_line(rows: Sequence[ScoredRow], judge: ScorerStats, rule: ScorerStats, seed: int) -> str:
    found = _difference(rows, seed)
    diff, ci = found if found else (None, None)
    if diff is None:
        return "The judge and the rule share no labelled row to compare on."
    if ci is not None and ci.low > 0:
        outcome = "the judge is better"
    elif ci is not None and ci.high < 0:
        outcome = "the rule is better"
    else:
        outcome = "no clear difference"
    return (
        f"Agreement with the labels: judge {_figure(judge.accuracy, judge.accuracy_ci)} vs rule "
        f"{_figure(rule.accuracy, rule.accuracy_ci)}; difference {diff:+.2f}"
        + (f" (95% CI {ci.low:+.2f} to {ci.high:+.2f})" if ci else "")
        + f": {outcome}."
    )


def verdict_lines(
    rows: Sequence[ScoredRow],
    rule: ScorerStats,
    judge: ScorerStats | None,
    majority: ScorerStats | None,
    coverage: JudgeCoverage | None,
    seed: int = 0,
) -> list[str]:
    """The report's first lines: what the data supports, most important first."""
    if rule.n == 0:
        return [
            "No labelled rows: agreement with labels, AUROC and false-positive rates need a label column."
        ]
    if judge is None:
        return [
            f"Rule only: agreement with the labels {_figure(rule.accuracy, rule.accuracy_ci)}, "
            f"false-positive rate {_figure(rule.false_positive_rate, rule.false_positive_rate_ci)} "
            f"on {rule.n} labelled rows."
        ]
    lines = [line for line in (_chance_line(judge),) if line]
    if judge.auroc is not None and not lines:
        lines.append(
            f"The judge ranks better than chance on the {judge.auroc_rows} rows it decided "
            f"(AUROC {_figure(judge.auroc, judge.auroc_ci)})."
        )
    undecided = _undecided_line(rows, seed)
    if undecided:
        lines.insert(0, undecided)
    lines.append(_comparison_line(rows, judge, rule, seed))
    floor = majority.accuracy if majority else None
    if floor is not None and judge.accuracy is not None and judge.accuracy <= floor:
        lines.append(
            f"Always answering the majority label agrees {floor:.2f}: the judge ({judge.accuracy:.2f}) does no better."
        )
    lines.append(
        "Wrong answers paid as correct (false-positive rate): judge "
        f"{_figure(judge.false_positive_rate, judge.false_positive_rate_ci)}, rule "
        f"{_figure(rule.false_positive_rate, rule.false_positive_rate_ci)}."
    )
    escalation = _escalation_line(rows)
    if escalation:
        lines.append(escalation)
    if coverage is not None:
        cached = coverage.by_source.get("cache", 0)
        lines.append(
            f"{coverage.decided / coverage.rows:.0%} of rows were judged ({coverage.decided} of {coverage.rows}"
            + (f", {cached} of them answered from the cache" if cached else "")
            + "); the others were decided by rules (pre-checks, cascade) or fell back."
            if coverage.rows
            else "No rows."
        )
    return lines


def _escalation_line(rows: Sequence[ScoredRow]) -> str | None:
    """What ``escalate_to`` cost and gained: the first judge alone against the escalated rewards."""
    judged = [
        r
        for r in _labelled(rows, "judge")
        if r.judge_source in JUDGE_DECIDED and r.judge_scores and "first" in r.judge_scores
    ]
    if not judged:
        return None
    escalated = [r for r in judged if r.judge_scores and r.judge_scores.get("second") is not None]

    def agreement(kept: Sequence[ScoredRow], first: bool) -> float:
        scores = [r.judge_scores["first"] if first and r.judge_scores else r.judge for r in kept]
        return accuracy(np.array(scores, dtype=float), np.array([r.label for r in kept], dtype=float))

    line = (
        f"Escalation: the second judge decided {len(escalated)} of the {len(judged)} labelled rows the judge decided "
        f"({len(escalated) / len(judged):.0%}: {1000 * len(escalated) / len(judged):.0f} extra judgments per 1,000 rows); "
        f"agreement with the labels {agreement(judged, True):.2f} for the first judge alone, "
        f"{agreement(judged, False):.2f} with escalation"
    )
    if escalated:
        line += (
            f" ({agreement(escalated, True):.2f} -> {agreement(escalated, False):.2f} on the escalated rows)"
        )
    return line + "."


class Assessment(BaseModel):
    """The verdict lines and the scorer table that open the report; ``inverted`` the line saying
    the judge's scores are inverted (None when they are not, or there was no judge)."""

    model_config = ConfigDict(frozen=True)

    lines: list[str]
    scorers: list[ScorerStats]
    inverted: str | None = None


def assess(
    rows: Sequence[ScoredRow],
    coverage: JudgeCoverage | None,
    judge_calls: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
) -> Assessment:
    """Rule, judge (when the run had one) and the baselines against the labels, and the verdict."""
    rule = scorer_stats("rule", rows, "rule", seed)
    judge = scorer_stats("judge", rows, "judge", seed, judge_calls, seconds) if coverage else None
    known_nothing = baselines(rows, seed)
    lines = verdict_lines(rows, rule, judge, known_nothing[0] if known_nothing else None, coverage, seed)
    inverted = _chance_line(judge) if judge is not None and is_inverted(judge) else None
    return Assessment(
        lines=lines, scorers=[rule, *([judge] if judge else []), *known_nothing], inverted=inverted
    )
