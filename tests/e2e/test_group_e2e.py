"""Group rewards against the real vLLM CPU judge (SmolLM2: the contract, not the quality): a group
of 4 through each mode comes back as 4 valid rewards from the judge, with their comparisons."""

import pytest

from adapter import JudgeRewardSystem

pytestmark = pytest.mark.e2e

QUESTION = "What is the capital of France? Answer in one sentence."
GROUP = [
    "The capital of France is Paris.",
    "Paris is the capital city of France.",
    "The capital of France is Lyon.",
    "France's capital is Marseille, I believe.",
]

MODES = [
    ({"mode": "pairwise", "schedule": "all_pairs"}, 12),
    ({"mode": "pairwise", "schedule": "round_robin", "opponents": 1, "scoring": "win_rate"}, 8),
    ({"mode": "pairwise", "schedule": "anchor"}, 8),
    ({"mode": "listwise"}, 4),
]


@pytest.mark.parametrize(("group", "asked"), MODES, ids=["all_pairs", "round_robin", "anchor", "listwise"])
def test_a_group_of_four_gets_four_rewards_from_the_real_judge(judge_url, tmp_path, group, asked):
    config = {"judge_url": judge_url, "cache_dir": str(tmp_path / "c"), "reward_timeout": 120, "group": group}
    items = [{"prompt": QUESTION, "completion": c, "answer": "Paris"} for c in GROUP]
    with JudgeRewardSystem(config) as rs:
        results = rs.reward_group(items)
    assert len(results) == 4
    for result in results:
        assert result["source"] == "judge", result
        assert 0.0 <= result["reward"] <= 1.0 and result["reason"] == group["mode"]
        assert result["comparisons"] and all(c["source"] == "judge" for c in result["comparisons"])
        assert f"of {asked} answered ({asked} asked)" in result["explanation"], result["explanation"]
    if group["mode"] == "listwise":
        rankings = [c["ranking"] for c in results[0]["comparisons"]]
        assert all(sorted(r) == [0, 1, 2, 3] for r in rankings) and len(rankings) == 4
    else:
        assert all(0.0 <= c["p_first"] <= 1.0 for r in results for c in r["comparisons"])
