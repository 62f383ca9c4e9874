"""What a trainer imports: the judge reward, its config, and the rule reward.

from adapter import JudgeRewardSystem as RewardSystem
reward_system = RewardSystem("configs/reward.yaml")
result = reward_system.reward(prompt, completion, answer, answer_type="NUMBER")
"""

from adapter.config import RewardConfig, load_reward_config
from adapter.ensemble import MultiJudge
from adapter.factory import create_judge_reward
from adapter.metrics_dict import MetricsDict
from adapter.result import RewardDict, RewardResult
from adapter.reward import BaseJudgeReward, JudgeRewardSystem
from adapter.rules import RuleRewardSystem

__all__ = [
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
]
