"""OpenRLHF's reward protocol, shared by ``judge-vllm openrlhf-rm`` and the in-process ``reward_func``.

OpenRLHF 0.11 (``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor``) scores each sample
with ``queries`` (``hf_tokenizer.decode(prompt_tokens + response_tokens,
skip_special_tokens=False)``, the prompt tokens cut from the left when too long), ``prompts``
and ``labels`` (the ``--data.label_key`` column), and reads back ``rewards``, ``scores``
(``rewards`` when absent) and ``extra_logs``. It makes each ``extra_logs`` value a per-sample
tensor and logs its mean over the step's samples, so every value here is a number:

    judge_latency_s        seconds the adapter took for this reward
    judge_source           SOURCE_CODES: 0 judge, 1 cache, 2 rule, 3 rule_fallback (read per
                           sample; its step mean is no rate, the three flags below are)
    judge_fallback         1.0 when the judge failed and the rule reward stood in
    judge_cached           1.0 when the verdict came from the cache
    judge_prechecked       1.0 when a rule decided without the judge (pre-check, cascade,
                           input that cannot be judged)
    judge_fallback_reason  FALLBACK_REASON_CODES of the judge's failure, 0 when no fallback
    judge_confidence       the judge's probability of its label (label profiles, judge and
                           cache sources), else 0.0

The mean confidence of the judge's own verdicts over a step is ``judge_confidence`` divided by
``1 - judge_fallback - judge_prechecked`` (label profiles).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from adapter.result import RewardDict
from judge_vllm.errors import (
    CircuitOpenError,
    ContextOverflowError,
    JudgeConfigError,
    JudgeError,
    JudgeInputError,
    JudgeParseError,
    JudgeReasoningCutError,
    JudgeRequestError,
    JudgeStartupError,
    JudgeTimeoutError,
    JudgeUnavailableError,
    QueueFullError,
)

__all__ = [
    "END_MARKERS",
    "FALLBACK_REASON_CODES",
    "OTHER_REASON_CODE",
    "SOURCE_CODES",
    "OpenRLHFRewards",
    "label_text",
    "reward_items",
    "split_query",
    "unavailable_message",
]

# End-of-turn tokens that ``decode(..., skip_special_tokens=False)`` leaves after a response.
END_MARKERS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<|end|>",
    "</s>",
)

SOURCE_CODES: dict[str, float] = {"judge": 0.0, "cache": 1.0, "rule": 2.0, "rule_fallback": 3.0}
"""``judge_source`` per reward source (``error`` never reaches OpenRLHF: it is a 503 or raises)."""

# Numbers are fixed once given (dashboards keep their meaning); a new reason gets a new number.
FALLBACK_REASON_CODES: dict[str, float] = {
    JudgeUnavailableError.reason: 1.0,
    JudgeTimeoutError.reason: 2.0,
    CircuitOpenError.reason: 3.0,
    QueueFullError.reason: 4.0,
    JudgeRequestError.reason: 5.0,
    ContextOverflowError.reason: 6.0,
    JudgeParseError.reason: 7.0,
    JudgeReasoningCutError.reason: 8.0,
    JudgeError.reason: 9.0,
    JudgeConfigError.reason: 10.0,
    JudgeInputError.reason: 11.0,
    JudgeStartupError.reason: 12.0,
}
"""``judge_fallback_reason`` per failure reason (the error's ``reason``); 0 = no fallback."""
OTHER_REASON_CODE = 99.0
"""``judge_fallback_reason`` of a reason missing from ``FALLBACK_REASON_CODES``."""


def _prefix_suffix_overlap(query: str, prompt: str) -> int:
    """Length of the longest prefix of ``query`` that is a suffix of ``prompt`` (KMP, linear)."""
    head = query[: len(prompt)]
    text: list[str | None] = [*head, None, *prompt]
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        border[i] = k + 1 if text[i] == text[k] else 0
    return border[-1] if text else 0


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def split_query(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (prompt + response, decoded).

    Exact prefix first; a prompt cut from the left shows as a suffix of it opening the query, a
    decode that differs near the prompt's end as a long common prefix. Trailing end-of-turn
    tokens are dropped. With no overlap at all the whole query is the response.
    """
    cut = max(_prefix_suffix_overlap(query, prompt), _common_prefix(query, prompt))
    response = query[cut:].rstrip()
    stripped = True
    while stripped:
        stripped = False
        for marker in END_MARKERS:
            if response.endswith(marker):
                response = response[: -len(marker)].rstrip()
                stripped = True
    return response.lstrip()


def label_text(value: object) -> object:
    """A label as the reference answer: numbers as text, None as no reference, the rest as is."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def reward_items(
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[object],
    answer_types: Sequence[str | None],
) -> list[dict[str, object]]:
    """The adapter's items for one OpenRLHF call: the response split from each query, the label as
    the reference answer. The sequences have one entry per query (checked)."""
    return [
        {
            "prompt": prompt,
            "completion": split_query(query, prompt),
            "answer": label_text(label),
            "answer_type": kind,
        }
        for query, prompt, label, kind in zip(queries, prompts, labels, answer_types, strict=True)
    ]


def unavailable_message(results: Sequence[RewardDict]) -> str | None:
    """Why some rewards are missing (the judge failed with ``fallback_to_rule: false``), or None."""
    failed = [r for r in results if r["reward"] is None]
    if not failed:
        return None
    reasons = ", ".join(sorted({str(r["reason"]) for r in failed}))
    return (
        f"{len(failed)} of {len(results)} rewards unavailable ({reasons}): the judge failed and "
        "fallback_to_rule is off"
    )


def _fallback_reason(result: RewardDict) -> float:
    if result["source"] != "rule_fallback":
        return 0.0
    return FALLBACK_REASON_CODES.get(str(result["reason"]), OTHER_REASON_CODE)


class OpenRLHFRewards(BaseModel):
    """What OpenRLHF reads back: ``rewards`` for advantages, ``scores`` in [0, 1] for dynamic
    filtering, ``extra_logs`` (the module docs) as per-sample numbers."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]

    @classmethod
    def from_results(cls, results: Sequence[RewardDict]) -> OpenRLHFRewards:
        """Build from adapter reward dicts that all carry a reward (see ``unavailable_message``)."""
        rewards = [float(reward) for r in results if (reward := r["reward"]) is not None]
        if len(rewards) != len(results):
            raise ValueError(
                f"{len(results) - len(rewards)} results without a reward: see unavailable_message"
            )
        return cls(
            rewards=rewards,
            scores=rewards,
            extra_logs={
                "judge_latency_s": [r["latency_ms"] / 1000 for r in results],
                "judge_source": [SOURCE_CODES[r["source"]] for r in results],
                "judge_fallback": [float(r["source"] == "rule_fallback") for r in results],
                "judge_cached": [float(r["source"] == "cache") for r in results],
                "judge_prechecked": [float(r["source"] == "rule") for r in results],
                "judge_fallback_reason": [_fallback_reason(r) for r in results],
                "judge_confidence": [float(r.get("confidence") or 0.0) for r in results],
            },
        )
