"""The turns of one agent trajectory judged in one batch, by profile ``step``, through the one seam.

Each turn is a ``JudgeRequest`` carrying the trajectory up to the end of that turn's results and,
in its completion slot, which steps to judge (``steps 3-4``): the judge's own wording, never the
policy's. Only the last ``max_steps`` turns are judged (one judgment each); the earlier ones are
unknown, and counted as bad (``combine_steps``).
"""

from __future__ import annotations

import itertools
import logging
import math

from adapter.dispatch.judgments import Judged, PartJudge
from adapter.process.steps import AgentTurn, StepScores, agent_turns, combine_steps
from adapter.settings import ProcessSettings
from judge_vllm.budget import Budget
from judge_vllm.errors import JudgeError
from judge_vllm.schemas import JudgeRequest

__all__ = ["STEP_PROFILE", "ProcessJudge"]

STEP_PROFILE = "step"

logger = logging.getLogger(__name__)
_invalid_scores = itertools.count(1)


class ProcessJudge:
    """Scores the turns of a trajectory and combines them (``combine_steps``)."""

    def __init__(self, judge: PartJudge, settings: ProcessSettings) -> None:
        self.judge = judge
        self.settings = settings

    def asks(self, request: JudgeRequest) -> bool:
        """Whether ``request`` has turns to judge: a trajectory shown to the judge, with a turn."""
        return request.trajectory is not None and bool(agent_turns(request.trajectory))

    async def score(self, request: JudgeRequest, budget: Budget) -> StepScores:
        """Each of the last ``max_steps`` turns judged within ``budget`` (the earlier ones left
        unjudged: None), combined."""
        assert request.trajectory is not None  # callers ask ``asks`` first
        every = agent_turns(request.trajectory)
        turns = every[-self.settings.max_steps :]
        unjudged = len(every) - len(turns)
        judged = await self.judge([_asked(request, turn, budget) for turn in turns])
        scores: list[float | None] = [None] * unjudged
        scores += [_score(j) for j in judged]
        return combine_steps(every, scores, self.settings, unjudged)

    async def score_last(self, request: JudgeRequest, budget: Budget) -> float | None:
        """The last turn alone judged within ``budget``, as ``score`` judges it (the same request,
        so the same cache entry): its score, or None when its judgment failed."""
        assert request.trajectory is not None  # callers ask ``asks`` first
        [judged] = await self.judge([_asked(request, agent_turns(request.trajectory)[-1], budget)])
        return _score(judged)


def _asked(request: JudgeRequest, turn: AgentTurn, budget: Budget) -> JudgeRequest:
    """The judgment of ``turn``: the trajectory up to the end of its results, the turn named in
    the completion slot."""
    assert request.trajectory is not None
    trajectory = request.trajectory
    return JudgeRequest(
        prompt=request.prompt,
        answer=request.answer,
        answer_type=request.answer_type,
        completion=turn.name,
        trajectory=trajectory.model_copy(update={"steps": trajectory.steps[: turn.end]}),
        profile=STEP_PROFILE,
        budget=budget,
    )


def _score(judged: Judged) -> float | None:
    """A turn's P(Yes), or None when its judgment failed or its score is not a finite number in
    [0, 1] (a backend's bug: said, never passed on as a score)."""
    if isinstance(judged.outcome, JudgeError):
        return None
    score = judged.outcome.score
    if isinstance(score, float | int) and math.isfinite(score) and 0.0 <= score <= 1.0:
        return float(score)
    count = next(_invalid_scores)
    if count == 1 or count % 1000 == 0:  # a bug upstream: said, but never once per turn
        logger.warning("invalid step score #%d left out: %r is not a finite number in [0, 1]", count, score)
    return None
