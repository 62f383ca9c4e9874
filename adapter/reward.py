"""``JudgeRewardSystem``: the drop-in reward a trainer imports (the public facade).

The path of one reward, each step in a module of its own:

    inputs.build_request        bad input -> reward 0, source "rule", reason invalid_input
    graded_text.graded_request  the completion after its reasoning (and its final answer)
    prechecks.precheck          decided by rule in the caller's thread -> source "rule"
    cascade.rule_first          strategy cascade: the rule reward where sure -> "rule", "cascade"
    cache.VerdictCache.get      in the caller's thread once the model is known -> "cache"
    dispatch.JudgeDispatcher    on the loop thread: single-flight, breaker, deadline,
                                micro-batcher, ``_request_judge`` -> source "judge"
    fallback.RuleFallback       the judge failed -> "rule_fallback" (or "error", reward None)
    finish.RewardFinisher       every result: calibrated, counted in the metrics, offered to
                                the judgment log

A rubric item's criteria and a group's comparisons take the judge step through the same cache
and dispatcher (``_judge_parts``, the one seam: docs/ARCHITECTURE.md).

Every call returns within ``reward_timeout``: the judge gets what is left of it after a reserve
for the rule fallback. The sync methods submit to one background loop thread per
instance and block; the async ones await it from any event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import time
from collections.abc import Coroutine, Iterable, Sequence
from typing import TypeGuard, TypeVar

from adapter.cache.keys import cache_key
from adapter.cache.verdict_cache import VerdictCache
from adapter.config import ConfigLike, RewardConfig
from adapter.dispatch.breaker import BreakerState, CircuitBreaker
from adapter.dispatch.dispatcher import JudgeDispatcher, as_verdict
from adapter.dispatch.judgments import Judged
from adapter.dispatch.loop_thread import LoopThread
from adapter.dispatch.members import server_backend
from adapter.dispatch.replicas import ReplicaPool
from adapter.fork_safety import reset_after_fork
from adapter.groups.judge import MAX_LISTWISE, GroupJudge, GroupScores
from adapter.metrics_dict import MetricsDict
from adapter.observability.canary import CanaryStats
from adapter.observability.judgment_log import JudgmentLog
from adapter.observability.metrics import RewardMetrics
from adapter.observability.metrics_endpoint import serve_metrics
from adapter.observability.repeats import RepeatCounter, is_reported
from adapter.pipeline.cascade import rule_first
from adapter.pipeline.fallback import RuleFallback
from adapter.pipeline.finish import RewardFinisher
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import (
    InvalidInput,
    RewardItem,
    batch_items,
    build_request,
    check_keys,
    group_requests,
    request_from_item,
)
from adapter.pipeline.prechecks import PrecheckVerdict, precheck, verdict_strings
from adapter.process.judge import ProcessJudge
from adapter.result import RewardDict, RewardResult
from adapter.rubrics import parse_rubric
from adapter.rubrics.criteria import VETO_NOT_JUDGED
from adapter.rubrics.judge import RubricJudge, item_profile
from adapter.settings import GroupSettings
from judge_vllm.backend import JudgeBackend
from judge_vllm.errors import (
    JudgeConfigError,
    JudgeError,
    JudgeInputError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.profiles import JudgeProfile, load_profile
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

__all__ = [
    "BaseJudgeReward",
    "ConfigLike",
    "JudgeRewardSystem",
    "RewardItem",
    "judge_budget_s",
    "judge_client_config",
]

logger = logging.getLogger("JudgeReward")
T = TypeVar("T")

# Time kept for the rule fallback out of ``timeout`` beyond its symbolic bound (symbolic_timeout).
FALLBACK_MARGIN_S = 0.25
CASCADE_RULE_SHARE = 0.5
# The reason of a reward the cascade's rule decided (docs/groups.md: it sets a group's scale).
CASCADE_REASON = "cascade"
# Extra seconds the sync facade waits for the loop thread before answering from its own thread.
FACADE_GRACE_S = 1.0
MODEL_DISCOVERY_TIMEOUT_S = 5.0
DISCOVERY = "model discovery"  # its failures' kind in the repeat counter
# Completions longer than this are pre-checked off the event loop (a 15 KB one takes ~3 ms).
INLINE_PRECHECK_CHARS = 2_000
CLOSE_GRACE_S = 10.0
# A group's comparisons hold at most this share of what the judge may have in flight (calls of
# max_batch_size items): single judgments keep the rest while a large group runs.
GROUP_CALL_SHARE = 0.5


def judge_budget_s(config: RewardConfig) -> float:
    """The judge's part of ``reward_timeout``: ``judge_timeout``, less a reserve for the rule fallback."""
    reserve = min(config.rules.symbolic_timeout + FALLBACK_MARGIN_S, config.reward_timeout / 2)
    return min(config.judge_timeout, config.reward_timeout - reserve)


def judge_client_config(config: RewardConfig, budget_s: float) -> JudgeClientConfig:
    """The judge client's settings for ``config``, its calls (and each attempt) within ``budget_s``."""
    judge_s = min(config.judge_timeout, budget_s)
    return config.client_config().model_copy(
        update={"judge_timeout": judge_s, "request_timeout": min(config.attempt_timeout_s, judge_s)}
    )


class BaseJudgeReward:
    """The judge reward. ``backend`` replaces the judge server with any ``JudgeBackend``
    (judge_vllm/backend.py): everything else (pre-checks, cache, batching, breaker, fallback)
    stays. ``MultiJudge`` and ``EscalatingJudge`` are such backends over several judges.
    ``_request_judge`` is the hook for custom logic around the judge call."""

    def __init__(self, config: ConfigLike = None, *, backend: JudgeBackend | None = None) -> None:
        if backend is not None and not isinstance(backend, JudgeBackend):
            raise JudgeConfigError(
                f"backend {type(backend).__name__} is not a JudgeBackend: subclass "
                "judge_vllm.backend.JudgeBackend and write judge_many"
            )
        self._backend = backend
        self.config = RewardConfig.from_any(config)
        self.metrics = RewardMetrics()
        self.canary = CanaryStats(self.config.canary_alert_rate)
        self._loop = LoopThread()
        self._breaker = CircuitBreaker(
            self.config.circuit_breaker_threshold, self.config.circuit_breaker_cooldown
        )
        self._fallback = RuleFallback(self.config.rules, self.config.fallback_to_rule)
        self._cache = (
            VerdictCache(self.config.cache_path, self.config.cache_size) if self.config.use_cache else None
        )
        self._judge_budget_s = judge_budget_s(self.config)
        # The cascade's rules run inside the judge's budget: a share of it, never all of it.
        cascade_math_s = min(self.config.rules.symbolic_timeout, self._judge_budget_s * CASCADE_RULE_SHARE)
        self._cascade_rules = self.config.rules.model_copy(update={"symbolic_timeout": cascade_math_s})
        self._client_config = judge_client_config(self.config, self._judge_budget_s)
        self._profile = self._client_config.judge_profile()
        self._verdict_strings = verdict_strings(self._profile)
        self._dispatcher: JudgeDispatcher | None = None
        self._start_lock: asyncio.Lock | None = None
        self._canary_task: asyncio.Task[None] | None = None
        self._judging: set[asyncio.Task[object]] = set()
        self._rubric_judge = RubricJudge(self._judge_parts)
        self._process_judge = ProcessJudge(self._judge_parts, self.config.process) if self.config.process else None
        self._comparisons_in_flight = asyncio.Semaphore(self._comparison_slots())
        self._repeats = RepeatCounter()
        self._undiscovered: JudgeError | None = None  # why the last ask for the model failed
        self.judgment_log = JudgmentLog(self.config, self._known_model)
        self._finisher = RewardFinisher(self.config, self.metrics, self.judgment_log, self._known_model)
        reset_after_fork(self)
        self.metrics_endpoint = serve_metrics(self.config, self.get_metrics)  # None unless metrics_port

    def _after_fork_in_child(self) -> None:
        # The parent's loop, connections and tasks do not exist here; start afresh on first use.
        self._dispatcher = None
        self._start_lock = None
        self._canary_task = None
        self._judging = set()
        self._comparisons_in_flight = asyncio.Semaphore(self._comparison_slots())

    # -- public sync API -------------------------------------------------------------

    def reward(
        self, prompt: object, completion: object, answer: object = None, answer_type: object = None,
        **metadata: object,
    ) -> RewardDict:
        """Score one completion; always returns a dict with ``reward`` and ``source``. With
        ``rubric=[criteria]`` the reward is the rubric's (``answer`` optional). Any other
        keyword than ``request_id``, ``rubric`` and ``responses`` is a ``JudgeInputError`` (a typo
        such as ``anwser``); an unknown ``answer_type`` is reward 0, reason ``invalid_input``."""
        return self.compute_reward(prompt, completion, answer, answer_type, **metadata).to_dict()

    def compute_reward(
        self, prompt: object, completion: object, answer: object = None, answer_type: object = None,
        **metadata: object,
    ) -> RewardResult:
        """Like ``reward`` but returns the ``RewardResult`` (``.score``, ``.source``, ...)."""
        started = time.monotonic()
        check_keys(metadata, "reward")
        built = build_request(prompt, completion, answer, answer_type, metadata)
        if self._has_rubric(built):
            return self._answered_in_time([built], self._score_all([built], started), started)[0]
        step = self._before_judge(built, started)  # in the caller's thread: trainer threads in parallel
        if isinstance(step, RewardResult):
            return step
        request, key = step
        future = self._loop.submit(self._judged(request, started, key))
        try:
            return future.result(self.config.reward_timeout + FACADE_GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return self._fall_back(request, started, JudgeTimeoutError("Timeout waiting for results"))

    def reward_batch(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Score many completions at once (batched to the judge); results in input order.
        ``JudgeInputError``, before anything is judged, for a dict item with a key no reward reads
        (``ITEM_KEYS``: a typo such as ``anwser``)."""
        started = time.monotonic()
        built = [request_from_item(i) for i in batch_items(items)]
        return [r.to_dict() for r in self._answered_in_time(built, self._score_all(built, started), started)]

    def reward_group(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Score the completions of one prompt together, as ``group:`` in the config says
        (pairwise, listwise, or pointwise when unset): one reward per item, in order, each with
        the comparisons it came from. Returns within ``group.deadline`` plus ``reward_timeout``.
        ``JudgeInputError`` for members of several prompts, or more than ``group.max_members``."""
        started = time.monotonic()
        members = self._group_members(items)
        deadline = self.config.group.deadline if self.config.group else 0.0
        results = self._answered_in_time(members, self._score_group(members, started), started, deadline)
        return [r.to_dict() for r in results]

    def probe_canaries(self) -> float | None:
        """Run one round of canary probes now; return the judge's false-positive rate."""
        return self._loop.run(self._probe_canaries())

    def get_metrics(self) -> MetricsDict:
        """Counters, rates, latency percentiles, queue and breaker state."""
        dispatcher = self._dispatcher
        client = dispatcher.client if dispatcher else None
        canary = self.canary.snapshot()
        snapshot: MetricsDict = {
            **self.metrics.snapshot(canary["false_positive_rate"]),
            "canary": canary,
            "current_queue_size": dispatcher.batcher.queue_size if dispatcher else 0,
            "inflight": dispatcher.batcher.inflight if dispatcher else 0,
            "circuit_breaker": self._breaker.snapshot(),
            "cache": self._cache.stats() if self._cache else None,
            "cache_entries": len(self._cache) if self._cache else 0,
            "model": self._known_model(),
            "context_cuts": client.context_cuts if client else 0,
            "coarse_fast_verdicts": client.coarse_fast_verdicts if client else 0,
            "mode": self.config.mode,
            "profile": self.config.profile,
            "judgment_log": self.judgment_log.snapshot(),
        }
        if isinstance(client, ReplicaPool):
            pool = client.snapshot()
            snapshot["failovers"] = pool["failovers"]
            snapshot["replicas"] = pool["replicas"]
        return snapshot

    def close(self) -> None:
        """Answer the rewards in flight (judge or fallback), then stop the loop thread and close
        connections, the cache and the metrics endpoint. Idempotent."""
        self._loop.close(self._aclose(), CLOSE_GRACE_S + self.config.reward_timeout)
        if self._cache is not None:
            self._cache.close()
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.close()
        self.judgment_log.close()

    def __enter__(self) -> BaseJudgeReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public async API ------------------------------------------------------------

    async def areward(
        self, prompt: object, completion: object, answer: object = None, answer_type: object = None,
        **metadata: object,
    ) -> RewardDict:
        """Async ``reward``, callable from any event loop."""
        check_keys(metadata, "areward")
        request = build_request(prompt, completion, answer, answer_type, metadata)
        result: RewardResult = await self._on_loop(self._score(request, time.monotonic()))
        return result.to_dict()

    async def areward_batch(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Async ``reward_batch``, callable from any event loop."""
        built = [request_from_item(i) for i in batch_items(items)]
        results = await self._on_loop(self._score_all(built, time.monotonic()))
        return [r.to_dict() for r in results]

    async def areward_group(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Async ``reward_group``, callable from any event loop."""
        members = self._group_members(items)
        results = await self._on_loop(self._score_group(members, time.monotonic()))
        return [r.to_dict() for r in results]

    # -- extension point -------------------------------------------------------------

    async def _request_judge(self, request: JudgeRequest) -> Verdict:
        """Ask the judge (batched). Override for custom logic; may be sync or async and may
        return a ``Verdict``, a dict with ``score``, or a number in [0, 1]."""
        dispatcher = await self._ensure_started()
        return await dispatcher.batched(request)

    # -- the steps of one reward -----------------------------------------------------

    def _ruled(self, built: JudgeRequest | InvalidInput, started: float) -> JudgeRequest | RewardResult:
        """Bad input and the pre-checks' decisions as rewards; else the request as graded."""
        return self._invalid(built) if isinstance(built, InvalidInput) else self._prechecked(built, started)

    def _invalid(self, built: InvalidInput) -> RewardResult:
        """The defined reward for input that cannot be judged; the first is logged at warning
        (a trainer reads its log, not every row's explanation)."""
        if self._repeats.add("invalid_input") == 1:
            logger.warning("invalid input gets reward 0 (reason invalid_input): %s (said once)", built.problem)
        return self._finisher.invalid(built)

    def _prechecked(
        self, request: JudgeRequest, started: float, profile: JudgeProfile | None = None
    ) -> JudgeRequest | RewardResult:
        """The request as graded for ``profile`` (default: this judge's) after the policy's
        reasoning, or the reward the pre-checks decide."""
        graded = graded_request(request, self.config, profile or self._profile)
        if isinstance(graded, PrecheckVerdict):
            if graded.reason == "no_reference" and self._repeats.add("no_reference") == 1:
                logger.warning(
                    "%s: reward 0 (reason no_reference); pass the reference as answer (a batch "
                    "item's 'answer' key), or use a profile that needs none (said once)",
                    graded.explanation,
                )
            return self._decided(request, started, graded)
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
        return graded if decided is None else self._decided(request, started, decided)

    def _decided(self, request: JudgeRequest, started: float, decided: PrecheckVerdict) -> RewardResult:
        return self._finisher.finish(
            request, started, decided.reward, "rule", decided.explanation, reason=decided.reason
        )

    def _cascaded(self, request: JudgeRequest, started: float) -> JudgeRequest | RewardResult:
        """Strategy cascade: the rule reward where it is sure, else the request for the judge
        (with the rules' extracted answer for profiles that show the judge only that)."""
        decision = rule_first(request, self._cascade_rules)
        self.metrics.record_cascade(decision.decided)
        verdict = decision.verdict
        if decision.decided:
            explanation = f"decided by rule ({verdict.reason}): {verdict.explanation}"
            return self._finisher.finish(
                request, started, verdict.reward, "rule", explanation, reason=CASCADE_REASON
            )
        if self._profile.judge_input == "final_answer" and verdict.extracted:
            return request.model_copy(update={"final_answer": verdict.extracted})
        return request

    def _cached(self, request: JudgeRequest, started: float) -> tuple[RewardResult | None, str | None]:
        """The cache when the model is known: a result, or the cache key."""
        key = self._cache_key(request)
        if key is not None and self._cache is not None:
            verdict = self._cache.get(key)
            if verdict is not None:
                return self._finisher.from_verdict(request, started, verdict, "cache"), key
        return None, key

    async def _judged(self, request: JudgeRequest, started: float, key: str | None) -> RewardResult:
        """The judge's reward for a request that passed the pre-checks (on the loop thread)."""
        task = asyncio.current_task()
        if task is not None:
            self._judging.add(task)
        try:
            dispatcher = await self._ensure_started()
            deadline = started + self._judge_budget_s
            process = self._process_judge if self._asks_steps(request) else None
            if process is None:
                judged = await self._judge_part(dispatcher, request, deadline, key)
                steps = None
            else:  # the outcome and each turn, judged side by side
                judged, stepped = await asyncio.gather(
                    self._judge_part(dispatcher, request, deadline, key), process.score(request, deadline)
                )
                steps = stepped.mix(process.settings.weight)
            if isinstance(judged.outcome, Verdict):
                return self._finisher.from_verdict(request, started, judged.outcome, judged.source, steps)
            return await self._afall_back(request, started, judged.outcome)
        finally:
            if task is not None:
                self._judging.discard(task)

    def _before_judge(
        self, built: JudgeRequest | InvalidInput, started: float
    ) -> RewardResult | tuple[JudgeRequest, str | None]:
        """Every step before the judge, in order (bad input, pre-checks, the cascade's rule, the
        cache): the reward when one decides it, else the request for the judge and its cache key.
        The sync API runs it in the caller's thread, the async one on the loop or an executor."""
        request = self._ruled(built, started)
        if isinstance(request, JudgeRequest) and self.config.strategy == "cascade":
            request = self._cascaded(request, started)
        if isinstance(request, RewardResult):
            return request
        if self._asks_steps(request):  # a stored outcome still needs its turns' scores: looked up on the loop
            return request, None
        early, key = self._cached(request, started)
        return early if early is not None else (request, key)

    def _asks_steps(self, request: JudgeRequest) -> bool:
        """Whether ``request``'s agent turns are judged too (``process:`` and a trajectory shown)."""
        return self._process_judge is not None and self._process_judge.asks(request)

    async def _score(self, built: JudgeRequest | InvalidInput, started: float) -> RewardResult:
        """One reward on the loop thread: ``_before_judge``, then the judge. Rule work that may
        take a while (the pre-checks of a long completion, the cascade's rule grading) runs in an
        executor, so the loop keeps sending batches meanwhile."""
        if self._has_rubric(built):
            return await self._rubric_scored(built, started)
        slow = self.config.strategy == "cascade" or (
            isinstance(built, JudgeRequest) and len(built.completion) > INLINE_PRECHECK_CHARS
        )
        if slow:
            step = await asyncio.get_running_loop().run_in_executor(None, self._before_judge, built, started)
        else:
            step = self._before_judge(built, started)
        if isinstance(step, RewardResult):
            return step
        request, key = step
        return await self._judged(request, started, key)

    async def _score_all(self, built: list[JudgeRequest | InvalidInput], started: float) -> list[RewardResult]:
        return list(await asyncio.gather(*(self._score(b, started) for b in built)))

    def _answered_in_time(
        self,
        built: list[JudgeRequest | InvalidInput],
        scoring: Coroutine[object, None, list[RewardResult]],
        started: float,
        extra_s: float = 0.0,
    ) -> list[RewardResult]:
        """``scoring`` run on the loop thread, waited for ``reward_timeout`` (plus ``extra_s``, a
        group's deadline) and a grace; past that, each item's reward is made in the caller's
        thread, as if its judge had timed out: a busy or stuck loop never holds a trainer."""
        future = self._loop.submit(scoring)
        try:
            return future.result(self.config.reward_timeout + extra_s + FACADE_GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            late = JudgeTimeoutError("Timeout waiting for results")
            return [self._unanswered(b, started, late) for b in built]

    def _unanswered(self, built: JudgeRequest | InvalidInput, started: float, err: JudgeError) -> RewardResult:
        if isinstance(built, InvalidInput):
            return self._invalid(built)
        if self._has_rubric(built):
            return self._rubric_unjudged(built, started, err, err.reason, err.reason)
        return self._fall_back(built, started, err)

    async def _afall_back(
        self, request: JudgeRequest, started: float, err: JudgeError, budget_s: float | None = None
    ) -> RewardResult:
        """The fallback for a failed judge call, graded off the loop (sympy may take a while)."""
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, self._fall_back, request, started, err, budget_s)
        except RuntimeError:  # the executor is shut down: close() is finishing
            return self._fall_back(request, started, err, budget_s)

    def _fall_back(
        self, request: JudgeRequest, started: float, err: JudgeError, budget_s: float | None = None
    ) -> RewardResult:
        """The rule fallback's reward, within ``budget_s`` (default: what is left of ``reward_timeout``)."""
        budget = started + self.config.reward_timeout - time.monotonic() if budget_s is None else budget_s
        fallback = self._fallback.decide(request, err, budget)
        return self._finisher.finish(
            request,
            started,
            fallback.reward,
            fallback.source,
            fallback.explanation,
            reason=fallback.reason,
            error=fallback.error,
        )

    # -- rubric items ----------------------------------------------------------------------

    async def _rubric_scored(self, request: JudgeRequest, started: float) -> RewardResult:
        """A rubric item's reward: its criteria judged (``adapter/rubrics``), their weighted mean,
        0 on a failed veto; the fallback's unsure reward when no criterion, or a veto criterion,
        could not be judged."""
        try:
            criteria = parse_rubric(request.metadata.get("rubric", self.config.rubric))
        except JudgeInputError as err:
            return self._finisher.finish(
                request, started, 0.0, "rule", f"invalid rubric: {err}", reason="invalid_input"
            )
        checked = self._prechecked(request, started, item_profile())  # once per item, not per criterion
        if isinstance(checked, RewardResult):
            return checked
        scored, error = await self._rubric_judge.score(checked, criteria, started + self._judge_budget_s)
        per_criterion = {s.criterion: s.p_yes for s in scored.criteria if s.p_yes is not None}
        if scored.reward is not None:
            return self._finisher.finish(
                request, started, scored.reward, "judge", scored.explanation,
                detailed_scores=per_criterion, reason="vetoed" if scored.vetoed_by else None,
            )  # fmt: skip
        if scored.unjudged_vetoes:  # the other criteria cannot prove the veto would have passed
            failed = JudgeUnavailableError(f"{scored.explanation}: {error}")
            return self._rubric_unjudged(request, started, failed, VETO_NOT_JUDGED, scored.explanation)
        failed = JudgeUnavailableError(f"no rubric criterion could be judged: {error}")
        return self._rubric_unjudged(request, started, failed, failed.reason, failed.reason)

    def _rubric_unjudged(
        self, request: JudgeRequest, started: float, failed: JudgeError, reason: str, why: str
    ) -> RewardResult:
        """A rubric item its judge could not score: the unsure reward (no rule grades a rubric)."""
        if not self.config.fallback_to_rule:
            return self._finisher.finish(
                request, started, None, "error", str(failed), reason=reason, error=str(failed)
            )
        explanation = f"rule fallback ({why}): no rule can grade a rubric: the unsure reward"
        return self._finisher.finish(
            request, started, self.config.rules.unsure_reward, "rule_fallback", explanation,
            reason=reason, error=str(failed),
        )  # fmt: skip

    def _has_rubric(self, built: JudgeRequest | InvalidInput) -> TypeGuard[JudgeRequest]:
        """A rubric item: its own ``rubric``, or the config's rubric for every item."""
        return isinstance(built, JudgeRequest) and (
            built.metadata.get("rubric") is not None or self.config.rubric is not None
        )

    # -- groups ----------------------------------------------------------------------------

    def _group_members(self, items: Iterable[RewardItem]) -> list[JudgeRequest | InvalidInput]:
        """The members of one group, or ``JudgeInputError``: several prompts, or too many to compare."""
        members = group_requests(items)
        refused = self.config.group.too_large(len(members)) if self.config.group else None
        if refused:
            raise JudgeInputError(refused)
        return members

    async def _score_group(
        self, members: list[JudgeRequest | InvalidInput], started: float
    ) -> list[RewardResult]:
        """A group's rewards: each member pre-checked (and, with strategy cascade, ruled where the
        rule is sure), the rest compared by the judge (``adapter/groups``) within the group
        deadline; a member no comparison of which came back gets the fallback, with the reason."""
        settings = self.config.group
        if settings is None or settings.mode == "pointwise" or len(members) < 2:
            return list(await asyncio.gather(*(self._score(m, started) for m in members)))
        loop = asyncio.get_running_loop()
        ruled = await asyncio.gather(
            *(
                self._rubric_scored(m, started)  # a rubric item is scored by its rubric, on its own
                if self._has_rubric(m)
                else loop.run_in_executor(None, self._group_member, m, started, settings)
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
                    self._judged_alone(built, graded_member, started)
                    for built, graded_member in zip(members, ruled, strict=True)
                    if isinstance(built, JudgeRequest) and isinstance(graded_member, JudgeRequest)
                )
            )
            for k, result in zip(compared, alone, strict=True):
                results[k] = result
            return [r for r in results if r is not None]
        too_many = settings.mode == "listwise" and len(compared) > MAX_LISTWISE
        if len(compared) < 2 or too_many:  # nothing to compare with, or too many to rank: judged alone
            if too_many:
                logger.warning(
                    "listwise ranks at most %d responses; a group of %d is judged pointwise "
                    "(use mode: pairwise for larger groups)", MAX_LISTWISE, len(compared),
                )  # fmt: skip
            alone = await asyncio.gather(*(self._score(members[k], started) for k in compared))
            for k, result in zip(compared, alone, strict=True):
                results[k] = result
            return [r for r in results if r is not None]
        graded = [r for r in ruled if isinstance(r, JudgeRequest)]
        first = graded[0]
        comparisons = GroupJudge(self._judge_parts, settings, self._comparisons_in_flight)
        scored = await comparisons.score(
            first.prompt,
            first.answer,
            first.answer_type,
            [g.completion for g in graded],
            started + settings.deadline,
            compared,
        )
        for slot, k in enumerate(compared):
            results[k] = await self._group_member_reward(graded[slot], started, scored, slot, settings)
        return [r for r in results if r is not None]

    def _group_member(
        self, built: JudgeRequest | InvalidInput, started: float, settings: GroupSettings
    ) -> JudgeRequest | RewardResult:
        """A member as the comparisons see it (after its reasoning), or its reward when a rule
        decides it: bad input, a pre-check, or the cascade's sure rule."""
        if isinstance(built, InvalidInput):
            return self._invalid(built)
        graded = self._prechecked(built, started, load_profile(settings.mode))
        if isinstance(graded, RewardResult):
            return graded
        if self.config.strategy == "cascade" and not settings.compare_decided:
            return self._cascaded(graded, started)
        return graded

    async def _judged_alone(self, built: JudgeRequest, member: JudgeRequest, started: float) -> RewardResult:
        """A member the cascade's rule was unsure of, in a group where it decided others: judged on
        its own by this judge, as ``reward`` would judge it (its pre-checks and rule already ran;
        ``member`` holds the rule's extracted answer for profiles that show the judge only that)."""
        graded = graded_request(built, self.config, self._profile, member.final_answer)
        if isinstance(graded, PrecheckVerdict):
            return self._decided(built, started, graded)
        early, key = self._cached(graded, started)
        return early if early is not None else await self._judged(graded, started, key)

    async def _group_member_reward(
        self, request: JudgeRequest, started: float, scored: GroupScores, slot: int, settings: GroupSettings
    ) -> RewardResult:
        """One compared member's reward: its group score, or the fallback when no comparison of it
        came back (the rule gets its own ``reward_timeout`` for that, past the group deadline)."""
        score = scored.scores[slot]
        if score is None:
            return await self._afall_back(request, started, scored.unscored(settings), budget_s=self.config.reward_timeout)
        return self._finisher.finish(
            request, started, score, "judge", scored.explanation(slot, settings), reason=settings.mode,
            comparisons=scored.comparisons[slot],
        )  # fmt: skip

    def _comparison_slots(self) -> int:
        return max(1, int(self.config.max_concurrent_requests * self.config.max_batch_size * GROUP_CALL_SHARE))

    # -- the one seam for the judgments a reward is made of ---------------------------------

    async def _judge_parts(self, requests: Sequence[JudgeRequest], deadline: float) -> list[Judged]:
        """Judge a rubric's criteria or a group's comparisons by ``deadline`` through this
        system's cache, dispatcher and breaker (``adapter/dispatch/judgments.py``)."""
        dispatcher = await self._ensure_started()
        return list(await asyncio.gather(*(self._judge_part(dispatcher, r, deadline) for r in requests)))

    async def _judge_part(
        self, dispatcher: JudgeDispatcher, request: JudgeRequest, deadline: float, key: str | None = None
    ) -> Judged:
        """One judgment: from the cache, else the dispatcher's by ``deadline``. ``key``: the cache
        key already looked up (a miss); None = look it up here, once the model is known."""
        if key is None and self._cache is not None:
            key = self._cache_key(request) or await self._discovered_cache_key(dispatcher.client, request)
            cached = self._cache.get(key) if key is not None else None
            if cached is not None:
                return Judged(cached, "cache")
        flight = key or cache_key(request, self._known_model() or "", self._client_config)
        outcome = await dispatcher.outcome(request, flight, deadline)
        if isinstance(outcome, JudgeTimeoutError) and self._undiscovered is not None:
            # Out of time while the server does not answer at all: it is down, not slow.
            outcome = JudgeUnavailableError(f"the judge server does not answer: {self._undiscovered}")
        return Judged(outcome, "judge")

    # -- the loop thread's state ---------------------------------------------------------

    async def _on_loop(self, coro: Coroutine[object, None, T]) -> T:
        if self._loop.in_loop_thread():
            return await coro
        return await asyncio.wrap_future(self._loop.submit(coro))

    async def _ensure_started(self) -> JudgeDispatcher:
        if self._dispatcher is not None:
            return self._dispatcher
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._dispatcher is None:
                self._dispatcher = JudgeDispatcher(
                    self.config,
                    self._new_client(),
                    self._breaker,
                    self.metrics,
                    self._request_judge,
                    self._store if self._cache is not None else None,
                )
                if self.config.canary_interval is not None:
                    self._canary_task = asyncio.get_running_loop().create_task(self._canary_loop())
        return self._dispatcher

    def _new_client(self) -> JudgeBackend:
        """The backend given, else one judge server's client, or the pool over ``judge_replicas``."""
        if self._backend is not None:
            return self._backend
        return server_backend(self.config, self._client_config)

    async def _discovered_cache_key(self, client: JudgeBackend, request: JudgeRequest) -> str | None:
        """The cache key once the served model is known (asked of the server once, bounded); a
        failure to ask is remembered (``_undiscovered``) and logged as ``RepeatCounter`` says."""
        if client.known_model is None:
            try:
                model = await asyncio.wait_for(client.model_name(), MODEL_DISCOVERY_TIMEOUT_S)
            except (JudgeError, TimeoutError, asyncio.TimeoutError) as err:
                self._undiscovered = (
                    err if isinstance(err, JudgeError)
                    else JudgeTimeoutError(f"no reply from the judge server in {MODEL_DISCOVERY_TIMEOUT_S:g} s")
                )  # fmt: skip
                count = self._repeats.add(DISCOVERY)
                log = logger.warning if is_reported(count) else logger.debug
                log("judge model not discovered (%s), try #%d; will retry on the next call", self._undiscovered, count)
            else:
                self._undiscovered = None
                failed = self._repeats.pop(DISCOVERY)
                if failed:
                    logger.warning("judge model %s discovered after %d failed tries", model, failed)
        return self._cache_key(request)

    async def _probe_canaries(self) -> float | None:
        async def judge(request: JudgeRequest) -> Verdict:
            result = self._request_judge(request)
            return as_verdict(await result if inspect.isawaitable(result) else result)

        return await self.canary.probe(judge)

    async def _canary_loop(self) -> None:
        interval = self.config.canary_interval or 0.0
        while True:
            await asyncio.sleep(interval)
            if self._breaker.state is BreakerState.CLOSED:
                await self._probe_canaries()

    async def _aclose(self) -> None:
        if self._canary_task is not None:
            self._canary_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._canary_task
        if self._dispatcher is not None:
            await self._dispatcher.aclose()
        while self._judging:  # queued and in-flight rewards now fall back; let them finish
            await asyncio.wait(set(self._judging), timeout=CLOSE_GRACE_S)
        # DNS lookups and rule fallbacks ran in the loop's default executor: join its threads.
        await asyncio.get_running_loop().shutdown_default_executor()

    # -- results -------------------------------------------------------------------------

    def _known_model(self) -> str | None:
        client = self._dispatcher.client if self._dispatcher is not None else self._backend
        if client is not None and client.known_model is not None:
            return client.known_model
        return self.config.model

    def _store(self, key: str, verdict: Verdict) -> None:
        if self._cache is not None and self._cacheable(verdict):
            self._cache.set(key, verdict)

    def _cacheable(self, verdict: Verdict) -> bool:
        """Whether the judge's verdict may be cached: an ensemble's or an escalation's that a member
        judge could not complete may not (asked again, it may hear them all)."""
        return True

    def _cache_key(self, request: JudgeRequest) -> str | None:
        model = self._known_model()
        if self._cache is None or model is None:
            return None
        return cache_key(request, model, self._client_config)




class JudgeRewardSystem(BaseJudgeReward):
    """Drop-in for a rule ``RewardSystem``: ``from adapter import JudgeRewardSystem as RewardSystem``."""
