"""Turn rewards: an episode's reward paid step by step as its turns are judged, adding up to it.

A trainer that takes a reward at each step of an episode (OpenRLHF's agent ``step``) gets one per
turn, from that turn's judgment, before the outcome is known. What the turns so far take off a
right outcome of score 1 is ``weight * (1 - aggregate)`` of their scores, as the reward's own
``process:`` mix computes it (``aggregate_scores``, the ``max_steps`` window included). A turn's
reward is how much it changed that: a bad turn takes, a turn that repairs what an earlier one
broke (a retry that worked, under ``mean`` or ``last``) gives some back. The turns' rewards so
far always add up to at most 0: they never give back more than earlier turns took.

The last step is paid the episode's reward (the outcome's judgment, mixed with the turns' as
``process:`` says) less what the turns added up to, so every episode's steps add up to its reward
exactly: a wrong outcome's steps to ``outcome * (1 - weight)`` whatever its turns, a right one's
to at most its outcome. (This is potential-based shaping with the potential ``-weight * (1 -
aggregate)`` and 0 at the end: it moves reward between the steps of an episode, never adds any.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adapter.process.steps import aggregate_scores
from adapter.settings import ProcessSettings

__all__ = ["TurnRewards", "turns_take"]


def turns_take(scores: list[float | None], settings: ProcessSettings) -> float:
    """What turns with these scores (in order) take off a right outcome of score 1: ``weight * (1
    - aggregate)``, the turns before the last ``max_steps`` counted as bad; 0 when none was judged."""
    unjudged = max(0, len(scores) - settings.max_steps)
    aggregate = aggregate_scores(scores, settings, unjudged)
    return 0.0 if aggregate is None else settings.weight * (1.0 - aggregate)


@dataclass
class TurnRewards:
    """One episode's turn rewards: ``turn`` pays each turn as it is judged, ``rest`` the last step."""

    settings: ProcessSettings
    scores: list[float | None] = field(default_factory=list)
    paid: float = 0.0  # what the turns' rewards add up to: -turns_take(scores), at most 0

    def turn(self, score: float | None) -> float:
        """The reward of the next turn, scored ``score`` (None: not judged, left out)."""
        self.scores.append(score)
        so_far = -turns_take(self.scores, self.settings)
        reward, self.paid = so_far - self.paid, so_far
        return reward

    def rest(self, reward: float) -> float:
        """The last step's reward: the episode's ``reward`` less what its turns were paid."""
        return reward - self.paid
