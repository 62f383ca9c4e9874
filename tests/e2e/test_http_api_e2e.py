"""The judge server API and the OpenRLHF reward model against the real vLLM CPU judge (SmolLM2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.http import create_app
from adapter.integrations import openrlhf
from judge_vllm.testing.asgi_server import ApiServer

pytestmark = pytest.mark.e2e

KEY = "e2e-key-31d7"
TIMEOUT_S = 600.0


def _config(url: str, tmp_path: Path) -> dict[str, Any]:
    # fast mode: one token per judgment; fallback off so a judge failure shows as an error
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "mode": "fast", "fallback_to_rule": False}


def test_judge_batch_health_and_metrics_through_the_real_judge(judge_url, tmp_path):
    app = create_app(_config(judge_url, tmp_path), api_key=KEY)
    headers = {"Authorization": f"Bearer {KEY}"}
    items = [
        {
            "prompt": "What is 2+2?",
            "completion": "2+2 = 4. The answer is 4.",
            "answer": "4",
            "answer_type": "NUMBER",
        },
        {"prompt": "What is the capital of France?", "completion": "It is Paris.", "answer": "Paris"},
        {"prompt": "What is 3*5?", "completion": "3*5 = 15.", "answer": "15", "request_id": "third"},
    ]
    with ApiServer(app) as server, httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as http:
        health = http.get("/health")
        single = http.post("/judge", json={**items[0], "request_id": "unique_id"}, headers=headers)
        batch = http.post("/batch_judge", json={"requests": items}, headers=headers)
        metrics = http.get("/metrics", headers=headers).text.splitlines()
    assert health.status_code == 200, health.text
    assert health.json()["upstream"]["model"] == "smollm2" and health.json()["status"] == "ok"
    one = single.json()
    assert single.status_code == 200 and one["request_id"] == "unique_id"
    assert one["source"] == "judge", one
    assert 0.0 <= one["score"] <= 1.0 and one["metadata"]["latency"] > 0
    responses = batch.json()["responses"]
    assert [r["request_id"] for r in responses][2] == "third"
    assert [r["source"] for r in responses] == ["cache", "judge", "judge"], responses
    assert responses[0]["score"] == one["score"]
    assert all(0.0 <= r["score"] <= 1.0 for r in responses)
    assert 'judge_rewards_total{source="judge"} 3.0' in metrics
    assert "judge_cache_hits_total 1.0" in metrics


def test_openrlhf_get_reward_through_the_real_judge(judge_url, tmp_path):
    prompt = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"
    payload = {
        "query": [prompt + "6*7 = 42. The answer is 42.<|im_end|>"],
        "prompts": [prompt],
        "labels": ["42"],
    }
    app = openrlhf.create_app(_config(judge_url, tmp_path), answer_type="NUMBER")
    with ApiServer(app) as server:
        reply = httpx.post(f"{server.url}/get_reward", json=payload, timeout=TIMEOUT_S)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert len(body["rewards"]) == 1 and 0.0 <= body["rewards"][0] <= 1.0
    assert body["extra_logs"]["judge_prechecked"] == [0.0] and body["extra_logs"]["judge_fallback"] == [0.0]
