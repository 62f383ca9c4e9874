"""Reasoning in a reply: ``<think>...</think>`` before the final answer.

Used on both sides: a reasoning judge's reply is read after its reasoning, and a policy's
completion is graded on its final answer only (TRL's ``reasoning_accuracy_reward`` does the
same). A reply that opens its reasoning and never closes it has no final answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_DELIMITERS",
    "ReasoningDelimiters",
    "UnclosedReasoning",
    "answer_part",
    "final_part",
    "reasoning_end",
]


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


def _fenced(text: str) -> list[tuple[int, int]]:
    """Where the fenced code blocks (```) of ``text`` are, as (start, end)."""
    spans, at, opened = [], 0, -1
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            if opened < 0:
                opened = at
            else:
                spans.append((opened, at + len(line)))
                opened = -1
        at += len(line) + 1
    return spans


def reasoning_end(text: str, delimiters: ReasoningDelimiters = DEFAULT_DELIMITERS) -> int:
    """Where a policy's answer starts: after its one reasoning block, else 0.

    The block is the one the completion opens at its start, or the one the chat template opened
    in the prompt (the completion holds a closing marker and no opening one before it). It ends at
    the first closing marker outside a fenced code block; any other marker is text, so an answer
    written before a stray ``</think>`` is still read. A block opened at the start that never
    closes raises ``UnclosedReasoning``."""
    opened_here = text.lstrip().startswith(delimiters.start)
    fenced = _fenced(text)
    close = text.find(delimiters.end)
    while close >= 0 and any(start <= close < end for start, end in fenced):
        close = text.find(delimiters.end, close + 1)
    if close < 0:
        if opened_here:
            raise UnclosedReasoning(f"reasoning opened with {delimiters.start} never closes")
        return 0
    if not opened_here and delimiters.start in text[:close]:
        return 0  # a block opened mid-text: text, not reasoning
    return close + len(delimiters.end)


def answer_part(text: str, delimiters: ReasoningDelimiters = DEFAULT_DELIMITERS) -> str:
    """A policy's completion after its reasoning block (``reasoning_end``)."""
    return text[reasoning_end(text, delimiters) :].lstrip()
