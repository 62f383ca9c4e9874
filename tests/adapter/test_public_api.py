"""The names a trainer imports (README, docs/integrations.md) exist and are exactly the public API."""

import adapter
import adapter.rules

DOCUMENTED = {
    "BaseJudgeReward",
    "JudgeRewardSystem",
    "MetricsDict",
    "MultiJudge",
    "RewardConfig",
    "RewardDict",
    "RewardResult",
    "RuleRewardSystem",
    "create_judge_reward",
    "load_reward_config",
}


def test_adapter_exports_exactly_the_documented_names():
    assert set(adapter.__all__) == DOCUMENTED
    assert all(callable(getattr(adapter, name)) for name in adapter.__all__)


def test_rules_exports_resolve():
    assert all(hasattr(adapter.rules, name) for name in adapter.rules.__all__)
    assert "grade" in adapter.rules.__all__ and "RuleRewardSystem" in adapter.rules.__all__


def test_drop_in_import_from_the_seed_guide():
    from adapter import JudgeRewardSystem as RewardSystem

    assert issubclass(RewardSystem, adapter.BaseJudgeReward)
