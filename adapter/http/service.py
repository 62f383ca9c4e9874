"""The judge behind an HTTP front end: one reward system per app, and its health."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Annotated

from fastapi import Depends, Request

from adapter.config import RewardConfig
from adapter.factory import create_judge_reward
from adapter.http.metrics import ApiMetrics
from adapter.http.models import ApiSettings, BreakerHealth, HealthResponse, JudgeItem, UpstreamHealth
from adapter.result import RewardDict
from adapter.reward import BaseJudgeReward, JudgeRewardSystem
from judge_vllm.backend import JudgeBackend
from judge_vllm.client import JudgeClient

__all__ = ["HEALTH_TIMEOUT_S", "JudgeService", "Service", "health_status", "judge_service"]

HEALTH_TIMEOUT_S = 5.0


def health_status(reachable: bool, breaker_state: str, fallback_to_rule: bool) -> tuple[int, str]:
    """HTTP status and label for /health: 503 only when no reward can come from the judge or rules."""
    if reachable:
        return 200, "ok" if breaker_state == "closed" else "degraded"
    if fallback_to_rule:
        return 200, "degraded"
    return 503, "unavailable"


class JudgeService:
    """The judge behind an app: one reward system, one health client, the app's metrics.
    ``backend`` replaces the judge server (``JudgeRewardSystem``'s; ``/health`` still asks
    ``judge_url``)."""

    def __init__(
        self,
        config: RewardConfig,
        settings: ApiSettings,
        metrics: ApiMetrics,
        backend: JudgeBackend | None = None,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        # The app's /metrics serves the reward series; a metrics_port would open a second endpoint.
        own = config.model_copy(update={"metrics_port": None})
        self.rewards: BaseJudgeReward = (
            create_judge_reward(own) if backend is None else JudgeRewardSystem(own, backend=backend)
        )
        profile = self.rewards.config.client_config().judge_profile()
        # The profile that needs a reference, if the judge's does (docs/http_api.md: a 422).
        self.reference_profile: str | None = profile.name if profile.needs_answer else None
        health_config = self.rewards.config.client_config().model_copy(
            update={"max_retries": 0, "judge_timeout": HEALTH_TIMEOUT_S}
        )
        self._health_client = JudgeClient(health_config)

    async def score(self, items: Sequence[JudgeItem]) -> list[RewardDict]:
        """Reward dicts for ``items``, in order, through the adapter's batched path."""
        results = await self.rewards.areward_batch([item.to_request() for item in items])
        self.metrics.record_results(results)
        return results

    async def score_group(self, items: Sequence[JudgeItem]) -> list[RewardDict]:
        """Reward dicts for the completions of one prompt judged together (the config's ``group:``),
        in order; ``JudgeInputError`` for a group the adapter refuses."""
        results = await self.rewards.areward_group([item.to_request() for item in items])
        self.metrics.record_results(results)
        return results

    async def health(self) -> tuple[int, HealthResponse]:
        """The upstream judge's state, the breaker's, and the HTTP status to answer with."""
        upstream = UpstreamHealth.model_validate(await self._health_client.health())
        breaker = BreakerHealth.model_validate(self.rewards.get_metrics()["circuit_breaker"])
        fallback = self.rewards.config.fallback_to_rule
        status_code, status = health_status(upstream.reachable, breaker.state, fallback)
        report = HealthResponse(
            status=status,  # type: ignore[arg-type]
            upstream=upstream,
            circuit_breaker=breaker,
            fallback_to_rule=fallback,
        )
        return status_code, report

    async def aclose(self) -> None:
        """Close the reward system (its loop thread joins off this loop) and the health client."""
        await self._health_client.aclose()
        await asyncio.to_thread(self.rewards.close)


def judge_service(request: Request) -> JudgeService:
    """FastAPI dependency: the app's ``JudgeService`` (set up by the lifespan)."""
    service: JudgeService = request.app.state.service
    return service


Service = Annotated[JudgeService, Depends(judge_service)]
