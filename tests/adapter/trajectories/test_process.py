"""Process rewards (``process:``): each agent turn judged by profile ``step`` in the same batch as
the outcome, combined, and mixed into the reward; per-turn scores in ``step_scores``.

The fake judge's rules: the outcome scores 1 when the reference is in the final reply and in the
last tool result shown; a turn scores 1 unless the last tool result it shows says "error"."""

from __future__ import annotations

import json
import logging
import math

import pytest

from adapter import JudgeRewardSystem, RewardDict
from adapter.pipeline.trajectory import read_completion
from adapter.process import agent_turns
from judge_vllm.backend import Outcome
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.testing.fake_backend import FakeBackend
from judge_vllm.testing.fake_server import FaultPlan
from judge_vllm.trajectory import ResultStep

QUESTION = "How many people live in Oslo, according to the city database?"
REFERENCE = "709,037"


def _call(call_id: str, city: str) -> dict[str, object]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"city": city})},
    }


# Turn 1 fails (a timeout), turn 2 retries and succeeds, then the final reply.
RECOVERED = [
    {"role": "assistant", "content": "I'll query the database.", "tool_calls": [_call("c1", "Oslo")]},
    {"role": "tool", "tool_call_id": "c1", "name": "lookup", "content": "Error: database timeout"},
    {"role": "assistant", "content": "Retrying.", "tool_calls": [_call("c2", "Oslo")]},
    {
        "role": "tool",
        "tool_call_id": "c2",
        "name": "lookup",
        "content": json.dumps({"population": REFERENCE}),
    },
    {"role": "assistant", "content": f"Oslo has {REFERENCE} inhabitants."},
]


def _system(url, tmp_path, **settings):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "batch_wait": 0.01, **settings}
    return JudgeRewardSystem(config)


def test_each_agent_turn_is_one_step_with_the_results_it_got():
    trajectory = read_completion(RECOVERED).trajectory
    assert [(t.name, t.end) for t in agent_turns(trajectory)] == [("steps 1-2", 3), ("steps 4-5", 6)]


@pytest.mark.parametrize(("aggregate", "process"), [("mean", 0.5), ("min", 0.0), ("last", 1.0)])
def test_the_turns_scores_are_mixed_into_the_reward_as_the_aggregate_says(
    fake_judge, tmp_path, aggregate, process
):
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


def test_only_the_last_max_steps_turns_are_judged_and_the_earlier_ones_count_as_bad(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, process={"max_steps": 1, "aggregate": "mean"}) as rs:
        result = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert result["step_scores"] == [None, 1.0]  # the first turn was not judged: unknown, never good
    assert result["reward"] == pytest.approx(1.0 * (1 - 0.5 * (1 - 0.5)))  # mean over (0, 1)
    assert "1 before the last max_steps counted as bad" in result["explanation"]


class TurnJudge(FakeBackend):
    """A judge in the test's process: the outcome scores ``outcome`` (below 0.5: judged wrong); a
    turn (profile step) scores 0 when the last tool result it shows says "Error", NaN (a backend's
    bug) when it says "NaN", else 1."""

    def __init__(self, outcome: float) -> None:
        super().__init__()
        self.outcome = outcome

    def _judge(self, request: JudgeRequest) -> Outcome:
        if request.profile != "step":
            return Verdict(score=self.outcome)
        assert request.trajectory is not None
        last = [s for s in request.trajectory.steps if isinstance(s, ResultStep)][-1].content
        if "NaN" in last:
            return Verdict.model_construct(score=float("nan"), explanation="", label=None)
        return Verdict(score=0.0 if "Error" in last else 1.0)


BAD, GOOD, TRIVIAL = "Error: database timeout", json.dumps({"population": REFERENCE}), "12:00"


def _run(*results: str) -> list[dict[str, object]]:
    """One turn per tool result (a lookup, and what it returned), then the final reply."""
    turns = [
        [{"role": "assistant", "content": f"Lookup {k}.", "tool_calls": [_call(f"c{k}", "Oslo")]},
         {"role": "tool", "tool_call_id": f"c{k}", "name": "lookup", "content": result}]
        for k, result in enumerate(results)
    ]  # fmt: skip
    reply = {"role": "assistant", "content": f"It is {REFERENCE}."}
    return [message for turn in turns for message in turn] + [reply]


def _rewards(outcome: float, process: dict[str, object], *runs: list[dict[str, object]]) -> list[RewardDict]:
    config = {"judge_url": "http://127.0.0.1:9", "use_cache": False, "process": {"weight": 0.5, **process}}
    with JudgeRewardSystem(config, backend=TurnJudge(outcome)) as rs:
        return [rs.reward(QUESTION, run, REFERENCE) for run in runs]


LAYOUTS = {  # an aggregate, and a run with a bad turn before and after a layout meant to raise its reward
    "mean, 30 trivial turns added": ({"aggregate": "mean"}, (BAD, GOOD), (BAD, GOOD, *[TRIVIAL] * 30)),
    "last, ending on a good turn": ({"aggregate": "last"}, (GOOD, BAD), (GOOD, BAD, TRIVIAL)),
    "min, the bad turn moved before the last max_steps": (
        {"aggregate": "min", "max_steps": 4}, (GOOD, GOOD, GOOD, GOOD, BAD), (BAD, GOOD, GOOD, GOOD, GOOD),
    ),
}  # fmt: skip


@pytest.mark.parametrize("outcome", [0.0, 0.3], ids=["wrong", "judged-unlikely"])
@pytest.mark.parametrize(("process", "plain", "laid_out"), LAYOUTS.values(), ids=LAYOUTS.keys())
def test_no_layout_of_turns_raises_the_reward_of_a_wrong_outcome(outcome, process, plain, laid_out):
    before, after = _rewards(outcome, process, _run(*plain), _run(*laid_out))
    assert before["source"] == after["source"] == "judge"
    assert after["reward"] == before["reward"] == pytest.approx(outcome * 0.5)  # its turns earn nothing
    assert f"process: {process['aggregate']} " in after["explanation"]
    assert "the outcome is wrong, so its turns earn nothing: outcome x 0.50" in after["explanation"]


@pytest.mark.parametrize("aggregate", ["mean", "min", "last"])
def test_the_turns_only_lower_the_reward_of_a_right_outcome(aggregate):
    steps = {"aggregate": aggregate, "max_steps": 4}
    runs = _run(GOOD, GOOD), _run(BAD, *[GOOD] * 4), _run(*[GOOD] * 4, BAD)
    good, bad_first, bad_last = _rewards(0.9, steps, *runs)
    assert good["reward"] == pytest.approx(0.9)  # every turn good: the outcome's reward, never more
    assert bad_first["step_scores"] == [None, 1.0, 1.0, 1.0, 1.0]  # not judged: unknown, counted as bad
    expected = {"mean": 0.9 * (1 - 0.5 * 0.2), "min": 0.9 * 0.5, "last": 0.9}[aggregate]
    assert bad_first["reward"] == pytest.approx(expected) and bad_first["reward"] <= 0.9
    assert bad_last["reward"] <= 0.9


def test_the_documented_aggregates():  # docs/trajectories.md: turns [1, 0, 1, 1] of a right outcome
    run = _run(GOOD, BAD, GOOD, GOOD)
    paid = {}
    for aggregate in ("mean", "min", "last"):
        for max_steps in (32, 2):
            (result,) = _rewards(1.0, {"aggregate": aggregate, "max_steps": max_steps}, run)
            paid[aggregate, max_steps] = result["reward"]
    assert paid == pytest.approx({("mean", 32): 0.875, ("min", 32): 0.5, ("last", 32): 1.0,
                                  ("mean", 2): 0.75, ("min", 2): 0.5, ("last", 2): 1.0})  # fmt: skip


def test_a_turn_score_that_is_not_a_number_never_reaches_the_caller(caplog):
    with caplog.at_level(logging.WARNING, logger="adapter.process.judge"):
        (result,) = _rewards(0.9, {"aggregate": "min"}, _run(GOOD, "NaN"))
    assert result["step_scores"] == [1.0, None]
    assert result["source"] == "judge" and result["reward"] == pytest.approx(0.9)  # over the turn judged
    assert any("not a finite number" in r.getMessage() for r in caplog.records)


def test_the_http_api_returns_the_turns_scores_in_its_metadata(fake_judge, tmp_path):
    import httpx

    from adapter.http.app import create_app
    from judge_vllm.testing.asgi_server import ApiServer

    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "cache"), "process": {}}
    with ApiServer(create_app(config)) as server:
        reply = httpx.post(
            f"{server.url}/judge", json={"prompt": QUESTION, "completion": RECOVERED, "answer": REFERENCE}
        )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["metadata"]["step_scores"] == [0.0, 1.0] and body["score"] == pytest.approx(0.75)


class BrokenStepJudge(FakeBackend):
    """A backend whose step verdicts bypass validation (``model_construct``): the first turn's
    score is NaN, the second's 1.0; the outcome is FakeBackend's (the reference is in the reply)."""

    def _judge(self, request):
        if request.profile != "step":
            return super()._judge(request)
        broken = "timeout" in str(request.trajectory.steps[-1])
        return Verdict.model_construct(score=math.nan if broken else 1.0, label="Yes")


def test_a_step_score_that_is_not_a_finite_number_never_reaches_the_caller(tmp_path):
    """Issue 41: a NaN step score was returned in step_scores."""
    config = {"cache_dir": str(tmp_path / "cache"), "use_cache": False, "process": {"weight": 0.5}}
    with JudgeRewardSystem(config, backend=BrokenStepJudge()) as rs:
        result = rs.reward(QUESTION, RECOVERED, REFERENCE)
    assert result["step_scores"] == [None, 1.0]
    assert result["reward"] is not None and 0.0 <= result["reward"] <= 1.0


def test_both_views_and_the_turns_are_judged_in_one_batch_and_a_repeat_comes_from_the_cache(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path, process={"weight": 0.5}, trajectory_view="both") as rs:
        first = rs.reward(QUESTION, RECOVERED, REFERENCE)
        asked = sum(fake_judge.judged_prompts.values())
        again = rs.reward(QUESTION, RECOVERED, REFERENCE)
        metrics = rs.get_metrics()
    assert first["judge_scores"] == {"trace": 1.0, "final_reply": 1.0} and first["step_scores"] == [0.0, 1.0]
    assert first["reward"] == pytest.approx(0.75)  # outcome 1 in both views, the turns' mean 0.5, weight 0.5
    assert metrics["judged_items"] == 4  # the trace, the final reply, two turns
    assert again["source"] == "cache" and again["reward"] == first["reward"]
    assert again["judge_scores"] == first["judge_scores"]
    assert sum(fake_judge.judged_prompts.values()) == asked  # every part came from the cache
