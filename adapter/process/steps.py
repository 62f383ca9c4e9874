"""An agent's turns, and how their per-step scores combine with the outcome into one reward.

A turn is what the agent wrote between two tool results: its text and the tool calls it made,
with the results those calls got (they show whether the turn worked). The judgment of turn k
sees the trajectory up to the end of turn k's results; the final reply is the outcome's.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from adapter.result import ProcessMix
from adapter.settings import ProcessSettings
from judge_vllm.trajectory import ResultStep, Trajectory

__all__ = ["AgentTurn", "StepScores", "agent_turns", "aggregate_scores", "combine_steps"]


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
    """Each turn's P(Yes), by turn (None: not judged, or its judgment failed), how many of the
    first turns ``max_steps`` left unjudged, and what the scores combine to (None: no judgment
    came back)."""

    turns: tuple[AgentTurn, ...]
    scores: tuple[float | None, ...]
    unjudged: int
    aggregate: float | None
    how: str

    def mix(self, weight: float) -> ProcessMix:
        """These scores, to lower a right outcome's reward by at most ``weight`` (``ProcessMix``)."""
        return ProcessMix(list(self.scores), self.aggregate, weight, self.summary())

    def summary(self) -> str:
        """What the scores came to, for the reward's explanation."""
        if self.aggregate is None:
            return f"none of {len(self.turns)} turn(s) could be judged"
        judged = sum(s is not None for s in self.scores)
        beyond = f" ({self.unjudged} before the last max_steps counted as bad)" if self.unjudged else ""
        return f"{self.how} {self.aggregate:.2f} over {judged} of {len(self.turns)} turn(s){beyond}"


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


def combine_steps(
    turns: list[AgentTurn], scores: list[float | None], settings: ProcessSettings, unjudged: int = 0
) -> StepScores:
    """The turns' scores (one per turn, the first ``unjudged`` None: left out by ``max_steps``)
    combined as ``settings.aggregate`` says. A turn left unjudged is unknown, so never counted as
    good: it counts as a bad one (0). A turn whose judgment failed is left out (the judge's
    failure, not the policy's); with no judgment back there is no aggregate."""
    aggregate = aggregate_scores(scores, settings, unjudged)
    return StepScores(tuple(turns), tuple(scores), unjudged, aggregate, settings.aggregate)


def aggregate_scores(
    scores: Sequence[float | None], settings: ProcessSettings, unjudged: int = 0
) -> float | None:
    """What the turns' scores combine to (``combine_steps``): the first ``unjudged`` count as bad
    (0), a failed judgment (None) after them is left out; None when none was judged."""
    judged = [s for s in scores[unjudged:] if s is not None]
    if not judged:
        return None
    counted = [0.0] * unjudged + judged
    if settings.aggregate == "min":
        return min(counted)
    if settings.aggregate == "last":
        return counted[-1]
    return statistics.fmean(counted)
