"""An in-process ``JudgeBackend`` for tests: no server, no HTTP; scripted verdicts and faults.

Its "judgment" is the fake server's string match (the reference inside the completion scores
1.0, else 0.0); ``fail_with`` makes every call fail with that error, ``item_errors`` fails the
requests whose completion contains a key with its error. It counts calls and items.
``ComparingBackend`` also answers comparisons (group rewards): it prefers the response that
scores higher by its ``preference`` (ties: the first shown), so with a constant preference it
is a judge that always prefers whatever it is shown first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.contract import RANKING_LETTERS
from judge_vllm.errors import JudgeError
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["ComparingBackend", "FakeBackend"]


class FakeBackend(JudgeBackend):
    """A judge in the test's own process."""

    def __init__(
        self,
        fail_with: JudgeError | None = None,
        item_errors: dict[str, JudgeError] | None = None,
        model: str = "fake-backend",
    ) -> None:
        self.fail_with = fail_with
        self.item_errors = item_errors or {}
        self.model = model
        self.calls: list[int] = []  # the size of each judge_many call
        self.closed = False

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        self.calls.append(len(requests))
        if self.fail_with is not None:
            raise self.fail_with
        return [self._judge(r) for r in requests]

    def _judge(self, request: JudgeRequest) -> Outcome:
        for key, error in self.item_errors.items():
            if key in request.completion:
                return error
        matched = bool(request.answer.strip()) and request.answer.strip() in request.completion
        return Verdict(score=1.0 if matched else 0.0, label="match" if matched else "no match")

    @property
    def known_model(self) -> str | None:
        return self.model

    async def aclose(self) -> None:
        self.closed = True


class ComparingBackend(FakeBackend):
    """A judge of comparisons: pairwise "A" or "B", listwise a ranking, by ``preference``; a
    request showing a response that contains ``hang_on`` is never answered. ``ranks``: answer
    every comparison with a ranking (listwise), or (None) only those of more than two responses."""

    def __init__(
        self,
        preference: Callable[[str], float] = lambda text: 0.0,
        hang_on: str | None = None,
        ranks: bool | None = None,
    ) -> None:
        super().__init__()
        self.preference = preference
        self.hang_on = hang_on
        self.ranks = ranks
        self.requests: list[JudgeRequest] = []

    async def judge_many(self, requests: list[JudgeRequest]) -> list[Outcome]:
        if self.hang_on and any(self.hang_on in r for request in requests for r in request.responses):
            await asyncio.sleep(3600)
        self.requests.extend(requests)
        return await super().judge_many(requests)

    @property
    def comparisons(self) -> list[JudgeRequest]:
        """The comparisons asked so far (requests showing responses)."""
        return [r for r in self.requests if r.responses]

    def _judge(self, request: JudgeRequest) -> Outcome:
        if not request.responses:
            return super()._judge(request)
        scores = [self.preference(r) for r in request.responses]
        if len(scores) == 2 and not self.ranks:
            first = scores[0] >= scores[1]
            return Verdict(score=1.0 if first else 0.0, label="A" if first else "B")
        order = sorted(range(len(scores)), key=lambda k: -scores[k])  # stable: ties keep the order shown
        ranking = ">".join(RANKING_LETTERS[k] for k in order)
        return Verdict(score=1.0 - order.index(0) / max(len(order) - 1, 1), label=ranking, ranking=order)
