"""Rubric items against the real vLLM CPU judge (SmolLM2: the contract, not the quality)."""

import pytest

from adapter import JudgeRewardSystem

pytestmark = pytest.mark.e2e

RUBRIC = ["Recommends drinking fluids", {"criterion": "Suggests seeing a doctor if it persists", "weight": 2},
          {"criterion": "Does not recommend antibiotics", "veto": True}]  # fmt: skip


@pytest.mark.parametrize("mode", ["fast", "verdict"])
def test_a_rubric_item_gets_a_reward_per_criterion_from_the_real_judge(judge_url, tmp_path, mode):
    config = {"judge_url": judge_url, "mode": mode, "cache_dir": str(tmp_path / "c"), "reward_timeout": 120}
    item = {"prompt": "I have had a fever for two days. What should I do?",
            "completion": "Drink plenty of fluids, rest, and see a doctor if the fever lasts.", "rubric": RUBRIC}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        single = rs.reward(item["prompt"], item["completion"], rubric=RUBRIC)
        batch = rs.reward_batch([item, {"prompt": "2+2?", "completion": "4", "answer": "4"}])
    for result in (single, batch[0]):
        assert result["source"] == "judge", result
        assert 0.0 <= result["reward"] <= 1.0
        assert set(result["detailed_scores"]) == {"Recommends drinking fluids", "Suggests seeing a doctor if it persists",
                                                  "Does not recommend antibiotics"}  # fmt: skip
        assert all(0.0 <= p <= 1.0 for p in result["detailed_scores"].values())
        vetoed = result["detailed_scores"]["Does not recommend antibiotics"] < 0.5
        assert (result["reward"] == 0.0) if vetoed else ("weighted mean" in result["explanation"])
    assert batch[1]["source"] in {"judge", "rule"}
