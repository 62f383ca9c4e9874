"""The reward a trainer gets back: a value, where it came from, and why."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["JUDGE_DECIDED", "GroupComparison", "RewardResult", "Source"]

Source = Literal["judge", "cache", "rule", "rule_fallback", "error"]
# The sources of a reward the judge decided (fresh or stored); the others are rules or failures.
JUDGE_DECIDED: frozenset[str] = frozenset({"judge", "cache"})


class GroupComparison(BaseModel):
    """One comparison a group reward came from, by the members' indices in the group (-1: the
    reference answer): ``shown`` in the order the judge saw them; ``p_first`` (pairwise) the
    judge's probability that the first shown is better; ``ranking`` (listwise) best first."""

    model_config = ConfigDict(frozen=True)

    shown: list[int]
    p_first: float | None = None
    ranking: list[int] | None = None
    source: Source


class RewardResult(BaseModel):
    """One reward. ``reward`` is None only when ``source == "error"`` (fallback disabled).

    Sources: ``judge`` (fresh verdict), ``cache`` (stored verdict), ``rule`` (decided by a
    pre-check or the rule reward), ``rule_fallback`` (the judge failed; ``reason`` says why),
    ``error`` (the judge failed and fallback is off). ``label`` is the label the judge gave
    (judge and cache sources), e.g. "C" when CompassVerifier calls the response invalid;
    ``judge_score`` the judge's own score before calibration and ``calibration`` the identity
    of the ``calibration_file`` applied (None when none was); ``comparisons`` the comparisons a
    group reward (``reward_group``) came from.
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

    @property
    def score(self) -> float | None:
        """The reward under the seed's name (``compute_reward(...).score``)."""
        return self.reward

    def to_dict(self) -> dict[str, Any]:
        """The plain dict ``reward()`` returns."""
        return self.model_dump()
