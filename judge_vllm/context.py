"""Fit a judge prompt into the judge model's context window, counting tokens on the server.

Characters are only a proxy for tokens: digits and non-Latin text run close to one token
per character, so a prompt within its character budget can still overflow the context,
and vLLM then rejects the request. When a prompt's UTF-8 size could overflow, the client
asks the server's ``/tokenize`` for its true length and, when it is too long, cuts the
graded completion by tokens: a quarter of what is kept from its start and the rest from
its end (where the final answer is), joined by a marker saying how much was left out.

An agent's trajectory is never cut that way: the prompt is rendered again with a smaller
character budget for its steps (``fit_trace``), so that fewer steps are shown, each still whole
or clipped in its middle, and the final response and the last tool result stay. A comparison of
agents' responses shares that budget between their trajectories (``fit_shared``).

The arithmetic lives here; the client does the HTTP (``/tokenize``, ``/detokenize``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

from judge_prompts import JudgePrompt
from judge_vllm.errors import ContextOverflowError
from judge_vllm.trajectory import Trajectory, fit_shared

__all__ = ["cut_tokens", "fit_trace", "join_cut", "marker_tokens", "might_overflow"]

# Tokens a chat template adds around the messages (role headers, turn separators).
CHAT_TEMPLATE_TOKENS = 64
# Room for token boundaries that shift when the cut text is re-tokenised: at most a few tokens at
# each of the four joins (the completion's start and end in the prompt, the marker's two sides;
# a cut inside a multi-byte character comes back as one U+FFFD), so the cut prompt is not measured
# again. The marker is counted apart, at its UTF-8 size: at one token per character (digits under
# many tokenizers) it alone outgrew this slack, and every long prompt was cut twice.
CUT_SLACK_TOKENS = 32
# Below this many kept tokens the completion is no longer worth judging: the rest of the
# prompt (question, reference) is what does not fit.
MIN_KEPT_TOKENS = 64
# A trajectory's steps get at most this many smaller budgets, each measured; below the smallest
# budget the steps are no longer worth showing.
TRACE_FIT_ROUNDS = 3
MIN_TRACE_CHARS = 400


def might_overflow(text: str, max_tokens: int, max_model_len: int | None) -> bool:
    """False only when the prompt's ``text`` provably fits: no token is shorter than one UTF-8 byte."""
    if max_model_len is None:
        return True
    size = len(text.encode())
    return size + CHAT_TEMPLATE_TOKENS + max_tokens > max_model_len


def cut_tokens(ids: list[int], excess: int) -> tuple[list[int], list[int], int]:
    """Drop ``excess`` tokens, plus room for the marker and slack, from the middle: ``(head, tail, omitted)``."""
    keep = len(ids) - excess - CUT_SLACK_TOKENS - marker_tokens(len(ids))
    if keep < MIN_KEPT_TOKENS:
        raise ContextOverflowError(
            f"the judge prompt is {excess} tokens over the model's context and cutting the "
            f"completion ({len(ids)} tokens) cannot make it fit: shorten the prompt or the "
            "reference answer, or serve the judge with a longer --max-model-len"
        )
    head = keep // 4
    tail = keep - head
    return ids[:head], ids[len(ids) - tail :], len(ids) - keep


def marker_tokens(omitted: int) -> int:
    """At most the tokens the cut's marker adds: its UTF-8 bytes (no token is shorter than a byte)."""
    return len(join_cut("", "", omitted).encode())


def join_cut(head: str, tail: str, omitted: int) -> str:
    """The completion's kept start and end around a marker."""
    return f"{head}\n[... {omitted} tokens omitted ...]\n{tail}"


async def fit_trace(
    trajectories: Sequence[Trajectory],
    budget_chars: int,
    prompt: JudgePrompt,
    prompt_tokens: int,
    limit_tokens: int,
    render: Callable[[int], JudgePrompt],
    count: Callable[[JudgePrompt], Awaitable[int | None]],
) -> JudgePrompt:
    """``prompt`` (``prompt_tokens`` long, its ``trajectories``' steps fitted to their shares of
    ``budget_chars``) within ``limit_tokens``: rendered again (``render(budget)``) with the steps'
    budget cut by the excess at the prompt's own characters per token, and measured (``count``:
    None when the server cannot say), at most ``TRACE_FIT_ROUNDS`` times. ``ContextOverflowError``
    when even ``MIN_TRACE_CHARS`` of steps would not fit."""
    tokens = prompt_tokens
    for _ in range(TRACE_FIT_ROUNDS):
        excess = tokens - limit_tokens
        if excess <= 0:
            return prompt
        fitted = fit_shared(trajectories, budget_chars)
        shown = min(budget_chars, sum(f.cost_chars for f in fitted if f is not None))
        budget_chars = shown - math.ceil((excess + CUT_SLACK_TOKENS) * len(prompt.text) / max(tokens, 1))
        if budget_chars < MIN_TRACE_CHARS:
            break
        prompt = render(budget_chars)
        measured = await count(prompt)
        if measured is None:
            return prompt
        tokens = measured
    if tokens <= limit_tokens:
        return prompt
    raise ContextOverflowError(
        f"the judge prompt is {tokens - limit_tokens} tokens over the model's context and showing "
        f"fewer of the agent's steps cannot make it fit: shorten the prompt or the reference "
        "answer, use trajectory_view: final, or serve the judge with a longer --max-model-len"
    )
