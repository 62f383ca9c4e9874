"""TRL's tool-using GRPO: its completions (assistant tool_calls, tool messages, the final reply)
judged as trajectories, through TRL's own tool loop (trl/trainer/grpo_trainer.py, ``_tool_call_loop``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter import JudgeRewardSystem
from adapter.integrations import trl as trl_integration
from adapter.integrations.trl import judge_reward_func
from judge_vllm.testing.fake_backend import ComparingBackend
from tiny_grpo import completions_table, run_tool_grpo, step_logs

REPO = Path(__file__).resolve().parents[3]
QUESTION = [{"role": "user", "content": "How many people live in Oslo, according to the city database?"}]
POPULATION = {"Oslo": "709,037"}
REPLY = "Oslo has 709,037 inhabitants."


def city_population(city: str) -> str:
    """Look up a city's population in the municipal database.

    Args:
        city: the city's name
    """
    return json.dumps({"city": city, "population": POPULATION[city]})


def trl_completion(result: object) -> list[dict[str, object]]:
    """A completion as TRL's tool loop builds it: the parsed call (arguments a mapping, no id), the
    tool message (``str`` of the result; a raising tool's ``{"error": ...}``), the final reply."""
    call = {"type": "function", "function": {"name": "city_population", "arguments": {"city": "Oslo"}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "city_population", "content": str(result)},
        {"role": "assistant", "content": REPLY},
    ]


def test_trls_tool_completions_are_judged_on_their_tool_results(fake_judge, tmp_path):
    reward = judge_reward_func(
        {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c")}, tools=[city_population]
    )
    completions = [trl_completion(city_population("Oslo")), trl_completion({"error": "'Olso'"})]
    try:
        rewards = reward(prompts=[QUESTION] * 2, completions=completions, answer=["709,037"] * 2)
    finally:
        reward.close()
    assert rewards == [1.0, 0.0]
    shown = str(fake_judge.last_body["messages"])
    assert "Tools offered: city_population (Look up a city" in shown  # its docstring's first line


def test_a_tools_column_names_each_rows_tools(fake_judge, tmp_path):
    schema = {"type": "function", "function": {"name": "census", "description": "The national census."}}
    reward = judge_reward_func({"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c")})
    try:
        reward(
            prompts=[QUESTION],
            completions=[trl_completion("709,037")],
            answer=["709,037"],
            tools=[json.dumps([schema])],
        )
    finally:
        reward.close()
    assert "Tools offered: census (The national census.)" in str(fake_judge.last_body["messages"])


def test_tool_using_completions_are_grouped_by_prompt(monkeypatch):
    judge = ComparingBackend(lambda text: float("709,037" in text))
    monkeypatch.setattr(trl_integration, "create_judge_reward", lambda c: JudgeRewardSystem(c, backend=judge))
    # No start-up check: every request the judge gets is a reward's.
    settings = {
        "use_cache": False,
        "reward_timeout": 5,
        "group": {"mode": "pairwise"},
        "startup_check": "off",
    }
    reward = judge_reward_func(settings)
    other = [{"role": "user", "content": "And Bergen?"}]
    completions = [trl_completion(f"result {k}") for k in range(4)]
    for k, reply in ((1, "I could not find it."), (3, "Bergen has 291,940.")):  # the backend reads replies
        completions[k][-1] = {"role": "assistant", "content": reply}
    try:
        rewards = reward(
            prompts=[QUESTION, QUESTION, other, other], completions=completions, answer=["709,037"] * 4
        )
    finally:
        reward.close()
    assert rewards[0] > rewards[1]
    shown = {r.prompt: set(r.responses) for r in judge.requests}
    assert len(judge.requests) == 4  # two groups of two, both orders each
    assert all(len(r.traces) == 2 and all(t and t.calls == 1 for t in r.traces) for r in judge.requests)
    assert shown == {
        QUESTION[0]["content"]: {REPLY, "I could not find it."},
        "And Bergen?": {REPLY, "Bergen has 291,940."},
    }


def test_a_group_of_trl_tool_completions_is_compared_with_their_steps(fake_judge, tmp_path):
    """The same final reply after a lookup that worked and one that raised: compared pairwise, the
    fake judge reads each response's own tool result."""
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "group": {"mode": "pairwise"}}
    reward = judge_reward_func(config, tools=[city_population])
    completions = [trl_completion(city_population("Oslo")), trl_completion({"error": "'Olso'"})]
    try:
        rewards = reward(prompts=[QUESTION] * 2, completions=completions, answer=["709,037"] * 2)
    finally:
        reward.close()
    assert rewards[0] > rewards[1]
    assert "<tool-result-a-" in str(fake_judge.last_body["messages"])


@pytest.mark.slow
def test_grpo_trainer_with_tools_rewards_the_call_that_worked(fake_judge, tmp_path):
    """TRL parses the scripted turns, runs the tool (a typo in the city makes it raise, as a tool
    does), and hands our function each trajectory; both end in the same reply."""
    calls = iter(["Oslo", "Olso"])

    def policy(text: str) -> str:
        if "<tool_response>" in text:
            return REPLY + "<|im_end|>"
        arguments = json.dumps({"name": "city_population", "arguments": {"city": next(calls)}})
        return f"<tool_call>\n{arguments}\n</tool_call><|im_end|>"

    reward = judge_reward_func(
        {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c")}, tools=[city_population]
    )
    try:
        trainer, returned = run_tool_grpo(
            reward, tmp_path, {"prompt": [QUESTION], "answer": ["709,037"]}, [city_population], policy
        )
    finally:
        reward.close()
    assert returned == [[1.0, 0.0]]
    [log] = step_logs(trainer)
    assert log["tools/call_frequency"] == 1.0 and log["tools/failure_frequency"] == 0.5
    assert log["rewards/judge_reward/mean"] == 0.5


def _retried(first_result: object) -> list[dict[str, object]]:
    """A TRL completion whose first lookup got ``first_result`` and whose second worked."""
    retry = {"type": "function", "function": {"name": "city_population", "arguments": {"city": "Oslo"}}}
    first = trl_completion(first_result)[:2]
    return [*first, {"role": "assistant", "content": "", "tool_calls": [retry]},
            {"role": "tool", "name": "city_population", "content": city_population("Oslo")},
            {"role": "assistant", "content": REPLY}]  # fmt: skip


def test_with_process_rewards_each_completions_turn_scores_go_to_trls_completions_table(fake_judge, tmp_path):
    """TRL takes one reward per completion; the turns' scores go beside it, as a column of its table."""
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "process": {"weight": 0.5}}
    reward = judge_reward_func(config, tools=[city_population])
    extra: dict[str, list[object]] = {}
    completions = [_retried({"error": "'Olso'"}), trl_completion(city_population("Oslo"))]
    try:
        rewards = reward(prompts=[QUESTION] * 2, completions=completions, answer=["709,037"] * 2,
                         log_extra=extra.__setitem__)  # fmt: skip
    finally:
        reward.close()
    assert extra[trl_integration.STEP_SCORES_COLUMN] == [[0.0, 1.0], [1.0]]
    assert rewards == [0.75, 1.0]  # the failed lookup costs a quarter: mean 0.5, weight 0.5


@pytest.mark.slow
def test_grpo_trainer_with_tools_and_the_shipped_agent_config_logs_each_turns_score(
    fake_judge, tmp_path, monkeypatch
):
    """configs/trl-agent.yaml through TRL's own tool loop and completions table: the run that
    retried after its tool raised has a bad first turn and a good second one; the run that looked
    up once, one good turn. TRL takes one reward per completion, the process-mixed one."""
    calls = iter(["Olso", "Oslo"])

    def policy(text: str) -> str:
        last = text.rsplit("<tool_response>", 1)
        if len(last) == 1:
            city = next(calls)
        elif "error" in last[1]:
            city = "Oslo"
        else:
            return REPLY + "<|im_end|>"
        arguments = json.dumps({"name": "city_population", "arguments": {"city": city}})
        return f"<tool_call>\n{arguments}\n</tool_call><|im_end|>"

    monkeypatch.setenv("HOME", str(tmp_path))  # the shipped config caches under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    reward = judge_reward_func(REPO / "configs" / "trl-agent.yaml", tools=[city_population])
    try:
        run_tool_grpo(reward, tmp_path, {"prompt": [QUESTION], "answer": ["709,037"]}, [city_population], policy)
    finally:
        reward.close()
    table = completions_table(tmp_path, 1)
    scores = [list(s) for s in table[trl_integration.STEP_SCORES_COLUMN]]
    assert scores == [[0.0, 1.0], [1.0]]
    assert list(table["judge_reward"]) == [0.75, 1.0]
