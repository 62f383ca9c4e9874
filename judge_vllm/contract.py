"""What the judge must emit, and how its reply becomes a ``Verdict``.

Two output contracts (a profile picks one, see ``judge_vllm.profiles``):

- ``label``: the reply is a label (or holds one where the profile's ``verdict_pattern``
  finds it, e.g. ``Final Judgment: \\boxed{A}``); each label maps to a reward, or to
  ``invalid`` (reward 0). When the server sent logprobs at the label's position, the
  reward is the expected reward under the judge's renormalised label probabilities and
  ``confidence`` the peak probability; otherwise the sampled label's reward. Our rubric's
  ``fast`` mode is this contract with labels 1-5 and one generated token per judgment
  (``max_tokens=1`` ends the reply at the label, ``finish_reason="length"``).
- ``json``: our rubric's ``verdict`` mode, ``{"score": 1-5, "explanation": "...",
  [aspects]}``, constrained by a JSON schema (score first, explanation bounded).
- ``ranking``: a listwise judge's ranking of the responses it was shown, as their letters best
  first (``B>A>C``); every letter shown exactly once, or it is no ranking.

A reasoning judge's reply is read after its reasoning (``judge_vllm.reasoning``); a reply
cut inside its reasoning is a ``JudgeReasoningCutError``. Parsing is pure: it raises
``JudgeParseError`` for a truncated reply, a missing or unknown label, invalid JSON or an
out-of-range score; it never returns a default score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge_vllm.errors import JudgeParseError, JudgeReasoningCutError
from judge_vllm.patterns import PatternTimeout, UserPattern, compile_user_pattern
from judge_vllm.reasoning import DEFAULT_DELIMITERS, UnclosedReasoning, final_part
from judge_vllm.schemas import JudgeReply, LogprobPosition, Verdict

__all__ = [
    "ASPECTS",
    "INVALID",
    "RANKING_LETTERS",
    "SCALE",
    "SCALE_LABELS",
    "json_verdict",
    "label_verdict",
    "ranking_regex",
    "ranking_verdict",
    "scale_to_unit",
    "verdict_schema",
]

INVALID = "invalid"
MAX_EXPLANATION_CHARS = 400

RANKING_LETTERS = "ABCDEFGHIJKLMNOP"

SCALE = (1, 2, 3, 4, 5)
SCALE_LABELS = tuple(str(s) for s in SCALE)
ASPECTS = ("correctness", "clarity", "relevance")


def scale_to_unit(score: float) -> float:
    """Map a score on the 1-5 scale to [0, 1]."""
    return (score - SCALE[0]) / (SCALE[-1] - SCALE[0])


def verdict_schema(aspects: bool = False, max_explanation_chars: int = 160) -> dict[str, object]:
    """The JSON schema for constrained decoding in verdict mode (score first)."""
    level = {"type": "integer", "enum": list(SCALE)}
    properties: dict[str, object] = {"score": level}
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


def _final_text(content: str | None, finish_reason: str | None) -> str:
    """The reply after any reasoning; a reply cut inside its reasoning is a typed error."""
    if not content:
        raise JudgeParseError("judge reply is empty", raw=content, finish_reason=finish_reason)
    try:
        return final_part(content)
    except UnclosedReasoning as err:
        raise JudgeReasoningCutError(
            f"judge reply ended inside its reasoning (finish_reason={finish_reason!r}, {err}): raise "
            "max_tokens, or turn reasoning off (chat_template_kwargs: {enable_thinking: false})",
            raw=content,
            finish_reason=finish_reason,
        ) from None


def _reasoned(content: str | None) -> bool:
    """The reply holds a reasoning marker (an opening or closing one)."""
    text = content or ""
    return any(mark in text for mark in (DEFAULT_DELIMITERS.start, DEFAULT_DELIMITERS.end))


def _cut_short(content: str | None, finish_reason: str | None) -> JudgeParseError:
    return JudgeParseError(
        f"judge reply cut short (finish_reason={finish_reason!r}): raise max_tokens or shorten "
        "the explanation",
        raw=content,
        finish_reason=finish_reason,
    )


def json_verdict(content: str | None, finish_reason: str | None) -> Verdict:
    """Parse a JSON (``verdict`` mode) reply."""
    text = _final_text(content, finish_reason)
    if finish_reason not in (None, "stop"):
        raise _cut_short(content, finish_reason)
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
        label=str(reply.score),
    )


def _find_label(text: str, pattern: UserPattern | None) -> tuple[str, int, int] | None:
    """The label in ``text`` and its span: the last match of ``pattern``'s group 1, else the whole text."""
    if pattern is None:
        stripped = text.strip()
        start = text.find(stripped) if stripped else 0
        return stripped, start, start + len(stripped)
    last = None
    for last in pattern.finditer(text):  # noqa: B007 (the last match is the verdict)
        pass
    if last is None:
        return None
    return last.group(1).strip(), last.start(1), last.end(1)


def _label_position(
    positions: list[LogprobPosition], label: str, pattern: UserPattern | None
) -> LogprobPosition | None:
    """The generated position where the label was sampled, found by reading the tokens' text the
    same way as the reply (reasoning first, then the label); None when the label is not one token."""
    joined = "".join(p.token for p in positions)
    try:
        final = final_part(joined)
    except UnclosedReasoning:
        return None
    if pattern is None:  # the label opens the reply (an end-of-text token may follow it)
        start = len(final) - len(final.lstrip())
        if not final.startswith(label, start):
            return None
    else:
        found = _find_label(final, pattern)
        if found is None or found[0] != label:
            return None
        start = found[1]
    offset = len(joined) - len(final) + start
    end = 0
    for position in positions:
        end += len(position.token)
        if end > offset:
            return position if position.token.strip() == label else None
    return None


def _label_probabilities(position: LogprobPosition, labels: Mapping[str, object]) -> dict[str, float] | None:
    """Renormalised probabilities of the labels at one position (tokens " A" and "A" both count as A)."""
    finite: dict[str, list[float]] = {}
    for token, logprob in position.logprobs.items():
        name = token.strip()
        if name in labels and math.isfinite(logprob):
            finite.setdefault(name, []).append(logprob)
    if not finite:
        return None
    peak = max(max(v) for v in finite.values())
    weights = {k: sum(math.exp(lp - peak) for lp in v) for k, v in finite.items()}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def _begun_label(text: str, labels: Mapping[str, object]) -> str | None:
    """The one label a reply cut short is the start of: under the choice constraint a label of
    several tokens (``No`` as ``N`` + ``o`` in some vocabularies) can only go on to that label."""
    begun = text.strip()
    if not begun or begun in labels:
        return None
    matches = [label for label in labels if label.startswith(begun)]
    return matches[0] if len(matches) == 1 else None


def _reward(label: str, labels: Mapping[str, float | str]) -> float:
    value = labels[label]
    return 0.0 if value == INVALID else float(value)


def label_verdict(
    reply: JudgeReply, labels: Mapping[str, float | str], verdict_pattern: str | None = None
) -> Verdict:
    """Parse a label reply (see the module docs).

    A whole label is the whole reply when the label is generated under a one-token cap, so
    ``"length"`` is as final as ``"stop"`` once the label is read; a reply in which no label
    can be read is cut short if it ended on ``"length"``, else an unknown label.
    """
    pattern = compile_user_pattern(verdict_pattern, "verdict_pattern") if verdict_pattern else None
    text = _final_text(reply.text, reply.finish_reason)
    try:
        found = _find_label(text, pattern)
    except PatternTimeout as err:
        raise JudgeParseError(f"judge reply: {err}", raw=reply.text) from None
    begun = _begun_label(text, labels) if pattern is None and reply.finish_reason == "length" else None
    if begun is not None:  # the label's first token under the one-token cap: its position is the label's
        label, rest = begun, ""
        position = reply.positions[0] if reply.positions else None
    else:
        if found is None or found[0] not in labels:
            if reply.finish_reason == "length":
                raise _cut_short(reply.text, reply.finish_reason)
            shown = "no verdict found" if found is None else f"{found[0]!r} is not a label"
            raise JudgeParseError(f"judge reply: {shown} (labels: {', '.join(labels)})", raw=reply.text)
        if reply.finish_reason not in (None, "stop", "length"):
            raise _cut_short(reply.text, reply.finish_reason)
        if reply.finish_reason == "length" and _reasoned(reply.text) and text[found[2] :].strip():
            # Cut mid-text after reasoning: the "verdict" is a quote (of a "</think> Final Decision:
            # Yes" in the graded response, say), not the judge's conclusion.
            raise _cut_short(reply.text, reply.finish_reason)
        label = found[0]
        rest = (text[: found[1]] + text[found[2] :]).strip() if pattern else ""
        position = _label_position(reply.positions, label, pattern) if reply.positions else None
    probabilities = _label_probabilities(position, labels) if position else None
    invalid = labels[label] == INVALID
    if probabilities is None:
        summary = f"label {label}" + (" (the judge marks the response invalid)" if invalid else "")
        return Verdict(
            score=_reward(label, labels),
            explanation=_explain(summary, rest),
            raw=reply.text,
            label=label,
        )
    expected = sum(p * _reward(k, labels) for k, p in probabilities.items())
    summary = _summarise(expected, probabilities, label, labels)
    return Verdict(
        score=min(1.0, max(0.0, expected)),
        explanation=_explain(summary, rest),
        confidence=max(probabilities.values()),
        raw=reply.text,
        label=label,
    )


def _summarise(
    expected: float, probabilities: Mapping[str, float], label: str, labels: Mapping[str, object]
) -> str:
    if tuple(labels) == SCALE_LABELS:  # our rubric: the expected score on its own scale
        score = sum(int(k) * p for k, p in probabilities.items())
        return f"expected score {score:.2f}/5 (sampled {label})"
    shown = ", ".join(f"P({k})={probabilities.get(k, 0.0):.2f}" for k in labels)
    return f"expected reward {expected:.2f}: {shown} (sampled {label})"


def _explain(summary: str, rest: str) -> str:
    if not rest:
        return summary
    if len(rest) > MAX_EXPLANATION_CHARS:
        rest = "..." + rest[-MAX_EXPLANATION_CHARS:]
    return f"{summary}. {rest}"


def ranking_regex(shown: int) -> str:
    """The constraint of a ranking of ``shown`` responses: exactly ``shown`` of their letters, joined
    by ">" (that each comes once is checked when the reply is read)."""
    letters = f"[A-{RANKING_LETTERS[max(min(shown, len(RANKING_LETTERS)), 1) - 1]}]"
    return letters if shown <= 1 else f"{letters}(>{letters}){{{shown - 1}}}"


def ranking_verdict(content: str | None, finish_reason: str | None, shown: int) -> Verdict:
    """Parse a listwise ranking of ``shown`` responses lettered A, B, C...: ``ranking`` holds their
    positions as shown, best first, and ``score`` the first-shown response's place (1.0 first,
    0.0 last)."""
    text = _final_text(content, finish_reason)
    if not 1 <= shown <= len(RANKING_LETTERS):
        raise JudgeParseError(
            f"a ranking covers 1 to {len(RANKING_LETTERS)} responses, not {shown}", raw=text
        )
    letters = [part.strip() for part in text.strip().split(">")]
    expected = RANKING_LETTERS[:shown]
    if sorted(letters) != list(expected):
        if finish_reason == "length":
            raise _cut_short(content, finish_reason)
        raise JudgeParseError(
            f"judge reply {text.strip()[:80]!r} is not a ranking of {', '.join(expected)} (each once)",
            raw=text,
        )
    ranking = [RANKING_LETTERS.index(letter) for letter in letters]
    first_place = ranking.index(0)
    score = 1.0 if shown == 1 else 1.0 - first_place / (shown - 1)
    return Verdict(
        score=score,
        explanation=f"ranking {'>'.join(letters)}",
        raw=text,
        label=">".join(letters),
        ranking=ranking,
    )
