"""``Budget``: one reward call's time, made once where the call starts and carried down.

The reward facade starts a budget per call; every judgment the reward needs carries it on its
``JudgeRequest`` (``request.budget``), so each layer reads the same two instants instead of
computing its own: the dispatcher waits until ``judge_by``, the client gives no attempt more
than what is left of it, the replica pool fails an item over only while it has time left, and
the rule fallback gets what is left until ``answer_by``. Instants are ``time.monotonic()``
seconds (the event loop's clock on every platform asyncio supports).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["Budget", "latest_judge_by"]


@dataclass(frozen=True)
class Budget:
    """When a call started, by when its judge must have answered, by when its reward is due."""

    started: float
    judge_by: float
    answer_by: float

    @classmethod
    def start(cls, judge_s: float, answer_s: float) -> Budget:
        """A budget starting now: the judge has ``judge_s`` seconds, the reward ``answer_s``."""
        now = time.monotonic()
        return cls(now, now + judge_s, now + max(answer_s, judge_s))

    def judge_left(self) -> float:
        """Seconds the judge has left (0 once past ``judge_by``)."""
        return max(self.judge_by - time.monotonic(), 0.0)

    def answer_left(self) -> float:
        """Seconds left before the reward is due (0 once past ``answer_by``)."""
        return max(self.answer_by - time.monotonic(), 0.0)

    def judged_for(self, judge_s: float, reserve_s: float) -> Budget:
        """The same call with the judge given ``judge_s`` from its start (a group's comparisons
        run until ``group.deadline``) and the reward ``reserve_s`` more for a fallback after that."""
        judge_by = self.started + judge_s
        return Budget(self.started, judge_by, judge_by + reserve_s)


def latest_judge_by(budgets: list[Budget | None]) -> float | None:
    """The latest ``judge_by`` of the budgets given (a call serving several requests may run
    until the last of them is due), or None when none has one."""
    instants = [b.judge_by for b in budgets if b is not None]
    return max(instants) if instants else None
