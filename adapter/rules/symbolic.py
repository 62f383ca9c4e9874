"""Symbolic equivalence with math-verify, under a time bound that works in any thread.

math-verify's own timeout uses ``signal.alarm``, which only works in the main thread (in a
worker thread it raises, and trainers have silently zeroed every reward that way). We turn
it off and bound each check ourselves: the work runs in a fresh daemon thread; on timeout we
raise an exception inside that thread (sympy is pure Python, so it stops at the next
bytecode) and return a defined result.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

__all__ = ["SymbolicTimeout", "completion_matches", "math_equal", "run_bounded"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_EXPRESSION_CHARS = 2000
_CONFIGS = (LatexExtractionConfig(), ExprExtractionConfig())


class _OwnTimeoutNotice(logging.Filter):
    """Drop math-verify's "timeout is disabled" warning: run_bounded is the timeout."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutNotice())


class SymbolicTimeout(Exception):
    """A symbolic check ran past its time bound."""


class _Stop(BaseException):
    """Raised inside a runaway worker to stop it (BaseException: sympy's handlers won't eat it)."""


def run_bounded(fn: Callable[[], T], timeout_s: float) -> T:
    """Run ``fn`` in a daemon thread; raise ``SymbolicTimeout`` if it takes over ``timeout_s``."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except _Stop:
            pass
        except BaseException as err:  # handed to the caller's thread below
            box["error"] = err

    worker = threading.Thread(target=target, name="rule-symbolic", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        ident = worker.ident
        if ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(_Stop))
        raise SymbolicTimeout(f"symbolic check took longer than {timeout_s:g} s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _parse(text: str) -> list[object]:
    wrapped = text if "$" in text or "\\boxed" in text else f"${text}$"
    return parse(wrapped, extraction_config=_CONFIGS, parsing_timeout=None)  # type: ignore[arg-type]


def _equal(gold: str, pred: str) -> bool:
    gold_parsed, pred_parsed = _parse(gold), _parse(pred)
    if not gold_parsed or not pred_parsed:
        return False
    return bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))


def _completion_equal(gold: str, completion: str) -> bool | None:
    pred_parsed = parse(completion, extraction_config=_CONFIGS, parsing_timeout=None)  # type: ignore[arg-type]
    if not pred_parsed:
        return None
    gold_parsed = _parse(gold)
    return bool(gold_parsed) and bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))


def completion_matches(gold: str, completion: str, timeout_s: float) -> bool | None:
    """math-verify's own extraction on a whole completion: True/False, or None if it found nothing."""
    if len(gold) > MAX_EXPRESSION_CHARS:
        return False
    return run_bounded(lambda: _completion_equal(gold, completion[-4 * MAX_EXPRESSION_CHARS :]), timeout_s)


def math_equal(gold: str, pred: str, timeout_s: float) -> bool:
    """Are ``gold`` and ``pred`` mathematically equivalent? Raises ``SymbolicTimeout``."""
    if len(gold) > MAX_EXPRESSION_CHARS or len(pred) > MAX_EXPRESSION_CHARS:
        return False
    return run_bounded(lambda: _equal(gold, pred), timeout_s)
