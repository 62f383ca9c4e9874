"""The reward a trainer gets back: a value, where it came from, and why."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict
from typing_extensions import TypedDict

__all__ = [
    "JUDGE_DECIDED",
    "RIGHT_OUTCOME",
    "AnchoredMix",
    "GroupComparison",
    "GroupComparisonDict",
    "ProcessMix",
    "RewardDict",
    "RewardResult",
    "Source",
    "judged_reward",
    "right_only",
]

Source = Literal["judge", "cache", "rule", "rule_fallback", "error"]
# The sources of a reward the judge decided (fresh or stored); the others are rules or failures.
JUDGE_DECIDED: frozenset[str] = frozenset({"judge", "cache"})
# An outcome score from which the task counts as done (the judge leans Yes): process rewards
# count only for such outcomes.
RIGHT_OUTCOME = 0.5


def right_only(outcome: float, refinement: float | None, weight: float) -> float:
    """``outcome`` refined by a score that can only lower it, and only where it is right: a right
    outcome (at least ``RIGHT_OUTCOME``) times ``1 - weight * (1 - refinement)`` (itself when there
    is no refinement), a wrong one times ``1 - weight`` whatever the refinement. So the refinement
    never raises a wrong outcome, and a right outcome never earns less than a wrong one."""
    if outcome < RIGHT_OUTCOME:
        return outcome * (1.0 - weight)
    if refinement is None:
        return outcome
    return outcome * (1.0 - weight * (1.0 - refinement))


def judged_reward(result: RewardDict) -> float | None:
    """The reward of a result the judge decided (fresh or stored), else None."""
    return result["reward"] if result["source"] in JUDGE_DECIDED else None


class GroupComparisonDict(TypedDict):
    """A ``GroupComparison`` as the reward dict holds it."""

    shown: list[int]
    p_first: float | None
    ranking: list[int] | None
    source: Source


class RewardDict(TypedDict):
    """The dict ``reward()``, ``reward_batch()`` and ``reward_group()`` return: ``RewardResult``'s
    fields, every key always present (see ``RewardResult`` for what each holds)."""

    reward: float | None
    source: Source
    request_id: str
    explanation: str
    latency_ms: float
    detailed_scores: dict[str, float] | None
    confidence: float | None
    reason: str | None
    error: str | None
    judge_scores: dict[str, float | None] | None
    label: str | None
    judge_score: float | None
    calibration: str | None
    comparisons: list[GroupComparisonDict] | None
    step_scores: list[float | None] | None


@dataclass(frozen=True)
class ProcessMix:
    """An agent trajectory's per-turn scores (``process:``), what they combine to (None: no turn
    could be judged), their share of the reward, and a summary for the explanation.

    The process can only lower a reward, and only a right outcome's (docs/trajectories.md): a
    right outcome (score at least ``RIGHT_OUTCOME``) is paid ``outcome * (1 - weight * (1 -
    aggregate))``, so bad turns cost up to ``weight`` of it; a wrong outcome is paid ``outcome *
    (1 - weight)`` whatever its turns, so no layout of turns (trivial turns added, a bad turn
    moved out of the judged window, a good turn at the end) raises it."""

    scores: list[float | None]
    aggregate: float | None
    weight: float
    summary: str

    def mixed(self, outcome: float) -> tuple[float, str]:
        """The reward for ``outcome``, and the explanation of the mix."""
        reward = right_only(outcome, self.aggregate, self.weight)
        if outcome < RIGHT_OUTCOME:
            return reward, (
                f"process: {self.summary}; the outcome is wrong, so its turns earn nothing: "
                f"outcome x {1.0 - self.weight:.2f}"
            )
        if self.aggregate is None:
            return reward, f"process: {self.summary}, outcome only"
        factor = 1.0 - self.weight * (1.0 - self.aggregate)
        return reward, f"process: {self.summary}: outcome x {factor:.2f}"

    def checked(self) -> ProcessMix:
        """These scores as they may leave the system: a turn's score that is not a finite number in
        [0, 1] (a backend's bug) is None, not judged; an aggregate that is not is none, so the
        reward is the outcome's. Itself when every number is one."""
        scores = [s if s is None or _unit(s) else None for s in self.scores]
        aggregate = self.aggregate if self.aggregate is None or _unit(self.aggregate) else None
        if scores == self.scores and aggregate == self.aggregate:
            return self
        left_out = sum(s is not None for s in self.scores) - sum(s is not None for s in scores)
        summary = f"{left_out} turn score(s) not a finite number in [0, 1] left out; {self.summary}"
        return ProcessMix(scores, aggregate, self.weight, summary)


@dataclass(frozen=True)
class AnchoredMix:
    """A group member's comparative ``score`` (None: it was not compared, or none of its
    comparisons came back), anchored by the member's own judgment (docs/groups.md, "Anchored
    comparisons"): the comparisons can lower a member judged right by at most ``weight``, and a
    member judged wrong is paid ``alone * (1 - weight)`` whatever they say (``right_only``). The
    comparisons it took part in, its reason, and a summary for the explanation."""

    score: float | None
    weight: float
    summary: str
    comparisons: list[GroupComparison] | None = None
    reason: str | None = None

    def mixed(self, alone: float) -> tuple[float, str]:
        """The reward for the member's own judgment ``alone``, and the explanation of the mix."""
        reward = right_only(alone, self.score, self.weight)
        if alone < RIGHT_OUTCOME:
            return reward, (
                "anchored: judged wrong alone, so comparisons earn it nothing: "
                f"{alone:.2f} x {1.0 - self.weight:.2f}"
            )
        if self.score is None:
            return reward, f"anchored: judged right alone; {self.summary}"
        factor = 1.0 - self.weight * (1.0 - self.score)
        return reward, f"anchored: judged right alone; {self.summary}: {alone:.2f} x {factor:.2f}"


def _unit(value: float) -> bool:
    """Whether ``value`` is a finite number in [0, 1]."""
    return isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0


class GroupComparison(BaseModel):
    """One comparison a group reward came from, by the members' indices in the group (-1: the
    reference answer): ``shown`` in the order the judge saw them; ``p_first`` (pairwise) the
    judge's probability that the first shown is better; ``ranking`` (listwise) best first."""

    model_config = ConfigDict(frozen=True)

    shown: list[int]
    p_first: float | None = None
    ranking: list[int] | None = None
    source: Source

    def to_dict(self) -> GroupComparisonDict:
        """The comparison as the reward dict holds it."""
        return {
            "shown": list(self.shown),
            "p_first": self.p_first,
            "ranking": None if self.ranking is None else list(self.ranking),
            "source": self.source,
        }


class RewardResult(BaseModel):
    """One reward. ``reward`` is None only when ``source == "error"`` (fallback disabled).

    Sources: ``judge`` (fresh verdict), ``cache`` (stored verdict), ``rule`` (decided by a
    pre-check or the rule reward), ``rule_fallback`` (the judge failed; ``reason`` says why),
    ``error`` (the judge failed and fallback is off). ``label`` is the label the judge gave
    (judge and cache sources), e.g. "C" when CompassVerifier calls the response invalid;
    ``judge_score`` the judge's own score before calibration and ``calibration`` the identity
    of the ``calibration_file`` applied (None when none was); ``comparisons`` the comparisons a
    group reward (``reward_group``) came from; ``step_scores`` each turn's P(Yes) of an agent
    trajectory under ``process:``, one per turn in order (None: not judged, or its judgment
    failed), for trainers that take turn-level rewards.
    """

    model_config = ConfigDict(frozen=True)

    reward: float | None
    source: Source
    request_id: str
    explanation: str = ""
    latency_ms: float = 0.0
    detailed_scores: dict[str, float] | None = None
    confidence: float | None = None
    reason: str | None = None
    error: str | None = None
    judge_scores: dict[str, float | None] | None = None
    label: str | None = None
    judge_score: float | None = None
    calibration: str | None = None
    comparisons: list[GroupComparison] | None = None
    step_scores: list[float | None] | None = None

    @property
    def score(self) -> float | None:
        """The reward under the seed's name (``compute_reward(...).score``)."""
        return self.reward

    def to_dict(self) -> RewardDict:
        """The plain dict ``reward()`` returns (its own copies of the mappings and lists)."""
        return {
            "reward": self.reward,
            "source": self.source,
            "request_id": self.request_id,
            "explanation": self.explanation,
            "latency_ms": self.latency_ms,
            "detailed_scores": None if self.detailed_scores is None else dict(self.detailed_scores),
            "confidence": self.confidence,
            "reason": self.reason,
            "error": self.error,
            "judge_scores": None if self.judge_scores is None else dict(self.judge_scores),
            "label": self.label,
            "judge_score": self.judge_score,
            "calibration": self.calibration,
            "comparisons": None if self.comparisons is None else [c.to_dict() for c in self.comparisons],
            "step_scores": None if self.step_scores is None else list(self.step_scores),
        }
