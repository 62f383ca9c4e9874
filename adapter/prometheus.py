"""Prometheus series from a reward system's ``get_metrics()``, read at scrape time.

It needs only a ``get_metrics()``-shaped dict and prometheus_client (no web framework), so any
server can expose the same series, the HTTP API's ``/metrics`` or a trainer-side port:

    registry = CollectorRegistry()  # one per server, never prometheus_client's global REGISTRY
    registry.register(RewardCollector(reward_system.get_metrics))
    text = generate_latest(registry)

``REWARD_SERIES`` is the one table of series: a new ``get_metrics()`` key is one more row. A
key absent from the snapshot (or of an unexpected shape) drops its family from that scrape
instead of failing it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["BREAKER_STATES", "REWARD_SERIES", "RewardCollector", "RewardSeries"]

logger = logging.getLogger(__name__)

BREAKER_STATES = ("closed", "open", "half_open")


def _as_is(value: Any) -> Any:
    return value


def _per_replica(read: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Read one number from each replica's snapshot, keyed by the replica's URL."""
    return lambda replicas: {url: read(snapshot) for url, snapshot in replicas.items()}


@dataclass(frozen=True)
class RewardSeries:
    """One metric family read from one ``get_metrics()`` key.

    ``read`` turns the key's value into a number, or into ``{label value: number}`` when
    ``label`` is set. Counter names go without ``_total``: prometheus_client appends it.
    """

    name: str
    kind: Literal["counter", "gauge"]
    documentation: str
    key: str
    label: str | None = None
    read: Callable[[Any], Any] = _as_is


REWARD_SERIES: tuple[RewardSeries, ...] = (
    RewardSeries(
        "judge_rewards",
        "counter",
        "Rewards returned by source (judge, cache, rule, rule_fallback, error).",
        "sources",
        label="source",
    ),
    RewardSeries(
        "judge_cache_hits",
        "counter",
        "Rewards answered from the verdict cache.",
        "sources",
        read=lambda sources: sources.get("cache", 0),
    ),
    RewardSeries(
        "judge_fallbacks",
        "counter",
        "Rewards the judge did not give (rule fallback, or error when fallback is off) by reason.",
        "fallback_reasons",
        label="reason",
    ),
    RewardSeries(
        "judge_prechecks",
        "counter",
        "Rewards decided by a pre-check by reason.",
        "precheck_reasons",
        label="reason",
    ),
    RewardSeries(
        "judge_errors",
        "counter",
        "Failed judge attempts by error kind (before any fallback).",
        "errors",
        label="kind",
    ),
    RewardSeries("judge_calls", "counter", "HTTP calls to the judge server.", "judge_calls"),
    RewardSeries("judge_items", "counter", "Items sent to the judge server.", "judged_items"),
    RewardSeries(
        "judge_context_cuts",
        "counter",
        "Completions cut by tokens to fit the judge's context window.",
        "context_cuts",
    ),
    RewardSeries(
        "judge_cache_errors",
        "counter",
        "Verdict cache reads and writes that failed (each a miss or a dropped write).",
        "cache",
        read=lambda cache: cache["errors"],
    ),
    RewardSeries(
        "judge_cache_evictions",
        "counter",
        "Verdict cache entries evicted to stay within cache_size.",
        "cache",
        read=lambda cache: cache["evictions"],
    ),
    RewardSeries(
        "judge_coarse_fast_verdicts",
        "counter",
        "Fast-mode verdicts read from the sampled label only (the server sent no label logprobs).",
        "coarse_fast_verdicts",
    ),
    RewardSeries("judge_queue_size", "gauge", "Requests waiting for a judge batch.", "current_queue_size"),
    RewardSeries("judge_inflight", "gauge", "Judge batches in flight.", "inflight"),
    RewardSeries(
        "judge_circuit_breaker_state",
        "gauge",
        "1 for the circuit breaker's current state, 0 for the others.",
        "circuit_breaker",
        label="state",
        read=lambda breaker: {state: int(breaker["state"] == state) for state in BREAKER_STATES},
    ),
    RewardSeries(
        "judge_circuit_breaker_failures",
        "gauge",
        "Consecutive failed judge calls.",
        "circuit_breaker",
        read=lambda breaker: breaker["failures"],
    ),
    RewardSeries(
        "judge_cascade_decisions",
        "counter",
        "strategy cascade: rewards decided by rule (rule) or sent on to the judge (judge).",
        "cascade",
        label="decided_by",
        read=lambda c: {"rule": c["decided_by_rule"], "judge": c["sent_to_judge"]},
    ),
    # judge_replicas: one series per replica (label: its URL).
    RewardSeries(
        "judge_replica_items",
        "counter",
        "Items sent to each judge replica.",
        "replicas",
        label="replica",
        read=_per_replica(lambda r: r["items"]),
    ),
    RewardSeries(
        "judge_replica_errors",
        "counter",
        "Items a judge replica failed with a server fault (each then tried on another replica).",
        "replicas",
        label="replica",
        read=_per_replica(lambda r: r["errors"]),
    ),
    RewardSeries(
        "judge_replica_inflight",
        "gauge",
        "Items assigned to each judge replica and not answered yet.",
        "replicas",
        label="replica",
        read=_per_replica(lambda r: r["inflight"]),
    ),
    RewardSeries(
        "judge_replica_latency_p50_ms",
        "gauge",
        "Median latency of a judge replica's calls over the recent window, in ms.",
        "replicas",
        label="replica",
        read=_per_replica(lambda r: r["latency_ms"]["p50"]),
    ),
    RewardSeries(
        "judge_replica_breaker_open",
        "gauge",
        "1 while a judge replica's circuit breaker is open (its items go to the others).",
        "replicas",
        label="replica",
        read=lambda replicas: {
            url: int(r["circuit_breaker"]["state"] == "open") for url, r in replicas.items()
        },
    ),
    RewardSeries("judge_replica_failovers", "counter", "Items moved to another judge replica.", "failovers"),
)


def _family(series: RewardSeries) -> CounterMetricFamily | GaugeMetricFamily:
    kind = CounterMetricFamily if series.kind == "counter" else GaugeMetricFamily
    return kind(series.name, series.documentation, labels=[series.label] if series.label else None)


def _filled(series: RewardSeries, value: Any) -> Metric:
    family = _family(series)
    if series.label is None:
        family.add_metric([], float(value))
    else:
        for label_value, number in sorted(value.items()):
            family.add_metric([str(label_value)], float(number))
    return family


class RewardCollector(Collector):
    """Builds the ``series`` families from ``get_metrics()`` on every scrape."""

    def __init__(
        self, get_metrics: Callable[[], Mapping[str, Any]], series: Sequence[RewardSeries] = REWARD_SERIES
    ) -> None:
        self._get_metrics = get_metrics
        self.series = tuple(series)

    def describe(self) -> Iterator[Metric]:
        """The families without samples, so a registry refuses a second collector of the same names."""
        return (_family(series) for series in self.series)

    def collect(self) -> Iterator[Metric]:
        """One family per series whose key the snapshot holds in the expected shape."""
        metrics = self._get_metrics()
        for series in self.series:
            if series.key not in metrics:
                logger.debug("metric %s skipped: get_metrics() has no %r", series.name, series.key)
                continue
            try:
                family = _filled(series, series.read(metrics[series.key]))
            except (LookupError, TypeError, ValueError, AttributeError) as err:
                logger.debug(
                    "metric %s skipped: %r has an unexpected shape (%r)", series.name, series.key, err
                )
                continue
            yield family
