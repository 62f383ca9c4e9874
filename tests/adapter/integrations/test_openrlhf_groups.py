"""``/get_reward`` with a ``group:`` block: the queries of a request judged per prompt, together.

In-process judge (plumbing, never quality): of two responses it prefers the one with more "+"
signs, the first shown on a tie; alone, a completion is FakeBackend's (the label in it: 1.0).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from adapter.http import JudgeItem
from adapter.integrations.openrlhf import create_app, prompt_groups
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.fake_backend import ComparingBackend

TEMPLATE = "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
SLOGAN = "Write a slogan for a bakery."
MOTTO = "Write a motto for a library."


def prefers_marked() -> ComparingBackend:
    """Prefers the response with more "+" (ties: the first shown); keeps the comparisons asked."""
    return ComparingBackend(lambda text: text.count("+"))


def _payload(samples: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    prompts = [TEMPLATE.format(question=q) for q, _, _ in samples]
    queries = [p + r + "<|im_end|>" for p, (_, r, _) in zip(prompts, samples, strict=True)]
    return {"query": queries, "prompts": prompts, "labels": [label for _, _, label in samples]}


@pytest.fixture
def judge() -> ComparingBackend:
    """The in-process judge behind ``rm``."""
    return prefers_marked()


@pytest.fixture
def rm(tmp_path, judge, request) -> Iterator[str]:
    """/get_reward's URL; the ``group:`` block comes from the test's parameter (None: no block)."""
    group = getattr(request, "param", {"mode": "pairwise"})
    config: dict[str, Any] = {
        "use_cache": False,
        "batch_wait": 0.01,
        "reward_timeout": 5,
        "cache_dir": str(tmp_path),
    }
    if group is not None:
        config["group"] = group
    with ApiServer(create_app(config, backend=judge)) as server:
        yield f"{server.url}/get_reward"


def test_interleaved_prompts_are_judged_per_prompt_and_answered_in_order(rm, judge):
    samples = [
        (SLOGAN, "Fresh bread +", ""),
        (MOTTO, "Read more +++", ""),
        (SLOGAN, "Warm loaves +++", ""),
        (MOTTO, "Quiet please", ""),
    ]
    reply = httpx.post(rm, json=_payload(samples), timeout=30)
    assert reply.status_code == 200, reply.text
    rewards = reply.json()["rewards"]
    assert rewards[2] > rewards[0] and rewards[1] > rewards[3]  # each prompt's better member first
    assert reply.json()["extra_logs"]["judge_source"] == [0.0] * 4
    # two comparisons per prompt (both orders), each of one prompt's members, under that prompt
    slogans, mottos = {"Fresh bread +", "Warm loaves +++"}, {"Read more +++", "Quiet please"}
    asked = sorted(
        (SLOGAN in c.prompt, set(c.responses) == (slogans if SLOGAN in c.prompt else mottos))
        for c in judge.comparisons
    )
    assert asked == [(False, True), (False, True), (True, True), (True, True)]


def test_a_judge_that_always_prefers_the_first_shown_gives_a_group_one_reward(rm, judge):
    samples = [(q, f"{q[:5]} answer {k}", "") for k in range(3) for q in (SLOGAN, MOTTO)]
    rewards = httpx.post(rm, json=_payload(samples), timeout=30).json()["rewards"]
    assert len(judge.comparisons) == 2 * 6  # per prompt: 3 pairs, both orders
    slogans, mottos = rewards[0::2], rewards[1::2]
    assert slogans == pytest.approx([slogans[0]] * 3) and mottos == pytest.approx([mottos[0]] * 3)


@pytest.mark.parametrize("rm", [None, {"mode": "pointwise"}], indirect=True, ids=["no_group", "pointwise"])
def test_without_a_comparing_group_mode_each_query_is_judged_alone(rm, judge):
    samples = [(SLOGAN, "It is 4 +", "4"), (SLOGAN, "It is 5 +++", "4")]
    rewards = httpx.post(rm, json=_payload(samples), timeout=30).json()["rewards"]
    assert rewards == [1.0, 0.0] and judge.comparisons == []


@pytest.mark.parametrize(
    ("keys", "groups"),
    [
        ([], []),
        ([("a", "1", None)], [[0]]),
        ([("a", "1", None), ("b", "1", None), ("a", "1", None), ("b", "1", None)], [[0, 2], [1, 3]]),
        ([("a", "1", None), ("a", "2", None), ("a", "1", None)], [[0, 2], [1]]),  # another label
        ([("a", "1", None), ("a", "1", "NUMBER")], [[0], [1]]),  # another answer type
    ],
)
def test_prompt_groups(keys, groups):
    items = [JudgeItem(prompt=p, completion="c", answer=a, answer_type=t) for p, a, t in keys]
    assert prompt_groups(items) == groups


def test_a_group_deadline_openrlhf_would_not_wait_for_is_refused():
    create_app({"reward_timeout": 120, "group": {"mode": "pairwise", "deadline": 50}})
    create_app({"reward_timeout": 120, "group": {"mode": "pointwise", "deadline": 60}})  # never compares
    with pytest.raises(JudgeConfigError, match=r"group.deadline 60 s \+ reward_timeout 120 s: .* at most 170"):
        create_app({"reward_timeout": 120, "group": {"mode": "listwise", "deadline": 60}})


def _one_at_a_time_rm(tmp_path, judge, **collect: Any) -> ApiServer:
    config = {"use_cache": False, "batch_wait": 0.01, "reward_timeout": 5, "cache_dir": str(tmp_path),
              "group": {"mode": "pairwise"}}  # fmt: skip
    return ApiServer(create_app(config, backend=judge, **collect))


def test_samples_posted_one_per_request_are_collected_into_their_prompts_group(tmp_path, judge):
    """OpenRLHF 0.11 posts one sample per /get_reward: --group-size gathers a prompt's samples."""
    samples = [(SLOGAN, "Fresh bread +", ""), (MOTTO, "Read more +++", ""), (SLOGAN, "Warm loaves +++", ""),
               (MOTTO, "Quiet please", "")]  # fmt: skip
    with _one_at_a_time_rm(tmp_path, judge, group_size=2, group_window=30) as server, ThreadPoolExecutor(4) as pool:
        # four concurrent requests of one sample each
        replies = list(pool.map(lambda s: httpx.post(f"{server.url}/get_reward", json=_payload([s]), timeout=60), samples))
    rewards = [r.json()["rewards"][0] for r in replies]
    assert all(r.status_code == 200 for r in replies)
    assert rewards[2] > rewards[0] and rewards[1] > rewards[3]  # each judged against its prompt's other sample
    assert {tuple(sorted(c.responses)) for c in judge.comparisons} == {
        ("Fresh bread +", "Warm loaves +++"), ("Quiet please", "Read more +++")}  # fmt: skip


def test_a_group_that_never_fills_is_judged_when_its_window_ends(tmp_path, judge):
    with _one_at_a_time_rm(tmp_path, judge, group_size=8, group_window=0.5) as server:
        reply = httpx.post(f"{server.url}/get_reward", json=_payload([(SLOGAN, "Fresh bread +", "bread")]), timeout=30)
    assert reply.status_code == 200 and reply.json()["rewards"] == [1.0]  # a group of one: judged alone
    assert judge.comparisons == []


@pytest.mark.parametrize(
    ("collect", "problem"),
    [({"group_size": 0}, "--group-size"), ({"group_size": 8, "group_window": 0}, "--group-window"),
     ({"group_size": 8, "group_window": 120}, "group window 120 s")],
)
def test_collection_settings_that_cannot_work_are_config_errors(tmp_path, judge, collect, problem):
    with pytest.raises(JudgeConfigError, match=problem):
        _one_at_a_time_rm(tmp_path, judge, **collect)
