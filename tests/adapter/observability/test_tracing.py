"""OpenTelemetry spans per judge call (``tracing: true``), read back with the SDK's in-memory exporter."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import adapter.observability.tracing
from adapter import JudgeRewardSystem
from adapter.observability.tracing import SPAN_NAME
from judge_vllm.testing.fake_server import FaultPlan

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The process's TracerProvider (set once: OpenTelemetry refuses a second) into an exporter."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _traced(url: str, tmp_path, **overrides: object) -> JudgeRewardSystem:
    """A reward system with tracing on; one batch window long enough for ``ITEMS``."""
    settings = {"max_retries": 0, "batch_wait": 0.5, "tracing": True, **overrides}
    return JudgeRewardSystem({"judge_url": url, "cache_dir": str(tmp_path / "cache"), **settings})


ITEMS = [
    {"prompt": "What is 2+2?", "completion": "It is 4.", "answer": "4", "answer_type": "NUMBER"},
    {"prompt": "What is 2+3?", "completion": "It is 6.", "answer": "5", "answer_type": "NUMBER"},
    {"prompt": "What is 2+5?", "completion": "It is 7.", "answer": "7", "answer_type": "NUMBER"},
]


def test_one_client_span_per_judge_batch_with_its_attributes(fake_judge, tmp_path, spans):
    with _traced(fake_judge.url, tmp_path) as rs:
        rs.reward_batch(ITEMS)
        rs.reward_batch(ITEMS)  # from the cache: no judge call, no span
    (span,) = spans.get_finished_spans()
    assert span.name == SPAN_NAME and span.kind is SpanKind.CLIENT
    attributes = dict(span.attributes)
    assert attributes.pop("judge.latency_ms") >= 0
    assert attributes == {
        "judge.batch_size": 3,
        "judge.model": "fake-judge",
        "judge.profile": "binary",
        "judge.endpoint": "/v1/chat/completions/batch",
        "judge.outcome": "ok",
        "judge.failed_items": 0,
    }
    assert span.status.status_code is StatusCode.UNSET


def test_a_failed_call_is_an_error_span_naming_the_error_type(fake_judge, tmp_path, spans):
    with _traced(fake_judge.url, tmp_path, use_cache=False) as rs:
        fake_judge.set_plan(FaultPlan(error_rate=1.0))  # the judge goes down after the start
        results = rs.reward_batch(ITEMS)
    assert {r["source"] for r in results} == {"rule_fallback"}
    (span,) = spans.get_finished_spans()
    assert span.attributes["judge.outcome"] == "failed" and span.attributes["judge.failed_items"] == 3
    assert span.attributes["judge.error"] == "JudgeUnavailableError"
    assert span.status.status_code is StatusCode.ERROR


def test_off_by_default_no_spans(fake_judge, tmp_path, spans):
    with _traced(fake_judge.url, tmp_path, tracing=False) as rs:
        rs.reward_batch(ITEMS)
    assert spans.get_finished_spans() == ()


def test_on_without_opentelemetry_warns_and_rewards_go_on(fake_judge, tmp_path, spans, monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import opentelemetry -> ImportError
    with caplog.at_level(logging.WARNING, logger="JudgeReward"), _traced(fake_judge.url, tmp_path) as rs:
        results = rs.reward_batch(ITEMS)
    assert [r["reward"] for r in results] == [1.0, 0.0, 1.0]
    assert "opentelemetry is not installed" in caplog.text
    assert spans.get_finished_spans() == ()


def test_all_names_what_the_module_defines():
    assert [name for name in adapter.observability.tracing.__all__ if not hasattr(adapter.observability.tracing, name)] == []
