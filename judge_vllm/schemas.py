"""Pydantic models at the judge's boundaries: what is asked and what comes back."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import NotRequired, TypedDict

from judge_vllm.budget import Budget
from judge_vllm.errors import did_you_mean
from judge_vllm.trajectory import Trajectory

__all__ = [
    "AnswerType",
    "ChatChoice",
    "JudgeReply",
    "JudgeRequest",
    "LogprobPosition",
    "ServerHealth",
    "Verdict",
    "coerce_text",
    "known_answer_type",
    "normalise_answer_type",
    "parse_chat_reply",
    "parse_completion_reply",
    "valid_unicode",
]


class ServerHealth(TypedDict):
    """``JudgeClient.health()``: whether the judge server answered ``/health`` (with its status
    and model), or the error that kept it from answering; ``url`` without credentials."""

    reachable: bool
    status_code: NotRequired[int]
    error: NotRequired[str]
    model: str | None
    url: str


class AnswerType(str, Enum):
    """The built-in answer types: their rubrics ship with the judge (``judge_prompts``). The
    adapter's registry (``adapter.rules.answer_types``) may add others, each with its own rubric
    (``judge_prompts.register_rubric``). A ``JudgeRequest`` built by hand with a name that has no
    rubric uses the default rubric; the reward facade, the HTTP API and judge-eval refuse a name
    the registry does not know (``known_answer_type``)."""

    NUMBER = "NUMBER"
    MATH_EXPRESSIONS = "MATH_EXPRESSIONS"
    MULTIPLE_CHOICE = "MULTIPLE_CHOICE"
    TEXT = "TEXT"


def valid_unicode(text: str) -> str:
    """``text`` as valid Unicode: lone surrogates (which no UTF-8 encoder, JSON body or cache
    key accepts) become U+FFFD; a surrogate pair written as two code points is joined."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def coerce_text(value: object, field: str) -> str:
    """Turn a request field into text: None -> "", numbers -> str, anything else is an error."""
    if value is None:
        return ""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    raise ValueError(f"{field} must be a string (or a number), got {type(value).__name__}")


def normalise_answer_type(value: object) -> str | None:
    """Upper-case answer_type name, or None when absent or blank."""
    if value is None or value == "":
        return None
    if isinstance(value, AnswerType):
        return value.value
    return coerce_text(value, "answer_type").strip().upper() or None


def known_answer_type(value: object, known: Sequence[str] | None = None) -> str | None:
    """``value`` as one of the ``known`` names (default: ``AnswerType``'s; case and surrounding
    spaces ignored), or None when absent or blank (the type is inferred from the reference). Any
    other value (``"NUMBERS"``, a number, a list) is a ``ValueError`` naming the closest known
    name: graded as free text, it would pass unnoticed."""
    name = normalise_answer_type(value)
    names = [t.value for t in AnswerType] if known is None else list(known)
    if name is None or name in names:
        return name
    raise ValueError(
        f"unknown answer_type {name[:64]!r}{did_you_mean(name, names)}: use one of "
        f"{', '.join(names)}, or leave it out to have it inferred from the reference"
    )


def _new_request_id() -> str:
    return secrets.token_hex(16)


class JudgeRequest(BaseModel):
    """One thing to judge: a completion to a prompt, against a reference answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str = ""
    completion: str = ""
    answer: str = ""
    answer_type: str | None = None
    request_id: str = Field(default_factory=_new_request_id)
    metadata: dict[str, object] = Field(default_factory=dict)
    final_answer: str | None = Field(
        default=None, description="the completion's final answer as our rules extract it, if any"
    )
    responses: tuple[str, ...] = Field(
        default=(),
        description="a comparison's responses in the order shown (pairwise: two, listwise: a group); "
        "empty for one completion judged on its own",
    )
    profile: str | None = Field(
        default=None,
        description="the judge profile this judgment is asked by (a rubric's criterion, a group's "
        "comparison); None = the judge's own",
    )
    trajectory: Trajectory | None = Field(
        default=None,
        description="an agent's steps before its final reply (the completion): text, tool calls and "
        "results; None for a completion without tool use, or when the judge is shown the reply only",
    )
    traces: tuple[Trajectory | None, ...] = Field(
        default=(),
        description="a comparison of agents' responses: each response's steps before it, in the order "
        "shown (None: a response without steps, or the reference); empty when none has any",
    )
    budget: Budget | None = Field(
        default=None,
        exclude=True,
        repr=False,
        description="the time of the reward call this judgment is part of (judge_vllm/budget.py): "
        "every layer bounds its work by it; not part of what is judged, never serialised",
    )

    @field_validator("prompt", "completion", "answer", mode="before")
    @classmethod
    def _text(cls, value: object, info: ValidationInfo[object]) -> str:
        return coerce_text(value, str(info.field_name))

    @field_validator("responses", mode="before")
    @classmethod
    def _responses(cls, value: object) -> tuple[str, ...]:
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
            raise ValueError(f"responses must be a list of strings, got {type(value).__name__}")
        return tuple(coerce_text(v, f"responses[{k}]") for k, v in enumerate(value))

    @model_validator(mode="after")
    def _one_trace_per_response(self) -> JudgeRequest:
        if self.traces and len(self.traces) != len(self.responses):
            raise ValueError(
                f"traces: {len(self.traces)} for {len(self.responses)} responses (one each, or none)"
            )
        return self

    def trajectories(self) -> tuple[Trajectory, ...]:
        """The agents' steps the request comes with: its completion's, or its responses'."""
        return tuple(t for t in (self.trajectory, *self.traces) if t is not None)

    @field_validator("answer_type", mode="before")
    @classmethod
    def _answer_type(cls, value: object) -> str | None:
        return normalise_answer_type(value)

    @field_validator("request_id", mode="before")
    @classmethod
    def _request_id(cls, value: object) -> str:
        return coerce_text(value, "request_id") or _new_request_id()


class Verdict(BaseModel):
    """What the judge concluded about one request. ``score`` is always in [0, 1]."""

    model_config = ConfigDict(extra="ignore")

    score: float = Field(ge=0.0, le=1.0)
    explanation: str = ""
    detailed_scores: dict[str, float] | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    raw: str | None = None
    judge_scores: dict[str, float | None] | None = Field(
        default=None, description="each member's score when the verdict aggregates an ensemble"
    )
    label: str | None = Field(default=None, description="the label the judge gave (sampled)")
    ranking: list[int] | None = Field(
        default=None, description="a listwise verdict: the responses' positions as shown, best first"
    )


# -- the judge server's reply ---------------------------------------------------------
# Only the fields the judge reads, as TypedDicts: pydantic validates a 64-choice batch
# reply straight from JSON in about a millisecond, ~20x faster than building the openai
# SDK's ChatCompletion objects (measured in judge-bench (c)'s client-overhead rows).


class TokenLogprob(TypedDict):
    """One token and its log-probability."""

    token: str
    logprob: float


class PositionLogprobs(TokenLogprob):
    """A generated position: the sampled token and the requested alternatives."""

    top_logprobs: NotRequired[list[TokenLogprob] | None]


class ChoiceLogprobs(TypedDict):
    """Per-position logprobs of one choice."""

    content: NotRequired[list[PositionLogprobs] | None]


class ChoiceMessage(TypedDict):
    """The assistant message of one choice (vLLM's reasoning parser puts reasoning apart)."""

    content: NotRequired[str | None]
    reasoning_content: NotRequired[str | None]
    reasoning: NotRequired[str | None]


class ChatChoice(TypedDict):
    """One choice of an OpenAI-compatible chat completion."""

    index: int
    message: NotRequired[ChoiceMessage | None]
    finish_reason: NotRequired[str | None]
    logprobs: NotRequired[ChoiceLogprobs | None]


class ChatReply(TypedDict):
    """An OpenAI-compatible chat completion (single or vLLM batch), as the judge reads it."""

    choices: list[ChatChoice]


class CompletionLogprobs(TypedDict):
    """Per-position logprobs of a completions choice (the legacy OpenAI layout)."""

    tokens: NotRequired[list[str] | None]
    token_logprobs: NotRequired[list[float | None] | None]
    top_logprobs: NotRequired[list[dict[str, float] | None] | None]


class CompletionChoice(TypedDict):
    """One choice of an OpenAI-compatible (text) completion."""

    index: int
    text: NotRequired[str | None]
    finish_reason: NotRequired[str | None]
    logprobs: NotRequired[CompletionLogprobs | None]


class CompletionReply(TypedDict):
    """An OpenAI-compatible completion, as the judge reads it."""

    choices: list[CompletionChoice]


_CHAT_REPLY = TypeAdapter(ChatReply)
_COMPLETION_REPLY = TypeAdapter(CompletionReply)


@dataclass(frozen=True, slots=True)
class LogprobPosition:
    """One generated token and the logprobs the server sent for it (token text -> logprob)."""

    token: str
    logprobs: dict[str, float]


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """One choice of a judge reply, chat or completions alike (built from a validated reply)."""

    index: int
    text: str | None
    finish_reason: str | None
    positions: list[LogprobPosition] | None = None


def _chat_positions(choice: ChatChoice) -> list[LogprobPosition] | None:
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    positions = []
    for entry in content:
        values = {top["token"]: top["logprob"] for top in entry.get("top_logprobs") or []}
        values.setdefault(entry["token"], entry["logprob"])
        positions.append(LogprobPosition(token=entry["token"], logprobs=values))
    return positions


def _completion_positions(choice: CompletionChoice) -> list[LogprobPosition] | None:
    logprobs = choice.get("logprobs") or {}
    tokens = logprobs.get("tokens")
    if not tokens:
        return None
    sampled = logprobs.get("token_logprobs") or []
    tops = logprobs.get("top_logprobs") or []
    positions = []
    for i, token in enumerate(tokens):
        values = dict((tops[i] if i < len(tops) else None) or {})
        own = sampled[i] if i < len(sampled) else None
        if own is not None:
            values.setdefault(token, own)
        positions.append(LogprobPosition(token=token, logprobs=values))
    return positions


def parse_chat_reply(body: bytes | str) -> list[JudgeReply]:
    """The choices of a chat completion reply body (raises pydantic's ValidationError)."""
    return [
        JudgeReply(
            index=choice["index"],
            text=(choice.get("message") or {}).get("content"),
            finish_reason=choice.get("finish_reason"),
            positions=_chat_positions(choice),
        )
        for choice in _CHAT_REPLY.validate_json(body)["choices"]
    ]


def parse_completion_reply(body: bytes | str) -> list[JudgeReply]:
    """The choices of a (text) completion reply body (raises pydantic's ValidationError)."""
    return [
        JudgeReply(
            index=choice["index"],
            text=choice.get("text"),
            finish_reason=choice.get("finish_reason"),
            positions=_completion_positions(choice),
        )
        for choice in _COMPLETION_REPLY.validate_json(body)["choices"]
    ]
