"""/judge_group and rubric items over real HTTP, on an in-process judge (plumbing, never quality).

``prefers_marked()`` prefers, of two responses, the one with more "+" signs and the first shown on a
tie (so on a group without marks it always prefers the first shown); alone, a completion is
FakeBackend's (a rubric criterion met when its text is in the response).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adapter.http import create_app
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.fake_backend import ComparingBackend
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

QUESTION = "Write a slogan for a bakery."
RESPONSE = "Drink water, rest, and see a doctor if the fever lasts."
MEMBER_FIELDS = {"score", "request_id", "explanation", "detailed_scores", "source", "metadata", "comparisons"}


def prefers_marked() -> ComparingBackend:
    """Prefers the response with more "+" (ties: the first shown); keeps the comparisons asked."""
    return ComparingBackend(lambda text: text.count("+"))


def _config(tmp_path, **group: Any) -> dict[str, Any]:
    return {
        "use_cache": False,
        "batch_wait": 0.01,
        "reward_timeout": 5,
        "cache_dir": str(tmp_path / "cache"),
        "group": group or {"mode": "pairwise"},
    }


def _members(*completions: str, prompt: str = QUESTION, **extra: Any) -> list[dict[str, Any]]:
    return [{"prompt": prompt, "completion": c, **extra} for c in completions]


@pytest.fixture
def judge() -> ComparingBackend:
    """The in-process judge behind ``grouped``."""
    return prefers_marked()


@pytest.fixture
def grouped(tmp_path, judge) -> Iterator[ApiServer]:
    """The API with ``group: {mode: pairwise}`` in front of ``judge``."""
    with ApiServer(create_app(_config(tmp_path), backend=judge)) as server:
        yield server


@pytest.fixture
def guarded(tmp_path, judge, api_key) -> Iterator[ApiServer]:
    """``grouped`` with a bearer key, 4 KiB bodies and 4 items per batch."""
    app = create_app(_config(tmp_path), api_key=api_key, max_body_bytes=4096, max_batch=4, backend=judge)
    with ApiServer(app) as server:
        yield server


# -- /judge_group -------------------------------------------------------------------------------


def test_a_group_is_ranked_by_the_judges_preferences_in_request_order(grouped, judge):
    items = [
        {**member, "request_id": f"m{k}"}
        for k, member in enumerate(_members("ok +", "best +++", "poor", "good ++"))
    ]
    reply = httpx.post(f"{grouped.url}/judge_group", json={"items": items}, timeout=30)
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert [r["request_id"] for r in results] == ["m0", "m1", "m2", "m3"]
    assert all(set(r) == MEMBER_FIELDS and r["source"] == "judge" for r in results)
    assert all(r["metadata"]["reason"] == "pairwise" for r in results)
    scores = [r["score"] for r in results]
    assert scores[1] > scores[3] > scores[0] > scores[2]
    assert len(judge.comparisons) == 12  # all pairs, both orders
    shown = sorted(tuple(c["shown"]) for c in results[0]["comparisons"])
    assert shown == [(0, 1), (0, 2), (0, 3), (1, 0), (2, 0), (3, 0)]
    assert all(c["p_first"] in (0.0, 1.0) and c["source"] == "judge" for c in results[0]["comparisons"])


def test_a_judge_that_always_prefers_the_first_shown_favours_no_member(grouped):
    completions = [
        "Fresh every morning.",
        "Bread you can trust.",
        "Rise and shine with us.",
        "Crumbs of joy.",
    ]
    results = httpx.post(f"{grouped.url}/judge_group", json={"items": _members(*completions)}).json()[
        "results"
    ]
    scores = [r["score"] for r in results]
    assert scores == pytest.approx([scores[0]] * 4)


def test_an_empty_group_is_an_empty_answer_and_a_group_of_one_is_judged_alone(grouped):
    empty = httpx.post(f"{grouped.url}/judge_group", json={"items": []})
    alone = httpx.post(f"{grouped.url}/judge_group", json={"items": _members("4", prompt="2+2?", answer="4")})
    assert (empty.status_code, empty.json()) == (200, {"results": []})
    (result,) = alone.json()["results"]
    assert (result["score"], result["source"], result["comparisons"]) == (1.0, "judge", None)


@pytest.mark.parametrize(
    ("items", "field"),
    [
        ([*_members("a"), *_members("b", prompt="Another question.")], "items[1].prompt"),
        ([*_members("a", "b", answer="x"), *_members("c", answer="y")], "items[2].answer"),
        ([*_members("a"), {"prompt": QUESTION}], "items[1].completion"),
    ],
)
def test_a_group_of_several_prompts_is_422_naming_the_item(guarded, api_key, items, field):
    headers = {"Authorization": f"Bearer {api_key}"}
    reply = httpx.post(f"{guarded.url}/judge_group", json={"items": items}, headers=headers)
    assert reply.status_code == 422, reply.text
    assert [e["field"] for e in reply.json()["errors"]] == [field]


def test_judge_group_has_the_auth_and_limits_of_the_other_endpoints(guarded, api_key):
    headers = {"Authorization": f"Bearer {api_key}"}
    url = f"{guarded.url}/judge_group"
    anonymous = httpx.post(url, json={"items": _members("a", "b")})
    too_many = httpx.post(url, json={"items": _members(*"abcde")}, headers=headers)
    too_large = httpx.post(url, json={"items": _members("x" * 5000)}, headers=headers)
    misspelt = httpx.post(url, json={"itmes": []}, headers=headers)
    assert (anonymous.status_code, too_many.status_code, too_large.status_code) == (401, 422, 413)
    assert "at most 4 items" in too_many.json()["detail"]
    assert {e["field"] for e in misspelt.json()["errors"]} == {"items", "itmes"}


def test_a_group_too_large_to_rank_is_answered_pointwise(tmp_path, judge):
    app = create_app(_config(tmp_path, mode="listwise"), backend=judge)
    with ApiServer(app) as server:
        reply = httpx.post(
            f"{server.url}/judge_group", json={"items": _members(*(f"slogan {k}" for k in range(17)))}
        )
    assert reply.status_code == 200, reply.text
    assert len(reply.json()["results"]) == 17 and judge.comparisons == []


def test_a_group_over_max_members_is_422_in_one_line_naming_the_key(tmp_path, judge):
    app = create_app(_config(tmp_path, mode="pairwise", max_members=4, max_comparisons=8), backend=judge)
    with ApiServer(app) as server:
        started = list(judge.requests)  # the start-up check's tiny judgment
        reply = httpx.post(f"{server.url}/judge_group", json={"items": _members(*"abcde")})
    assert reply.status_code == 422, reply.text
    detail = reply.json()["detail"]
    assert detail.startswith("items: a group of 5 completions is more than group.max_members (4)")
    assert "\n" not in detail and judge.requests == started


def test_a_single_judgment_keeps_its_timeout_while_a_large_group_runs_on_a_slow_judge(tmp_path):
    """Issue 33: a /judge asked while a 200-member group ran waited 22.6 s past its 10 s timeout.
    The judge serves 4 calls at once, 50 ms each; the group is the largest allowed (128)."""
    reward_timeout = 3.0
    with FakeJudgeServer(FaultPlan(latency_s=0.05, max_concurrency=4)) as judge_server:
        config = {**_config(tmp_path, mode="pairwise", deadline=10), "judge_url": judge_server.url,
                  "reward_timeout": reward_timeout}  # fmt: skip
        with ApiServer(create_app(config)) as server:
            group_reply: list[httpx.Response] = []
            items = _members(*(f"Step {k}: the answer is {40 + k % 5}." for k in range(128)), answer="42")
            group = threading.Thread(
                target=lambda: group_reply.append(
                    httpx.post(f"{server.url}/judge_group", json={"items": items}, timeout=120)
                )
            )
            group.start()
            time.sleep(0.5)
            started = time.monotonic()
            single = httpx.post(
                f"{server.url}/judge",
                json={"prompt": QUESTION, "completion": "The answer is 42.", "answer": "42"},
                timeout=120,
            )
            elapsed = time.monotonic() - started
            group.join()
    assert single.status_code == 200 and group_reply[0].status_code == 200
    assert single.json()["source"] == "judge"  # judged, not a fallback after its timeout
    assert elapsed < 2 * reward_timeout  # generous: within its own timeout, whatever the machine
    assert {r["source"] for r in group_reply[0].json()["results"]} == {"judge"}


def test_judge_group_is_counted_under_its_own_endpoint(grouped):
    httpx.post(f"{grouped.url}/judge_group", json={"items": _members("a slogan", "another slogan")})
    metrics = httpx.get(f"{grouped.url}/metrics").text.splitlines()
    assert 'judge_api_requests_total{endpoint="/judge_group",status="200"} 1.0' in metrics
    assert 'judge_rewards_total{source="judge"} 2.0' in metrics


# -- rubric items ---------------------------------------------------------------------------------


def test_a_rubric_item_through_judge_is_the_rubrics_weighted_mean(grouped):
    rubric = ["Drink water", {"criterion": "see a doctor", "weight": 2}, {"criterion": "antibiotics"}]
    reply = httpx.post(
        f"{grouped.url}/judge", json={"prompt": "Fever?", "completion": RESPONSE, "rubric": rubric}
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["score"], body["source"]) == (pytest.approx(0.75), "judge")
    assert body["detailed_scores"] == {"Drink water": 1.0, "see a doctor": 1.0, "antibiotics": 0.0}


def test_a_failed_veto_criterion_zeroes_the_reward(grouped):
    rubric = ["rest", {"criterion": "never recommends antibiotics", "veto": True}]
    body = httpx.post(
        f"{grouped.url}/judge", json={"prompt": "Fever?", "completion": RESPONSE, "rubric": rubric}
    ).json()
    assert (body["score"], body["metadata"]["reason"]) == (0.0, "vetoed")


def test_rubric_items_in_a_batch_and_in_a_group(grouped):
    batch = httpx.post(
        f"{grouped.url}/batch_judge",
        json={
            "requests": [
                {"prompt": "2+2?", "completion": "It is 4", "answer": "4"},
                {"prompt": "Fever?", "completion": RESPONSE, "rubric": ["rest", "surgery"]},
            ]
        },
    ).json()["responses"]
    group = httpx.post(
        f"{grouped.url}/judge_group",
        json={"items": _members(RESPONSE, "Rest.", prompt="Fever?", rubric=["rest"])},
    ).json()["results"]
    assert [(r["score"], r["source"]) for r in batch] == [(1.0, "judge"), (0.5, "judge")]
    assert [(r["score"], r["source"], r["comparisons"]) for r in group] == [
        (1.0, "judge", None),
        (0.0, "judge", None),
    ]


@pytest.mark.parametrize(
    ("rubric", "field", "words"),
    [
        ([], "rubric", "at least 1 item"),
        ("rest", "rubric", "valid list"),
        ([" "], "rubric[0].criterion", "at least 1 character"),
        ([3], "rubric[0]", "valid dictionary"),
        ([{"criterion": "rest", "wieght": 2}], "rubric[0].wieght", "Extra inputs"),
        ([{"criterion": "rest", "weight": 0}], "rubric[0].weight", "greater than 0"),
        (["rest \ud800"], "rubric[0].criterion", "lone surrogate"),
        ([{"criterion": "\udfff"}], "rubric[0].criterion", "lone surrogate"),
        (["rest"] * 65, "rubric", "at most 64 items"),
    ],
)
def test_an_invalid_rubric_is_422_naming_the_criterion(grouped, rubric, field, words):
    body = json.dumps({"prompt": "Fever?", "completion": RESPONSE, "rubric": rubric})  # escapes surrogates
    reply = httpx.post(f"{grouped.url}/judge", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 422, reply.text
    assert [e["field"] for e in reply.json()["errors"]] == [field]
    assert words in reply.json()["detail"]
