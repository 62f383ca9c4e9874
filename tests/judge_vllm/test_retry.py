"""The retry policy: Retry-After within the call's budget, backoff otherwise."""

import asyncio
import email.utils

import pytest

from judge_vllm.errors import JudgeParseError, JudgeRequestError, JudgeUnavailableError
from judge_vllm.retry import MAX_RETRY_AFTER_S, retry_after_seconds, retrying


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "100000"}, MAX_RETRY_AFTER_S),
        ({"retry-after": "soon"}, None),
        ({"retry-after": email.utils.formatdate(1_000_010, usegmt=True)}, 10.0),
    ],
)
def test_retry_after_header_forms(headers, expected):
    assert retry_after_seconds(headers, now=1_000_000) == expected


async def _attempts(errors, max_retries, budget_s):
    """Run a call that raises ``errors`` in turn; return (attempts, seconds slept, final error)."""
    slept: list[float] = []
    controller = retrying(max_retries, budget_s)
    controller.sleep = lambda s: slept.append(s) or asyncio.sleep(0)  # type: ignore[method-assign]
    attempts = 0
    try:
        async for attempt in controller:
            with attempt:
                attempts += 1
                raise errors[min(attempts, len(errors)) - 1]
    except Exception as err:
        return attempts, slept, err
    raise AssertionError("the call never fails")


def test_retry_after_replaces_backoff():
    busy = JudgeUnavailableError("judge server error 429", retry_after_s=3.0)
    attempts, slept, _ = asyncio.run(_attempts([busy, busy], max_retries=1, budget_s=30))
    assert attempts == 2 and slept == [3.0]


def test_a_retry_after_past_the_budget_gives_up_instead_of_waiting():
    busy = JudgeUnavailableError("judge server error 503", retry_after_s=20.0)
    attempts, slept, err = asyncio.run(_attempts([busy], max_retries=3, budget_s=5))
    assert attempts == 1 and slept == [] and err is busy


@pytest.mark.parametrize("error", [JudgeParseError("bad"), JudgeRequestError("no", 400)])
def test_non_retryable_errors_are_not_retried(error):
    attempts, _, err = asyncio.run(_attempts([error], max_retries=3, budget_s=30))
    assert attempts == 1 and err is error
