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
OpenRLHF 0.11's executor posts one sample per request: with ``group_size`` (``--group-size``, the
samples per prompt) the server collects a prompt's samples across requests (``GroupCollector``)
until the group is full or ``group_window`` seconds after its first sample, then judges it once;
each request answers with its own samples' rewards.

Under a judge outage: OpenRLHF waits up to ``OPENRLHF_CLIENT_TIMEOUT_S`` for an answer and
tries a request 5 times, 1 s apart, before leaving the sample without a reward, which fails the
training step. So the config's ``reward_timeout`` must leave a margin below that wait (checked when
the app is built): with ``fallback_to_rule: true`` every request then gets a 200 with a reward
(the rule reward where the judge failed, flagged in ``extra_logs``). With
``fallback_to_rule: false`` a reward the judge could not give is a 503, never a number:
OpenRLHF retries it, and a judge still down after the 5th try fails the step.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from pathlib import Path

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
from adapter.integrations.group_collector import DEFAULT_GROUP_WINDOW_S, GroupCollector
from adapter.integrations.openrlhf_protocol import (
    OpenRLHFRewards,
    label_text,
    reward_items,
    unavailable_message,
)
from adapter.result import RewardDict
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
    def _labels(cls, value: object) -> object:
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
        return [
            JudgeItem.model_validate(item)
            for item in reward_items(self.query, self.prompts, self.labels, types)
        ]


def prompt_groups(items: Sequence[JudgeItem]) -> list[list[int]]:
    """The indices of ``items`` grouped by prompt, label and answer type, groups in order of first
    appearance: what ``areward_group`` takes as one group."""
    groups: dict[tuple[str, str, str | None], list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault((item.prompt, item.answer, item.answer_type), []).append(k)
    return list(groups.values())


async def _score_by_prompt(service: JudgeService, items: Sequence[JudgeItem]) -> list[RewardDict]:
    """Each prompt's items judged as one group, every group at once; results in ``items``' order."""
    groups = prompt_groups(items)
    scored = await asyncio.gather(*(service.score_group([items[k] for k in group]) for group in groups))
    by_index = {
        k: r for group, rs in zip(groups, scored, strict=True) for k, r in zip(group, rs, strict=True)
    }
    return [by_index[k] for k in range(len(items))]


class _PromptGroups:
    """A prompt's samples collected across requests (OpenRLHF posts them one by one), judged once."""

    def __init__(self, service: JudgeService, size: int, window_s: float) -> None:
        self.size, self.window_s = size, window_s
        self.collector: GroupCollector[JudgeItem, RewardDict] = GroupCollector(service.score_group)

    async def score(self, items: Sequence[JudgeItem]) -> list[RewardDict]:
        """Each item's reward once its prompt's group is full or its window has passed."""
        return list(
            await asyncio.gather(
                *(self.collector.submit((i.prompt, i.answer, i.answer_type), i, self.size, self.window_s)
                  for i in items)
            )
        )  # fmt: skip


def _within_openrlhfs_wait(config: RewardConfig, group_window_s: float = 0.0) -> RewardConfig:
    limit = OPENRLHF_CLIENT_TIMEOUT_S - RESPONSE_MARGIN_S
    if config.reward_timeout > limit:
        raise JudgeConfigError(
            f"reward_timeout {config.reward_timeout:g} s: OpenRLHF abandons a /get_reward after "
            f"{OPENRLHF_CLIENT_TIMEOUT_S:g} s and retries it, so a reward (or the rule fallback) must "
            f"come back sooner: set reward_timeout to at most {limit:g}"
        )
    group = config.group
    if (
        group is not None
        and group.mode != "pointwise"
        and group_window_s + group.deadline + config.reward_timeout > limit
    ):
        raise JudgeConfigError(
            f"group window {group_window_s:g} s + group.deadline {group.deadline:g} s + reward_timeout "
            f"{config.reward_timeout:g} s: a group's rewards come back within all three, and OpenRLHF abandons a "
            f"/get_reward after {OPENRLHF_CLIENT_TIMEOUT_S:g} s: make them add up to at most {limit:g}"
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
    group_size: int | None = None,
    group_window: float = DEFAULT_GROUP_WINDOW_S,
) -> FastAPI:
    """The remote reward model app: ``/get_reward`` plus ``/health`` and ``/metrics`` (no auth:
    OpenRLHF sends no credentials, so bind it to a private address). None = the default limit;
    ``backend`` replaces the judge server (tests, embedding). With a comparing ``group:`` and
    ``group_size`` (samples per prompt), a prompt's samples are collected across requests for up
    to ``group_window`` seconds and judged as one group.

    A config whose ``reward_timeout`` (with a comparing ``group:``, plus ``group.deadline`` and the
    window) leaves no margin below OpenRLHF's wait raises ``JudgeConfigError``.
    """
    if group_size is not None and group_size < 1:
        raise JudgeConfigError(
            f"group size (--group-size) must be the samples per prompt (>= 1), not {group_size}"
        )
    if not 0 < group_window < OPENRLHF_CLIENT_TIMEOUT_S:
        raise JudgeConfigError(
            f"group window (--group-window) must be seconds below {OPENRLHF_CLIENT_TIMEOUT_S:g}"
        )
    collecting = group_size is not None
    resolved = _within_openrlhfs_wait(RewardConfig.from_any(config), group_window if collecting else 0.0)
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
    prompt_groups_of: dict[int, _PromptGroups] = {}  # by service: one collector per app

    def scored(service: JudgeService, items: list[JudgeItem]) -> Awaitable[list[RewardDict]]:
        if not grouped:
            return service.score(items)
        if not collecting:
            return _score_by_prompt(service, items)
        collector = prompt_groups_of.setdefault(
            id(service), _PromptGroups(service, group_size or 1, group_window)
        )
        return collector.score(items)

    @app.post("/get_reward")
    async def get_reward(body: RemoteRewardRequest, service: Service) -> OpenRLHFRewards:
        """Score each query's response against its label: in one adapter batch, or with
        ``group:`` one group per prompt (collected across requests with ``group_size``)."""
        check_batch_length(len(body.query), service.settings.max_batch, "query")
        results = await scored(service, body.items(answer_type))
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
    group_size: int | None = None,
    group_window: float = DEFAULT_GROUP_WINDOW_S,
) -> None:
    """``judge-vllm openrlhf-rm``: serve ``/get_reward`` in the foreground; None = default limit."""
    resolved = api_config(config, judge_url)
    app = create_app(
        resolved,
        answer_type=answer_type,
        max_body_bytes=max_body_bytes,
        max_batch=max_batch,
        group_size=group_size,
        group_window=group_window,
    )
    logger.warning(
        "OpenRLHF reward model on http://%s:%d/get_reward for %s (rule fallback %s)",
        host,
        port,
        resolved.judge_url,
        "on" if resolved.fallback_to_rule else "off: a failed judge call is a 503",
    )
    serve(app, host, port)
