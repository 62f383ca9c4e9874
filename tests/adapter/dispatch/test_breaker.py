import logging

from adapter.dispatch.breaker import BreakerState, CircuitBreaker


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_opens_after_threshold_consecutive_failures():
    breaker = CircuitBreaker(3, 10.0, Clock())
    for _ in range(2):
        breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED and breaker.allow()
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.allow()


def test_success_resets_the_count():
    breaker = CircuitBreaker(2, 10.0, Clock())
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    assert breaker.state is BreakerState.CLOSED


def test_half_open_lets_exactly_one_probe_through_then_closes():
    clock = Clock()
    breaker = CircuitBreaker(1, 10.0, clock)
    breaker.record_failure()
    clock.now = 9.9
    assert not breaker.allow()
    clock.now = 10.0
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.allow() and not breaker.allow() and not breaker.allow()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED and breaker.allow()


def test_failed_probe_reopens():
    clock = Clock()
    breaker = CircuitBreaker(1, 10.0, clock)
    breaker.record_failure()
    clock.now = 10.0
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.allow()
    clock.now = 20.0
    assert breaker.allow()


def test_neutral_outcome_frees_the_probe():
    clock = Clock()
    breaker = CircuitBreaker(1, 1.0, clock)
    breaker.record_failure()
    clock.now = 1.0
    assert breaker.allow()
    breaker.record_neutral()
    assert breaker.allow()


def test_state_changes_are_logged_once_each(caplog):
    breaker = CircuitBreaker(2, 10.0, Clock())
    with caplog.at_level(logging.WARNING, logger="JudgeReward"):
        for _ in range(10):
            breaker.record_failure()
    assert len([r for r in caplog.records if "closed -> open" in r.message]) == 1
