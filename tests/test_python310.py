"""Python 3.10 is promised: code that catches a timeout must catch both of its classes there.

``asyncio.wait_for`` raises ``asyncio.TimeoutError``, which only Python 3.11 made the builtin
``TimeoutError``; on 3.10 an ``except TimeoutError`` lets it through (into a trainer). Every
handler in async code that names ``TimeoutError`` must name ``asyncio.TimeoutError`` too (sync
code catching a library's builtin ``TimeoutError``, e.g. ``regex``'s, is fine).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("adapter", "judge_vllm", "judge_prompts", "eval")


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return {ast.unparse(part) for part in parts}


def _timeout_handlers_missing_asyncio(source: str) -> list[int]:
    async_code = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.AsyncFunctionDef)]
    return sorted(
        {
            node.lineno
            for function in async_code
            for node in ast.walk(function)
            if isinstance(node, ast.ExceptHandler)
            and "TimeoutError" in _names(node.type)
            and "asyncio.TimeoutError" not in _names(node.type)
        }
    )


def test_every_timeout_handler_catches_asyncio_timeouts_too():
    missing = {
        str(path.relative_to(REPO)): lines
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if (lines := _timeout_handlers_missing_asyncio(path.read_text(encoding="utf-8")))
    }
    assert not missing, f"except TimeoutError without asyncio.TimeoutError (lost on Python 3.10): {missing}"


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("async def f():\n    try:\n        pass\n    except TimeoutError:\n        pass\n", [4]),
        ("async def f():\n    try:\n        pass\n    except (ValueError, TimeoutError):\n        pass\n", [4]),
        ("async def f():\n    try:\n        pass\n    except (TimeoutError, asyncio.TimeoutError):\n        pass\n", []),
        ("async def f():\n    try:\n        pass\n    except concurrent.futures.TimeoutError:\n        pass\n", []),
        ("def f():\n    try:\n        pass\n    except TimeoutError:\n        pass\n", []),
    ],
    ids=["bare", "in-a-tuple", "both", "futures", "sync-code"],
)
def test_the_check_finds_what_it_should(source, flagged):
    assert _timeout_handlers_missing_asyncio(source) == flagged
