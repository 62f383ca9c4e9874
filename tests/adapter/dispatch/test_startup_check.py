"""The start-up check (``startup_check``): the judge is asked before the first reward, not found
missing by a run that trains on the rule."""

from __future__ import annotations

import logging
import threading

import pytest

from adapter import JudgeRewardSystem, create_judge_reward
from judge_vllm.errors import JudgeStartupError
from judge_vllm.testing.fake_backend import FakeBackend
from judge_vllm.testing.fake_server import FaultPlan
from judge_vllm.testing.ports import free_port

SECRET = "s3cret-pass"
HEALTH = "judge-vllm health --url "


def _config(url: str, tmp_path, **overrides: object) -> dict[str, object]:
    return {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, "reward_timeout": 5.0,
            **overrides}  # fmt: skip


def test_a_closed_port_fails_at_start_naming_the_url_the_model_and_the_next_step(tmp_path):
    port = free_port()
    threads = threading.active_count()
    with pytest.raises(JudgeStartupError) as raised:
        JudgeRewardSystem(_config(f"http://judge:{SECRET}@127.0.0.1:{port}", tmp_path, model="my-judge"))
    message = str(raised.value)
    assert "\n" not in message and SECRET not in message
    assert f"the judge at http://***@127.0.0.1:{port} (model my-judge) failed the start-up check" in message
    assert "cannot connect" in message and f"{HEALTH}http://***@127.0.0.1:{port}" in message
    assert threading.active_count() <= threads  # the system that failed closed its loop thread


def test_a_model_the_server_does_not_serve_fails_at_start_with_the_names_it_serves(fake_judge, tmp_path):
    with pytest.raises(JudgeStartupError) as raised:
        JudgeRewardSystem(_config(fake_judge.url, tmp_path, model="qwen-judge"))
    message = str(raised.value)
    assert "(model qwen-judge)" in message and "does not exist. Valid aliases: fake-judge" in message
    assert "set model to a model the server serves" in message and f"{HEALTH}{fake_judge.url}" in message


def test_a_reply_that_does_not_fit_the_profile_fails_at_start(fake_judge, tmp_path):
    fake_judge.set_plan(FaultPlan(script=["garbage"]))
    with pytest.raises(
        JudgeStartupError, match=r"Invalid judge output.*does not fit profile 'binary' \(mode fast\)"
    ):
        JudgeRewardSystem(_config(fake_judge.url, tmp_path))


def test_an_ensemble_member_that_is_down_fails_the_start_naming_every_judge(fake_judge, tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(JudgeStartupError, match=f"the judge at {fake_judge.url}, {dead} .*cannot connect"):
        create_judge_reward(_config(fake_judge.url, tmp_path, judge_urls=[fake_judge.url, dead]))


def test_a_backend_that_breaks_its_contract_fails_at_start_naming_the_backend(tmp_path):
    class Miscounting(FakeBackend):
        async def judge_many(self, requests):
            return []

    with pytest.raises(JudgeStartupError) as raised:
        JudgeRewardSystem(_config("http://127.0.0.1:9", tmp_path), backend=Miscounting())
    message = str(raised.value)
    assert message.startswith("the judge backend Miscounting (model fake-backend) failed the start-up check")
    assert "gave 0 outcomes for 1 request" in message and "127.0.0.1:9" not in message


def test_a_judge_that_answers_is_known_from_the_start_and_the_check_is_not_a_reward(fake_judge, tmp_path):
    with JudgeRewardSystem(_config(fake_judge.url, tmp_path)) as rs:
        metrics = rs.get_metrics()
        asked = dict(fake_judge.counts)
    assert metrics["model"] == "fake-judge"  # discovered, as a first reward would have
    assert asked["/v1/models"] == 1 and asked["ok"] == 1  # one tiny judgment
    assert (metrics["total_requests"], metrics["judge_calls"], metrics["cache_entries"]) == (0, 0, 0)


def test_warn_starts_anyway_says_why_once_and_rewards_fall_back(fake_judge, tmp_path, caplog):
    config = _config(fake_judge.url, tmp_path, model="qwen-judge", startup_check="warn")
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), JudgeRewardSystem(config) as rs:
        result = rs.reward("What is 2+2?", "4", "4")
    said = [r.getMessage() for r in caplog.records if "start-up check" in r.getMessage()]
    assert len(said) == 1 and "does not exist" in said[0]
    assert (result["source"], result["reason"]) == ("rule_fallback", "Judge rejected the request")


def test_off_asks_nothing_at_start(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}"
    with JudgeRewardSystem(_config(closed, tmp_path, startup_check="off")) as rs:
        assert rs.get_metrics()["model"] is None
