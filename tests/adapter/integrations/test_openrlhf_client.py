"""OpenRLHF 0.11.2's own reward client against ``judge-vllm openrlhf-rm`` and the shipped reward_func.

The code under test on OpenRLHF's side is ``openrlhf/utils/agent.py`` from the installed wheel
(scripts/setup.sh): ``SingleTurnAgentExecutor`` loads a ``.py`` ``--reward.remote_url`` with
its own loader, or posts to the URL through ``_fetch_rewards_via_http`` (5 tries, 1 s apart),
and ``execute`` turns the reply into the sample's reward. It is loaded without
``openrlhf/utils/__init__.py``, which imports OpenRLHF's tokenizer and math helpers
(transformers, sympy, pylatexenc) and nothing the reward client uses. vLLM and the tokenizer
are stand-ins: a scripted engine and a tokenizer of one token per character.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from adapter.cli import main as judge_vllm_main
from adapter.integrations import openrlhf_inprocess
from adapter.integrations.openrlhf import create_app
from adapter.integrations.openrlhf_protocol import FALLBACK_REASON_CODES
from judge_vllm.errors import JudgeTimeoutError, JudgeUnavailableError
from judge_vllm.testing.asgi_server import ApiServer
from judge_vllm.testing.fake_backend import ComparingBackend
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan
from judge_vllm.testing.ports import free_port
from openrlhf_client import EXTRA_LOGS, TEMPLATE, load_openrlhf_agent, openrlhf_rm_cli, rollouts, write_config


class NoWaitAsyncio:
    """``asyncio`` as agent.py sees it, with its 1 s pause between tries recorded, not waited."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture(scope="module")
def agent() -> ModuleType:
    return load_openrlhf_agent()


@pytest.fixture
def no_wait(agent, monkeypatch) -> NoWaitAsyncio:
    fake = NoWaitAsyncio()
    monkeypatch.setattr(agent, "asyncio", fake)
    return fake


@pytest.fixture(scope="module")
def module_judge() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer() as server:
        yield server


@pytest.fixture(scope="module")
def rm_cli(module_judge, tmp_path_factory) -> Iterator[str]:
    config = write_config(tmp_path_factory.mktemp("rm") / "openrlhf.yaml", module_judge.url)
    with openrlhf_rm_cli(config, "--max-batch", "8") as url:
        yield url


@pytest.fixture
def reward_func_path(capsys) -> Iterator[str]:
    """The shipped reward_func file, as ``judge-vllm openrlhf-rm --print-reward-func-path`` gives it."""
    assert judge_vllm_main(["openrlhf-rm", "--print-reward-func-path"]) == 0
    path = capsys.readouterr().out.strip()
    yield path
    openrlhf_inprocess.close_reward_system()


def closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


SAMPLES = [
    ("What is 6*7?", "The answer is 42.", "42"),
    ("Name the capital of France.", "It is Paris.", "Paris"),
    ("What is 3*3?", "It is 6.", "9"),
]


def test_openrlhfs_executor_scores_through_the_cli_server(agent, rm_cli):
    executor = agent.SingleTurnAgentExecutor(rm_cli)
    assert executor.reward_func is None  # a URL, not a file: OpenRLHF posts to it
    outputs = rollouts(executor, SAMPLES)
    # one query per request, so each reward is a one-item list (like OpenRLHF's serve_rm.py)
    assert [o["reward"] for o in outputs] == [[1.0], [1.0], [0.0]]
    assert [o["scores"] for o in outputs] == [[1.0], [1.0], [0.0]]
    for output in outputs:
        logs = output["extra_logs"]
        assert set(logs) == EXTRA_LOGS and all(len(values) == 1 for values in logs.values())
        # judged (no end-of-turn token taken for role spoofing), the fake judge's label confidence
        assert logs["judge_source"] == [0.0] and logs["judge_prechecked"] == [0.0]
        assert logs["judge_fallback_reason"] == [0.0] and 0.0 < logs["judge_confidence"][0] <= 1.0


def test_openrlhf_loads_and_calls_the_shipped_reward_func(
    agent, reward_func_path, module_judge, tmp_path, monkeypatch
):
    assert Path(reward_func_path).name == "openrlhf_reward_func.py"
    monkeypatch.setenv("JUDGE_REWARD_CONFIG", str(write_config(tmp_path / "c.yaml", module_judge.url)))
    executor = agent.SingleTurnAgentExecutor(reward_func_path)  # OpenRLHF's loader
    assert executor.reward_func is not None
    outputs = rollouts(executor, SAMPLES)
    rewards = [o["reward"] for o in outputs]
    # float tensors of one item each, as OpenRLHF's example reward_func returns
    assert all(r.dtype == torch.float32 and r.shape == (1,) for r in rewards)
    assert [r.item() for r in rewards] == [1.0, 1.0, 0.0]
    assert all(torch.equal(o["scores"], o["reward"]) for o in outputs)
    for output in outputs:
        assert set(output["extra_logs"]) == EXTRA_LOGS
        assert output["extra_logs"]["judge_source"].tolist() == [0.0]
    # a second executor (OpenRLHF executes the file again) shares the process's adapter
    system = openrlhf_inprocess.get_reward_system()
    again = rollouts(agent.SingleTurnAgentExecutor(reward_func_path), SAMPLES[:1])
    assert openrlhf_inprocess.get_reward_system() is system
    assert again[0]["extra_logs"]["judge_source"].tolist() == [1.0]  # the cache of that adapter


def test_reward_func_answer_type_from_the_environment(
    agent, reward_func_path, module_judge, tmp_path, monkeypatch
):
    monkeypatch.setenv("JUDGE_REWARD_CONFIG", str(write_config(tmp_path / "c.yaml", module_judge.url)))
    monkeypatch.setenv("JUDGE_ANSWER_TYPE", "NUMBER")
    (output,) = rollouts(
        agent.SingleTurnAgentExecutor(reward_func_path), [("What is 6*7?", "I won't say.", "42")]
    )
    # NUMBER expected and no number given: decided by a pre-check, never judged
    assert output["reward"].tolist() == [0.0]
    assert output["extra_logs"]["judge_prechecked"].tolist() == [1.0]
    assert output["extra_logs"]["judge_source"].tolist() == [2.0]


def test_reward_func_with_fallback_off_leaves_no_made_up_reward(
    agent, reward_func_path, tmp_path, monkeypatch, caplog
):
    judge_url = closed_port_url()
    config = write_config(tmp_path / "c.yaml", judge_url, fallback_to_rule=False, startup_check="warn")
    monkeypatch.setenv("JUDGE_REWARD_CONFIG", str(config))
    with caplog.at_level(logging.WARNING):
        (output,) = rollouts(agent.SingleTurnAgentExecutor(reward_func_path), SAMPLES[:1])
    # OpenRLHF catches the error and leaves the sample without a reward (its step then fails)
    assert output["reward"] is None and output["scores"] is None
    warned = [r.getMessage() for r in caplog.records if r.name == "adapter.integrations.openrlhf_inprocess"]
    assert warned[0].startswith(f"OpenRLHF reward_func: judge {judge_url} from {config} (rule fallback off)")
    assert "1 of 1 rewards unavailable (Judge unavailable)" in warned[1]


def test_openrlhfs_executor_gets_a_reward_for_each_of_130_samples_of_one_prompt(agent, no_wait, tmp_path):
    """Issue 41: a group of 130 (more than group.max_members, 128) collected by --group-size was a
    422, which OpenRLHF retried 5 times and then left every sample without a reward (the run
    failed). Now each sample gets its reward, compared in sub-groups."""
    judge = ComparingBackend()  # prefers the first shown: every member the same reward
    config = {"use_cache": False, "batch_wait": 0.01, "reward_timeout": 5, "cache_dir": str(tmp_path),
              "group": {"mode": "pairwise"}}  # fmt: skip
    numbers = itertools.count()
    with ApiServer(create_app(config, backend=judge, group_size=130, group_window=60)) as server:
        executor = agent.SingleTurnAgentExecutor(f"{server.url}/get_reward")
        outputs = rollouts(
            executor,
            [("Write a slogan for a bakery.", "", "")] * 130,
            script=lambda _: f"Fresh loaf {next(numbers)}.",
        )
    assert no_wait.sleeps == []  # answered the first time: no retry
    assert [o["reward"] for o in outputs] == [[0.5]] * 130
    assert len({tuple(sorted(c.responses)) for c in judge.comparisons}) > 1  # 130 distinct responses compared


# -- a judge outage through OpenRLHF's retry loop -------------------------------------


def _fetch(agent: ModuleType, url: str) -> dict[str, Any]:
    """OpenRLHF's HTTP client for one sample (as ``execute`` calls it): the reply it got."""
    prompt = TEMPLATE.format(question="What is 6*7?")
    query = prompt + "The answer is 42.<|im_end|>"
    executor = agent.SingleTurnAgentExecutor(url)
    (reply,) = asyncio.run(executor._fetch_rewards_via_http([query], [prompt], ["42"]))
    return reply


@pytest.mark.parametrize(
    ("plan", "reason"),
    [
        (None, JudgeUnavailableError.reason),  # nothing listens on the judge's port
        (FaultPlan(hang_rate=1.0), JudgeTimeoutError.reason),
    ],
)
def test_with_fallback_on_an_outage_is_answered_on_the_first_try(
    agent, no_wait, fake_judge, tmp_path, plan, reason
):
    judge_url = closed_port_url() if plan is None else fake_judge.url
    if plan is not None:
        fake_judge.set_plan(plan)
    config = write_config(tmp_path / "c.yaml", judge_url, reward_timeout=1.0, startup_check="warn")
    with ApiServer(create_app(config)) as server:
        reply = _fetch(agent, f"{server.url}/get_reward")
    assert no_wait.sleeps == []  # no retry: a 200 the first time
    assert reply["rewards"] == [1.0]  # the rule reward: "42" is the answer
    logs = reply["extra_logs"]
    assert logs["judge_fallback"] == [1.0] and logs["judge_source"] == [3.0]
    assert logs["judge_fallback_reason"] == [FALLBACK_REASON_CODES[reason]]
    assert logs["judge_confidence"] == [0.0]


def test_with_fallback_off_openrlhf_retries_a_503_five_times_then_has_no_reward(agent, no_wait, tmp_path):
    config = write_config(
        tmp_path / "c.yaml", closed_port_url(), fallback_to_rule=False, startup_check="warn"
    )
    with ApiServer(create_app(config)) as server:
        url = f"{server.url}/get_reward"
        with pytest.raises(RuntimeError, match="Request error for 5 times"):
            _fetch(agent, url)
        assert no_wait.sleeps == [1] * 5
        (output,) = rollouts(agent.SingleTurnAgentExecutor(url), SAMPLES[:1])
    assert output["reward"] is None  # what fails OpenRLHF's training step


def test_with_fallback_off_a_judge_back_within_five_tries_gives_the_reward(
    agent, no_wait, fake_judge, tmp_path
):
    config = write_config(tmp_path / "c.yaml", fake_judge.url, fallback_to_rule=False)
    with ApiServer(create_app(config)) as server:
        fake_judge.set_plan(FaultPlan(script=["error"]))  # its first answer after the start is a 500
        reply = _fetch(agent, f"{server.url}/get_reward")
    assert no_wait.sleeps == [1]  # the 503, then OpenRLHF's second try
    assert reply["rewards"] == [1.0] and reply["extra_logs"]["judge_source"] == [0.0]


def test_the_cli_refuses_a_timeout_openrlhf_would_not_wait_for(tmp_path, capsys):
    config = write_config(tmp_path / "c.yaml", closed_port_url(), reward_timeout=175)
    assert judge_vllm_main(["openrlhf-rm", "--port", str(free_port()), "--config", str(config)]) == 2
    assert "reward_timeout 175 s: OpenRLHF abandons a /get_reward after 180 s" in capsys.readouterr().err
