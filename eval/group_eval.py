"""``judge-eval --group-modes``: how well each group mode orders the members of labelled groups.

Rows that share a prompt and a reference are one group; a group with both a correct and an
incorrect member (labels binarised at 0.5) can be ordered right or wrong. For each mode the
groups are scored with ``reward_group`` and the report gives the **ordering accuracy**: over
every (correct, incorrect) pair of members of one group, how often the correct member's reward
is higher (a tie counts half; 0.5 is chance), with a bootstrap interval over groups, the
judgments each mode took, the share of the members sent to the judge that it decided (members
a pre-check decides by rule are not sent), and the time. Groups are judged a few at a time
(``CONCURRENT_GROUPS``), so a queue of every group's comparisons does not turn into timeouts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import numpy as np
from pydantic import BaseModel, ConfigDict

from adapter import BaseJudgeReward, RewardConfig, RewardDict, create_judge_reward
from adapter.settings import GroupSettings
from eval.coverage import JUDGE_DECIDED, JudgeCoverage, judge_coverage
from eval.dataset import EvalRow
from eval.intervals import Array, Interval, bootstrap
from eval.metrics import THRESHOLD
from eval.report import Block, Heading, Paragraph, Table, fmt

__all__ = [
    "GroupModeStats",
    "evaluate_group_modes",
    "group_modes_blocks",
    "judgments_behind",
    "labelled_groups",
    "parse_group_mode",
]

CONCURRENT_GROUPS = 4
NO_FIGURE = "no figure"


class GroupModeStats(BaseModel):
    """One group mode's figures on the labelled groups."""

    model_config = ConfigDict(frozen=True)

    mode: str
    groups: int
    members: int
    pairs: int
    ordering_accuracy: float | None
    interval: Interval | None
    judgments: int
    judged_share: float
    seconds: float
    model: str | None = None
    coverage: JudgeCoverage | None = None


def parse_group_mode(text: str, base: GroupSettings | None) -> tuple[str, GroupSettings]:
    """``pointwise``, ``pairwise``, ``pairwise:round_robin``, ``listwise``... as settings over the
    config's own ``group:`` block (deadline, scoring, opponents stay as configured)."""
    mode, _, schedule = text.partition(":")
    update: dict[str, str] = {"mode": mode}
    if schedule:
        update["schedule"] = schedule
    settings = GroupSettings.model_validate({**(base or GroupSettings()).model_dump(), **update})
    return text, settings


def labelled_groups(rows: Sequence[EvalRow]) -> list[list[EvalRow]]:
    """Rows grouped by (prompt, reference), keeping groups with a correct and an incorrect member."""
    groups: dict[tuple[str, str], list[EvalRow]] = {}
    for row in rows:
        if row.label is not None:
            groups.setdefault((row.prompt, row.answer), []).append(row)
    return [g for g in groups.values() if len({_correct(r) for r in g}) == 2]


def _correct(row: EvalRow) -> bool:
    return row.label is not None and row.label >= THRESHOLD


def _ordering(rewards: Sequence[float | None], rows: Sequence[EvalRow]) -> tuple[float, int]:
    """(pairs ordered right, with ties as half, and the number of pairs) of one group."""
    wins, pairs = 0.0, 0
    for good_reward, good in zip(rewards, rows, strict=True):
        for bad_reward, bad in zip(rewards, rows, strict=True):
            if _correct(good) and not _correct(bad):
                pairs += 1
                g, b = good_reward or 0.0, bad_reward or 0.0
                wins += 1.0 if g > b else 0.5 if g == b else 0.0
    return wins, pairs


def judgments_behind(results: Sequence[RewardDict]) -> int:
    """Judge requests behind a group's rewards: distinct comparisons, and members judged alone (a
    reward without comparisons, or an anchored one: its own judgment's score beside them)."""
    shown = {tuple(c["shown"]) for r in results for c in (r.get("comparisons") or [])}
    alone = sum(
        1
        for r in results
        if r["source"] in JUDGE_DECIDED and (not r.get("comparisons") or r.get("judge_score") is not None)
    )
    return len(shown) + alone


def _ratio(wins: Array, pairs: Array) -> float:
    total = float(np.sum(pairs))
    return float(np.sum(wins)) / total if total else float("nan")


def _advance(advance: Callable[[str, int], None] | None, name: str, n: int) -> None:
    if advance is not None:
        advance(name, n)


async def _score_groups(
    judge: BaseJudgeReward, items: Sequence[Sequence[Mapping[str, object]]], advance: Callable[[int], object]
) -> list[list[RewardDict]]:
    """Every group's rewards, the groups judged concurrently."""

    slots = asyncio.Semaphore(CONCURRENT_GROUPS)

    async def one(group: Sequence[Mapping[str, object]]) -> list[RewardDict]:
        async with slots:
            results = await judge.areward_group(group)
        advance(1)
        return results

    return list(await asyncio.gather(*(one(g) for g in items)))


def evaluate_group_modes(
    groups: Sequence[Sequence[EvalRow]],
    config: RewardConfig,
    modes: Sequence[tuple[str, GroupSettings]],
    seed: int = 0,
    advance: Callable[[str, int], None] | None = None,
    make_judge: Callable[[RewardConfig], BaseJudgeReward] = create_judge_reward,
) -> list[GroupModeStats]:
    """Score every group once per mode (no cache: every judgment is asked) and measure how well
    each orders correct over incorrect."""
    stats = []
    for name, settings in modes:
        items = [
            [{"prompt": r.prompt, "completion": r.completion, "answer": r.answer, "answer_type": r.answer_type,
              "trajectory": r.trajectory}
             for r in group]
            for group in groups
        ]  # fmt: skip
        started = time.monotonic()
        with make_judge(config.model_copy(update={"group": settings, "use_cache": False})) as judge:
            scored = asyncio.run(_score_groups(judge, items, partial(_advance, advance, name)))
            model = judge.get_metrics().get("model")
        seconds = time.monotonic() - started
        counts = [
            _ordering([r["reward"] for r in results], group)
            for results, group in zip(scored, groups, strict=True)
        ]
        wins = np.array([w for w, _ in counts], dtype=float)
        pairs = np.array([p for _, p in counts], dtype=float)
        members = sum(len(g) for g in groups)
        results = [r for group_results in scored for r in group_results]
        coverage = judge_coverage([r["source"] for r in results], [r.get("error") or r.get("reason") for r in results])
        stats.append(
            GroupModeStats(
                mode=name,
                groups=len(groups),
                members=members,
                pairs=int(pairs.sum()),
                ordering_accuracy=_ratio(wins, pairs) if pairs.sum() else None,
                interval=bootstrap(_ratio, wins, pairs, seed=seed),
                judgments=sum(judgments_behind(results) for results in scored),
                judged_share=coverage.fraction,
                seconds=seconds,
                model=model,
                coverage=coverage,
            )
        )
    return stats


def group_modes_blocks(stats: Sequence[GroupModeStats], data: str, min_judged: float = 0.9) -> list[Block]:
    """The comparison table, with what it supports in plain words (groups.md, and the terminal).
    A mode whose judge decided less than ``min_judged`` of what it was sent has no figure in the
    table (its rewards are mostly fallbacks: a rule's ordering under the judge's name), says why
    the judge failed, and is compared with nothing."""
    model = next((s.model for s in stats if s.model), None)
    header = ["mode", "groups", "members", "pairs", "ordering accuracy", "95% interval", "judgments",
              "judge decided", "seconds"]  # fmt: skip
    rows = []
    for s in stats:
        interval = f"{fmt(s.interval.low)}-{fmt(s.interval.high)}" if s.interval else "n/a"
        accuracy = fmt(s.ordering_accuracy)
        if s.judged_share < min_judged:
            accuracy, interval = NO_FIGURE, ""
        rows.append([s.mode, str(s.groups), str(s.members), str(s.pairs), accuracy, interval, str(s.judgments),
                     f"{s.judged_share:.0%}", f"{s.seconds:.1f}"])  # fmt: skip
    blocks: list[Block] = [
        Heading(f"Group modes on {data}", level=1),
        Paragraph(
            f"Judge model: {model or 'unknown'}. Ordering accuracy: over every (correct, incorrect) pair of "
            "members of one group, how often the correct member's reward is higher (ties count half; 0.5 is "
            "chance), with a 95% bootstrap interval over groups."
        ),
        Table(header, rows),
    ]
    for s in stats:
        if s.judged_share < min_judged:
            why = s.coverage.shortfall() if s.coverage else None
            blocks.append(Paragraph(
                f"No figure for {s.mode}: below --min-judged {min_judged:g}, "
                f"{why or f'the judge decided {s.judged_share:.0%} of the members sent to it'}. Its rewards "
                "are mostly fallbacks (a rule's ordering, not the judge's); it is compared with nothing below."
            ))  # fmt: skip
    overlapping = [s for s in stats if s.interval is not None and s.judged_share >= min_judged]
    if len(overlapping) >= 2:
        best = max(overlapping, key=lambda s: s.ordering_accuracy or 0.0)
        beaten = [s.mode for s in overlapping if s is not best and s.interval and best.interval
                  and s.interval.high < best.interval.low]  # fmt: skip
        if beaten:
            blocks.append(Paragraph(f"{best.mode} orders better than {', '.join(beaten)} (intervals do not overlap)."))
        else:
            blocks.append(Paragraph(
                f"No mode is shown better than the others: their intervals overlap ({overlapping[0].groups} "
                "groups); more labelled groups would be needed to tell them apart."
            ))  # fmt: skip
    return blocks
