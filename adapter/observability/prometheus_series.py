"""Prometheus series from a reward system's ``get_metrics()``, read at scrape time.

It needs only a ``get_metrics()``-shaped dict and prometheus_client (no web framework), so any
server can expose the same series, the HTTP API's ``/metrics`` or the trainer-side endpoint
(``adapter.observability.metrics_endpoint``):

    registry = CollectorRegistry()  # one per server, never prometheus_client's global REGISTRY
    registry.register(RewardCollector(reward_system.get_metrics))
    text = generate_latest(registry)

``REWARD_SERIES`` is the one table of series: a new ``get_metrics()`` key is one more row. A
key absent from the snapshot (or of an unexpected shape) drops its family from that scrape
instead of failing it. ``LabelledRewardCollector`` serves several reward systems from one
registry, each system's samples under a label of its own (``reward="..."``).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from adapter.observability.answer_form import ANSWER_FORMS
from adapter.observability.integrity import INTEGRITY_FIGURES
from adapter.observability.shadow_audit import AUDIT_OUTCOMES

__all__ = [
    "BREAKER_STATES",
    "REWARD_SERIES",
    "LabelledRewardCollector",
    "RewardCollector",
    "RewardSeries",
]

logger = logging.getLogger(__name__)

BREAKER_STATES = ("closed", "open", "half_open")
SHADOW_STAGES = ("sampled", "sent", "over_budget", "failed", "judged")


def _as_is(value: object) -> object:
    return value


def _per_replica(read: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """Read one number from each replica's snapshot, keyed by the replica's URL."""
    return lambda replicas: {url: read(snapshot) for url, snapshot in replicas.items()}


def _by_outcome(tallies: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], Any]:
    """A shadow audit's ``by_form`` or ``by_answer_type`` as ``{(name, outcome): rows}``."""
    return {
        (name, outcome): counts[outcome] for name, counts in tallies.items() for outcome in AUDIT_OUTCOMES
    }


def _integrity(read: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """One number per integrity figure, keyed by its name (a value not known yet is NaN)."""

    def numbers(figures: Mapping[str, Any]) -> dict[str, Any]:
        values = {name: read(figures[name]) for name in INTEGRITY_FIGURES}
        return {name: math.nan if value is None else value for name, value in values.items()}

    return numbers


def _reward_histograms(distribution: Mapping[str, Any]) -> dict[tuple[str, str], Any]:
    """``reward_distribution`` as ``{(source, answer_type): (le buckets with +Inf, sum)}``."""
    return {
        (source, answer_type): ([*c["buckets"].items(), ("+Inf", c["count"])], c["sum"])
        for source, by_type in distribution["sources"].items()
        for answer_type, c in by_type.items()
    }


@dataclass(frozen=True)
class RewardSeries:
    """One metric family read from one ``get_metrics()`` key.

    ``read`` turns the key's value into a number, or into ``{label value: number}`` when
    ``label`` is set (``{(label values): number}`` for a tuple of labels). A histogram's
    numbers are ``(cumulative (le, count) buckets ending with +Inf, sum)``. Counter names go
    without ``_total``: prometheus_client appends it.
    """

    name: str
    kind: Literal["counter", "gauge", "histogram"]
    documentation: str
    key: str
    label: str | tuple[str, ...] | None = None
    read: Callable[[Any], Any] = _as_is

    @property
    def labels(self) -> tuple[str, ...]:
        """The label names, in order."""
        return (self.label,) if isinstance(self.label, str) else self.label or ()


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
        "judge_fallback_window_share",
        "gauge",
        "Share of the last fallback_alert_window rewards that asked the judge and did not get its reward.",
        "fallback_window",
        read=lambda window: window["share"],
    ),
    RewardSeries(
        "judge_fallback_alerts",
        "counter",
        "Warnings that the fallback share passed fallback_alert_share (at most one a minute).",
        "fallback_window",
        read=lambda window: window["alerts"],
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
    RewardSeries(
        "judge_judgment_log_lines",
        "counter",
        "Sampled rewards for the judgment log: written (logged), dropped on a full queue, or lost to write errors.",
        "judgment_log",
        label="outcome",
        read=lambda log: {outcome: log[outcome] for outcome in ("logged", "dropped", "errors")},
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
    # What the rewards were (adapter/observability/reward_distribution.py).
    RewardSeries(
        "judge_reward_value",
        "histogram",
        "Reward values by source and answer_type (a reward without a value, source error, is not in it).",
        "reward_distribution",
        label=("source", "answer_type"),
        read=_reward_histograms,
    ),
    RewardSeries(
        "judge_reward_near_zero_fraction",
        "gauge",
        "Fraction of all rewards with a value that are <= 0.05.",
        "reward_distribution",
        read=lambda d: d["near_zero_fraction"],
    ),
    RewardSeries(
        "judge_reward_near_one_fraction",
        "gauge",
        "Fraction of all rewards with a value that are >= 0.95.",
        "reward_distribution",
        read=lambda d: d["near_one_fraction"],
    ),
    # The shadow audit of the rule's decisions (adapter/observability/shadow_audit.py).
    RewardSeries(
        "judge_shadow_audit_rows",
        "counter",
        "Shadow audit: rule-decided rows sampled, sent to the judge, dropped over the budget, failed (no verdict), judged.",
        "shadow_audit",
        label="stage",
        read=lambda audit: {stage: audit[stage] for stage in SHADOW_STAGES},
    ),
    RewardSeries(
        "judge_shadow_audit_judged",
        "counter",
        "Shadow-audited rows by grammar form and outcome (agree_paid, agree_refused, rule_paid_judge_rejected, rule_rejected_judge_paid).",
        "shadow_audit",
        label=("form", "outcome"),
        read=lambda audit: _by_outcome(audit["by_form"]),
    ),
    RewardSeries(
        "judge_shadow_audit_judged_by_answer_type",
        "counter",
        "Shadow-audited rows by answer_type and outcome.",
        "shadow_audit",
        label=("answer_type", "outcome"),
        read=lambda audit: _by_outcome(audit["by_answer_type"]),
    ),
    RewardSeries(
        "judge_shadow_audit_flagged",
        "gauge",
        "1 for a grammar form whose rule-paid rows the judge rejected past audit.disagreement_rate (it warned).",
        "shadow_audit",
        label="form",
        read=lambda audit: {form: int(form in audit["flagged_forms"]) for form in ANSWER_FORMS},
    ),
    # The judge's integrity figures (adapter/observability/integrity.py).
    RewardSeries(
        "judge_integrity",
        "gauge",
        "The judge's rolling integrity figures (canary_false_positive_rate, position_agreement, fallback_rate, score_drift); NaN until known.",
        "integrity",
        label="figure",
        read=_integrity(lambda figure: figure["value"]),
    ),
    RewardSeries(
        "judge_integrity_threshold",
        "gauge",
        "The threshold each integrity figure warns past (below it for position_agreement, above for the others).",
        "integrity",
        label="figure",
        read=_integrity(lambda figure: figure["threshold"]),
    ),
    RewardSeries(
        "judge_integrity_warned",
        "gauge",
        "1 once an integrity figure has passed its threshold (it warned, once).",
        "integrity",
        label="figure",
        read=_integrity(lambda figure: int(figure["warned"])),
    ),
    RewardSeries(
        "judge_canary_false_positive_rate",
        "gauge",
        "Fraction of canary probes (master-key completions) the judge rewarded >= 0.5.",
        "canary",
        read=lambda c: c["false_positive_rate"],
    ),
)


_KINDS = {"counter": CounterMetricFamily, "gauge": GaugeMetricFamily, "histogram": HistogramMetricFamily}


def _family(series: RewardSeries, instance_label: str | None = None) -> Metric:
    labels = [instance_label, *series.labels] if instance_label else list(series.labels)
    family: Metric = _KINDS[series.kind](series.name, series.documentation, labels=labels or None)
    return family


def _samples(series: RewardSeries, value: Any) -> list[tuple[list[str], Any]]:
    """(label values, number) pairs; raises on a value of an unexpected shape."""
    if not series.labels:
        return [([], _number(series, value))]
    samples = []
    for key, number in sorted(value.items()):
        names = list(key) if isinstance(key, tuple) else [key]
        if len(names) != len(series.labels):
            raise ValueError(f"{len(names)} label values for {len(series.labels)} labels")
        samples.append(([str(name) for name in names], _number(series, number)))
    return samples


def _number(series: RewardSeries, value: Any) -> Any:
    if series.kind != "histogram":
        return float(value)
    buckets, total = value
    return [(str(le), float(n)) for le, n in buckets], float(total)


def _add(family: Metric, series: RewardSeries, labels: list[str], number: Any) -> None:
    if isinstance(family, HistogramMetricFamily):
        family.add_metric(labels, buckets=number[0], sum_value=number[1])
    else:
        family.add_metric(labels, number)  # type: ignore[attr-defined]


def _families(
    snapshots: Mapping[str, Mapping[str, object]], instance_label: str | None, series: Sequence[RewardSeries]
) -> Iterator[Metric]:
    """One family per series that some snapshot holds in the expected shape; each snapshot's
    samples under its own ``instance_label`` value (no label when ``instance_label`` is None)."""
    for one in series:
        family, filled = _family(one, instance_label), False
        for instance, metrics in snapshots.items():
            if one.key not in metrics:
                logger.debug("metric %s skipped: get_metrics() has no %r", one.name, one.key)
                continue
            try:
                samples = _samples(one, one.read(metrics[one.key]))
            except (LookupError, TypeError, ValueError, AttributeError) as err:
                logger.debug("metric %s skipped: %r has an unexpected shape (%r)", one.name, one.key, err)
                continue
            prefix = [instance] if instance_label else []
            for labels, number in samples:
                _add(family, one, prefix + labels, number)
            filled = True
        if filled:
            yield family


class RewardCollector(Collector):
    """Builds the ``series`` families from ``get_metrics()`` on every scrape."""

    def __init__(
        self, get_metrics: Callable[[], Mapping[str, object]], series: Sequence[RewardSeries] = REWARD_SERIES
    ) -> None:
        self._get_metrics = get_metrics
        self.series = tuple(series)

    def describe(self) -> Iterator[Metric]:
        """The families without samples, so a registry refuses a second collector of the same names."""
        return (_family(series) for series in self.series)

    def collect(self) -> Iterator[Metric]:
        """One family per series whose key the snapshot holds in the expected shape."""
        return _families({"": self._get_metrics()}, None, self.series)


class LabelledRewardCollector(Collector):
    """The ``series`` of several reward systems in one registry: each family once, each
    system's samples with ``label`` set to the name it was added under."""

    def __init__(self, label: str = "reward", series: Sequence[RewardSeries] = REWARD_SERIES) -> None:
        self.label = label
        self.series = tuple(series)
        self._lock = threading.Lock()
        self._sources: dict[str, Callable[[], Mapping[str, object]]] = {}

    def add(self, name: str, get_metrics: Callable[[], Mapping[str, object]]) -> None:
        """Serve a system's ``get_metrics()`` under ``name`` (a name in use is an error)."""
        with self._lock:
            if name in self._sources:
                raise ValueError(f"a reward system named {name!r} is served already")
            self._sources[name] = get_metrics

    def remove(self, name: str) -> None:
        """Stop serving the system added under ``name`` (no-op when absent)."""
        with self._lock:
            self._sources.pop(name, None)

    def names(self) -> list[str]:
        """The names served, in the order added."""
        with self._lock:
            return list(self._sources)

    def describe(self) -> Iterator[Metric]:
        """The families without samples, so a registry refuses a second collector of the same names."""
        return (_family(series, self.label) for series in self.series)

    def collect(self) -> Iterator[Metric]:
        """Every served system's snapshot, read once per scrape."""
        with self._lock:
            sources = dict(self._sources)
        return _families({name: read() for name, read in sources.items()}, self.label, self.series)
