"""``JudgeBackend``: what judges. Requests in, one outcome per request out.

Every judge the reward system can ask implements it: ``JudgeClient`` (one vLLM
OpenAI-compatible server), ``ReplicaPool`` (several identical servers as one judge), the
in-process fake in ``judge_vllm.testing`` and any backend of yours, passed as
``JudgeRewardSystem(config, backend=...)``. An outcome is a ``Verdict`` or the ``JudgeError``
that says why there is none; its class tells the circuit breaker and the retry policy what it
means (``server_fault``, ``retryable``), so a backend never raises for one bad item.

Subclass the protocol to inherit the defaults below and write only ``judge_many``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from judge_vllm.errors import JudgeError
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["JudgeBackend", "Outcome"]

Outcome = Verdict | JudgeError
"""One request's result: the verdict, or the error that says why there is none."""


@runtime_checkable
class JudgeBackend(Protocol):
    """A judge: ``judge_many`` is the one method to write; the rest have defaults."""

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        """One outcome per request, in order. Raise a ``JudgeError`` only when the whole call
        failed (every request then gets it); one request's failure is its slot's error."""
        ...

    @property
    def known_model(self) -> str | None:
        """The judge model's name when known without I/O (part of the cache key)."""
        return None

    async def model_name(self) -> str:
        """The judge model's name, asked of the server if need be."""
        return self.known_model or type(self).__name__

    def endpoint(self, items: int) -> str:
        """Where a call carrying ``items`` requests goes, for logs and traces."""
        return type(self).__name__

    @property
    def context_cuts(self) -> int:
        """Completions cut to fit the judge's context window so far."""
        return 0

    @property
    def coarse_fast_verdicts(self) -> int:
        """Fast-mode verdicts read without label probabilities so far."""
        return 0

    async def aclose(self) -> None:
        """Release connections; the reward system calls it once when it closes."""
        return None
