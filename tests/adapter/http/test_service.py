"""/health: the upstream judge, the breaker, and whether a reward can come from the rules."""

from __future__ import annotations

import httpx
import pytest

from adapter.http import create_app
from adapter.http.service import health_status
from judge_vllm.testing.asgi_server import ApiServer


@pytest.mark.parametrize(
    ("reachable", "breaker", "fallback", "expected"),
    [
        (True, "closed", False, (200, "ok")),
        (True, "open", True, (200, "degraded")),
        (True, "half_open", False, (200, "degraded")),
        (False, "open", True, (200, "degraded")),
        (False, "closed", False, (503, "unavailable")),
    ],
)
def test_health_status(reachable, breaker, fallback, expected):
    assert health_status(reachable, breaker, fallback) == expected


def test_health_when_the_upstream_is_up(api):
    reply = httpx.get(f"{api.url}/health")
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok" and body["circuit_breaker"]["state"] == "closed"
    assert body["upstream"]["reachable"] is True and body["upstream"]["model"] == "fake-judge"


@pytest.mark.parametrize(
    ("fallback", "status", "label"), [(False, 503, "unavailable"), (True, 200, "degraded")]
)
def test_health_when_the_upstream_is_down(reward_config, closed_port, fallback, status, label):
    # startup_check warn: the API serves although its judge is down from the start.
    config = reward_config(f"http://127.0.0.1:{closed_port}", fallback_to_rule=fallback, startup_check="warn")
    with ApiServer(create_app(config)) as server:
        reply = httpx.get(f"{server.url}/health")
    assert reply.status_code == status
    body = reply.json()
    assert body["status"] == label and body["upstream"]["reachable"] is False
    assert body["fallback_to_rule"] is fallback and body["upstream"]["error"]
