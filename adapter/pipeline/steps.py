"""``RewardSteps``: every step of one reward but the judge call, in the order a reward takes them.

    invalid         bad input -> reward 0, source "rule", reason invalid_input
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
from collections.abc import Awaitable, Callable
from typing import TypeGuard

from adapter.cache.verdict_cache import VerdictCache
from adapter.config import RewardConfig
from adapter.observability.metrics import RewardMetrics
from adapter.observability.repeats import RepeatCounter
from adapter.observability.shadow_audit import ShadowAudit
from adapter.pipeline.cascade import rule_first
from adapter.pipeline.fallback import RuleFallback
from adapter.pipeline.finish import RewardFinisher
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import InvalidInput
from adapter.pipeline.prechecks import PrecheckVerdict, precheck, verdict_strings
from adapter.result import RewardResult
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeError
from judge_vllm.profiles import JudgeProfile
from judge_vllm.schemas import JudgeRequest

__all__ = ["CASCADE_REASON", "CASCADE_RULE_SHARE", "JudgeOne", "RewardSteps", "ScoreOne"]

logger = logging.getLogger("JudgeReward")

# The share of the judge's budget the cascade's rules may take, never all of it.
CASCADE_RULE_SHARE = 0.5
# The reason of a reward the cascade's rule decided (docs/groups.md: it sets a group's scale).
CASCADE_REASON = "cascade"

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
        (with the rules' extracted answer for profiles that show the judge only that). A reward
        the rule decided is offered to the shadow audit once it is made; a row whose grammar form
        the audit flagged goes to the judge instead (``audit.on_disagreement: judge``)."""
        decision = rule_first(request, self._cascade_rules)
        verdict = decision.verdict
        decided = decision.decided and not (
            self.audit is not None and self.audit.overrules(request.completion)
        )
        self._metrics.record_cascade(decided)
        judged = request
        if self.profile.judge_input == "final_answer" and verdict.extracted:
            judged = request.model_copy(update={"final_answer": verdict.extracted})
        if not decided:
            return judged
        explanation = f"decided by rule ({verdict.reason}): {verdict.explanation}"
        result = self.finisher.finish(
            request, budget.started, verdict.reward, "rule", explanation, reason=CASCADE_REASON
        )
        if self.audit is not None:
            self.audit.offer(judged, verdict.reward, explanation)
        return result

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
