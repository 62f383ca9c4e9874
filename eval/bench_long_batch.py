"""``judge-bench --long-batch``: a batch of long completions through ``reward_batch`` (issue 25).

``rows`` NUMBER completions of ``kb`` KB each (random words and numbers, the answer last) are
scored at ``timeout`` by a fresh reward system (its cache in a new folder: every row a miss)
against the loopback fake judge in its own process. The fake's tokenizer is one token per
character and its context 4,096 tokens, so every prompt (6,000 characters of completion after
``max_completion_chars``) is cut to fit with ``/tokenize`` and ``/detokenize``: the worst case, as
digits under a tokenizer that splits them. Each run reports the rows by source, wall seconds, the
slowest reward, this process's and the fake's CPU seconds and the fake's requests by route. Then
each stage alone over the same rows, one after the other: the pre-checks (in this thread), and the
judge client (fitting and judging, ``judge_many`` in batches, no adapter). The section is written
into ``docs/BENCHMARKS.md`` between its markers.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypedDict

import httpx

from adapter import JudgeRewardSystem
from adapter.config import RewardConfig
from adapter.pipeline.prechecks import precheck
from judge_vllm import launcher
from judge_vllm.client import JudgeClient
from judge_vllm.schemas import JudgeRequest
from judge_vllm.testing.ports import free_port

__all__ = ["END", "START", "fake_judge_process", "long_batch", "long_rows", "section"]

START = "<!-- judge-bench --long-batch: start -->"
END = "<!-- judge-bench --long-batch: end -->"
FAKE_START_TIMEOUT_S = 30.0
MAX_BATCH_SIZE = 64
JUDGE_ROUTES = ("/v1/chat/completions/batch", "/v1/chat/completions", "/v1/completions")
_WORDS = ("the", "sum", "of", "we", "get", "then", "so", "step", "add", "carry", "value", "is")


class Run(TypedDict):
    """One ``reward_batch`` call of the benchmark: what came back, how long, what it cost."""

    rows: int
    wall_s: float
    max_latency_s: float
    client_cpu_s: float
    fake_cpu_s: float
    sources: dict[str, int]
    tokenize: int
    detokenize: int
    judge_calls: int


def long_rows(n: int, kb: float, seed: int = 0) -> list[dict[str, str]]:
    """``n`` NUMBER rows whose completions are ``kb`` KB of words and numbers ending in the answer."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        words: list[str] = []
        size = 0
        while size < kb * 1000 - 40:
            word = rng.choice(_WORDS) if rng.random() < 0.7 else str(rng.randint(0, 9999))
            words.append(word)
            size += len(word) + 1
        answer = rng.randint(0, 999)
        rows.append(
            {
                "prompt": f"Question {seed}-{i}: what is {answer} + 0?",
                "completion": " ".join(words) + f" The answer is {answer}.",
                "answer": str(answer),
                "answer_type": "NUMBER",
            }
        )
    return rows


@contextmanager
def fake_judge_process(plan: str = "{}") -> Iterator[str]:
    """The fake judge in its own process (``plan``: a ``FaultPlan`` as JSON); yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "judge_vllm.testing.fake_server", "--port", str(port), "--plan", plan],
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        launcher.wait_healthy(url, FAKE_START_TIMEOUT_S, process)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _fake_stats(url: str) -> tuple[Counter[str], float]:
    stats = httpx.get(url + "/fake/stats", timeout=10).json()
    return Counter(stats["counts"]), float(stats["cpu_s"])


def _reward_batch(url: str, rows: list[dict[str, str]], timeout: float) -> Run:
    config = {"judge_url": url, "reward_timeout": timeout, "max_batch_size": MAX_BATCH_SIZE,
              "cache_dir": tempfile.mkdtemp(prefix="bench-long-batch-")}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(long_rows(2, 1, seed=-1))  # connect; discover the model and its labels' tokens
        counts, fake_cpu = _fake_stats(url)
        cpu, started = time.process_time(), time.perf_counter()
        results = rs.reward_batch(rows)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        after, fake_after = _fake_stats(url)
    calls = after - counts
    return {
        "rows": len(rows),
        "wall_s": wall,
        "max_latency_s": max(r["latency_ms"] for r in results) / 1000,
        "client_cpu_s": cpu,
        "fake_cpu_s": fake_after - fake_cpu,
        "sources": dict(Counter(r["source"] for r in results)),
        "tokenize": calls["/tokenize"],
        "detokenize": calls["/detokenize"],
        "judge_calls": sum(calls[route] for route in JUDGE_ROUTES),
    }


def _stages(url: str, rows: list[dict[str, str]], timeout: float) -> dict[str, float]:
    """Seconds (wall and CPU) of each stage alone over ``rows``."""
    client_config = RewardConfig.from_any({"judge_url": url, "reward_timeout": timeout}).client_config()
    cpu = time.process_time()
    for row in rows:  # as the reward system runs them: on the part the judge is shown
        precheck(row["completion"], row["answer"], row["answer_type"], shown_chars=client_config.max_completion_chars)
    precheck_cpu = time.process_time() - cpu
    requests = [
        JudgeRequest(
            prompt=r["prompt"], completion=r["completion"], answer=r["answer"], answer_type=r["answer_type"]
        )
        for r in rows
    ]

    async def judge_all() -> tuple[float, float, float]:
        async with JudgeClient(client_config) as client:
            await client.judge_many(requests[:2])
            _, fake_cpu = _fake_stats(url)
            cpu, started = time.process_time(), time.perf_counter()
            batches = [requests[k : k + MAX_BATCH_SIZE] for k in range(0, len(requests), MAX_BATCH_SIZE)]
            await asyncio.gather(*(client.judge_many(batch) for batch in batches))
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            return wall, cpu, _fake_stats(url)[1] - fake_cpu

    client_wall, client_cpu, fake_cpu = asyncio.run(judge_all())
    return {"precheck_cpu_s": precheck_cpu, "client_wall_s": client_wall, "client_cpu_s": client_cpu,
            "fake_cpu_s": fake_cpu, "rows": len(rows)}  # fmt: skip


def long_batch(
    sizes: Sequence[int], kb: float, timeout: float, repeats: int
) -> tuple[list[Run], dict[str, float]]:
    """Runs of ``reward_batch`` for each size, ``repeats`` times (sizes alternating), and each
    stage alone over the largest size's rows (with the machine's load average at the start)."""
    runs = []
    load = os.getloadavg()[0]
    with fake_judge_process() as url:
        for repeat in range(repeats):
            for n in sizes:
                runs.append(_reward_batch(url, long_rows(n, kb, seed=repeat * 100_000 + n), timeout))
        stages = _stages(url, long_rows(max(sizes), kb, seed=-2), timeout)
    return runs, {**stages, "load_1m": load}


def _ms(seconds: float, rows: int) -> str:
    return f"{1000 * seconds / rows:.1f} ms"


def section(runs: list[Run], stages: dict[str, float], kb: float, timeout: float, command: str) -> str:
    """The BENCHMARKS.md section for these runs."""
    lines = []
    for run in runs:
        sources = run["sources"]
        others = {k: v for k, v in sources.items() if k not in ("judge", "rule_fallback")}
        other = ", ".join(f"{v:,} {k}" for k, v in sorted(others.items())) or "0"
        lines.append(
            f"| {run['rows']:,} | {sources.get('judge', 0):,} | {sources.get('rule_fallback', 0):,} | {other} "
            f"| {run['wall_s']:.1f} | {run['max_latency_s']:.1f} | {run['client_cpu_s']:.1f} "
            f"({_ms(run['client_cpu_s'], run['rows'])}) | {run['fake_cpu_s']:.1f} | {run['tokenize']:,} "
            f"| {run['detokenize']:,} | {run['judge_calls']:,} |"
        )
    n = int(stages["rows"])
    judged = [r["rows"] for r in runs if r["sources"].get("judge", 0) == r["rows"]]
    return "\n".join(
        [
            START,
            f"## (l) A batch of long completions against the fake judge ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
            "",
            f"`{command}`: NUMBER completions of {kb:g} KB (words and numbers, the answer last), `reward_timeout: {timeout:g}`,"
            f" `max_batch_size: {MAX_BATCH_SIZE}`, cache on (every row a miss), the loopback fake judge in its own"
            " process. Its tokenizer is one token per character and its context 4,096 tokens, so every prompt is cut"
            " to fit with `/tokenize` and `/detokenize` (the worst case: digits under a tokenizer that splits them)."
            " CPU seconds are this process's (the reward system, all its threads) and the fake's. Load average"
            f" at the start: {stages['load_1m']:.1f} on {os.cpu_count()} cores.",
            "",
            "| rows | judge | rule_fallback | other | wall s | slowest reward s | client CPU s (a row) | fake CPU s"
            " | /tokenize | /detokenize | judge calls |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            *lines,
            "",
            (f"Largest batch judged whole: {max(judged):,} rows." if judged else "No batch was judged whole.")
            + f" Each stage alone over {n:,} other rows, one after the other: pre-checks"
            f" {_ms(stages['precheck_cpu_s'], n)} CPU a row; the judge client (fitting and judging, batches of"
            f" {MAX_BATCH_SIZE}, no adapter) {stages['client_wall_s']:.1f} s wall, {_ms(stages['client_cpu_s'], n)}"
            f" CPU a row, the fake {_ms(stages['fake_cpu_s'], n)} CPU a row.",
            "",
            END,
        ]
    )
