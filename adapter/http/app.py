"""The FastAPI apps: ``base_app`` (what every HTTP front end shares) and the judge API on it.

The middleware stack of every front end, outermost first:

    ObserveMiddleware (counts, latency) -> AuthMiddleware (401) -> BodyLimitMiddleware (413) -> routes

``base_app`` adds the judge service (its lifespan), the 422 format (also for ``JudgeInputError``),
``/health`` and ``/metrics``; ``create_app`` adds ``/judge``, ``/batch_judge`` and ``/judge_group``,
``adapter.integrations.openrlhf`` adds ``/get_reward``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import SecretStr, ValidationError

from adapter.config import ConfigLike, RewardConfig
from adapter.http.auth import AuthMiddleware
from adapter.http.metrics import CONTENT_TYPE_LATEST, ApiMetrics
from adapter.http.middleware import BodyLimitMiddleware, ObserveMiddleware
from adapter.http.models import (
    ApiSettings,
    BatchJudgeRequest,
    BatchJudgeResponse,
    GroupMemberResponse,
    HealthResponse,
    JudgeGroupRequest,
    JudgeGroupResponse,
    JudgeItem,
    JudgeResponse,
)
from adapter.http.service import JudgeService, Service
from adapter.http.validation import (
    check_batch_length,
    check_group_size,
    check_one_group,
    check_references,
    input_error_response,
    validation_error_response,
    validation_errors,
)
from judge_vllm.backend import JudgeBackend
from judge_vllm.errors import JudgeConfigError, JudgeInputError

__all__ = ["base_app", "create_app"]


def _settings(
    api_key: str | SecretStr | None, max_body_bytes: int | None, max_batch: int | None
) -> ApiSettings:
    given = {"api_key": api_key, "max_body_bytes": max_body_bytes, "max_batch": max_batch}
    try:
        return ApiSettings.model_validate({name: value for name, value in given.items() if value is not None})
    except ValidationError as err:
        raise JudgeConfigError(f"invalid API settings: {validation_errors(err.errors())}") from None


def _one_judge(config: ConfigLike) -> RewardConfig:
    resolved = RewardConfig.from_any(config)
    if resolved.judge_urls and len(resolved.judge_urls) > 1:
        raise JudgeConfigError(
            "the HTTP API serves one judge: set judge_url (or one judge_urls entry); "
            "run one API per judge for an ensemble"
        )
    return resolved


def base_app(
    config: ConfigLike,
    *,
    title: str,
    endpoints: Iterable[str],
    api_key: str | SecretStr | None = None,
    max_body_bytes: int | None = None,
    max_batch: int | None = None,
    backend: JudgeBackend | None = None,
) -> FastAPI:
    """An app with the judge service, middleware, 422 format, ``/health`` and ``/metrics``.

    ``endpoints`` are the paths the caller will add (they get their own metric label). A limit
    left None is ``ApiSettings``' default; invalid settings or a config with several judges
    raise ``JudgeConfigError``. ``backend`` replaces the judge server (tests, embedding).
    """
    settings = _settings(api_key, max_body_bytes, max_batch)
    resolved = _one_judge(config)
    metrics = ApiMetrics({"/health", "/metrics", *endpoints})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = JudgeService(resolved, settings, metrics, backend)
        app.state.service = service
        try:
            with metrics.rewards_of(service.rewards.get_metrics):
                yield
        finally:
            await service.aclose()

    app = FastAPI(title=title, lifespan=lifespan)
    app.add_exception_handler(RequestValidationError, validation_error_response)
    app.add_exception_handler(JudgeInputError, input_error_response)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(AuthMiddleware, api_key=settings.api_key)
    app.add_middleware(ObserveMiddleware, record=metrics.record_request)

    @app.get("/health", response_model=HealthResponse)
    async def health(service: Service) -> JSONResponse:
        """The upstream judge: reachable, model, circuit breaker; 503 if down with fallback off."""
        status_code, report = await service.health()
        return JSONResponse(report.model_dump(), status_code=status_code)

    @app.get("/metrics", response_class=Response)
    async def prometheus_metrics() -> Response:
        """Prometheus text: requests, latency histograms, cache hits, fallbacks, breaker state."""
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return app


def create_app(
    config: ConfigLike = None,
    api_key: str | SecretStr | None = None,
    max_body_bytes: int | None = None,
    max_batch: int | None = None,
    *,
    backend: JudgeBackend | None = None,
) -> FastAPI:
    """The seed's judge server API on one judge (config: dict, ``RewardConfig`` or YAML path).

    Limits left None are the defaults (``DEFAULT_MAX_BODY_BYTES``, ``DEFAULT_MAX_BATCH``);
    ``backend`` replaces the judge server (``JudgeRewardSystem``'s).
    """
    app = base_app(
        config,
        title="judge-vllm judge API",
        endpoints=("/judge", "/batch_judge", "/judge_group"),
        api_key=api_key,
        max_body_bytes=max_body_bytes,
        max_batch=max_batch,
        backend=backend,
    )

    @app.post("/judge")
    async def judge(item: JudgeItem, service: Service) -> JudgeResponse:
        """Score one completion."""
        if service.reference_profile:
            check_references([item], service.reference_profile, None)
        (result,) = await service.score([item])
        return JudgeResponse.from_result(result)

    @app.post("/batch_judge")
    async def batch_judge(batch: BatchJudgeRequest, service: Service) -> BatchJudgeResponse:
        """Score several completions in one adapter batch; responses in request order."""
        check_batch_length(len(batch.requests), service.settings.max_batch, "requests")
        if service.reference_profile:
            check_references(batch.requests, service.reference_profile, "requests")
        results = await service.score(batch.requests)
        return BatchJudgeResponse(responses=[JudgeResponse.from_result(r) for r in results])

    @app.post("/judge_group")
    async def judge_group(group: JudgeGroupRequest, service: Service) -> JudgeGroupResponse:
        """Score the completions of one prompt together (the config's ``group:``); results in order."""
        check_batch_length(len(group.items), service.settings.max_batch, "items")
        check_group_size(len(group.items), service.rewards.config.group, "items")
        check_one_group(group.items, "items")
        group_settings = service.rewards.config.group
        pointwise = group_settings is None or group_settings.mode == "pointwise"
        if service.reference_profile and pointwise:  # comparisons need no reference
            check_references(group.items, service.reference_profile, "items")
        results = await service.score_group(group.items)
        return JudgeGroupResponse(results=[GroupMemberResponse.from_result(r) for r in results])

    return app
