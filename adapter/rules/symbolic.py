"""Symbolic equivalence with math-verify, under a time bound that works in any thread.

math-verify's own timeout uses ``signal.alarm``, which only works in the main thread (in a
worker thread it raises, and trainers have silently zeroed every reward that way). We turn
it off and bound each check ourselves: the work runs in a fresh daemon thread; on timeout we
raise an exception inside that thread (sympy is pure Python, so it stops at the next
bytecode) and return a defined result.

Big-integer arithmetic is the exception: it runs in C and holds the GIL, so no such bound
stops it. math-verify's parser (latex2sympy) builds powers, products, sums, factorials and
functions unevaluated, so the cost of each parsed side is bounded from its tree
(``adapter.rules.cost``) before ``verify`` evaluates anything; a too costly pair is decided
without evaluation: the same unevaluated expression is a match, anything else is refused
(``TooCostly``).
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import sympy
from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

from adapter.rules.cost import MAX_RESULT_DIGITS, too_costly

__all__ = ["SymbolicTimeout", "TooCostly", "math_differs", "math_equal", "run_bounded"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_EXPRESSION_CHARS = 2000
NUMERIC_REL_TOL = 1e-6
REAP_INTERVAL_S = 0.05
_CONFIGS = (LatexExtractionConfig(), ExprExtractionConfig())
# Exact rational points at which two expressions are evaluated to prove them different.
_PROBE_SHIFTS = (sympy.Rational(7, 13), sympy.Rational(-5, 11))
_PROBE_DIGITS = 40
_PROBE_REL_TOL = sympy.Float("1e-25", _PROBE_DIGITS)


class _OwnTimeoutNotice(logging.Filter):
    """Drop math-verify's "timeout is disabled" warning: run_bounded is the timeout."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutNotice())


class SymbolicTimeout(Exception):
    """A symbolic check ran past its time bound."""


class TooCostly(Exception):
    """Evaluating an expression could build a number too large to bound in time."""


class _Stop(BaseException):
    """Raised inside a runaway worker to stop it (BaseException: sympy's handlers won't eat it)."""


def _raise_stop_in(thread: threading.Thread) -> None:
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Stop))


def _drop_swallowed_stops(
    previous: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], None]:
    """An unraisable-exception hook that ignores ``_Stop`` and hands anything else to ``previous``.

    A ``_Stop`` that lands in a ``__del__`` or weakref callback is swallowed there and reported
    to ``sys.unraisablehook``; the hook would format it while the reaper raises the next one in
    the same thread, breaking the hook (pytest reports that as a failure of whatever test runs)."""

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, _Stop):
            return
        previous(unraisable)

    hook.drops_swallowed_stops = True  # type: ignore[attr-defined]
    return hook


def _install_stop_filter() -> None:
    if not getattr(sys.unraisablehook, "drops_swallowed_stops", False):
        sys.unraisablehook = _drop_swallowed_stops(sys.unraisablehook)


class _Reaper:
    """Re-raises ``_Stop`` in runaway workers until they exit: an asynchronous exception that lands
    in a weakref callback or ``__del__`` is swallowed there, and the work would go on. The reaper
    thread lives only while there are runaways."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runaways: set[threading.Thread] = set()
        self._thread: threading.Thread | None = None

    def add(self, worker: threading.Thread) -> None:
        _install_stop_filter()
        _raise_stop_in(worker)
        with self._lock:
            self._runaways.add(worker)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rule-symbolic-reaper", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(REAP_INTERVAL_S)
            with self._lock:
                self._runaways = {t for t in self._runaways if t.is_alive()}
                if not self._runaways:
                    self._thread = None
                    return
                alive = list(self._runaways)
            for worker in alive:
                logger.debug("rule reward: stopping a runaway symbolic check again")
                _raise_stop_in(worker)


_REAPER = _Reaper()


def run_bounded(fn: Callable[[], T], timeout_s: float) -> T:
    """Run ``fn`` in a daemon thread; raise ``SymbolicTimeout`` if it takes over ``timeout_s``
    (the worker is then stopped by an asynchronous exception; sympy is pure Python)."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            try:
                box["value"] = fn()
            except BaseException as err:  # handed to the caller's thread below
                box["error"] = err
        except _Stop:  # landed after fn returned: nothing left to stop
            pass

    worker = threading.Thread(target=target, name="rule-symbolic", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        _REAPER.add(worker)
        raise SymbolicTimeout(f"symbolic check took longer than {timeout_s:g} s")
    error = box.get("error")
    if isinstance(error, _Stop):
        raise SymbolicTimeout("symbolic check was stopped")
    if error is not None:
        raise error  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _parse(text: str) -> list[object]:
    parsed: list[object] = parse(text, extraction_config=_CONFIGS, parsing_timeout=None)
    return parsed


def _parse_answer(text: str) -> list[object]:
    return _parse(text if "$" in text or "\\boxed" in text else f"${text}$")


def _numbers_agree(gold: object, pred: object) -> bool:
    """False when both are numbers that differ relatively by more than ``NUMERIC_REL_TOL``.
    math-verify rounds to 6 decimals, so 1/2004! and 1/2006! would both be 0 for it."""
    if not (isinstance(gold, sympy.Expr) and isinstance(pred, sympy.Expr)):
        return True
    if not (gold.is_number and pred.is_number):
        return True
    try:  # sympy floats: 1/2004! is far below the smallest machine float
        g, p = gold.evalf(30), pred.evalf(30)
        return bool(abs(g - p) <= NUMERIC_REL_TOL * sympy.Max(abs(g), abs(p)))
    except (TypeError, ValueError, ArithmeticError):
        return True  # an undecidable comparison (nan, zoo): math-verify's verdict stands


def _verified(gold_parsed: list[object], pred_parsed: list[object]) -> bool:
    if not gold_parsed or not pred_parsed:
        return False
    if any(too_costly(parsed) for parsed in (*gold_parsed, *pred_parsed)):
        if gold_parsed[0] == pred_parsed[0]:  # structural: the same expression, not evaluated
            return True
        raise TooCostly(f"refused: evaluating could build a number with over {MAX_RESULT_DIGITS:,} digits")
    if not verify(gold_parsed, pred_parsed, timeout_seconds=None):
        return False
    return _numbers_agree(gold_parsed[0], pred_parsed[0])


def _equal(gold: str, pred: str) -> bool:
    return _verified(_parse_answer(gold), _parse_answer(pred))


def math_equal(gold: str, pred: str, timeout_s: float) -> bool:
    """Are ``gold`` and ``pred`` mathematically equivalent? Raises ``SymbolicTimeout`` or ``TooCostly``."""
    if len(gold) > MAX_EXPRESSION_CHARS or len(pred) > MAX_EXPRESSION_CHARS:
        return False
    return run_bounded(lambda: _equal(gold, pred), timeout_s)


def _value_at(expr: sympy.Expr, point: dict[sympy.Symbol, sympy.Rational]) -> sympy.Expr | None:
    value = expr.subs(point).evalf(_PROBE_DIGITS)
    return value if value.is_number and value.is_finite else None


def _differs(gold: str, pred: str) -> bool:
    gold_parsed, pred_parsed = _parse_answer(gold), _parse_answer(pred)
    if not gold_parsed or not pred_parsed:
        return False
    g, p = gold_parsed[0], pred_parsed[0]
    if not (isinstance(g, sympy.Expr) and isinstance(p, sympy.Expr)) or too_costly(g) or too_costly(p):
        return False
    symbols = sorted(g.free_symbols | p.free_symbols, key=str)
    for shift in _PROBE_SHIFTS:
        point = {symbol: shift + sympy.Rational(i + 1, 3) for i, symbol in enumerate(symbols)}
        g_value, p_value = _value_at(g, point), _value_at(p, point)
        if g_value is None or p_value is None:
            return False
        if abs(g_value - p_value) > _PROBE_REL_TOL * max(1, abs(g_value), abs(p_value)):
            return True
    return False


def math_differs(gold: str, pred: str, timeout_s: float) -> bool:
    """A proof that ``gold`` and ``pred`` differ: both are expressions (no relation, set or unknown
    function) with different values at an exact rational point. False means no proof, not equal.
    Raises ``SymbolicTimeout``."""
    if len(gold) > MAX_EXPRESSION_CHARS or len(pred) > MAX_EXPRESSION_CHARS:
        return False
    return run_bounded(lambda: _differs(gold, pred), timeout_s)
