import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from adapter.rules import RuleSettings, grade
from adapter.rules.symbolic import SymbolicTimeout, run_bounded

SYMBOLIC = [
    ("\\boxed{6+2x}", "2x+6"),  # the reference's form, in another order
    ("\\boxed{2 \\cdot \\sqrt{2}}", "2\\sqrt{2}"),
    ("\\boxed{\\{2, 1\\}}", "\\{1, 2\\}"),
    ("\\boxed{(1, 2]}", "(1, 2)"),
    ("\\boxed{2x+x^2+1}", "x^2+2x+1"),
    ("\\boxed{\\frac{x}{2}}", "x/2"),
    ("\\boxed{x^3}", "x^2"),
    ("Thus x = 2", "2"),
]


def test_time_bound_stops_runaway_work_in_a_worker_thread():
    before = threading.active_count()
    started = time.monotonic()
    with pytest.raises(SymbolicTimeout):
        run_bounded(lambda: sum(i * i for i in range(10**10)), 0.2)
    assert time.monotonic() - started < 2.0
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before  # the runaway thread was stopped, not leaked


def test_errors_inside_the_bound_reach_the_caller():
    with pytest.raises(ZeroDivisionError):
        run_bounded(lambda: 1 / 0, 1.0)


def test_works_outside_the_main_thread():
    with ThreadPoolExecutor(1) as pool:
        verdict = pool.submit(grade, "q", "\\boxed{6+2x}", "2x+6", "MATH_EXPRESSIONS").result()
    assert verdict.reward == 1.0 and verdict.reason == "match"


@pytest.mark.slow
def test_8_threads_x_200_calls_match_single_threaded():
    calls = [SYMBOLIC[i % len(SYMBOLIC)] for i in range(200)]
    single = [grade("Simplify.", c, a, "MATH_EXPRESSIONS").reward for c, a in calls]
    with ThreadPoolExecutor(8) as pool:
        outputs = list(
            pool.map(lambda _: [grade("Simplify.", c, a, "MATH_EXPRESSIONS").reward for c, a in calls], range(8))
        )
    assert all(out == single for out in outputs)
    # a set's members in any order; another interval is the judge's; a prompt that names no letter
    # lets "x = 2" state 2
    assert single[:8] == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]


def test_slow_sympy_work_times_out_with_a_defined_reward_and_no_leaked_thread():
    before = threading.active_count()
    started = time.monotonic()
    tight = RuleSettings(symbolic_timeout=0.05)
    verdict = grade("q", "\\boxed{(x+1)^{300}}", "(x+2)^{300}", "MATH_EXPRESSIONS", tight)
    assert verdict.reward == 0.0 and verdict.reason == "timeout" and "0.05" in verdict.explanation
    assert time.monotonic() - started < 2.0
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before


def test_timeouts_inside_worker_threads_are_defined_rewards():
    tight = RuleSettings(symbolic_timeout=0.05)
    with ThreadPoolExecutor(4) as pool:
        verdicts = list(
            pool.map(
                lambda _: grade("q", "\\boxed{(x+1)^{300}}", "(x+2)^{300}", "MATH_EXPRESSIONS", tight),
                range(8),
            )
        )
    assert {(v.reward, v.reason) for v in verdicts} == {(0.0, "timeout")}


# Each would build a number with 10^10 digits: big-integer arithmetic in C holds the GIL, so
# without the cost bound no time bound stops it and the process freezes.
TOWERS = [
    ("The answer is \\boxed{5}", "10^(10^10)"),
    ("The answer is \\boxed{5}", "{10}^{10^{10}}"),
    ("The answer is \\boxed{5}", "10^{-10^{10}}"),
    ("The answer is \\boxed{5}", "10^{(10^{10})}"),
    ("The answer is \\boxed{10^{10^{10}}}", "5"),
    ("The answer is \\boxed{{10}^{10^{10}}}", "5"),
    ("The answer is $\\boxed{10^{-10^{10}}}$", "5"),
    ("The answer is \\boxed{10^{(10^{10})}}", "5"),
    ("So the result is $10^(10^10)$", "5"),
    ("So the result is $(10^{10})!$", "5"),
    ("The answer is \\boxed{5}", "\\binom{10^{10}}{10^{9}}"),
    ("The answer is \\boxed{5}", "\\prod_{i=1}^{10^{7}} i"),
]
GRADE_EACH = """
import json, sys, time
from adapter.rules import grade
for completion, answer in json.loads(sys.argv[1]):
    for answer_type in ("MATH_EXPRESSIONS", "NUMBER", None):
        started = time.monotonic()
        verdict = grade("q", completion, answer, answer_type)
        print(json.dumps([time.monotonic() - started, verdict.reward, verdict.reason]), flush=True)
"""


def test_power_towers_are_refused_before_sympy_builds_them():
    """In a child process with a hard limit: a regression that builds a tower (hours) fails here on
    the limit instead of freezing the run. No time is asserted per call: on a busy CI machine a
    cold first call (sympy's import) once took 21 s, and the limit is what tells a tower apart."""
    done = subprocess.run(
        [sys.executable, "-c", GRADE_EACH, json.dumps(TOWERS)],
        capture_output=True, text=True, timeout=60 + 10 * len(TOWERS),
    )  # fmt: skip
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == 3 * len(TOWERS), done.stderr[-2000:]
    for _, reward, reason in results:
        assert reward == 0.0 and reason in {"too_costly", "mismatch", "unsure"}
    assert sum(reason == "too_costly" for _, _, reason in results) >= len(TOWERS)


def test_the_same_costly_expression_matches_without_being_built():
    # built, 10^(10^10) would not finish: the suite's per-test timeout stops it
    verdict = grade("q", "\\boxed{10^{10^{10}}}", "10^{10^{10}}", "MATH_EXPRESSIONS")
    assert verdict.reward == 1.0 and verdict.reason == "match"
    assert grade("q", "\\boxed{10^{10^{10}}}", "10^{10^{11}}", "MATH_EXPRESSIONS").reason == "too_costly"


class _SlowFinalizer:
    def __del__(self):
        sum(i for i in range(2_000))  # a stop lands here most of the time, and is swallowed


def _finalizers_forever():
    while True:
        _SlowFinalizer()
        sum(i for i in range(200))  # where a later stop ends the loop


def test_stops_swallowed_in_finalizers_never_reach_the_unraisable_hook(monkeypatch):
    """pytest's own hook broke when a stop landed while it formatted a swallowed one (a CI failure)."""
    reported: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: reported.append(unraisable.exc_type))
    before = threading.active_count()
    with pytest.raises(SymbolicTimeout):
        run_bounded(_finalizers_forever, 0.1)
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before
    assert reported == []
    sys.unraisablehook(SimpleNamespace(exc_type=ValueError))  # type: ignore[arg-type]
    assert reported == [ValueError]  # anything else still reaches the previous hook
