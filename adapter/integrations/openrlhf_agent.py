"""OpenRLHF's agent mode (``--train.agent_func_path``): an episode rewarded by the judge over its trajectory.

In agent mode OpenRLHF 0.11 asks no reward model: its ``MultiTurnAgentExecutor``
(``openrlhf/utils/agent.py``) calls the agent file's ``AgentInstance.step`` after each of the
policy's turns, sums the steps' ``rewards`` into the sample's reward and keeps the last step's
``scores`` and ``extra_logs``. ``JudgedEpisode`` records what the policy did (its turns, with
tool calls in the Hermes format its chat template writes) and what the environment answered
(``<tool_response>`` turns as tool results, any other reply as the environment's; a
``<tool_response>`` in the policy's own text stays its text), and on the last step judges the
whole trajectory (docs/trajectories.md). An agent file:

    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor
    from adapter.integrations.openrlhf_agent import JudgedEpisode

    class AgentInstance(AgentInstanceBase):
        async def reset(self, states, **kwargs):
            self.episode = JudgedEpisode(states["observation"], states["label"])
            return {"observation": states["observation"]}

        async def step(self, states, **kwargs):
            feedback, done = my_environment(states["action_text"])  # run the policy's tool calls
            return await self.episode.step(states["action_text"], feedback, done)

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self):
            super().__init__(AgentInstance)

Turn rewards: with ``process:`` in the config, each step that ends one of the policy's turns (the
environment answered it) has that turn judged at once and is paid its turn reward
(``adapter.process.turn_rewards``); the last step is paid the episode's reward less what the turns
were paid, so OpenRLHF's sum is the episode's reward, as without them. Without ``process:``, or
with ``turn_rewards=False``, the steps before the last earn 0 and the last the episode's reward.

The judge is the process's ``openrlhf_inprocess`` reward system (``JUDGE_REWARD_CONFIG``).
With a comparing ``group:`` in that config and ``group_size`` (OpenRLHF's
``n_samples_per_prompt``), the episodes of one prompt and label are collected for up to
``group_window`` seconds and judged together, each getting its own reward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from typing_extensions import TypedDict

from adapter.integrations.group_collector import DEFAULT_GROUP_WINDOW_S, GroupCollector
from adapter.integrations.openrlhf_inprocess import get_reward_system
from adapter.integrations.openrlhf_protocol import OpenRLHFRewards, label_text, unavailable_message
from adapter.pipeline.trajectory import WrittenSpan, hermes_messages, turn_text
from adapter.process.turn_rewards import TurnRewards
from adapter.result import RewardDict
from judge_vllm.errors import JudgeError

__all__ = ["TURN_REWARDS_LOG", "EpisodeStep", "JudgedEpisode"]

# The last step's extra log, with turn rewards: what the episode's turns were paid in all (at most 0).
TURN_REWARDS_LOG = "judge_turn_rewards"


class EpisodeStep(TypedDict):
    """What ``AgentInstance.step`` returns to OpenRLHF (its ``rewards``, ``scores``, ``extra_logs``
    as tensors, ``environment_feedback``, ``done``)."""

    rewards: torch.Tensor
    scores: torch.Tensor
    environment_feedback: str
    done: bool
    extra_logs: dict[str, torch.Tensor]


async def _judge_group(items: list[dict[str, object]]) -> list[RewardDict]:
    return await get_reward_system().areward_group(items)


_groups: GroupCollector[dict[str, object], RewardDict] = GroupCollector(_judge_group)


@dataclass
class JudgedEpisode:
    """One sample's episode: its prompt (OpenRLHF's observation), label (the reference answer) and
    the messages so far; ``step`` records a turn, pays it its turn reward (with ``process:`` and
    ``turn_rewards``) and, when the episode is done, judges it."""

    prompt: str
    label: object
    answer_type: str | None = None
    group_size: int | None = None
    group_window: float = DEFAULT_GROUP_WINDOW_S
    turn_rewards: bool = True
    messages: list[dict[str, object]] = field(default_factory=list)
    turns: TurnRewards | None = None  # the turn rewards paid so far (None: none paid)

    async def step(self, action_text: str, environment_feedback: str, done: bool) -> EpisodeStep:
        """Record the policy's turn and, unless the episode is ``done``, the environment's reply
        with the turn's reward; on the last step the episode's reward less what its turns were
        paid. ``JudgeError`` when the judge failed and ``fallback_to_rule`` is off (OpenRLHF then
        leaves the sample without a reward)."""
        self.messages.extend(_turn(action_text))
        if not done:
            answered = _feedback(environment_feedback)
            self.messages.extend(answered)
            turn = torch.tensor(await self._turn_reward() if answered else 0.0)
            return {"rewards": turn, "scores": turn, "environment_feedback": environment_feedback,
                    "done": False, "extra_logs": {}}  # fmt: skip
        result = await self._judged()
        unavailable = unavailable_message([result])
        if unavailable is not None:
            raise JudgeError(unavailable)
        rewards = OpenRLHFRewards.from_results([result])
        logs = {key: torch.tensor(values[0]) for key, values in rewards.extra_logs.items()}
        reward = rewards.rewards[0]
        if self.turns is not None:
            logs[TURN_REWARDS_LOG] = torch.tensor(self.turns.paid)
            reward = self.turns.rest(reward)
        return {"rewards": torch.tensor(reward), "scores": torch.tensor(rewards.scores[0]),
                "environment_feedback": environment_feedback, "done": True, "extra_logs": logs}  # fmt: skip

    async def _turn_reward(self) -> float:
        """The reward of the turn the environment just answered: judged now, with ``process:``."""
        system = get_reward_system()
        process = system.config.process
        if process is None or not self.turn_rewards:
            return 0.0
        if self.turns is None:
            self.turns = TurnRewards(process)
        score = await system.alast_turn_score(
            self.prompt, list(self.messages), label_text(self.label), self.answer_type
        )
        return self.turns.turn(score)

    async def _judged(self) -> RewardDict:
        item: dict[str, object] = {
            "prompt": self.prompt,
            "completion": list(self.messages),
            "answer": label_text(self.label),
            "answer_type": self.answer_type,
        }
        system = get_reward_system()
        group = system.config.group
        if group is not None and group.mode != "pointwise":
            key = (self.prompt, repr(self.label), self.answer_type)
            return await _groups.submit(key, item, self.group_size, self.group_window)
        return (await system.areward_batch([item]))[0]


def _turn(action_text: str) -> list[dict[str, object]]:
    """The policy's turn as messages: its text, and its tool calls when it wrote any (a
    ``<tool_response>`` it wrote is its own text: only the environment's feedback holds results)."""
    written = hermes_messages([WrittenSpan(by_policy=True, text=action_text)])
    return written or [{"role": "assistant", "content": turn_text(action_text)}]


def _feedback(environment_feedback: str) -> list[dict[str, object]]:
    """The environment's reply: its ``<tool_response>`` turns as tool results, else the reply."""
    return hermes_messages([WrittenSpan(by_policy=False, text=environment_feedback)]) or []
