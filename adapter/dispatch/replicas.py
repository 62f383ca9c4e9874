"""One logical judge served by several identical servers (``judge_replicas``).

Routing: requests that share a question and reference (a GRPO group) go to the same replica,
so its prefix cache keeps the group's shared prompt prefix: rendezvous hashing of (prompt,
answer) over the replicas gives each group a preferred replica and a fixed order of the others.
Consistent hashing with bounded loads, a group at a time: when the preferred replica would
carry more than ``LOAD_SLACK`` times its fair share of the items in flight, the least-loaded
healthy replica takes the group. Batches are formed per replica (one ``judge_many`` call each).

Health: each replica has its own circuit breaker. Items of a call that failed for a server
fault (unreachable, 5xx, timeout) go to the next replica in their order while their reward's
budget has time left (``request.budget``), so while any replica is healthy the reward still comes from the judge. A
replica whose breaker opened gets one probe after ``circuit_breaker_cooldown`` and is used
again once that succeeds. When every replica fails, the items get the last error (a server fault): the
reward system's own breaker (pool-wide) counts that, so it opens only when every replica is
down.

Each replica's client retries nothing itself (``max_retries: 0``): another replica is a
better retry than the same one.

Outliers are taken out like dead replicas (``eject``), for ``circuit_breaker_cooldown``: a replica
that answers garbage (its replies fail to parse: the items move on to the next replica and the
failures count against its breaker), one that is slow but alive (its median call latency over
its last ``OUTLIER_MIN_CALLS`` calls is more than ``OUTLIER_LATENCY_FACTOR`` times its peers'
median), and one that answers 429/503 with ``Retry-After`` (out until that time has passed).
The last usable replica is never ejected: when every replica is ejected, they are all used.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import statistics
import time
from collections import deque
from collections.abc import Sequence

from typing_extensions import TypedDict

from adapter.dispatch.breaker import BreakerSnapshot, BreakerState, CircuitBreaker
from adapter.observability.metrics import percentile
from judge_vllm.client import JudgeClient
from judge_vllm.errors import JudgeError, JudgeParseError, JudgeUnavailableError
from judge_vllm.redaction import redact_url
from judge_vllm.schemas import JudgeRequest, Verdict
from judge_vllm.settings import JudgeClientConfig

__all__ = ["LOAD_SLACK", "Replica", "ReplicaPool", "ReplicaPoolSnapshot", "ReplicaSnapshot", "affinity_order"]

LOAD_SLACK = 1.25
LATENCY_WINDOW = 2_000
# Latency outliers: at least this many recent calls, this much slower than the peers' median,
# and slower than this in absolute terms (a 3 ms replica next to 1 ms ones is not an outlier).
OUTLIER_MIN_CALLS = 5
OUTLIER_LATENCY_FACTOR = 3.0
OUTLIER_MIN_MS = 100.0
MAX_RETRY_AFTER_S = 60.0
Outcome = Verdict | JudgeError


class ReplicaLatency(TypedDict):
    """A replica's call latency over the recent window, in ms."""

    p50: float
    p95: float


class ReplicaSnapshot(TypedDict):
    """One replica's items, calls, errors, load, ejections (``ejected_for``: why, while ejected),
    latency and breaker."""

    items: int
    calls: int
    errors: int
    inflight: int
    ejections: int
    ejected_for: str | None
    latency_ms: ReplicaLatency
    circuit_breaker: BreakerSnapshot


class ReplicaPoolSnapshot(TypedDict):
    """Items moved to another replica, and each replica's snapshot by its (redacted) URL."""

    failovers: int
    replicas: dict[str, ReplicaSnapshot]


def affinity_order(key: str, urls: Sequence[str]) -> list[int]:
    """Replica indexes for ``key``, most preferred first (rendezvous hashing: adding or removing a
    replica moves only the groups that preferred it)."""

    def weight(index: int) -> bytes:
        return hashlib.blake2b(
            f"{urls[index]}\x00{key}".encode("utf-8", "surrogatepass"), digest_size=8
        ).digest()

    return sorted(range(len(urls)), key=weight, reverse=True)


def _group_key(request: JudgeRequest) -> str:
    """What a GRPO group shares: the question and the reference answer."""
    return f"{request.prompt}\x00{request.answer}"


def replica_fault(outcome: Outcome) -> bool:
    """An outcome that another replica might not have: a server fault, or a reply that does not
    parse (a replica answering garbage)."""
    return isinstance(outcome, JudgeError) and (outcome.server_fault or isinstance(outcome, JudgeParseError))


class Replica:
    """One judge server of the pool: its client, breaker, load and counters."""

    def __init__(self, url: str, client: JudgeClient, breaker: CircuitBreaker) -> None:
        self.url = url
        self.client = client
        self.breaker = breaker
        self.inflight = 0
        self.items = 0
        self.calls = 0
        self.errors = 0
        self.ejections = 0
        self.ejected_until = 0.0
        self.ejected_for = ""
        self._latency_ms: deque[float] = deque(maxlen=LATENCY_WINDOW)

    @property
    def usable(self) -> bool:
        """Closed, or due for its half-open probe (does not take the probe), and not ejected."""
        return self.breaker.state is not BreakerState.OPEN and time.monotonic() >= self.ejected_until

    def eject(self, seconds: float, why: str) -> None:
        """Out of the rotation for ``seconds``; its latency history starts afresh when it is back."""
        self.ejections += 1
        self.ejected_until = time.monotonic() + seconds
        self.ejected_for = why
        self._latency_ms.clear()

    def recent_median_ms(self) -> float | None:
        """The median latency of its last ``OUTLIER_MIN_CALLS`` calls (None before that many)."""
        if len(self._latency_ms) < OUTLIER_MIN_CALLS:
            return None
        return statistics.median(list(self._latency_ms)[-OUTLIER_MIN_CALLS:])

    async def judge(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """One call to this replica; a failure of the whole call fills every slot. Its items count
        as in flight from when they were assigned (``ReplicaPool``) until this returns."""
        self.items += len(requests)
        self.calls += 1
        started = time.perf_counter()
        try:
            outcomes: list[Outcome] = await self.client.judge_many(requests)
        except JudgeError as err:
            outcomes = [err] * len(requests)
        finally:
            self._latency_ms.append((time.perf_counter() - started) * 1000)
        faults = [o for o in outcomes if replica_fault(o)]
        self.errors += len(faults)
        if faults and len(faults) == len(outcomes):
            self.breaker.record_failure()
        else:
            self.breaker.record_success()
        return outcomes

    def snapshot(self) -> ReplicaSnapshot:
        """Requests, calls, errors, load, latency and breaker state of this replica."""
        latencies = sorted(self._latency_ms)
        return {
            "items": self.items,
            "calls": self.calls,
            "errors": self.errors,
            "inflight": self.inflight,
            "ejections": self.ejections,
            "ejected_for": self.ejected_for if time.monotonic() < self.ejected_until else None,
            "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
            "circuit_breaker": self.breaker.snapshot(),
        }


class ReplicaPool:
    """Several judge servers behind the ``JudgeClient`` interface the reward system uses."""

    def __init__(
        self, config: JudgeClientConfig, urls: Sequence[str], breaker_threshold: int, breaker_timeout_s: float
    ) -> None:
        self.urls = list(urls)
        replica_config = config.model_copy(update={"max_retries": 0})
        self.replicas = [
            Replica(
                url,
                JudgeClient(replica_config.model_copy(update={"judge_url": url})),
                CircuitBreaker(breaker_threshold, breaker_timeout_s),
            )
            for url in self.urls
        ]
        self.failovers = 0
        self.eject_s = breaker_timeout_s

    # -- the JudgeClient interface -----------------------------------------------------

    @property
    def known_model(self) -> str | None:
        """The served model, once any replica has named it."""
        return next((r.client.known_model for r in self.replicas if r.client.known_model), None)

    async def model_name(self) -> str:
        """The model the first replica that answers lists."""
        error: JudgeError | None = None
        for replica in self._healthy_first():
            try:
                return await replica.client.model_name()
            except JudgeError as err:
                error = err
        raise error or JudgeUnavailableError("no judge replica answered")

    @property
    def context_cuts(self) -> int:
        return sum(r.client.context_cuts for r in self.replicas)

    @property
    def coarse_fast_verdicts(self) -> int:
        return sum(r.client.coarse_fast_verdicts for r in self.replicas)

    def endpoint(self, items: int) -> str:
        """The path a call carrying ``items`` requests goes to, on each replica (for logs)."""
        return f"{self.replicas[0].client.endpoint(items)} on {len(self.replicas)} replicas"

    async def aclose(self) -> None:
        """Close every replica's connections."""
        await asyncio.gather(*(r.client.aclose() for r in self.replicas))

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """Judge ``requests`` on their replicas; failed items move on to their next replica."""
        results: list[Outcome | None] = [None] * len(requests)
        orders = {i: affinity_order(_group_key(r), self.urls) for i, r in enumerate(requests)}
        tried: dict[int, set[int]] = {i: set() for i in range(len(requests))}
        pending = list(range(len(requests)))
        last_error: dict[int, JudgeError] = {}
        while pending:
            plan = self._assign(pending, orders, tried)
            for i in pending:
                if i not in plan:
                    results[i] = last_error.get(i) or JudgeUnavailableError(
                        "every judge replica is down (each one's circuit breaker is open)"
                    )
            by_replica = self._by_replica(plan)
            for index, items in by_replica.items():  # reserved now: the next batch's routing sees it
                self.replicas[index].inflight += len(items)
            calls = [self._call(index, items, requests) for index, items in by_replica.items()]
            retry: list[int] = []
            for items, outcomes in await asyncio.gather(*calls):
                for i, outcome in zip(items, outcomes, strict=True):
                    tried[i].add(plan[i])
                    if replica_fault(outcome) and _has_time_left(requests[i]):
                        last_error[i] = outcome  # type: ignore[assignment]
                        retry.append(i)
                    else:  # an answer, an item's own error, or out of its call's budget
                        results[i] = outcome
                self._eject_overloaded(plan[items[0]], outcomes)
            self._eject_slow()
            self.failovers += len(retry)
            pending = retry
        return results  # type: ignore[return-value]

    # -- outliers --------------------------------------------------------------------------

    def _others_usable(self, replica: Replica) -> bool:
        return any(r.usable for r in self.replicas if r is not replica)

    def _eject_overloaded(self, index: int, outcomes: list[Outcome]) -> None:
        """A replica that asked for time (429/503 ``Retry-After``) is out until then."""
        replica = self.replicas[index]
        waits = [
            o.retry_after_s for o in outcomes if isinstance(o, JudgeUnavailableError) and o.retry_after_s
        ]
        if waits and self._others_usable(replica):
            replica.eject(min(max(waits), MAX_RETRY_AFTER_S), f"asked to retry after {max(waits):g} s")

    def _eject_slow(self) -> None:
        """A replica much slower than its peers' median is out for ``circuit_breaker_cooldown``."""
        medians = {r: m for r in self.replicas if r.usable and (m := r.recent_median_ms()) is not None}
        for replica, median in medians.items():
            peers = [m for r, m in medians.items() if r is not replica]
            if not peers:
                continue
            typical = statistics.median(peers)
            if median > max(OUTLIER_LATENCY_FACTOR * typical, OUTLIER_MIN_MS) and self._others_usable(
                replica
            ):
                replica.eject(self.eject_s, f"slow: median {median:.0f} ms vs {typical:.0f} ms for its peers")

    # -- routing ---------------------------------------------------------------------------

    def _healthy_first(self) -> list[Replica]:
        return sorted(self.replicas, key=lambda r: not r.usable)

    def _assign(
        self, pending: list[int], orders: dict[int, list[int]], tried: dict[int, set[int]]
    ) -> dict[int, int]:
        """Item -> replica, a group at a time: the group's first untried usable replica, unless that
        would take it past the load bound; then the least-loaded untried usable one. An item
        that no usable replica is left to try goes to an ejected one: an outlier judges better
        than the rule fallback."""
        live = {i for i, r in enumerate(self.replicas) if r.breaker.state is not BreakerState.OPEN}
        usable = {i for i in live if self.replicas[i].usable} or live  # all ejected: use them all
        load = {i: self.replicas[i].inflight for i in live}
        bound = math.ceil(LOAD_SLACK * (sum(load.values()) + len(pending)) / max(len(usable), 1))
        groups: dict[tuple[tuple[int, ...], frozenset[int]], list[int]] = {}
        for item in pending:  # items with the same order and the same tried replicas move together
            groups.setdefault((tuple(orders[item]), frozenset(tried[item])), []).append(item)
        plan: dict[int, int] = {}
        for (order, done), items in groups.items():
            candidates = [r for r in order if r in usable and r not in done] or [
                r for r in order if r in live and r not in done
            ]
            if not candidates:
                continue
            choice = candidates[0]
            if load[choice] + len(items) > bound:
                choice = min(candidates, key=lambda r: load[r])
            load[choice] += len(items)
            plan.update(dict.fromkeys(items, choice))
        return plan

    @staticmethod
    def _by_replica(plan: dict[int, int]) -> dict[int, list[int]]:
        grouped: dict[int, list[int]] = {}
        for item, replica in plan.items():
            grouped.setdefault(replica, []).append(item)
        return grouped

    async def _call(
        self, index: int, items: list[int], requests: list[JudgeRequest]
    ) -> tuple[list[int], list[Outcome]]:
        replica = self.replicas[index]
        try:
            if replica.breaker.state is BreakerState.HALF_OPEN and not replica.breaker.allow():
                busy = JudgeUnavailableError(f"judge replica {replica.url} is being probed")
                return items, [busy] * len(items)
            return items, await replica.judge([requests[i] for i in items])
        finally:
            replica.inflight -= len(items)

    def snapshot(self) -> ReplicaPoolSnapshot:
        """Per-replica metrics, and how many items failed over to another replica."""
        return {
            "failovers": self.failovers,
            "replicas": {redact_url(r.url): r.snapshot() for r in self.replicas},
        }


def _has_time_left(request: JudgeRequest) -> bool:
    """Whether another replica may still answer ``request`` before its budget's ``judge_by``."""
    return request.budget is None or request.budget.judge_left() > 0
