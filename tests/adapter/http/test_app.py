"""/judge and /batch_judge over real HTTP: the seed's fields, ordering, batching, validation, limits."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adapter.http import create_app
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.asgi_server import ApiServer

SEED_FIELDS = {"score", "request_id", "explanation", "detailed_scores", "source", "metadata"}


def _item(prompt: str, completion: str, answer: Any, **extra: Any) -> dict[str, Any]:
    return {"prompt": prompt, "completion": completion, "answer": answer, **extra}


def test_app_settings_are_checked_when_the_app_is_built():
    with pytest.raises(JudgeConfigError, match="one judge"):
        create_app({"judge_urls": ["http://a:1", "http://b:2"]})
    with pytest.raises(JudgeConfigError, match="max_batch"):
        create_app({}, max_batch=0)
    with pytest.raises(JudgeConfigError, match="max_body_bytes"):
        create_app({}, max_body_bytes=10)


def test_judge_answers_with_the_seed_fields(api):
    reply = httpx.post(
        f"{api.url}/judge",
        json=_item("What is 2+2?", "The result is 4.", "4", answer_type="NUMBER", request_id="unique_id"),
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert set(body) == SEED_FIELDS
    assert (body["score"], body["request_id"], body["source"]) == (1.0, "unique_id", "judge")
    assert body["explanation"].startswith("expected reward 1.00: P(Yes)=1.00") and body["metadata"]["latency"] > 0


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
    single = fake_judge.counts["/v1/chat/completions"]  # the start-up check's tiny judgment
    reply = httpx.post(f"{api.url}/batch_judge", json={"requests": requests})
    assert reply.status_code == 200, reply.text
    responses = reply.json()["responses"]
    assert [r["request_id"] for r in responses] == [f"id-{i}" for i in range(6)]
    assert [r["score"] for r in responses] == [1.0, 0.0] * 3
    assert all(set(r) == SEED_FIELDS for r in responses)
    assert fake_judge.counts["/v1/chat/completions"] == single
    assert fake_judge.counts["/v1/chat/completions/batch"] in range(1, 6)


async def test_concurrent_judge_calls_share_judge_batches(fake_judge, reward_config):
    # a long batch window, so the eight concurrent requests surely meet in the micro-batcher
    app = create_app(reward_config(fake_judge.url, batch_wait=0.5))
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


def test_upstream_down_gives_an_explicit_error_or_a_rule_fallback(reward_config, closed_port):
    url = f"http://127.0.0.1:{closed_port}"
    item = _item("What is 2+2?", "The answer is 4.", "4", answer_type="NUMBER")
    # startup_check warn: the API serves although its judge is down from the start.
    with ApiServer(create_app(reward_config(url, fallback_to_rule=False, startup_check="warn"))) as server:
        failed = httpx.post(f"{server.url}/judge", json=item).json()
    with ApiServer(create_app(reward_config(url, fallback_to_rule=True, startup_check="warn"))) as server:
        fallback = httpx.post(f"{server.url}/judge", json=item).json()
        metrics = httpx.get(f"{server.url}/metrics").text
    assert (failed["score"], failed["source"]) == (None, "error")
    assert failed["metadata"]["reason"] == "Judge unavailable"
    assert (fallback["score"], fallback["source"]) == (1.0, "rule_fallback")
    assert 'judge_fallbacks_total{reason="Judge unavailable"} 1.0' in metrics.splitlines()


# -- validation and limits ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "payload", "field", "words"),
    [
        ("/judge", {"prompt": "p"}, "completion", "Field required"),
        ("/judge", {"prompt": "p", "completion": "c", "anwser": "4"}, "anwser", "Extra inputs"),
        ("/judge", {"prompt": ["p"], "completion": "c"}, "prompt", "valid string"),
        ("/judge", {"prompt": "p", "completion": "c", "answer_type": "X" * 65}, "answer_type", "at most 64"),
        ("/judge", {"prompt": "p", "completion": "c"}, "answer", "profile 'binary' judges against a reference"),
        ("/judge", {"prompt": "p", "completion": "c", "answer": " "}, "answer", "send answer, or a rubric"),
        (
            "/batch_judge",
            {"requests": [_item("p", "c", "4"), {"prompt": "p", "completion": "c"}]},
            "requests[1].answer",
            "required: profile 'binary'",
        ),
        (
            "/judge",
            _item("p", "c", "4", answer_type="NUMBERS"),
            "answer_type",
            "unknown answer_type 'NUMBERS' (did you mean 'NUMBER'?)",
        ),
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
def test_validation_errors_are_422_naming_the_field(secured, api_key, path, payload, field, words):
    reply = httpx.post(f"{secured.url}{path}", json=payload, headers={"Authorization": f"Bearer {api_key}"})
    assert reply.status_code == 422
    body = reply.json()
    assert field in [e["field"] for e in body["errors"]]
    assert f"{field}: " in body["detail"] and words in body["detail"]


@pytest.mark.parametrize(
    ("path", "payload", "field", "hint"),
    [
        ("/judge", _item("p", "c", "4", anwser_type="NUMBER"), "anwser_type", "did you mean 'answer_type'?"),
        ("/batch_judge", {"requests": [{"prompt": "p", "completion": "c", "anwser": "4"}]}, "requests[0].anwser",
         "did you mean 'answer'?"),
        ("/batch_judge", {"reqeusts": []}, "reqeusts", "did you mean 'requests'?"),
        ("/judge", _item("p", "c", "4", rubric=[{"criterion": "rest", "wieght": 2}]), "rubric[0].wieght",
         "did you mean 'weight'?"),
    ],
)  # fmt: skip
def test_an_unknown_field_is_422_naming_the_closest_field_as_the_python_api_does(
    api, path, payload, field, hint
):
    reply = httpx.post(f"{api.url}{path}", json=payload)
    assert reply.status_code == 422
    (error,) = [e for e in reply.json()["errors"] if e["field"] == field]
    assert error["message"].startswith("Extra inputs are not permitted") and hint in error["message"]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/judge", rb'{"prompt":"q","completion":"The answer is 4 \ud800","answer":"4"}', "completion"),
        ("/judge", rb'{"prompt":"\udfff q","completion":"c","answer":"4"}', "prompt"),
        ("/judge", rb'{"prompt":"q","completion":"c","answer":"4 \ud800"}', "answer"),
        ("/judge", rb'{"prompt":"q","completion":"c","answer":"4","answer_type":"\ud800"}', "answer_type"),
        ("/judge", rb'{"prompt":"q","completion":"c","answer":"4","request_id":"id-\ud800"}', "request_id"),
        # invalid UTF-8 that encodes a surrogate: Python's JSON decoder lets it through as one
        ("/judge", b'{"prompt":"q","completion":"4 \xed\xa0\x80","answer":"4"}', "completion"),
        (
            "/batch_judge",
            rb'{"requests":[{"prompt":"q","completion":"4","answer":"4"},{"prompt":"q","completion":"\ud800"}]}',
            "requests[1].completion",
        ),
    ],
)
def test_a_lone_surrogate_is_422_naming_the_field_never_500(secured, api_key, path, body, field):
    headers = {"Authorization": f"Bearer {api_key}", "content-type": "application/json"}
    reply = httpx.post(f"{secured.url}{path}", content=body, headers=headers)
    assert reply.status_code == 422, reply.text
    assert [e["field"] for e in reply.json()["errors"]] == [field]
    assert "lone surrogate" in reply.json()["detail"]


def test_invalid_json_is_422(secured, api_key):
    reply = httpx.post(
        f"{secured.url}/judge",
        content=b'{"prompt": ',
        headers={"Authorization": f"Bearer {api_key}", "content-type": "application/json"},
    )
    assert reply.status_code == 422
    assert reply.json()["errors"][0]["field"] == "body"


def test_a_declared_100_mb_body_is_413_before_it_is_sent(api):
    with socket.create_connection(("127.0.0.1", api.port), timeout=10) as sock:
        sock.sendall(
            b"POST /judge HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"content-length: 100000000\r\n\r\n"
        )
        reply = sock.recv(4096)  # no body byte sent: the answer must not wait for one
        while b"max_body_bytes" not in reply and (more := sock.recv(4096)):
            reply += more  # the head and the body may come in separate segments
    assert reply.startswith(b"HTTP/1.1 413 ") and b"max_body_bytes" in reply


def test_a_streamed_100_mb_body_is_413(api):
    def chunks() -> Iterator[bytes]:
        yield b'{"prompt": "p", "completion": "'
        for _ in range(100 * 16):
            yield b"x" * 65536

    reply = httpx.post(
        f"{api.url}/judge", content=chunks(), headers={"content-type": "application/json"}, timeout=60
    )
    assert reply.status_code == 413 and "max_body_bytes" in reply.json()["detail"]


def test_oversized_bodies_are_413_declared_or_streamed(secured, api_key):
    headers = {"Authorization": f"Bearer {api_key}", "content-type": "application/json"}
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
