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
    └── JudgeParseError           the server answered, but not with a valid verdict

Retries apply to ``JudgeUnavailableError`` only; ``JudgeParseError`` is counted and
answered by the fallback, never folded into a score.
"""

from __future__ import annotations

__all__ = [
    "CircuitOpenError",
    "ContextOverflowError",
    "JudgeConfigError",
    "JudgeError",
    "JudgeInputError",
    "JudgeParseError",
    "JudgeRequestError",
    "JudgeTimeoutError",
    "JudgeUnavailableError",
    "QueueFullError",
]


class JudgeError(Exception):
    """Root of every error this package raises."""


class JudgeConfigError(JudgeError, ValueError):
    """A configuration value or file is invalid."""


class JudgeInputError(JudgeError, ValueError):
    """A request cannot be judged as given."""


class JudgeUnavailableError(JudgeError):
    """The judge server could not be reached or failed (retryable)."""


class JudgeTimeoutError(JudgeUnavailableError):
    """Timeout waiting for results: the judge is too slow for the configured timeout."""


class CircuitOpenError(JudgeUnavailableError):
    """Circuit breaker open: the judge server is likely down; check its health and logs."""


class QueueFullError(JudgeUnavailableError):
    """Request queue full: rewards are requested faster than the judge can score them."""


class JudgeRequestError(JudgeError):
    """The judge server rejected the request (4xx)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class ContextOverflowError(JudgeRequestError):
    """The prompt cannot fit the judge's context, even with the completion cut short."""


class JudgeParseError(JudgeError):
    """The judge answered but its output is not a valid verdict."""

    def __init__(self, message: str, raw: str | None = None, finish_reason: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.finish_reason = finish_reason
