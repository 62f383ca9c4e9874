"""From the judge's comparisons to one score in [0, 1] per member of a group.

A ``Comparison`` is one judgment of ``(first, second)`` as shown: ``p_first`` the probability
that the first is better (the hard label gives 1.0 or 0.0, a tie 0.5; with logprobs, the
judge's own probability). ``pair_preferences`` averages the two orders of each pair, so a pair
whose two verdicts disagree is a tie and pure position bias cancels out. Members are then
scored by their mean preference (``win_rates``) or by Bradley-Terry strengths fitted to the
soft wins (``bradley_terry``), mapped to P(beats the group's typical member). ``listwise_scores``
turns rankings of the whole group into scores by mean rank. Members that took part in no
comparison get None: the caller gives them a pointwise or rule reward, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from adapter.groups.schedules import REFERENCE

__all__ = ["Comparison", "bradley_terry", "listwise_scores", "pair_preferences", "win_rates"]

BT_ITERATIONS = 200
BT_TOLERANCE = 1e-9
# Half a virtual tie between every two members who met: keeps a member that won (or lost)
# everything at a finite strength.
BT_PRIOR_TIES = 0.5
MIN_STRENGTH = 1e-12


class Comparison(BaseModel):
    """One judgment of ``first`` vs ``second`` in the order shown (``REFERENCE`` is the reference)."""

    model_config = ConfigDict(frozen=True)

    first: int
    second: int
    p_first: float = Field(ge=0.0, le=1.0)


def pair_preferences(comparisons: Iterable[Comparison]) -> dict[tuple[int, int], float]:
    """P(i better than j) for each unordered pair ``(i, j)``, ``i < j``: the mean over every
    order it was asked in (one order alone counts as asked; both orders cancel position bias)."""
    seen: dict[tuple[int, int], list[float]] = {}
    for c in comparisons:
        if c.first == c.second:
            continue
        i, j = sorted((c.first, c.second))
        p_i = c.p_first if c.first == i else 1.0 - c.p_first
        seen.setdefault((i, j), []).append(p_i)
    return {pair: sum(ps) / len(ps) for pair, ps in seen.items()}


def _members_won(n: int, preferences: dict[tuple[int, int], float]) -> list[list[tuple[int, float]]]:
    """For each member, (opponent, P(member better)) over its pairs; the reference counts as an opponent."""
    met: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for (i, j), p in preferences.items():
        if 0 <= i < n:
            met[i].append((j, p))
        if 0 <= j < n:
            met[j].append((i, 1.0 - p))
    return met


def win_rates(n: int, preferences: dict[tuple[int, int], float]) -> list[float | None]:
    """Each member's mean P(better) over the pairs it took part in (None when it met nobody)."""
    return [sum(p for _, p in met) / len(met) if met else None for met in _members_won(n, preferences)]


def bradley_terry(
    n: int, preferences: dict[tuple[int, int], float], prior_ties: float = BT_PRIOR_TIES
) -> list[float | None]:
    """Bradley-Terry strengths fitted to the soft wins (minorise-maximise, ``prior_ties`` virtual
    ties per pair that met), as P(member beats a member of the group's geometric-mean strength);
    the reference, when compared, is one more player. None for members that met nobody."""
    players = sorted({k for pair in preferences for k in pair} | set(range(n)))
    index = {p: k for k, p in enumerate(players)}
    wins = [[0.0] * len(players) for _ in players]  # wins[a][b]: soft wins of a over b
    for (i, j), p in preferences.items():
        a, b = index[i], index[j]
        wins[a][b] += p + prior_ties
        wins[b][a] += 1.0 - p + prior_ties
    strength = [1.0] * len(players)
    for _ in range(BT_ITERATIONS):
        updated = []
        for a in range(len(players)):
            games = [(b, wins[a][b] + wins[b][a]) for b in range(len(players)) if wins[a][b] + wins[b][a] > 0]
            total_wins = sum(wins[a][b] for b, _ in games)
            denominator = sum(count / (strength[a] + strength[b]) for b, count in games)
            # A member that won nothing (possible only without prior ties) stays just above 0.
            updated.append(max(total_wins / denominator, MIN_STRENGTH) if denominator else strength[a])
        scale = math.exp(sum(math.log(s) for s in updated) / len(updated))
        updated = [s / scale for s in updated]
        converged = max(abs(u - s) for u, s in zip(updated, strength, strict=True)) < BT_TOLERANCE
        strength = updated
        if converged:
            break
    met = [i for i, opponents in enumerate(_members_won(n, preferences)) if opponents]
    if not met:
        return [None] * n
    typical = math.exp(sum(math.log(strength[index[i]]) for i in met) / len(met))
    return [strength[index[i]] / (strength[index[i]] + typical) if i in met else None for i in range(n)]


def listwise_scores(n: int, rankings: Sequence[Sequence[int]]) -> list[float | None]:
    """Scores from rankings of the group, best first: 1 - mean rank / (n - 1) over the rankings
    that placed the member (None when none did; 1.0 for a group of one)."""
    ranks: list[list[int]] = [[] for _ in range(n)]
    for ranking in rankings:
        for position, member in enumerate(ranking):
            if 0 <= member < n and member != REFERENCE:
                ranks[member].append(position)
    if n == 1:
        return [1.0 if ranks[0] else None]
    return [1.0 - (sum(r) / len(r)) / (n - 1) if r else None for r in ranks]
