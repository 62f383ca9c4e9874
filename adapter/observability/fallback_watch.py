"""The share of rewards the judge did not give, over a window: a warning when it is too high.

A judge that times out now and then costs a few rule rewards; one that fails most calls turns
a judge run into a rule run without an error, the fallback warnings (``RepeatCounter``: the 1st,
10th, 100th...) thinning out as it goes on. ``FallbackWatch`` keeps the last
``fallback_alert_window`` rewards that asked the judge (sources ``judge``, ``cache``,
``rule_fallback``, ``error``; a pre-check's or the cascade's rule asked nothing) and, while more
than ``fallback_alert_share`` of them fell back, logs a warning at most once a minute naming the
most frequent reason and the setting to change (a timeout: ``reward_timeout`` and
``judge_replicas``). ``get_metrics()["fallback_window"]`` holds the share, the reason and the
warnings so far (Prometheus ``judge_fallback_window_share``, ``judge_fallback_alerts_total``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable

from typing_extensions import TypedDict

from adapter.config import RewardConfig
from adapter.fork_safety import reset_after_fork
from judge_vllm.errors import (
    CircuitOpenError,
    ContextOverflowError,
    JudgeParseError,
    JudgeReasoningCutError,
    JudgeRequestError,
    JudgeTimeoutError,
    JudgeUnavailableError,
    QueueFullError,
)
from judge_vllm.redaction import redact_url

__all__ = [
    "ASKED_JUDGE",
    "FELL_BACK",
    "WARNING_INTERVAL_S",
    "FallbackWatch",
    "FallbackWindow",
    "what_to_change",
]

logger = logging.getLogger("JudgeReward")

ASKED_JUDGE = frozenset({"judge", "cache", "rule_fallback", "error"})
"""The sources of rewards that asked the judge (a cached verdict is the judge's)."""
FELL_BACK = frozenset({"rule_fallback", "error"})
"""The sources of rewards the judge did not give."""
WARNING_INTERVAL_S = 60.0
INVALID_REWARD = "invalid_reward"  # adapter/pipeline/finish.py's reason, a floor above


class FallbackWindow(TypedDict):
    """``get_metrics()["fallback_window"]``: of the last ``rewards`` that asked the judge (at most
    ``window``), the ``share`` the judge did not give (None before the first), their most frequent
    ``reason``, the share above which it warns (``threshold``) and the warnings so far."""

    share: float | None
    rewards: int
    window: int
    threshold: float
    reason: str | None
    alerts: int


def what_to_change(reason: str, config: RewardConfig) -> str:
    """The setting (or the server) to change when most fallbacks have ``reason``."""
    health = f"judge-vllm health --url {redact_url(config.judge_url)}"
    hints = {
        JudgeTimeoutError.reason: (
            f"the judge answers too slowly for reward_timeout ({config.reward_timeout:g} s): raise "
            "reward_timeout, or spread the load over more servers (judge_replicas) or use a faster judge"
        ),
        QueueFullError.reason: (
            "rewards come faster than the judge scores them: raise max_concurrent_requests or "
            "max_queue_size, or add servers (judge_replicas)"
        ),
        CircuitOpenError.reason: (
            f"the judge failed circuit_breaker_threshold calls in a row and is skipped for "
            f"circuit_breaker_cooldown: check the server ({health})"
        ),
        JudgeUnavailableError.reason: f"the judge server does not answer: check it ({health}) and judge_url",
        JudgeRequestError.reason: f"the judge server refuses the requests: check model, api_key and profile ({health})",
        ContextOverflowError.reason: (
            "prompts overflow the judge's context: lower max_prompt_chars or max_completion_chars, or "
            "serve a longer context (judge-vllm serve --max-model-len)"
        ),
        JudgeParseError.reason: (
            "the judge's replies do not fit the profile: check profile and mode, and that the server "
            "runs with structured outputs (judge-vllm serve does)"
        ),
        JudgeReasoningCutError.reason: (
            "the judge's replies end inside its reasoning: raise max_tokens, or turn its thinking off "
            "(chat_template_kwargs)"
        ),
        INVALID_REWARD: "judge rewards are not numbers in [0, 1]: check calibration_file and the backend",
    }
    return hints.get(reason, "see get_metrics()['fallback_reasons'] and the fallback warnings")


class FallbackWatch:
    """The last ``window`` rewards that asked the judge; a warning while more than ``threshold`` of
    them fell back, at most once per ``interval_s`` of ``clock``. Thread-safe."""

    def __init__(
        self,
        config: RewardConfig,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float = WARNING_INTERVAL_S,
    ) -> None:
        self.config = config
        self.window = config.fallback_alert_window
        self.threshold = config.fallback_alert_share
        self._clock = clock
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._recent: deque[str | None] = deque()  # each reward's fallback reason; None: judged
        self._reasons: Counter[str] = Counter()
        self._warned_at: float | None = None
        self.alerts = 0
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()  # a parent thread may have held it at fork

    def record(self, source: str, reason: str | None) -> None:
        """One reward; a warning when the window is full, its share above the threshold and the
        last warning at least ``interval_s`` ago."""
        if source not in ASKED_JUDGE:
            return
        fell_back = (reason or source) if source in FELL_BACK else None
        with self._lock:
            self._recent.append(fell_back)
            if fell_back is not None:
                self._reasons[fell_back] += 1
            if len(self._recent) > self.window:
                gone = self._recent.popleft()
                if gone is not None:
                    self._reasons[gone] -= 1
                    if not self._reasons[gone]:
                        del self._reasons[gone]
            warning = self._warning()
        if warning is not None:
            logger.warning("%s", warning)

    def _warning(self) -> str | None:
        """The warning now due, if any (under the lock)."""
        failed = sum(self._reasons.values())
        if len(self._recent) < self.window or failed <= self.threshold * self.window:
            return None
        now = self._clock()
        if self._warned_at is not None and now - self._warned_at < self._interval_s:
            return None
        self._warned_at = now
        self.alerts += 1
        reason, count = self._reasons.most_common(1)[0]
        return (
            f"the judge did not give {failed} of the last {self.window} rewards that asked it "
            f"({failed / self.window:.0%}, above fallback_alert_share {self.threshold:g}); most "
            f"fell back for {reason!r} ({count}): {what_to_change(reason, self.config)}. Said at "
            f"most once a minute; get_metrics()['fallback_window']"
        )

    def snapshot(self) -> FallbackWindow:
        """The window's share, its most frequent reason and the warnings so far."""
        with self._lock:
            rewards = len(self._recent)
            failed = sum(self._reasons.values())
            top = self._reasons.most_common(1)
            return {
                "share": failed / rewards if rewards else None,
                "rewards": rewards,
                "window": self.window,
                "threshold": self.threshold,
                "reason": top[0][0] if top else None,
                "alerts": self.alerts,
            }
