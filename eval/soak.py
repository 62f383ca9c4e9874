"""Load and fault soak: many requests through the adapter against a faulty loopback judge.

Checks what a trainer relies on: every request answered (N in, N out, ids matched, none
duplicated), latency bounded by the timeout, memory bounded, and the judge source resuming
after the server restarts. ``python -m eval.soak --requests 20000`` prints the report.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import threading
import time
from collections import Counter

from pydantic import BaseModel

from adapter import JudgeRewardSystem, RewardDict
from adapter.observability.metrics import percentile
from judge_vllm.testing.fake_server import FakeJudgeServer, FaultPlan

__all__ = ["SoakReport", "run_soak"]


class SoakReport(BaseModel):
    """What a soak run observed."""

    requests: int
    answered: int
    unique_ids_matched: bool
    sources: dict[str, int]
    fallback_reasons: dict[str, int]
    latency_ms_p50: float
    latency_ms_p99: float
    latency_ms_max: float
    timeout_s: float
    rss_growth_mb: float
    judge_after_restart: int
    seconds: float
    faults_injected: dict[str, int]


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_soak(
    requests: int = 20_000,
    plan: FaultPlan | None = None,
    timeout_s: float = 2.0,
    restart: bool = True,
    chunk: int = 500,
) -> SoakReport:
    """Send ``requests`` through ``reward_batch`` in chunks; restart the server halfway."""
    plan = plan or FaultPlan(error_rate=0.05, hang_rate=0.01, seed=7)
    server = FakeJudgeServer(plan).start()
    port = server.port
    items = [
        {"prompt": f"soak question {i}", "completion": f"The answer is {i % 97}.", "answer": str(i % 89),
         "answer_type": "NUMBER", "request_id": f"soak-{i}"}
        for i in range(requests)
    ]  # fmt: skip
    results: list[RewardDict] = []
    config = {
        "judge_url": server.url, "cache_dir": tempfile.mkdtemp(prefix="soak-"), "use_cache": False,
        "reward_timeout": timeout_s, "max_retries": 2, "max_batch_size": 32, "batch_wait": 0.005,
        "circuit_breaker_threshold": 20, "circuit_breaker_cooldown": 0.5,
    }  # fmt: skip
    faults: Counter[str] = Counter()
    started = time.monotonic()
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(items[:10])  # warm up before measuring memory
        rss_before = _rss_mb()
        half = threading.Event()

        def drive() -> None:
            for start in range(0, requests, chunk):
                results.extend(rs.reward_batch(items[start : start + chunk]))
                if start + chunk >= requests // 2:
                    half.set()

        worker = threading.Thread(target=drive, name="soak-driver")
        worker.start()
        if restart:
            half.wait()
            faults.update(server.counts)
            server.stop()
            time.sleep(0.5)
            server = FakeJudgeServer(plan.model_copy(update={"seed": plan.seed + 1}), port=port).start()
        worker.join()
        faults.update(server.counts)
        server.set_plan(FaultPlan())
        time.sleep(rs.config.circuit_breaker_cooldown)
        rs.reward("probe", "The answer is 1.", "1")  # the half-open probe closes the breaker
        after = rs.reward_batch(
            [{**item, "prompt": "after " + item["prompt"], "request_id": None} for item in items[:50]]
        )
        rss_growth = _rss_mb() - rss_before
        metrics = rs.get_metrics()
    server.stop()
    latencies = sorted(r["latency_ms"] for r in results)
    return SoakReport(
        requests=requests,
        answered=sum(r["reward"] is not None for r in results),
        unique_ids_matched=[r["request_id"] for r in results] == [i["request_id"] for i in items],
        sources=dict(Counter(r["source"] for r in results)),
        fallback_reasons=metrics["fallback_reasons"],
        latency_ms_p50=percentile(latencies, 50),
        latency_ms_p99=percentile(latencies, 99),
        latency_ms_max=latencies[-1] if latencies else 0.0,
        timeout_s=timeout_s,
        rss_growth_mb=rss_growth,
        judge_after_restart=sum(r["source"] == "judge" for r in after),
        seconds=time.monotonic() - started,
        faults_injected={k: faults[k] for k in ("ok", "error", "hang", "garbage", "drop") if faults[k]},
    )


def main() -> None:
    """Run a soak and print its report as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--timeout", type=float, default=2.0)
    args = parser.parse_args()
    print(json.dumps(run_soak(args.requests, timeout_s=args.timeout).model_dump(), indent=2))


if __name__ == "__main__":
    main()
