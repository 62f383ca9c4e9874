"""A group's rewards (``reward_group``): each member through the rules, the rest compared.

Each member is pre-checked as the group's mode sees it (and, with strategy cascade, ruled where
the rule is sure); the others are compared by the judge (``GroupJudge``) until the group
deadline. A member no comparison of which came back gets the fallback, with the reason. Where
the rule decided some members, the others are judged alone on that same absolute scale.

A group of any size gets its rewards: more members to compare than ``group.max_members`` are
compared in interleaved sub-groups of at most that many (``schedules.subgroups``), which share
``group.max_comparisons``; each such reward says so (reason ``<mode>_subgroup``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import NamedTuple

from adapter.config import RewardConfig
from adapter.dispatch.judgments import PartJudge
from adapter.groups.judge import MAX_LISTWISE, GroupJudge, GroupScores
from adapter.groups.schedules import subgroups
from adapter.observability.repeats import RepeatCounter, is_reported
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import InvalidInput, RewardItem, group_requests
from adapter.pipeline.prechecks import PrecheckVerdict
from adapter.pipeline.steps import CASCADE_REASON, JudgeOne, RewardSteps, ScoreOne
from adapter.result import RewardResult
from adapter.settings import GroupSettings
from judge_vllm.budget import Budget
from judge_vllm.profiles import load_profile
from judge_vllm.schemas import JudgeRequest

__all__ = ["GROUP_CALL_SHARE", "SUBGROUP_REASON", "GroupScoring"]

logger = logging.getLogger("JudgeReward")

# A group's comparisons hold at most this share of what the judge may have in flight (calls of
# max_batch_size items): single judgments keep the rest while a large group runs.
GROUP_CALL_SHARE = 0.5
# The reason of a reward compared in a sub-group (the group had more than group.max_members).
SUBGROUP_REASON = "{mode}_subgroup"

Member = JudgeRequest | InvalidInput


class Split(NamedTuple):
    """Which sub-group a member was compared in: ``number`` of ``of``, of ``compared`` members."""

    number: int
    of: int
    compared: int


class GroupScoring:
    """Scores the groups of one reward system: its steps, its one seam, and its whole path for
    one item (``score_one``) and for one judged request (``judge_one``); ``swaps`` hears each
    pairwise group's position-swap agreement (``GroupJudge``)."""

    def __init__(
        self,
        steps: RewardSteps,
        judge: PartJudge,
        score_one: ScoreOne,
        judge_one: JudgeOne,
        swaps: Callable[[int, int], None] | None = None,
    ) -> None:
        self._steps = steps
        self._swaps = swaps
        self._judge = judge
        self._score_one = score_one
        self._judge_one = judge_one
        self._splits = RepeatCounter()
        self.reset()

    @property
    def _config(self) -> RewardConfig:
        return self._steps.config

    def reset(self) -> None:
        """Start afresh (a forked child: the parent's loop and its waiters do not exist here)."""
        config = self._config
        slots = int(config.max_concurrent_requests * config.max_batch_size * GROUP_CALL_SHARE)
        self._in_flight = asyncio.Semaphore(max(1, slots))

    def members(self, items: Iterable[RewardItem]) -> list[Member]:
        """The members of one group (of any size), or ``JudgeInputError``: several prompts."""
        return group_requests(items)

    async def score(self, members: list[Member], budget: Budget) -> list[RewardResult]:
        """Each member's reward, in order; comparisons until ``group.deadline`` from the start."""
        settings = self._config.group
        if settings is None or settings.mode == "pointwise" or len(members) < 2:
            return list(await asyncio.gather(*(self._score_one(m, budget) for m in members)))
        loop = asyncio.get_running_loop()
        ruled = await asyncio.gather(
            *(
                self._score_one(m, budget)  # a rubric item is scored by its rubric, on its own
                if self._steps.has_rubric(m)
                else loop.run_in_executor(None, self._member, m, budget, settings)
                for m in members
            )
        )
        results: list[RewardResult | None] = [r if isinstance(r, RewardResult) else None for r in ruled]
        compared = [k for k, r in enumerate(ruled) if isinstance(r, JudgeRequest)]
        if any(isinstance(r, RewardResult) and r.reason == CASCADE_REASON for r in ruled):
            # The rule decided members 1 or 0: the others are judged alone, on that same absolute
            # scale. Ranked among themselves, three hedges would each earn 0.5 next to a plain 0.
            alone = await asyncio.gather(
                *(
                    self._judged_alone(built, graded, budget)
                    for built, graded in zip(members, ruled, strict=True)
                    if isinstance(built, JudgeRequest) and isinstance(graded, JudgeRequest)
                )
            )
            return _filled(results, compared, alone)
        too_many = settings.mode == "listwise" and len(compared) > MAX_LISTWISE
        if len(compared) < 2 or too_many:  # nothing to compare with, or too many to rank: judged alone
            if too_many:
                logger.warning(
                    "listwise ranks at most %d responses; a group of %d is judged pointwise "
                    "(use mode: pairwise for larger groups)", MAX_LISTWISE, len(compared),
                )  # fmt: skip
            alone = await asyncio.gather(*(self._score_one(members[k], budget) for k in compared))
            return _filled(results, compared, alone)
        graded = [r for r in ruled if isinstance(r, JudgeRequest)]
        comparing = budget.judged_for(settings.deadline, self._config.reward_timeout)
        parts = subgroups(len(graded), settings.max_members)
        if len(parts) > 1:
            self._log_split(len(graded), len(parts), settings)
        share = max(1, settings.max_comparisons // len(parts))
        scored = await asyncio.gather(
            *(self._compare(graded, compared, part, comparing, share) for part in parts)
        )
        rewards: dict[int, RewardResult] = {}
        for number, (part, scores) in enumerate(zip(parts, scored, strict=True), 1):
            split = None if len(parts) == 1 else Split(number, len(parts), len(graded))
            for k, slot in enumerate(part):
                rewards[slot] = await (
                    self._score_one(members[compared[slot]], budget)  # a sub-group of one: judged alone
                    if scores is None
                    else self._member_reward(graded[slot], comparing, scores, k, settings, split)
                )
        return _filled(results, compared, [rewards[slot] for slot in range(len(compared))])

    async def _compare(
        self, graded: list[JudgeRequest], compared: list[int], part: list[int], comparing: Budget, share: int
    ) -> GroupScores | None:
        """The members ``part`` (slots in ``graded``) compared together, asking at most ``share``
        comparisons; None for a part of one, which has nothing to compare with."""
        if len(part) < 2:
            return None
        settings = self._config.group
        assert settings is not None  # only a comparing group gets here
        first = graded[part[0]]
        return await GroupJudge(self._judge, settings, self._in_flight, self._swaps).score(
            first.prompt, first.answer, first.answer_type, [graded[s].completion for s in part], comparing,
            [compared[s] for s in part], share,
        )  # fmt: skip

    def _log_split(self, compared: int, parts: int, settings: GroupSettings) -> None:
        """Say that a group was split: at warning the 1st, 10th, 100th... time, else at debug."""
        count = self._splits.add("subgroups")
        (logger.warning if is_reported(count) else logger.debug)(
            "a group of %d members to compare is more than group.max_members (%d): compared in %d "
            "sub-groups, reason %s (#%d)", compared, settings.max_members, parts,
            SUBGROUP_REASON.format(mode=settings.mode), count,
        )  # fmt: skip

    def _member(self, built: Member, budget: Budget, settings: GroupSettings) -> JudgeRequest | RewardResult:
        """A member as the comparisons see it (after its reasoning), or its reward when a rule
        decides it: bad input, a pre-check, or the cascade's sure rule."""
        if isinstance(built, InvalidInput):
            return self._steps.invalid(built)
        graded = self._steps.prechecked(built, budget, load_profile(settings.mode))
        if isinstance(graded, RewardResult):
            return graded
        if self._config.strategy == "cascade" and not settings.compare_decided:
            return self._steps.cascaded(graded, budget)
        return graded

    async def _judged_alone(self, built: JudgeRequest, member: JudgeRequest, budget: Budget) -> RewardResult:
        """A member the cascade's rule was unsure of, in a group where it decided others: judged on
        its own by this judge, as ``reward`` would judge it (its pre-checks and rule already ran;
        ``member`` holds the rule's extracted answer for profiles that show the judge only that)."""
        graded = graded_request(built, self._config, self._steps.profile, member.final_answer)
        if isinstance(graded, PrecheckVerdict):
            return self._steps.decided(built, budget, graded)
        early, key = self._steps.cached(graded, budget)
        return early if early is not None else await self._judge_one(graded, budget, key)

    async def _member_reward(
        self,
        request: JudgeRequest,
        comparing: Budget,
        scored: GroupScores,
        slot: int,
        settings: GroupSettings,
        split: Split | None = None,
    ) -> RewardResult:
        """One compared member's reward: its group score, or the fallback when no comparison of it
        came back (the rule has until ``reward_timeout`` past the group deadline for that).
        ``split``: its sub-group, when the group was split."""
        score = scored.scores[slot]
        if score is None:
            return await self._steps.afall_back(request, comparing, scored.unscored(settings))
        explanation = scored.explanation(slot, settings)
        reason: str = settings.mode
        if split is not None:
            reason = SUBGROUP_REASON.format(mode=settings.mode)
            explanation += (
                f"; compared in sub-group {split.number} of {split.of} ({len(scored.scores)} of the "
                f"{split.compared} members compared: more than group.max_members {settings.max_members})"
            )
        return self._steps.finisher.finish(
            request, comparing.started, score, "judge", explanation, reason=reason,
            comparisons=scored.comparisons[slot],
        )  # fmt: skip


def _filled(
    results: list[RewardResult | None], compared: list[int], rewards: Iterable[RewardResult]
) -> list[RewardResult]:
    """``results`` with the compared members' ``rewards`` in their places."""
    for k, reward in zip(compared, rewards, strict=True):
        results[k] = reward
    return [r for r in results if r is not None]
