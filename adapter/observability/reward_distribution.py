"""The distribution of reward values, per source and answer_type: counters only, bounded memory.

Reward hacking and judge drift show in the values, not in latencies: a judge that starts to
give 1.0 to everything, or a policy whose judge rewards pile up at 1.0 while the rule
fallback's stay at 0. Each (source, answer_type) pair keeps a count, a sum and cumulative
``le`` buckets over [0, 1] (Prometheus' histogram semantics: the ``0.1`` bucket counts every
reward <= 0.1). Near 0 is ``reward <= 0.05``, near 1 is ``reward >= 0.95``.

A reward without a value (source ``error``, fallback off) is counted in ``no_value``, never
as 0. answer_type labels are a closed set (``ANSWER_TYPE_LABELS``): the answer types of the
registry (``adapter.rules.answer_types``), and ``OTHER`` for anything else or none, so a trainer passing free text
as answer_type cannot grow the series without bound.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from typing_extensions import TypedDict

from adapter.rules.answer_types import GRAMMARS

__all__ = [
    "ANSWER_TYPE_LABELS",
    "NEAR_ONE",
    "NEAR_ZERO",
    "OTHER_ANSWER_TYPE",
    "REWARD_BUCKETS",
    "RewardCounts",
    "RewardDistribution",
    "RewardDistributionSnapshot",
    "answer_type_label",
]

# Upper bounds of the cumulative buckets; 0.05 and 0.95 are bounds so the ends show apart.
REWARD_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
NEAR_ZERO = 0.05
NEAR_ONE = 0.95
OTHER_ANSWER_TYPE = "OTHER"
ANSWER_TYPE_LABELS = (*GRAMMARS, OTHER_ANSWER_TYPE)
_KNOWN_TYPES = frozenset(GRAMMARS)


def answer_type_label(answer_type: str | None) -> str:
    """The label for a request's (normalised, upper-case) answer_type: its name if it has a
    rubric of its own, else ``OTHER``."""
    return answer_type if answer_type in _KNOWN_TYPES else OTHER_ANSWER_TYPE


class RewardCounts(TypedDict):
    """The rewards of one (source, answer_type) pair: ``buckets`` by upper bound, cumulative."""

    count: int
    sum: float
    mean: float | None
    buckets: dict[str, int]
    near_zero_fraction: float | None
    near_one_fraction: float | None


class RewardDistributionSnapshot(TypedDict):
    """Every reward's counts, and each pair's ``RewardCounts`` by source, then answer_type."""

    count: int
    no_value: int
    near_zero_fraction: float | None
    near_one_fraction: float | None
    sources: dict[str, dict[str, RewardCounts]]


@dataclass
class _Counts:
    """The rewards of one (source, answer_type) pair."""

    count: int = 0
    total: float = 0.0
    near_zero: int = 0
    near_one: int = 0
    # Per-bucket counts (not cumulative); index len(REWARD_BUCKETS) holds rewards above 1.
    bins: list[int] = field(default_factory=lambda: [0] * (len(REWARD_BUCKETS) + 1))

    def add(self, reward: float) -> None:
        self.count += 1
        self.total += reward
        self.near_zero += reward <= NEAR_ZERO
        self.near_one += reward >= NEAR_ONE
        self.bins[bisect.bisect_left(REWARD_BUCKETS, reward)] += 1  # the first bound >= reward

    def snapshot(self) -> RewardCounts:
        cumulative, running = {}, 0
        for bound, n in zip(REWARD_BUCKETS, self.bins, strict=False):
            running += n
            cumulative[str(bound)] = running
        return {
            "count": self.count,
            "sum": self.total,
            "mean": self.total / self.count if self.count else None,
            "buckets": cumulative,
            "near_zero_fraction": self.near_zero / self.count if self.count else None,
            "near_one_fraction": self.near_one / self.count if self.count else None,
        }


class RewardDistribution:
    """Counters of reward values; not thread-safe on its own (``RewardMetrics`` holds the lock)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str], _Counts] = {}
        self.no_value = 0

    def add(self, source: str, answer_type: str | None, reward: float | None) -> None:
        """One returned reward (``None``: a reward without a value)."""
        if reward is None:
            self.no_value += 1
            return
        key = (source, answer_type_label(answer_type))
        counts = self._counts.get(key)
        if counts is None:
            counts = self._counts[key] = _Counts()
        counts.add(reward)

    def snapshot(self) -> RewardDistributionSnapshot:
        """Overall count and near-0/near-1 fractions, and each pair's ``_Counts.snapshot``."""
        count = sum(c.count for c in self._counts.values())
        near_zero = sum(c.near_zero for c in self._counts.values())
        near_one = sum(c.near_one for c in self._counts.values())
        sources: dict[str, dict[str, RewardCounts]] = {}
        for (source, answer_type), counts in sorted(self._counts.items()):
            sources.setdefault(source, {})[answer_type] = counts.snapshot()
        return {
            "count": count,
            "no_value": self.no_value,
            "near_zero_fraction": near_zero / count if count else None,
            "near_one_fraction": near_one / count if count else None,
            "sources": sources,
        }
