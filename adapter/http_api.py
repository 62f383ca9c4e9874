"""The seed's judge server API over HTTP, on the same judge core as the Python adapter.

    judge-vllm api --judge-url http://localhost:8888 --port 8889 --api-key KEY

``POST /judge``, ``POST /batch_judge``, ``GET /health`` and ``GET /metrics`` (docs/http_api.md).
Every reward comes from one ``JudgeRewardSystem`` per app (pre-checks, cache, single-flight,
breaker, micro-batching, rule fallback): concurrent ``/judge`` calls share judge batches and a
``/batch_judge`` is one ``areward_batch``. The middleware stack, outermost first:

    ObserveMiddleware (counts, latency) -> AuthMiddleware (401) -> BodyLimitMiddleware (413) -> routes

``create_app`` builds the app; ``base_app`` is the part other HTTP front ends reuse
(``adapter.integrations.openrlhf``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from adapter.config import RewardConfig
from adapter.result import Source
from adapter.reward import BaseJudgeReward, ConfigLike, create_judge_reward
from judge_vllm.client import JudgeClient
from judge_vllm.errors import JudgeConfigError
from judge_vllm.schemas import JudgeRequest

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_MAX_BATCH",
    "DEFAULT_MAX_BODY_BYTES",
    "ApiSettings",
    "ApiStats",
    "AuthMiddleware",
    "BatchJudgeRequest",
    "BatchJudgeResponse",
    "BodyLimitMiddleware",
    "BreakerHealth",
    "HealthResponse",
    "Histogram",
    "JudgeItem",
    "JudgeResponse",
    "JudgeService",
    "ObserveMiddleware",
    "ResponseMetadata",
    "Service",
    "UpstreamHealth",
    "api_config",
    "base_app",
    "bearer_token_ok",
    "check_batch_length",
    "create_app",
    "health_status",
    "judge_service",
    "render_prometheus",
    "run_api",
    "serve",
    "validation_errors",
]

logger = logging.getLogger(__name__)

API_KEY_ENV = "JUDGE_API_KEY"
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_BATCH = 1024
HEALTH_TIMEOUT_S = 5.0
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
OPEN_PATHS = frozenset({"/health"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# -- wire models -------------------------------------------------------------------------


class ApiSettings(BaseModel):
    """The HTTP front end's own knobs (the judge's are in ``RewardConfig``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_key: SecretStr | None = Field(default=None, description="bearer token; None = no auth")
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, ge=1024, description="413 above this")
    max_batch: int = Field(default=DEFAULT_MAX_BATCH, ge=1, description="422 above this many items")

    @field_validator("api_key", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value


class JudgeItem(BaseModel):
    """One ``/judge`` request, with the seed's field names. Unknown fields are errors (typos)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str
    completion: str
    answer: str = ""
    answer_type: str | None = Field(default=None, max_length=64)
    request_id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=256)

    @field_validator("answer", mode="before")
    @classmethod
    def _number_answer(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return "" if value is None else value

    @field_validator("request_id", mode="before")
    @classmethod
    def _new_id(cls, value: Any) -> Any:
        return uuid.uuid4().hex if value is None or value == "" else value

    def to_request(self) -> JudgeRequest:
        """The adapter's request for this item."""
        return JudgeRequest(**self.model_dump())


class BatchJudgeRequest(BaseModel):
    """``/batch_judge``: several items, answered in the same order."""

    model_config = ConfigDict(extra="forbid")

    requests: list[JudgeItem]


class ResponseMetadata(BaseModel):
    """How a reward was produced: seconds spent, and why the judge did not answer (if so)."""

    latency: float
    reason: str | None = None


class JudgeResponse(BaseModel):
    """One verdict, with the seed's field names. ``score`` is null only when ``source`` is ``error``."""

    score: float | None
    request_id: str
    explanation: str
    detailed_scores: dict[str, float] | None = None
    source: Source
    metadata: ResponseMetadata

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> JudgeResponse:
        """Build from the adapter's reward dict."""
        return cls(
            score=result["reward"],
            request_id=result["request_id"],
            explanation=result["explanation"],
            detailed_scores=result["detailed_scores"],
            source=result["source"],
            metadata=ResponseMetadata(latency=result["latency_ms"] / 1000, reason=result["reason"]),
        )


class BatchJudgeResponse(BaseModel):
    """``/batch_judge``'s answer: one response per request, in request order."""

    responses: list[JudgeResponse]


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


# -- decisions (pure) ----------------------------------------------------------------------


def health_status(reachable: bool, breaker_state: str, fallback_to_rule: bool) -> tuple[int, str]:
    """HTTP status and label for /health: 503 only when no reward can come from the judge or rules."""
    if reachable:
        return 200, "ok" if breaker_state == "closed" else "degraded"
    if fallback_to_rule:
        return 200, "degraded"
    return 503, "unavailable"


def bearer_token_ok(authorization: str | None, api_key: SecretStr) -> bool:
    """Does an ``Authorization`` header carry the key? Constant-time in the token's content."""
    scheme, _, token = (authorization or "").partition(" ")
    expected = api_key.get_secret_value().encode()
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected)


def _field_path(loc: Sequence[Any]) -> str:
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path or "body"


def validation_errors(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """FastAPI/pydantic errors as ``{field, message, type}``, without echoing the input."""
    out = []
    for e in errors:
        field = "body" if e.get("type") == "json_invalid" else _field_path(e.get("loc", ()))
        out.append({"field": field, "message": str(e.get("msg", "invalid")), "type": str(e.get("type"))})
    return out


def check_batch_length(length: int, settings: ApiSettings, field: str) -> None:
    """Raise a 422 naming ``field`` when a batch has more items than ``max_batch``."""
    if length > settings.max_batch:
        message = f"at most {settings.max_batch} items per batch (max_batch), got {length}"
        raise RequestValidationError([{"loc": ("body", field), "msg": message, "type": "too_long"}])


# -- Prometheus exposition ----------------------------------------------------------------


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: Mapping[str, str], value: float) -> str:
    inner = ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items())
    shown = repr(float(value)) if isinstance(value, float) else str(value)
    return f"{name}{{{inner}}} {shown}" if inner else f"{name} {shown}"


def _family(name: str, kind: str, help_text: str, samples: Iterable[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]


class Histogram:
    """A labelled Prometheus histogram with fixed buckets (event-loop confined, no lock)."""

    def __init__(self, buckets: Sequence[float] = LATENCY_BUCKETS_S) -> None:
        self.buckets = tuple(sorted(buckets))
        self._counts: dict[tuple[tuple[str, str], ...], list[int]] = {}
        self._sums: dict[tuple[tuple[str, str], ...], float] = {}

    def observe(self, value: float, **labels: str) -> None:
        """Record one value."""
        key = tuple(sorted(labels.items()))
        counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
        for i, upper in enumerate(self.buckets):
            if value <= upper:
                counts[i] += 1
        counts[-1] += 1
        self._sums[key] = self._sums.get(key, 0.0) + value

    def samples(self, name: str) -> list[str]:
        """Exposition lines: cumulative ``_bucket``s, ``_sum`` and ``_count`` per label set."""
        lines = []
        for key, counts in sorted(self._counts.items()):
            labels = dict(key)
            for upper, count in zip((*map(repr, self.buckets), "+Inf"), counts, strict=True):
                lines.append(_sample(f"{name}_bucket", {**labels, "le": upper}, count))
            lines.append(_sample(f"{name}_sum", labels, self._sums[key]))
            lines.append(_sample(f"{name}_count", labels, counts[-1]))
        return lines


class ApiStats:
    """What the HTTP layer saw: requests by endpoint and status, request and reward latency."""

    def __init__(self, endpoints: Iterable[str]) -> None:
        self.endpoints = frozenset(endpoints)
        self.requests: Counter[tuple[str, str]] = Counter()
        self.request_seconds = Histogram()
        self.reward_seconds = Histogram()

    def endpoint(self, path: str) -> str:
        """The label for a path (unknown paths share one, so label cardinality stays bounded)."""
        return path if path in self.endpoints else "other"

    def record_request(self, path: str, status: int, seconds: float) -> None:
        """One HTTP request answered."""
        endpoint = self.endpoint(path)
        self.requests[(endpoint, str(status))] += 1
        self.request_seconds.observe(seconds, endpoint=endpoint)

    def record_results(self, results: Iterable[Mapping[str, Any]]) -> None:
        """Rewards returned, for the per-source latency histogram."""
        for r in results:
            self.reward_seconds.observe(r["latency_ms"] / 1000, source=r["source"])

    def exposition(self) -> list[str]:
        """The HTTP layer's metric families."""
        requests = (
            _sample("judge_api_requests_total", {"endpoint": e, "status": s}, n)
            for (e, s), n in sorted(self.requests.items())
        )
        return [
            *_family(
                "judge_api_requests_total", "counter", "HTTP requests by endpoint and status.", requests
            ),
            *_family(
                "judge_api_request_duration_seconds",
                "histogram",
                "HTTP request duration by endpoint.",
                self.request_seconds.samples("judge_api_request_duration_seconds"),
            ),
            *_family(
                "judge_reward_latency_seconds",
                "histogram",
                "Latency of each returned reward by source.",
                self.reward_seconds.samples("judge_reward_latency_seconds"),
            ),
        ]


def _labelled(name: str, label: str, counts: Mapping[str, int]) -> list[str]:
    return [_sample(name, {label: k}, v) for k, v in sorted(counts.items())]


def render_prometheus(metrics: Mapping[str, Any], stats: ApiStats) -> str:
    """Prometheus text format (0.0.4) from ``get_metrics()`` and the HTTP layer's stats."""
    sources: Mapping[str, int] = metrics["sources"]
    breaker = metrics["circuit_breaker"]
    states = ("closed", "open", "half_open")
    lines = [
        *stats.exposition(),
        *_family(
            "judge_rewards_total",
            "counter",
            "Rewards returned by source (judge, cache, rule, rule_fallback, error).",
            _labelled("judge_rewards_total", "source", sources),
        ),
        *_family(
            "judge_cache_hits_total",
            "counter",
            "Rewards answered from the verdict cache.",
            [_sample("judge_cache_hits_total", {}, sources.get("cache", 0))],
        ),
        *_family(
            "judge_fallbacks_total",
            "counter",
            "Rewards the judge did not give (rule fallback, or error when fallback is off) by reason.",
            _labelled("judge_fallbacks_total", "reason", metrics["fallback_reasons"]),
        ),
        *_family(
            "judge_prechecks_total",
            "counter",
            "Rewards decided by a pre-check by reason.",
            _labelled("judge_prechecks_total", "reason", metrics["precheck_reasons"]),
        ),
        *_family(
            "judge_errors_total",
            "counter",
            "Failed judge attempts by error kind (before any fallback).",
            _labelled("judge_errors_total", "kind", metrics["errors"]),
        ),
        *_family(
            "judge_calls_total",
            "counter",
            "HTTP calls to the judge server.",
            [_sample("judge_calls_total", {}, metrics["judge_calls"])],
        ),
        *_family(
            "judge_items_total",
            "counter",
            "Items sent to the judge server.",
            [_sample("judge_items_total", {}, metrics["judged_items"])],
        ),
        *_family(
            "judge_context_cuts_total",
            "counter",
            "Completions cut by tokens to fit the judge's context window.",
            [_sample("judge_context_cuts_total", {}, metrics["context_cuts"])],
        ),
        *_family(
            "judge_queue_size",
            "gauge",
            "Requests waiting for a judge batch.",
            [_sample("judge_queue_size", {}, metrics["current_queue_size"])],
        ),
        *_family(
            "judge_inflight",
            "gauge",
            "Judge batches in flight.",
            [_sample("judge_inflight", {}, metrics["inflight"])],
        ),
        *_family(
            "judge_circuit_breaker_state",
            "gauge",
            "1 for the circuit breaker's current state, 0 for the others.",
            [
                _sample("judge_circuit_breaker_state", {"state": s}, int(breaker["state"] == s))
                for s in states
            ],
        ),
        *_family(
            "judge_circuit_breaker_failures",
            "gauge",
            "Consecutive failed judge calls.",
            [_sample("judge_circuit_breaker_failures", {}, breaker["failures"])],
        ),
    ]
    return "\n".join(lines) + "\n"


# -- ASGI middleware ----------------------------------------------------------------------


async def _reject(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    detail: str,
    headers: Mapping[str, str] | None = None,
) -> None:
    response = JSONResponse({"detail": detail}, status_code=status, headers=dict(headers or {}))
    await response(scope, receive, send)


class BodyLimitMiddleware:
    """Answers 413 for bodies over ``max_bytes`` (declared or streamed), else replays the body."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"request body is larger than {self.max_bytes} bytes (max_body_bytes)"
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _reject(scope, receive, send, 413, too_large)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _reject(scope, receive, send, 413, too_large)
                return
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


class AuthMiddleware:
    """401 without ``Authorization: Bearer <key>`` on every path but ``open_paths``."""

    def __init__(self, app: ASGIApp, api_key: SecretStr | None, open_paths: frozenset[str] = OPEN_PATHS):
        self.app = app
        self.api_key = api_key
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.api_key is not None and scope["path"] not in self.open_paths:
            header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
            if not bearer_token_ok(header, self.api_key):
                detail = f"missing or invalid bearer token: send 'Authorization: Bearer <{API_KEY_ENV}>'"
                await _reject(scope, receive, send, 401, detail, {"WWW-Authenticate": "Bearer"})
                return
        await self.app(scope, receive, send)


class ObserveMiddleware:
    """Counts every HTTP request by endpoint and status and times it."""

    def __init__(self, app: ASGIApp, stats: ApiStats) -> None:
        self.app = app
        self.stats = stats

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            self.stats.record_request(scope["path"], status, time.perf_counter() - started)


# -- the service and the app --------------------------------------------------------------


class JudgeService:
    """The judge behind an app: one reward system, one health client, the HTTP stats."""

    def __init__(self, config: RewardConfig, settings: ApiSettings, stats: ApiStats) -> None:
        self.settings = settings
        self.stats = stats
        self.rewards: BaseJudgeReward = create_judge_reward(config)
        health_config = self.rewards.config.client_config().model_copy(
            update={"max_retries": 0, "timeout": HEALTH_TIMEOUT_S}
        )
        self._health_client = JudgeClient(health_config)

    async def score(self, items: Sequence[JudgeItem]) -> list[dict[str, Any]]:
        """Reward dicts for ``items``, in order, through the adapter's batched path."""
        results = await self.rewards.areward_batch([item.to_request() for item in items])
        self.stats.record_results(results)
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

    def metrics_text(self) -> str:
        """Prometheus exposition of the adapter's and the HTTP layer's metrics."""
        return render_prometheus(self.rewards.get_metrics(), self.stats)

    async def aclose(self) -> None:
        """Close the reward system (its loop thread joins off this loop) and the health client."""
        await self._health_client.aclose()
        await asyncio.to_thread(self.rewards.close)


def judge_service(request: Request) -> JudgeService:
    """FastAPI dependency: the app's ``JudgeService`` (set up by the lifespan)."""
    return request.app.state.service


Service = Annotated[JudgeService, Depends(judge_service)]


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = validation_errors(exc.errors())
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return JSONResponse({"detail": detail, "errors": errors}, status_code=422)


def _resolve_config(config: ConfigLike) -> RewardConfig:
    resolved = RewardConfig.from_any(config)
    if resolved.judge_urls and len(resolved.judge_urls) > 1:
        raise JudgeConfigError(
            "the HTTP API serves one judge: set judge_url (or one judge_urls entry); "
            "run one API per judge for an ensemble"
        )
    return resolved


def base_app(
    config: ConfigLike,
    settings: ApiSettings,
    *,
    title: str,
    endpoints: Iterable[str],
) -> FastAPI:
    """An app with the judge service, middleware, 422 format, ``/health`` and ``/metrics``."""
    resolved = _resolve_config(config)
    stats = ApiStats({"/health", "/metrics", *endpoints})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = JudgeService(resolved, settings, stats)
        app.state.service = service
        try:
            yield
        finally:
            await service.aclose()

    app = FastAPI(title=title, lifespan=lifespan)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(AuthMiddleware, api_key=settings.api_key)
    app.add_middleware(ObserveMiddleware, stats=stats)

    @app.get("/health", response_model=HealthResponse)
    async def health(service: Service) -> JSONResponse:
        """The upstream judge: reachable, model, circuit breaker; 503 if down with fallback off."""
        status_code, report = await service.health()
        return JSONResponse(report.model_dump(), status_code=status_code)

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics(service: Service) -> PlainTextResponse:
        """Prometheus text: requests, latency histograms, cache hits, fallbacks, breaker state."""
        return PlainTextResponse(service.metrics_text(), media_type="text/plain; version=0.0.4")

    return app


def create_app(
    config: ConfigLike = None,
    api_key: str | SecretStr | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_batch: int = DEFAULT_MAX_BATCH,
) -> FastAPI:
    """The seed's judge server API on one judge (config: dict, ``RewardConfig`` or YAML path)."""
    try:
        settings = ApiSettings(api_key=api_key, max_body_bytes=max_body_bytes, max_batch=max_batch)
    except ValidationError as err:
        raise JudgeConfigError(f"invalid API settings: {validation_errors(err.errors())}") from None
    app = base_app(config, settings, title="judge-vllm judge API", endpoints=("/judge", "/batch_judge"))

    @app.post("/judge")
    async def judge(item: JudgeItem, service: Service) -> JudgeResponse:
        """Score one completion."""
        (result,) = await service.score([item])
        return JudgeResponse.from_result(result)

    @app.post("/batch_judge")
    async def batch_judge(batch: BatchJudgeRequest, service: Service) -> BatchJudgeResponse:
        """Score several completions in one adapter batch; responses in request order."""
        check_batch_length(len(batch.requests), service.settings, "requests")
        results = await service.score(batch.requests)
        return BatchJudgeResponse(responses=[JudgeResponse.from_result(r) for r in results])

    return app


# -- running ------------------------------------------------------------------------------


def api_config(config: str | Path | None, judge_url: str | None) -> RewardConfig:
    """The reward config from a YAML path (or defaults), with ``judge_url`` overriding when given."""
    resolved = RewardConfig.from_any(config)
    if judge_url is None:
        return resolved
    try:
        return RewardConfig.model_validate(
            {**resolved.model_dump(), "judge_url": judge_url, "judge_urls": None}
        )
    except ValidationError as err:
        raise JudgeConfigError(f"--judge-url {judge_url!r}: {err.errors()[0]['msg']}") from None


def serve(app: FastAPI, host: str, port: int) -> None:
    """Run an app in the foreground under uvicorn until interrupted."""
    uvicorn.run(app, host=host, port=port, log_level="info")


def run_api(
    *,
    config: str | Path | None,
    judge_url: str | None,
    host: str,
    port: int,
    api_key: str | None,
    max_body_bytes: int | None,
    max_batch: int | None,
) -> None:
    """``judge-vllm api``: the key comes from the flag, else ``JUDGE_API_KEY``; None = default limit."""
    key = api_key or os.environ.get(API_KEY_ENV) or None
    resolved = api_config(config, judge_url)
    app = create_app(
        resolved,
        api_key=key,
        max_body_bytes=max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        max_batch=max_batch or DEFAULT_MAX_BATCH,
    )
    logger.warning(
        "judge API on http://%s:%d for %s (auth %s)", host, port, resolved.judge_url, "on" if key else "off"
    )
    serve(app, host, port)
