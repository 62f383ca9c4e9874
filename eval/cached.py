"""Verdicts served from the cache: counted, and never shown as a judge that cost nothing.

A rerun answers finished rows from the cache (source ``cache``): no judge call, no time. The
run's judge items, HTTP calls and seconds leave those rows out, so a cost figure is marked:
``cached`` when the judge was not called at all, ``X + cached`` when some rows came from the
cache; and a note says how many rows each scorer took from it.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CACHED", "cached_note", "cost_cell"]

CACHED = "cached"


def cost_cell(value: str, cached_rows: int, calls: float | None) -> str:
    """``value`` (a cost figure of the run), marked when cached rows are not in it: ``cached`` when
    the run made no judge call, ``value + cached`` when it made some."""
    if not cached_rows:
        return value
    return CACHED if not calls else f"{value} + {CACHED}"


def cached_note(cached: Mapping[str, tuple[int, int]]) -> str | None:
    """One sentence naming each scorer's rows that came from the cache (``name -> (cached,
    rows)``); None when none did."""
    counts = [f"{name} {n} of {rows} rows" for name, (n, rows) in cached.items() if n]
    if not counts:
        return None
    return (
        ", ".join(counts)
        + " came from the cache (verdicts stored by an earlier run; the judge was not asked again): this "
        "run's judge calls, items and seconds leave them out, so they are not what the judge costs "
        f"('{CACHED}': no judge call at all). A fresh cache_dir (or use_cache: false) measures the cost."
    )
