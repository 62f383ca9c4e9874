"""Which comparisons a group of ``n`` completions asks of the judge.

A ``Pair`` is ``(shown_first, shown_second)``: member indices, or ``REFERENCE`` for the
reference answer. Every schedule asks each pair in both orders, so a judge that prefers
whichever response it sees first favours nobody (``preferences.pair_preferences`` averages
the two orders). Listwise judging shows all ``n`` at once, in ``cyclic_shifts`` orders: with
``n`` shifts every member holds every position exactly once. ``within_budget`` bounds a
group's comparisons: a schedule that asks more becomes ``round_robin`` with fewer opponents.
``subgroups`` splits a group larger than ``group.max_members`` into interleaved sub-groups that
are each compared on their own.
"""

from __future__ import annotations

__all__ = [
    "REFERENCE",
    "Pair",
    "all_pairs",
    "anchored",
    "cyclic_shifts",
    "round_robin",
    "subgroups",
    "within_budget",
]

REFERENCE = -1
Pair = tuple[int, int]


def _both_orders(unordered: list[tuple[int, int]]) -> list[Pair]:
    return [order for i, j in unordered for order in ((i, j), (j, i))]


def all_pairs(n: int) -> list[Pair]:
    """Every member against every other, both orders: n(n-1) comparisons."""
    return _both_orders([(i, j) for i in range(n) for j in range(i + 1, n)])


def round_robin(n: int, opponents: int) -> list[Pair]:
    """Each member against its next ``opponents`` members (cyclically), both orders.

    Every member meets at least ``opponents`` others (each pair once, in both orders): about
    n x opponents x 2 comparisons instead of n(n-1); ``opponents >= n - 1`` is ``all_pairs``.
    """
    if opponents < 1:
        raise ValueError(f"round_robin needs at least 1 opponent per member, got {opponents}")
    reach = min(opponents, n - 1)
    met = {(min(i, (i + s) % n), max(i, (i + s) % n)) for i in range(n) for s in range(1, reach + 1)}
    return _both_orders(sorted(met))


def anchored(n: int, anchor: int = REFERENCE) -> list[Pair]:
    """Each member against one anchor (a member's index, or ``REFERENCE``), both orders:
    2n comparisons (2(n-1) when the anchor is a member)."""
    if anchor != REFERENCE and not 0 <= anchor < n:
        raise ValueError(f"anchor {anchor} is not a member of a group of {n}")
    return _both_orders([(i, anchor) for i in range(n) if i != anchor])


def within_budget(n: int, pairs: list[Pair], budget: int) -> list[Pair]:
    """``pairs`` when there are at most ``budget`` of them, else ``round_robin`` with the most
    opponents that fit (at least one: 2n comparisons, every member still compared in both orders)."""
    if len(pairs) <= budget or n < 2:
        return pairs
    return round_robin(n, max(1, budget // (2 * n)))


def cyclic_shifts(n: int, shifts: int | None = None) -> list[list[int]]:
    """The orders a listwise judge sees: ``shifts`` cyclic shifts of 0..n-1 (default ``n``, so
    every member holds every position once)."""
    count = n if shifts is None else shifts
    if not 1 <= count <= max(n, 1):
        raise ValueError(f"listwise needs 1 to {n} shifts for a group of {n}, got {count}")
    return [[(start + k) % n for k in range(n)] for start in range(count)]


def subgroups(n: int, max_members: int) -> list[list[int]]:
    """Members 0..n-1 in the fewest sub-groups of at most ``max_members``, dealt in turn (member
    k to sub-group k mod count): sizes differ by one at most, and a batch that holds a prompt's
    completions in blocks (two blocks of one prompt, say) spreads each block over every sub-group."""
    if max_members < 1:
        raise ValueError(f"sub-groups need at least 1 member each, got {max_members}")
    count = max(1, -(-n // max_members))
    return [list(range(start, n, count)) for start in range(count) if start < n]
