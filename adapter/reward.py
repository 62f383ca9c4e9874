"""``JudgeRewardSystem``: the drop-in reward a trainer imports (the public facade).

The facade owns a reward system's state (its loop thread, dispatcher, cache, breaker, metrics)
and its public calls; each call starts one ``Budget`` (``judge_vllm/budget.py``) that every
step below reads. The path of one reward, each step in a module of its own:

    inputs.build_request        bad input -> JudgeInputError (invalid_rows: error), or reward 0,
                                source "rule", reason invalid_input (invalid_rows: zero)
    steps.RewardSteps           the rules (``adapter/pipeline/steps.py``), in the caller's thread:
      graded_text                 the completion after its reasoning (and its final answer)
      prechecks.precheck          decided by rule -> source "rule"
      cascade.rule_first          strategy cascade: the rule reward where sure -> "rule", "cascade"
                                  (a sample judged too, in the background: the shadow audit)
      VerdictCache.get            once the model is known -> "cache"
    _judge_part                 on the loop thread, the request carrying its budget:
      dispatch.JudgeDispatcher    single-flight, breaker, ``budget.judge_by``, micro-batcher,
                                  ``_request_judge`` -> source "judge"
    steps.fall_back             the judge failed -> "rule_fallback" (or "error", reward None)
    finish.RewardFinisher       every result: calibrated, counted in the metrics, offered to
                                the judgment log

A rubric item (``adapter/rubrics/scoring.py``), a group (``adapter/groups/scoring.py``) and an
agent's turns (``adapter/process``) take the same steps, and their judgments go through the same
cache and dispatcher (``_judge_parts``, the one seam: docs/ARCHITECTURE.md).

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
from collections.abc import Coroutine, Iterable, Sequence
from typing import TypeVar

from adapter.cache.keys import cache_key
from adapter.cache.verdict_cache import VerdictCache
from adapter.config import ConfigLike, RewardConfig
from adapter.dispatch.activity import RewardActivity
from adapter.dispatch.breaker import BreakerState, CircuitBreaker
from adapter.dispatch.dispatcher import JudgeDispatcher, as_verdict
from adapter.dispatch.judgments import Judged
from adapter.dispatch.loop_thread import LoopThread
from adapter.dispatch.members import server_backend
from adapter.dispatch.replicas import ReplicaPool
from adapter.dispatch.startup_check import JudgeAddress, check_judge, server_urls
from adapter.fork_safety import reset_after_fork
from adapter.groups.scoring import GroupScoring
from adapter.metrics_dict import MetricsDict
from adapter.observability.canary import CanaryStats
from adapter.observability.fallback_watch import FallbackWatch
from adapter.observability.integrity import JudgeIntegrity
from adapter.observability.judgment_log import JudgmentLog
from adapter.observability.metrics import RewardMetrics
from adapter.observability.metrics_endpoint import MetricsEndpoint, serve_metrics
from adapter.observability.repeats import RepeatCounter, is_reported
from adapter.observability.shadow_audit import ShadowAudit
from adapter.pipeline.finish import RewardFinisher
from adapter.pipeline.graded_text import graded_request
from adapter.pipeline.inputs import (
    InvalidInput,
    RewardItem,
    batch_items,
    build_request,
    check_keys,
    request_from_item,
)
from adapter.pipeline.prechecks import PrecheckVerdict
from adapter.pipeline.steps import RewardSteps
from adapter.pipeline.trace_views import both_views, final_view, judged_in_both_views
from adapter.process.judge import ProcessJudge
from adapter.result import RewardDict, RewardResult
from adapter.rubrics.scoring import RubricScoring
from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.budget import Budget
from judge_vllm.errors import (
    JudgeConfigError,
    JudgeError,
    JudgeStartupError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
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
# Extra seconds the sync facade waits for the loop thread before answering from its own thread.
FACADE_GRACE_S = 1.0
MODEL_DISCOVERY_TIMEOUT_S = 5.0
DISCOVERY = "model discovery"  # its failures' kind in the repeat counter
# Completions longer than this are pre-checked off the event loop (a 15 KB one takes ~3 ms).
INLINE_PRECHECK_CHARS = 2_000
CLOSE_GRACE_S = 10.0


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
        self.fallback_watch = FallbackWatch(self.config)
        self.integrity = JudgeIntegrity(self.config.audit, self.config.canary_alert_rate)
        self.canary = CanaryStats(self.config.canary_alert_rate, self.integrity.record_canaries)
        self._loop = LoopThread()
        self._activity = RewardActivity()
        self._breaker = CircuitBreaker(
            self.config.circuit_breaker_threshold, self.config.circuit_breaker_cooldown
        )
        self._cache = (
            VerdictCache(self.config.cache_path, self.config.cache_size) if self.config.use_cache else None
        )
        self._judge_budget_s = judge_budget_s(self.config)
        self._client_config = judge_client_config(self.config, self._judge_budget_s)
        self._dispatcher: JudgeDispatcher | None = None
        self._start_lock: asyncio.Lock | None = None
        self._canary_task: asyncio.Task[None] | None = None
        self._judging: set[asyncio.Task[object]] = set()
        self._repeats = RepeatCounter()
        self._undiscovered: JudgeError | None = None  # why the last ask for the model failed
        self.judgment_log = JudgmentLog(self.config, self._known_model)
        self.shadow_audit = ShadowAudit(
            self.config.audit,
            self._shadow_judge,
            self._loop.submit,
            self.judgment_log,
            self.integrity.record_shadow,
            self._activity.quiet_for,
        )
        self._steps = RewardSteps(
            self.config,
            self._client_config.judge_profile(),
            self._judge_budget_s,
            RewardFinisher(
                self.config, self.metrics, self.judgment_log, self._known_model,
                fallback_watch=self.fallback_watch, integrity=self.integrity,
            ),
            self.metrics,
            self._repeats,
            self._cache,
            self._cache_key,
            self.shadow_audit,
        )
        self._rubrics = RubricScoring(self._steps, self._judge_parts)
        self._groups = GroupScoring(
            self._steps, self._judge_parts, self._score, self._judged, self.integrity.record_pairs
        )
        self._process_judge = (
            ProcessJudge(self._judge_parts, self.config.process) if self.config.process else None
        )
        reset_after_fork(self)
        self.metrics_endpoint: MetricsEndpoint | None = None
        self._check_at_start()  # before the endpoint: a system that fails it never opens a port
        self.metrics_endpoint = serve_metrics(self.config, self.get_metrics)  # None unless metrics_port

    def _after_fork_in_child(self) -> None:
        # The parent's loop, connections and tasks do not exist here; start afresh on first use.
        self._dispatcher = None
        self._start_lock = None
        self._canary_task = None
        self._judging = set()
        self._groups.reset()

    # -- public sync API -------------------------------------------------------------

    def reward(
        self,
        prompt: object,
        completion: object,
        answer: object = None,
        answer_type: object = None,
        **metadata: object,
    ) -> RewardDict:
        """Score one completion; always returns a dict with ``reward`` and ``source``. With
        ``rubric=[criteria]`` the reward is the rubric's (``answer`` optional). Any other
        keyword than ``request_id``, ``rubric`` and ``responses`` is a ``JudgeInputError`` (a typo
        such as ``anwser``); so is a row that cannot be judged, such as an unknown ``answer_type``
        (the message names the closest one), unless ``invalid_rows: zero`` gives it reward 0
        (reason ``invalid_input``)."""
        return self.compute_reward(prompt, completion, answer, answer_type, **metadata).to_dict()

    def compute_reward(
        self,
        prompt: object,
        completion: object,
        answer: object = None,
        answer_type: object = None,
        **metadata: object,
    ) -> RewardResult:
        """Like ``reward`` but returns the ``RewardResult`` (``.score``, ``.source``, ...)."""
        with self._activity.busy():
            budget = self._budget()
            check_keys(metadata, "reward")
            built = build_request(prompt, completion, answer, answer_type, metadata)
            self._steps.refuse_invalid([built], "reward")
            if self._steps.has_rubric(built):
                return self._answered_in_time([built], self._score_all([built], budget), budget)[0]
            step = self._before_judge(built, budget)  # in the caller's thread: trainer threads in parallel
            if isinstance(step, RewardResult):
                return step
            request, key = step
            future = self._loop.submit(self._judged(request, budget, key))
            try:
                return future.result(budget.answer_left() + FACADE_GRACE_S)
            except concurrent.futures.TimeoutError:
                future.cancel()
                return self._steps.fall_back(request, budget, JudgeTimeoutError("Timeout waiting for results"))

    def reward_batch(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Score many completions at once (batched to the judge); results in input order.
        ``JudgeInputError``, before anything is judged, for a dict item with a key no reward reads
        (``ITEM_KEYS``: a typo such as ``anwser``), or an item that cannot be judged (with
        ``invalid_rows: error``, the default)."""
        with self._activity.busy():
            budget = self._budget()
            built = [request_from_item(i) for i in batch_items(items)]
            self._steps.refuse_invalid(built, "reward_batch")
            results = self._answered_in_time(built, self._score_all(built, budget), budget)
        return [r.to_dict() for r in results]

    def reward_group(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Score the completions of one prompt together, as ``group:`` in the config says
        (pairwise, listwise, or pointwise when unset): one reward per item, in order, each with
        the comparisons it came from. Returns within ``group.deadline`` plus ``reward_timeout``.
        A group of more than ``group.max_members`` is compared in sub-groups (reason
        ``<mode>_subgroup``). ``JudgeInputError`` for members of several prompts."""
        with self._activity.busy():
            budget = self._group_budget()
            members = self._groups.members(items)
            results = self._answered_in_time(members, self._groups.score(members, budget), budget)
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
            "fallback_window": self.fallback_watch.snapshot(),
            "shadow_audit": self.shadow_audit.snapshot(),
            "integrity": self.integrity.snapshot(),
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
        self,
        prompt: object,
        completion: object,
        answer: object = None,
        answer_type: object = None,
        **metadata: object,
    ) -> RewardDict:
        """Async ``reward``, callable from any event loop."""
        with self._activity.busy():
            check_keys(metadata, "areward")
            request = build_request(prompt, completion, answer, answer_type, metadata)
            self._steps.refuse_invalid([request], "areward")
            result: RewardResult = await self._on_loop(self._score(request, self._budget()))
        return result.to_dict()

    async def areward_batch(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Async ``reward_batch``, callable from any event loop."""
        with self._activity.busy():
            built = [request_from_item(i) for i in batch_items(items)]
            self._steps.refuse_invalid(built, "areward_batch")
            results = await self._on_loop(self._score_all(built, self._budget()))
        return [r.to_dict() for r in results]

    async def areward_group(self, items: Iterable[RewardItem]) -> list[RewardDict]:
        """Async ``reward_group``, callable from any event loop."""
        with self._activity.busy():
            members = self._groups.members(items)
            results = await self._on_loop(self._groups.score(members, self._group_budget()))
        return [r.to_dict() for r in results]

    async def alast_turn_score(
        self,
        prompt: object,
        completion: object,
        answer: object = None,
        answer_type: object = None,
        **metadata: object,
    ) -> float | None:
        """The ``step`` profile's score of the last agent turn in ``completion`` (messages ending
        with that turn's tool results, before any final reply), judged as ``process:`` judges each
        turn of a reward, so the reward's own judgment of that turn is then a cache hit. For
        trainers that pay each turn as it happens (``adapter.process.turn_rewards``). None when
        no turn is shown to the judge or its judgment failed; a trace the pre-checks decide
        (text aimed at the judge) scores their reward. ``JudgeConfigError`` without ``process:``."""
        if self._process_judge is None:
            raise JudgeConfigError("alast_turn_score needs a process: block in the reward config")
        check_keys(metadata, "alast_turn_score")
        built = build_request(prompt, completion, answer, answer_type, metadata)
        self._steps.refuse_invalid([built], "alast_turn_score")
        if isinstance(built, InvalidInput):
            return None
        graded = graded_request(built, self.config, self._steps.profile)
        if isinstance(graded, PrecheckVerdict):
            return graded.reward
        if not self._process_judge.asks(graded):
            return None
        with self._activity.busy():
            return await self._on_loop(self._process_judge.score_last(graded, self._budget()))

    # -- extension point -------------------------------------------------------------

    async def _request_judge(self, request: JudgeRequest) -> Verdict:
        """Ask the judge (batched). Override for custom logic; may be sync or async and may
        return a ``Verdict``, a dict with ``score``, or a number in [0, 1]."""
        dispatcher = await self._ensure_started()
        return await dispatcher.batched(request)

    # -- one reward: the steps (adapter/pipeline/steps.py) around the judge --------------

    def _budget(self) -> Budget:
        """A call's budget, from now: the judge's share of ``reward_timeout``, and all of it."""
        return Budget.start(self._judge_budget_s, self.config.reward_timeout)

    def _group_budget(self) -> Budget:
        """A group call's budget: a reward's, and its reward due ``group.deadline`` later."""
        deadline_s = self.config.group.deadline if self.config.group else 0.0
        return Budget.start(self._judge_budget_s, self.config.reward_timeout + deadline_s)

    def _before_judge(
        self, built: JudgeRequest | InvalidInput, budget: Budget
    ) -> RewardResult | tuple[JudgeRequest, str | None]:
        """Every step before the judge (bad input, pre-checks, the cascade's rule, the cache):
        the reward when one decides it, else the request for the judge and its cache key. The
        sync API runs it in the caller's thread, the async one on the loop or an executor."""
        request = self._steps.before_judge(built, budget)
        if isinstance(request, RewardResult):
            return request
        if self._asks_steps(request) or judged_in_both_views(request, self.config):
            return request, None  # a stored verdict is one part of the reward: each looked up on the loop
        early, key = self._steps.cached(request, budget)
        return early if early is not None else (request, key)

    def _asks_steps(self, request: JudgeRequest) -> bool:
        """Whether ``request``'s agent turns are judged too (``process:`` and a trajectory shown)."""
        return self._process_judge is not None and self._process_judge.asks(request)

    async def _judged(self, request: JudgeRequest, budget: Budget, key: str | None) -> RewardResult:
        """The judge's reward for a request that passed the rules (on the loop thread)."""
        task = asyncio.current_task()
        if task is not None:
            self._judging.add(task)
        try:
            dispatcher = await self._ensure_started()
            asked = request.model_copy(update={"budget": budget})
            process = self._process_judge if self._asks_steps(request) else None
            if process is None:
                judged = await self._judge_outcome(dispatcher, asked, key)
                steps = None
            else:  # the outcome and each turn, judged side by side
                judged, stepped = await asyncio.gather(
                    self._judge_outcome(dispatcher, asked, key), process.score(request, budget)
                )
                steps = stepped.mix(process.settings.weight)
            if isinstance(judged.outcome, Verdict):
                return self._steps.finisher.from_verdict(
                    request, budget.started, judged.outcome, judged.source, steps
                )
            return await self._steps.afall_back(request, budget, judged.outcome)
        finally:
            if task is not None:
                self._judging.discard(task)

    async def _judge_outcome(self, dispatcher: JudgeDispatcher, request: JudgeRequest, key: str | None) -> Judged:
        """The judgment of a reward's outcome; an agent's run under ``trajectory_view: both`` is
        judged with its steps and by its final reply alone, side by side, and the two combined
        (``adapter/pipeline/trace_views.py``)."""
        if not judged_in_both_views(request, self.config):
            return await self._judge_part(dispatcher, request, key)
        views = await asyncio.gather(
            self._judge_part(dispatcher, request, key), self._judge_part(dispatcher, final_view(request))
        )
        sources = {view.source for view in views if isinstance(view.outcome, Verdict)}
        return Judged(both_views(views[0].outcome, views[1].outcome), "cache" if sources == {"cache"} else "judge")

    async def _score(self, built: JudgeRequest | InvalidInput, budget: Budget) -> RewardResult:
        """One reward on the loop thread: ``_before_judge``, then the judge. Rule work that may
        take a while (the pre-checks of a long completion, the cascade's rule grading) runs in an
        executor, so the loop keeps sending batches meanwhile."""
        if self._steps.has_rubric(built):
            return await self._rubrics.score(built, budget)
        slow = self.config.strategy == "cascade" or (
            isinstance(built, JudgeRequest) and len(built.completion) > INLINE_PRECHECK_CHARS
        )
        if slow:
            step = await asyncio.get_running_loop().run_in_executor(None, self._before_judge, built, budget)
        else:
            step = self._before_judge(built, budget)
        if isinstance(step, RewardResult):
            return step
        request, key = step
        return await self._judged(request, budget, key)

    async def _score_all(
        self, built: list[JudgeRequest | InvalidInput], budget: Budget
    ) -> list[RewardResult]:
        return list(await asyncio.gather(*(self._score(b, budget) for b in built)))

    def _answered_in_time(
        self,
        built: list[JudgeRequest | InvalidInput],
        scoring: Coroutine[object, None, list[RewardResult]],
        budget: Budget,
    ) -> list[RewardResult]:
        """``scoring`` run on the loop thread, waited for until ``budget.answer_by`` and a grace;
        past that, each item's reward is made in the caller's thread, as if its judge had timed
        out: a busy or stuck loop never holds a trainer."""
        future = self._loop.submit(scoring)
        try:
            return future.result(budget.answer_left() + FACADE_GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            late = JudgeTimeoutError("Timeout waiting for results")
            return [self._unanswered(b, budget, late) for b in built]

    def _unanswered(
        self, built: JudgeRequest | InvalidInput, budget: Budget, err: JudgeError
    ) -> RewardResult:
        if isinstance(built, InvalidInput):
            return self._steps.invalid(built)
        if self._steps.has_rubric(built):
            return self._rubrics.unjudged(built, budget, err, err.reason, err.reason)
        return self._steps.fall_back(built, budget, err)

    # -- the one seam for the judgments a reward is made of ---------------------------------

    async def _judge_parts(self, requests: Sequence[JudgeRequest]) -> list[Judged]:
        """Judge a rubric's criteria, a group's comparisons or an agent's turns, each by its
        budget, through this system's cache, dispatcher and breaker (``adapter/dispatch/judgments.py``)."""
        dispatcher = await self._ensure_started()
        return list(await asyncio.gather(*(self._judge_part(dispatcher, r) for r in requests)))

    async def _judge_part(
        self, dispatcher: JudgeDispatcher, request: JudgeRequest, key: str | None = None
    ) -> Judged:
        """One judgment: from the cache, else the dispatcher's by ``request.budget``. ``key``: the
        cache key already looked up (a miss); None = look it up here, once the model is known."""
        if key is None and self._cache is not None:
            key = self._cache_key(request) or await self._discovered_cache_key(dispatcher.client, request)
            cached = self._cache.get(key) if key is not None else None
            if cached is not None:
                return Judged(cached, "cache")
        flight = key or cache_key(request, self._known_model() or "", self._client_config)
        outcome = await dispatcher.outcome(request, flight)
        if isinstance(outcome, JudgeTimeoutError) and self._undiscovered is not None:
            # Out of time while the server does not answer at all: it is down, not slow.
            outcome = JudgeUnavailableError(f"the judge server does not answer: {self._undiscovered}")
        return Judged(outcome, "judge")

    # -- the start-up check (adapter/dispatch/startup_check.py) ---------------------------

    def _check_at_start(self) -> None:
        """``startup_check``: ask the judge for its model and one tiny judgment now, not at the
        first reward; a failure raises (``fail``, this system closed) or is logged (``warn``)."""
        if self.config.startup_check == "off":
            return
        wait_s = self.config.reward_timeout + FACADE_GRACE_S
        try:
            try:
                model = self._loop.run(self._startup_check(), wait_s)
            except concurrent.futures.TimeoutError:  # the loop itself did not get to it
                raise JudgeStartupError(
                    f"{self._judge_address()} failed the start-up check: no answer within {wait_s:g} s"
                ) from None
        except JudgeStartupError as err:
            if self.config.startup_check == "fail":
                self.close()
                raise
            logger.warning("%s", err)
            return
        except BaseException:
            self.close()
            raise
        logger.debug("start-up check passed: %s, model %s", self._judge_address(), model)

    async def _startup_check(self) -> str | None:
        dispatcher = await self._ensure_started()
        profile = self._client_config.judge_profile()
        where, mode = self._judge_address(), self.config.mode
        return await check_judge(dispatcher.client, where, profile, mode, self._budget())

    def _judge_address(self) -> JudgeAddress:
        """Where this system's judge is, for the start-up check: the config's servers, or the
        backend given. Systems whose backend asks several servers say which."""
        if self._backend is not None:
            return JudgeAddress([], type(self._backend).__name__)
        return JudgeAddress(server_urls(self.config, self.config.judge_replicas))

    async def _shadow_judge(self, request: JudgeRequest) -> Outcome:
        """The shadow audit's judgment of a row the rule decided: through the one seam (cache,
        dispatcher, breaker), on a reward's budget of its own; no reward waits for it."""
        (judged,) = await self._judge_parts([request.model_copy(update={"budget": self._budget()})])
        return judged.outcome

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
                log(
                    "judge model not discovered (%s), try #%d; will retry on the next call",
                    self._undiscovered,
                    count,
                )
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
        await self.shadow_audit.aclose()
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
