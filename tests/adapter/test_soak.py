"""20,000 requests through the adapter against a faulty loopback judge that restarts mid-run."""

import pytest

from eval.soak import run_soak
from judge_vllm.testing.fake_server import FaultPlan

pytestmark = pytest.mark.slow


def test_soak_every_request_answered_once_within_timeout():
    report = run_soak(20_000, FaultPlan(error_rate=0.05, hang_rate=0.01, seed=3), timeout_s=2.0)
    assert report.answered == report.requests == 20_000
    assert report.unique_ids_matched
    assert report.faults_injected["error"] > 0 and report.faults_injected["hang"] > 0
    assert report.latency_ms_p99 <= report.timeout_s * 1000 + 500
    assert report.sources["judge"] > 0.9 * report.requests
    assert report.judge_after_restart == 50
    assert report.rss_growth_mb < 200
