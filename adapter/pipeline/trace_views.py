"""``trajectory_view: both``: an agent's run judged with its steps and by its final reply alone.

The reward is the geometric mean of the two verdicts' scores: a run is right only if both views
say so, and a view that scores 0 (a failed tool call behind a right-looking reply) vetoes it.
Each view fails a small judge in its own way (docs/trajectories.md, "Two views of one run"):
shown every step, the 1.5B judge pays nearly every run, wrong final answers included; shown the
final reply alone, it cannot see a guess after a failed tool call, and refuses half the right
runs. Combined, their 0.5 cut sits nearer the labels (agreement rose on each of four fresh sets),
though they rank runs no better on average than the trace alone. Each view is one judgment
through the reward system's one seam (cache, dispatcher, breaker), cached on its own; one that
fails leaves the other's verdict, saying so.
"""

from __future__ import annotations

import math

from adapter.config import RewardConfig
from judge_vllm.backend import Outcome
from judge_vllm.schemas import JudgeRequest, Verdict

__all__ = ["VIEWS", "both_views", "final_view", "judged_in_both_views"]

# judge_scores' keys: each view's score beside their geometric mean.
VIEWS = ("trace", "final_reply")


def judged_in_both_views(request: JudgeRequest, config: RewardConfig) -> bool:
    """Whether ``request`` (as the judge is shown it) is an agent's run judged in both views: one
    with steps (a trainer that gave no structure gives the decoded text as the reply alone)."""
    return config.trajectory_view == "both" and request.trajectory is not None and bool(request.trajectory.steps)


def final_view(request: JudgeRequest) -> JudgeRequest:
    """``request`` by its final reply alone: the same question, without the steps."""
    return request.model_copy(update={"trajectory": None})


def both_views(trace: Outcome, final: Outcome) -> Outcome:
    """The two views' verdicts as one: the geometric mean score, each view's in ``judge_scores``.
    One that failed leaves the other's verdict, which says so; when both failed, the trace view's
    error."""
    if not isinstance(trace, Verdict) or not isinstance(final, Verdict):
        return _one_view(trace, final)
    score = math.sqrt(trace.score * final.score)
    agrees = (trace.score >= 0.5) == (score >= 0.5)
    confidences = [v.confidence for v in (trace, final) if v.confidence is not None]
    return Verdict(
        score=score,
        explanation=(
            f"geometric mean of two views: with the agent's steps {trace.score:.2f} ({trace.explanation}); "
            f"the final reply alone {final.score:.2f} ({final.explanation})"
        ),
        confidence=sum(confidences) / len(confidences) if confidences else None,
        judge_scores={VIEWS[0]: trace.score, VIEWS[1]: final.score},
        label=trace.label if agrees else final.label,
    )


def _one_view(trace: Outcome, final: Outcome) -> Outcome:
    """The view that was judged, saying which was not (the trace view's error when neither was)."""
    for kept, lost, name in ((trace, final, VIEWS[1]), (final, trace, VIEWS[0])):
        if isinstance(kept, Verdict):
            return kept.model_copy(update={"explanation": f"{name} view not judged ({lost}); {kept.explanation}"})
    return trace
