"""The fallback share over a window: a warning naming the reason and the setting, at most once a
minute, and the share in ``get_metrics()`` and the Prometheus series."""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, generate_latest

from adapter import JudgeRewardSystem, RewardConfig
from adapter.observability.fallback_watch import FallbackWatch
from adapter.observability.prometheus_series import RewardCollector
from judge_vllm.errors import JudgeTimeoutError, JudgeUnavailableError
from judge_vllm.testing.fake_server import FaultPlan

TIMEOUT = JudgeTimeoutError.reason


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "fallback_alert_share" in r.getMessage()]


def test_a_window_mostly_fallen_back_warns_at_most_once_a_minute_with_the_reason_and_the_setting(caplog):
    clock = Clock()
    watch = FallbackWatch(
        RewardConfig(fallback_alert_window=10, fallback_alert_share=0.5, reward_timeout=8), clock
    )
    with caplog.at_level(logging.WARNING, logger="JudgeReward"):
        for _ in range(5):
            watch.record("judge", None)
        for _ in range(5):
            watch.record("rule_fallback", TIMEOUT)  # half the window: not above the share
        watch.record("rule", "empty")  # asked no judge: not in the window
        assert _warnings(caplog) == []
        for _ in range(20):
            watch.record("rule_fallback", TIMEOUT)
        assert len(_warnings(caplog)) == 1
        clock.now += 61
        watch.record("error", TIMEOUT)
    first, second = _warnings(caplog)
    assert "6 of the last 10" in first and f"{TIMEOUT!r}" in first
    assert "reward_timeout (8 s)" in first and "judge_replicas" in first
    assert "10 of the last 10" in second
    assert watch.snapshot() == {"share": 1.0, "rewards": 10, "window": 10, "threshold": 0.5, "reason": TIMEOUT,
                                "alerts": 2}  # fmt: skip


def test_a_run_whose_judge_stops_answering_warns_once_and_shows_the_share(fake_judge, tmp_path, caplog):
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "max_retries": 0,
              "fallback_alert_window": 4, "circuit_breaker_threshold": 100}  # fmt: skip
    items = [
        {"prompt": f"What is {i}+{i}?", "completion": str(2 * i), "answer": str(2 * i)} for i in range(12)
    ]
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), JudgeRewardSystem(config) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))
        results = rs.reward_batch(items)
        metrics = rs.get_metrics()
        registry = CollectorRegistry()
        registry.register(RewardCollector(rs.get_metrics))
        exposition = generate_latest(registry).decode().splitlines()
    assert {r["source"] for r in results} == {"rule_fallback"}
    (warning,) = _warnings(caplog)
    assert (
        f"{JudgeUnavailableError.reason!r} (4)" in warning
        and f"judge-vllm health --url {fake_judge.url}" in warning
    )
    assert metrics["fallback_window"] == {"share": 1.0, "rewards": 4, "window": 4, "threshold": 0.2,
                                          "reason": JudgeUnavailableError.reason, "alerts": 1}  # fmt: skip
    assert "judge_fallback_window_share 1.0" in exposition and "judge_fallback_alerts_total 1.0" in exposition
