"""(k) Group rewards on a running judge: what each mode and schedule costs per GRPO group.

One group of ``n`` completions of one question (``mixed_items``: the first right, the others
wrong by 1, 2, ...) is scored with ``reward_group`` per mode, with no verdict cache, each on a
question of its own so no mode reuses another's prompts. Measured per row, side by side in one
run: judge requests, seconds, prompt and generated tokens and the prefix-cache hit rate (vLLM's
/metrics counters, before and after). The GPU column is an estimate, not a measurement: the
measured tokens at an assumed prefill and decode rate of a 1.5B judge on one data-centre GPU.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import httpx
from pydantic import BaseModel, ConfigDict

from adapter import JudgeRewardSystem
from eval.group_eval import judgments_behind

__all__ = ["END", "MODES", "START", "GroupCost", "group_costs", "section"]

START = "<!-- judge-bench --groups: start -->"
END = "<!-- judge-bench --groups: end -->"
# Assumed rates of a 1.5B judge on one A100/H100-class GPU with vLLM (prefill of uncached prompt
# tokens; decode tokens over a batch): stated, not measured here (no GPU on this machine).
GPU_PREFILL_TOKENS_S = 20_000.0
GPU_DECODE_TOKENS_S = 2_000.0
MODES: tuple[tuple[str, dict[str, object]], ...] = (
    ("pointwise", {"mode": "pointwise"}),
    ("pairwise, all_pairs", {"mode": "pairwise", "schedule": "all_pairs"}),
    ("pairwise, round_robin k=2", {"mode": "pairwise", "schedule": "round_robin", "opponents": 2}),
    ("pairwise, anchor (reference)", {"mode": "pairwise", "schedule": "anchor"}),
    ("listwise, n shifts", {"mode": "listwise"}),
)
COUNTERS = (
    "prompt_tokens_total",
    "generation_tokens_total",
    "prefix_cache_hits_total",
    "prefix_cache_queries_total",
)


class GroupCost(BaseModel):
    """One mode on one group."""

    model_config = ConfigDict(frozen=True)

    size: int
    mode: str
    judgments: int
    judged: int
    seconds: float
    prompt_tokens: float
    generated_tokens: float
    prefix_hit_rate: float | None

    @property
    def gpu_seconds(self) -> float:
        """The estimated time on a GPU: uncached prompt tokens prefilled, generated tokens decoded."""
        uncached = self.prompt_tokens * (1.0 - (self.prefix_hit_rate or 0.0))
        return uncached / GPU_PREFILL_TOKENS_S + self.generated_tokens / GPU_DECODE_TOKENS_S


def _counters(url: str) -> dict[str, float]:
    text = httpx.get(url + "/metrics", timeout=10).text
    totals = dict.fromkeys(COUNTERS, 0.0)
    for line in text.splitlines():
        for name in COUNTERS:
            if line.startswith(f"vllm:{name}{{"):
                totals[name] += float(line.rsplit(" ", 1)[1])
    return totals


def group_costs(
    url: str, sizes: Sequence[int], items_for: Callable[[int, int], Sequence[Mapping[str, object]]]
) -> list[GroupCost]:
    """Each mode of ``MODES`` on one group of each size; ``items_for(n, question)`` makes a group."""
    costs = []
    question = 1000  # far from the questions of the other sections
    for size in sizes:
        for name, group in MODES:
            question += 1
            items = items_for(size, question)
            config = {
                "judge_url": url,
                "use_cache": False,
                "reward_timeout": 900,
                "group": {**group, "deadline": 900},
            }
            before = _counters(url)
            with JudgeRewardSystem(config) as judge:
                started = time.monotonic()
                results = judge.reward_group(items)
                seconds = time.monotonic() - started
            after = _counters(url)
            delta = {k: after[k] - before[k] for k in COUNTERS}
            queries = delta["prefix_cache_queries_total"]
            costs.append(
                GroupCost(
                    size=size,
                    mode=name,
                    judgments=judgments_behind(results),
                    judged=sum(1 for r in results if r["source"] in ("judge", "cache")),
                    seconds=seconds,
                    prompt_tokens=delta["prompt_tokens_total"],
                    generated_tokens=delta["generation_tokens_total"],
                    prefix_hit_rate=delta["prefix_cache_hits_total"] / queries if queries else None,
                )
            )
    return costs


def section(costs: Sequence[GroupCost], model: str, machine: str) -> str:
    """The BENCHMARKS.md section for ``costs``."""
    lines = [
        START,
        f"## (k) Group rewards: cost per GRPO group by mode ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"`judge-bench --groups --judge-url URL`: judge {model}, {machine}. One group per row, no verdict cache; "
        "each row a question of its own. Judge requests: distinct comparisons answered (pairwise, listwise; a ranking that does not name each letter once is dropped) or "
        "members judged alone (pointwise). Prefix hit: share of prompt tokens vLLM's prefix cache served. "
        f"GPU estimate: the measured tokens at an assumed {GPU_PREFILL_TOKENS_S:,.0f} prefill and "
        f"{GPU_DECODE_TOKENS_S:,.0f} decode tokens/s (a 1.5B judge on one A100/H100-class GPU; not measured).",
        "",
        "| group | mode | judge requests | members judged | seconds (CPU) | prompt tokens | generated tokens "
        "| prefix hit | GPU estimate (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in costs:
        hit = "n/a" if c.prefix_hit_rate is None else f"{c.prefix_hit_rate:.0%}"
        lines.append(
            f"| {c.size} | {c.mode} | {c.judgments} | {c.judged}/{c.size} | {c.seconds:.1f} | {c.prompt_tokens:,.0f} "
            f"| {c.generated_tokens:,.0f} | {hit} | {c.gpu_seconds:.2f} |"
        )
    lines += ["", END]
    return "\n".join(lines)
