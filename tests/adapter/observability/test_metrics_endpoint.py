"""The in-process Prometheus endpoint (``metrics_port``): scraped over HTTP while rewards run."""

from __future__ import annotations

import logging
import multiprocessing
import socket

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

import adapter.observability.metrics_endpoint
from adapter import JudgeRewardSystem, create_judge_reward
from adapter.dispatch.members import JudgeMember
from judge_vllm.errors import JudgeConfigError
from judge_vllm.testing.ports import free_port

QUESTION = "What is 2+2?"


def _system(url, tmp_path, **overrides):
    config = {"judge_url": url, "cache_dir": str(tmp_path / "cache"), "max_retries": 0, **overrides}
    return JudgeRewardSystem(config)


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    reply = httpx.get(url)
    assert reply.status_code == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(reply.text)
        for s in family.samples
    }


def _refused(url: str) -> bool:
    try:
        httpx.get(url, timeout=2.0)
    except httpx.ConnectError:
        return True
    return False


def test_off_by_default(fake_judge, tmp_path):
    with _system(fake_judge.url, tmp_path) as rs:
        assert rs.metrics_endpoint is None


def test_a_scrape_during_a_run_sees_the_rewards_as_they_come(fake_judge, tmp_path):
    judged = ("judge_rewards_total", (("reward", "judge"), ("source", "judge")))
    values = (
        "judge_reward_value_count",
        (("answer_type", "NUMBER"), ("reward", "judge"), ("source", "judge")),
    )
    with _system(fake_judge.url, tmp_path, metrics_port=0) as rs:
        url = rs.metrics_endpoint.url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/metrics")
        before = _scrape(url)
        rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")
        rs.reward(QUESTION, "The answer is 5.", "4", "NUMBER")
        after = _scrape(url)
        rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")  # from the cache
        later = _scrape(url)
    assert judged not in before and values not in before
    assert after[judged] == 2 and after[values] == 2
    assert after[("judge_reward_near_one_fraction", (("reward", "judge"),))] == 0.5
    assert later[("judge_cache_hits_total", (("reward", "judge"),))] == 1
    assert later[("judge_reward_near_one_fraction", (("reward", "judge"),))] == 2 / 3


def test_the_same_families_as_the_http_api(fake_judge, tmp_path):
    from adapter.http.metrics import ApiMetrics

    with _system(fake_judge.url, tmp_path, metrics_port=0) as rs:
        rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")
        endpoint = {f.name for f in text_string_to_metric_families(httpx.get(rs.metrics_endpoint.url).text)}
        api = ApiMetrics(())
        with api.rewards_of(rs.get_metrics):
            served = {f.name for f in text_string_to_metric_families(api.exposition().decode())}
    # The API adds its own HTTP series; every reward series is on both.
    assert endpoint == {
        name for name in served if not name.startswith(("judge_api_", "judge_reward_latency"))
    }


def test_two_systems_share_one_port_and_registry_and_the_last_close_stops_it(fake_judge, tmp_path):
    port = free_port()
    train = _system(fake_judge.url, tmp_path / "a", metrics_port=port)
    val = _system(fake_judge.url, tmp_path / "b", metrics_port=port)
    try:
        assert train.metrics_endpoint.url == val.metrics_endpoint.url == f"http://127.0.0.1:{port}/metrics"
        assert (train.metrics_endpoint.name, val.metrics_endpoint.name) == ("judge", "judge-2")
        train.reward(QUESTION, "The answer is 4.", "4", "NUMBER")
        samples = _scrape(train.metrics_endpoint.url)
        assert samples[("judge_calls_total", (("reward", "judge"),))] == 1
        assert samples[("judge_calls_total", (("reward", "judge-2"),))] == 0
        train.close()
        samples = _scrape(val.metrics_endpoint.url)
        assert ("judge_calls_total", (("reward", "judge-2"),)) in samples
        assert not [key for key in samples if ("reward", "judge") in key[1]]
    finally:
        train.close()
        val.close()
    assert _refused(f"http://127.0.0.1:{port}/metrics")


def test_named_systems_and_a_port_reused_after_close(fake_judge, tmp_path):
    port = free_port()
    with _system(fake_judge.url, tmp_path / "a", metrics_port=port, metrics_name="accuracy") as first:
        assert first.metrics_endpoint.name == "accuracy"
    with _system(fake_judge.url, tmp_path / "b", metrics_port=port, metrics_name="accuracy") as again:
        assert again.metrics_endpoint.name == "accuracy"
        assert ("judge_calls_total", (("reward", "accuracy"),)) in _scrape(again.metrics_endpoint.url)


def test_close_stops_the_endpoint_and_is_idempotent(fake_judge, tmp_path):
    rs = _system(fake_judge.url, tmp_path, metrics_port=0)
    url = rs.metrics_endpoint.url
    assert _scrape(url)
    rs.close()
    rs.close()
    assert _refused(url)


def test_a_port_in_use_is_a_warning_and_rewards_go_on(fake_judge, tmp_path, caplog):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with caplog.at_level(logging.WARNING, logger="JudgeReward"):
            rs = _system(fake_judge.url, tmp_path, metrics_port=port)
        with rs:
            assert rs.metrics_endpoint is None
            assert rs.reward(QUESTION, "The answer is 4.", "4", "NUMBER")["source"] == "judge"
    assert f"cannot listen on 127.0.0.1:{port}" in caplog.text
    assert "rewards are unaffected" in caplog.text


@pytest.mark.parametrize(
    "bad", [{"metrics_port": 70000}, {"metrics_port": -1}, {"metrics_name": ""}, {"metrics_name": 'a"b'}]
)
def test_bad_metrics_settings_are_config_errors(bad):
    with pytest.raises(JudgeConfigError, match=next(iter(bad))):
        JudgeRewardSystem(bad)


def test_an_ensemble_serves_once_not_once_per_member(fake_judge, tmp_path):
    config = {
        "judge_urls": [fake_judge.url, fake_judge.url.replace("127.0.0.1", "localhost")],
        "cache_dir": str(tmp_path / "cache"),
        "metrics_port": 0,
    }
    with create_judge_reward(config) as ensemble:
        samples = _scrape(ensemble.metrics_endpoint.url)
        # The members are judges of one reward system, not reward systems: nothing of theirs serves.
        assert all(isinstance(member, JudgeMember) for member in ensemble.judges.values())
    assert {dict(labels)["reward"] for _, labels in samples} == {"judge"}


def test_a_forked_child_leaves_the_parents_endpoint_alone(fake_judge, tmp_path):
    rs = _system(fake_judge.url, tmp_path, metrics_port=0)
    url = rs.metrics_endpoint.url
    # The child closes its copy: that must neither stop nor hang on the parent's server.
    child = multiprocessing.get_context("fork").Process(target=rs.close)
    child.start()
    child.join(30)
    if child.is_alive():
        child.kill()
        child.join()
    try:
        assert child.exitcode == 0, "the forked child hung or failed closing its copy of the endpoint"
        assert ("judge_calls_total", (("reward", "judge"),)) in _scrape(url)
    finally:
        rs.close()
    assert _refused(url)


def test_all_names_what_the_module_defines():
    module = adapter.observability.metrics_endpoint
    assert [name for name in module.__all__ if not hasattr(module, name)] == []
