"""``RewardSteps``: every step of one reward but the judge call, in the order a reward takes them.

    refuse_invalid  invalid_rows: error -> JudgeInputError for a row that cannot be judged
    invalid         invalid_rows: zero -> reward 0, source "rule", reason invalid_input
    prechecked      the completion as graded (after its reasoning); the pre-checks' decision
    cascaded        strategy cascade: the rule's reward where it is sure (a sample of those
                    rows offered to the shadow audit, which may judge them in the background)
    cached          the verdict cache, once the judge model is known
    fall_back       the judge failed: the rule fallback within what is left of the budget
    finisher        every result calibrated, counted and offered to the judgment log

The facade (``adapter/reward.py``) runs them around the judge; group and rubric scoring
(``adapter/groups/scoring.py``, ``adapter/rubrics/scoring.py``) call the same steps. Each step
reads the call's ``Budget`` (``judge_vllm/budget.py``), made once where the call started.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeGuard

from adapter.cache.verdict_cache import VerdictCache
from adapter.config import RewardConfig
from adapter.observability.metrics import RewardMetrics
from adapter.observability.repeats import RepeatCounter
from adapter.observability.shadow_audit import ShadowAudit
from adapter.pipeline.cascade import CascadeDecision, rule_first
from adapter.pipeline.fallback import RuleFallback
from adapter.pipeline.finish import RewardFinisher
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import InvalidInput
from adapter.pipeline.prechecks import PrecheckVerdict, precheck, verdict_strings
from adapter.result import RewardResult
from adapter.settings import parse_rubric
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeError, JudgeInputError
from judge_vllm.profiles import JudgeProfile
from judge_vllm.schemas import JudgeRequest

__all__ = ["CASCADE_REASON", "CASCADE_RULE_SHARE", "JudgeOne", "RewardSteps", "ScoreOne", "rule_explanation"]

logger = logging.getLogger("JudgeReward")

# The share of the judge's budget the cascade's rules may take, never all of it.
CASCADE_RULE_SHARE = 0.5
# The reason of a reward the cascade's rule decided (docs/groups.md: it sets a group's scale).
CASCADE_REASON = "cascade"


def rule_explanation(decision: CascadeDecision) -> str:
    """What a sure rule decided, for a reward's explanation."""
    return f"decided by rule ({decision.verdict.reason}): {decision.verdict.explanation}"


ScoreOne = Callable[[JudgeRequest | InvalidInput, Budget], Awaitable[RewardResult]]
"""The facade's whole path for one item (a rubric item by its rubric), within the budget."""
JudgeOne = Callable[[JudgeRequest, Budget, "str | None"], Awaitable[RewardResult]]
"""The facade's judge step for a request past its rules (with its cache key, when looked up)."""


class RewardSteps:
    """The rule, cache and finishing steps of a reward system, for its judge ``profile``."""

    def __init__(
        self,
        config: RewardConfig,
        profile: JudgeProfile,
        judge_budget_s: float,
        finisher: RewardFinisher,
        metrics: RewardMetrics,
        repeats: RepeatCounter,
        cache: VerdictCache | None,
        cache_key: Callable[[JudgeRequest], str | None],
        audit: ShadowAudit | None = None,
    ) -> None:
        self.config = config
        self.audit = audit
        self.profile = profile
        self.finisher = finisher
        self._metrics = metrics
        self._repeats = repeats
        self._cache = cache
        self._cache_key = cache_key
        self._fallback = RuleFallback(config.rules, config.fallback_to_rule)
        cascade_math_s = min(config.rules.symbolic_timeout, judge_budget_s * CASCADE_RULE_SHARE)
        self._cascade_rules = config.rules.model_copy(update={"symbolic_timeout": cascade_math_s})
        self._verdict_strings = verdict_strings(profile)

    def has_rubric(self, built: JudgeRequest | InvalidInput) -> TypeGuard[JudgeRequest]:
        """A rubric item: its own ``rubric``, or the config's rubric for every item."""
        return isinstance(built, JudgeRequest) and (
            built.metadata.get("rubric") is not None or self.config.rubric is not None
        )

    def refuse_invalid(self, built: Sequence[JudgeRequest | InvalidInput], where: str) -> None:
        """With ``invalid_rows: error`` (the default), ``JudgeInputError`` for the first row that
        cannot be judged, before any is: ``where`` names the call, a row of several its index. A
        mistake in the data (an answer_type typo) then stops a run at its first batch instead of
        zeroing every reward of that kind; ``invalid_rows: zero`` gives such rows reward 0."""
        if self.config.invalid_rows != "error":
            return
        for k, row in enumerate(built):
            problem = self.row_problem(row)
            if problem is not None:
                at = f"{where} item {k}" if len(built) > 1 else where
                raise JudgeInputError(
                    f"{at}: {problem}; fix the data, or set invalid_rows: zero to give such rows reward 0 "
                    "(counted in get_metrics()['invalid_rows'])"
                )

    def row_problem(self, built: JudgeRequest | InvalidInput) -> str | None:
        """What makes a row impossible to judge (bad input, a rubric that does not parse), or None."""
        if isinstance(built, InvalidInput):
            return built.problem
        if self.has_rubric(built):
            try:
                parse_rubric(built.metadata.get("rubric", self.config.rubric))
            except JudgeInputError as err:
                return f"invalid rubric: {err}"
        return None

    def ruled(self, built: JudgeRequest | InvalidInput, budget: Budget) -> JudgeRequest | RewardResult:
        """Bad input and the pre-checks' decisions as rewards; else the request as graded."""
        return self.invalid(built) if isinstance(built, InvalidInput) else self.prechecked(built, budget)

    def invalid(self, built: InvalidInput) -> RewardResult:
        """The defined reward for input that cannot be judged; the first is logged at warning
        (a trainer reads its log, not every row's explanation)."""
        if self._repeats.add("invalid_input") == 1:
            logger.warning(
                "invalid input gets reward 0 (reason invalid_input): %s (said once)", built.problem
            )
        return self.finisher.invalid(built)

    def prechecked(
        self, request: JudgeRequest, budget: Budget, profile: JudgeProfile | None = None
    ) -> JudgeRequest | RewardResult:
        """The request as graded for ``profile`` (default: this judge's) after the policy's
        reasoning, or the reward the pre-checks decide."""
        graded = graded_request(request, self.config, profile or self.profile)
        if isinstance(graded, PrecheckVerdict):
            if graded.reason == "no_reference" and self._repeats.add("no_reference") == 1:
                logger.warning(
                    "%s: reward 0 (reason no_reference); pass the reference as answer (a batch "
                    "item's 'answer' key), or use a profile that needs none (said once)",
                    graded.explanation,
                )
            return self.decided(request, budget, graded)
        decided = (
            precheck(
                graded.completion,
                graded.answer,
                graded.answer_type,
                self._verdict_strings,
                self.config.max_completion_chars,
            )
            if self.config.prechecks
            else None
        )
        return graded if decided is None else self.decided(request, budget, decided)

    def decided(self, request: JudgeRequest, budget: Budget, decided: PrecheckVerdict) -> RewardResult:
        """The reward a rule decided before the judge."""
        return self.finisher.finish(
            request, budget.started, decided.reward, "rule", decided.explanation, reason=decided.reason
        )

    def cascaded(self, request: JudgeRequest, budget: Budget) -> JudgeRequest | RewardResult:
        """Strategy cascade: the rule reward where it is sure, else the request for the judge
        (with the rules' extracted answer for profiles that show the judge only that)."""
        decision = self.rule_decision(request)
        if decision.decided:
            return self.rule_reward(request, budget, decision)
        return self.undecided(request, decision)

    def rule_decision(self, request: JudgeRequest) -> CascadeDecision:
        """The cascade's rule on ``request``, counted: sure or not (may take up to the rules'
        symbolic timeout: call it off the event loop). A row whose grammar form the shadow audit
        flagged goes to the judge instead (``audit.on_disagreement: judge``)."""
        decision = rule_first(request, self._cascade_rules)
        if decision.decided and self.audit is not None and self.audit.overrules(request.completion):
            decision = CascadeDecision(verdict=decision.verdict, decided=False)
        self._metrics.record_cascade(decision.decided)
        return decision

    def rule_reward(self, request: JudgeRequest, budget: Budget, decision: CascadeDecision) -> RewardResult:
        """The reward of a rule that is sure (source ``rule``, reason ``cascade``), offered to the
        shadow audit once it is made."""
        verdict = decision.verdict
        explanation = rule_explanation(decision)
        result = self.finisher.finish(
            request, budget.started, verdict.reward, "rule", explanation, reason=CASCADE_REASON
        )
        if self.audit is not None:
            self.audit.offer(self.undecided(request, decision), verdict.reward, explanation)
        return result

    def undecided(self, request: JudgeRequest, decision: CascadeDecision) -> JudgeRequest:
        """A request the rule is unsure of, for the judge: with the rules' extracted answer for
        profiles that show the judge only that."""
        verdict = decision.verdict
        if self.profile.judge_input == "final_answer" and verdict.extracted:
            return request.model_copy(update={"final_answer": verdict.extracted})
        return request

    def before_judge(self, built: JudgeRequest | InvalidInput, budget: Budget) -> JudgeRequest | RewardResult:
        """Every rule step, in order (bad input, pre-checks, the cascade's rule): the reward
        when one decides it, else the request for the judge."""
        request = self.ruled(built, budget)
        if isinstance(request, JudgeRequest) and self.config.strategy == "cascade":
            return self.cascaded(request, budget)
        return request

    def cached(self, request: JudgeRequest, budget: Budget) -> tuple[RewardResult | None, str | None]:
        """The cache when the model is known: a result, or the cache key."""
        key = self._cache_key(request)
        if key is not None and self._cache is not None:
            verdict = self._cache.get(key)
            if verdict is not None:
                return self.finisher.from_verdict(request, budget.started, verdict, "cache"), key
        return None, key

    async def afall_back(self, request: JudgeRequest, budget: Budget, err: JudgeError) -> RewardResult:
        """The fallback for a failed judge call, graded off the loop (sympy may take a while)."""
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, self.fall_back, request, budget, err)
        except RuntimeError:  # the executor is shut down: close() is finishing
            return self.fall_back(request, budget, err)

    def fall_back(self, request: JudgeRequest, budget: Budget, err: JudgeError) -> RewardResult:
        """The rule fallback's reward, within what is left of the budget until ``answer_by``."""
        fallback = self._fallback.decide(request, err, budget.answer_left())
        return self.finisher.finish(
            request,
            budget.started,
            fallback.reward,
            fallback.source,
            fallback.explanation,
            reason=fallback.reason,
            error=fallback.error,
        )
