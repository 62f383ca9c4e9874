"""A group's rewards (``reward_group``): each member through the rules, the rest compared.

Each member is pre-checked as the group's mode sees it (and, with strategy cascade, ruled where
the rule is sure); the others are compared by the judge (``GroupJudge``) until the group
deadline. A member no comparison of which came back gets the fallback, with the reason. Where
the rule decided some members, the others are judged alone on that same absolute scale. Where it
decided none of a group with a reference (or, with ``compare_decided``, was not asked first), the
comparisons are anchored: each member's own verdict (the rule's where it is sure, else the judge's
alone), the members found right compared among themselves, and each reward its own verdict, which
the comparisons can only lower, and only for a member found right (``AnchoredMix``): a member no
judgment found right never earns more than one found wrong (docs/groups.md).

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
from adapter.dispatch.judgments import Judged, PartJudge
from adapter.groups.judge import MAX_LISTWISE, GroupJudge, GroupScores
from adapter.groups.schedules import subgroups
from adapter.observability.repeats import RepeatCounter, is_reported
from adapter.pipeline.cascade import CascadeDecision
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import InvalidInput, RewardItem, group_requests
from adapter.pipeline.prechecks import PrecheckVerdict
from adapter.pipeline.steps import CASCADE_REASON, JudgeOne, RewardSteps, ScoreOne, rule_explanation
from adapter.result import RIGHT_OUTCOME, AnchoredMix, RewardResult
from adapter.settings import GroupSettings
from judge_vllm.budget import Budget
from judge_vllm.profiles import load_profile
from judge_vllm.schemas import JudgeRequest, Verdict

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
        """The members of one group (of any size), or ``JudgeInputError``: several prompts, or
        (``invalid_rows: error``) a member that cannot be judged."""
        members = group_requests(items)
        self._steps.refuse_invalid(members, "reward_group")
        return members

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
        graded = [r for r in ruled if isinstance(r, JudgeRequest)]
        if self._anchors(graded, settings):
            # The rule decided none of a group with a reference: each member is judged alone too,
            # so that comparisons never pay a member no judgment found right (docs/groups.md).
            built = [m for k in compared if isinstance(m := members[k], JudgeRequest)]
            anchored = await self._anchored(built, graded, compared, budget, settings)
            return _filled(results, compared, anchored)
        if not _comparable(len(compared), settings):  # nothing to compare with, or too many to rank
            alone = await asyncio.gather(*(self._score_one(members[k], budget) for k in compared))
            return _filled(results, compared, alone)
        comparing, scored = await self._compared(graded, compared, budget, settings)
        rewards = [
            await (
                self._score_one(members[compared[slot]], budget)  # a sub-group of one: judged alone
                if one is None
                else self._member_reward(graded[slot], comparing, one, settings)
            )
            for slot, one in enumerate(scored)
        ]
        return _filled(results, compared, rewards)

    def _anchors(self, graded: list[JudgeRequest], settings: GroupSettings) -> bool:
        """Whether a group whose rule decided no member (or, with ``compare_decided``, was not
        asked yet) is anchored by each member's own verdict: strategy cascade (the rule's absolute
        scale), a reference to judge against, two members or more."""
        return self._config.strategy == "cascade" and len(graded) >= 2 and bool(graded[0].answer.strip())

    async def _anchored(
        self,
        built: list[JudgeRequest],
        graded: list[JudgeRequest],
        compared: list[int],
        budget: Budget,
        settings: GroupSettings,
    ) -> list[RewardResult]:
        """The rewards of an anchored group: each member's own verdict (with ``compare_decided``,
        the rule's where it is sure; else the judge's, judged alone), the members found right
        compared among themselves, each reward its own verdict lowered by its comparisons
        (``AnchoredMix``). ``built``: the members as the caller gave them; ``graded``: as the
        comparisons see them; ``compared``: their indices in the group. A member found wrong is
        never compared: whatever a comparison says of it, it earns what its own verdict gives."""
        loop = asyncio.get_running_loop()
        alone = await asyncio.gather(*(loop.run_in_executor(None, self._alone, b, g, budget, settings)
                                       for b, g in zip(built, graded, strict=True)))  # fmt: skip
        asked = [a.request.model_copy(update={"budget": budget}) for a in alone if a.asks_judge]
        answers = iter(await self._judge(asked))
        verdicts = [Own(a.request, a.decided, a.rule, next(answers)) if a.asks_judge else a for a in alone]
        right = [slot for slot, own in enumerate(verdicts) if self._right(own)]
        scored: list[Scored | None] = [None] * len(verdicts)
        comparing = budget
        if _comparable(len(right), settings):
            comparing, found = await self._compared(
                [graded[s] for s in right], [compared[s] for s in right], budget, settings
            )
            for slot, one in zip(right, found, strict=True):
                scored[slot] = one
        return list(
            await asyncio.gather(
                *(
                    self._anchored_reward(own, scored[slot], comparing, settings, slot in right)
                    for slot, own in enumerate(verdicts)
                )
            )
        )

    def _alone(
        self, built: JudgeRequest, member: JudgeRequest, budget: Budget, settings: GroupSettings
    ) -> Own:
        """A member's own verdict, short of the judge's (off the loop: the rule may take a while):
        with ``compare_decided`` the rule's where it is sure (a wrong one is its reward; a right one
        is kept for the comparisons), a pre-check's, or the request to judge alone."""
        if settings.compare_decided:  # the rule has not been asked yet
            decision = self._steps.rule_decision(member)
            if decision.decided and decision.verdict.reward < RIGHT_OUTCOME:
                return Own(member, self._steps.rule_reward(member, budget, decision))
            if decision.decided:
                return Own(member, rule=decision)
            member = self._steps.undecided(member, decision)
        shown = graded_request(built, self._config, self._steps.profile, member.final_answer)
        if isinstance(shown, PrecheckVerdict):
            return Own(built, self._steps.decided(built, budget, shown))
        return Own(shown)

    def _right(self, own: Own) -> bool:
        """Whether a member's own verdict found it right: the rule's, or the judge's (calibrated)."""
        if own.rule is not None:
            return True
        verdict = None if own.judged is None else own.judged.outcome
        if own.decided is not None or not isinstance(verdict, Verdict):
            return False
        calibrated = self._steps.finisher.calibration.apply(verdict.score, verdict.confidence, own.request)
        return calibrated.reward >= RIGHT_OUTCOME

    async def _anchored_reward(
        self, own: Own, scored: Scored | None, comparing: Budget, settings: GroupSettings, right: bool
    ) -> RewardResult:
        """One anchored member's reward: a rule's or a pre-check's, the fallback's when its own
        judgment failed, else its own verdict mixed with its comparisons."""
        if own.decided is not None:
            return own.decided
        if scored is None:
            why = "compared with nothing (no other member found right)" if right else "not compared"
            mix = AnchoredMix(None, settings.comparison_weight, why)
        else:
            explanation, reason = _described(scored, settings)
            score = scored.scores.scores[scored.slot]
            summary = explanation if score is not None else f"{scored.scores.unscored(settings)}"
            mix = AnchoredMix(
                score, settings.comparison_weight, summary, scored.scores.comparisons[scored.slot], reason
            )
        if own.rule is not None:  # right by rule: compared with the others found right
            if mix.score is None:
                return self._steps.rule_reward(own.request, comparing, own.rule)
            reward, note = mix.mixed(own.rule.verdict.reward)
            return self._steps.finisher.finish(
                own.request, comparing.started, reward, "judge", f"{rule_explanation(own.rule)} ({note})",
                reason=mix.reason, comparisons=mix.comparisons,
            )  # fmt: skip
        assert own.judged is not None  # a member neither ruled nor pre-checked was judged alone
        if not isinstance(own.judged.outcome, Verdict):
            return await self._steps.afall_back(own.request, comparing, own.judged.outcome)
        return self._steps.finisher.from_verdict(
            own.request, comparing.started, own.judged.outcome, own.judged.source, anchor=mix
        )

    async def _compared(
        self, graded: list[JudgeRequest], compared: list[int], budget: Budget, settings: GroupSettings
    ) -> tuple[Budget, list[Scored | None]]:
        """``graded`` (the members at ``compared`` in the group) compared until the group deadline,
        in sub-groups when they are more than ``group.max_members``: the comparisons' budget, and
        each member's scores (None: a sub-group of one, which has nothing to compare with)."""
        comparing = budget.judged_for(settings.deadline, self._config.reward_timeout)
        parts = subgroups(len(graded), settings.max_members)
        if len(parts) > 1:
            self._log_split(len(graded), len(parts), settings)
        share = max(1, settings.max_comparisons // len(parts))
        found = await asyncio.gather(
            *(self._compare(graded, compared, part, comparing, share) for part in parts)
        )
        scored: list[Scored | None] = [None] * len(graded)
        for number, (part, scores) in enumerate(zip(parts, found, strict=True), 1):
            split = None if len(parts) == 1 else Split(number, len(parts), len(graded))
            for k, slot in enumerate(part):
                scored[slot] = None if scores is None else Scored(scores, k, split)
        return comparing, scored

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
            [compared[s] for s in part], share, [graded[s].trajectory for s in part],
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
        self, request: JudgeRequest, comparing: Budget, scored: Scored, settings: GroupSettings
    ) -> RewardResult:
        """One compared member's reward: its group score, or the fallback when no comparison of it
        came back (the rule has until ``reward_timeout`` past the group deadline for that)."""
        score = scored.scores.scores[scored.slot]
        if score is None:
            return await self._steps.afall_back(request, comparing, scored.scores.unscored(settings))
        explanation, reason = _described(scored, settings)
        return self._steps.finisher.finish(
            request, comparing.started, score, "judge", explanation, reason=reason,
            comparisons=scored.scores.comparisons[scored.slot],
        )  # fmt: skip


class Own(NamedTuple):
    """An anchored member's own verdict: its ``request`` (as judged alone, or as compared when the
    rule proved it right), and one of: the reward a rule or pre-check ``decided``, the ``rule``'s
    sure decision that it is right, or (once asked) the judge's verdict, ``judged``."""

    request: JudgeRequest
    decided: RewardResult | None = None
    rule: CascadeDecision | None = None
    judged: Judged | None = None

    @property
    def asks_judge(self) -> bool:
        """Whether it is still to be judged alone."""
        return self.decided is None and self.rule is None and self.judged is None


class Scored(NamedTuple):
    """A compared member's scores: its sub-group's ``scores``, its ``slot`` there, and its
    ``split`` (None: the group was compared whole)."""

    scores: GroupScores
    slot: int
    split: Split | None


def _described(scored: Scored, settings: GroupSettings) -> tuple[str, str]:
    """What a compared member's score came from, and its reason (the mode, or ``<mode>_subgroup``)."""
    explanation = scored.scores.explanation(scored.slot, settings)
    split = scored.split
    if split is None:
        return explanation, settings.mode
    explanation += (
        f"; compared in sub-group {split.number} of {split.of} ({len(scored.scores.scores)} of the "
        f"{split.compared} members compared: more than group.max_members {settings.max_members})"
    )
    return explanation, SUBGROUP_REASON.format(mode=settings.mode)


def _comparable(count: int, settings: GroupSettings) -> bool:
    """Whether ``count`` members can be compared: two or more, and for listwise at most
    ``MAX_LISTWISE`` (a larger group is judged pointwise, with a warning)."""
    if settings.mode == "listwise" and count > MAX_LISTWISE:
        logger.warning(
            "listwise ranks at most %d responses; a group of %d is judged pointwise "
            "(use mode: pairwise for larger groups)", MAX_LISTWISE, count,
        )  # fmt: skip
        return False
    return count >= 2


def _filled(
    results: list[RewardResult | None], compared: list[int], rewards: Iterable[RewardResult]
) -> list[RewardResult]:
    """``results`` with the compared members' ``rewards`` in their places."""
    for k, reward in zip(compared, rewards, strict=True):
        results[k] = reward
    return [r for r in results if r is not None]
