"""verl's multi-turn rollouts (its tool agent loop, ``multi_turn.format: hermes``) judged as trajectories.

The batch is laid out as verl's agent loop lays it out for a multi-turn rollout: the response
holds the assistant's turns and the tools' turns as the policy's chat template renders them
(Qwen 2.5's, as TRL ships it), with ``__num_turns__`` and the loop's ``tool_extra_fields``
(``turn_scores``, ``tool_rewards``); verl's own ``RewardLoopWorker`` decodes it (special tokens
skipped) and calls our function, and verl's own Hermes parser reads the same tool calls we read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from transformers import PreTrainedTokenizerFast
from trl.chat_template_utils import qwen2_5_chat_template
from verl.experimental.agent_loop.tool_parser import ToolParser

import verl_loop as loop
from adapter import JudgeRewardSystem
from adapter.integrations import verl as judge_verl
from adapter.pipeline.trajectory import hermes_messages, read_completion
from judge_vllm.testing.fake_backend import ComparingBackend
from judge_vllm.trajectory import CallStep

QUESTION = "How many people live in Oslo, according to the city database?"
SCHEMA = {"type": "function", "function": {"name": "city_population", "description": "The city database.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
REPLY = "Oslo has 709,037 inhabitants."
RESULTS = {
    "failed": "Error: database timeout after 30 s",
    "supported": '{"city": "Oslo", "population": "709,037"}',
}


def conversation(result: str, reply: str = REPLY) -> list[dict[str, object]]:
    call = {"type": "function", "function": {"name": "city_population", "arguments": {"city": "Oslo"}}}
    return [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "I'll query the database.", "tool_calls": [call]},
        {"role": "tool", "content": result},
        {"role": "assistant", "content": reply},
    ]


def render(messages: list[dict[str, object]], **options: object) -> str:
    from jinja2 import Template  # the chat template, as transformers renders it

    return Template(qwen2_5_chat_template).render(messages=messages, tools=[SCHEMA], **options)


def response(messages: list[dict[str, object]]) -> str:
    """What follows the prompt in a multi-turn rollout: every turn after the user's, as rendered."""
    prompt = render(messages[:1], add_generation_prompt=True)
    return render(messages)[len(prompt) :]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [render(conversation(r)) for r in RESULTS.values()]
    return loop.write_tokenizer(
        tmp_path_factory.mktemp("policy"), texts, ["<|im_start|>", "<|im_end|>"], qwen2_5_chat_template
    )


@pytest.fixture(autouse=True)
def fresh_adapters() -> Iterator[None]:
    judge_verl.close_adapter()
    yield
    judge_verl.close_adapter()


def multi_turn(result: str, index: int = 0, reply: str = REPLY) -> loop.Row:
    """A rollout of 4 turns whose tool returned ``result``, with the loop's per-turn fields."""
    turns = {"__num_turns__": 4, "tool_extra_fields": {"turn_scores": [], "tool_rewards": [0.5]}}
    return loop.Row(
        QUESTION, response(conversation(result, reply)), "709,037", {"index": index, "tools": [SCHEMA]}, turns
    )


async def test_verls_reward_loop_judges_a_multi_turn_rollout_on_its_tool_results(
    tokenizer_dir, fake_judge, tmp_path
):
    config = loop.trainer_config(
        tokenizer_dir,
        *loop.our_function("compute_score_async", loop.reward_yaml(tmp_path, judge_url=fake_judge.url)),
    )
    rows = [multi_turn(RESULTS["failed"]), multi_turn(RESULTS["supported"], 1)]
    rm_scores, extra = await loop.run_reward_loop(config, loop.rollout(tokenizer_dir, rows))
    assert loop.rewards_of(rm_scores) == [0.0, 1.0] and extra["source"].tolist() == ["judge", "judge"]
    shown = json.dumps(fake_judge.last_body["messages"])
    assert "Tools offered: city_population (The city database.)" in shown and "<tool-result-" in shown


def test_we_read_the_tool_calls_verls_hermes_parser_reads(tokenizer_dir):
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    ids = tokenizer.encode(response(conversation(RESULTS["failed"])))
    _, verls = asyncio.run(ToolParser.get_tool_parser("hermes", tokenizer).extract_tool_calls(ids))
    decoded = tokenizer.decode(ids, skip_special_tokens=True)  # what verl's reward manager passes us
    read = read_completion(hermes_messages(decoded))
    assert read.completion == REPLY and read.trajectory is not None
    ours = [s for s in read.trajectory.steps if isinstance(s, CallStep)]
    assert [(c.name, json.loads(c.arguments)) for c in ours] == [
        (c.name, json.loads(c.arguments)) for c in verls
    ]
    assert [s.kind for s in read.trajectory.steps] == ["text", "call", "result"]


async def test_multi_turn_rollouts_are_grouped_by_prompt(tokenizer_dir, monkeypatch, tmp_path):
    judge = ComparingBackend(lambda text: float("709,037" in text))
    monkeypatch.setattr(
        judge_verl, "create_judge_reward", lambda config: JudgeRewardSystem(config, backend=judge)
    )
    settings = loop.reward_yaml(  # no start-up check: every request the judge gets is a reward's
        tmp_path, use_cache=False, reward_timeout=5, group={"mode": "pairwise"}, startup_check="off"
    )
    config = loop.trainer_config(
        tokenizer_dir, *loop.our_function("compute_score_async", settings, f"{loop.KWARGS_KEY}.group_size=2")
    )
    replies = [(REPLY, "I could not find it."), ("Oslo: 709,037.", "Unknown.")]  # index 0's, index 1's
    rows = [  # two prompts' rollouts, interleaved
        multi_turn(RESULTS["supported"], 0, replies[0][0]),
        multi_turn(RESULTS["failed"], 1, replies[1][1]),
        multi_turn(RESULTS["failed"], 0, replies[0][1]),
        multi_turn(RESULTS["supported"], 1, replies[1][0]),
    ]
    rm_scores, extra = await loop.run_reward_loop(config, loop.rollout(tokenizer_dir, rows))
    rewards = loop.rewards_of(rm_scores)
    assert rewards[0] > rewards[2] and rewards[3] > rewards[1]
    assert extra["reason"].tolist() == ["pairwise"] * 4
    compared = sorted(sorted(r.responses) for r in judge.requests)
    assert compared == sorted(sorted(pair) for pair in replies for _ in "ab")  # each group's, both orders
