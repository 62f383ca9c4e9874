"""A real GRPOTrainer rewarded by the real vLLM CPU judge (SmolLM2) through judge_reward_func:
multi-turn prompts with a system prompt, and the judge's source and explanation in the
trainer's completions table."""

from __future__ import annotations

import pytest

from adapter.integrations.trl import DEFAULT_NAME, judge_reward_func

pytestmark = pytest.mark.e2e


def test_grpo_trainer_with_the_real_judge(judge_url, tmp_path, trl_helpers):
    config = {
        "judge_url": judge_url,
        "mode": "fast",
        "cache_dir": str(tmp_path / "cache"),
        "timeout": 600,
        "fallback_to_rule": False,  # a judge failure must show as None, not hide behind the rules
    }
    func = judge_reward_func(config)
    try:
        trainer, returned = trl_helpers.run_grpo(func, tmp_path, conversational=True)
        metrics = func.reward_system.get_metrics()
    finally:
        func.close()
    logs = trl_helpers.step_logs(trainer)
    assert len(logs) == 2 and [len(r) for r in returned] == [4, 4]
    for log, rewards in zip(logs, returned, strict=True):
        assert all(r is not None and 0.0 <= r <= 1.0 for r in rewards), rewards
        assert log[f"rewards/{DEFAULT_NAME}/mean"] == pytest.approx(sum(rewards) / 4, abs=1e-6)
        assert log["judge/none_rate"] == 0.0 and log["judge/fallback_rate"] == 0.0
    assert metrics["sources"].get("judge", 0) >= 1 and metrics["model"] == "smollm2"
    table = trl_helpers.completions_table(tmp_path, 2)
    assert len(table) == 4 and set(table["judge_source"]) <= {"judge", "cache"}
    assert all(e.startswith("expected score") for e in table["judge_explanation"]), list(
        table["judge_explanation"]
    )
