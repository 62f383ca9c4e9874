"""One judge of several: an ensemble's member (``judge_urls``), an escalation's first or second
judge. The ensemble and the escalation are ``JudgeBackend``s over their members, behind one reward
system (one loop, cache, dispatcher and breaker); each member keeps what is its own:

- its backend: one judge server's ``JudgeClient``, or a ``ReplicaPool`` over its ``judge_replicas``,
  made on first use (on the reward system's loop) and made again in a forked child;
- its circuit breaker: one judge down fails fast without stopping the others. It learns from the
  member's calls as the reward system's breaker learns from batches (``call_failed``);
- its counters, for ``get_metrics()["judges"]`` (``MemberSnapshot``).
"""

# No ``from __future__ import annotations``: NotRequired must be seen at run time (``__required_keys__``).
import functools
from collections import Counter
from collections.abc import Callable

from typing_extensions import NotRequired, TypedDict

from adapter.config import RewardConfig
from adapter.dispatch.breaker import BreakerSnapshot, BreakerState, CircuitBreaker, call_failed
from adapter.dispatch.replicas import ReplicaPool, ReplicaSnapshot
from adapter.fork_safety import reset_after_fork
from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.client import JudgeClient
from judge_vllm.errors import CircuitOpenError, JudgeError
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import JudgeClientConfig

__all__ = ["JudgeMember", "MemberSnapshot", "server_backend"]


class MemberSnapshot(TypedDict):
    """One member judge in ``get_metrics()["judges"]``: its model, calls and the items they
    carried, its errors by kind, prompts cut to fit its context, fast-mode verdicts read without
    label probabilities, and its own breaker; ``failovers`` and ``replicas`` with ``judge_replicas``."""

    model: str | None
    judge_calls: int
    judged_items: int
    errors: dict[str, int]
    context_cuts: int
    coarse_fast_verdicts: int
    circuit_breaker: BreakerSnapshot
    failovers: NotRequired[int]
    replicas: NotRequired[dict[str, ReplicaSnapshot]]


def server_backend(config: RewardConfig, client_config: JudgeClientConfig) -> JudgeBackend:
    """The judge a reward config names: one server's client, or the pool over its ``judge_replicas``
    (each replica with its own breaker, by the config's threshold and cooldown)."""
    if not config.judge_replicas:
        return JudgeClient(client_config)
    threshold, pause = config.circuit_breaker_threshold, config.circuit_breaker_cooldown
    return ReplicaPool(client_config, config.judge_replicas, threshold, pause)


class JudgeMember:
    """One judge of an ensemble or an escalation: its backend, breaker and counters."""

    def __init__(
        self, name: str, connect: Callable[[], JudgeBackend], breaker: CircuitBreaker, model: str | None
    ) -> None:
        self.name = name
        self.breaker = breaker
        self._connect = connect
        self._model = model
        self._backend: JudgeBackend | None = None
        self.judge_calls = 0
        self.judged_items = 0
        self.errors: Counter[str] = Counter()
        reset_after_fork(self)

    @classmethod
    def of(cls, name: str, config: RewardConfig, client_config: JudgeClientConfig) -> "JudgeMember":
        """The judge a reward config names (``server_backend``), its client set by ``client_config``,
        its breaker by the config's threshold and cooldown."""
        return cls(
            name,
            functools.partial(server_backend, config, client_config),
            CircuitBreaker(config.circuit_breaker_threshold, config.circuit_breaker_cooldown),
            client_config.model,
        )

    def _after_fork_in_child(self) -> None:
        self._backend = None  # the parent's connections are not this process's: connect afresh

    @property
    def backend(self) -> JudgeBackend:
        """The member's backend, made on first use."""
        if self._backend is None:
            self._backend = self._connect()
        return self._backend

    @property
    def known_model(self) -> str | None:
        """The member's model when known without I/O (the configured one before first use)."""
        return self._backend.known_model if self._backend is not None else self._model

    @property
    def context_cuts(self) -> int:
        """Completions cut to fit this judge's context so far."""
        return self._backend.context_cuts if self._backend is not None else 0

    @property
    def coarse_fast_verdicts(self) -> int:
        """Fast-mode verdicts this judge gave without label probabilities so far."""
        return self._backend.coarse_fast_verdicts if self._backend is not None else 0

    async def model_name(self) -> str:
        """The member's model, asked of its server if need be; ``CircuitOpenError`` at once while
        its breaker is open (a dead judge holds no reward up)."""
        if self.known_model is None and self.breaker.state is BreakerState.OPEN:
            raise CircuitOpenError(f"judge {self.name}: circuit breaker open, its model is not known")
        return await self.backend.model_name()

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """One call to this member (one outcome per request), or ``CircuitOpenError`` for each
        request, without a call, while its breaker is open."""
        if not self.breaker.allow():
            skipped = CircuitOpenError(f"judge {self.name}: circuit breaker open, the server is likely down")
            return [skipped] * len(requests)
        self.judge_calls += 1
        self.judged_items += len(requests)
        outcomes: list[Outcome] | None = None
        try:
            outcomes = await self.backend.judge_many(requests)
        except JudgeError as err:
            outcomes = [err] * len(requests)
        finally:
            if outcomes is None:  # cancelled: the call's fate is unknown, its probe slot is freed
                self.breaker.record_neutral()
        self.errors.update(type(o).__name__ for o in outcomes if isinstance(o, JudgeError))
        if call_failed(outcomes):
            self.breaker.record_failure()
        else:
            self.breaker.record_success()
        return outcomes

    def snapshot(self) -> MemberSnapshot:
        """Model, calls, items, errors, context cuts, coarse verdicts and breaker of this member."""
        snapshot: MemberSnapshot = {
            "model": self.known_model,
            "judge_calls": self.judge_calls,
            "judged_items": self.judged_items,
            "errors": dict(self.errors),
            "context_cuts": self.context_cuts,
            "coarse_fast_verdicts": self.coarse_fast_verdicts,
            "circuit_breaker": self.breaker.snapshot(),
        }
        if isinstance(self._backend, ReplicaPool):
            pool = self._backend.snapshot()
            snapshot["failovers"] = pool["failovers"]
            snapshot["replicas"] = pool["replicas"]
        return snapshot

    async def aclose(self) -> None:
        """Close the member's connections (nothing to close before first use)."""
        if self._backend is not None:
            await self._backend.aclose()
