"""Group rewards (issue: group and rubric judging): the completions of one prompt judged
together. ``schedules``: which comparisons to ask (within a budget); ``preferences``: from comparisons in both
orders to scores in [0, 1] (win rates, Bradley-Terry, listwise mean rank)."""

from adapter.groups.preferences import (
    Comparison,
    bradley_terry,
    listwise_scores,
    pair_preferences,
    win_rates,
)
from adapter.groups.schedules import (
    REFERENCE,
    Pair,
    all_pairs,
    anchored,
    cyclic_shifts,
    round_robin,
    subgroups,
    within_budget,
)

__all__ = [
    "REFERENCE",
    "Comparison",
    "Pair",
    "all_pairs",
    "anchored",
    "bradley_terry",
    "cyclic_shifts",
    "listwise_scores",
    "pair_preferences",
    "round_robin",
    "subgroups",
    "win_rates",
    "within_budget",
]
