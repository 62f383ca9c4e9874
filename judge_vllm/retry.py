"""Retry policy for judge calls: pure decisions, composed with tenacity.

Retried: connection errors, timeouts, 408/409/429 and 5xx (``JudgeUnavailableError``).
Never retried: other 4xx (``JudgeRequestError``) and bad output (``JudgeParseError``).
Backoff is 0.5 s * 2^n, capped at 8 s, with jitter, as openai-python does.
"""

from __future__ import annotations

import logging

import openai
from tenacity import AsyncRetrying, before_sleep_log, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

from judge_vllm.errors import (
    JudgeError,
    JudgeParseError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)

__all__ = ["RETRYABLE_STATUS", "classify", "retrying"]

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0


def classify(err: Exception) -> JudgeError:
    """Map an openai/httpx exception to the judge's error tree (retryable or not)."""
    if isinstance(err, JudgeError):
        return err
    if isinstance(err, openai.APITimeoutError):
        return JudgeTimeoutError("timeout waiting for the judge server")
    if isinstance(err, openai.APIConnectionError):
        return JudgeUnavailableError(f"cannot connect to the judge server: {err.__cause__ or err}")
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        if status >= 500 or status in RETRYABLE_STATUS:
            return JudgeUnavailableError(f"judge server error {status}: {_short(err)}")
        return JudgeRequestError(f"judge server rejected the request ({status}): {_short(err)}", status)
    if isinstance(err, openai.APIResponseValidationError):
        return JudgeParseError(f"judge server sent an unexpected response: {err}")
    return JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")


def _short(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        message = body.get("message") or body.get("error", {})
        if isinstance(message, dict):
            message = message.get("message")
        if message:
            return str(message)[:300]
    return str(err)[:300]


def retrying(max_retries: int) -> AsyncRetrying:
    """A tenacity controller: ``max_retries`` retries of ``JudgeUnavailableError`` only."""
    return AsyncRetrying(
        retry=retry_if_exception_type(JudgeUnavailableError),
        stop=stop_after_attempt(max_retries + 1),
        wait=wait_exponential_jitter(
            multiplier=INITIAL_BACKOFF_S, max=MAX_BACKOFF_S, jitter=INITIAL_BACKOFF_S
        ),
        before_sleep=before_sleep_log(logger, logging.DEBUG),
        reraise=True,
    )
