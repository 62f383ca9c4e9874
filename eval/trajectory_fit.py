"""Prompt tokens per agent trajectory, before and after fitting it to the judge (docs/trajectories.md).

    python -m eval.trajectory_fit --data eval/data/trajectories.jsonl --tokenizer models/qwen2.5-coder-1.5b
    python -m eval.trajectory_fit --data eval/data/trajectories.jsonl --judge-url http://localhost:8888

For each row with a trajectory: its steps, the judge prompt's tokens with every step shown
("before"), and with the steps the judge is shown ("after": fitted to ``max_completion_chars``,
then to the judge's context as the client fits it, ``judge_vllm.context.fit_trace``), the steps
shown, and whether it fits. Tokens are counted by a local tokenizer (``--tokenizer``, with
``--max-model-len``) or the judge server's ``/tokenize`` (``--judge-url``, its own context).
The profile and budgets come from ``--config`` (default: the built-in defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TypedDict

import httpx

from adapter.config import RewardConfig
from eval.dataset import load_rows
from judge_prompts import JudgePrompt
from judge_vllm.client import api_root
from judge_vllm.context import fit_trace
from judge_vllm.errors import ContextOverflowError
from judge_vllm.profiles import JudgeProfile
from judge_vllm.schemas import JudgeRequest

__all__ = ["FitRow", "fit_rows", "main"]

# "Every step shown": a budget no trajectory's characters reach.
UNFITTED_CHARS = 10**12
NONCE = "measured"  # one nonce for every rendering: the counts differ by what is shown, not by tags
DEFAULT_MAX_MODEL_LEN = 4096
TOKENIZE_TIMEOUT_S = 30.0

Count = Callable[[JudgePrompt], Awaitable[int | None]]


class FitRow(TypedDict):
    """One trajectory: its steps, its prompt's tokens before and after fitting, the steps shown."""

    id: str
    steps: int
    tokens_before: int
    tokens_after: int | None  # None: it cannot fit the context
    steps_shown: int


def _render(
    profile: JudgeProfile, config: RewardConfig, request: JudgeRequest, chars: int | None
) -> JudgePrompt:
    return profile.render(
        request,
        request.completion,
        max_prompt_chars=config.max_prompt_chars,
        max_completion_chars=config.max_completion_chars,
        nonce=NONCE,
        trace_chars=chars,
    )


async def fit_rows(data: Path, config: RewardConfig, count: Count, max_model_len: int) -> list[FitRow]:
    """The rows of ``data`` that hold a trajectory, measured with ``count`` against ``max_model_len``."""
    profile = config.judge_profile()
    limit = max_model_len - config.generation_max_tokens
    rows: list[FitRow] = []
    for row in load_rows(data).rows:
        if row.trajectory is None:
            continue
        request = JudgeRequest(prompt=row.prompt, completion=row.completion, answer=row.answer,
                               answer_type=row.answer_type, trajectory=row.trajectory)  # fmt: skip
        before = await count(_render(profile, config, request, UNFITTED_CHARS))
        fitted = _render(profile, config, request, None)
        tokens = await count(fitted)
        after: int | None = tokens
        if before is None or tokens is None:
            raise RuntimeError("the tokenizer gave no count")
        if tokens > limit:
            try:
                fitted = await fit_trace(
                    [row.trajectory], config.max_completion_chars, fitted, tokens, limit,
                    partial(_render, profile, config, request), count,
                )  # fmt: skip
                after = await count(fitted)
            except ContextOverflowError:
                after = None
        shown = fitted.user.count("\nStep ")
        rows.append(FitRow(id=row.id, steps=len(row.trajectory.steps), tokens_before=before,
                           tokens_after=after, steps_shown=shown))  # fmt: skip
    return rows


def _local_count(tokenizer_path: str) -> Count:
    from transformers import AutoTokenizer  # the judge model's tokenizer, offline

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)

    async def count(prompt: JudgePrompt) -> int | None:
        turns = [("system", prompt.system), ("user", prompt.user)]
        messages = [{"role": role, "content": text} for role, text in turns if text is not None]
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return len(tokenizer(str(text), add_special_tokens=False)["input_ids"])

    return count


def _server_count(judge_url: str, client: httpx.AsyncClient) -> tuple[Count, Callable[[], Awaitable[int]]]:
    root = api_root(judge_url)

    async def count(prompt: JudgePrompt) -> int | None:
        body = {"messages": prompt.messages(), "add_generation_prompt": True}
        reply = await client.post(f"{root}/tokenize", json=body, timeout=TOKENIZE_TIMEOUT_S)
        reply.raise_for_status()
        return int(reply.json()["count"])

    async def context() -> int:
        reply = await client.get(f"{root}/v1/models", timeout=TOKENIZE_TIMEOUT_S)
        reply.raise_for_status()
        return int(reply.json()["data"][0].get("max_model_len") or DEFAULT_MAX_MODEL_LEN)

    return count, context


def _report(rows: list[FitRow], max_model_len: int) -> str:
    lines = [f"{'id':<24} {'steps':>5} {'shown':>5} {'before':>8} {'after':>7}"]
    for r in rows:
        after = "-" if r["tokens_after"] is None else str(r["tokens_after"])
        lines.append(
            f"{r['id']:<24} {r['steps']:>5} {r['steps_shown']:>5} {r['tokens_before']:>8} {after:>7}"
        )
    before = [r["tokens_before"] for r in rows]
    after_fit = [a for r in rows if (a := r["tokens_after"]) is not None]
    lines.append(
        f"{len(rows)} trajectories, context {max_model_len} tokens: before fitting median {statistics.median(before):.0f}, "
        f"max {max(before)}, {sum(b > max_model_len for b in before)} over the context; after fitting median "
        f"{statistics.median(after_fit):.0f}, max {max(after_fit)}, {len(rows) - len(after_fit)} that cannot fit"
    )
    return "\n".join(lines)


async def _run(args: argparse.Namespace) -> str:
    config = RewardConfig.from_any(args.config)
    if args.tokenizer:
        return _report(await fit_rows(args.data, config, _local_count(args.tokenizer), args.max_model_len),
                       args.max_model_len)  # fmt: skip
    async with httpx.AsyncClient() as client:
        count, context = _server_count(args.judge_url, client)
        max_model_len = args.max_model_len or await context()
        return _report(await fit_rows(args.data, config, count, max_model_len), max_model_len)


def main(argv: list[str] | None = None) -> None:
    """Print the rows and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="rows with trajectories (judge-eval's format)"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--tokenizer", help="the judge model's tokenizer (a folder or hub id), counted locally"
    )
    source.add_argument("--judge-url", help="a judge server: its /tokenize counts, its context is the limit")
    parser.add_argument(
        "--max-model-len",
        type=int,
        default=None,
        help=f"the judge's context (default: the server's, else {DEFAULT_MAX_MODEL_LEN})",
    )
    parser.add_argument("--config", default=None, help="reward YAML: profile and budgets (default: built-in)")
    args = parser.parse_args(argv)
    if args.tokenizer and args.max_model_len is None:
        args.max_model_len = DEFAULT_MAX_MODEL_LEN
    print(asyncio.run(_run(args)))


if __name__ == "__main__":
    main()
