"""What the judge must emit, and how its output becomes a ``Verdict``.

Two output contracts share the same prompts and rubric:

- ``verdict``: a JSON object ``{"score": 1-5, "explanation": "...", [aspects]}``,
  constrained by a JSON schema (score first, explanation bounded by ``maxLength``).
- ``fast``: a single digit 1-5, constrained by a ``choice``; the reward is the expected
  score under the judge's probabilities for the five labels, and ``confidence`` is the
  peak probability. One generated token per judgment: ``max_tokens=1`` ends the reply
  at the label (``finish_reason="length"``), one engine step before the end-of-text
  token would.

Parsing is pure: it raises ``JudgeParseError`` for a truncated reply
(``finish_reason != "stop"``, except a whole fast-mode label), invalid JSON or an
out-of-range score; it never returns a default score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge_vllm.errors import JudgeParseError
from judge_vllm.schemas import Verdict

__all__ = [
    "ASPECTS",
    "SCALE",
    "SCALE_LABELS",
    "fast_verdict",
    "json_verdict",
    "scale_to_unit",
    "verdict_schema",
]

SCALE = (1, 2, 3, 4, 5)
SCALE_LABELS = tuple(str(s) for s in SCALE)
ASPECTS = ("correctness", "clarity", "relevance")


def scale_to_unit(score: float) -> float:
    """Map a score on the 1-5 scale to [0, 1]."""
    return (score - SCALE[0]) / (SCALE[-1] - SCALE[0])


def verdict_schema(aspects: bool = False, max_explanation_chars: int = 160) -> dict[str, Any]:
    """The JSON schema for constrained decoding in verdict mode (score first)."""
    level = {"type": "integer", "enum": list(SCALE)}
    properties: dict[str, Any] = {"score": level}
    if aspects:
        properties.update({name: level for name in ASPECTS})
    properties["explanation"] = {"type": "string", "maxLength": max_explanation_chars}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


class _JudgeJSON(BaseModel):
    """The judge's JSON reply; tolerant of unknown fields, strict on the scale."""

    model_config = ConfigDict(extra="ignore")

    score: int = Field(ge=SCALE[0], le=SCALE[-1])
    explanation: str = ""
    correctness: int | None = Field(default=None, ge=SCALE[0], le=SCALE[-1])
    clarity: int | None = Field(default=None, ge=SCALE[0], le=SCALE[-1])
    relevance: int | None = Field(default=None, ge=SCALE[0], le=SCALE[-1])


def _require_stop(content: str | None, finish_reason: str | None) -> str:
    if finish_reason not in (None, "stop"):
        raise JudgeParseError(
            f"judge reply cut short (finish_reason={finish_reason!r}): raise max_tokens or shorten "
            "the explanation",
            raw=content,
            finish_reason=finish_reason,
        )
    if not content:
        raise JudgeParseError("judge reply is empty", raw=content, finish_reason=finish_reason)
    return content


def json_verdict(content: str | None, finish_reason: str | None) -> Verdict:
    """Parse a verdict-mode reply."""
    text = _require_stop(content, finish_reason)
    try:
        reply = _JudgeJSON.model_validate_json(text)
    except ValidationError as err:
        raise JudgeParseError(f"judge reply is not a valid verdict: {err}", raw=text) from err
    aspects = {name: getattr(reply, name) for name in ASPECTS}
    detailed = {k: scale_to_unit(v) for k, v in aspects.items() if v is not None} or None
    return Verdict(
        score=scale_to_unit(reply.score),
        explanation=reply.explanation,
        detailed_scores=detailed,
        raw=text,
    )


def fast_verdict(
    content: str | None, finish_reason: str | None, label_logprobs: Mapping[str, float] | None
) -> Verdict:
    """Parse a fast-mode reply: expected score over the labels' renormalised probabilities.

    A whole label is the whole reply, so ``"length"`` (the one-token cap) is as final as
    ``"stop"``. Without logprobs (a server that does not return them) the sampled label is
    the score and confidence is unknown.
    """
    text = _require_stop(content, "stop" if finish_reason == "length" else finish_reason).strip()
    if text not in SCALE_LABELS:
        raise JudgeParseError(f"judge reply {text!r} is not one of {', '.join(SCALE_LABELS)}", raw=text)
    if not label_logprobs:
        return Verdict(score=scale_to_unit(int(text)), explanation=f"score {text}/5", raw=text)
    finite = {k: v for k, v in label_logprobs.items() if k in SCALE_LABELS and math.isfinite(v)}
    if not finite:
        raise JudgeParseError("judge returned no finite logprob for any score label", raw=text)
    peak = max(finite.values())
    weights = {k: math.exp(v - peak) for k, v in finite.items()}
    total = sum(weights.values())
    probs = {k: w / total for k, w in weights.items()}
    expected = sum(int(k) * p for k, p in probs.items())
    return Verdict(
        score=min(1.0, max(0.0, scale_to_unit(expected))),
        explanation=f"expected score {expected:.2f}/5 (sampled {text})",
        confidence=max(probs.values()),
        raw=text,
    )
