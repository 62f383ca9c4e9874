"""verl's own reward loop (verl 0.9.1, installed by scripts/setup.sh) calling our reward functions.

The trainer config is composed from verl's own ``ppo_trainer.yaml`` with the overrides a
user passes to ``python -m verl.trainer.main_ppo``; verl's ``RewardLoopWorker`` (the worker
its trainer runs as a Ray actor) loads our function through ``get_custom_reward_fn`` and
scores a batch laid out as verl's agent loop lays it out. Here the worker runs in-process
against the fake judge and, once, the real judge (e2e); the slow test runs verl's
``RewardLoopManager`` with its Ray actor.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from omegaconf import DictConfig
from verl.experimental.reward_loop import RewardLoopWorker
from verl.experimental.reward_loop.reward_manager.limited import RateLimitedRewardManager
from verl.trainer.ppo.metric_utils import process_validation_metrics
from verl.trainer.ppo.reward import get_custom_reward_fn, resolve_reward_manager_cls
from verl.utils.reward_score import default_compute_score

from adapter import JudgeRewardSystem
from adapter.integrations import verl as judge_verl
from adapter.integrations.group_collector import GroupCollector
from judge_vllm.errors import JudgeConfigError, JudgeError
from judge_vllm.testing.fake_backend import ComparingBackend
from judge_vllm.testing.fake_server import FaultPlan
from verl_loop import (
    KWARGS_KEY,
    NAME_KEY,
    Row,
    composed_config,
    our_function,
    reward_yaml,
    rewards_of,
    rollout,
    run_reward_loop,
    trainer_config,
    write_tokenizer,
)

REPO = Path(__file__).resolve().parents[3]
KEYS = {"score", "source", "reason", "confidence", "judge_latency_ms", "fallback"}


# The fake judge scores 5 (reward 1) when the reference appears in the response, else 1 (reward 0).
ROWS = [
    Row("What is 2+2?", "The answer is 4.", "4", {"answer_type": "NUMBER"}),
    Row("What is 2+3?", "It is 6.", "5", {"answer_type": "NUMBER"}),
    Row("Capital of France?", "Paris, of course.", np.array(["Lutetia", "Paris"])),  # any of them
    Row("Capital of Italy?", "", "Rome"),  # an empty response: decided by rule, no judge call
]
EXPECTED_SCORES = [1.0, 0.0, 1.0, 0.0]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tokenizer(tmp_path_factory.mktemp("policy"), [row.question + row.response for row in ROWS])


@pytest.fixture(autouse=True)
def fresh_adapters(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test builds the shared adapters from its own environment; closed before its judge stops."""
    for var in (judge_verl.CONFIG_ENV, "JUDGE_MODEL_URL", "JUDGE_MODEL_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    judge_verl.close_adapter()
    yield
    judge_verl.close_adapter()


def documented_overrides() -> list[str]:
    """The reward overrides of the verl command in docs/integrations.md, as a user copies them."""
    text = (REPO / "docs" / "integrations.md").read_text()
    section = text.split("\n## verl\n", 1)[1].split("\n## ", 1)[0]
    command = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [word.replace("$PWD", str(REPO)) for word in command.split() if "custom_reward_function" in word]


def test_public_api():
    documented = {"compute_score", "compute_score_async", "get_adapter", "close_adapter", "REWARD_KWARGS"}
    assert documented <= set(judge_verl.__all__)
    assert all(hasattr(judge_verl, name) for name in judge_verl.__all__)


async def test_the_documented_command_scores_with_the_judge(tokenizer_dir, fake_judge, monkeypatch, tmp_path):
    """docs/integrations.md's overrides and configs/verl.yaml, through verl's own reward loop."""
    monkeypatch.setenv("HOME", str(tmp_path))  # the shipped config caches under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    overrides = documented_overrides()
    assert f"{NAME_KEY}=compute_score_async" in overrides  # the recommended entry point
    config = composed_config(tokenizer_dir, *overrides)
    assert get_custom_reward_fn(config).args[:2] == (
        judge_verl.compute_score_async,
        {"config": str(REPO / "configs" / "verl.yaml")},
    )
    rm_scores, extra = await run_reward_loop(config, rollout(tokenizer_dir, ROWS))
    assert rewards_of(rm_scores) == EXPECTED_SCORES
    assert extra["source"].tolist() == ["judge", "judge", "judge", "rule"]


@pytest.mark.parametrize("name", ["compute_score_async", "compute_score"])
async def test_verls_reward_loop_gets_rewards_and_extra_info(tokenizer_dir, fake_judge, tmp_path, name):
    config = trainer_config(
        tokenizer_dir, *our_function(name, reward_yaml(tmp_path, judge_url=fake_judge.url))
    )
    data = rollout(tokenizer_dir, ROWS)
    rm_scores, extra = await run_reward_loop(config, data)
    assert rewards_of(rm_scores) == EXPECTED_SCORES
    assert set(extra) == KEYS
    assert extra["score"].tolist() == EXPECTED_SCORES
    assert extra["source"].tolist() == ["judge", "judge", "judge", "rule"]
    assert extra["reason"].tolist()[:3] == ["", "", ""] and extra["reason"][3]  # why the rule decided
    assert extra["fallback"].tolist() == [False] * 4
    assert [c is None for c in extra["confidence"]] == [False, False, False, True]
    # verl's validation metrics: a mean per numeric key; None (no confidence) is left out
    metrics = process_validation_metrics(data.non_tensor_batch["data_source"], ["u"] * 4, extra)
    by_key = metrics["judge-vllm/test"]
    assert by_key["score"]["mean@4"] == pytest.approx(0.5)
    assert by_key["confidence"]["mean@3"] == pytest.approx(1.0)
    assert "source" not in by_key and "reason" not in by_key


async def test_the_async_entry_point_sends_a_workers_items_in_one_judge_call(
    tokenizer_dir, fake_judge, tmp_path
):
    # 3 judged rows, one of them with two references: 4 items; the batch leaves when full
    judge = reward_yaml(
        tmp_path, judge_url=fake_judge.url, max_batch_size=4, batch_wait=10.0, startup_check="off"
    )
    config = trainer_config(tokenizer_dir, *our_function("compute_score_async", judge))
    await run_reward_loop(config, rollout(tokenizer_dir, ROWS))  # no start-up check: every call counted
    assert fake_judge.counts["/v1/chat/completions/batch"] == 1 and fake_judge.counts["ok"] == 1


async def test_reward_kwargs_config_wins_over_the_environment(
    tokenizer_dir, fake_judge, monkeypatch, tmp_path
):
    dead = reward_yaml(tmp_path, judge_url="http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv(judge_verl.CONFIG_ENV, str(dead))
    config = trainer_config(
        tokenizer_dir, *our_function("compute_score_async", reward_yaml(tmp_path, judge_url=fake_judge.url))
    )
    _, extra = await run_reward_loop(config, rollout(tokenizer_dir, ROWS[:1]))
    assert extra["source"].tolist() == ["judge"]


async def test_reward_kwargs_answer_type_and_a_misspelt_one(tokenizer_dir, fake_judge, tmp_path, caplog):
    judge = reward_yaml(tmp_path, judge_url=fake_judge.url)
    extra_kwargs = (f"{KWARGS_KEY}.answer_type=NUMBER", f"{KWARGS_KEY}.cofnig=x.yaml")
    config = trainer_config(tokenizer_dir, *our_function("compute_score_async", judge, *extra_kwargs))
    untyped = Row("What is 3+3?", "6", "6")  # extra_info names no answer_type
    with caplog.at_level(logging.WARNING, logger=judge_verl.__name__):
        rm_scores, _ = await run_reward_loop(config, rollout(tokenizer_dir, [untyped]))
    assert rewards_of(rm_scores) == [1.0]
    assert "Rubric for NUMBER answers" in str(fake_judge.last_body["messages"])
    assert [r.getMessage() for r in caplog.records if "cofnig" in r.getMessage()] == [
        "verl passed the keyword argument 'cofnig', which judge-vllm ignores; its reward_kwargs are "
        "config, answer_type, group_size, group_window"
    ]


def test_verl_0_9_ignores_the_old_top_level_keys(tokenizer_dir):
    """The keys our docs used before verl 0.9: main_ppo leaves them unread and scores with its own rules."""
    config = trainer_config(
        tokenizer_dir,
        "custom_reward_function.path=pkg://adapter.integrations.verl",
        "custom_reward_function.name=compute_score",
    )
    assert get_custom_reward_fn(config) is None
    assert RewardLoopWorker(config, None).reward_manager.compute_score is default_compute_score
    for gone in ("batch", "prime"):  # reward managers of verl <= 0.6
        with pytest.raises(ValueError, match=f"Unknown reward manager: {gone}"):
            resolve_reward_manager_cls(trainer_config(tokenizer_dir, f"reward.reward_manager.name={gone}"))


@pytest.mark.parametrize(
    ("ground_truth", "score", "reason"),
    [
        (np.array(["5", "4"]), 1.0, ""),  # any reference accepted
        (("5", "6"), 0.0, ""),
        (np.int64(4), 1.0, ""),
        ([], 0.0, "invalid_input"),  # nothing to compare with: a defined 0, with the reason
        ({"target": ["4"]}, 0.0, "invalid_input"),
    ],
)
def test_ground_truth_shapes(fake_judge, monkeypatch, tmp_path, ground_truth, score, reason):
    config = str(reward_yaml(tmp_path, judge_url=fake_judge.url, invalid_rows="zero"))
    result = judge_verl.compute_score(
        "gsm8k", "The answer is 4.", ground_truth, {"question": "2+2?"}, config=config
    )
    assert (result["score"], result["reason"]) == (score, reason)
    assert set(result) == KEYS


def test_ten_thousand_references_are_judged_against_the_first_few(fake_judge, tmp_path, caplog):
    config = str(reward_yaml(tmp_path, judge_url=fake_judge.url, startup_check="off"))  # every item counted
    references = ["7", "9", "4", *(str(n) for n in range(10, 10_007))]
    with caplog.at_level(logging.WARNING):
        result = judge_verl.compute_score(
            "gsm8k", "The answer is 4.", references, {"question": "2+2?"}, config=config
        )
    assert result["score"] == 1.0 and sum(fake_judge.judged_prompts.values()) <= judge_verl.MAX_REFERENCES
    assert "judging against the first 16" in caplog.text


@pytest.mark.parametrize(
    "extra_info", [["not", "a", "dict"], "a string", 42], ids=["list", "string", "number"]
)
def test_extra_info_that_is_not_a_mapping_is_ignored(fake_judge, tmp_path, extra_info):
    config = str(reward_yaml(tmp_path, judge_url=fake_judge.url))
    result = judge_verl.compute_score("gsm8k", "The answer is 4.", "4", extra_info, config=config)
    assert result["score"] == 1.0 and set(result) == KEYS


def test_a_rubric_in_extra_info_is_judged_against_its_criteria_not_the_ground_truth(fake_judge, tmp_path):
    config = str(reward_yaml(tmp_path, judge_url=fake_judge.url, startup_check="off"))  # every item counted
    extra_info = {"question": "Fever?", "rubric": ["Recommends rest", "Mentions a doctor"]}
    result = judge_verl.compute_score("advice", "Rest.", None, extra_info, config=config)
    assert set(result) == KEYS and result["source"] == "judge" and 0.0 <= result["score"] <= 1.0
    assert sum(fake_judge.judged_prompts.values()) == 2  # one judgment per criterion


async def test_a_judge_failure_without_fallback_stops_verls_step(tokenizer_dir, fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(error_rate=1.0))  # from the first reward on: no start-up check
    judge = reward_yaml(tmp_path, judge_url=fake_judge.url, fallback_to_rule=False, startup_check="off")
    config = trainer_config(tokenizer_dir, *our_function("compute_score_async", judge))
    with pytest.raises(JudgeError, match="verl cannot mask a missing reward"):
        await run_reward_loop(config, rollout(tokenizer_dir, ROWS[:1]))


@pytest.mark.parametrize("fallback", [True, False])
async def test_verls_rate_limited_manager_under_a_judge_outage(
    tokenizer_dir, fake_judge, monkeypatch, tmp_path, fallback
):
    """With the fallback on, the rule answers with our keys; off, verl turns our error into 0.0
    under other keys (which verl cannot stack with the other items' keys)."""
    monkeypatch.setattr(RateLimitedRewardManager, "_class_initialized", False)  # its limits are per process
    fake_judge.set_plan(FaultPlan(error_rate=1.0))  # from the first reward on: no start-up check
    judge = reward_yaml(tmp_path, judge_url=fake_judge.url, fallback_to_rule=fallback, startup_check="off")
    overrides = our_function("compute_score_async", judge, "reward.reward_manager.name=rate_limited")
    worker = RewardLoopWorker(trainer_config(tokenizer_dir, *overrides), None)
    [output] = await worker.compute_score_batch(rollout(tokenizer_dir, ROWS[:1]))
    info = output["reward_extra_info"]
    if fallback:
        assert output["reward_score"] == 1.0 and set(info) == KEYS and info["source"] == "rule_fallback"
    else:
        assert output["reward_score"] == 0.0 and set(info) == {"error", "acc"}
        assert "set fallback_to_rule: true" in info["error"]


def test_one_adapter_per_process_and_config_built_lazily(fake_judge, monkeypatch, tmp_path):
    monkeypatch.setenv(judge_verl.CONFIG_ENV, str(reward_yaml(tmp_path, judge_url=fake_judge.url)))
    with ThreadPoolExecutor(8) as pool:
        adapters = list(pool.map(lambda _: judge_verl.get_adapter(), range(8)))
    assert all(a is adapters[0] for a in adapters)
    assert adapters[0].config.judge_url == fake_judge.url and adapters[0].config.mode == "fast"
    judge_verl.compute_score("gsm8k", "4", "4", None)
    assert judge_verl.get_adapter() is adapters[0]
    other = str(reward_yaml(tmp_path, judge_url=fake_judge.url, mode="verdict"))
    assert judge_verl.get_adapter(config=other).config.mode == "verdict"
    judge_verl.close_adapter()
    assert judge_verl.get_adapter() is not adapters[0]


def test_without_a_config_file_the_env_vars_configure_it(fake_judge, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # the default cache directory lives under ~
    monkeypatch.setenv("JUDGE_MODEL_URL", fake_judge.url)
    monkeypatch.setenv("JUDGE_MAX_BATCH_SIZE", "3")
    score = judge_verl.compute_score("gsm8k", "The answer is 4.", "4", {"answer_type": "NUMBER"})
    assert judge_verl.get_adapter().config.max_batch_size == 3
    assert score["score"] == 1.0 and score["source"] == "judge"


def test_a_config_that_is_not_a_path_is_refused_with_the_reason(fake_judge):
    with pytest.raises(JudgeError, match=r"reward_kwargs\.config must be the path of a reward YAML file"):
        judge_verl.compute_score("gsm8k", "4", "4", None, config={"judge_url": fake_judge.url})


@pytest.mark.parametrize("opt_in", [True, False])
def test_verls_reward_router_is_the_judge_only_when_the_config_opts_in(fake_judge, tmp_path, opt_in):
    dead = "http://127.0.0.1:9"  # nothing listens: only the router address can answer
    config = str(reward_yaml(tmp_path, judge_url=dead, verl_reward_router=opt_in, startup_check="off"))
    router = fake_judge.url.removeprefix("http://")  # verl passes host:port
    score = judge_verl.compute_score(
        "gsm8k", "The answer is 4.", "4", None, config=config, reward_router_address=router
    )
    assert judge_verl.get_adapter(config=config).config.judge_url == (fake_judge.url if opt_in else dead)
    assert score["source"] == ("judge" if opt_in else "rule_fallback")


@pytest.mark.slow
def test_verls_reward_loop_manager_with_its_ray_actor(tokenizer_dir, fake_judge, tmp_path):
    """The trainer's own path: RewardLoopManager starts a RewardLoopWorker actor in Ray, which
    finds our reward config through verl's config alone (no environment variable)."""
    import ray
    from verl.experimental.reward_loop import RewardLoopManager

    judge = reward_yaml(tmp_path, judge_url=fake_judge.url)
    config = trainer_config(
        tokenizer_dir, *our_function("compute_score_async", judge), "reward.num_workers=1"
    )
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        output = RewardLoopManager(config).compute_rm_score(rollout(tokenizer_dir, ROWS))
    finally:
        ray.shutdown()
    assert rewards_of(output.batch["rm_scores"]) == EXPECTED_SCORES
    assert set(output.meta_info["reward_extra_keys"]) == KEYS
    assert output.non_tensor_batch["source"].tolist() == ["judge", "judge", "judge", "rule"]


@pytest.mark.e2e
async def test_verls_reward_loop_with_the_real_judge(judge_url, tmp_path):
    tokenizer = write_tokenizer(tmp_path / "policy", [row.question + row.response for row in ROWS])
    # a judge failure must raise here, not hide behind the rule reward
    judge = reward_yaml(tmp_path, judge_url=judge_url, reward_timeout=600, max_retries=2, fallback_to_rule=False)
    rm_scores, extra = await run_reward_loop(
        trainer_config(tokenizer, *our_function("compute_score_async", judge)), rollout(tokenizer, ROWS)
    )
    rewards = rewards_of(rm_scores)
    assert extra["source"].tolist() == ["judge", "judge", "judge", "rule"]
    assert judge_verl.get_adapter(config=str(judge)).get_metrics()["model"] == "smollm2"
    assert all(0.0 <= r <= 1.0 for r in rewards) and rewards[3] == 0.0
    assert all(isinstance(c, float) and 0.0 < c <= 1.0 for c in extra["confidence"][:3])
    assert extra["fallback"].tolist() == [False] * 4


# -- group judging (a ``group:`` block): the responses of one prompt judged together ----------

SLOGAN = "Write a slogan for a bakery."
MOTTO = "Write a motto for a library."
# Two prompts x 3 responses, interleaved: grouping reads the prompt, never the position.
GROUP_ROWS = [
    Row(SLOGAN, "fresh +", "", {"index": 0}),
    Row(MOTTO, "quiet", "", {"index": 1}),
    Row(SLOGAN, "warm +++", "", {"index": 0}),
    Row(MOTTO, "read ++", "", {"index": 1}),
    Row(SLOGAN, "crumbs", "", {"index": 0}),
    Row(MOTTO, "books +", "", {"index": 1}),
]


def marks(text: str) -> float:
    """``ComparingBackend``'s preference: the response with more "+" signs wins."""
    return float(text.count("+"))


@pytest.fixture
def comparing(monkeypatch: pytest.MonkeyPatch) -> ComparingBackend:
    """The judge of every adapter built in the test: in-process, prefers more "+" (ties: the first
    shown); ``comparing.preference = lambda text: 0.0`` makes it prefer whatever it is shown first."""
    judge = ComparingBackend(marks)
    # No start-up check: the tests read every request the judge gets, each a reward's.
    off = {"startup_check": "off"}
    monkeypatch.setattr(
        judge_verl,
        "create_judge_reward",
        lambda config: JudgeRewardSystem(config.model_copy(update=off), backend=judge),
    )
    return judge


def grouped(tmp_path: Path, tokenizer_dir: Path, *extra: str, **group: Any) -> DictConfig:
    """A trainer config whose reward config judges groups (``group``, default pairwise)."""
    judge = reward_yaml(tmp_path, use_cache=False, reward_timeout=5, group={"mode": "pairwise", **group})
    return trainer_config(tokenizer_dir, *our_function("compute_score_async", judge, *extra))


@pytest.mark.parametrize("mode", ["pairwise", "listwise"])
async def test_verls_reward_loop_judges_each_prompts_responses_together(
    tokenizer_dir, comparing, tmp_path, mode
):
    config = grouped(
        tmp_path,
        tokenizer_dir,
        "actor_rollout_ref.rollout.n=3",
        f"{KWARGS_KEY}.group_size=${{actor_rollout_ref.rollout.n}}",  # as docs/integrations.md sets it
        f"{KWARGS_KEY}.group_window=60",
        mode=mode,
    )
    assert get_custom_reward_fn(config).args[1]["group_size"] == 3
    started = time.monotonic()
    rm_scores, extra = await run_reward_loop(config, rollout(tokenizer_dir, GROUP_ROWS))
    assert time.monotonic() - started < 30  # full groups are judged at once, not after the window
    slogans, mottos = rewards_of(rm_scores)[0::2], rewards_of(rm_scores)[1::2]
    assert slogans[1] > slogans[0] > slogans[2] and mottos[1] > mottos[2] > mottos[0]
    assert set(extra) == KEYS and extra["reason"].tolist() == [mode] * 6
    by_prompt = {
        SLOGAN: {r.response for r in GROUP_ROWS[0::2]},
        MOTTO: {r.response for r in GROUP_ROWS[1::2]},
    }
    assert comparing.requests and all(set(r.responses) <= by_prompt[r.prompt] for r in comparing.requests)


def documented_group_example() -> tuple[dict[str, Any], list[str]]:
    """The worked GRPO example of docs/integrations.md's verl section: its reward config's
    ``group:`` block and its command's overrides, as a user copies them."""
    text = (REPO / "docs" / "integrations.md").read_text()
    section = text.split("\n## verl\n", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```")[1::2]  # the fenced blocks: "yaml\n...", "bash\n..."
    group = next(
        yaml.safe_load(b.removeprefix("yaml\n")) for b in blocks if b.startswith("yaml") and "group:" in b
    )
    command = next(b.removeprefix("bash\n") for b in blocks if b.startswith("bash") and "group_size" in b)
    words = shlex.split(command.replace("\\\n", " "), comments=True)
    return group, [w.replace("$PWD", str(REPO)) for w in words if "=" in w]


async def test_the_documented_grpo_example_judges_groups_through_verls_reward_loop(
    tokenizer_dir, comparing, tmp_path
):
    group, overrides = documented_group_example()
    judge = reward_yaml(tmp_path, use_cache=False, reward_timeout=5, **group)
    config = trainer_config(
        tokenizer_dir,
        *(f"{KWARGS_KEY}.config={judge}" if o.startswith(f"{KWARGS_KEY}.config=") else o for o in overrides),
    )
    assert config.reward.num_workers == 1 and config.algorithm.adv_estimator == "grpo"
    kwargs = get_custom_reward_fn(config).args[1]
    assert kwargs == {"config": str(judge), "group_size": 8, "group_window": 30}
    rows = [Row(SLOGAN, f"slogan {'+' * k}", "", {"index": 0}) for k in range(8)]
    rows += [Row(MOTTO, f"motto {'+' * (7 - k)}", "", {"index": 1}) for k in range(8)]
    started = time.monotonic()
    rm_scores, extra = await run_reward_loop(config, rollout(tokenizer_dir, rows))
    assert time.monotonic() - started < kwargs["group_window"]  # both groups full: judged at once
    rewards = rewards_of(rm_scores)
    assert rewards[:8] == sorted(rewards[:8]) and rewards[8:] == sorted(rewards[8:], reverse=True)
    assert rewards[7] > rewards[0] and extra["reason"].tolist() == ["pairwise"] * 16


async def test_a_judge_that_prefers_the_first_shown_gives_every_member_the_same_reward(
    tokenizer_dir, comparing, tmp_path
):
    comparing.preference = lambda text: 0.0
    config = grouped(tmp_path, tokenizer_dir, f"{KWARGS_KEY}.group_size=3")
    rm_scores, _ = await run_reward_loop(config, rollout(tokenizer_dir, GROUP_ROWS))
    rewards = rewards_of(rm_scores)
    assert rewards[0::2] == [rewards[0]] * 3 and rewards[1::2] == [rewards[1]] * 3
    assert len(comparing.requests) == 12  # each prompt: 3 pairs, both orders


async def test_verls_reward_loop_rewards_130_responses_of_one_prompt(tokenizer_dir, comparing, tmp_path):
    """Issue 41: a group of 130 (more than group.max_members, 128) raised JudgeError in each of
    its 130 compute_score_async calls. Now each gets a score, compared in sub-groups."""
    comparing.preference = lambda text: 0.0  # prefers the first shown: every member the same
    config = grouped(tmp_path, tokenizer_dir, f"{KWARGS_KEY}.group_size=130", f"{KWARGS_KEY}.group_window=60")
    rows = [Row(SLOGAN, f"fresh loaf {k}", "", {"index": 0}) for k in range(130)]
    started = time.monotonic()
    rm_scores, extra = await run_reward_loop(config, rollout(tokenizer_dir, rows))
    assert time.monotonic() - started < 30  # the full group is judged at once, not after the window
    assert rewards_of(rm_scores) == [0.5] * 130
    assert extra["source"].tolist() == ["judge"] * 130
    assert extra["reason"].tolist() == ["pairwise_subgroup"] * 130


async def test_a_partial_group_is_judged_when_its_window_passes_and_a_lone_one_on_its_own(
    tokenizer_dir, comparing, tmp_path
):
    config = grouped(tmp_path, tokenizer_dir, f"{KWARGS_KEY}.group_size=4", f"{KWARGS_KEY}.group_window=0.5")
    lone = Row("What is 2+2?", "The answer is 4.", "4", {"index": 7})
    started = time.monotonic()
    rm_scores, extra = await run_reward_loop(config, rollout(tokenizer_dir, [*GROUP_ROWS[:4], lone]))
    assert 0.5 <= time.monotonic() - started < 10
    rewards = rewards_of(rm_scores)
    assert rewards[2] > rewards[0] and rewards[3] > rewards[1]  # two groups of two, compared
    assert extra["reason"].tolist() == ["pairwise"] * 4 + [""]
    assert rewards[4] == 1.0 and extra["source"][4] == "judge"  # judged on its own: the reference matched
    assert judge_verl._groups.collecting == 0


async def test_every_reference_judges_the_group_and_the_best_counts(comparing, tmp_path):
    config = str(reward_yaml(tmp_path, use_cache=False, reward_timeout=5, group={"mode": "pairwise"}))
    info = {"question": SLOGAN, "index": 0}
    scores = await asyncio.gather(
        *(
            judge_verl.compute_score_async("d", text, ["ref", "other"], info, config=config, group_size=2)
            for text in ("fresh +", "warm +++")
        )
    )
    assert scores[1]["score"] > scores[0]["score"] and {s["reason"] for s in scores} == {"pairwise"}
    assert {r.answer for r in comparing.requests} == {"ref", "other"} and len(comparing.requests) == 4


async def test_without_index_or_question_each_response_is_judged_on_its_own(comparing, tmp_path, caplog):
    config = str(reward_yaml(tmp_path, use_cache=False, reward_timeout=5, group={"mode": "pairwise"}))
    with caplog.at_level(logging.WARNING, logger=judge_verl.__name__):
        scores = await asyncio.gather(
            *(
                judge_verl.compute_score_async("d", t, "4", {}, config=config, group_size=2)
                for t in ("The answer is 4.", "I think it is 5.")
            )
        )
    assert [s["score"] for s in scores] == [1.0, 0.0] and {s["reason"] for s in scores} == {""}
    assert "neither 'index' nor 'question'" in caplog.text
    assert len(comparing.requests) == 2 and not any(r.responses for r in comparing.requests)  # no comparison


def test_the_sync_entry_point_judges_on_its_own_and_says_so(comparing, tmp_path, caplog):
    config = str(reward_yaml(tmp_path, use_cache=False, reward_timeout=5, group={"mode": "pairwise"}))
    with caplog.at_level(logging.WARNING, logger=judge_verl.__name__):
        score = judge_verl.compute_score("d", "4", "4", {"question": "2+2?"}, config=config, group_size=2)
    assert score["score"] == 1.0 and "needs compute_score_async" in caplog.text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"group_size": 0}, "group_size must be the responses per prompt"),
        ({"group_size": "8"}, "group_size must be the responses per prompt"),
        ({"group_window": -1}, "group_window must be seconds"),
    ],
)
async def test_bad_group_kwargs_are_refused_with_the_reason(comparing, tmp_path, kwargs, message):
    config = str(reward_yaml(tmp_path, use_cache=False, group={"mode": "pairwise"}))
    with pytest.raises(JudgeConfigError, match=message):
        await judge_verl.compute_score_async("d", "x", "4", {"question": "q"}, config=config, **kwargs)


# -- GroupCollector, on its own --------------------------------------------------------------


async def test_the_collector_judges_a_full_group_once_and_answers_each_member():
    calls: list[list[str]] = []

    async def judge(members: list[str]) -> list[str]:
        calls.append(members)
        return [m.upper() for m in members]

    collector: GroupCollector[str, str] = GroupCollector(judge)
    results = await asyncio.gather(*(collector.submit(k % 2, m, 2, 60.0) for k, m in enumerate("abcd")))
    assert results == ["A", "B", "C", "D"] and sorted(calls) == [["a", "c"], ["b", "d"]]
    late = await asyncio.gather(collector.submit(0, "e", 2, 0.05), collector.submit(0, "f", None, 60.0))
    assert late == ["E", "F"] and calls[-1] == ["e", "f"]  # the first member's window counts
    assert collector.collecting == 0


async def test_the_collector_gives_every_member_the_judges_error_and_survives_a_cancelled_caller():
    async def failing(members: list[str]) -> list[str]:
        raise JudgeError("judge down")

    collector: GroupCollector[str, str] = GroupCollector(failing)
    outcomes = await asyncio.gather(
        *(collector.submit("k", m, 2, 60.0) for m in "ab"), return_exceptions=True
    )
    assert [str(o) for o in outcomes] == ["judge down", "judge down"]

    async def echo(members: list[str]) -> list[str]:
        return members

    collector = GroupCollector(echo)
    gone = asyncio.ensure_future(collector.submit("k", "a", 2, 0.1))
    await asyncio.sleep(0)
    gone.cancel()
    assert await collector.submit("k", "b", 2, 0.1) == "b"
