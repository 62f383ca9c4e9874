"""Process rewards for agent trajectories: each of the agent's turns judged on its own (profile
``step``), and the turns' scores combined (``steps``: the turns and their scores; ``judge``: the
turns of one trajectory judged in one batch through the one seam; ``turn_rewards``: an episode's
reward paid turn by turn, for trainers that take a reward at each step)."""

from adapter.process.steps import StepScores, agent_turns, combine_steps

__all__ = ["StepScores", "agent_turns", "combine_steps"]
