"""The reward distribution in ``get_metrics()``: per source and answer_type, counters only."""

from __future__ import annotations

import pytest

import adapter.observability.reward_distribution
from adapter import JudgeRewardSystem
from adapter.observability.reward_distribution import (
    ANSWER_TYPE_LABELS,
    REWARD_BUCKETS,
    RewardDistribution,
    answer_type_label,
)
from judge_vllm.testing.fake_server import FaultPlan


@pytest.mark.parametrize(
    ("reward", "first_bucket"),
    [(0.0, "0.05"), (0.05, "0.05"), (0.051, "0.1"), (0.5, "0.5"), (0.9500001, "1.0"), (1.0, "1.0")],
)
def test_a_reward_counts_in_its_le_bucket_and_every_bucket_above(reward, first_bucket):
    distribution = RewardDistribution()
    distribution.add("judge", "NUMBER", reward)
    buckets = distribution.snapshot()["sources"]["judge"]["NUMBER"]["buckets"]
    assert list(buckets) == [str(b) for b in REWARD_BUCKETS]
    first = list(buckets).index(first_bucket)
    assert list(buckets.values()) == [0] * first + [1] * (len(REWARD_BUCKETS) - first)


def test_counts_means_and_the_near_fractions():
    distribution = RewardDistribution()
    for reward in (0.0, 0.05, 0.5, 0.95, 1.0):
        distribution.add("judge", "TEXT", reward)
    distribution.add("rule", None, 0.0)
    snapshot = distribution.snapshot()
    text = snapshot["sources"]["judge"]["TEXT"]
    assert (text["count"], text["sum"], text["mean"]) == (5, 2.5, 0.5)
    assert (text["near_zero_fraction"], text["near_one_fraction"]) == (0.4, 0.4)
    assert snapshot["count"] == 6
    assert (snapshot["near_zero_fraction"], snapshot["near_one_fraction"]) == (0.5, 2 / 6)


def test_a_reward_without_a_value_is_counted_apart_never_as_zero():
    distribution = RewardDistribution()
    distribution.add("error", "NUMBER", None)
    snapshot = distribution.snapshot()
    assert snapshot == {
        "count": 0,
        "no_value": 1,
        "near_zero_fraction": None,
        "near_one_fraction": None,
        "sources": {},
    }


@pytest.mark.parametrize(
    ("answer_type", "label"),
    [("NUMBER", "NUMBER"), ("MULTIPLE_CHOICE", "MULTIPLE_CHOICE"), ("CODE", "OTHER"), (None, "OTHER")],
)
def test_answer_type_labels_are_a_closed_set(answer_type, label):
    assert answer_type_label(answer_type) == label
    assert label in ANSWER_TYPE_LABELS


def test_free_text_answer_types_share_one_series():
    distribution = RewardDistribution()
    for i in range(100):
        distribution.add("judge", f"TYPE-{i}", 1.0)
    assert list(distribution.snapshot()["sources"]["judge"]) == ["OTHER"]


def test_get_metrics_shows_the_distribution_of_what_the_system_returned(fake_judge, tmp_path):
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "max_retries": 0}
    with JudgeRewardSystem(config) as rs:
        rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")  # judge: 1.0
        rs.reward("What is 2+2?", "The answer is 5.", "4", "NUMBER")  # judge: 0.0
        rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")  # cache: 1.0
        rs.reward("What is 2+2?", "", "4", "NUMBER")  # rule (empty): 0.0
        distribution = rs.get_metrics()["reward_distribution"]
    judge = distribution["sources"]["judge"]["NUMBER"]
    assert (judge["count"], judge["mean"]) == (2, 0.5)
    assert distribution["sources"]["cache"]["NUMBER"]["count"] == 1
    assert distribution["sources"]["rule"]["NUMBER"]["near_zero_fraction"] == 1.0
    assert (distribution["count"], distribution["near_one_fraction"]) == (4, 0.5)
    assert distribution["canary_false_positive_rate"] is None  # no probe yet


def test_failed_rewards_without_fallback_are_no_value(fake_judge, tmp_path):
    config = {
        "judge_url": fake_judge.url,
        "cache_dir": str(tmp_path / "c"),
        "max_retries": 0,
        "fallback_to_rule": False,
    }
    with JudgeRewardSystem(config) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))  # the judge goes down after the start
        result = rs.reward("What is 2+2?", "The answer is 4.", "4", "NUMBER")
        distribution = rs.get_metrics()["reward_distribution"]
    assert result["source"] == "error"
    assert (distribution["no_value"], distribution["count"], distribution["sources"]) == (1, 0, {})


def test_canary_rate_sits_next_to_the_distribution(fake_judge, tmp_path):
    config = {"judge_url": fake_judge.url, "cache_dir": str(tmp_path / "c"), "reward_timeout": 60.0}
    with JudgeRewardSystem(config) as rs:
        rs.probe_canaries()
        metrics = rs.get_metrics()
    rate = metrics["reward_distribution"]["canary_false_positive_rate"]
    assert rate == metrics["canary"]["false_positive_rate"] == 0.0


def test_all_names_what_the_module_defines():
    module = adapter.observability.reward_distribution
    assert [name for name in module.__all__ if not hasattr(module, name)] == []
