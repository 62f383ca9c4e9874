"""OpenRLHF remote reward model: ``POST /get_reward`` backed by the judge.

    judge-vllm openrlhf-rm --port 5000 --config configs/reward.yaml [--answer-type NUMBER]
    # train with: --remote_rm_url http://HOST:5000/get_reward

The shape matches OpenRLHF (github.com/OpenRLHF/OpenRLHF @ 3c3be62):
``openrlhf/utils/agent.py`` (``SingleTurnAgentExecutor._fetch_rewards_via_http``) posts
``{"query": [...], "prompts": [...], "labels": [...]}``, where each query is
``hf_tokenizer.decode(prompt_tokens + response_tokens, skip_special_tokens=False)`` (the prompt
tokens cut from the left when too long), and reads ``rewards``, ``scores`` (``rewards`` when
absent) and ``extra_logs`` (each value made a per-sample tensor); the reference server
``openrlhf/cli/serve_rm.py`` answers ``{"rewards": r, "scores": r, "extra_logs": {...}}``.

Each query is split into prompt and response (``split_query``), the label is the reference
answer, and the whole request is one adapter batch. A reward the judge could not give with
``fallback_to_rule: false`` is an error (503, OpenRLHF retries), never a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from adapter.config import ConfigLike
from adapter.http import (
    AnswerType,
    JudgeItem,
    Service,
    UnicodeText,
    api_config,
    base_app,
    check_batch_length,
    serve,
)
from judge_vllm.errors import JudgeConfigError

__all__ = [
    "END_MARKERS",
    "RemoteRewardRequest",
    "RemoteRewardResponse",
    "create_app",
    "run_openrlhf_rm",
    "split_query",
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


def _text(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


class RemoteRewardRequest(BaseModel):
    """OpenRLHF's request; unknown keys are ignored (newer OpenRLHF versions may add some)."""

    model_config = ConfigDict(extra="ignore")

    query: list[UnicodeText]
    prompts: list[UnicodeText]
    labels: list[UnicodeText]
    answer_types: list[AnswerType | None] | None = Field(
        default=None, description="optional per-sample answer type; else the server's --answer-type"
    )

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, value: Any) -> Any:
        return [_text(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _same_lengths(self) -> RemoteRewardRequest:
        n = len(self.query)
        for name in ("prompts", "labels", "answer_types"):
            values = getattr(self, name)
            if values is not None and len(values) != n:
                raise ValueError(f"{name} has {len(values)} items but query has {n}; send one per query")
        return self


class RemoteRewardResponse(BaseModel):
    """OpenRLHF's response: ``rewards`` for advantages, ``scores`` in [0, 1] for filtering,
    ``extra_logs`` as per-sample values that OpenRLHF logs."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]

    @classmethod
    def from_results(cls, results: Sequence[Mapping[str, Any]]) -> RemoteRewardResponse:
        """Build from adapter reward dicts that all carry a reward."""
        rewards = [float(r["reward"]) for r in results]
        return cls(
            rewards=rewards,
            scores=rewards,
            extra_logs={
                "judge_latency_s": [r["latency_ms"] / 1000 for r in results],
                "judge_fallback": [float(r["source"] == "rule_fallback") for r in results],
                "judge_cached": [float(r["source"] == "cache") for r in results],
                "judge_prechecked": [float(r["source"] == "rule") for r in results],
            },
        )


def _items(body: RemoteRewardRequest, answer_type: str | None) -> list[JudgeItem]:
    types = body.answer_types or [None] * len(body.query)
    return [
        JudgeItem(
            prompt=prompt,
            completion=split_query(query, prompt),
            answer=label,
            answer_type=kind or answer_type,
        )
        for query, prompt, label, kind in zip(body.query, body.prompts, body.labels, types, strict=True)
    ]


def create_app(
    config: ConfigLike = None,
    *,
    answer_type: str | None = None,
    max_body_bytes: int | None = None,
    max_batch: int | None = None,
) -> FastAPI:
    """The remote reward model app: ``/get_reward`` plus ``/health`` and ``/metrics`` (no auth:
    OpenRLHF sends no credentials, so bind it to a private address). None = the default limit."""
    try:
        TypeAdapter(AnswerType | None).validate_python(answer_type)
    except ValidationError as err:
        raise JudgeConfigError(f"answer_type (--answer-type): {err.errors()[0]['msg']}") from None
    app = base_app(
        config,
        title="judge-vllm OpenRLHF reward model",
        endpoints=("/get_reward",),
        max_body_bytes=max_body_bytes,
        max_batch=max_batch,
    )

    @app.post("/get_reward")
    async def get_reward(body: RemoteRewardRequest, service: Service) -> RemoteRewardResponse:
        """Score each query's response against its label, in one adapter batch."""
        check_batch_length(len(body.query), service.settings.max_batch, "query")
        results = await service.score(_items(body, answer_type))
        failed = [r for r in results if r["reward"] is None]
        if failed:
            reasons = sorted({str(r["reason"]) for r in failed})
            raise HTTPException(
                503,
                f"{len(failed)} of {len(results)} rewards unavailable ({', '.join(reasons)}): "
                "the judge failed and fallback_to_rule is off",
            )
        return RemoteRewardResponse.from_results(results)

    return app


def run_openrlhf_rm(
    *,
    config: str | Path | None,
    judge_url: str | None,
    host: str,
    port: int,
    answer_type: str | None,
    max_body_bytes: int | None,
    max_batch: int | None,
) -> None:
    """``judge-vllm openrlhf-rm``: serve ``/get_reward`` in the foreground; None = default limit."""
    app = create_app(
        api_config(config, judge_url),
        answer_type=answer_type,
        max_body_bytes=max_body_bytes,
        max_batch=max_batch,
    )
    serve(app, host, port)
