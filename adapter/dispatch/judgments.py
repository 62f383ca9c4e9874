"""The one seam for judgments a reward is made of: a rubric's criteria, a group's comparisons.

Each is a ``JudgeRequest`` naming the profile it is asked by (``criterion``, ``pairwise``,
``listwise``, ``step``) and carrying its call's ``Budget`` (``judge_vllm/budget.py``), sent
through the reward system's own cache and dispatcher: the same loop thread, single-flight, breaker, batches and metrics as a single reward. What comes
back stays typed: a ``Judged`` per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from judge_vllm.backend import Outcome
from judge_vllm.schemas import JudgeRequest

__all__ = ["Judged", "PartJudge"]


@dataclass(frozen=True)
class Judged:
    """One judgment's outcome (a ``Verdict``, or the ``JudgeError`` that says why there is none)
    and where it came from."""

    outcome: Outcome
    source: Literal["judge", "cache"]


class PartJudge(Protocol):
    """Judges requests, each by its budget's ``judge_by``: one ``Judged`` per request, in order."""

    async def __call__(self, requests: Sequence[JudgeRequest]) -> list[Judged]: ...
