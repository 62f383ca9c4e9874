"""/metrics: the HTTP layer's series and the reward system's, from a per-app registry."""

from __future__ import annotations

import httpx
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from adapter.http import create_app
from adapter.http.metrics import ApiMetrics
from judge_vllm.testing.asgi_server import ApiServer


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_requests_are_labelled_by_known_endpoint_else_other():
    metrics = ApiMetrics({"/judge"})
    metrics.record_request("/judge", 200, 0.02)
    metrics.record_request("/nope", 404, 0.001)
    metrics.record_results([{"latency_ms": 30.0, "source": "cache"}])
    samples = _samples(metrics.exposition().decode())
    assert samples[("judge_api_requests_total", (("endpoint", "/judge"), ("status", "200")))] == 1
    assert samples[("judge_api_requests_total", (("endpoint", "other"), ("status", "404")))] == 1
    assert (
        samples[("judge_api_request_duration_seconds_bucket", (("endpoint", "/judge"), ("le", "0.025")))] == 1
    )
    assert (
        samples[("judge_api_request_duration_seconds_bucket", (("endpoint", "/judge"), ("le", "0.01")))] == 0
    )
    assert samples[("judge_reward_latency_seconds_count", (("source", "cache"),))] == 1
    assert samples[("judge_reward_latency_seconds_sum", (("source", "cache"),))] == 0.03


def test_the_reward_series_are_exposed_only_while_registered():
    metrics = ApiMetrics(())
    with metrics.rewards_of(lambda: {"judge_calls": 4}):
        assert "judge_calls_total 4.0" in metrics.exposition().decode().splitlines()
    assert "judge_calls" not in metrics.exposition().decode()


def test_two_apps_in_one_process_keep_their_own_counts(fake_judge, reward_config):
    item = {"prompt": "What is 2+2?", "completion": "It is 4.", "answer": "4"}
    first = create_app(reward_config(fake_judge.url))
    second = create_app(reward_config(fake_judge.url))
    with ApiServer(first) as a, ApiServer(second) as b:
        httpx.post(f"{a.url}/judge", json=item)
        texts = [httpx.get(f"{server.url}/metrics").text for server in (a, b)]
    counts = [
        _samples(t).get(("judge_api_requests_total", (("endpoint", "/judge"), ("status", "200"))))
        for t in texts
    ]
    assert counts == [1, None]
    assert "judge_api_requests" not in generate_latest().decode()  # never the global registry


def test_metrics_count_requests_cache_hits_and_breaker_state(api):
    item = {"prompt": "What is 2+2?", "completion": "It is 4.", "answer": "4"}
    for _ in range(2):
        httpx.post(f"{api.url}/judge", json=item)
    reply = httpx.get(f"{api.url}/metrics")
    assert reply.status_code == 200 and reply.headers["content-type"] == CONTENT_TYPE_LATEST
    samples = _samples(reply.text)
    for key, value in {
        ("judge_api_requests_total", (("endpoint", "/judge"), ("status", "200"))): 2,
        ("judge_rewards_total", (("source", "judge"),)): 1,
        ("judge_cache_hits_total", ()): 1,
        ("judge_circuit_breaker_state", (("state", "closed"),)): 1,
        ("judge_reward_latency_seconds_count", (("source", "cache"),)): 1,
        ("judge_api_request_duration_seconds_count", (("endpoint", "/judge"),)): 2,
        ("judge_reward_value_count", (("answer_type", "OTHER"), ("source", "judge"))): 1,
        ("judge_reward_value_sum", (("answer_type", "OTHER"), ("source", "cache"))): 1.0,
        ("judge_reward_near_one_fraction", ()): 1.0,
    }.items():
        assert samples[key] == value, key
    documented = {
        "judge_api_requests",
        "judge_api_request_duration_seconds",
        "judge_reward_latency_seconds",
        "judge_rewards",
        "judge_cache_hits",
        "judge_fallbacks",
        "judge_prechecks",
        "judge_errors",
        "judge_calls",
        "judge_items",
        "judge_context_cuts",
        "judge_queue_size",
        "judge_inflight",
        "judge_circuit_breaker_state",
        "judge_circuit_breaker_failures",
        "judge_reward_value",
        "judge_reward_near_zero_fraction",
        "judge_reward_near_one_fraction",
    }
    assert documented <= {family.name for family in text_string_to_metric_families(reply.text)}


def test_the_api_serves_the_reward_series_itself_never_on_a_metrics_port(fake_judge, reward_config):
    app = create_app(reward_config(fake_judge.url, metrics_port=0))
    with ApiServer(app) as server:
        reply = httpx.get(f"{server.url}/metrics")
        endpoint = app.state.service.rewards.metrics_endpoint
    assert "judge_rewards_total" in reply.text and endpoint is None
