"""OpenRLHF remote reward model: ``/get_reward`` over real HTTP with OpenRLHF's request shape.

OpenRLHF (openrlhf/utils/agent.py, ``SingleTurnAgentExecutor._fetch_rewards_via_http``) posts
``{"query": [...], "prompts": [...], "labels": [...]}``, calls ``raise_for_status()`` and reads
``rewards``, ``scores`` and ``extra_logs``. Queries are ``decode(prompt + response tokens,
skip_special_tokens=False)``, so they carry the chat template and the end-of-turn token.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapter.integrations import openrlhf
from adapter.integrations.openrlhf import create_app, split_query
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.asgi_server import ApiServer

TEMPLATE = "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"


def _config(url: str, tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **overrides}


def _payload(questions: list[str], responses: list[str], labels: list[Any]) -> dict[str, list[Any]]:
    prompts = [TEMPLATE.format(question=q) for q in questions]
    queries = [p + r + "<|im_end|>" for p, r in zip(prompts, responses, strict=True)]
    return {"query": queries, "prompts": prompts, "labels": labels}


@pytest.fixture
def rm(fake_judge, tmp_path) -> Iterator[str]:
    """The reward model's /get_reward URL, in front of the fake judge."""
    app = create_app(_config(fake_judge.url, tmp_path), max_batch=8)
    with ApiServer(app) as server:
        yield f"{server.url}/get_reward"


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        ("PROMPT: 2+2?\nANSWER: It is 4.", "PROMPT: 2+2?\nANSWER:", "It is 4."),
        (TEMPLATE.format(question="2+2?") + "4<|im_end|>", TEMPLATE.format(question="2+2?"), "4"),
        ("Q?\nA: 5<|eot_id|>", "Q?\nA:", "5"),
        ("Q?\nA: 5</s></s>", "Q?\nA:", "5"),
        ("Q?\nA: 5<end_of_turn>\n", "Q?\nA:", "5"),
        # prompt cut from the left by OpenRLHF (prompt_token_ids[-max_prompt_length:])
        ("the end of a long prompt. A: 7", "A very long start, then the end of a long prompt.", "A: 7"),
        # decode differs at the prompt's end (a merged space)
        ("Question: 2+2?\nAnswer:It is 4.", "Question: 2+2?\nAnswer: ", "It is 4."),
        ("no relation at all", "something else", "no relation at all"),
        ("just a response", "", "just a response"),
        ("", "prompt", ""),
    ],
)
def test_split_query(query, prompt, response):
    assert split_query(query, prompt) == response


def test_all_names_what_the_module_defines():
    assert [name for name in openrlhf.__all__ if not hasattr(openrlhf, name)] == []


def test_get_reward_with_openrlhfs_request_shape(rm):
    # Each question mentions the right answer, so a response still holding its prompt would pass.
    payload = _payload(
        ["Is 2+2 equal to 4 or 5?", "Is the capital of France Paris or Lyon?", "Is 3*3 equal to 9 or 6?"],
        ["It is 5.", "It is Paris.", "It is 6."],
        ["4", "Paris", 9],
    )
    reply = httpx.post(rm, json=payload, timeout=60)
    reply.raise_for_status()
    body = reply.json()
    assert body["rewards"] == [0.0, 1.0, 0.0]
    assert body["scores"] == body["rewards"]
    logs = body["extra_logs"]
    assert set(logs) == {"judge_latency_s", "judge_fallback", "judge_cached", "judge_prechecked"}
    assert all(len(values) == 3 for values in logs.values())
    # the end-of-turn token is cut, so no completion is taken for role spoofing
    assert logs["judge_prechecked"] == [0.0, 0.0, 0.0]


def test_single_query_shards_and_extra_fields(rm):
    # OpenRLHF's executor sends one query per request; unknown keys from newer versions are ignored.
    payload = {**_payload(["What is 6*7?"], ["The answer is 42."], ["42"]), "future_field": 1}
    body = httpx.post(rm, json=payload).json()
    assert body["rewards"] == [1.0] and body["extra_logs"]["judge_fallback"] == [0.0]


def test_answer_type_from_the_server_or_the_request(fake_judge, tmp_path):
    payload = _payload(["What is 6*7?"], ["I would rather not say."], ["42"])
    with ApiServer(create_app(_config(fake_judge.url, tmp_path), answer_type="NUMBER")) as server:
        typed = httpx.post(f"{server.url}/get_reward", json=payload).json()
        overridden = httpx.post(f"{server.url}/get_reward", json={**payload, "answer_types": ["TEXT"]}).json()
    with ApiServer(create_app(_config(fake_judge.url, tmp_path / "b"))) as server:
        per_request = httpx.post(
            f"{server.url}/get_reward", json={**payload, "answer_types": ["NUMBER"]}
        ).json()
    # NUMBER expected and no number given: decided by a pre-check, never judged
    assert typed["extra_logs"]["judge_prechecked"] == [1.0] and typed["rewards"] == [0.0]
    assert per_request["extra_logs"]["judge_prechecked"] == [1.0]
    assert overridden["extra_logs"]["judge_prechecked"] == [0.0]


@pytest.mark.parametrize(
    ("payload", "field", "words"),
    [
        ({"prompts": ["p"], "labels": ["1"]}, "query", "Field required"),
        ({"query": "p r", "prompts": ["p"], "labels": ["1"]}, "query", "valid list"),
        ({"query": ["p r", "p s"], "prompts": ["p"], "labels": ["1", "2"]}, "body", "prompts has 1 items"),
        ({"query": ["p r"], "prompts": ["p"], "labels": [{"a": 1}]}, "labels[0]", "valid string"),
        ({"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": []}, "body", "answer_types"),
        ({"query": ["p r"] * 9, "prompts": ["p"] * 9, "labels": ["1"] * 9}, "query", "at most 8 items"),
        (
            {"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": ["X" * 65]},
            "answer_types[0]",
            "at most 64 characters",
        ),
        (
            {"query": ["p r", "p \ud800"], "prompts": ["p", "p"], "labels": ["1", "2"]},
            "query[1]",
            "lone surrogate",
        ),
        ({"query": ["p r"], "prompts": ["\udfff"], "labels": ["1"]}, "prompts[0]", "lone surrogate (U+DFFF"),
        ({"query": ["p r"], "prompts": ["p"], "labels": ["4 \ud800"]}, "labels[0]", "lone surrogate"),
        (
            {"query": ["p r"], "prompts": ["p"], "labels": ["1"], "answer_types": ["\ud800"]},
            "answer_types[0]",
            "lone surrogate",
        ),
    ],
)
def test_malformed_requests_are_422(rm, payload, field, words):
    # json.dumps escapes a lone surrogate as "\ud800", which JSON decoders read back as one
    body = json.dumps(payload).encode()
    reply = httpx.post(rm, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 422
    body = reply.json()
    assert field in [e["field"] for e in body["errors"]] and words in body["detail"]


def test_the_servers_answer_type_is_checked_when_the_app_is_built():
    with pytest.raises(
        JudgeConfigError, match=r"answer_type \(--answer-type\): String should have at most 64 characters"
    ):
        create_app({}, answer_type="X" * 65)


def test_a_reward_the_judge_could_not_give_is_a_503_not_a_number(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    payload = _payload(["What is 6*7?"], ["The answer is 42."], ["42"])
    app = create_app(_config(f"http://127.0.0.1:{closed}", tmp_path, fallback_to_rule=False))
    with ApiServer(app) as server:
        failed = httpx.post(f"{server.url}/get_reward", json=payload)
    app = create_app(_config(f"http://127.0.0.1:{closed}", tmp_path, fallback_to_rule=True))
    with ApiServer(app) as server:
        fallback = httpx.post(f"{server.url}/get_reward", json=payload).json()
    assert failed.status_code == 503 and "Judge unavailable" in failed.json()["detail"]
    assert fallback["rewards"] == [1.0] and fallback["extra_logs"]["judge_fallback"] == [1.0]
