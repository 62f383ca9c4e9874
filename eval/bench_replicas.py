"""``judge-bench --replicas``: how judge_replicas scales, measured side by side in one run.

(h) judgments/s through ``reward_batch`` with 1, 2, 4 and 8 loopback fake replicas (separate
    processes), each with a fixed latency per request and a bound on requests served at once,
    so one replica's capacity is known (``concurrency / latency``);
(i) with ``--real-replicas``: vLLM's prefix-cache hit rate on two real vLLM CPU servers for
    GRPO-shaped traffic (groups of completions sharing a question), routed by judge_replicas
    (group affinity) vs round-robin (alternate items to each server).
The section is written into ``docs/BENCHMARKS.md`` between its markers (the rest is kept).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from adapter import JudgeRewardSystem
from adapter.observability.metrics import percentile
from judge_vllm import launcher
from judge_vllm.testing.ports import free_port

__all__ = ["prefix_cache_affinity", "replica_scaling", "slow_replica", "write_section"]

START = "<!-- judge-bench --replicas: start -->"
END = "<!-- judge-bench --replicas: end -->"
FAKE_START_TIMEOUT_S = 30.0


@contextmanager
def fake_replicas(
    n: int, latency_s: float, concurrency: int, slow: dict[int, float] | None = None
) -> Iterator[list[str]]:
    """``n`` fake judge servers in their own processes (``slow``: replica index -> its own
    latency); yields their URLs."""
    plans = [
        json.dumps({"latency_s": (slow or {}).get(i, latency_s), "max_concurrency": concurrency})
        for i in range(n)
    ]
    ports = [free_port() for _ in range(n)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "judge_vllm.testing.fake_server", "--port", str(p), "--plan", plan],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p, plan in zip(ports, plans, strict=True)
    ]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        for url, process in zip(urls, processes, strict=True):
            launcher.wait_healthy(url, FAKE_START_TIMEOUT_S, process)
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(10)


STORY = (
    "A farmer keeps {g} rows of apple trees and each row holds {g} trees; every tree gives a "
    "crate of apples in a good year and half a crate in a dry one. "
)


def grpo_items(groups: int, size: int, tag: str = "", story: int = 0) -> list[dict[str, str]]:
    """``groups`` questions with ``size`` completions each (a GRPO step's shape); ``story``
    sentences of context make the question long, as math and reasoning prompts are."""
    return [
        {
            "prompt": f"{tag}Question {g}: "
            + STORY.format(g=g) * story
            + f"What is {g} + {g}? Explain briefly.",
            "completion": f"Attempt {k}: {g} + {g} = {2 * g + k % 2}, so the answer is {2 * g + k % 2}.",
            "answer": str(2 * g),
        }
        for g in range(groups)
        for k in range(size)
    ]


def _rate(urls: Sequence[str], items: list[dict[str, str]], concurrency: int) -> float:
    config = {
        "judge_replicas" if len(urls) > 1 else "judge_url": list(urls) if len(urls) > 1 else urls[0],
        "use_cache": False,
        "max_batch_size": 1,  # one request per item: a replica's capacity is concurrency / latency
        "max_concurrent_requests": 2 * concurrency * len(urls),
        "reward_timeout": 120.0,
    }
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(items[:32])  # warm-up: connections, model discovery
        started = time.perf_counter()
        results = rs.reward_batch(items)
        elapsed = time.perf_counter() - started
    judged = sum(r["source"] == "judge" for r in results)
    if judged != len(items):
        raise RuntimeError(f"only {judged} of {len(items)} items were judged")
    return len(items) / elapsed


def replica_scaling(
    counts: Sequence[int] = (1, 2, 4, 8),
    latency_s: float = 0.05,
    concurrency: int = 4,
    per_replica: int = 400,
) -> list[tuple[int, float]]:
    """Judgments/s with each number of fake replicas (``per_replica`` items for each replica)."""
    rates = []
    for n in counts:
        with fake_replicas(n, latency_s, concurrency) as urls:
            rates.append((n, _rate(urls, grpo_items(per_replica * n // 8, 8), concurrency)))
    return rates


def _prefix_counters(url: str) -> tuple[float, float]:
    """vLLM's prefix-cache (hits, queries) token counters from ``/metrics``."""
    text = httpx.get(url + "/metrics", timeout=10).text
    values = {"hits": 0.0, "queries": 0.0}
    for line in text.splitlines():
        for name in values:
            if line.startswith(f"vllm:prefix_cache_{name}_total"):
                values[name] += float(line.rsplit(" ", 1)[1])
    return values["hits"], values["queries"]


def _hit_rate(urls: Sequence[str], run: Callable[[], object]) -> float:
    before = [_prefix_counters(u) for u in urls]
    run()
    after = [_prefix_counters(u) for u in urls]
    hits = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
    queries = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
    return hits / queries if queries else 0.0


def prefix_cache_affinity(
    urls: Sequence[str], groups: int = 8, size: int = 8, story: int = 12
) -> dict[str, float]:
    """Prefix-cache hit rate for GRPO-shaped traffic on real servers (questions of ~400 tokens):
    affinity vs round-robin."""
    common = {"use_cache": False, "max_batch_size": 8, "reward_timeout": 600.0, "mode": "fast"}

    def affinity() -> None:
        with JudgeRewardSystem({**common, "judge_replicas": list(urls)}) as rs:
            rs.reward_batch(grpo_items(groups, size, "affinity ", story))

    def round_robin() -> None:
        items = grpo_items(groups, size, "round-robin ", story)
        systems = [JudgeRewardSystem({**common, "judge_url": u}) for u in urls]
        try:
            for i, item in enumerate(items):
                systems[i % len(systems)].reward(**item)
        finally:
            for system in systems:
                system.close()

    return {"affinity": _hit_rate(urls, affinity), "round_robin": _hit_rate(urls, round_robin)}


def _latencies(urls: Sequence[str], rounds: int) -> tuple[float, float]:
    """p50 and p95 of the per-reward latency over ``rounds`` GRPO steps (after warm-up steps)."""
    config = {
        "judge_replicas": list(urls),
        "use_cache": False,
        "reward_timeout": 60.0,
        "circuit_breaker_cooldown": 600.0,
    }
    latencies: list[float] = []
    with JudgeRewardSystem(config) as rs:
        for step in range(rounds // 2):  # warm-up: connections, model discovery, outlier ejection
            rs.reward_batch(grpo_items(4, 8, tag=f"warm {step} "))
        for step in range(rounds):
            latencies += [r["latency_ms"] for r in rs.reward_batch(grpo_items(4, 8, tag=f"step {step} "))]
    latencies.sort()
    return percentile(latencies, 50), percentile(latencies, 95)


def slow_replica(
    latency_s: float = 0.05, slow_s: float = 1.0, rounds: int = 20
) -> dict[str, tuple[float, float]]:
    """Reward latency (p50, p95 in ms) on 3 fake replicas, all healthy vs one ``slow_s`` a request."""
    results = {}
    for name, slow in (("healthy", None), ("one slow", {2: slow_s})):
        with fake_replicas(3, latency_s, 8, slow) as urls:
            results[name] = _latencies(urls, rounds)
    return results


def section(
    rates: list[tuple[int, float]],
    latency_s: float,
    concurrency: int,
    prefix: dict[str, float] | None,
    slow: dict[str, tuple[float, float]] | None = None,
) -> str:
    """The BENCHMARKS.md section for these measurements."""
    one = rates[0][1]
    lines = [
        START,
        f"## (h) judge_replicas: judgments/s with N fake replicas ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"`judge-bench --replicas`: each replica is a loopback fake judge in its own process answering after "
        f"{latency_s * 1000:.0f} ms, at most {concurrency} requests at once (capacity "
        f"{concurrency / latency_s:.0f} judgments/s); one item per request (`max_batch_size: 1`), GRPO-shaped "
        "items (groups of 8 sharing a question), no cache. Target: N replicas >= 0.9 x N x one replica.",
        "",
        "| replicas | judgments/s | x one replica | target |",
        "|---|---|---|---|",
    ]
    for n, rate in rates:
        lines.append(f"| {n} | {rate:.0f} | {rate / one:.2f} | >= {0.9 * n:.1f} |")
    if slow is not None:
        lines += [
            "",
            "## (h2) One slow replica: reward latency with outlier ejection",
            "",
            "3 fake replicas answering after 50 ms (8 at once); then the same with one answering after 1 s, "
            "alive but slow. 20 GRPO steps of 4 groups x 8 after 10 warm-up steps; the slow replica is "
            "ejected once its median is 3x its peers' (adapter/dispatch/replicas.py).",
            "",
            "| replicas | reward latency p50 | p95 |",
            "|---|---|---|",
            *(f"| {name} | {p50:.0f} ms | {p95:.0f} ms |" for name, (p50, p95) in slow.items()),
        ]
    if prefix is not None:
        lines += [
            "",
            "## (i) Prefix-cache hit rate on two real vLLM CPU replicas, GRPO-shaped traffic",
            "",
            "8 groups x 8 completions, each question ~400 tokens, `mode: fast`, the rubric prompt; "
            "`--real-replicas` names the two servers (the second with a 512 MiB KV cache).",
            "",
            "| routing | prefix-cache hit rate |",
            "|---|---|",
            f"| judge_replicas (group affinity) | {prefix['affinity']:.1%} |",
            f"| round-robin (items alternate between the servers) | {prefix['round_robin']:.1%} |",
        ]
    lines += ["", END]
    return "\n".join(lines)


def write_section(path: Path, text: str, start: str = START, end: str = END) -> None:
    """Replace the section between the markers in ``path`` (append it if absent)."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if start in current and end in current:
        head, rest = current.split(start, 1)
        current = head + text + rest.split(end, 1)[1]
    else:
        current = current.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(current, encoding="utf-8")
