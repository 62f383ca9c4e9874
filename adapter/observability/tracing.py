"""Optional OpenTelemetry spans: one per judge call (one HTTP batch), with ``tracing: true``.

Off by default, and then nothing here imports opentelemetry: a judge call costs one shared
``nullcontext``. On, with ``opentelemetry-api`` installed, each batch the dispatcher sends is a
CLIENT span ``judge.call`` under the process's TracerProvider (the trainer's own; with none set,
the API's default records nothing). On without the package: one warning, and calls go untraced.

Attributes, set when the call ends: ``judge.batch_size``, ``judge.model``, ``judge.profile``,
``judge.endpoint``, ``judge.outcome`` (``ok``, ``partial``: some items failed, ``failed``:
every item failed), ``judge.failed_items``, ``judge.error`` (the first error's type, never its
text) and ``judge.latency_ms``. A failed call's span has status ERROR.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Protocol

from judge_vllm.errors import JudgeError

if TYPE_CHECKING:  # an optional dependency: imported only when tracing is on
    from opentelemetry.trace import Span, Tracer

__all__ = ["SPAN_NAME", "TRACER_NAME", "JudgeCallTracer"]

logger = logging.getLogger("JudgeReward")

SPAN_NAME = "judge.call"
TRACER_NAME = "judge_vllm.adapter"
_UNTRACED: nullcontext[None] = nullcontext()


class _JudgeClient(Protocol):
    @property
    def known_model(self) -> str | None: ...

    def endpoint(self, items: int) -> str: ...


def _otel_tracer() -> Tracer | None:
    """The OpenTelemetry tracer, or None (with a warning) when the API is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        logger.warning(
            "tracing is on but opentelemetry is not installed (pip install 'judge-vllm[tracing]' "
            "and an SDK with an exporter); judge calls are not traced"
        )
        return None
    return trace.get_tracer(TRACER_NAME)


class JudgeCallTracer:
    """Spans for one reward system's judge calls (see the module docs)."""

    def __init__(self, enabled: bool, profile: str, client: _JudgeClient) -> None:
        self._tracer = _otel_tracer() if enabled else None
        self._profile = profile
        self._client = client

    def call(self) -> AbstractContextManager[Span | None]:
        """Around one judge call: the current span (None when not tracing)."""
        if self._tracer is None:
            return _UNTRACED
        from opentelemetry.trace import SpanKind

        return self._tracer.start_as_current_span(SPAN_NAME, kind=SpanKind.CLIENT)

    def finish(self, span: Span | None, size: int, errors: list[JudgeError], latency_ms: float) -> None:
        """What the call carried and how it ended, on its span."""
        if span is None:
            return
        outcome = "ok" if not errors else "failed" if len(errors) == size else "partial"
        span.set_attributes(
            {
                "judge.batch_size": size,
                "judge.model": self._client.known_model or "",
                "judge.profile": self._profile,
                "judge.endpoint": self._client.endpoint(size),
                "judge.outcome": outcome,
                "judge.failed_items": len(errors),
                "judge.latency_ms": latency_ms,
            }
        )
        if errors:
            span.set_attribute("judge.error", type(errors[0]).__name__)
        if outcome == "failed":
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, type(errors[0]).__name__))
