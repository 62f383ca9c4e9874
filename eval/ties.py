"""How often the members of one group get the same judge reward (no judge needed: it reads runs).

    python -m eval.ties out/run-a/scores.jsonl [out/run-b/scores.jsonl ...]

GRPO learns from the differences between the rewards of a group's members: two members with the
same reward have the same advantage, and the update learns nothing from the difference between
them. A judge whose scores come in steps (a CPU judge in bfloat16 writes P(Yes) log-odds in steps
of 0.125: 0.500, 0.531, 0.562, ...) ties members that a finer score would tell apart.

Rows of a ``judge-eval`` run's ``scores.jsonl`` that share a prompt and a reference are one group
(as ``eval.group_eval.labelled_groups`` groups them). Per file: the groups of two or more members,
every pair of members of one group, and the share of them whose judge rewards are equal (within
``TOLERANCE``: the label probabilities come back as float32 log-probabilities, so two judgments on
one step of the grid differ in the eighth decimal, a difference no advantage keeps); the same
over the pairs whose two members the judge model decided (source ``judge``: not a pre-check's 0,
not a fallback), and over the (correct, incorrect) pairs (labels binarised at 0.5), where a tie is
an ordering lost; and how many distinct rewards the judge model gave.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from eval.metrics import THRESHOLD

__all__ = ["TieStats", "main", "tie_stats", "ties_markdown"]

JUDGED = frozenset({"judge"})
TOLERANCE = 1e-6


class ScoreRow(BaseModel):
    """The fields of a ``scores.jsonl`` line that ties are read from."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    prompt: str
    answer: str
    label: float | None = None
    judge: float | None = None
    judge_source: str | None = None


class TieStats(BaseModel):
    """Ties within the groups of one run."""

    model_config = ConfigDict(frozen=True)

    groups: int
    pairs: int
    tied: int
    judged_pairs: int
    judged_tied: int
    mixed_pairs: int
    mixed_tied: int
    judged_rows: int
    distinct_judged: int

    @staticmethod
    def share(tied: int, pairs: int) -> float | None:
        return tied / pairs if pairs else None


def _groups(rows: Iterable[ScoreRow]) -> list[list[ScoreRow]]:
    groups: dict[tuple[str, str], list[ScoreRow]] = {}
    for row in rows:
        groups.setdefault((row.prompt, row.answer), []).append(row)
    return [g for g in groups.values() if len(g) >= 2]


def _correct(row: ScoreRow) -> bool | None:
    return None if row.label is None else row.label >= THRESHOLD


def _distinct(values: Iterable[float], tolerance: float) -> int:
    """How many values are apart by more than ``tolerance`` from the one below them."""
    ordered = sorted(values)
    return sum(1 for k, v in enumerate(ordered) if k == 0 or v - ordered[k - 1] > tolerance)


def tie_stats(lines: Sequence[Mapping[str, object]], tolerance: float = TOLERANCE) -> TieStats:
    """The ties of ``lines`` (``scores.jsonl`` lines: prompt, answer, label, judge, judge_source)."""
    rows = [ScoreRow.model_validate(line) for line in lines]
    groups = _groups(rows)
    pairs = tied = judged_pairs = judged_tied = mixed_pairs = mixed_tied = 0
    for group in groups:
        for a, b in combinations(group, 2):
            if a.judge is None or b.judge is None:
                continue
            same = abs(a.judge - b.judge) <= tolerance
            pairs += 1
            tied += same
            if a.judge_source in JUDGED and b.judge_source in JUDGED:
                judged_pairs += 1
                judged_tied += same
            ca, cb = _correct(a), _correct(b)
            if ca is not None and cb is not None and ca != cb:
                mixed_pairs += 1
                mixed_tied += same
    judged = [r.judge for r in rows if r.judge_source in JUDGED and r.judge is not None]
    return TieStats(
        groups=len(groups),
        pairs=pairs,
        tied=tied,
        judged_pairs=judged_pairs,
        judged_tied=judged_tied,
        mixed_pairs=mixed_pairs,
        mixed_tied=mixed_tied,
        judged_rows=len(judged),
        distinct_judged=_distinct(judged, tolerance),
    )


def _fmt(tied: int, pairs: int) -> str:
    share = TieStats.share(tied, pairs)
    return "n/a" if share is None else f"{tied}/{pairs} ({share:.1%})"


def ties_markdown(named: Sequence[tuple[str, TieStats]]) -> str:
    """One row per run."""
    lines = [
        "| run | groups | tied pairs, all | tied pairs, both judged | tied (correct, incorrect) pairs | distinct judged rewards |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in named:
        lines.append(
            f"| {name} | {s.groups} | {_fmt(s.tied, s.pairs)} | {_fmt(s.judged_tied, s.judged_pairs)} | "
            f"{_fmt(s.mixed_tied, s.mixed_pairs)} | {s.distinct_judged} of {s.judged_rows} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.ties", description=__doc__.split("\n\n")[0])
    parser.add_argument("scores", nargs="+", type=Path, help="judge-eval runs' scores.jsonl")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=TOLERANCE,
        help="rewards this close are a tie (default: %(default)g)",
    )
    args = parser.parse_args(argv)
    named = []
    for path in args.scores:
        with path.open(encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        named.append((str(path), tie_stats(rows, args.tolerance)))
    print(ties_markdown(named), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
