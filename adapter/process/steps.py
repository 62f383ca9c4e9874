"""An agent's turns, and how their per-step scores combine with the outcome into one reward.

A turn is what the agent wrote between two tool results: its text and the tool calls it made,
with the results those calls got (they show whether the turn worked). The judgment of turn k
sees the trajectory up to the end of turn k's results; the final reply is the outcome's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from adapter.result import ProcessMix
from adapter.settings import ProcessSettings
from judge_vllm.trajectory import ResultStep, Trajectory

__all__ = ["AgentTurn", "StepScores", "agent_turns", "combine_steps"]


@dataclass(frozen=True)
class AgentTurn:
    """Steps ``first``..``last`` (1-based, as the judge is shown them) are the agent's own; the
    trajectory up to ``end`` (exclusive: the turn's results included) is what its judge sees."""

    first: int
    last: int
    end: int

    @property
    def name(self) -> str:
        return f"step {self.first}" if self.first == self.last else f"steps {self.first}-{self.last}"


@dataclass(frozen=True)
class StepScores:
    """Each judged turn's P(Yes) (None: not judged), by turn, and what they combine to."""

    turns: tuple[AgentTurn, ...]
    scores: tuple[float | None, ...]
    aggregate: float | None
    how: str

    def mix(self, weight: float) -> ProcessMix:
        """These scores as the share ``weight`` of a reward."""
        return ProcessMix(list(self.scores), self.aggregate, weight, self.explanation())

    def explanation(self) -> str:
        judged = sum(s is not None for s in self.scores)
        if self.aggregate is None:
            return f"process: none of {len(self.turns)} turn(s) could be judged, outcome only"
        return f"process: {self.how} {self.aggregate:.2f} over {judged} of {len(self.turns)} turn(s)"


def agent_turns(trajectory: Trajectory) -> list[AgentTurn]:
    """The agent's turns, in order: each run of its own steps (text, calls) with the results after it."""
    turns: list[AgentTurn] = []
    first: int | None = None
    last = 0
    for index, step in enumerate(trajectory.steps):
        if isinstance(step, ResultStep):
            if first is not None:
                turns.append(AgentTurn(first, last, index + 1))
                first = None
            elif turns:  # a second result of the same turn
                turns[-1] = AgentTurn(turns[-1].first, turns[-1].last, index + 1)
            continue
        if first is None:
            first = index + 1
        last = index + 1
    if first is not None:
        turns.append(AgentTurn(first, last, len(trajectory.steps)))
    return turns


def combine_steps(turns: list[AgentTurn], scores: list[float | None], settings: ProcessSettings) -> StepScores:
    """The turns' scores combined as ``settings.aggregate`` says, over the judged ones."""
    judged = [s for s in scores if s is not None]
    aggregate: float | None
    if not judged:
        aggregate = None
    elif settings.aggregate == "min":
        aggregate = min(judged)
    elif settings.aggregate == "last":
        aggregate = judged[-1]
    else:
        aggregate = statistics.fmean(judged)
    return StepScores(tuple(turns), tuple(scores), aggregate, settings.aggregate)
