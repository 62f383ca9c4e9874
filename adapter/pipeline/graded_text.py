"""What the judge grades: the completion after the policy's reasoning, and its final answer.

A policy that reasons (``<think>...</think>``, configurable) is graded on what follows its
reasoning, by the pre-checks, the rules and the judge alike (TRL's
``reasoning_accuracy_reward`` does the same). A completion whose reasoning never closes has no
final answer: a defined reward 0 with reason ``unclosed_reasoning``. Profiles that show the
judge the final answer (``judge_input: final_answer``) get the one our rules extract, or
"None" when there is none, as general-verifier's own pipeline writes it. A request without a
reference, for a profile that needs one (``needs_answer``), is a defined reward 0 with reason
``no_reference``: an empty reference is never sent to the judge.

An agent's trajectory (``JudgeRequest.trajectory``) stays on the request only where the judge
is shown it: ``trajectory_view: full`` (the default) and a profile that shows one. There, with
the pre-checks on, the steps the judge will be shown are pre-checked too (``trace_precheck``):
text aimed at the judge in a tool call or a tool result earns what it earns in a final answer.
"""

from __future__ import annotations

from adapter.config import RewardConfig
from adapter.pipeline.prechecks import PrecheckVerdict, trace_precheck
from adapter.rules import extract_final_answer
from judge_vllm.profiles import JudgeProfile
from judge_vllm.reasoning import UnclosedReasoning, answer_part
from judge_vllm.schemas import JudgeRequest
from judge_vllm.trajectory import fit_trajectory

__all__ = ["NO_FINAL_ANSWER", "graded_request"]

NO_FINAL_ANSWER = "None"


def graded_request(
    request: JudgeRequest, config: RewardConfig, profile: JudgeProfile, extracted: str | None = None
) -> JudgeRequest | PrecheckVerdict:
    """``request`` as the judge should see it, or the defined reward for a completion without a
    final answer. ``extracted`` is the rules' extraction when the caller already has it."""
    if profile.needs_answer and not request.answer.strip():
        return PrecheckVerdict(
            0.0, "no_reference", f"no reference answer: profile {profile.name!r} needs one to judge against"
        )
    completion = request.completion
    if config.strip_reasoning:
        try:
            completion = answer_part(completion, config.reasoning_delimiters)
        except UnclosedReasoning as err:
            return PrecheckVerdict(0.0, "unclosed_reasoning", f"no final answer: {err}")
    final_answer = None
    if profile.judge_input == "final_answer":
        final_answer = extracted or extract_final_answer(completion, request.answer_type) or NO_FINAL_ANSWER
    trajectory = request.trajectory
    if trajectory is not None:
        if config.trajectory_view == "final" or not profile.shows_trajectory or final_answer is not None:
            trajectory = None
        elif config.prechecks:
            decided = trace_precheck(fit_trajectory(trajectory, config.max_completion_chars))
            if decided is not None:
                return decided
    if completion is request.completion and final_answer is None and trajectory is request.trajectory:
        return request
    update = {"completion": completion, "final_answer": final_answer, "trajectory": trajectory}
    return request.model_copy(update=update)
