"""The ``judge-eval`` and ``judge-bench`` console scripts: a missing extra is one line, not a traceback."""

from __future__ import annotations

import importlib
import sys

from judge_vllm.extras import missing_extra_message

__all__ = ["judge_bench", "judge_eval"]


def _run(module: str) -> int:
    try:
        main = importlib.import_module(module).main
    except ModuleNotFoundError as err:
        message = missing_extra_message(err)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    return int(main())


def judge_eval() -> int:
    """``judge-eval``: eval.cli (needs judge-vllm[eval])."""
    return _run("eval.cli")


def judge_bench() -> int:
    """``judge-bench``: eval.bench (needs judge-vllm[eval], and vLLM for the server runs)."""
    return _run("eval.bench")
