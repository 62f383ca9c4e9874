"""The rule reward's time per completion: p50, p99 and the slowest, per data file.

    python -m eval.bench_rules eval/data/sample.jsonl eval/data/policy_styles.jsonl [--repeats 3]

Each row's ``grade`` (the proof, the pre-checks of its format gate and the symbolic checks) is
timed alone, in this process, after one warm-up pass over the file (the grammars' parsers are
built on first use; identical statements are read from a cache, so the warm-up is left out of
the figures only once per text). Rows longer than the rule reads are timed like the others.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from adapter.rules import grade

__all__ = ["main", "timings"]


def timings(path: Path, repeats: int) -> list[float]:
    """Seconds per ``grade`` call over ``repeats`` passes of the file's rows."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    calls = [(r["prompt"], r["completion"], r["answer"], r.get("answer_type")) for r in rows]
    for call in calls[:1]:
        grade(*call)
    seconds = []
    for _ in range(repeats):
        for call in calls:
            started = time.perf_counter()
            grade(*call)
            seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    """Print p50, p99 and the slowest call per file, in milliseconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for path in args.files:
        seconds = sorted(timings(path, args.repeats))
        p99 = seconds[min(len(seconds) - 1, int(0.99 * len(seconds)))]
        print(
            f"{path}: {len(seconds)} calls; p50 {statistics.median(seconds) * 1e3:.2f} ms, "
            f"p99 {p99 * 1e3:.2f} ms, slowest {seconds[-1] * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
