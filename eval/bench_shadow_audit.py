"""``judge-bench --shadow-audit``: the latency the shadow audit adds to a reward, side by side (issue 43).

Under ``strategy: cascade`` the rule decides the rows it can prove and the judge the rest; the
shadow audit also sends a sampled share of the rule's rows to the judge, in the background. This
measures what that costs the trainer: a reward system with the audit off (``shadow_rate: 0``)
and one with every rule-decided row audited (``shadow_rate: 1.0``, a call budget no run reaches),
alternated ``repeats`` times against the loopback fake judge in its own process (answering at
once: what is measured is the client's own work and the audit's competition for it), no cache:

- ``reward_batch`` rewards/s over ``n`` rows, half of them proved by the rule (the audit's rows),
  half left to the judge;
- sync ``.reward()`` latency, p50 and p99, of a row the rule proves (the row the audit samples)
  and of a row the judge decides (which shares the judge client with the audit's calls).

Then no reward is asked until the audit has judged the rows it holds (a trainer generating
between batches: the audit's judgments wait for such a gap). Each reward system's audit counts
(rows sampled and judged, dropped over the budget, failed) show that the audit did its work. The section is written into ``docs/BENCHMARKS.md`` between its markers.
"""

from __future__ import annotations

import statistics
import tempfile
import time

from adapter import JudgeRewardSystem
from adapter.observability.shadow_audit import MAX_PENDING
from eval.bench_long_batch import fake_judge_process
from eval.bench_overhead import latencies, percentile

__all__ = ["END", "START", "audit_rows", "section", "shadow_audit_cost"]

START = "<!-- judge-bench --shadow-audit: start -->"
END = "<!-- judge-bench --shadow-audit: end -->"
LATENCY_CALLS = 500
DRAIN_S = 120.0
# (key, what it measures, unit, digits)
MEASURES = (
    ("batch_rate", "`reward_batch` rewards/s (half rule, half judge)", "", 0),
    ("rule_p50_ms", "sync `.reward()` of a row the rule proves, p50", " ms", 3),
    ("rule_p99_ms", "sync `.reward()` of a row the rule proves, p99", " ms", 3),
    ("judge_p50_ms", "sync `.reward()` of a row the judge decides, p50", " ms", 2),
    ("judge_p99_ms", "sync `.reward()` of a row the judge decides, p99", " ms", 2),
)
COUNTS = ("sampled", "judged", "over_budget", "failed")
Run = dict[str, float]


def audit_rows(n: int, offset: int = 0) -> list[dict[str, str]]:
    """``n`` NUMBER rows, alternately one the rule proves (right or wrong) and one it leaves to the judge."""
    rows = []
    for i in range(offset, offset + n):
        answer = str(i % 97)
        if i % 2 == 0:
            stated = answer if i % 4 == 0 else str(i % 97 + 1)  # the rule proves it right, or wrong
            completion = f"{i} apples are counted in all.\n\nThe answer is {stated}."
        else:
            completion = f"Maybe {answer}, maybe {i % 97 + 1}: hard to say."  # a hedge: the judge's
        rows.append(
            {
                "prompt": f"Question {i}: how many?",
                "completion": completion,
                "answer": answer,
                "answer_type": "NUMBER",
            }
        )
    return rows


def _one_run(url: str, n: int, shadow_rate: float, offset: int) -> Run:
    config: dict[str, object] = {
        "judge_url": url,
        "strategy": "cascade",
        "use_cache": False,
        "cache_dir": tempfile.mkdtemp(prefix="bench-shadow-"),
        "max_batch_size": 64,
        "batch_wait": 0.0,
        "audit": {"shadow_rate": shadow_rate, "max_calls_per_minute": 1_000_000},
    }
    rows = audit_rows(n, offset)
    rule_rows = [r for k, r in enumerate(rows) if k % 2 == 0]
    judge_rows = [r for k, r in enumerate(rows) if k % 2 == 1]
    rs = JudgeRewardSystem(config)
    try:
        rs.reward_batch(audit_rows(8, offset=-1000))  # connect; discover the model and its labels' tokens
        started = time.perf_counter()
        results = rs.reward_batch(rows)
        batch_rate = n / (time.perf_counter() - started)
        rule_lat = latencies(lambda i: rs.reward(**rule_rows[i % len(rule_rows)]), LATENCY_CALLS)
        judge_lat = latencies(lambda i: rs.reward(**judge_rows[i % len(judge_rows)]), LATENCY_CALLS)
        _quiet_until_audited(rs)
    finally:
        rs.close()  # cancels the audit's judgments still waiting
    audit = rs.get_metrics()["shadow_audit"]
    sources = [r["source"] for r in results]
    return {
        "batch_rate": batch_rate,
        "rule_p50_ms": statistics.median(rule_lat) * 1e3,
        "rule_p99_ms": percentile(rule_lat, 99) * 1e3,
        "judge_p50_ms": statistics.median(judge_lat) * 1e3,
        "judge_p99_ms": percentile(judge_lat, 99) * 1e3,
        "rule_rows": sources.count("rule"),
        "judge_rows": sources.count("judge"),
        "sampled": float(audit["sampled"]),
        "judged": float(audit["judged"]),
        "over_budget": float(audit["over_budget"]),
        "failed": float(audit["failed"]),
    }


def _quiet_until_audited(rs: JudgeRewardSystem) -> None:
    """No rewards for a while, as a trainer generates between batches: the audit's deferred
    judgments run then (bounded by ``DRAIN_S``, a bound for a hang)."""
    deadline = time.monotonic() + DRAIN_S
    while time.monotonic() < deadline:
        audit = rs.get_metrics()["shadow_audit"]
        if audit["sent"] == audit["judged"] + audit["failed"]:
            return
        time.sleep(0.05)


def shadow_audit_cost(n: int, repeats: int) -> tuple[list[Run], list[Run]]:
    """(runs with the audit off, runs with ``shadow_rate: 1.0``), alternated against one fake judge."""
    off, on = [], []
    with fake_judge_process() as url:
        for i in range(repeats):
            off.append(_one_run(url, n, 0.0, offset=2 * i * n))
            on.append(_one_run(url, n, 1.0, offset=(2 * i + 1) * n))
    return off, on


def _cell(values: list[float], unit: str, digits: int) -> str:
    median = statistics.median(values)
    return f"{median:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def section(off: list[Run], on: list[Run], n: int, command: str, machine: str) -> str:
    """The BENCHMARKS.md section for these runs."""
    rows = []
    for key, name, unit, digits in MEASURES:
        a, b = [r[key] for r in off], [r[key] for r in on]
        ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) else float("nan")
        rows.append(f"| {name} | {_cell(a, unit, digits)} | {_cell(b, unit, digits)} | {ratio:.2f} |")
    counts = {side: {key: sum(r[key] for r in runs) for key in ("rule_rows", "judge_rows", *COUNTS)}
              for side, runs in (("off", off), ("on", on))}  # fmt: skip
    audited = (
        f"Over the runs with the audit on: {counts['on']['sampled']:,.0f} rule-decided rewards sampled, "
        f"{counts['on']['judged']:,.0f} judged in the background, {counts['on']['over_budget']:,.0f} dropped "
        f"over the budget or past the backlog (at most {MAX_PENDING} rows wait: the audit judges one row "
        "at a time, once no reward has run for 50 ms, and a burst of rewards offers rule rows faster), "
        f"{counts['on']['failed']:,.0f} failed; off: {counts['off']['sampled']:,.0f} sampled. "
        f"Each `reward_batch` held {counts['on']['rule_rows'] / len(on):,.0f} rows the rule decided and "
        f"{counts['on']['judge_rows'] / len(on):,.0f} the judge did."
    )
    return "\n".join(
        [
            START,
            f"## (q) The shadow audit's added latency per reward ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
            "",
            f"`{command}`: a reward system under `strategy: cascade` with `audit.shadow_rate` 0 (off) and 1.0 "
            f"(every row the rule decides also judged in the background, `max_calls_per_minute` 1,000,000), "
            f"alternated {len(off)} times against the loopback fake judge in its own process (it answers at "
            f"once), no cache; {n} rows per `reward_batch`, {LATENCY_CALLS} sync calls per latency, then no "
            f"reward until the audit has judged the rows it holds (a trainer generating). {machine}. "
            "Medians, (min-max) over the runs; the ratio is on / off.",
            "",
            "| measure | audit off | `shadow_rate: 1.0` | ratio |",
            "|---|---|---|---|",
            *rows,
            "",
            audited,
            END,
        ]
    )
