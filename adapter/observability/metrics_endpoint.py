"""The in-process Prometheus endpoint: ``metrics_port`` in the reward config.

TRL and verl run the judge reward inside the trainer process. With ``metrics_port`` set, the
reward system serves the series of ``judge-vllm api``'s ``/metrics`` (``adapter.observability.prometheus_series``)
from prometheus_client's small HTTP server on a daemon thread, at ``/metrics`` (the server
answers any path with the same text).

One endpoint per host and port in a process, shared: every reward system configured with that
port adds its ``get_metrics`` to the endpoint's one ``LabelledRewardCollector`` under its
``metrics_name`` (``reward="judge"``; a name in use gets ``-2``, ``-3``, ...), so a train and
a validation reward system in one trainer share one registry without duplicate series. The
endpoint starts with its first system and stops when the last one closes. ``metrics_port: 0``
binds a free port of its own, read back from ``reward_system.metrics_endpoint.url``.

A port that cannot be bound (another process, another rank on the host) is a warning, never an
error: metrics must not stop a training run. Give each process its own port, e.g.
``metrics_port: ${JUDGE_METRICS_PORT}``. A forked child serves nothing of its parent's (the
server thread stays in the parent); a reward system the child builds starts its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server

from adapter.config import RewardConfig
from adapter.fork_safety import reset_after_fork
from adapter.observability.prometheus_series import LabelledRewardCollector

__all__ = ["INSTANCE_LABEL", "MetricsEndpoint", "serve_metrics"]

logger = logging.getLogger("JudgeReward")

INSTANCE_LABEL = "reward"
STOP_TIMEOUT_S = 5.0


@dataclass
class _Endpoint:
    """One HTTP server and the reward systems it serves."""

    host: str
    port: int
    server: WSGIServer
    thread: threading.Thread
    collector: LabelledRewardCollector = field(
        default_factory=lambda: LabelledRewardCollector(INSTANCE_LABEL)
    )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(STOP_TIMEOUT_S)


class MetricsEndpoint:
    """One reward system's place on a (shared) endpoint; ``close()`` leaves it. Idempotent."""

    def __init__(self, endpoint: _Endpoint, name: str) -> None:
        self._endpoint = endpoint
        self.name = name
        self._closed = False

    @property
    def url(self) -> str:
        """Where Prometheus scrapes, e.g. ``http://127.0.0.1:9400/metrics``."""
        host = f"[{self._endpoint.host}]" if ":" in self._endpoint.host else self._endpoint.host
        return f"http://{host}:{self._endpoint.port}/metrics"

    def close(self) -> None:
        """Stop serving this system; the endpoint stops with the last system on it."""
        if not self._closed:
            self._closed = True
            _ENDPOINTS.leave(self._endpoint, self.name)


class _Endpoints:
    """The process's endpoints by (host, port), refcounted by the systems on each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_address: dict[tuple[str, int], _Endpoint] = {}
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        for endpoint in self._by_address.values():
            endpoint.server.socket.close()  # the child's copy; the parent keeps serving
        self._by_address = {}

    def join(
        self, host: str, port: int, name: str, get_metrics: Callable[[], Mapping[str, object]]
    ) -> MetricsEndpoint:
        """Serve ``get_metrics`` on host:port (started if needed; port 0: a new free port).
        Raises ``OSError`` when the port cannot be bound."""
        with self._lock:
            endpoint = self._by_address.get((host, port)) if port else None
            if endpoint is None:
                endpoint = self._start(host, port)
            taken = endpoint.collector.names()
            unique = next(
                n for n in (name, *(f"{name}-{i}" for i in range(2, len(taken) + 3))) if n not in taken
            )
            endpoint.collector.add(unique, get_metrics)
        logger.info(
            "serving judge reward metrics at http://%s:%d/metrics (reward=%r)", host, endpoint.port, unique
        )
        return MetricsEndpoint(endpoint, unique)

    def leave(self, endpoint: _Endpoint, name: str) -> None:
        """Stop serving ``name``; stop the endpoint when nothing is left on it."""
        with self._lock:
            endpoint.collector.remove(name)
            if (
                endpoint.collector.names()
                or self._by_address.get((endpoint.host, endpoint.port)) is not endpoint
            ):
                return  # others still served, or a parent's endpoint seen from a forked child
            del self._by_address[(endpoint.host, endpoint.port)]
            endpoint.stop()

    def _start(self, host: str, port: int) -> _Endpoint:
        registry = CollectorRegistry()
        server, thread = start_http_server(port, addr=host, registry=registry)
        endpoint = _Endpoint(host, server.server_port, server, thread)
        registry.register(endpoint.collector)
        self._by_address[(host, endpoint.port)] = endpoint
        return endpoint


_ENDPOINTS = _Endpoints()


def serve_metrics(
    config: RewardConfig, get_metrics: Callable[[], Mapping[str, object]]
) -> MetricsEndpoint | None:
    """The endpoint ``config.metrics_port`` asks for, serving ``get_metrics``; None when it is
    off, or when the port cannot be bound (a warning says why)."""
    if config.metrics_port is None:
        return None
    try:
        return _ENDPOINTS.join(config.metrics_host, config.metrics_port, config.metrics_name, get_metrics)
    except OSError as err:
        logger.warning(
            "judge reward metrics not served: cannot listen on %s:%d (%s); rewards are unaffected. "
            "Give each process its own metrics_port, or 0 for any free port",
            config.metrics_host,
            config.metrics_port,
            err,
        )
        return None
