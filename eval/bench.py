"""``judge-bench``: how fast judge-vllm scores, measured side by side in one run.

(a) adapter -> vLLM CPU server vs a naive HF ``generate`` server (one request at a time),
    verdict and fast mode, same model, prompts and max tokens;
(b) adapter + HTTP vs vLLM's offline engine (``LLM.chat``, one call: the engine's ceiling);
(c) client overhead against a zero-work loopback server (separate process);
(d) vLLM prefix-cache hit rate during (a);
(e) adapter RSS growth over many requests;
(j) with ``--judgment-log``: (c) with and without a judgment log at rate 1.0;
(k) with ``--groups``: each group mode's judge requests, time, tokens and prefix-cache hits per
    GRPO group of 8 and 16 on a running judge (``--judge-url``);
(l) with ``--long-batch``: batches of long completions at a timeout against the fake judge;
(q) with ``--shadow-audit``: the latency the shadow audit adds to a reward (``shadow_rate`` 1.0 vs off).
Results go to ``docs/BENCHMARKS.md``. This machine is noisy: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import httpx

from adapter import JudgeRewardSystem
from eval import bench_groups, bench_judgment_log, bench_long_batch, bench_replicas, bench_shadow_audit
from eval.bench_overhead import overhead, overhead_section
from judge_prompts import render_prompt
from judge_vllm import launcher
from judge_vllm.cli import HelpFormatter, add_judge_url_flag
from judge_vllm.contract import SCALE_LABELS, verdict_schema
from judge_vllm.model_prep import prepare_model
from judge_vllm.settings import JudgeClientConfig

if TYPE_CHECKING:  # vLLM is imported only by the offline benchmark
    from vllm import LLM, SamplingParams
    from vllm.entrypoints.chat_utils import ChatCompletionMessageParam

__all__ = ["build_parser", "main", "mixed_items"]

TEMPLATES = [
    ("NUMBER", "What is {a} + {b}?", "Adding gives {a} + {b} = {s}, so the answer is \\boxed{{{s}}}.", "{s}"),
    ("MATH_EXPRESSIONS", "Expand {a}(x + {b}).", "Distributing: \\boxed{{{a}x + {p}}}.", "{a}x + {p}"),
    ("MULTIPLE_CHOICE", "Which equals {s}? (A) {a} (B) {s} (C) {b}", "Option (B) is {s}. Answer: B", "B"),
    ("TEXT", "Spell the number {a} in digits.", "It is written as {a}.", "{a}"),
]
NONCE = "5eed5eed"


def mixed_items(n: int, offset: int = 0, group: int = 1) -> list[dict[str, str]]:
    """``n`` deterministic items cycling through the four answer types.

    ``group > 1`` shapes them as GRPO batches: ``group`` completions per question, the
    first right and the others wrong by 1, 2, ... in every number they state.
    """
    items = []
    for i in range(offset, offset + n):
        q, k = divmod(i, group)
        answer_type, prompt, completion, answer = TEMPLATES[q % len(TEMPLATES)]
        values = {"a": q + 2, "b": q + 3, "s": 2 * q + 5, "p": (q + 2) * (q + 3)}
        items.append(
            {
                "prompt": prompt.format(**values),
                "completion": completion.format(**{name: v + k for name, v in values.items()}),
                "answer": answer.format(**values),
                "answer_type": answer_type,
            }
        )
    return items


def _messages(
    item: dict[str, str], mode: Mode, nonce: str | None = NONCE
) -> list[ChatCompletionMessageParam]:
    """The judge's messages; ``nonce=None`` draws a fresh one, as the adapter does per request."""
    return [
        *render_prompt(
            item["prompt"], item["completion"], item["answer"], item["answer_type"], mode=mode, nonce=nonce
        ).messages()
    ]


def _repeat(fn: Callable[[], float], repeats: int) -> list[float]:
    return [fn() for _ in range(repeats)]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} (min {min(values):.2f}, max {max(values):.2f}, n={len(values)})"


# -- (a) and (d): adapter to vLLM, and the naive baseline ----------------------------------------


def adapter_rate(url: str, items: list[dict[str, str]], mode: Mode) -> float:
    """Judgments/s through ``reward_batch`` with the cache off (every item hits the judge)."""
    config = {"judge_url": url, "mode": mode, "use_cache": False, "reward_timeout": 900, "fallback_to_rule": False,
              "max_batch_size": 64, "prechecks": False}  # fmt: skip
    with JudgeRewardSystem(config) as rs:
        rs.reward_batch(items[:2])  # connect and discover the model
        started = time.perf_counter()
        results = rs.reward_batch(items)
        elapsed = time.perf_counter() - started
    failed = [r["error"] for r in results if r["source"] != "judge"]
    if failed:
        raise RuntimeError(f"{len(failed)} judge calls failed: {failed[:3]}")
    return len(items) / elapsed


Mode = Literal["verdict", "fast"]
MODES: tuple[Mode, ...] = ("verdict", "fast")
# The dtype the launcher's server runs this fp32 checkpoint in: bf16 where the CPU has bf16
# arithmetic, else fp32. The naive server is measured in both; the target is read at this one.
SERVER_DTYPE = "float32" if launcher.cpu_lacks_native_bf16() else "bfloat16"
OTHER_DTYPE = "bfloat16" if SERVER_DTYPE == "float32" else "float32"


def naive_hf_rate(model_dir: str, items: list[dict[str, str]], mode: Mode, dtype: str) -> tuple[float, float]:
    """The seed's naive judge server: HF ``generate``, one request at a time. (judgments/s, tokens/item)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(os.cpu_count() or 1)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).eval()  # type: ignore[no-untyped-call]
    max_new = JudgeClientConfig(mode=mode).generation_max_tokens
    generated = 0
    started = time.perf_counter()
    with torch.inference_mode():
        for item in items:
            ids = tokenizer.apply_chat_template(
                _messages(item, mode), add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            out = model.generate(  # type: ignore[arg-type]
                **ids, max_new_tokens=max_new, do_sample=False, pad_token_id=tokenizer.eos_token_id
            )
            generated += out.shape[1] - ids["input_ids"].shape[1]  # type: ignore[index,call-overload,union-attr]
    return len(items) / (time.perf_counter() - started), generated / len(items)


def prefix_cache_counters(url: str) -> tuple[float, float]:
    """vLLM's (prefix_cache_hits_total, prefix_cache_queries_total) from /metrics."""
    text = httpx.get(url + "/metrics", timeout=10).text

    def value(name: str) -> float:
        return sum(float(m) for m in re.findall(rf"^vllm:{name}\{{[^}}]*\}} ([0-9.e+]+)$", text, re.M))

    return value("prefix_cache_hits_total"), value("prefix_cache_queries_total")


# -- (b): vLLM's offline engine -------------------------------------------------------------------


def offline_engine_rates(model_dir: str, items: list[dict[str, str]], repeats: int) -> dict[str, list[float]]:
    """Judgments/s of ``vllm.LLM.chat`` on the same prompts and constraints, per mode."""
    from vllm import LLM

    os.environ.update(launcher.server_env())  # the engine gets the server's cores
    llm = LLM(model=model_dir, dtype=SERVER_DTYPE,  # type: ignore[arg-type]
              max_model_len=4096, enable_prefix_caching=True,
              kv_cache_memory_bytes=int(launcher.DEFAULT_CPU_KV_CACHE_BYTES),
              block_size=int(launcher.DEFAULT_CPU_BLOCK_SIZE),
              structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True})  # fmt: skip
    try:
        return _offline_rates(llm, items, repeats)
    finally:
        llm.llm_engine.engine_core.shutdown()  # its worker process would outlive (b) otherwise


def _offline_rates(llm: LLM, items: list[dict[str, str]], repeats: int) -> dict[str, list[float]]:
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    rates: dict[str, list[float]] = {}
    for mode in MODES:
        constraint = (
            StructuredOutputsParams(choice=list(SCALE_LABELS))
            if mode == "fast"
            else StructuredOutputsParams(json=verdict_schema(False, 120))
        )
        params = SamplingParams(
            temperature=0.0,
            max_tokens=JudgeClientConfig(mode=mode).generation_max_tokens,
            structured_outputs=constraint,
        )
        llm.chat([_messages(item, mode) for item in items[:2]], params, use_tqdm=False)

        def run(mode: Mode = mode, params: SamplingParams = params) -> float:
            # Fresh nonces every repeat, as the adapter sends: a fixed nonce would let later
            # repeats hit vLLM's prefix cache on the whole prompt, which no real run does.
            conversations = [_messages(item, mode, nonce=None) for item in items]
            started = time.perf_counter()
            llm.chat(conversations, params, use_tqdm=False)
            return len(conversations) / (time.perf_counter() - started)

        rates[mode] = _repeat(run, repeats)
    return rates


# -- (f): CPU server settings ---------------------------------------------------------------------

TUNINGS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "launcher defaults (every core bound, 32-token blocks)": ({}, ()),
    "vLLM's auto binding (one core kept for its scheduler)": ({launcher.CPU_BIND_ENV: "auto"}, ()),
    "--block-size 128 (vLLM-CPU's default)": ({}, ("--block-size", "128")),
    "--enforce-eager": ({}, ("--enforce-eager",)),
    f"--dtype {OTHER_DTYPE}": ({}, ("--dtype", OTHER_DTYPE)),
}


def tuning_rates(model_dir: str, items: list[dict[str, str]]) -> list[tuple[str, float, dict[Mode, float]]]:
    """(setting, start-up seconds, judgments/s per mode) for each CPU server setting."""
    rows = []
    for name, (env, extra) in TUNINGS.items():
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            options = launcher.ServeOptions(
                model=model_dir, served_model_name="smollm2", port=18890, extra_args=extra
            )
            process = launcher.start(options, log_file=Path(tempfile.mkdtemp()) / "vllm.log")
            try:
                startup = launcher.wait_healthy("http://127.0.0.1:18890", 900, process)
                rates = {mode: adapter_rate("http://127.0.0.1:18890", items, mode) for mode in MODES}
            finally:
                launcher.stop(process.pid)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        rows.append((name, startup, rates))
    return rows


# -- the run -----------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> str:
    """Run every comparison and return the markdown report."""
    items = mixed_items(args.items)
    model_dir = prepare_model("smollm2")
    lines = [
        "# Benchmarks",
        "",
        f"Command: `{' '.join(['judge-bench', *sys.argv[1:]])}`  ",
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, {platform.python_version()}, no GPU; "
        f"judge SmolLM2-135M-Instruct on vLLM CPU ({SERVER_DTYPE}: the CPU "
        f"{'lacks' if SERVER_DTYPE == 'float32' else 'has'} bf16 arithmetic)  ",
        f"Items: {len(items)} mixed (NUMBER, MATH_EXPRESSIONS, MULTIPLE_CHOICE, TEXT); repeats: {args.repeats}",
        "",
        "Absolute times on this shared 2-core machine are noisy: read the ratios, measured side by side.",
        "",
    ]
    own_server = None
    url = args.judge_url
    if url is None:
        options = launcher.ServeOptions(model=model_dir, served_model_name="smollm2", port=18888)
        own_server = launcher.start(options, log_file=Path(tempfile.mkdtemp()) / "vllm.log")
        url = "http://127.0.0.1:18888"
        launcher.wait_healthy(url, 900, own_server)
    grpo = mixed_items(args.items, offset=args.items, group=args.group)
    try:
        hits0, queries0 = prefix_cache_counters(url)
        adapter = {mode: _repeat(functools.partial(adapter_rate, url, items, mode), args.repeats)
                   for mode in MODES}  # fmt: skip
        hits1, queries1 = prefix_cache_counters(url)
        adapter_grpo = {mode: _repeat(functools.partial(adapter_rate, url, grpo, mode), args.repeats)
                        for mode in MODES}  # fmt: skip
    finally:
        if own_server is not None:
            launcher.stop(own_server.pid)
    naive = {
        (mode, dtype): naive_hf_rate(model_dir, items[: args.naive_items], mode, dtype)
        for mode in MODES
        for dtype in (SERVER_DTYPE, OTHER_DTYPE)
    }
    naive_grpo = {
        mode: naive_hf_rate(model_dir, grpo[: args.naive_items], mode, SERVER_DTYPE) for mode in MODES
    }
    lines += [
        "## (a) Adapter -> vLLM CPU server vs naive HF `generate` server",
        "",
        f"| mode | adapter judgments/s | naive {SERVER_DTYPE} judgments/s (tokens/item) | speed-up (same dtype)"
        f" | naive {OTHER_DTYPE} judgments/s | speed-up ({OTHER_DTYPE}) | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, target in zip(MODES, (3, 15), strict=True):
        adapter_median = statistics.median(adapter[mode])
        (same, tokens), (other, _) = naive[(mode, SERVER_DTYPE)], naive[(mode, OTHER_DTYPE)]
        lines.append(
            f"| {mode} | {_spread(adapter[mode])} | {same:.2f} ({tokens:.0f}) | **{adapter_median / same:.1f}x**"
            f" | {other:.2f} | {adapter_median / other:.1f}x | >= {target}x |"
        )
    for mode in MODES:
        adapter_median = statistics.median(adapter_grpo[mode])
        same, tokens = naive_grpo[mode]
        lines.append(
            f"| {mode}, GRPO groups of {args.group} | {_spread(adapter_grpo[mode])} | {same:.2f} ({tokens:.0f})"
            f" | {adapter_median / same:.1f}x | | | |"
        )
    lines += [
        "",
        f"Naive baseline: {args.naive_items} of the items, one at a time, greedy, same prompts and max tokens,"
        " torch threads = all cores; model load not timed. The target is read against the server's dtype."
        f" GRPO rows: {len(grpo)} other items, {args.group} completions per question (one right), as a"
        " GRPO batch arrives; the question and reference answer come before the response in the prompt,"
        " so the prefix cache shares them across the group.",
        "",
        "## (d) vLLM prefix-cache hit rate during (a)",
        "",
        f"{(hits1 - hits0) / max(queries1 - queries0, 1):.1%} of prompt tokens "
        f"({hits1 - hits0:.0f} / {queries1 - queries0:.0f}; target >= 50%)",
        "",
    ]
    if not args.skip_offline:
        offline = offline_engine_rates(model_dir, items, args.repeats)
        lines += [
            "## (b) Adapter + HTTP vs vLLM offline engine (`LLM.chat`, one call)",
            "",
            "| mode | adapter judgments/s | offline engine judgments/s | ratio | target |",
            "|---|---|---|---|---|",
        ]
        for mode in MODES:
            ratio = statistics.median(adapter[mode]) / statistics.median(offline[mode])
            lines.append(
                f"| {mode} | {_spread(adapter[mode])} | {_spread(offline[mode])} | **{ratio:.2f}x** | >= 0.8x |"
            )
        lines.append("")
    lines += overhead_section(overhead(args.overhead_items, args.memory_requests))
    if args.tune:
        lines += [
            "## (f) CPU server settings (each a fresh server; start-up includes cached torch.compile)",
            "",
            "| setting | start-up s | verdict judgments/s | fast judgments/s |",
            "|---|---|---|---|",
        ]
        for name, startup, rates in tuning_rates(model_dir, items):
            lines.append(f"| {name} | {startup:.0f} | {rates['verdict']:.2f} | {rates['fast']:.2f} |")
        lines.append("")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """``judge-bench``'s command line."""
    parser = argparse.ArgumentParser(
        prog="judge-bench", description=__doc__.splitlines()[0], formatter_class=HelpFormatter
    )
    add_judge_url_flag(parser, help="reuse a running judge server (default: start one)")
    parser.add_argument("--items", type=int, default=64, help="mixed items per run of (a), (b) and (d)")
    parser.add_argument(
        "--naive-items", type=int, default=64, help="of those, how many the naive HF baseline of (a) scores"
    )
    parser.add_argument(
        "--group", type=int, default=8, help="completions per question in the GRPO rows of (a)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per measurement (median, min and max reported)"
    )
    parser.add_argument("--overhead-items", type=int, default=10_000, help="rewards in (c) and (j)")
    parser.add_argument("--memory-requests", type=int, default=100_000, help="rewards in (e)")
    parser.add_argument("--skip-offline", action="store_true", help="skip (b), which starts a second engine")
    parser.add_argument("--tune", action="store_true", help="also compare CPU server settings (f)")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("docs/BENCHMARKS.md"),
        help="the report (a run of one part rewrites its section)",
    )
    parser.add_argument(
        "--replicas", action="store_true", help="only (h): judge_replicas scaling over fake replicas"
    )
    parser.add_argument(
        "--real-replicas", help="with --replicas, (i) too: two running vLLM servers, comma-separated URLs"
    )
    parser.add_argument("--judgment-log", action="store_true", help="only (j): (c) with and without the log")
    parser.add_argument(
        "--groups", action="store_true", help="only (k): group modes per GRPO group of 8 and 16 (needs --judge-url)"
    )
    parser.add_argument(
        "--long-batch",
        action="store_true",
        help="only (l): batches of long completions against the fake judge",
    )
    parser.add_argument(
        "--rows", default="256,512,1024", help="with --long-batch: batch sizes, comma-separated"
    )
    parser.add_argument("--kb", type=float, default=15.0, help="with --long-batch: KB per completion")
    parser.add_argument(
        "--shadow-audit",
        action="store_true",
        help="only (q): rewards with the shadow audit off and at shadow_rate 1.0, against the fake judge",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="with --long-batch: the reward timeout (s)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judge-bench``."""
    args = build_parser().parse_args(argv)
    if args.replicas:
        return _replicas(args)
    if args.judgment_log:
        return _judgment_log(args)
    if args.groups:
        return _groups(args)
    if args.long_batch:
        return _long_batch(args, argv)
    if args.shadow_audit:
        return _shadow_audit(args, argv)
    report = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    print(report)
    return 0


def _replicas(args: argparse.Namespace) -> int:
    # A slow judge (0.2 s a request, 4 at once: 20 judgments/s a replica) keeps the client and the
    # fakes' own CPU far below what 8 replicas need on a 2-core machine: what is measured is routing.
    latency_s, concurrency = 0.2, 4
    rates = bench_replicas.replica_scaling(latency_s=latency_s, concurrency=concurrency, per_replica=200)
    urls = [u.strip() for u in args.real_replicas.split(",")] if args.real_replicas else None
    prefix = bench_replicas.prefix_cache_affinity(urls) if urls else None
    text = bench_replicas.section(rates, latency_s, concurrency, prefix, bench_replicas.slow_replica())
    bench_replicas.write_section(args.out, text)
    print(text)
    return 0


def _judgment_log(args: argparse.Namespace) -> int:
    without, with_log = bench_judgment_log.judgment_log_cost(args.overhead_items, args.repeats)
    text = bench_judgment_log.section(without, with_log, args.overhead_items)
    bench_replicas.write_section(args.out, text, bench_judgment_log.START, bench_judgment_log.END)
    print(text)
    return 0


def _groups(args: argparse.Namespace) -> int:
    if not args.judge_url:
        print("judge-bench --groups measures a running judge: give --judge-url", file=sys.stderr)
        return 2
    model = httpx.get(args.judge_url + "/v1/models", timeout=10).json()["data"][0]["id"]
    costs = bench_groups.group_costs(args.judge_url, (8, 16), lambda n, q: mixed_items(n, offset=q * n, group=n))
    machine = f"{platform.machine()}, {os.cpu_count()} CPU cores, no GPU"
    text = bench_groups.section(costs, model, machine)
    bench_replicas.write_section(args.out, text, bench_groups.START, bench_groups.END)
    print(text)
    return 0


def _long_batch(args: argparse.Namespace, argv: list[str] | None) -> int:
    sizes = [int(n) for n in args.rows.split(",")]
    runs, stages = bench_long_batch.long_batch(sizes, args.kb, args.timeout, args.repeats)
    command = " ".join(["judge-bench", *(sys.argv[1:] if argv is None else argv)])
    text = bench_long_batch.section(runs, stages, args.kb, args.timeout, command)
    bench_replicas.write_section(args.out, text, bench_long_batch.START, bench_long_batch.END)
    print(text)
    return 0


def _shadow_audit(args: argparse.Namespace, argv: list[str] | None) -> int:
    n = min(args.overhead_items, 2000)
    off, on = bench_shadow_audit.shadow_audit_cost(n, args.repeats)
    command = " ".join(["judge-bench", *(sys.argv[1:] if argv is None else argv)])
    machine = f"{platform.machine()}, {os.cpu_count()} CPU cores, no GPU"
    text = bench_shadow_audit.section(off, on, n, command, machine)
    bench_replicas.write_section(args.out, text, bench_shadow_audit.START, bench_shadow_audit.END)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
