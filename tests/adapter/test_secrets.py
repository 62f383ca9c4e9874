"""The API key never shows up in logs, errors, metrics, results or the cache."""

import logging

from adapter import JudgeRewardSystem
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
        config = {"judge_url": server.url, "api_key": SECRET, "cache_dir": str(cache_dir), "max_retries": 0}
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
