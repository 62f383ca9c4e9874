"""Counters and latency percentiles for ``get_metrics()``; thread-safe, bounded memory."""

from __future__ import annotations

import threading
from collections import Counter, deque

from typing_extensions import TypedDict

from adapter.fork_safety import reset_after_fork
from adapter.observability.reward_distribution import RewardDistribution, RewardDistributionSnapshot

__all__ = [
    "INVALID_INPUT",
    "CascadeCounts",
    "CounterSnapshot",
    "LatencyPercentiles",
    "RewardCounters",
    "RewardDistributionMetrics",
    "RewardMetrics",
    "percentile",
]

LATENCY_WINDOW = 10_000
INVALID_INPUT = "invalid_input"
"""The reason of a row that could not be judged (``invalid_rows: zero``): reward 0 by rule."""


class LatencyPercentiles(TypedDict):
    """Reward latency over the recent window, in ms."""

    p50: float
    p95: float
    p99: float
    max: float


class RewardDistributionMetrics(RewardDistributionSnapshot):
    """The reward distribution, with the canary probes' false-positive rate next to it."""

    canary_false_positive_rate: float | None


class CascadeCounts(TypedDict):
    """strategy cascade: rewards decided by rule, sent on to the judge, and the judge's share."""

    decided_by_rule: int
    sent_to_judge: int
    judge_fraction: float | None


class RewardCounters(TypedDict):
    """``RewardMetrics.snapshot``: the counters and rates of every reward so far."""

    total_requests: int
    sources: dict[str, int]
    cache_hit_rate: float
    error_rate: float
    fallback_rate: float
    errors: dict[str, int]
    fallback_reasons: dict[str, int]
    precheck_reasons: dict[str, int]
    invalid_rows: int
    latency_ms: LatencyPercentiles
    judge_calls: int
    judged_items: int
    batched_fraction: float
    single_flight_joins: int
    reward_distribution: RewardDistributionMetrics
    cascade: CascadeCounts


class CounterSnapshot(RewardCounters, closed=True):
    """``RewardCounters`` and no other key, so ``get_metrics()`` can spread it into its own dict."""


def percentile(sorted_values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of already sorted values, by nearest rank; 0 when empty."""
    if not sorted_values:
        return 0.0
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * (len(sorted_values) - 1))))
    return sorted_values[rank]


class RewardMetrics:
    """What happened to every reward request: sources, errors, reasons, latency, batching."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        reset_after_fork(self)
        self.sources: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.fallback_reasons: Counter[str] = Counter()
        self.precheck_reasons: Counter[str] = Counter()
        self.invalid_rows = 0
        self.judge_calls = 0
        self.judged_items = 0
        self.batched_items = 0
        self.single_flight_joins = 0
        self.cascade_decided = 0
        self.cascade_to_judge = 0
        self._latency_ms: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self.rewards = RewardDistribution()

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()  # a parent thread may have held it at fork

    def record(
        self,
        source: str,
        latency_ms: float,
        reason: str | None,
        reward: float | None,
        answer_type: str | None,
    ) -> None:
        """One answered request and the reward it got (None: no value, source ``error``)."""
        with self._lock:
            self.sources[source] += 1
            self.rewards.add(source, answer_type, reward)
            self._latency_ms.append(latency_ms)
            if source in ("rule_fallback", "error") and reason:
                self.fallback_reasons[reason] += 1
            elif source == "rule" and reason:
                self.precheck_reasons[reason] += 1
            if reason == INVALID_INPUT:
                self.invalid_rows += 1

    def record_error(self, kind: str) -> None:
        """A failed judge attempt for one item (before any fallback)."""
        with self._lock:
            self.errors[kind] += 1

    def record_batch(self, size: int) -> None:
        """One HTTP call to the judge carrying ``size`` items."""
        with self._lock:
            self.judge_calls += 1
            self.judged_items += size
            if size > 1:
                self.batched_items += size

    def record_cascade(self, decided: bool) -> None:
        """One reward the cascade decided by rule, or sent on to the judge."""
        with self._lock:
            if decided:
                self.cascade_decided += 1
            else:
                self.cascade_to_judge += 1

    def record_join(self) -> None:
        """A request that shared an identical in-flight request's judge call."""
        with self._lock:
            self.single_flight_joins += 1

    def snapshot(self, canary_false_positive_rate: float | None = None) -> CounterSnapshot:
        """Counters and rates (the live gauges are added by the reward system), the canary
        probes' false-positive rate next to the reward distribution."""
        with self._lock:
            total = sum(self.sources.values())
            latencies = sorted(self._latency_ms)
            failed = self.sources["rule_fallback"] + self.sources["error"]
            cascaded = self.cascade_decided + self.cascade_to_judge
            return {
                "total_requests": total,
                "sources": dict(self.sources),
                "cache_hit_rate": self.sources["cache"] / total if total else 0.0,
                "error_rate": sum(self.errors.values()) / self.judged_items if self.judged_items else 0.0,
                "fallback_rate": failed / total if total else 0.0,
                "errors": dict(self.errors),
                "fallback_reasons": dict(self.fallback_reasons),
                "precheck_reasons": dict(self.precheck_reasons),
                "invalid_rows": self.invalid_rows,
                "latency_ms": {
                    "p50": percentile(latencies, 50),
                    "p95": percentile(latencies, 95),
                    "p99": percentile(latencies, 99),
                    "max": latencies[-1] if latencies else 0.0,
                },
                "judge_calls": self.judge_calls,
                "judged_items": self.judged_items,
                "batched_fraction": self.batched_items / self.judged_items if self.judged_items else 0.0,
                "single_flight_joins": self.single_flight_joins,
                "reward_distribution": {
                    **self.rewards.snapshot(),
                    "canary_false_positive_rate": canary_false_positive_rate,
                },
                "cascade": {
                    "decided_by_rule": self.cascade_decided,
                    "sent_to_judge": self.cascade_to_judge,
                    "judge_fraction": self.cascade_to_judge / cascaded if cascaded else None,
                },
            }
