"""The ``judge-eval`` and ``judge-bench`` console scripts: a missing extra is one line, not a traceback."""

from __future__ import annotations

import importlib

from judge_vllm.extras import report_missing_extra

__all__ = ["judge_bench", "judge_eval"]


def _run(module: str) -> int:
    try:
        main = importlib.import_module(module).main
    except ModuleNotFoundError as err:
        return report_missing_extra(err)
    return int(main())


def judge_eval() -> int:
    """``judge-eval``: eval.cli (needs judge-vllm[eval])."""
    return _run("eval.cli")


def judge_bench() -> int:
    """``judge-bench``: eval.bench (needs judge-vllm[eval], and vLLM for the server runs)."""
    return _run("eval.bench")
