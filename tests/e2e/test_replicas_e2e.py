"""judge_replicas over two real vLLM CPU servers (SmolLM2; the second with a small KV cache)."""

import pytest

from adapter import JudgeRewardSystem
from judge_vllm import launcher

pytestmark = pytest.mark.e2e


def _groups(n, size, tag):
    return [
        {
            "prompt": f"{tag} {g}: what is {g} + 1?",
            "completion": f"Try {k}: it is {g + 1}.",
            "answer": str(g + 1),
        }
        for g in range(n)
        for k in range(size)
    ]


def test_two_real_servers_as_one_judge_share_the_work_and_survive_one_stopping(judge_url, second_judge):
    second_url, second_pid = second_judge
    # No start-up check: the replicas' items are the rewards' alone.
    config = {"judge_replicas": [judge_url, second_url], "use_cache": False, "reward_timeout": 300,
              "max_batch_size": 8, "circuit_breaker_cooldown": 600, "startup_check": "off"}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        first = rs.reward_batch(_groups(16, 4, "pool"))
        metrics = rs.get_metrics()
        launcher.stop(second_pid)
        second = rs.reward_batch(_groups(16, 2, "after"))
        after = rs.get_metrics()
    assert [r["source"] for r in first] == ["judge"] * 64
    items = {url: r["items"] for url, r in metrics["replicas"].items()}
    assert all(n > 0 for n in items.values()) and sum(items.values()) == 64
    assert metrics["model"] == "smollm2" and metrics["failovers"] == 0
    assert [r["source"] for r in second] == ["judge"] * 32  # the live replica took every item
    assert after["failovers"] > 0 and after["replicas"][second_url]["errors"] > 0
