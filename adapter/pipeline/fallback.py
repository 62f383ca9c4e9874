"""The fallback: what answers when the judge did not.

With ``fallback_to_rule`` on (the default), the rule reward, tagged ``rule_fallback`` with
the reason the judge failed (the error's own ``reason``: "Circuit breaker open", "Request
queue full", "Timeout waiting for results", "Invalid judge output", ...); with it off, no
reward (``reward: None``, source ``error``) for trainers that mask failed rows. A fallback
that starts past the reward's timeout (many failing at once, queued behind each other) gets
the rule's unsure reward without grading, so the batch still returns in time. Each
failure is logged at debug; the first of each reason, the 10th, the 100th and every 1,000th at
warning, as a rule fallback or (fallback off) as a judge failure without a reward.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from adapter.observability.repeats import RepeatCounter, is_reported
from adapter.result import Source
from adapter.rules import RuleSettings, grade
from judge_vllm.errors import JudgeError
from judge_vllm.schemas import JudgeRequest

__all__ = ["Fallback", "RuleFallback"]

logger = logging.getLogger("JudgeReward")
# The least a fallback's symbolic check gets, even past the deadline (it then says "timeout").
MIN_RULE_TIME_S = 0.05


@dataclass(frozen=True)
class Fallback:
    """A reward the judge did not give, and why."""

    reward: float | None
    source: Source
    explanation: str
    reason: str
    error: str


class RuleFallback:
    """Decides the reward for a request the judge failed; thread-safe, never raises."""

    def __init__(self, settings: RuleSettings, enabled: bool) -> None:
        self.settings = settings
        self.enabled = enabled
        self._seen = RepeatCounter()

    def decide(self, request: JudgeRequest, err: JudgeError, time_left_s: float | None = None) -> Fallback:
        """The rule reward (or no reward when fallback is off) for ``request``, tagged with why; its
        symbolic checks get at most ``time_left_s`` (what is left of the reward's timeout)."""
        self._log(err)
        if not self.enabled:
            return Fallback(None, "error", f"judge failed: {err}", err.reason, str(err))
        settings = self.settings
        if time_left_s is not None and time_left_s <= 0:  # fallbacks queued behind each other
            explanation = "past the reward's timeout, no time left to grade by rule: the unsure reward"
            return Fallback(
                settings.unsure_reward, "rule_fallback", f"rule fallback ({err.reason}): {explanation}",
                err.reason, str(err),
            )  # fmt: skip
        if time_left_s is not None and time_left_s < settings.symbolic_timeout:
            settings = settings.model_copy(update={"symbolic_timeout": max(time_left_s, MIN_RULE_TIME_S)})
        try:
            graded = grade(request.prompt, request.completion, request.answer, request.answer_type, settings)
            reward, explanation = graded.reward, graded.explanation
        except Exception:  # the rule reward never raises by contract; a trainer must not crash if it does
            logger.exception("rule reward raised; reward 0")
            reward, explanation = 0.0, "rule reward failed"
        return Fallback(
            reward, "rule_fallback", f"rule fallback ({err.reason}): {explanation}", err.reason, str(err)
        )

    def _log(self, err: JudgeError) -> None:
        count = self._seen.add(err.reason)
        what = "rule fallback" if self.enabled else "judge failure (fallback_to_rule off: no reward)"
        if is_reported(count):
            logger.warning("%s #%d for %r: %s", what, count, err.reason, err)
        else:
            logger.debug("%s for %r: %s", what, err.reason, err)
