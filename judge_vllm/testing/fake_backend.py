"""An in-process ``JudgeBackend`` for tests: no server, no HTTP; scripted verdicts and faults.

Its "judgment" is the fake server's string match (the reference inside the completion scores
1.0, else 0.0); ``fail_with`` makes every call fail with that error, ``item_errors`` fails the
requests whose completion contains a key with its error. It counts calls and items.
"""

from __future__ import annotations

from judge_vllm.backend import JudgeBackend, Outcome
from judge_vllm.errors import JudgeError
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["FakeBackend"]


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
