"""Agreement statistics between rule rewards, judge rewards and labels: pure functions.

Rewards and labels are binarised at ``THRESHOLD`` (0.5: a reward of 0.5 or more counts
as "correct") for agreement, Cohen's kappa, the confusion matrix, accuracy and F1;
Pearson and Spearman use the raw values. A statistic that is undefined on the data
(no rows, a constant column) is None, never a made-up number.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict
from scipy.stats import rankdata

from adapter.observability.metrics import percentile
from eval.scoring import ScoredRow

__all__ = [
    "NO_ANSWER_TYPE",
    "THRESHOLD",
    "Confusion",
    "EvalSummary",
    "GroupStats",
    "LatencyStats",
    "PairStats",
    "SourceStats",
    "binarize",
    "cohen_kappa",
    "compare",
    "confusion",
    "pearson",
    "spearman",
    "summarize",
    "top_disagreements",
]

THRESHOLD = 0.5
NO_ANSWER_TYPE = "(none)"


class Confusion(BaseModel):
    """2x2 counts of binarised values: ``n<a><b>`` is the count with a == <a> and b == <b>."""

    model_config = ConfigDict(frozen=True)

    n00: int = 0
    n01: int = 0
    n10: int = 0
    n11: int = 0


class PairStats(BaseModel):
    """How two score columns agree on the rows where both are present.

    ``a`` is the reference (rows of the confusion matrix), ``b`` the prediction; precision,
    recall and F1 are those of ``b`` for the positive class against ``a``.
    """

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    n: int
    agreement: float | None
    kappa: float | None
    pearson: float | None
    spearman: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    confusion: Confusion


class GroupStats(BaseModel):
    """Means and agreement for one group of rows (an answer_type, or a --group-by value)."""

    model_config = ConfigDict(frozen=True)

    name: str
    n: int
    rule_mean: float | None
    judge_mean: float | None
    agreement: float | None
    rule_accuracy: float | None
    judge_accuracy: float | None


class SourceStats(BaseModel):
    """The rows whose judge reward came from one source (judge, cache, rule, rule_fallback, error)."""

    model_config = ConfigDict(frozen=True)

    source: str
    n: int
    share: float
    judge_mean: float | None
    agreement: float | None
    judge_accuracy: float | None


class LatencyStats(BaseModel):
    """Per-row judge latency percentiles (ms, nearest rank) over rows with a latency."""

    model_config = ConfigDict(frozen=True)

    n: int
    p50: float
    p95: float
    p99: float


class EvalSummary(BaseModel):
    """Everything ``report.md`` states that follows from ``scores.jsonl`` alone."""

    model_config = ConfigDict(frozen=True)

    rows: int
    labelled: int
    rule_missing: int
    judged: bool
    judge_missing: int
    rule_vs_judge: PairStats | None
    rule_vs_label: PairStats | None
    judge_vs_label: PairStats | None
    per_answer_type: list[GroupStats]
    per_group: list[GroupStats] = []
    sources: list[SourceStats]
    latency: LatencyStats | None
    disagreements: list[ScoredRow]


def binarize(value: float) -> int:
    """1 when ``value >= THRESHOLD``, else 0."""
    return 1 if value >= THRESHOLD else 0


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def confusion(a: Sequence[float], b: Sequence[float]) -> Confusion:
    """Counts of (binarize(a), binarize(b)) pairs."""
    counts = Counter((binarize(x), binarize(y)) for x, y in zip(a, b, strict=True))
    return Confusion(n00=counts[0, 0], n01=counts[0, 1], n10=counts[1, 0], n11=counts[1, 1])


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa of a 2x2 confusion; None when chance agreement is total (kappa undefined)."""
    n = c.n00 + c.n01 + c.n10 + c.n11
    if n == 0:
        return None
    observed = (c.n00 + c.n11) / n
    a1, b1 = (c.n10 + c.n11) / n, (c.n01 + c.n11) / n
    expected = a1 * b1 + (1 - a1) * (1 - b1)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def pearson(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than two rows or a constant column."""
    n = len(a)
    if n < 2:
        return None
    mean_a, mean_b = sum(a) / n, sum(b) / n
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b, strict=True))
    var_a = sum((x - mean_a) ** 2 for x in a)
    var_b = sum((y - mean_b) ** 2 for y in b)
    if var_a <= 1e-24 or var_b <= 1e-24:
        return None
    return cov / math.sqrt(var_a * var_b)


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the ranks (ties get their average rank)."""
    if len(a) < 2:
        return None
    return pearson(list(rankdata(a)), list(rankdata(b)))


def compare(name_a: str, a: Sequence[float | None], name_b: str, b: Sequence[float | None]) -> PairStats:
    """Agreement, kappa, correlations, confusion and F1 of two columns (pairs with a None dropped)."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
    c = confusion(xs, ys)
    precision = _ratio(c.n11, c.n01 + c.n11)
    recall = _ratio(c.n11, c.n10 + c.n11)
    f1 = _ratio(2 * c.n11, 2 * c.n11 + c.n01 + c.n10)
    return PairStats(
        a=name_a,
        b=name_b,
        n=len(pairs),
        agreement=_ratio(c.n00 + c.n11, len(pairs)),
        kappa=cohen_kappa(c),
        pearson=pearson(xs, ys),
        spearman=spearman(xs, ys),
        precision=precision,
        recall=recall,
        f1=f1,
        confusion=c,
    )


def _agreement(a: Sequence[float | None], b: Sequence[float | None]) -> float | None:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    return _ratio(sum(binarize(x) == binarize(y) for x, y in pairs), len(pairs))


def _group(rows: Sequence[ScoredRow], key: Callable[[ScoredRow], str]) -> dict[str, list[ScoredRow]]:
    groups: dict[str, list[ScoredRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return dict(sorted(groups.items()))


def _present(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _group_stats(name: str, rows: Sequence[ScoredRow]) -> GroupStats:
    rule = [r.rule for r in rows]
    judge = [r.judge for r in rows]
    labels = [r.label for r in rows]
    return GroupStats(
        name=name,
        n=len(rows),
        rule_mean=_mean(_present(rule)),
        judge_mean=_mean(_present(judge)),
        agreement=_agreement(rule, judge),
        rule_accuracy=_agreement(labels, rule),
        judge_accuracy=_agreement(labels, judge),
    )


def _source_stats(source: str, rows: Sequence[ScoredRow], total: int) -> SourceStats:
    judge = [r.judge for r in rows]
    return SourceStats(
        source=source,
        n=len(rows),
        share=len(rows) / total,
        judge_mean=_mean(_present(judge)),
        agreement=_agreement([r.rule for r in rows], judge),
        judge_accuracy=_agreement([r.label for r in rows], judge),
    )


def _latency(rows: Sequence[ScoredRow]) -> LatencyStats | None:
    values = sorted(r.latency_ms for r in rows if r.latency_ms is not None)
    if not values:
        return None
    return LatencyStats(
        n=len(values), p50=percentile(values, 50), p95=percentile(values, 95), p99=percentile(values, 99)
    )


def top_disagreements(rows: Sequence[ScoredRow], limit: int) -> list[ScoredRow]:
    """Rows where binarised rule and judge differ, the largest gap |rule - judge| first."""
    differing = [
        r
        for r in rows
        if r.rule is not None and r.judge is not None and binarize(r.rule) != binarize(r.judge)
    ]
    differing.sort(key=lambda r: (-abs(r.rule - r.judge), r.line))  # type: ignore[operator]
    return differing[:limit]


def summarize(rows: Sequence[ScoredRow], top: int = 10) -> EvalSummary:
    """Every statistic of the report, from scored rows alone."""
    judged = any(r.judge_source is not None for r in rows)
    rule = [r.rule for r in rows]
    judge = [r.judge for r in rows]
    labels = [r.label for r in rows]
    labelled = sum(v is not None for v in labels)
    by_type = _group(rows, lambda r: r.answer_type or NO_ANSWER_TYPE)
    by_source = _group(rows, lambda r: r.judge_source or "")
    grouped = [r for r in rows if r.group is not None]
    by_group = _group(grouped, lambda r: r.group or "") if grouped else {}
    return EvalSummary(
        rows=len(rows),
        labelled=labelled,
        rule_missing=sum(v is None for v in rule),
        judged=judged,
        judge_missing=sum(v is None for v in judge) if judged else 0,
        rule_vs_judge=compare("rule", rule, "judge", judge) if judged else None,
        rule_vs_label=compare("label", labels, "rule", rule) if labelled else None,
        judge_vs_label=compare("label", labels, "judge", judge) if labelled and judged else None,
        per_answer_type=[_group_stats(name, group) for name, group in by_type.items()],
        per_group=[_group_stats(name, group) for name, group in by_group.items()],
        sources=[_source_stats(s, g, len(rows)) for s, g in by_source.items()] if judged else [],
        latency=_latency(rows) if judged else None,
        disagreements=top_disagreements(rows, top) if judged else [],
    )
