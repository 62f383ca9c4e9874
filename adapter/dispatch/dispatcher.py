"""The async dispatch of one request to the judge: single-flight, circuit breaker, deadline,
micro-batcher. Runs on the reward system's loop thread; never raises.

    outcome(request, key)   by the request's budget (``request.budget.judge_by``)
      single-flight: identical in-flight requests share one task (a cancelled caller does
        not cancel it, so the others still get its result)
      circuit breaker: fail fast while the judge server is down
      judge(request) under that deadline: the facade's ``_request_judge`` (default: ``batched``)
      batched(request): the micro-batcher; one ``JudgeClient.judge_many`` call per batch

The breaker learns from judge calls, not items: a batch reports its own fate once (a failure
when it failed for every item, else a success), and an item that times out while its batch
is still running adds nothing. A custom ``_request_judge`` is one call per item. What counts
comes from typed results: the batcher's ``BatchResult`` says whether an outcome is its batch
call's own (already reported), and the error's class whether it is the server's fault
(``server_fault``): a bad input or a full local queue never is.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Mapping

from pydantic import ValidationError

from adapter.config import RewardConfig
from adapter.dispatch.batching import BatchResult, MicroBatcher, Outcome
from adapter.dispatch.breaker import BreakerState, CircuitBreaker, call_failed
from adapter.observability.metrics import RewardMetrics
from adapter.observability.tracing import JudgeCallTracer
from judge_vllm.backend import JudgeBackend
from judge_vllm.errors import (
    CircuitOpenError,
    JudgeError,
    JudgeParseError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["JudgeDispatcher", "JudgeFn", "as_verdict"]

logger = logging.getLogger("JudgeReward")

JudgeFn = Callable[[JudgeRequest], object]
StoreFn = Callable[[str, Verdict], None]
MIN_WAIT_S = 0.001


def as_verdict(value: object) -> Verdict:
    """Accept what a custom ``_request_judge`` may return: a Verdict, a dict or a number."""
    if isinstance(value, Verdict):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Verdict(score=float(value))
    if isinstance(value, Mapping):
        return Verdict.model_validate(value)
    raise JudgeParseError(f"_request_judge returned {type(value).__name__}, not a Verdict")


class JudgeDispatcher:
    """Turns one request into one judge outcome (a ``Verdict`` or the ``JudgeError``)."""

    def __init__(
        self,
        config: RewardConfig,
        client: JudgeBackend,
        breaker: CircuitBreaker,
        metrics: RewardMetrics,
        judge: JudgeFn,
        store: StoreFn | None,
    ) -> None:
        self.client = client
        self._breaker = breaker
        self._metrics = metrics
        self._judge = judge
        self._store = store
        self._judge_timeout_s = config.judge_timeout
        self._inflight: dict[str, asyncio.Task[Outcome]] = {}
        # Requests handed to the batcher, by id: None while their batch runs, then its result.
        self._batched: dict[int, BatchResult | None] = {}
        self._tracer = JudgeCallTracer(config.tracing, config.profile, client)
        self.batcher = MicroBatcher(
            self._send_batch,
            config.max_batch_size,
            config.batch_wait,
            config.max_concurrent_requests,
            config.max_queue_size,
        )

    async def outcome(self, request: JudgeRequest, key: str | None) -> Outcome:
        """The judge's verdict for ``request`` by its budget's ``judge_by`` (``judge_timeout``
        from now for a request without a budget), or why there is none.

        ``key`` (the cache key) names identical requests: they share one judge call, and its
        verdict is stored under it.
        """
        budget = request.budget
        deadline = budget.judge_by if budget is not None else time.monotonic() + self._judge_timeout_s
        task = self._inflight.get(key) if key is not None else None
        if task is None:
            task = asyncio.ensure_future(self._judge_and_store(request, key, deadline))
            if key is not None:
                self._inflight[key] = task
                task.add_done_callback(lambda done: self._forget(key, done))
        else:
            self._metrics.record_join()
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(deadline - time.monotonic(), MIN_WAIT_S))
        except (TimeoutError, asyncio.TimeoutError):  # the same class only from Python 3.11
            self._metrics.record_error(JudgeTimeoutError.__name__)
            return JudgeTimeoutError("Timeout waiting for results")

    async def batched(self, request: JudgeRequest) -> Verdict:
        """The default judge: the request joins the next batch (raises its ``JudgeError``)."""
        self._batched[id(request)] = None
        result = await self.batcher.submit(request)
        self._batched[id(request)] = result
        if isinstance(result.outcome, JudgeError):
            raise result.outcome
        return result.outcome

    async def aclose(self) -> None:
        """Fail what is queued or in flight (callers fall back), then close the connections."""
        await self.batcher.aclose()
        await self.client.aclose()

    def _forget(self, key: str, done: asyncio.Task[Outcome]) -> None:
        if self._inflight.get(key) is done:
            del self._inflight[key]

    async def _judge_and_store(self, request: JudgeRequest, key: str | None, deadline: float) -> Outcome:
        outcome = await self._guarded(request, deadline)
        if isinstance(outcome, Verdict) and key is not None and self._store is not None:
            self._store(key, outcome)
        return outcome

    async def _guarded(self, request: JudgeRequest, deadline: float) -> Outcome:
        """Breaker, deadline, error mapping around one judge call; returns a verdict or the error."""
        if not self._breaker.allow():
            return CircuitOpenError("Circuit breaker open: the judge server is likely down")
        outcome: Outcome
        try:
            result = self._judge(request)
            if inspect.isawaitable(result):
                result = await asyncio.wait_for(result, max(deadline - time.monotonic(), MIN_WAIT_S))
            outcome = as_verdict(result)
        except (TimeoutError, asyncio.TimeoutError):  # the same class only from Python 3.11
            outcome = JudgeTimeoutError("Timeout waiting for results")
        except JudgeError as err:
            outcome = err
        except (ValidationError, ValueError, TypeError) as err:
            outcome = JudgeParseError(f"custom _request_judge returned an invalid verdict: {err}")
        except Exception as err:
            logger.exception("_request_judge raised unexpectedly")
            outcome = JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")
        finally:
            submitted = id(request) in self._batched
            batch = self._batched.pop(id(request), None)
        if isinstance(outcome, JudgeError):
            self._metrics.record_error(type(outcome).__name__)
            if batch is not None and batch.sent and batch.outcome is outcome:
                return outcome  # its batch call told the breaker already
            batch_pending = submitted and batch is None
            self._learn(outcome, batch_pending=batch_pending)
        else:
            self._breaker.record_success()
        return outcome

    def _learn(self, err: JudgeError, *, batch_pending: bool) -> None:
        """Tell the breaker what one failed ``_request_judge`` call says about the server."""
        if isinstance(err, JudgeParseError | JudgeRequestError):
            self._breaker.record_success()  # the server answered
        elif not err.server_fault:
            self._breaker.record_neutral()  # never sent
        elif batch_pending and self._breaker.state is not BreakerState.HALF_OPEN:
            self._breaker.record_neutral()  # its batch is still running and will report
        else:
            self._breaker.record_failure()

    async def _send_batch(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """One judge call for a batch, logged at debug and traced (``tracing``). The breaker learns
        from the call: a failure when it failed for every item (all items then share one error),
        else a success."""
        self._metrics.record_batch(len(requests))
        started = time.perf_counter()
        with self._tracer.call() as span:
            try:
                outcomes: list[Outcome] = await self.client.judge_many(requests)
            except JudgeError as err:
                outcomes = [err] * len(requests)
            if len(outcomes) != len(requests):  # a backend that broke its contract
                broken = JudgeParseError(f"the judge backend gave {len(outcomes)} outcomes for {len(requests)} requests")
                outcomes = [broken] * len(requests)
            errors = [o for o in outcomes if isinstance(o, JudgeError)]
            self._tracer.finish(span, len(requests), errors, (time.perf_counter() - started) * 1000)
        if call_failed(outcomes):
            outcomes = [errors[0]] * len(outcomes)
            self._breaker.record_failure()
            result = f"failed ({type(errors[0]).__name__}: {errors[0]})"
        else:
            self._breaker.record_success()
            result = f"{len(outcomes) - len(errors)} ok, {len(errors)} failed"
        self._log_call(requests, started, result)
        return outcomes

    def _log_call(self, requests: list[JudgeRequest], started: float, outcome: str) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "judge call: %d item(s) -> %s in %.1f ms: %s",
                len(requests),
                self.client.endpoint(len(requests)),
                (time.perf_counter() - started) * 1000,
                outcome,
            )
