"""The judge server API and the OpenRLHF reward model against the real vLLM CPU judge (SmolLM2):
the contracts, not the quality."""

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


RUBRIC = ["Recommends drinking fluids", {"criterion": "Suggests seeing a doctor if it persists", "weight": 2}]
FEVER = "I have had a fever for two days. What should I do?"
GROUP = [
    "The capital of France is Paris.",
    "Paris is the capital city of France.",
    "The capital of France is Lyon.",
    "France's capital is Marseille, I believe.",
]


def test_judge_group_and_rubric_items_through_the_real_judge(judge_url, tmp_path):
    # a long group deadline: 12 comparisons on a busy CPU judge
    config = {**_config(judge_url, tmp_path), "reward_timeout": 120, "group": {"mode": "pairwise", "deadline": 300}}
    app = create_app(config, api_key=KEY)
    headers = {"Authorization": f"Bearer {KEY}"}
    members = [
        {"prompt": "What is the capital of France?", "completion": c, "answer": "Paris"} for c in GROUP
    ]
    rubric_item = {"prompt": FEVER, "completion": "Drink plenty of fluids and rest.", "rubric": RUBRIC}
    rubric_group = [rubric_item, {**rubric_item, "completion": "See a doctor if it persists."}]
    with (
        ApiServer(app) as server,
        httpx.Client(base_url=server.url, timeout=TIMEOUT_S, headers=headers) as http,
    ):
        group = http.post("/judge_group", json={"items": members})
        single = http.post("/judge", json=rubric_item)
        rubrics = http.post("/judge_group", json={"items": rubric_group})
    assert group.status_code == 200, group.text
    results = group.json()["results"]
    assert len(results) == 4
    for result in results:
        assert result["source"] == "judge" and result["metadata"]["reason"] == "pairwise", result
        assert 0.0 <= result["score"] <= 1.0
        assert len(result["comparisons"]) == 6  # all pairs in both orders: 3 opponents x 2
        assert all(c["source"] == "judge" and 0.0 <= c["p_first"] <= 1.0 for c in result["comparisons"])
    assert single.status_code == 200 and rubrics.status_code == 200, (single.text, rubrics.text)
    for result in (single.json(), *rubrics.json()["results"]):
        assert result["source"] == "judge", result
        assert 0.0 <= result["score"] <= 1.0
        assert set(result["detailed_scores"]) == {
            "Recommends drinking fluids",
            "Suggests seeing a doctor if it persists",
        }


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
