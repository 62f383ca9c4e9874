"""/metrics: the reward system's counters and the HTTP layer's, in Prometheus text format."""

from __future__ import annotations

import httpx

from adapter.http.metrics import ApiStats, Histogram, render_prometheus


def test_histogram_is_cumulative_with_sum_and_count():
    hist = Histogram((0.1, 1.0))
    for value in (0.05, 0.5, 5.0):
        hist.observe(value, source="judge")
    assert hist.samples("x") == [
        'x_bucket{source="judge",le="0.1"} 1',
        'x_bucket{source="judge",le="1.0"} 2',
        'x_bucket{source="judge",le="+Inf"} 3',
        'x_sum{source="judge"} 5.55',
        'x_count{source="judge"} 3',
    ]


def test_render_prometheus_from_a_metrics_snapshot():
    stats = ApiStats({"/judge"})
    stats.record_request("/judge", 200, 0.02)
    stats.record_request("/nope", 404, 0.001)
    stats.record_results([{"latency_ms": 30.0, "source": "cache"}])
    metrics = {
        "sources": {"judge": 3, "cache": 2, "rule_fallback": 1},
        "fallback_reasons": {'Circuit "breaker" open': 1},
        "precheck_reasons": {"master_key": 4},
        "errors": {"JudgeUnavailableError": 2},
        "judge_calls": 2,
        "context_cuts": 3,
        "judged_items": 5,
        "current_queue_size": 0,
        "inflight": 1,
        "circuit_breaker": {"state": "open", "failures": 5},
    }
    lines = render_prometheus(metrics, stats).splitlines()
    for expected in (
        'judge_api_requests_total{endpoint="/judge",status="200"} 1',
        'judge_api_requests_total{endpoint="other",status="404"} 1',
        'judge_reward_latency_seconds_count{source="cache"} 1',
        'judge_rewards_total{source="rule_fallback"} 1',
        "judge_cache_hits_total 2",
        'judge_fallbacks_total{reason="Circuit \\"breaker\\" open"} 1',
        'judge_prechecks_total{reason="master_key"} 4',
        "judge_calls_total 2",
        "judge_context_cuts_total 3",
        "judge_inflight 1",
        'judge_circuit_breaker_state{state="open"} 1',
        'judge_circuit_breaker_state{state="closed"} 0',
        "judge_circuit_breaker_failures 5",
        "# TYPE judge_api_request_duration_seconds histogram",
    ):
        assert expected in lines
    names = {line.split("{")[0].split(" ")[0] for line in lines if not line.startswith("#")}
    typed = {line.split(" ")[2] for line in lines if line.startswith("# TYPE")}
    assert {n.removesuffix("_bucket").removesuffix("_sum").removesuffix("_count") for n in names} <= typed


def test_metrics_count_requests_cache_hits_and_breaker_state(api):
    item = {"prompt": "What is 2+2?", "completion": "It is 4.", "answer": "4"}
    for _ in range(2):
        httpx.post(f"{api.url}/judge", json=item)
    reply = httpx.get(f"{api.url}/metrics")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = reply.text.splitlines()
    for expected in (
        'judge_api_requests_total{endpoint="/judge",status="200"} 2',
        'judge_rewards_total{source="judge"} 1',
        "judge_cache_hits_total 1",
        'judge_circuit_breaker_state{state="closed"} 1',
        'judge_reward_latency_seconds_count{source="cache"} 1',
        'judge_api_request_duration_seconds_count{endpoint="/judge"} 2',
    ):
        assert expected in lines
