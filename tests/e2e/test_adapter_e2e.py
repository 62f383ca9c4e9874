"""JudgeRewardSystem against the real vLLM CPU judge (SmolLM2)."""

import pytest

from adapter import JudgeRewardSystem
from eval.bench import mixed_items

pytestmark = pytest.mark.e2e


def _config(url: str, tmp_path) -> dict:
    return {
        "judge_url": url,
        "mode": "verdict",  # the default (fast) has its own test below
        "cache_dir": str(tmp_path / "cache"),
        "reward_timeout": 600,
        "max_batch_size": 32,
        "max_explanation_chars": 32,
        "fallback_to_rule": False,  # a judge failure must show, not hide behind the rules
    }


def test_64_mixed_items_judged_then_cached_then_shared(judge_url, tmp_path):
    items = mixed_items(64)
    with JudgeRewardSystem(_config(judge_url, tmp_path)) as rs:
        first = rs.reward_batch(items)
        second = rs.reward_batch(items)
        metrics = rs.get_metrics()
    assert [r["source"] for r in first] == ["judge"] * 64, {r["error"] for r in first}
    assert all(0.0 <= r["reward"] <= 1.0 and r["explanation"] for r in first)
    assert [r["source"] for r in second] == ["cache"] * 64
    assert [r["reward"] for r in second] == [r["reward"] for r in first]
    assert metrics["batched_fraction"] > 0.5 and metrics["model"] == "smollm2"
    with JudgeRewardSystem(_config(judge_url, tmp_path)) as rs:
        third = rs.reward_batch(items)
    assert [r["source"] for r in third] == ["cache"] * 64


def test_fast_mode_through_the_adapter(judge_url, tmp_path):
    config = {**_config(judge_url, tmp_path), "mode": "fast"}
    with JudgeRewardSystem(config) as rs:
        results = rs.reward_batch(mixed_items(16))
    assert [r["source"] for r in results] == ["judge"] * 16
    assert all(0.0 <= r["confidence"] <= 1.0 for r in results)


def test_master_key_completions_never_reach_the_judge(judge_url, tmp_path):
    with JudgeRewardSystem(_config(judge_url, tmp_path)) as rs:
        results = [
            rs.reward("What is 2+2?", c, "4", "NUMBER")
            for c in (":", "Let's solve this problem step by step.")
        ]
        metrics = rs.get_metrics()
    assert [(r["source"], r["reward"]) for r in results] == [("rule", 0.0), ("rule", 0.0)]
    assert metrics["judged_items"] == 0
