"""``judge-bench`` (c) and (e): the adapter's own cost against a zero-work judge.

A loopback fake judge in its own process answers at once, so what is measured is the client:
``reward_batch`` throughput on the judge path and on cache hits, sync ``.reward()`` latency
on cache hits and on the judge path (minus a raw HTTP call to the same server), and the RSS
growth over many requests.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx

from adapter import JudgeRewardSystem
from adapter.observability.judgment_log import JudgmentLogCounts
from eval.soak import _rss_mb
from judge_vllm import launcher

__all__ = ["latencies", "overhead", "overhead_section", "percentile"]


@contextmanager
def _system(config: dict[str, object], logs: list[JudgmentLogCounts]) -> Iterator[JudgeRewardSystem]:
    """A reward system, closed on exit; its judgment log's final counts go to ``logs``."""
    rs = JudgeRewardSystem(config)
    try:
        yield rs
    finally:
        rs.close()
        counts = rs.judgment_log.snapshot()
        if counts is not None:
            logs.append(counts)


def overhead(n: int, memory_requests: int, extra_config: dict[str, object] | None = None) -> dict[str, float]:
    """Adapter throughput and added latency against a loopback fake in another process.

    ``extra_config`` is merged into every reward system's config (e.g. a judgment log); with a
    judgment log, its lines written, dropped and lost are summed into ``log_*``.
    """
    port = 18899
    server = subprocess.Popen([sys.executable, "-m", "judge_vllm.testing.fake_server", "--port", str(port)],
                              stdout=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        launcher.wait_healthy(url, 30)
        config = {"judge_url": url, "cache_dir": tempfile.mkdtemp(prefix="bench-"), "max_batch_size": 64,
                  "batch_wait": 0.002, **(extra_config or {})}  # fmt: skip
        logs: list[JudgmentLogCounts] = []
        items = [
            {"prompt": f"q{i}", "completion": f"The answer is {i}.", "answer": str(i % 7)} for i in range(n)
        ]
        with _system(config, logs) as rs:
            rs.reward_batch(items[:100])
            started = time.perf_counter()
            rs.reward_batch(items[100:])
            miss_rate = (n - 100) / (time.perf_counter() - started)
            started = time.perf_counter()
            rs.reward_batch(items[100:])
            hit_batch_rate = (n - 100) / (time.perf_counter() - started)
            hit_lat = latencies(lambda i: rs.reward(**items[100 + i % (n - 100)]), 2000)
        with _system({**config, "use_cache": False, "batch_wait": 0.0}, logs) as rs:
            adapter_lat = latencies(lambda i: rs.reward(**items[i % n]), 1000)
        with httpx.Client(base_url=url) as raw:
            body = {"model": "fake-judge", "messages": [{"role": "user", "content": "x"}]}
            raw_lat = latencies(lambda i: raw.post("/v1/chat/completions", json=body), 1000)
        with _system({**config, "use_cache": False}, logs) as rs:
            rs.reward_batch(items[:1000])
            before = _rss_mb()
            for start in range(0, memory_requests, 5000):
                rs.reward_batch([{**items[0], "prompt": f"m{start + j}"} for j in range(5000)])
            rss_growth = _rss_mb() - before
    finally:
        server.terminate()
        server.wait()
    return {
        "miss_rate": miss_rate,
        "hit_batch_rate": hit_batch_rate,
        "hit_p50_us": statistics.median(hit_lat) * 1e6,
        "hit_p99_us": percentile(hit_lat, 99) * 1e6,
        "added_p50_ms": (statistics.median(adapter_lat) - statistics.median(raw_lat)) * 1e3,
        "added_p99_ms": (percentile(adapter_lat, 99) - percentile(raw_lat, 99)) * 1e3,
        "raw_p50_ms": statistics.median(raw_lat) * 1e3,
        "rss_growth_mb": rss_growth,
        "memory_requests": memory_requests,
        "log_logged": sum(c["logged"] for c in logs),
        "log_dropped": sum(c["dropped"] for c in logs),
        "log_errors": sum(c["errors"] for c in logs),
    }


def latencies(call: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        started = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - started)
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def overhead_section(o: dict[str, float]) -> list[str]:
    """The (c) and (e) sections of BENCHMARKS.md for one ``overhead`` run."""
    return [
        "## (c) Client overhead against a zero-work loopback server (separate process)",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| `reward_batch` judgments/s, cache miss (judge path) | {o['miss_rate']:.0f} | >= 2,000 |",
        f"| `reward_batch` judgments/s, cache hit | {o['hit_batch_rate']:.0f} | |",
        f"| sync `.reward()` cache hit p50 / p99 | {o['hit_p50_us']:.0f} / {o['hit_p99_us']:.0f} µs | p50 < 200 µs |",
        f"| latency added by the adapter to one sync call, p50 / p99 | {o['added_p50_ms']:.2f} / {o['added_p99_ms']:.2f} ms"
        f" (raw HTTP p50 {o['raw_p50_ms']:.2f} ms) | |",
        "",
        "## (e) Memory",
        "",
        f"Adapter RSS growth after {o['memory_requests']:,} requests against the loopback server: "
        f"{o['rss_growth_mb']:.1f} MB (target < 100 MB)",
        "",
    ]
