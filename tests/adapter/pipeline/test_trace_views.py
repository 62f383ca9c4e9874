"""``trajectory_view: both``: the trace view and the final-reply view of one run, combined."""

import math

import pytest

from adapter.pipeline.trace_views import both_views
from judge_vllm.errors import JudgeTimeoutError
from judge_vllm.schemas import Verdict


def _judged(score, label="Yes"):
    return Verdict(score=score, explanation=f"P(Yes)={score}", label=label)


@pytest.mark.parametrize(
    ("trace", "final", "score"),
    [(0.0, 1.0, 0.0), (1.0, 1.0, 1.0), (0.64, 0.36, 0.48), (0.81, 0.49, math.sqrt(0.81 * 0.49))],
)
def test_the_reward_is_the_geometric_mean_and_a_zero_vetoes(trace, final, score):
    combined = both_views(_judged(trace), _judged(final))
    assert isinstance(combined, Verdict)
    assert combined.score == pytest.approx(score)
    assert combined.judge_scores == {"trace": trace, "final_reply": final}
    assert "with the agent's steps" in combined.explanation


def test_the_label_is_the_view_that_agrees_with_the_combined_score():
    assert both_views(_judged(0.7, "Yes"), _judged(0.2, "No")).label == "No"  # sqrt(0.14) < 0.5
    assert both_views(_judged(0.7, "Yes"), _judged(0.9, "Yes")).label == "Yes"


def test_a_view_that_failed_leaves_the_other_saying_so():
    failed = JudgeTimeoutError("judge slow")
    kept = both_views(failed, _judged(0.9))
    assert isinstance(kept, Verdict) and kept.score == 0.9
    assert kept.explanation.startswith("trace view not judged (")
    kept = both_views(_judged(0.3), failed)
    assert isinstance(kept, Verdict) and kept.score == 0.3
    assert kept.explanation.startswith("final_reply view not judged (")
    assert both_views(failed, JudgeTimeoutError("also")) is failed
