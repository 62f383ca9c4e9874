"""How sure a figure is: scorer statistics against labels, with seeded bootstrap 95% intervals.

Rewards and labels are binarised at 0.5 (``eval.metrics.THRESHOLD``). Each statistic is a
pure function of numpy arrays that returns NaN where it is undefined (one class only, no
label-0 rows); ``bootstrap`` resamples rows with replacement (percentile method, the same
resamples for every column, so two scorers on the same rows are compared pairwise) and
leaves out the resamples where the statistic is undefined. The same ``seed`` gives the same
interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict
from scipy.stats import rankdata

from eval.metrics import THRESHOLD

__all__ = [
    "DEFAULT_RESAMPLES",
    "Array",
    "Interval",
    "Statistic",
    "accuracy",
    "auroc",
    "bootstrap",
    "false_positive_rate",
    "kappa",
]

DEFAULT_RESAMPLES = 1000
LEVEL = 0.95
Array = NDArray[np.float64]
Statistic = Callable[..., float]


class Interval(BaseModel):
    """A 95% bootstrap interval (``bootstrap`` gives None instead when the statistic was undefined)."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float

    def covers(self, value: float) -> bool:
        """True when ``value`` lies inside the interval."""
        return self.low <= value <= self.high


def accuracy(scores: Array, labels: Array) -> float:
    """Share of rows where the binarised score equals the binarised label."""
    if not len(scores):
        return math.nan
    return float(np.mean((scores >= THRESHOLD) == (labels >= THRESHOLD)))


def kappa(scores: Array, labels: Array) -> float:
    """Cohen's kappa of the binarised score against the binarised label (NaN when undefined)."""
    if not len(scores):
        return math.nan
    s, y = scores >= THRESHOLD, labels >= THRESHOLD
    observed = float(np.mean(s == y))
    expected = float(s.mean() * y.mean() + (1 - s.mean()) * (1 - y.mean()))
    return math.nan if math.isclose(expected, 1.0) else (observed - expected) / (1 - expected)


def auroc(scores: Array, labels: Array) -> float:
    """P(score of a label-1 row > score of a label-0 row), ties half (NaN without both classes)."""
    positive = labels >= THRESHOLD
    n1 = int(positive.sum())
    n0 = len(labels) - n1
    if not n1 or not n0:
        return math.nan
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def false_positive_rate(scores: Array, labels: Array) -> float:
    """Share of label-0 rows paid as correct (score >= 0.5): the reward RL would learn to hack."""
    negative = labels < THRESHOLD
    if not negative.any():
        return math.nan
    return float(np.mean(scores[negative] >= THRESHOLD))


def bootstrap(
    statistic: Statistic, *columns: Array, seed: int = 0, resamples: int = DEFAULT_RESAMPLES
) -> Interval | None:
    """The percentile interval of ``statistic(*columns)`` over row resamples; None when undefined."""
    n = len(columns[0]) if columns else 0
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    values = np.array([statistic(*(c[p] for c in columns)) for p in picks])
    values = values[~np.isnan(values)]
    if len(values) < resamples / 2:  # undefined on most resamples: no honest interval
        return None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(low=float(low), high=float(high))
