"""The judge's integrity over a run: four rolling figures, each with a threshold that warns once.

A judge can fail a run without a single error: it starts to pay answer-free text, it prefers
whichever response it is shown first, it stops answering and the rule pays instead, or another
model comes up behind the same URL. Each figure watches one of these, over the last
``audit.window`` events (``get_metrics()["integrity"]``, the ``judge_integrity`` series):

| figure | over the last ``window`` | warns | means |
|---|---|---|---|
| ``canary_false_positive_rate`` | canary probes (``canary_interval``) | above ``canary_alert_rate`` | the judge pays master keys (":", "Let's think step by step."): gameable |
| ``position_agreement`` | pairwise comparisons asked in both orders | below ``audit.min_position_agreement`` | the two orders of a pair picked different winners: position bias |
| ``fallback_rate`` | rewards | above ``audit.max_fallback_rate`` | rewards the judge did not give (sources ``rule_fallback``, ``error``) |
| ``score_drift`` | shadow-audited rows | above ``audit.max_score_drift`` | the judge's mean score moved on rows the rule decided alike: the judge changed |

``score_drift`` compares, apart for the rows the rule paid and those it refused (the policy's
progress moves the mix, not the judge's score on either), the mean judge score of the first
``window`` audited rows (the baseline) with that of the last ``window`` rows after them: the
larger absolute change. A figure is None until it has ``audit.min_rows`` events (drift: until a
baseline is full and ``min_rows`` rows followed it), and may warn from then on; each warns once
per reward system, at warning, saying what it means and what to do. Recording is a lock and a
deque append: cheap enough for every reward.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import Literal

from typing_extensions import TypedDict

from adapter.fork_safety import reset_after_fork
from adapter.settings import AuditSettings

__all__ = [
    "FALLBACK_SOURCES",
    "INTEGRITY_FIGURES",
    "IntegrityCounts",
    "IntegrityFigure",
    "JudgeIntegrity",
    "RollingMean",
    "pair_agreement",
]

logger = logging.getLogger("JudgeReward")

Figure = Literal["canary_false_positive_rate", "position_agreement", "fallback_rate", "score_drift"]
INTEGRITY_FIGURES: tuple[Figure, ...] = (
    "canary_false_positive_rate",
    "position_agreement",
    "fallback_rate",
    "score_drift",
)
FALLBACK_SOURCES = frozenset({"rule_fallback", "error"})
# A rule reward at or above this is "paid" (the drift compares paid rows with paid rows).
PAID_AT = 0.5

_WARNINGS: dict[Figure, str] = {
    "canary_false_positive_rate": (
        "judge integrity: the judge paid {value:.0%} of the last {rows} canary probes (master-key "
        "completions such as ':'; warns above {threshold:.0%}): answer-free text earns rewards, and a "
        "policy will find its neighbours. Keep prechecks on, run judge-vllm audit, and try a stronger "
        "judge model or another profile (said once)"
    ),
    "position_agreement": (
        "judge integrity: only {value:.0%} of the last {rows} pairs compared in both orders got the same "
        "winner both times (warns below {threshold:.0%}): the judge prefers a position, not a response. "
        "Both orders are averaged, so such pairs score as ties and group rewards flatten; use a stronger "
        "judge, or group.mode: pointwise (said once)"
    ),
    "fallback_rate": (
        "judge integrity: {value:.0%} of the last {rows} rewards fell back (rule_fallback or error; warns "
        "above {threshold:.0%}): the judge is down, slow or answering garbage, and those rewards are the "
        "rule's. Read get_metrics()['fallback_reasons'] and the judge server's log (said once)"
    ),
    "score_drift": (
        "judge integrity: the judge's mean score on shadow-audited rows moved by {value:.2f} (warns above "
        "{threshold:.2f}) from the first rows the audit saw to the last {rows}, on rows the rule decided "
        "alike: the judge changed (another model behind the URL, another profile or prompt). Check "
        "get_metrics()['model'] and the judge server, and run judge-vllm audit (said once)"
    ),
}


class IntegrityFigure(TypedDict):
    """One figure: its value (None until it has enough events), the events it is over, its
    threshold, which side of it warns, and whether it has warned."""

    value: float | None
    rows: int
    threshold: float
    warns: Literal["above", "below"]
    warned: bool


class IntegrityCounts(TypedDict):
    """``get_metrics()["integrity"]``: the window, the events a figure needs, and each figure."""

    window: int
    min_rows: int
    canary_false_positive_rate: IntegrityFigure
    position_agreement: IntegrityFigure
    fallback_rate: IntegrityFigure
    score_drift: IntegrityFigure


def pair_agreement(p_first_by_order: dict[tuple[int, int], float]) -> tuple[int, int]:
    """(pairs whose two orders picked the same winner, pairs asked in both orders) from each
    order's P(first shown is better): above 0.5 the first won, below it the second, at 0.5 a tie."""

    def winner(first: int, second: int, p_first: float) -> int | None:
        return first if p_first > 0.5 else second if p_first < 0.5 else None

    agreeing = pairs = 0
    for (i, j), p in p_first_by_order.items():
        if i < j and (j, i) in p_first_by_order:
            pairs += 1
            agreeing += winner(i, j, p) == winner(j, i, p_first_by_order[(j, i)])
    return agreeing, pairs


class RollingMean:
    """The mean of the last ``window`` values, kept with a running sum."""

    def __init__(self, window: int) -> None:
        self.values: deque[float] = deque(maxlen=window)
        self.total = 0.0

    def add(self, value: float) -> None:
        if len(self.values) == self.values.maxlen:
            self.total -= self.values[0]
        self.values.append(value)
        self.total += value

    @property
    def rows(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return self.total / len(self.values) if self.values else None


class _Drift:
    """The judge's scores on rows of one rule verdict: a baseline (the first ``window``), then
    the last ``window`` after it."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.baseline_total = 0.0
        self.baseline_rows = 0
        self.recent = RollingMean(window)

    def add(self, score: float) -> None:
        if self.baseline_rows < self.window:
            self.baseline_rows += 1
            self.baseline_total += score
        else:
            self.recent.add(score)

    def change(self, min_rows: int) -> float | None:
        recent = self.recent.mean
        if self.baseline_rows < self.window or recent is None or self.recent.rows < min_rows:
            return None
        return abs(recent - self.baseline_total / self.baseline_rows)


class JudgeIntegrity:
    """A reward system's integrity figures, fed by its finisher (every reward), its canary probes,
    its group comparisons and its shadow audit."""

    def __init__(self, settings: AuditSettings, canary_alert_rate: float) -> None:
        self.settings = settings
        window = settings.window
        self._thresholds: dict[Figure, float] = {
            "canary_false_positive_rate": canary_alert_rate,
            "position_agreement": settings.min_position_agreement,
            "fallback_rate": settings.max_fallback_rate,
            "score_drift": settings.max_score_drift,
        }
        self._canaries = RollingMean(window)
        self._pairs = RollingMean(window)
        self._fallbacks = RollingMean(window)
        self._drift = {True: _Drift(window), False: _Drift(window)}  # by whether the rule paid
        self._warned: set[Figure] = set()
        self._lock = threading.Lock()
        reset_after_fork(self)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()

    # -- what feeds them -------------------------------------------------------------------

    def record_reward(self, source: str) -> None:
        """One reward returned (every source)."""
        with self._lock:
            self._fallbacks.add(float(source in FALLBACK_SOURCES))
            figure = self._figure("fallback_rate")
        self._maybe_warn("fallback_rate", figure)

    def record_canaries(self, paid: Sequence[bool]) -> None:
        """One round of canary probes: whether the judge paid each."""
        with self._lock:
            for flag in paid:
                self._canaries.add(float(flag))
            figure = self._figure("canary_false_positive_rate")
        self._maybe_warn("canary_false_positive_rate", figure)

    def record_pairs(self, agreeing: int, pairs: int) -> None:
        """A group's pairwise comparisons: ``pairs`` asked in both orders, ``agreeing`` of them
        with the same winner both times."""
        with self._lock:
            for k in range(pairs):
                self._pairs.add(float(k < agreeing))
            figure = self._figure("position_agreement")
        self._maybe_warn("position_agreement", figure)

    def record_shadow(self, rule_reward: float, judge_score: float) -> None:
        """A shadow-audited row: the rule's reward and the judge's score on it."""
        with self._lock:
            self._drift[rule_reward >= PAID_AT].add(judge_score)
            figure = self._figure("score_drift")
        self._maybe_warn("score_drift", figure)

    # -- the figures ---------------------------------------------------------------------

    def _value(self, name: Figure) -> tuple[float | None, int]:
        min_rows = self.settings.min_rows
        if name == "score_drift":
            changes = [c for d in self._drift.values() if (c := d.change(min_rows)) is not None]
            rows = sum(d.recent.rows for d in self._drift.values())
            return (max(changes) if changes else None), rows
        rolling = {
            "canary_false_positive_rate": self._canaries,
            "position_agreement": self._pairs,
            "fallback_rate": self._fallbacks,
        }[name]
        return (rolling.mean if rolling.rows >= min_rows else None), rolling.rows

    def _figure(self, name: Figure) -> IntegrityFigure:
        value, rows = self._value(name)
        return {
            "value": value,
            "rows": rows,
            "threshold": self._thresholds[name],
            "warns": "below" if name == "position_agreement" else "above",
            "warned": name in self._warned,
        }

    def _maybe_warn(self, name: Figure, figure: IntegrityFigure) -> None:
        value, threshold = figure["value"], figure["threshold"]
        if value is None or figure["warned"]:
            return
        crossed = value < threshold if figure["warns"] == "below" else value > threshold
        if not crossed:
            return
        with self._lock:
            if name in self._warned:
                return
            self._warned.add(name)
        logger.warning(_WARNINGS[name].format(value=value, rows=figure["rows"], threshold=threshold))

    def snapshot(self) -> IntegrityCounts:
        """The figures for ``get_metrics()["integrity"]``."""
        with self._lock:
            return {
                "window": self.settings.window,
                "min_rows": self.settings.min_rows,
                "canary_false_positive_rate": self._figure("canary_false_positive_rate"),
                "position_agreement": self._figure("position_agreement"),
                "fallback_rate": self._figure("fallback_rate"),
                "score_drift": self._figure("score_drift"),
            }
