"""``JudgeRewardSystem``: the drop-in reward a trainer imports.

One async core (``_score``) runs on one background loop thread per instance; the sync
methods submit to it and block, the async ones await it. Every call returns a reward
within ``timeout``: from a pre-check (``rule``), the cache, the judge, or the rule
fallback when the judge fails (``rule_fallback``; ``error`` with ``reward=None`` when
``fallback_to_rule`` is off). The path of one request:

    pre-check -> cache -> single-flight -> circuit breaker -> micro-batcher -> judge
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from adapter.batching import MicroBatcher, Outcome
from adapter.breaker import BreakerState, CircuitBreaker
from adapter.cache import VerdictCache, cache_key
from adapter.canary import CanaryStats
from adapter.config import RewardConfig
from adapter.loop import LoopThread
from adapter.metrics import RewardMetrics
from adapter.prechecks import precheck
from adapter.result import RewardResult
from adapter.rules import RuleRewardSystem
from judge_vllm.client import JudgeClient
from judge_vllm.errors import (
    CircuitOpenError,
    JudgeError,
    JudgeParseError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
    QueueFullError,
)
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["BaseJudgeReward", "JudgeRewardSystem", "RewardItem", "create_judge_reward"]

logger = logging.getLogger("JudgeReward")

RewardItem = Mapping[str, Any] | JudgeRequest | Sequence[Any]
ConfigLike = RewardConfig | Mapping[str, Any] | str | Path | None
# Extra seconds the sync facade waits beyond ``timeout`` (for the rule fallback) before
# answering from the calling thread itself.
FACADE_GRACE_S = 5.0
MODEL_DISCOVERY_TIMEOUT_S = 5.0
_REQUEST_FIELDS = ("prompt", "completion", "answer", "answer_type")


def _fallback_reason(err: JudgeError) -> str:
    """The seed's troubleshooting names for why the judge did not answer."""
    if isinstance(err, CircuitOpenError):
        return "Circuit breaker open"
    if isinstance(err, QueueFullError):
        return "Request queue full"
    if isinstance(err, JudgeTimeoutError):
        return "Timeout waiting for results"
    if isinstance(err, JudgeParseError):
        return "Invalid judge output"
    if isinstance(err, JudgeRequestError):
        return "Judge rejected the request"
    return "Judge unavailable"


def _as_verdict(value: Any) -> Verdict:
    """Accept what a custom ``_request_judge`` may return: a Verdict, a dict or a number."""
    if isinstance(value, Verdict):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Verdict(score=float(value))
    if isinstance(value, Mapping):
        return Verdict.model_validate(value)
    raise JudgeParseError(f"_request_judge returned {type(value).__name__}, not a Verdict")


class BaseJudgeReward:
    """The judge reward; subclass and override ``_request_judge`` for custom judge logic."""

    def __init__(self, config: ConfigLike = None) -> None:
        self.config = RewardConfig.from_any(config)
        self.metrics = RewardMetrics()
        self._loop = LoopThread()
        self._rules = RuleRewardSystem(self.config.rules)
        self._breaker = CircuitBreaker(
            self.config.circuit_breaker_threshold, self.config.circuit_breaker_timeout
        )
        self._cache = (
            VerdictCache(self.config.cache_path, self.config.cache_size) if self.config.use_cache else None
        )
        self._client_config = self.config.client_config()
        self._client: JudgeClient | None = None
        self._batcher: MicroBatcher | None = None
        self._pending: dict[str, asyncio.Future[Outcome]] = {}
        self._start_lock: asyncio.Lock | None = None
        self._warned: dict[str, int] = {}
        self.canary = CanaryStats(self.config.canary_alert_rate)
        self._canary_task: asyncio.Task[None] | None = None
        # The breaker counts judge calls: batches on the default path, items for a custom judge.
        self._custom_judge = type(self)._request_judge is not BaseJudgeReward._request_judge

    # -- public sync API -------------------------------------------------------------

    def reward(
        self, prompt: Any, completion: Any, answer: Any, answer_type: Any = None, **metadata: Any
    ) -> dict[str, Any]:
        """Score one completion; always returns a dict with ``reward`` and ``source``."""
        return self.compute_reward(prompt, completion, answer, answer_type, **metadata).to_dict()

    def compute_reward(
        self, prompt: Any, completion: Any, answer: Any, answer_type: Any = None, **metadata: Any
    ) -> RewardResult:
        """Like ``reward`` but returns the ``RewardResult`` (``.score``, ``.source``, ...)."""
        started = time.perf_counter()
        request = self._build_request(prompt, completion, answer, answer_type, metadata)
        if isinstance(request, RewardResult):
            return request
        cache_consulted = self._cache is not None and self._known_model() is not None
        quick = self._quick(request, started)
        if quick is not None:
            return quick
        future = self._loop.submit(self._score(request, started, checked=cache_consulted))
        try:
            return future.result(self.config.timeout + self.config.rules.math_timeout_s + FACADE_GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            err = JudgeTimeoutError("Timeout waiting for results")
            return self._rule_result(request, started, _fallback_reason(err), err)

    def reward_batch(self, items: Iterable[RewardItem]) -> list[dict[str, Any]]:
        """Score many completions at once (batched to the judge); results in input order."""
        results = self._loop.run(self._score_items(list(items), time.perf_counter()))
        return [r.to_dict() for r in results]

    def probe_canaries(self) -> float | None:
        """Run one round of canary probes now; return the judge's false-positive rate."""
        return self._loop.run(self._probe_canaries())

    def get_metrics(self) -> dict[str, Any]:
        """Counters, rates, latency percentiles, queue and breaker state."""
        snapshot = self.metrics.snapshot()
        snapshot.update(
            canary=self.canary.snapshot(),
            current_queue_size=self._batcher.queue_size if self._batcher else 0,
            inflight=self._batcher.inflight if self._batcher else 0,
            circuit_breaker=self._breaker.snapshot(),
            cache_entries=len(self._cache) if self._cache else 0,
            model=self._client.known_model if self._client else self.config.model,
            context_cuts=self._client.context_cuts if self._client else 0,
            mode=self.config.mode,
        )
        return snapshot

    def close(self) -> None:
        """Stop the loop thread and close connections and the cache. Idempotent."""
        self._loop.close(self._aclose())
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> BaseJudgeReward:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public async API ------------------------------------------------------------

    async def areward(
        self, prompt: Any, completion: Any, answer: Any, answer_type: Any = None, **metadata: Any
    ) -> dict[str, Any]:
        """Async ``reward``, callable from any event loop."""
        started = time.perf_counter()
        request = self._build_request(prompt, completion, answer, answer_type, metadata)
        if isinstance(request, RewardResult):
            return request.to_dict()
        result = await self._on_loop(self._score(request, started))
        return result.to_dict()

    async def areward_batch(self, items: Iterable[RewardItem]) -> list[dict[str, Any]]:
        """Async ``reward_batch``, callable from any event loop."""
        results = await self._on_loop(self._score_items(list(items), time.perf_counter()))
        return [r.to_dict() for r in results]

    # -- extension point -------------------------------------------------------------

    async def _request_judge(self, request: JudgeRequest) -> Verdict:
        """Ask the judge (batched). Override for custom logic; may be sync or async and may
        return a ``Verdict``, a dict with ``score``, or a number in [0, 1]."""
        await self._ensure_started()
        assert self._batcher is not None
        outcome = await self._batcher.submit(request)
        if isinstance(outcome, JudgeError):
            raise outcome
        return outcome

    # -- the async core (runs on the loop thread) -----------------------------------------

    async def _on_loop(self, coro: Any) -> Any:
        if self._loop.in_loop_thread():
            return await coro
        return await asyncio.wrap_future(self._loop.submit(coro))

    async def _ensure_started(self) -> None:
        if self._batcher is not None:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._batcher is not None:
                return
            self._client = JudgeClient(self._client_config)
            if self.config.model is None:
                try:  # once, so cache keys are known from the first request
                    await asyncio.wait_for(self._client.model_name(), MODEL_DISCOVERY_TIMEOUT_S)
                except (JudgeError, TimeoutError) as err:
                    logger.warning("judge model not discovered yet (%s); will retry on first call", err)
            self._batcher = MicroBatcher(
                self._send_batch,
                self.config.max_batch_size,
                self.config.batch_timeout,
                self.config.max_concurrent_requests,
                self.config.max_queue_size,
            )
            if self.config.canary_interval is not None:
                self._canary_task = asyncio.get_running_loop().create_task(self._canary_loop())

    async def _probe_canaries(self) -> float | None:
        await self._ensure_started()

        async def judge(request: JudgeRequest) -> Verdict:
            result = self._request_judge(request)
            return _as_verdict(await result if inspect.isawaitable(result) else result)

        return await self.canary.probe(judge)

    async def _canary_loop(self) -> None:
        assert self.config.canary_interval is not None
        while True:
            await asyncio.sleep(self.config.canary_interval)
            if self._breaker.state is BreakerState.CLOSED:
                await self._probe_canaries()

    async def _send_batch(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """One judge call for a batch; the breaker learns from the call, not from each item."""
        assert self._client is not None
        self.metrics.record_batch(len(requests))
        try:
            outcomes = await self._client.judge_many(requests)
        except JudgeError as err:
            if not self._custom_judge:
                self._record_call(err)
            raise
        if not self._custom_judge:
            down = all(isinstance(o, JudgeUnavailableError) for o in outcomes)
            self._record_call(outcomes[0] if down else None)
        return outcomes

    def _record_call(self, error: JudgeError | None) -> None:
        """Tell the breaker how one judge call went (a bad reply or a 4xx: the server is up)."""
        if isinstance(error, JudgeUnavailableError):
            self._breaker.record_failure()
        else:
            self._breaker.record_success()

    async def _aclose(self) -> None:
        if self._canary_task is not None:
            self._canary_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._canary_task
        if self._batcher is not None:
            await self._batcher.aclose()
        if self._client is not None:
            await self._client.aclose()
        # DNS lookups and rule fallbacks ran in the loop's default executor: join its threads.
        await asyncio.get_running_loop().shutdown_default_executor()

    def _build_request(
        self, prompt: Any, completion: Any, answer: Any, answer_type: Any, metadata: dict[str, Any]
    ) -> JudgeRequest | RewardResult:
        fields = {"prompt": prompt, "completion": completion, "answer": answer, "answer_type": answer_type}
        request_id = metadata.pop("request_id", None)
        if request_id is not None:
            fields["request_id"] = request_id
        try:
            return JudgeRequest(**fields, metadata=metadata)
        except ValidationError as err:
            problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            return self._invalid(str(request_id or ""), problem)

    def _invalid(self, request_id: str, problem: str) -> RewardResult:
        """The defined reward for input that cannot be judged: 0, by rule, with the reason."""
        self.metrics.record("rule", 0.0, "invalid_input")
        return RewardResult(
            reward=0.0,
            source="rule",
            request_id=request_id,
            reason="invalid_input",
            explanation=f"invalid input, reward 0: {problem}",
        )

    def _known_model(self) -> str | None:
        return self._client.known_model if self._client else self.config.model

    def _key(self, request: JudgeRequest) -> str | None:
        model = self._known_model()
        if self._cache is None or model is None:
            return None
        return cache_key(request, model, self._client_config)

    def _quick(self, request: JudgeRequest, started: float) -> RewardResult | None:
        """Pre-checks and cache lookups: cheap, so done in the caller's thread."""
        if self.config.prechecks:
            decided = precheck(request.completion, request.answer, request.answer_type)
            if decided is not None:
                return self._finish(
                    request, started, decided.reward, "rule", decided.explanation, reason=decided.reason
                )
        key = self._key(request)
        if key is not None and self._cache is not None:
            verdict = self._cache.get(key)
            if verdict is not None:
                return self._from_verdict(request, started, verdict, "cache")
        return None

    async def _score_items(self, items: list[RewardItem], started: float) -> list[RewardResult]:
        built = [self._build_request_from_item(item) for item in items]
        return list(
            await asyncio.gather(
                *(self._score(r, started) if isinstance(r, JudgeRequest) else _done(r) for r in built)
            )
        )

    def _build_request_from_item(self, item: RewardItem) -> JudgeRequest | RewardResult:
        if isinstance(item, JudgeRequest):
            return item
        if isinstance(item, Mapping):
            data = dict(item)
            fields = [data.pop(name, None) for name in _REQUEST_FIELDS]
            return self._build_request(*fields, data)
        if isinstance(item, Sequence) and not isinstance(item, str) and 3 <= len(item) <= 4:
            return self._build_request(*item, *([None] * (4 - len(item))), {})
        return self._invalid("", f"batch item of type {type(item).__name__}: expected a dict or a tuple")

    async def _score(self, request: JudgeRequest, started: float, checked: bool = False) -> RewardResult:
        """Everything that happens to one request; never raises."""
        await self._ensure_started()
        if not checked:
            quick = self._quick(request, started)
            if quick is not None:
                return quick
        outcome = await self._judge_once(request, started)
        if isinstance(outcome, Verdict):
            return self._from_verdict(request, started, outcome, "judge")
        return await self._fallback(request, started, outcome)

    async def _judge_once(self, request: JudgeRequest, started: float) -> Outcome:
        """Single-flight: identical concurrent requests share one judge call."""
        key = self._key(request)
        if key is not None and key in self._pending:
            self.metrics.record_join()
            return await asyncio.shield(self._pending[key])
        future: asyncio.Future[Outcome] | None = None
        if key is not None:
            future = asyncio.get_running_loop().create_future()
            self._pending[key] = future
        try:
            outcome = await self._judge_guarded(request, started)
        finally:
            if key is not None:
                self._pending.pop(key, None)
        if future is not None:
            future.set_result(outcome)
        if isinstance(outcome, Verdict) and self._cache is not None:
            key = key or self._key(request)
            if key is not None:
                self._cache.set(key, outcome)
        return outcome

    async def _judge_guarded(self, request: JudgeRequest, started: float) -> Outcome:
        """Breaker, overall timeout, error mapping; returns a verdict or the error."""
        if not self._breaker.allow():
            return CircuitOpenError("Circuit breaker open: the judge server is likely down")
        remaining = self.config.timeout - (time.perf_counter() - started)
        try:
            result = self._request_judge(request)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, max(remaining, 0.001))
            verdict = _as_verdict(result)
        except TimeoutError:
            outcome: Outcome = JudgeTimeoutError("Timeout waiting for results")
        except JudgeError as err:
            outcome = err
        except (ValidationError, ValueError, TypeError) as err:
            outcome = JudgeParseError(f"custom _request_judge returned an invalid verdict: {err}")
        except Exception as err:
            logger.exception("_request_judge raised unexpectedly")
            outcome = JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")
        else:
            if self._custom_judge:
                self._record_call(None)
            return verdict
        self.metrics.record_error(type(outcome).__name__)
        if isinstance(outcome, QueueFullError):
            self._breaker.record_neutral()  # never reached the server; frees a half-open probe
        elif self._custom_judge:
            self._record_call(outcome)
        elif isinstance(outcome, JudgeTimeoutError) and self._breaker.state is BreakerState.HALF_OPEN:
            self._breaker.record_failure()  # the probe timed out; its call may never have been sent
        return outcome

    async def _fallback(self, request: JudgeRequest, started: float, err: JudgeError) -> RewardResult:
        reason = _fallback_reason(err)
        self._warn_fallback(reason, err)
        if not self.config.fallback_to_rule:
            return self._finish(
                request, started, None, "error", f"judge failed: {err}", reason=reason, error=str(err)
            )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._rule_result, request, started, reason, err)

    def _rule_result(
        self, request: JudgeRequest, started: float, reason: str, err: JudgeError
    ) -> RewardResult:
        try:
            graded = self._rules.reward(
                request.prompt, request.completion, request.answer, request.answer_type
            )
        except Exception:  # the rule reward never raises by contract; a trainer must not crash if it does
            logger.exception("rule reward raised; reward 0")
            graded = {"reward": 0.0, "explanation": "rule reward failed"}
        return self._finish(
            request,
            started,
            graded["reward"],
            "rule_fallback",
            f"rule fallback ({reason}): {graded['explanation']}",
            reason=reason,
            error=str(err),
        )

    def _warn_fallback(self, reason: str, err: JudgeError) -> None:
        """Warn on the first fallback of each reason and at every power of ten after it."""
        count = self._warned.get(reason, 0) + 1
        self._warned[reason] = count
        if count in (1, 10, 100) or count % 1000 == 0:
            logger.warning("rule fallback #%d for %r: %s", count, reason, err)
        else:
            logger.debug("rule fallback for %r: %s", reason, err)

    def _from_verdict(
        self, request: JudgeRequest, started: float, verdict: Verdict, source: str
    ) -> RewardResult:
        return self._finish(
            request,
            started,
            verdict.score,
            source,
            verdict.explanation,
            detailed_scores=verdict.detailed_scores,
            confidence=verdict.confidence,
        )

    def _finish(
        self,
        request: JudgeRequest,
        started: float,
        reward: float | None,
        source: str,
        explanation: str,
        **extra: Any,
    ) -> RewardResult:
        latency_ms = (time.perf_counter() - started) * 1000
        self.metrics.record(source, latency_ms, extra.get("reason"))
        return RewardResult(
            reward=reward,
            source=source,  # type: ignore[arg-type]
            request_id=request.request_id,
            explanation=explanation,
            latency_ms=latency_ms,
            **extra,
        )


async def _done(result: RewardResult) -> RewardResult:
    return result


class JudgeRewardSystem(BaseJudgeReward):
    """Drop-in for a rule ``RewardSystem``: ``from adapter import JudgeRewardSystem as RewardSystem``."""


def create_judge_reward(config: ConfigLike = None) -> BaseJudgeReward:
    """A judge reward for a config: an ensemble (``MultiJudge``) when it lists several judge_urls."""
    from adapter.multi import MultiJudge

    resolved = RewardConfig.from_any(config)
    if resolved.judge_urls and len(resolved.judge_urls) > 1:
        return MultiJudge(resolved)
    if resolved.judge_urls:
        resolved = resolved.model_copy(update={"judge_url": resolved.judge_urls[0], "judge_urls": None})
    return JudgeRewardSystem(resolved)
