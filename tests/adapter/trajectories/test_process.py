"""Process rewards (``process:``): each agent turn judged by profile ``step`` in the same batch as
the outcome, combined, and mixed into the reward; per-turn scores in ``step_scores``.

The fake judge's rules: the outcome scores 1 when the reference is in the final reply and in the
last tool result shown; a turn scores 1 unless the last tool result it shows says "error"."""

from __future__ import annotations

import json

import pytest

from adapter import JudgeRewardSystem
from adapter.pipeline.trajectory import read_completion
from adapter.process import agent_turns
from judge_vllm.testing.fake_server import FaultPlan

QUESTION = "How many people live in Oslo, according to the city database?"
REFERENCE = "709,037"


def _call(call_id: str, city: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"city": city})}}


# Turn 1 fails (a timeout), turn 2 retries and succeeds, then the final reply.
RECOVERED = [
    {"role": "assistant", "content": "I'll query the database.", "tool_calls": [_call("c1", "Oslo")]},
    {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": "Error: database timeout"},
    {"role": "assistant", "content": "Retrying.", "tool_calls": [_call("c2", "Oslo")]},
    {"role": "tool", "tool_call_id": "c2", "name": "lookup", "content": json.dumps({"population": REFERENCE})},
    {"role": "assistant", "content": f"Oslo has {REFERENCE} inhabitants."},
]


def _system(url, tmp_path, **settings):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.01, **settings}
    return JudgeRewardSystem(config)


def test_each_agent_turn_is_one_step_with_the_results_it_got():
    trajectory = read_completion(RECOVERED).trajectory
    assert [(t.name, t.end) for t in agent_turns(trajectory)] == [("steps 1-2", 3), ("steps 4-5", 6)]


@pytest.mark.parametrize(("aggregate", "process"), [("mean", 0.5), ("min", 0.0), ("last", 1.0)])
def test_the_turns_scores_are_mixed_into_the_reward_as_the_aggregate_says(fake_judge, tmp_path, aggregate, process):
    with _system(fake_judge.url, tmp_path, process={"aggregate": aggregate, "weight": 0.5}) as rs:
        result = rs.reward(QUESTION, RECOVERED, REFERENCE)
        metrics = rs.get_metrics()
    assert result["source"] == "judge" and result["step_scores"] == [0.0, 1.0]
    assert result["reward"] == pytest.approx(0.5 * 1.0 + 0.5 * process)  # outcome 1: the answer is supported
    assert f"process: {aggregate} {process:.2f} over 2 of 2 turn(s)" in result["explanation"]
    assert metrics["judged_items"] == 3  # the outcome and two turns
    assert metrics["judge_calls"] == 1  # one batch


def test_without_process_or_with_the_final_view_no_turn_is_judged(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path) as rs:
        plain = rs.reward(QUESTION, RECOVERED, REFERENCE)
    with _system(fake_judge.url, tmp_path / "f", process={}, trajectory_view="final") as rs:
        final = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert (plain["reward"], plain["step_scores"]) == (1.0, None)
    assert (final["reward"], final["step_scores"]) == (1.0, None)


def test_a_cached_outcome_still_gets_its_turns_and_the_same_reward(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, process={"weight": 0.5}) as rs:
        first = rs.reward(QUESTION, RECOVERED, REFERENCE)
        asked = sum(fake_judge.judged_prompts.values())
        again = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert again["source"] == "cache" and again["reward"] == first["reward"] == pytest.approx(0.75)
    assert again["step_scores"] == first["step_scores"]
    assert sum(fake_judge.judged_prompts.values()) == asked  # the turns were cached too


def test_with_the_judge_down_the_fallback_pays_as_without_process(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, process={}, max_retries=0) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))  # the judge goes down after the start
        result = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert result["source"] == "rule_fallback" and result["step_scores"] is None
    assert 0.0 <= result["reward"] <= 1.0


def test_only_the_last_max_steps_turns_are_judged(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, process={"max_steps": 1, "aggregate": "mean"}) as rs:
        result = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert result["step_scores"] == [1.0] and result["reward"] == pytest.approx(1.0)


def test_the_http_api_returns_the_turns_scores_in_its_metadata(fake_judge, tmp_path):
    import httpx

    from adapter.http.app import create_app
    from judge_vllm.testing.asgi_server import ApiServer

    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "cache"), "process": {}}
    with ApiServer(create_app(config)) as server:
        reply = httpx.post(f"{server.url}/judge", json={"prompt": QUESTION, "completion": RECOVERED, "answer": REFERENCE})
    assert reply.status_code == 200, reply.text
    assert reply.json()["metadata"]["step_scores"] == [0.0, 1.0] and reply.json()["score"] == pytest.approx(0.75)
