"""A group judged by comparison: the judge's calls for one group, under the group deadline.

Each comparison is a request asked by profile ``pairwise`` or ``listwise`` through the reward
system's one seam (``adapter/dispatch/judgments.py``), judge only, so comparisons are batched,
cached, single-flighted and seen by the breaker like single judgments (the responses in the
order shown, and their agents' steps, are part of the cache key). Members that carry an agent's
trajectory are compared with their steps (``JudgeRequest.traces``). Comparisons still out at the
deadline are dropped; the scores come from those that came back, and a member left without any
has score None (the facade gives it the fallback, with the reason). A pairwise group's pairs that
came back in both orders are reported to ``swaps`` (the integrity figure ``position_agreement``):
how many got the same winner both times.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from adapter.dispatch.judgments import Judged, PartJudge
from adapter.groups import schedules
from adapter.groups.preferences import Comparison, bradley_terry, listwise_scores, pair_preferences, win_rates
from adapter.groups.schedules import REFERENCE, Pair
from adapter.observability.integrity import pair_agreement
from adapter.result import GroupComparison
from adapter.settings import GroupSettings
from judge_vllm.budget import Budget
from judge_vllm.contract import RANKING_LETTERS
from judge_vllm.errors import JudgeError, JudgeTimeoutError, JudgeUnavailableError
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.trajectory import Trajectory

__all__ = ["MAX_LISTWISE", "GroupJudge", "GroupScores"]

MAX_LISTWISE = len(RANKING_LETTERS)

logger = logging.getLogger(__name__)


class GroupScores(BaseModel):
    """Each compared member's score (None: no comparison of it came back) and the comparisons it
    came from, by the members' indices in the whole group (-1: the reference)."""

    model_config = ConfigDict(frozen=True)

    scores: list[float | None]
    comparisons: list[list[GroupComparison]]
    asked: int
    answered: int
    first_error: str | None = None

    def explanation(self, slot: int, settings: GroupSettings) -> str:
        """What a compared member's reward came from."""
        how = {"bradley_terry": "Bradley-Terry", "win_rate": "win rate"}[settings.scoring]
        return (
            f"{settings.mode}: {len(self.comparisons[slot])} comparison(s) of {self.answered} answered "
            f"({self.asked} asked); score {self.scores[slot] or 0.0:.2f}"
            + (f" by {how}" if settings.mode == "pairwise" else " by mean rank")
        )

    def unscored(self, settings: GroupSettings) -> JudgeError:
        """Why a member has no score: its comparisons failed, or none came back in time."""
        if self.first_error:
            return JudgeUnavailableError(f"no comparison of this member could be judged: {self.first_error}")
        return JudgeTimeoutError(
            f"no comparison of this member came back within the group deadline ({settings.deadline:g} s)"
        )


class GroupJudge:
    """Asks the comparisons a group's mode and schedule call for, and scores the members.
    ``in_flight`` bounds the comparisons out at once, so single judgments keep their share of
    the judge while a large group runs. ``swaps(agreeing, pairs)`` hears, for each pairwise group,
    the pairs compared in both orders and how many of them got the same winner both times."""

    def __init__(
        self,
        judge: PartJudge,
        settings: GroupSettings,
        in_flight: asyncio.Semaphore,
        swaps: Callable[[int, int], None] | None = None,
    ) -> None:
        self.judge = judge
        self.settings = settings
        self.in_flight = in_flight
        self.swaps = swaps

    async def score(
        self,
        question: str,
        reference: str,
        answer_type: str | None,
        responses: Sequence[str],
        budget: Budget,
        members: Sequence[int],
        max_comparisons: int | None = None,
        traces: Sequence[Trajectory | None] = (),
    ) -> GroupScores:
        """Compare ``responses`` (the graded texts of the group's ``members``, by their indices in
        the group; ``traces``: their agents' steps, None for a member without, or none at all) and
        score them by ``budget.judge_by`` (the group deadline). ``max_comparisons``: this
        comparison's share of ``group.max_comparisons`` (None: all of it)."""
        n = len(responses)
        if self.settings.mode == "listwise":
            if n > MAX_LISTWISE:
                raise ValueError(f"listwise ranks at most {MAX_LISTWISE} responses, the group has {n}")
            # All n shifts, every member in every position once: with fewer, the position leaked
            # into the scores (four identical members ranked as shown earned 0.5/0.83/0.5/0.17).
            orders = schedules.cyclic_shifts(n)
        else:
            budget_pairs = self.settings.max_comparisons if max_comparisons is None else max_comparisons
            orders = [list(pair) for pair in self._pairs(n, reference, budget_pairs)]
        with_reference = any(REFERENCE in order for order in orders)
        requests = [
            JudgeRequest(
                prompt=question,
                # The reference competes as a response when it is the anchor, so it is not also shown as the key.
                answer="" if with_reference else reference,
                answer_type=answer_type,
                responses=tuple(reference if k == REFERENCE else responses[k] for k in order),
                traces=tuple(None if k == REFERENCE else traces[k] for k in order) if any(traces) else (),
                profile=self.settings.mode,
                budget=budget,
            )
            for order in orders
        ]
        replies = await self._within(requests, budget)
        records: list[GroupComparison] = []
        errors: list[str] = []
        for order, reply in zip(orders, replies, strict=True):
            record = _record(order, reply, self.settings.mode)
            if isinstance(record, GroupComparison):
                records.append(record)
            elif record is not None:
                errors.append(record)
        scores = self._scores(n, records)
        if self.swaps is not None and self.settings.mode == "pairwise":
            shown = {(r.shown[0], r.shown[1]): r.p_first for r in records if r.p_first is not None}
            agreeing, pairs = pair_agreement(shown)
            if pairs:
                self.swaps(agreeing, pairs)
        in_group = {REFERENCE: REFERENCE, **dict(enumerate(members))}
        per_member = [[_in_group(r, in_group) for r in records if k in r.shown] for k in range(n)]
        return GroupScores(
            scores=scores,
            comparisons=per_member,
            asked=len(requests),
            answered=len(records),
            first_error=errors[0] if errors else None,
        )

    def _pairs(self, n: int, reference: str, max_comparisons: int) -> list[Pair]:
        """The schedule's pairs, within ``max_comparisons``."""
        settings = self.settings
        if settings.schedule == "round_robin":
            pairs = schedules.round_robin(n, settings.opponents) if n > 1 else []
        elif settings.schedule == "anchor":
            anchor = REFERENCE if settings.anchor == "reference" and reference.strip() else 0
            pairs = schedules.anchored(n, anchor) if n > 0 else []
        else:
            pairs = schedules.all_pairs(n)
        budgeted = schedules.within_budget(n, pairs, max_comparisons)
        if len(budgeted) < len(pairs):
            logger.debug(
                "a group of %d: %s would ask %d comparisons, more than its budget of %d: round_robin asks %d",
                n, settings.schedule, len(pairs), max_comparisons, len(budgeted),
            )  # fmt: skip
        return budgeted

    async def _within(self, requests: list[JudgeRequest], budget: Budget) -> list[Judged | None]:
        """Each request's judgment, or None for those not back by ``budget.judge_by``."""
        if not requests:
            return []
        tasks = [asyncio.ensure_future(self._compare(r)) for r in requests]
        done, pending = await asyncio.wait(tasks, timeout=budget.judge_left())
        for task in pending:
            task.cancel()
        return [t.result() if t in done and t.exception() is None else None for t in tasks]

    async def _compare(self, request: JudgeRequest) -> Judged:
        async with self.in_flight:
            (judged,) = await self.judge([request])
            return judged

    def _scores(self, n: int, records: list[GroupComparison]) -> list[float | None]:
        if self.settings.mode == "listwise":
            return listwise_scores(n, [r.ranking for r in records if r.ranking is not None])
        comparisons = [
            Comparison(first=r.shown[0], second=r.shown[1], p_first=r.p_first)
            for r in records
            if r.p_first is not None
        ]
        preferences = pair_preferences(comparisons)
        if self.settings.scoring == "win_rate":
            return win_rates(n, preferences)
        return bradley_terry(n, preferences)


def _in_group(record: GroupComparison, in_group: dict[int, int]) -> GroupComparison:
    """A comparison with the members' indices in the whole group."""
    ranking = None if record.ranking is None else [in_group[k] for k in record.ranking]
    return record.model_copy(update={"shown": [in_group[k] for k in record.shown], "ranking": ranking})


def _record(order: list[int], judged: Judged | None, mode: str) -> GroupComparison | str | None:
    """One comparison's result as members' indices; what went wrong when the judge gave none; None
    when it did not come back in time."""
    if judged is None:
        return None
    verdict = judged.outcome
    if not isinstance(verdict, Verdict):
        return str(verdict)
    if mode == "listwise":
        shown = verdict.ranking or []
        if sorted(shown) != list(range(len(order))):
            return f"the judge's reply {str(verdict.label)[:40]!r} is not a ranking of {len(order)} responses"
        return GroupComparison(shown=order, ranking=[order[k] for k in shown], source=judged.source)
    return GroupComparison(shown=order, p_first=verdict.score, source=judged.source)
