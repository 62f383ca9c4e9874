"""OpenRLHF remote reward model: ``POST /get_reward`` backed by the judge.

    judge-vllm openrlhf-rm --port 5000 --config configs/openrlhf.yaml [--answer-type NUMBER]
    # train with: --reward.remote_url http://HOST:5000/get_reward --data.label_key answer

The shape is OpenRLHF 0.11's (``openrlhf_protocol``): ``SingleTurnAgentExecutor`` posts
``{"query": [...], "prompts": [...], "labels": [...]}`` (one query per sample) and reads
``rewards``, ``scores`` and ``extra_logs``, like its reference server
``openrlhf/cli/serve_rm.py``. Each query is split into prompt and response, the label is the
reference answer, and the whole request is one adapter batch. With a ``group:`` block other than
``pointwise`` in the config, the request's queries are grouped by prompt (and label) instead, each
group judged together (``areward_group``), all groups at once; rewards come back in query order.
OpenRLHF 0.11's executor posts one sample per request, which makes groups of one (judged on their
own): group judging takes a client that posts a prompt's samples together.

Under a judge outage: OpenRLHF waits up to ``OPENRLHF_CLIENT_TIMEOUT_S`` for an answer and
tries a request 5 times, 1 s apart, before leaving the sample without a reward, which fails the
training step. So the config's ``timeout`` must leave a margin below that wait (checked when
the app is built): with ``fallback_to_rule: true`` every request then gets a 200 with a reward
(the rule reward where the judge failed, flagged in ``extra_logs``). With
``fallback_to_rule: false`` a reward the judge could not give is a 503, never a number:
OpenRLHF retries it, and a judge still down after the 5th try fails the step.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
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

from adapter.config import ConfigLike, RewardConfig
from adapter.http import (
    AnswerType,
    JudgeItem,
    JudgeService,
    Service,
    UnicodeText,
    api_config,
    base_app,
    check_batch_length,
    serve,
)
from adapter.integrations.openrlhf_protocol import (
    OpenRLHFRewards,
    label_text,
    reward_items,
    unavailable_message,
)
from judge_vllm.backend import JudgeBackend
from judge_vllm.errors import JudgeConfigError

__all__ = [
    "OPENRLHF_CLIENT_TIMEOUT_S",
    "RESPONSE_MARGIN_S",
    "RemoteRewardRequest",
    "create_app",
    "prompt_groups",
    "run_openrlhf_rm",
]

logger = logging.getLogger(__name__)

OPENRLHF_CLIENT_TIMEOUT_S = 180.0
"""OpenRLHF 0.11's wait for one ``/get_reward`` (``aiohttp.ClientTimeout(total=180)``)."""
RESPONSE_MARGIN_S = 10.0
"""Kept free below that wait for the rule fallback, queueing and the network."""


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
        return [label_text(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _same_lengths(self) -> RemoteRewardRequest:
        n = len(self.query)
        for name in ("prompts", "labels", "answer_types"):
            values = getattr(self, name)
            if values is not None and len(values) != n:
                raise ValueError(f"{name} has {len(values)} items but query has {n}; send one per query")
        return self

    def items(self, answer_type: str | None) -> list[JudgeItem]:
        """The adapter's items, each typed by ``answer_types`` or else ``answer_type``."""
        types = [kind or answer_type for kind in self.answer_types or [None] * len(self.query)]
        return [JudgeItem(**item) for item in reward_items(self.query, self.prompts, self.labels, types)]


def prompt_groups(items: Sequence[JudgeItem]) -> list[list[int]]:
    """The indices of ``items`` grouped by prompt, label and answer type, groups in order of first
    appearance: what ``areward_group`` takes as one group."""
    groups: dict[tuple[str, str, str | None], list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault((item.prompt, item.answer, item.answer_type), []).append(k)
    return list(groups.values())


async def _score_by_prompt(service: JudgeService, items: Sequence[JudgeItem]) -> list[dict[str, Any]]:
    """Each prompt's items judged as one group, every group at once; results in ``items``' order."""
    groups = prompt_groups(items)
    scored = await asyncio.gather(*(service.score_group([items[k] for k in group]) for group in groups))
    by_index = {
        k: r for group, rs in zip(groups, scored, strict=True) for k, r in zip(group, rs, strict=True)
    }
    return [by_index[k] for k in range(len(items))]


def _within_openrlhfs_wait(config: RewardConfig) -> RewardConfig:
    limit = OPENRLHF_CLIENT_TIMEOUT_S - RESPONSE_MARGIN_S
    if config.timeout > limit:
        raise JudgeConfigError(
            f"timeout {config.timeout:g} s: OpenRLHF abandons a /get_reward after "
            f"{OPENRLHF_CLIENT_TIMEOUT_S:g} s and retries it, so a reward (or the rule fallback) must "
            f"come back sooner: set timeout to at most {limit:g}"
        )
    group = config.group
    if group is not None and group.mode != "pointwise" and group.deadline + config.timeout > limit:
        raise JudgeConfigError(
            f"group.deadline {group.deadline:g} s + timeout {config.timeout:g} s: a group's rewards come "
            f"back within both, and OpenRLHF abandons a /get_reward after {OPENRLHF_CLIENT_TIMEOUT_S:g} s: "
            f"make them add up to at most {limit:g}"
        )
    return config


def _compares_groups(config: RewardConfig) -> bool:
    return config.group is not None and config.group.mode != "pointwise"


def create_app(
    config: ConfigLike = None,
    *,
    answer_type: str | None = None,
    max_body_bytes: int | None = None,
    max_batch: int | None = None,
    backend: JudgeBackend | None = None,
) -> FastAPI:
    """The remote reward model app: ``/get_reward`` plus ``/health`` and ``/metrics`` (no auth:
    OpenRLHF sends no credentials, so bind it to a private address). None = the default limit;
    ``backend`` replaces the judge server (tests, embedding).

    A config whose ``timeout`` (with a comparing ``group:``, plus ``group.deadline``) leaves no
    margin below OpenRLHF's wait raises ``JudgeConfigError``.
    """
    resolved = _within_openrlhfs_wait(RewardConfig.from_any(config))
    try:
        TypeAdapter(AnswerType | None).validate_python(answer_type)
    except ValidationError as err:
        raise JudgeConfigError(f"answer_type (--answer-type): {err.errors()[0]['msg']}") from None
    app = base_app(
        resolved,
        title="judge-vllm OpenRLHF reward model",
        endpoints=("/get_reward",),
        max_body_bytes=max_body_bytes,
        max_batch=max_batch,
        backend=backend,
    )
    grouped = _compares_groups(resolved)

    @app.post("/get_reward")
    async def get_reward(body: RemoteRewardRequest, service: Service) -> OpenRLHFRewards:
        """Score each query's response against its label: in one adapter batch, or with
        ``group:`` one group per prompt."""
        check_batch_length(len(body.query), service.settings.max_batch, "query")
        items = body.items(answer_type)
        results = await (_score_by_prompt(service, items) if grouped else service.score(items))
        unavailable = unavailable_message(results)
        if unavailable is not None:
            raise HTTPException(503, unavailable)
        return OpenRLHFRewards.from_results(results)

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
    resolved = api_config(config, judge_url)
    app = create_app(resolved, answer_type=answer_type, max_body_bytes=max_body_bytes, max_batch=max_batch)
    logger.warning(
        "OpenRLHF reward model on http://%s:%d/get_reward for %s (rule fallback %s)",
        host,
        port,
        resolved.judge_url,
        "on" if resolved.fallback_to_rule else "off: a failed judge call is a 503",
    )
    serve(app, host, port)
