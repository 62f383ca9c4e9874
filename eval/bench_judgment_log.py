"""``judge-bench --judgment-log``: what the judgment log costs at rate 1.0, side by side.

(c), the client overhead against a zero-work loopback judge (``eval.bench_overhead``), runs
``repeats`` times without the log and with ``judgment_log_path`` set (sample rate 1.0, every
reward a line), alternating so that this shared machine's drift hits both alike. The section
shows each measure's median and spread, the ratio, and the log's own counts: lines written,
dropped because the writer was behind, and lost to write errors. It is written into
``docs/BENCHMARKS.md`` between its markers (the rest is kept).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from eval.bench_overhead import overhead

__all__ = ["END", "START", "judgment_log_cost", "section"]

START = "<!-- judge-bench --judgment-log: start -->"
END = "<!-- judge-bench --judgment-log: end -->"
# (key, what it measures, unit, digits); higher is better for the rates, lower for the rest.
MEASURES = (
    ("miss_rate", "`reward_batch` judgments/s, cache miss (judge path)", "", 0),
    ("hit_batch_rate", "`reward_batch` judgments/s, cache hit", "", 0),
    ("hit_p50_us", "sync `.reward()` cache hit p50", " µs", 0),
    ("hit_p99_us", "sync `.reward()` cache hit p99", " µs", 0),
    ("added_p50_ms", "latency added by the adapter to one sync call, p50", " ms", 2),
    ("added_p99_ms", "latency added by the adapter to one sync call, p99", " ms", 2),
)
Run = dict[str, float]


def judgment_log_cost(n: int, repeats: int, folder: Path | None = None) -> tuple[list[Run], list[Run]]:
    """(runs without the log, runs with it at rate 1.0), alternated; the logs go to ``folder``."""
    root = folder or Path(tempfile.mkdtemp(prefix="bench-judgment-log-"))
    without, with_log = [], []
    for i in range(repeats):
        without.append(overhead(n, 0))
        log = {
            "judgment_log_path": str(root / f"run-{i}" / "judgments.jsonl"),
            "judgment_log_sample_rate": 1.0,
        }
        with_log.append(overhead(n, 0, log))
    return without, with_log


def _cell(values: list[float], unit: str, digits: int) -> str:
    median = statistics.median(values)
    return f"{median:.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def section(without: list[Run], with_log: list[Run], n: int) -> str:
    """The BENCHMARKS.md section for these runs."""
    rows = []
    for key, name, unit, digits in MEASURES:
        a, b = [r[key] for r in without], [r[key] for r in with_log]
        ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) else float("nan")
        rows.append(f"| {name} | {_cell(a, unit, digits)} | {_cell(b, unit, digits)} | {ratio:.2f} |")
    logged = sum(r["log_logged"] for r in with_log)
    dropped = sum(r["log_dropped"] for r in with_log)
    errors = sum(r["log_errors"] for r in with_log)
    return "\n".join(
        [
            START,
            f"## (j) The judgment log's cost at sample rate 1.0 ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
            "",
            f"`judge-bench --judgment-log`: (c) {len(without)} times without and {len(with_log)} times with "
            f"`judgment_log_path` (rate 1.0, a file in a temporary folder), alternating; {n} items per run. Medians, "
            "(min-max) over the runs; the ratio is with / without.",
            "",
            "| measure | without the log | with the log | ratio |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Lines written {logged:,.0f}, dropped (writer behind) {dropped:,.0f}, lost to write errors "
            f"{errors:,.0f}, over all runs with the log.",
            "",
            END,
        ]
    )
