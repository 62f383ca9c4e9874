"""The API key never shows up in logs, errors, metrics, results or the cache."""

import logging

import pytest

from adapter import JudgeRewardSystem
from judge_vllm.schemas import Verdict
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

SECRET = "sk-SECRET-do-not-leak-0123456789"


def _everything_visible(rs, results, caplog, cache_dir) -> str:
    cache_bytes = b"".join(p.read_bytes() for p in cache_dir.rglob("*") if p.is_file())
    return "\n".join(
        [caplog.text, repr(results), repr(rs.get_metrics()), repr(rs.config), cache_bytes.decode("latin-1")]
    )


def test_key_is_used_but_never_leaked(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(FaultPlan(script=["error", "garbage"]), api_key=SECRET) as server:
        # No start-up check: the script is for the rewards.
        config = {"judge_url": server.url, "api_key": SECRET, "cache_dir": str(cache_dir), "max_retries": 0,
                  "startup_check": "off"}  # fmt: skip
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", f"The answer is {i}", str(i)) for i in range(4)]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert [r["source"] for r in results] == ["rule_fallback", "rule_fallback", "judge", "judge"]
    assert SECRET not in text


def test_wrong_key_error_does_not_echo_the_key(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(api_key="the-right-key") as server:
        config = {
            "judge_url": server.url,
            "api_key": SECRET,
            "cache_dir": str(cache_dir),
            "model": "fake-judge",
            "startup_check": "warn",  # its 401 is logged too, and must not hold the key either
        }
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", "The answer is 1", "1")]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert results[0]["reason"] == "Judge rejected the request" and "401" in results[0]["error"]
    assert SECRET not in text


def test_cache_directory_is_private(tmp_path, fake_judge):
    cache_dir = tmp_path / "cache"
    with JudgeRewardSystem({"judge_url": fake_judge.url, "cache_dir": str(cache_dir)}) as rs:
        rs.reward("q", "The answer is 1", "1")
    assert cache_dir.stat().st_mode & 0o777 == 0o700


# -- credentials in a judge URL, and the key on every surface ---------------------------------

PASSWORD = "pw-USERINFO-secret-42"


def _userinfo_url(server) -> str:
    return server.url.replace("http://", f"http://alice:{PASSWORD}@")


def test_credentials_in_the_judge_url_never_leave(tmp_path, caplog):
    with FakeJudgeServer(FaultPlan(script=["error"])) as server:
        # No start-up check: the script is for the rewards.
        config = {"judge_url": _userinfo_url(server), "cache_dir": str(tmp_path / "c"), "max_retries": 0,
                  "startup_check": "off"}  # fmt: skip
        with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", f"The answer is {i}", str(i)) for i in range(3)]
            text = _everything_visible(rs, results, caplog, tmp_path / "c")
    assert [r["source"] for r in results] == ["rule_fallback", "judge", "judge"]
    assert any(r.name.startswith("httpx") for r in caplog.records)  # httpx's own lines were captured
    assert PASSWORD not in text and "alice:" not in text


def test_a_dead_judge_with_credentials_errors_without_them(tmp_path, caplog):
    # The start-up check's warning is among what is checked.
    config = {"judge_url": f"http://bob:{PASSWORD}@127.0.0.1:9", "cache_dir": str(tmp_path / "c"), "max_retries": 0,
              "startup_check": "warn"}  # fmt: skip
    with caplog.at_level(logging.DEBUG), JudgeRewardSystem(config) as rs:
        results = [rs.reward("q", "The answer is 1", "1")]
        text = _everything_visible(rs, results, caplog, tmp_path / "c")
    assert results[0]["source"] == "rule_fallback" and results[0]["error"]
    assert PASSWORD not in text


def test_replica_urls_in_metrics_and_prometheus_hide_credentials(tmp_path):
    from prometheus_client import CollectorRegistry, generate_latest

    from adapter.observability.prometheus_series import RewardCollector

    with FakeJudgeServer() as a, FakeJudgeServer() as b:
        config = {"judge_replicas": [_userinfo_url(a), _userinfo_url(b)], "cache_dir": str(tmp_path / "c")}
        with JudgeRewardSystem(config) as rs:
            rs.reward("q", "The answer is 1", "1")
            metrics = rs.get_metrics()
            registry = CollectorRegistry()
            registry.register(RewardCollector(lambda: metrics))
            exposition = generate_latest(registry).decode()
    assert len(metrics["replicas"]) == 2 and all("***@" in url for url in metrics["replicas"])
    assert PASSWORD not in repr(metrics) and PASSWORD not in exposition


@pytest.mark.parametrize("with_api_key", [False, True], ids=["no-api-key", "api-key"])
def test_health_shows_the_judge_url_without_credentials(tmp_path, with_api_key):
    import httpx

    from adapter.http import create_app
    from judge_vllm.testing.asgi_server import ApiServer

    with FakeJudgeServer() as judge:
        config = {"judge_url": _userinfo_url(judge), "cache_dir": str(tmp_path / "c"), "api_key": SECRET if with_api_key else None}
        with ApiServer(create_app(config)) as api:
            reply = httpx.get(f"{api.url}/health")
            metrics = httpx.get(f"{api.url}/metrics").text
    assert reply.status_code == 200 and reply.json()["upstream"]["url"].startswith("http://***@")
    for shown in (reply.text, metrics):
        assert PASSWORD not in shown and SECRET not in shown


def test_an_exception_text_never_holds_a_registered_secret():
    from judge_vllm.errors import JudgeUnavailableError
    from judge_vllm.redaction import register_secret

    register_secret(SECRET)
    err = JudgeUnavailableError(f"upstream said: bad key {SECRET} for http://carol:{PASSWORD}@judge:8888")
    assert SECRET not in str(err) and PASSWORD not in str(err) and "http://***@judge:8888" in str(err)


def test_a_key_split_by_the_judgment_log_cut_is_still_scrubbed(tmp_path):
    import json

    log = tmp_path / "judgments.jsonl"
    config = {"cache_dir": str(tmp_path / "c"), "api_key": SECRET, "model": "m", "startup_check": "off",
              "judgment_log_path": str(log), "judgment_log_max_chars": 64}  # fmt: skip
    # The key straddles the cut: its head ends the kept head, its tail starts the kept tail.
    completion = "x" * 22 + SECRET + "y" * 200 + SECRET + "z" * 22

    class _Judge(JudgeRewardSystem):
        def _request_judge(self, request):
            return Verdict(score=1.0, explanation="ok")

    with _Judge(config) as rs:
        rs.reward("q", completion, "1")
    line = log.read_text()
    logged = json.loads(line)["completion"]
    assert "chars cut" in logged and SECRET[:8] not in line and SECRET[-8:] not in line


def test_the_second_judges_key_and_url_credentials_never_leave(tmp_path, caplog):
    """``escalate_to`` given as a mapping holds a plain-string key and a URL with credentials:
    neither shows in the config's repr or str, a reward, the metrics or the logs."""
    import logging

    from adapter import create_judge_reward
    from adapter.config import RewardConfig

    key, password = "sk-second-judge-7712", "pw-second-8841"
    second = {"judge_url": f"http://bob:{password}@127.0.0.1:9", "api_key": key, "reward_timeout": 2}
    # The start-up check's warning is among what is seen.
    config = {"judge_url": "http://127.0.0.1:9", "cache_dir": str(tmp_path / "c"), "reward_timeout": 3,
              "escalate_to": second, "startup_check": "warn"}  # fmt: skip
    caplog.set_level(logging.DEBUG)
    loaded = RewardConfig.from_any(config)
    seen = repr(loaded) + str(loaded)
    with create_judge_reward(config) as rs:
        seen += str(rs.reward("Q?", "The answer is 42", "42")) + str(rs.get_metrics())
    seen += caplog.text
    assert key not in seen and password not in seen and "escalate_to" in seen


@pytest.mark.parametrize("tail", ["\n", "\t", "\r", "\r\n"], ids=["newline", "tab", "cr", "crlf"])
def test_a_key_with_trailing_whitespace_is_stripped_and_works_without_showing(tmp_path, caplog, tail):
    cache_dir = tmp_path / "cache"
    with FakeJudgeServer(api_key=SECRET) as server:
        config = {"judge_url": server.url, "api_key": SECRET + tail, "cache_dir": str(cache_dir), "max_retries": 0}
        with caplog.at_level(logging.WARNING), JudgeRewardSystem(config) as rs:
            results = [rs.reward("q", "The answer is 1", "1")]
            text = _everything_visible(rs, results, caplog, cache_dir)
    assert (results[0]["source"], results[0]["error"]) == ("judge", None)
    assert rs.config.api_key is not None and rs.config.api_key.get_secret_value() == SECRET
    assert SECRET[:12] not in text


def test_a_key_from_the_environment_is_stripped(monkeypatch):
    from adapter.config import RewardConfig

    monkeypatch.setenv("JUDGE_MODEL_API_KEY", f"  {SECRET}\r\n")
    config = RewardConfig.from_any({})
    assert config.api_key is not None and config.api_key.get_secret_value() == SECRET


@pytest.mark.parametrize("inside", ["\x00", "\n", "\x1b"], ids=["nul", "newline", "escape"])
def test_a_key_with_a_control_character_inside_is_refused_without_showing_it(inside):
    from adapter.config import RewardConfig
    from judge_vllm.errors import JudgeConfigError

    key = f"sk-inner{inside}control-0123456789"
    with pytest.raises(JudgeConfigError, match="api_key holds a control or non-printable character") as caught:
        RewardConfig.from_any({"api_key": key})
    assert "sk-inner" not in str(caught.value)
