"""The per-app Prometheus registry: the HTTP layer's own series and the reward system's.

Each app has its own ``CollectorRegistry`` (never prometheus_client's global ``REGISTRY``), so
several apps in one process never clash. The HTTP layer counts requests and times requests and
rewards; the reward system's series come from ``adapter.observability.prometheus_series.RewardCollector`` while the
judge service runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from adapter.observability.prometheus_series import RewardCollector
from adapter.result import RewardDict

__all__ = ["CONTENT_TYPE_LATEST", "LATENCY_BUCKETS_S", "ApiMetrics"]

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ApiMetrics:
    """What one app exposes on ``/metrics``: requests by endpoint and status, request and reward
    latency, and (inside ``rewards_of``) the reward system's counters and gauges."""

    def __init__(self, endpoints: Iterable[str]) -> None:
        self.endpoints = frozenset(endpoints)
        self.registry = CollectorRegistry()
        self._requests = Counter(
            "judge_api_requests",
            "HTTP requests by endpoint and status.",
            ("endpoint", "status"),
            registry=self.registry,
        )
        self._request_seconds = Histogram(
            "judge_api_request_duration_seconds",
            "HTTP request duration by endpoint.",
            ("endpoint",),
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self._reward_seconds = Histogram(
            "judge_reward_latency_seconds",
            "Latency of each returned reward by source.",
            ("source",),
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )

    def endpoint(self, path: str) -> str:
        """The label for a path (unknown paths share one, so label cardinality stays bounded)."""
        return path if path in self.endpoints else "other"

    def record_request(self, path: str, status: int, seconds: float) -> None:
        """One HTTP request answered."""
        endpoint = self.endpoint(path)
        self._requests.labels(endpoint, str(status)).inc()
        self._request_seconds.labels(endpoint).observe(seconds)

    def record_results(self, results: Iterable[RewardDict]) -> None:
        """Rewards returned, for the per-source latency histogram."""
        for r in results:
            self._reward_seconds.labels(r["source"]).observe(r["latency_ms"] / 1000)

    @contextmanager
    def rewards_of(self, get_metrics: Callable[[], Mapping[str, object]]) -> Iterator[None]:
        """Expose a reward system's series (read from ``get_metrics()`` per scrape) within the block."""
        collector = RewardCollector(get_metrics)
        self.registry.register(collector)
        try:
            yield
        finally:
            self.registry.unregister(collector)

    def exposition(self) -> bytes:
        """Everything registered, in the Prometheus text format of ``CONTENT_TYPE_LATEST``."""
        return generate_latest(self.registry)
