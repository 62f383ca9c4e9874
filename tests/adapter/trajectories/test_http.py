"""Agent trajectories through the HTTP API (/judge, /batch_judge, /judge_group), on the fake judge."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from adapter.http import create_app
from judge_vllm.testing.asgi_server import ApiServer

CALL = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}}


def trajectory(tool_output: str) -> list[dict[str, object]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": tool_output},
        {"role": "assistant", "content": "Oslo has 709,037 inhabitants."},
    ]


def item(completion: object, **extra: object) -> dict[str, object]:
    prompt = [{"role": "user", "content": "Population of Oslo?"}]
    return {"prompt": prompt, "completion": completion, "answer": "709,037", **extra}


@pytest.fixture
def api(fake_judge, tmp_path) -> Iterator[ApiServer]:
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0}
    with ApiServer(create_app(config)) as server:
        yield server


def test_judge_takes_a_trajectory_and_sees_its_tool_results(api):
    failed = httpx.post(f"{api.url}/judge", json=item(trajectory("Error: timeout"))).json()
    supported = httpx.post(
        f"{api.url}/judge", json=item(trajectory(json.dumps({"population": "709,037"})))
    ).json()
    assert (failed["score"], failed["source"]) == (0.0, "judge")
    assert (supported["score"], supported["source"]) == (1.0, "judge")


def test_batch_and_group_take_trajectories_and_tools(api):
    tools = [{"type": "function", "function": {"name": "lookup", "description": "City database."}}]
    items = [item(trajectory(t), tools=tools) for t in ("Error: timeout", "population 709,037")]
    batch = httpx.post(f"{api.url}/batch_judge", json={"requests": items}).json()
    group = httpx.post(f"{api.url}/judge_group", json={"items": items})
    assert [r["score"] for r in batch["responses"]] == [0.0, 1.0]
    assert group.status_code == 200, group.text


def test_judge_group_compares_trajectories_with_their_steps(fake_judge, tmp_path):
    """Two runs with the same final reply: compared pairwise, the one whose tool returned the
    number wins both orders; each comparison showed both runs' tool results."""
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0,
              "startup_check": "off", "group": {"mode": "pairwise"}}  # fmt: skip
    items = [item(trajectory(t)) for t in ("Error: timeout", json.dumps({"population": "709,037"}))]
    with ApiServer(create_app(config)) as api:
        reply = httpx.post(f"{api.url}/judge_group", json={"items": items}, timeout=30)
    assert reply.status_code == 200, reply.text
    failed, supported = reply.json()["results"]
    assert supported["score"] > failed["score"] and len(supported["comparisons"]) == 2
    assert all("<tool-result-a-" in user and "<tool-result-b-" in user for user in fake_judge.judged_users)


@pytest.mark.parametrize(
    ("completion", "problem"),
    [
        ([{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": 1}}]}],
         "arguments of 'f' are a int"),
        ([{"content": "no role"}], "Input should be a valid string"),
        ([{"role": "wizard", "content": "x"}, {"role": "tool", "content": "y"}], "role 'wizard'"),
        ([{"role": "assistant", "content": "x"}, {"role": "critic", "content": "y"}], "message 1 has role 'critic'"),
    ],
)  # fmt: skip
def test_a_malformed_trajectory_is_a_422_naming_the_message(api, completion, problem):
    reply = httpx.post(f"{api.url}/judge", json=item(completion))
    assert reply.status_code == 422 and problem in reply.text
