"""Agent trajectories against the real vLLM CPU judge (SmolLM2: the contract, not the quality):
the steps reach the judge and fit its context, and process rewards judge each turn."""

import json

import pytest

from adapter import JudgeRewardSystem

pytestmark = pytest.mark.e2e

QUESTION = "What is the balance of account 42, according to the ledger tool?"


def _call(k: int) -> dict[str, object]:
    arguments = json.dumps({"account": 42, "page": k})
    return {"id": f"c{k}", "type": "function", "function": {"name": "ledger", "arguments": arguments}}


def _trajectory(turns: int, output_chars: int, last: str) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for k in range(turns):
        messages.append({"role": "assistant", "content": f"Reading page {k}.", "tool_calls": [_call(k)]})
        output = last if k == turns - 1 else f"page {k}: " + "entry 17.00; " * (output_chars // 13)
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "name": "ledger", "content": output})
    messages.append({"role": "assistant", "content": "The balance is 1,250."})
    return messages


def test_a_300_step_trajectory_fits_the_real_judges_context_and_is_judged(judge_url, tmp_path):
    config = {"judge_url": judge_url, "cache_dir": str(tmp_path / "c"), "reward_timeout": 120}
    long = _trajectory(150, 1000, "balance: 1,250")  # 300 steps, 1 KB outputs: ~150 KB
    with JudgeRewardSystem(config) as rs:
        result = rs.reward(QUESTION, long, "1,250")
        metrics = rs.get_metrics()
    assert result["source"] == "judge", result  # no context overflow, no fallback
    assert 0.0 <= result["reward"] <= 1.0 and metrics["model"] == "smollm2"


def test_process_rewards_judge_each_turn_on_the_real_judge(judge_url, tmp_path):
    config = {"judge_url": judge_url, "cache_dir": str(tmp_path / "c"), "reward_timeout": 120,
              "process": {"aggregate": "min", "weight": 0.5}}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        result = rs.reward(QUESTION, _trajectory(3, 200, "balance: 1,250"), "1,250")
        metrics = rs.get_metrics()
    assert result["source"] == "judge", result
    assert len(result["step_scores"]) == 3 and all(0.0 <= s <= 1.0 for s in result["step_scores"])
    assert "process: min" in result["explanation"] and 0.0 <= result["reward"] <= 1.0
    assert metrics["judged_items"] == 4  # the outcome and three turns
