"""The judge's exceptions: one root, one class per failure kind.

    JudgeError
    ├── JudgeConfigError          bad configuration value or file (names the key and the fix)
    ├── JudgeInputError           a request that cannot be judged (bad type, unknown field)
    ├── JudgeUnavailableError     the judge server could not answer (connection, 5xx, timeout)
    │   ├── JudgeTimeoutError     the call exceeded its time budget
    │   ├── CircuitOpenError      the circuit breaker is open: failing fast
    │   └── QueueFullError        the adapter's bounded queue is full
    ├── JudgeRequestError         the server refused the request (4xx): retrying will not help
    │   └── ContextOverflowError  the prompt cannot be cut to fit the judge's context window
    ├── JudgeParseError           the server answered, but not with a valid verdict
    └── JudgeStartupError         the judge failed a reward system's start-up check (names where,
                                  the model and the next step; the error it met is its cause)

Each class says what the fallback needs, so no caller walks an ``isinstance`` chain:
``reason`` (the seed's troubleshooting name, reported with a fallback reward),
``retryable`` (worth another HTTP attempt) and ``server_fault`` (counts against the
judge server in the circuit breaker; a bad input or a full local queue never does).
``JudgeParseError`` is counted and answered by the fallback, never folded into a score.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import ClassVar

from judge_vllm.redaction import scrub

__all__ = [
    "CircuitOpenError",
    "ContextOverflowError",
    "JudgeConfigError",
    "JudgeError",
    "JudgeInputError",
    "JudgeParseError",
    "JudgeReasoningCutError",
    "JudgeRequestError",
    "JudgeStartupError",
    "JudgeTimeoutError",
    "JudgeUnavailableError",
    "QueueFullError",
    "did_you_mean",
]


class JudgeError(Exception):
    """Root of every error this package raises; its text never holds a secret (scrubbed)."""

    reason: ClassVar[str] = "Judge error"
    retryable: ClassVar[bool] = False
    server_fault: ClassVar[bool] = False

    def __init__(self, *args: object) -> None:
        super().__init__(*(scrub(a) if isinstance(a, str) else a for a in args))


class JudgeConfigError(JudgeError, ValueError):
    """A configuration value or file is invalid."""

    reason = "Invalid configuration"


class JudgeInputError(JudgeError, ValueError):
    """A request cannot be judged as given."""

    reason = "Invalid input"


class JudgeUnavailableError(JudgeError):
    """The judge server could not be reached or failed (retryable).

    ``retry_after_s`` is the server's ``Retry-After`` (429/503), when it sent one.
    """

    reason = "Judge unavailable"
    retryable = True
    server_fault = True

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class JudgeTimeoutError(JudgeUnavailableError):
    """Timeout waiting for results: the judge is too slow for the configured timeout."""

    reason = "Timeout waiting for results"


class CircuitOpenError(JudgeUnavailableError):
    """Circuit breaker open: the judge server is likely down; check its health and logs."""

    reason = "Circuit breaker open"
    retryable = False
    server_fault = False  # nothing was sent


class QueueFullError(JudgeUnavailableError):
    """Request queue full: rewards are requested faster than the judge can score them."""

    reason = "Request queue full"
    retryable = False
    server_fault = False  # nothing was sent


class JudgeRequestError(JudgeError):
    """The judge server rejected the request (4xx)."""

    reason = "Judge rejected the request"

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ContextOverflowError(JudgeRequestError):
    """The prompt cannot fit the judge's context, even with the completion cut short."""

    reason = "Prompt exceeds the judge's context"


class JudgeParseError(JudgeError):
    """The judge answered but its output is not a valid verdict."""

    reason = "Invalid judge output"

    def __init__(self, message: str, raw: str | None = None, finish_reason: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.finish_reason = finish_reason


class JudgeReasoningCutError(JudgeParseError):
    """The judge's reply ended inside its reasoning: it never gave a verdict."""

    reason = "Judge reply cut inside its reasoning"


class JudgeStartupError(JudgeError):
    """The judge did not pass the start-up check: no answer, a model it does not serve, or a reply
    that does not fit the profile's output contract (``startup_check``)."""

    reason = "Judge failed the start-up check"


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` (did you mean 'X'?)`` for the known name closest to ``name`` (difflib), or ""."""
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
