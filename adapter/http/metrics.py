"""Prometheus exposition of the reward system's ``get_metrics()`` and the HTTP layer's own series."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["LATENCY_BUCKETS_S", "ApiStats", "Histogram", "render_prometheus"]

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: Mapping[str, str], value: float) -> str:
    inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
    shown = repr(float(value)) if isinstance(value, float) else str(value)
    return f"{name}{{{inner}}} {shown}" if inner else f"{name} {shown}"


def _family(name: str, kind: str, help_text: str, samples: Iterable[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]


class Histogram:
    """A labelled Prometheus histogram with fixed buckets (event-loop confined, no lock)."""

    def __init__(self, buckets: Sequence[float] = LATENCY_BUCKETS_S) -> None:
        self.buckets = tuple(sorted(buckets))
        self._counts: dict[tuple[tuple[str, str], ...], list[int]] = {}
        self._sums: dict[tuple[tuple[str, str], ...], float] = {}

    def observe(self, value: float, **labels: str) -> None:
        """Record one value."""
        key = tuple(sorted(labels.items()))
        counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
        for i, upper in enumerate(self.buckets):
            if value <= upper:
                counts[i] += 1
        counts[-1] += 1
        self._sums[key] = self._sums.get(key, 0.0) + value

    def samples(self, name: str) -> list[str]:
        """Exposition lines: cumulative ``_bucket``s, ``_sum`` and ``_count`` per label set."""
        lines = []
        for key, counts in sorted(self._counts.items()):
            labels = dict(key)
            for upper, count in zip((*map(repr, self.buckets), "+Inf"), counts, strict=True):
                lines.append(_sample(f"{name}_bucket", {**labels, "le": upper}, count))
            lines.append(_sample(f"{name}_sum", labels, self._sums[key]))
            lines.append(_sample(f"{name}_count", labels, counts[-1]))
        return lines


class ApiStats:
    """What the HTTP layer saw: requests by endpoint and status, request and reward latency."""

    def __init__(self, endpoints: Iterable[str]) -> None:
        self.endpoints = frozenset(endpoints)
        self.requests: Counter[tuple[str, str]] = Counter()
        self.request_seconds = Histogram()
        self.reward_seconds = Histogram()

    def endpoint(self, path: str) -> str:
        """The label for a path (unknown paths share one, so label cardinality stays bounded)."""
        return path if path in self.endpoints else "other"

    def record_request(self, path: str, status: int, seconds: float) -> None:
        """One HTTP request answered."""
        endpoint = self.endpoint(path)
        self.requests[(endpoint, str(status))] += 1
        self.request_seconds.observe(seconds, endpoint=endpoint)

    def record_results(self, results: Iterable[Mapping[str, Any]]) -> None:
        """Rewards returned, for the per-source latency histogram."""
        for r in results:
            self.reward_seconds.observe(r["latency_ms"] / 1000, source=r["source"])

    def exposition(self) -> list[str]:
        """The HTTP layer's metric families."""
        requests = (
            _sample("judge_api_requests_total", {"endpoint": e, "status": s}, n)
            for (e, s), n in sorted(self.requests.items())
        )
        return [
            *_family(
                "judge_api_requests_total", "counter", "HTTP requests by endpoint and status.", requests
            ),
            *_family(
                "judge_api_request_duration_seconds",
                "histogram",
                "HTTP request duration by endpoint.",
                self.request_seconds.samples("judge_api_request_duration_seconds"),
            ),
            *_family(
                "judge_reward_latency_seconds",
                "histogram",
                "Latency of each returned reward by source.",
                self.reward_seconds.samples("judge_reward_latency_seconds"),
            ),
        ]


def _labelled(name: str, label: str, counts: Mapping[str, int]) -> list[str]:
    return [_sample(name, {label: k}, v) for k, v in sorted(counts.items())]


def render_prometheus(metrics: Mapping[str, Any], stats: ApiStats) -> str:
    """Prometheus text format (0.0.4) from ``get_metrics()`` and the HTTP layer's stats."""
    sources: Mapping[str, int] = metrics["sources"]
    breaker = metrics["circuit_breaker"]
    states = ("closed", "open", "half_open")
    lines = [
        *stats.exposition(),
        *_family(
            "judge_rewards_total",
            "counter",
            "Rewards returned by source (judge, cache, rule, rule_fallback, error).",
            _labelled("judge_rewards_total", "source", sources),
        ),
        *_family(
            "judge_cache_hits_total",
            "counter",
            "Rewards answered from the verdict cache.",
            [_sample("judge_cache_hits_total", {}, sources.get("cache", 0))],
        ),
        *_family(
            "judge_fallbacks_total",
            "counter",
            "Rewards the judge did not give (rule fallback, or error when fallback is off) by reason.",
            _labelled("judge_fallbacks_total", "reason", metrics["fallback_reasons"]),
        ),
        *_family(
            "judge_prechecks_total",
            "counter",
            "Rewards decided by a pre-check by reason.",
            _labelled("judge_prechecks_total", "reason", metrics["precheck_reasons"]),
        ),
        *_family(
            "judge_errors_total",
            "counter",
            "Failed judge attempts by error kind (before any fallback).",
            _labelled("judge_errors_total", "kind", metrics["errors"]),
        ),
        *_family(
            "judge_calls_total",
            "counter",
            "HTTP calls to the judge server.",
            [_sample("judge_calls_total", {}, metrics["judge_calls"])],
        ),
        *_family(
            "judge_items_total",
            "counter",
            "Items sent to the judge server.",
            [_sample("judge_items_total", {}, metrics["judged_items"])],
        ),
        *_family(
            "judge_context_cuts_total",
            "counter",
            "Completions cut by tokens to fit the judge's context window.",
            [_sample("judge_context_cuts_total", {}, metrics["context_cuts"])],
        ),
        *_family(
            "judge_queue_size",
            "gauge",
            "Requests waiting for a judge batch.",
            [_sample("judge_queue_size", {}, metrics["current_queue_size"])],
        ),
        *_family(
            "judge_inflight",
            "gauge",
            "Judge batches in flight.",
            [_sample("judge_inflight", {}, metrics["inflight"])],
        ),
        *_family(
            "judge_circuit_breaker_state",
            "gauge",
            "1 for the circuit breaker's current state, 0 for the others.",
            [
                _sample("judge_circuit_breaker_state", {"state": s}, int(breaker["state"] == s))
                for s in states
            ],
        ),
        *_family(
            "judge_circuit_breaker_failures",
            "gauge",
            "Consecutive failed judge calls.",
            [_sample("judge_circuit_breaker_failures", {}, breaker["failures"])],
        ),
    ]
    return "\n".join(lines) + "\n"
