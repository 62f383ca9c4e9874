"""Retry policy for judge calls: pure decisions, composed with tenacity.

Retried: connection errors, timeouts, 408/409/429 and 5xx (errors whose ``retryable`` is
true). Never retried: other 4xx (``JudgeRequestError``) and bad output
(``JudgeParseError``). Backoff is 0.5 s * 2^n, capped at 8 s, with jitter, as
openai-python does; a ``Retry-After`` (429/503) replaces it. Every retry stays inside the
call's time budget: no attempt starts, and no wait begins, that would end past it.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import time
from collections.abc import Mapping

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    before_sleep_log,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
)
from tenacity.wait import wait_base, wait_exponential_jitter

from judge_vllm.errors import (
    JudgeError,
    JudgeParseError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
)
from judge_vllm.redaction import redact_url

__all__ = [
    "RETRYABLE_STATUS",
    "classify",
    "connection_error",
    "retry_after_seconds",
    "retrying",
    "status_error",
]

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
MAX_RETRY_AFTER_S = 60.0


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds a server asked to wait (``retry-after-ms``, ``retry-after`` in seconds or as
    an HTTP date), clamped to [0, 60]; None when absent or unreadable."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            parsed = email.utils.parsedate_tz(value) if divisor == 1.0 else None
            if parsed is None:
                return None
            seconds = email.utils.mktime_tz(parsed) - (time.time() if now is None else now)
        return min(max(seconds, 0.0), MAX_RETRY_AFTER_S) if math.isfinite(seconds) else MAX_RETRY_AFTER_S
    return None


def classify(err: Exception, url: str | None = None) -> JudgeError:
    """Map an openai/httpx exception to the judge's error tree (retryable or not); a connection
    error names ``url`` (the server called, shown without credentials) and how to check it."""
    if isinstance(err, JudgeError):
        return err
    import openai  # where it is used: importing the judge costs no openai (BENCHMARKS.md)

    if isinstance(err, openai.APITimeoutError | httpx.TimeoutException):
        return JudgeTimeoutError("timeout waiting for the judge server")
    if isinstance(err, openai.APIConnectionError):
        return connection_error(err.__cause__ or err, url)
    if isinstance(err, httpx.TransportError):
        return connection_error(repr(err), url)
    if isinstance(err, openai.APIStatusError):
        return status_error(err.status_code, err.response.headers, err.body)
    if isinstance(err, openai.APIResponseValidationError):
        return JudgeParseError(f"judge server sent an unexpected response: {err}")
    return JudgeUnavailableError(f"judge call failed: {type(err).__name__}: {err}")


def connection_error(cause: object, url: str | None = None) -> JudgeUnavailableError:
    """The server at ``url`` could not be reached: the cause, the URL without its credentials and
    the command that checks it (``judge-vllm health``)."""
    if url is None:
        return JudgeUnavailableError(f"cannot connect to the judge server: {cause}")
    shown = redact_url(url)
    return JudgeUnavailableError(
        f"cannot connect to the judge server at {shown}: {cause}; is it running there? "
        f"check: judge-vllm health --url {shown}"
    )


def status_error(status: int, headers: Mapping[str, str], body: object) -> JudgeError:
    """The error for an HTTP error reply: retryable for 408/409/429/5xx (with the server's
    ``Retry-After`` on 429/503), ``JudgeRequestError`` for any other 4xx."""
    message = _message(body)
    if status >= 500 or status in RETRYABLE_STATUS:
        wait = retry_after_seconds(headers) if status in (429, 503) else None
        return JudgeUnavailableError(f"judge server error {status}: {message}", retry_after_s=wait)
    return JudgeRequestError(f"judge server rejected the request ({status}): {message}", status)


def _message(body: object) -> str:
    """The error message of a reply body (vLLM and OpenAI shapes), at most 300 characters."""
    if isinstance(body, bytes | str):
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            return text[:300]
    if isinstance(body, dict):
        message = body.get("message") or body.get("error", {})
        if isinstance(message, dict):
            message = message.get("message")
        if message:
            return str(message)[:300]
    return str(body)[:300]


def _is_retryable(err: BaseException) -> bool:
    return isinstance(err, JudgeError) and err.retryable


class _WaitRetryAfter(wait_base):
    """The server's ``Retry-After`` when it sent one, else exponential backoff with jitter."""

    def __init__(self) -> None:
        self._backoff = wait_exponential_jitter(
            multiplier=INITIAL_BACKOFF_S, max=MAX_BACKOFF_S, jitter=INITIAL_BACKOFF_S
        )

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        err = outcome.exception() if outcome is not None else None
        asked = getattr(err, "retry_after_s", None)
        return float(asked) if asked is not None else self._backoff(retry_state)


def retrying(max_retries: int, budget_s: float) -> AsyncRetrying:
    """A tenacity controller: up to ``max_retries`` retries of retryable errors, each wait and
    attempt starting only while the call is inside its ``budget_s``."""
    return AsyncRetrying(
        retry=retry_if_exception(_is_retryable),
        stop=stop_after_attempt(max_retries + 1) | stop_before_delay(budget_s),
        wait=_WaitRetryAfter(),
        before_sleep=before_sleep_log(logger, logging.DEBUG),
        reraise=True,
    )
