"""Reasoning in a reply: ``<think>...</think>`` before the final answer.

Used on both sides: a reasoning judge's reply is read after its reasoning, and a policy's
completion is graded on its final answer only (TRL's ``reasoning_accuracy_reward`` does the
same). A reply that opens its reasoning and never closes it has no final answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_DELIMITERS", "ReasoningDelimiters", "UnclosedReasoning", "final_part"]


class ReasoningDelimiters(BaseModel):
    """The markers around reasoning (defaults: the ``<think>`` tags of Qwen3, DeepSeek-R1 and others)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: str = Field(default="<think>", min_length=1, description="the tag that opens the reasoning")
    end: str = Field(
        default="</think>", min_length=1, description="the tag that closes it; the answer follows"
    )


class UnclosedReasoning(ValueError):
    """The text opens its reasoning and never closes it: it has no final answer."""


DEFAULT_DELIMITERS = ReasoningDelimiters()


def final_part(text: str, delimiters: ReasoningDelimiters = DEFAULT_DELIMITERS) -> str:
    """What follows the last closing marker; ``text`` itself when it holds no reasoning.

    A text whose reasoning never closes (it starts with the opening marker, or holds one
    with no closing marker after it) raises ``UnclosedReasoning``. A closing marker alone
    counts as the end of reasoning: chat templates that open ``<think>`` in the prompt
    leave only the closing one in the reply.
    """
    end = text.rfind(delimiters.end)
    if end >= 0:
        rest = text[end + len(delimiters.end) :]
        if delimiters.start in rest:
            raise UnclosedReasoning(f"reasoning opened after the last {delimiters.end} never closes")
        return rest.lstrip()
    if delimiters.start in text:
        raise UnclosedReasoning(f"reasoning opened with {delimiters.start} never closes")
    return text
