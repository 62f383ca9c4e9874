"""The HTTP API's wire models: its settings, ``/judge``, ``/batch_judge`` and ``/judge_group``
bodies, ``/health``."""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    SecretStr,
    SerializerFunctionWrapHandler,
    StringConstraints,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from adapter.pipeline.conversations import prompt_text
from adapter.pipeline.trajectory import TrajectoryError, is_messages, read_completion
from adapter.result import GroupComparison, RewardDict, Source
from adapter.rules.answer_types import known_answer_type
from adapter.settings import MAX_CRITERIA, Criterion
from judge_vllm.schemas import JudgeRequest
from judge_vllm.settings import clean_api_key
from judge_vllm.trajectory import Trajectory

__all__ = [
    "DEFAULT_MAX_BATCH",
    "DEFAULT_MAX_BODY_BYTES",
    "AnswerType",
    "ApiSettings",
    "BatchJudgeRequest",
    "BatchJudgeResponse",
    "BreakerHealth",
    "GroupMemberResponse",
    "HealthResponse",
    "JudgeGroupRequest",
    "JudgeGroupResponse",
    "JudgeItem",
    "JudgeResponse",
    "ResponseMetadata",
    "RubricCriterion",
    "UnicodeText",
    "UpstreamHealth",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_BATCH = 1024
MAX_ANSWER_TYPE_CHARS = 64

# JSON may escape a lone surrogate ("\ud800"), and Python's decoder lets one through from invalid
# UTF-8 too; such a str cannot be encoded, so it would fail deep in scoring as a 500.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _no_lone_surrogate(value: object) -> object:
    found = _LONE_SURROGATE.search(value) if isinstance(value, str) else None
    if found is not None:
        raise PydanticCustomError(
            "lone_surrogate",
            "contains a lone surrogate ({code} at character {index}): send valid Unicode text "
            "(a surrogate pair or the character itself)",
            {"code": f"U+{ord(found.group()):04X}", "index": found.start()},
        )
    return value


UnicodeText = Annotated[str, BeforeValidator(_no_lone_surrogate)]
"""A string of Unicode scalar values (encodable as UTF-8): lone surrogates are a 422."""
AnswerType = Annotated[
    str,
    StringConstraints(max_length=MAX_ANSWER_TYPE_CHARS),
    BeforeValidator(_no_lone_surrogate),
    AfterValidator(known_answer_type),
]
"""An ``answer_type``: a name in the answer-type registry (``NUMBER``, ``MATH_EXPRESSIONS``,
``MULTIPLE_CHOICE``, ``TEXT``, and any type added there; any case); another name is a 422 naming
the closest one."""


class ApiSettings(BaseModel):
    """The HTTP front end's own knobs (the judge's are in ``RewardConfig``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = Field(default=None, description="bearer token; None = no auth")
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024, description="413 above this")
    max_batch: int = Field(default=DEFAULT_MAX_BATCH, ge=1, description="422 above this many items")

    @field_validator("api_key", mode="before")
    @classmethod
    def _sendable_key(cls, value: object) -> object:
        # Stripped (the header token is stripped too), only printable text inside (what survives a
        # client's header encoding; non-ASCII too: it is compared as UTF-8 bytes, never sent); an
        # empty key would turn auth off without a word: refused.
        key = clean_api_key(value, ascii_only=False)
        if value is not None and key is None:
            raise ValueError(
                "the API key is empty (or only whitespace), which would serve without auth: "
                "give a key, or none at all to serve without auth on purpose"
            )
        return key


class RubricCriterion(Criterion):
    """One rubric criterion on the wire: a string, or ``{criterion, weight, veto}``."""

    @model_validator(mode="before")
    @classmethod
    def _text_alone(cls, value: object) -> object:
        return {"criterion": value.strip()} if isinstance(value, str) else value

    @field_validator("criterion", mode="before")
    @classmethod
    def _valid_unicode(cls, value: object) -> object:
        return _no_lone_surrogate(value)


class JudgeItem(BaseModel):
    """One ``/judge`` request, with the seed's field names. Unknown fields are errors (typos).
    With ``rubric`` the reward is the rubric's (``answer`` optional). ``prompt`` and
    ``completion`` may be OpenAI chat messages: a prompt is read as its transcript, a completion
    with tool calls and results (or an item with ``tools``) as an agent's final reply and
    ``trajectory`` (docs/trajectories.md); one that cannot be read is a 422 naming the message."""

    model_config = ConfigDict(extra="forbid")

    prompt: UnicodeText
    completion: UnicodeText
    answer: UnicodeText = ""
    answer_type: AnswerType | None = None
    request_id: UnicodeText = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=256)
    rubric: Annotated[list[RubricCriterion], Field(min_length=1, max_length=MAX_CRITERIA)] | None = None
    tools: list[dict[str, JsonValue]] | None = Field(
        default=None, description="the tool schemas the agent was offered (OpenAI's tools format)"
    )
    trajectory: Trajectory | None = Field(
        default=None, description="the agent's steps before its final reply (read from the completion's messages)"
    )

    @model_validator(mode="before")
    @classmethod
    def _chat_messages(cls, data: object) -> object:
        """Chat messages read as the reward reads them; a malformed trajectory is a 422."""
        if not isinstance(data, dict):
            return data
        prompt, completion = data.get("prompt"), data.get("completion")
        if not (is_messages(prompt) or is_messages(completion) or data.get("tools")):
            return data
        try:
            read = read_completion(completion, data.get("tools"))
        except TrajectoryError as err:
            raise PydanticCustomError("trajectory", "completion: {problem}", {"problem": str(err)}) from None
        shown = prompt_text(prompt) if is_messages(prompt) else prompt
        return {**data, "prompt": shown, "completion": read.completion, "trajectory": read.trajectory}

    @field_validator("answer", mode="before")
    @classmethod
    def _number_answer(cls, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return "" if value is None else value

    @field_validator("request_id", mode="before")
    @classmethod
    def _new_id(cls, value: object) -> object:
        return uuid.uuid4().hex if value is None or value == "" else value

    def to_request(self) -> JudgeRequest:
        """The adapter's request for this item (a rubric goes in its metadata, as ``reward`` puts it)."""
        fields = self.model_dump(exclude={"rubric", "tools", "trajectory"})
        rubric = None if self.rubric is None else [c.model_dump() for c in self.rubric]
        return JudgeRequest(
            **fields, trajectory=self.trajectory, metadata={} if rubric is None else {"rubric": rubric}
        )


class BatchJudgeRequest(BaseModel):
    """``/batch_judge``: several items, answered in the same order."""

    model_config = ConfigDict(extra="forbid")

    requests: list[JudgeItem]


class JudgeGroupRequest(BaseModel):
    """``/judge_group``: the completions of one prompt (one prompt and answer), judged together."""

    model_config = ConfigDict(extra="forbid")

    items: list[JudgeItem]


class ResponseMetadata(BaseModel):
    """How a reward was produced: seconds spent, why the judge did not answer (if so), and an
    agent trajectory's per-turn scores under ``process:`` (else absent)."""

    latency: float
    reason: str | None = None
    step_scores: list[float | None] | None = None

    @model_serializer(mode="wrap")
    def _step_scores_when_judged(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """``step_scores`` only in replies that have them: every other reply keeps the seed's shape."""
        data: dict[str, object] = handler(self)
        if data.get("step_scores") is None:
            data.pop("step_scores", None)
        return data


class JudgeResponse(BaseModel):
    """One verdict, with the seed's field names. ``score`` is null only when ``source`` is ``error``."""

    score: float | None
    request_id: str
    explanation: str
    detailed_scores: dict[str, float] | None = None
    source: Source
    metadata: ResponseMetadata

    @classmethod
    def from_result(cls, result: RewardDict) -> JudgeResponse:
        """Build from the adapter's reward dict."""
        return cls(
            score=result["reward"],
            request_id=result["request_id"],
            explanation=result["explanation"],
            detailed_scores=result["detailed_scores"],
            source=result["source"],
            metadata=ResponseMetadata(
                latency=result["latency_ms"] / 1000, reason=result["reason"], step_scores=result["step_scores"]
            ),
        )


class BatchJudgeResponse(BaseModel):
    """``/batch_judge``'s answer: one response per request, in request order."""

    responses: list[JudgeResponse]


class GroupMemberResponse(JudgeResponse):
    """One member's verdict in a group, with the comparisons it came from (None: judged alone)."""

    comparisons: list[GroupComparison] | None = None

    @classmethod
    def from_result(cls, result: RewardDict) -> GroupMemberResponse:
        """Build from the adapter's reward dict (``reward_group``)."""
        verdict = JudgeResponse.from_result(result).model_dump()
        return cls.model_validate({**verdict, "comparisons": result["comparisons"]})


class JudgeGroupResponse(BaseModel):
    """``/judge_group``'s answer: one result per item, in request order."""

    results: list[GroupMemberResponse]


class UpstreamHealth(BaseModel):
    """The judge server as seen from here (tolerant: fields from ``JudgeClient.health``)."""

    model_config = ConfigDict(extra="ignore")

    reachable: bool
    url: str
    model: str | None = None
    status_code: int | None = None
    error: str | None = None


class BreakerHealth(BaseModel):
    """The circuit breaker's state and consecutive failures."""

    state: str
    failures: int


class HealthResponse(BaseModel):
    """``/health``: ``ok``, ``degraded`` (rewards from rules or a recovering breaker) or ``unavailable``."""

    status: Literal["ok", "degraded", "unavailable"]
    upstream: UpstreamHealth
    circuit_breaker: BreakerHealth
    fallback_to_rule: bool
