"""The judge server API over HTTP, on the same judge core as the Python adapter.

    judge-vllm api --judge-url http://localhost:8888 --port 8889 --api-key KEY

``POST /judge``, ``POST /batch_judge``, ``POST /judge_group``, ``GET /health`` and ``GET /metrics``
(docs/http_api.md). Every reward comes from one reward system per app (pre-checks, cache,
single-flight, breaker, micro-batching, rule fallback): concurrent ``/judge`` calls share judge
batches, a ``/batch_judge`` is one ``areward_batch`` and a ``/judge_group`` one ``areward_group``. ``base_app`` is what other HTTP front ends build on
(``adapter.integrations.openrlhf``).

Modules: ``models`` (wire models, settings), ``validation`` (422 format, batch limit), ``auth``
(bearer key), ``middleware`` (413, observation), ``metrics`` (Prometheus), ``service`` (the
reward system and /health), ``app`` (the FastAPI apps), ``run`` (foreground serving).
"""

from adapter.http.app import base_app, create_app
from adapter.http.auth import API_KEY_ENV, AuthMiddleware, bearer_token_ok
from adapter.http.metrics import ApiMetrics
from adapter.http.middleware import BodyLimitMiddleware, ObserveMiddleware
from adapter.http.models import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_BODY_BYTES,
    AnswerType,
    ApiSettings,
    BatchJudgeRequest,
    BatchJudgeResponse,
    BreakerHealth,
    GroupMemberResponse,
    HealthResponse,
    JudgeGroupRequest,
    JudgeGroupResponse,
    JudgeItem,
    JudgeResponse,
    ResponseMetadata,
    RubricCriterion,
    UnicodeText,
    UpstreamHealth,
)
from adapter.http.run import api_config, run_api, serve
from adapter.http.service import JudgeService, Service, health_status
from adapter.http.validation import check_batch_length, check_one_group, validation_errors

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_MAX_BATCH",
    "DEFAULT_MAX_BODY_BYTES",
    "AnswerType",
    "ApiMetrics",
    "ApiSettings",
    "AuthMiddleware",
    "BatchJudgeRequest",
    "BatchJudgeResponse",
    "BodyLimitMiddleware",
    "BreakerHealth",
    "GroupMemberResponse",
    "HealthResponse",
    "JudgeGroupRequest",
    "JudgeGroupResponse",
    "JudgeItem",
    "JudgeResponse",
    "JudgeService",
    "ObserveMiddleware",
    "ResponseMetadata",
    "RubricCriterion",
    "Service",
    "UnicodeText",
    "UpstreamHealth",
    "api_config",
    "base_app",
    "bearer_token_ok",
    "check_batch_length",
    "check_one_group",
    "create_app",
    "health_status",
    "run_api",
    "serve",
    "validation_errors",
]
