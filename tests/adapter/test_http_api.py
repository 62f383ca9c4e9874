"""The judge server API: real HTTP on a loopback port, against the loopback fake judge.

The fake judge scores 5 (reward 1.0) when the reference answer appears in the response, else 1
(reward 0.0), which is enough to check ordering, batching, caching and fallback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from adapter import http_api
from adapter.http_api import (
    ApiStats,
    Histogram,
    api_config,
    bearer_token_ok,
    create_app,
    health_status,
    render_prometheus,
    validation_errors,
)
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.asgi_server import ApiServer

KEY = "test-key-7f3a9c"
SEED_FIELDS = {"score", "request_id", "explanation", "detailed_scores", "source", "metadata"}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _config(url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **overrides}


@pytest.fixture
def api(fake_judge, tmp_path) -> Iterator[ApiServer]:
    """The API without auth, in front of the fake judge."""
    with ApiServer(create_app(_config(fake_judge.url, tmp_path))) as server:
        yield server


@pytest.fixture
def secured(fake_judge, tmp_path) -> Iterator[ApiServer]:
    """The API with a bearer key and small limits."""
    app = create_app(_config(fake_judge.url, tmp_path), api_key=KEY, max_body_bytes=4096, max_batch=4)
    with ApiServer(app) as server:
        yield server


def _item(prompt: str, completion: str, answer: str, **extra: Any) -> dict[str, Any]:
    return {"prompt": prompt, "completion": completion, "answer": answer, **extra}


# -- pure decisions --------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (f"Bearer {KEY}", True),
        (f"bearer {KEY}", True),
        (f"Bearer {KEY}x", False),
        (f"Bearer {KEY[:-1]}", False),
        (f"Basic {KEY}", False),
        (KEY, False),
        ("", False),
        (None, False),
    ],
)
def test_bearer_token_ok(header, ok):
    assert bearer_token_ok(header, SecretStr(KEY)) is ok


@pytest.mark.parametrize(
    ("error", "field"),
    [
        ({"loc": ("body", "completion"), "msg": "Field required", "type": "missing"}, "completion"),
        ({"loc": ("body", "requests", 2, "prompt"), "msg": "x", "type": "string_type"}, "requests[2].prompt"),
        ({"loc": ("body",), "msg": "x", "type": "model_attributes_type"}, "body"),
        ({"loc": ("body", 17), "msg": "JSON decode error", "type": "json_invalid"}, "body"),
        ({"loc": ("query", "limit"), "msg": "x", "type": "int_parsing"}, "query.limit"),
    ],
)
def test_validation_errors_name_the_field_and_never_echo_input(error, field):
    (out,) = validation_errors([{**error, "input": "SECRET-INPUT"}])
    assert out["field"] == field and out["message"] == error["msg"]
    assert "SECRET-INPUT" not in str(out)


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


def test_all_names_what_the_module_defines():
    assert sorted(http_api.__all__) == sorted(set(http_api.__all__))
    assert [name for name in http_api.__all__ if not hasattr(http_api, name)] == []


def test_config_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_MODEL_URL", raising=False)
    path = tmp_path / "reward.yaml"
    path.write_text("reward:\n  type: judge_model\n  config:\n    judge_url: http://a:1\n    mode: fast\n")
    assert api_config(path, None).judge_url == "http://a:1"
    overridden = api_config(path, "http://b:2/")
    assert (overridden.judge_url, overridden.mode) == ("http://b:2", "fast")
    with pytest.raises(JudgeConfigError, match="--judge-url"):
        api_config(path, "b:2")
    with pytest.raises(JudgeConfigError, match="one judge"):
        create_app({"judge_urls": ["http://a:1", "http://b:2"]})
    with pytest.raises(JudgeConfigError, match="max_batch"):
        create_app({}, max_batch=0)


# -- /judge and /batch_judge ---------------------------------------------------------------


def test_judge_answers_with_the_seed_fields(api):
    reply = httpx.post(
        f"{api.url}/judge",
        json=_item("What is 2+2?", "The result is 4.", "4", answer_type="NUMBER", request_id="unique_id"),
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert set(body) == SEED_FIELDS
    assert (body["score"], body["request_id"], body["source"]) == (1.0, "unique_id", "judge")
    assert body["explanation"].startswith("expected score 5.00/5") and body["metadata"]["latency"] > 0


def test_request_id_is_generated_when_absent_and_numbers_are_answers(api):
    replies = [httpx.post(f"{api.url}/judge", json=_item("2+2?", "It is 4.", 4)).json() for _ in range(2)]
    ids = [r["request_id"] for r in replies]
    assert all(len(i) == 32 for i in ids) and ids[0] != ids[1]
    assert [r["score"] for r in replies] == [1.0, 1.0]
    assert [r["source"] for r in replies] == ["judge", "cache"]


def test_batch_responses_keep_request_order_and_use_one_batched_path(api, fake_judge):
    answers = ["11", "12", "13", "14", "15", "16"]
    requests = [
        _item(f"What is {a}?", f"It is {a if i % 2 == 0 else '99'}.", a, request_id=f"id-{i}")
        for i, a in enumerate(answers)
    ]
    reply = httpx.post(f"{api.url}/batch_judge", json={"requests": requests})
    assert reply.status_code == 200, reply.text
    responses = reply.json()["responses"]
    assert [r["request_id"] for r in responses] == [f"id-{i}" for i in range(6)]
    assert [r["score"] for r in responses] == [1.0, 0.0] * 3
    assert all(set(r) == SEED_FIELDS for r in responses)
    assert fake_judge.counts["/v1/chat/completions"] == 0
    assert fake_judge.counts["/v1/chat/completions/batch"] in range(1, 6)


async def test_concurrent_judge_calls_share_judge_batches(fake_judge, tmp_path):
    # a long batch window, so the eight concurrent requests surely meet in the micro-batcher
    app = create_app(_config(fake_judge.url, tmp_path, batch_timeout=0.5))
    with ApiServer(app) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            replies = await asyncio.gather(
                *(http.post("/judge", json=_item(f"What is {n}?", f"It is {n}.", str(n))) for n in range(8))
            )
    assert [r.json()["score"] for r in replies] == [1.0] * 8
    calls = fake_judge.counts["/v1/chat/completions/batch"] + fake_judge.counts["/v1/chat/completions"]
    assert calls in range(1, 8)


def test_empty_batch_is_an_empty_answer(api):
    reply = httpx.post(f"{api.url}/batch_judge", json={"requests": []})
    assert (reply.status_code, reply.json()) == (200, {"responses": []})


# -- auth ---------------------------------------------------------------------------------------


def test_auth_on_requires_the_bearer_key_but_health_stays_open(secured, caplog):
    caplog.set_level(logging.DEBUG)
    item = _item("2+2?", "It is 4.", "4")
    missing = httpx.post(f"{secured.url}/judge", json=item)
    wrong = httpx.post(f"{secured.url}/judge", json=item, headers={"Authorization": f"Bearer {KEY}-no"})
    right = httpx.post(f"{secured.url}/judge", json=item, headers={"Authorization": f"Bearer {KEY}"})
    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert missing.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in missing.json()["detail"]
    assert httpx.get(f"{secured.url}/metrics").status_code == 401
    assert httpx.post(f"{secured.url}/batch_judge", json={"requests": []}).status_code == 401
    assert httpx.get(f"{secured.url}/health").status_code == 200
    assert KEY not in missing.text + wrong.text + caplog.text


def test_auth_is_checked_before_the_body_is_read(secured):
    reply = httpx.post(
        f"{secured.url}/judge", content=b"{broken", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 401


def test_auth_off_needs_no_header(api):
    assert httpx.post(f"{api.url}/judge", json=_item("2+2?", "It is 4.", "4")).status_code == 200
    assert httpx.get(f"{api.url}/metrics").status_code == 200


# -- validation and limits ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "payload", "field", "words"),
    [
        ("/judge", {"prompt": "p"}, "completion", "Field required"),
        ("/judge", {"prompt": "p", "completion": "c", "anwser": "4"}, "anwser", "Extra inputs"),
        ("/judge", {"prompt": ["p"], "completion": "c"}, "prompt", "valid string"),
        ("/judge", {"prompt": "p", "completion": "c", "answer_type": "X" * 65}, "answer_type", "at most 64"),
        (
            "/batch_judge",
            {"requests": [{"prompt": "p", "completion": "c"}, {"prompt": 3}]},
            "requests[1].prompt",
            "",
        ),
        (
            "/batch_judge",
            {"requests": [{"prompt": "p", "completion": "c"}] * 5},
            "requests",
            "at most 4 items",
        ),
        ("/batch_judge", {"request": []}, "requests", "Field required"),
    ],
)
def test_validation_errors_are_422_naming_the_field(secured, path, payload, field, words):
    reply = httpx.post(f"{secured.url}{path}", json=payload, headers={"Authorization": f"Bearer {KEY}"})
    assert reply.status_code == 422
    body = reply.json()
    assert field in [e["field"] for e in body["errors"]]
    assert f"{field}: " in body["detail"] and words in body["detail"]


def test_invalid_json_is_422(secured):
    reply = httpx.post(
        f"{secured.url}/judge",
        content=b'{"prompt": ',
        headers={"Authorization": f"Bearer {KEY}", "content-type": "application/json"},
    )
    assert reply.status_code == 422
    assert reply.json()["errors"][0]["field"] == "body"


def test_oversized_bodies_are_413_declared_or_streamed(secured):
    headers = {"Authorization": f"Bearer {KEY}", "content-type": "application/json"}
    big = _item("p", "x" * 5000, "4")
    declared = httpx.post(f"{secured.url}/judge", json=big, headers=headers)

    def chunks() -> Iterator[bytes]:
        yield b'{"prompt": "p", "completion": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'

    streamed = httpx.post(f"{secured.url}/judge", content=chunks(), headers=headers)
    assert (declared.status_code, streamed.status_code) == (413, 413)
    assert "max_body_bytes" in declared.json()["detail"]
    small = httpx.post(f"{secured.url}/judge", json=_item("p", "It is 4.", "4"), headers=headers)
    assert small.status_code == 200


# -- health, fallback, metrics ----------------------------------------------------------------


def test_health_when_the_upstream_is_up(api):
    reply = httpx.get(f"{api.url}/health")
    assert reply.status_code == 200
    body = reply.json()
    assert body["status"] == "ok" and body["circuit_breaker"]["state"] == "closed"
    assert body["upstream"]["reachable"] is True and body["upstream"]["model"] == "fake-judge"


@pytest.mark.parametrize(
    ("fallback", "status", "label"), [(False, 503, "unavailable"), (True, 200, "degraded")]
)
def test_health_when_the_upstream_is_down(tmp_path, fallback, status, label):
    config = _config(f"http://127.0.0.1:{_closed_port()}", tmp_path, fallback_to_rule=fallback)
    with ApiServer(create_app(config)) as server:
        reply = httpx.get(f"{server.url}/health")
    assert reply.status_code == status
    body = reply.json()
    assert body["status"] == label and body["upstream"]["reachable"] is False
    assert body["fallback_to_rule"] is fallback and body["upstream"]["error"]


def test_upstream_down_gives_an_explicit_error_or_a_rule_fallback(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    item = _item("What is 2+2?", "The answer is 4.", "4", answer_type="NUMBER")
    with ApiServer(create_app(_config(url, tmp_path, fallback_to_rule=False))) as server:
        failed = httpx.post(f"{server.url}/judge", json=item).json()
    with ApiServer(create_app(_config(url, tmp_path, fallback_to_rule=True))) as server:
        fallback = httpx.post(f"{server.url}/judge", json=item).json()
        metrics = httpx.get(f"{server.url}/metrics").text
    assert (failed["score"], failed["source"]) == (None, "error")
    assert failed["metadata"]["reason"] == "Judge unavailable"
    assert (fallback["score"], fallback["source"]) == (1.0, "rule_fallback")
    assert 'judge_fallbacks_total{reason="Judge unavailable"} 1' in metrics.splitlines()


def test_metrics_count_requests_cache_hits_and_breaker_state(api):
    item = _item("What is 2+2?", "It is 4.", "4")
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


# -- the command --------------------------------------------------------------------------------


def test_cli_serves_the_api_with_the_key_from_the_environment(fake_judge, tmp_path):
    port = _closed_port()
    config = tmp_path / "reward.yaml"
    config.write_text(f"judge_url: http://127.0.0.1:1\ncache_dir: {tmp_path / 'cache'}\nmode: fast\n")
    env = {**os.environ, "JUDGE_API_KEY": KEY}
    env.pop("JUDGE_MODEL_URL", None)
    command = [sys.executable, "-m", "judge_vllm.cli", "api", "--judge-url", fake_judge.url]
    command += ["--port", str(port), "--config", str(config)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        health = None
        deadline = time.monotonic() + 60
        while health is None and time.monotonic() < deadline and process.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health")
            except httpx.TransportError:
                time.sleep(0.2)
        assert health is not None and health.status_code == 200, process.poll()
        assert health.json()["upstream"]["url"] == fake_judge.url
        item = _item("2+2?", "It is 4.", "4")
        assert httpx.post(f"http://127.0.0.1:{port}/judge", json=item).status_code == 401
        headers = {"Authorization": f"Bearer {KEY}"}
        assert httpx.post(f"http://127.0.0.1:{port}/judge", json=item, headers=headers).json()["score"] > 0.99
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert KEY not in output
    assert "auth on" in output
