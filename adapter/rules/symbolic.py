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

sympy and math-verify (0.3 s to import) are imported on the first check, in the caller's thread
before the time bound starts (``adapter.rules.sympy_checks``): importing the reward costs
neither (docs/BENCHMARKS.md, "Import time").
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["SymbolicTimeout", "TooCostly", "math_differs", "math_equal", "run_bounded"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_EXPRESSION_CHARS = 2000
REAP_INTERVAL_S = 0.05


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


def math_equal(gold: str, pred: str, timeout_s: float) -> bool:
    """Are ``gold`` and ``pred`` mathematically equivalent? Raises ``SymbolicTimeout`` or ``TooCostly``."""
    if len(gold) > MAX_EXPRESSION_CHARS or len(pred) > MAX_EXPRESSION_CHARS:
        return False
    # Imported on first use, in the caller's thread: an asynchronous stop landing inside an
    # import (under run_bounded) would leave a module half built.
    from adapter.rules.sympy_checks import TOO_COSTLY, equal

    verdict = run_bounded(lambda: equal(gold, pred), timeout_s)
    if verdict is None:
        raise TooCostly(TOO_COSTLY)
    return verdict


def math_differs(gold: str, pred: str, timeout_s: float) -> bool:
    """A proof that ``gold`` and ``pred`` differ: both are expressions (no relation, set or unknown
    function) with different values at an exact rational point. False means no proof, not equal.
    Raises ``SymbolicTimeout``."""
    if len(gold) > MAX_EXPRESSION_CHARS or len(pred) > MAX_EXPRESSION_CHARS:
        return False
    from adapter.rules.sympy_checks import differs  # on first use, as in math_equal

    return run_bounded(lambda: differs(gold, pred), timeout_s)
