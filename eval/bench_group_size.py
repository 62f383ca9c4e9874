"""``python -m eval.bench_group_size``: one large group through ``reward_group``, and a single
reward asked while it runs (issue 33).

The loopback fake judge runs in its own process, slow and busy like a loaded server (``--latency``
seconds a call, at most ``--concurrency`` calls served at once). For each group size a fresh
process builds one reward system (``group: {mode: pairwise}``, its default schedule; no verdict
cache; ``reward_timeout`` from ``--reward-timeout``; ``--max-members`` raises the size limit and
the budget with it), warms it up with one reward, then scores a
group of that many completions of one question while, half a second in, one single ``reward``
is asked on the same reward system from another thread. Each row: the members, the items the
fake judged for the group (its comparisons, and pointwise judgments), the group's seconds, its
members by source and by reason (``pairwise_subgroup``: more than ``group.max_members``, compared
in sub-groups), the single reward's seconds and source, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

import httpx

from adapter import JudgeRewardSystem
from eval.bench_long_batch import fake_judge_process

__all__ = ["Row", "group_items", "main", "one_group"]

QUESTION = "What is 6*7?"
SINGLE_DELAY_S = 0.5


class Row(TypedDict, total=False):
    """One group size: the group's cost and sources, the single reward's, the peak memory."""

    members: int
    judged: int
    group_s: float
    group_sources: dict[str, int]
    group_reasons: dict[str, int]
    single_s: float
    single_source: str
    peak_rss_mb: float


def group_items(n: int) -> list[dict[str, str]]:
    """``n`` completions of one NUMBER question, one in five right."""
    return [
        {"prompt": QUESTION, "completion": f"Step {k}: the answer is {42 + k % 5}.", "answer": "42"}
        for k in range(n)
    ]


def _fake_items(url: str) -> int:
    return int(httpx.get(url + "/fake/stats", timeout=10).json()["items"])


def one_group(url: str, members: int, reward_timeout: float, group: dict[str, object]) -> Row:
    """One group of ``members`` and a concurrent single reward on one reward system (``group``: its
    ``group:`` block): what each cost and where its rewards came from."""
    config = {"judge_url": url, "use_cache": False, "reward_timeout": reward_timeout, "group": group}
    row: Row = {"members": members}
    with JudgeRewardSystem(config) as rs:
        rs.reward("Warm-up: 1+1?", "2", "2")  # model discovery, connections
        before = _fake_items(url)

        def run_group() -> None:
            started = time.monotonic()
            results = rs.reward_group(group_items(members))
            row["group_s"] = time.monotonic() - started
            row["group_sources"] = dict(Counter(str(r["source"]) for r in results))
            row["group_reasons"] = dict(Counter(str(r["reason"]) for r in results))

        runner = threading.Thread(target=run_group)
        runner.start()
        time.sleep(SINGLE_DELAY_S)
        started = time.monotonic()
        single = rs.reward(QUESTION, "The answer is 42.", "42")
        row["single_s"] = time.monotonic() - started
        row["single_source"] = single["source"]
        runner.join()
        row["judged"] = _fake_items(url) - before - 1
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def _table(rows: Sequence[Row], reward_timeout: float) -> str:
    lines = [
        f"| members | judged for the group | group seconds | group sources | single reward (timeout "
        f"{reward_timeout:g} s) | peak RSS |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        sources = ", ".join(f"{k} {v}" for k, v in sorted(r["group_sources"].items()))
        if any(reason.endswith("_subgroup") for reason in r["group_reasons"]):
            sources += " (in sub-groups)"
        lines.append(
            f"| {r['members']} | {r['judged']:,} | {r['group_s']:.1f} | {sources} | "
            f"{r['single_s']:.1f} s, {r['single_source']} | {r['peak_rss_mb']:.0f} MB |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the sizes, one process each, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--members", default="16,64,200,250", help="group sizes, comma-separated")
    parser.add_argument("--latency", type=float, default=0.05, help="the fake's seconds per call")
    parser.add_argument("--concurrency", type=int, default=4, help="calls the fake serves at once")
    parser.add_argument("--reward-timeout", type=float, default=10.0)
    parser.add_argument("--max-members", type=int, help="group.max_members (max_comparisons: twice it)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    group: dict[str, object] = {"mode": "pairwise"}
    if args.max_members:
        group.update(max_members=args.max_members, max_comparisons=2 * args.max_members)
    if args.one is not None:
        print(json.dumps(one_group(args.url, args.one, args.reward_timeout, group)))
        return 0
    plan = json.dumps({"latency_s": args.latency, "max_concurrency": args.concurrency})
    rows: list[Row] = []
    with fake_judge_process(plan) as url:
        for n in (int(s) for s in args.members.split(",")):
            command = [sys.executable, "-m", "eval.bench_group_size", "--one", str(n), "--url", url,
                       "--reward-timeout", str(args.reward_timeout)]  # fmt: skip
            command += ["--max-members", str(args.max_members)] if args.max_members else []
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr)
    print(_table(rows, args.reward_timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
