"""The probe's report: per class, the share of wrong answers paid and of controls refused, with
Wilson 95% intervals, each against its threshold.

A class over its threshold fails the probe: ``max_paid`` for wrong answers paid (a reward at or
above ``PAID_AT``), ``max_refused`` for controls refused. A point estimate is compared, and the
interval says how little a few rows prove: with 8 rows, none paid still allows up to 32%.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from adapter.preflight.rows import PAID_AT, ProbeRow

__all__ = [
    "Z_95",
    "ClassResult",
    "PreflightReport",
    "Share",
    "build_report",
    "render_report",
    "wilson_interval",
]

Z_95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n`` (0.95 by default); (0, 1) for n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class Share(BaseModel):
    """``count`` of ``n`` rows, as a share with its Wilson 95% interval, and its threshold."""

    model_config = ConfigDict(frozen=True)

    count: int
    n: int
    share: float
    low: float
    high: float
    threshold: float

    @property
    def over(self) -> bool:
        """The share is above its threshold: the class fails."""
        return self.share > self.threshold

    @classmethod
    def of(cls, count: int, n: int, threshold: float) -> Share:
        low, high = wilson_interval(count, n)
        return cls(count=count, n=n, share=count / n, low=low, high=high, threshold=threshold)


class ClassResult(BaseModel):
    """One class: its rows, wrong answers paid and controls refused (None where it has none),
    where its rewards came from, and examples of what failed."""

    model_config = ConfigDict(frozen=True)

    category: str
    rows: int
    wrong_paid: Share | None
    controls_refused: Share | None
    sources: dict[str, int]
    failed_examples: list[str]

    @property
    def over(self) -> bool:
        return any(s is not None and s.over for s in (self.wrong_paid, self.controls_refused))


class PreflightReport(BaseModel):
    """The probe's result: each class, the rewards that fell back (the judge not measured)."""

    model_config = ConfigDict(frozen=True)

    classes: list[ClassResult]
    fell_back: int
    rows: int

    @property
    def failed(self) -> list[ClassResult]:
        return [c for c in self.classes if c.over]


FALLBACK_SOURCES = ("rule_fallback", "error")
EXAMPLES = 2
EXAMPLE_CHARS = 60


def _paid(reward: float | None) -> bool:
    return reward is not None and reward >= PAID_AT


def build_report(
    rows: Sequence[ProbeRow],
    rewards: Sequence[tuple[float | None, str]],
    max_paid: float,
    max_refused: float,
) -> PreflightReport:
    """The report of ``rows`` and their ``(reward, source)``, in order."""
    by_class: dict[str, list[tuple[ProbeRow, float | None, str]]] = defaultdict(list)
    for row, (reward, source) in zip(rows, rewards, strict=True):
        by_class[row.category].append((row, reward, source))
    classes = []
    for category, scored in by_class.items():
        wrong = [(r, reward) for r, reward, _ in scored if not r.deserves_reward]
        controls = [(r, reward) for r, reward, _ in scored if r.deserves_reward]
        paid = [r for r, reward in wrong if _paid(reward)]
        refused = [r for r, reward in controls if not _paid(reward)]
        classes.append(
            ClassResult(
                category=category,
                rows=len(scored),
                wrong_paid=Share.of(len(paid), len(wrong), max_paid) if wrong else None,
                controls_refused=Share.of(len(refused), len(controls), max_refused) if controls else None,
                sources=dict(Counter(source for _, _, source in scored).most_common()),
                failed_examples=[repr(r.completion[:EXAMPLE_CHARS]) for r in (paid + refused)[:EXAMPLES]],
            )
        )
    fell_back = sum(source in FALLBACK_SOURCES for _, source in rewards)
    return PreflightReport(classes=classes, fell_back=fell_back, rows=len(rows))


def _share(share: Share | None) -> tuple[str, str]:
    if share is None:
        return "-", "-"
    return (
        f"{share.count}/{share.n} ({share.share:.0%})",
        f"[{share.low:.0%}, {share.high:.0%}]" + (" OVER" if share.over else ""),
    )


def render_report(report: PreflightReport, max_paid: float, max_refused: float) -> str:
    """The report as a text table, then what failed."""
    header = ("class", "rows", "wrong paid", "95% interval", "controls refused", "95% interval", "sources")
    lines = [header]
    for c in report.classes:
        paid, paid_ci = _share(c.wrong_paid)
        refused, refused_ci = _share(c.controls_refused)
        sources = ", ".join(f"{name} {n}" for name, n in c.sources.items())
        lines.append((c.category, str(c.rows), paid, paid_ci, refused, refused_ci, sources))
    widths = [max(len(line[k]) for line in lines) for k in range(len(header))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    text.append(
        f"thresholds: wrong answers paid <= {max_paid:.0%}, controls refused <= {max_refused:.0%} "
        f"(a reward >= {PAID_AT:g} pays)"
    )
    for c in report.failed:
        what = []
        if c.wrong_paid is not None and c.wrong_paid.over:
            what.append(f"{c.wrong_paid.count} of {c.wrong_paid.n} wrong answers paid")
        if c.controls_refused is not None and c.controls_refused.over:
            what.append(f"{c.controls_refused.count} of {c.controls_refused.n} controls refused")
        text.append(f"FAILED {c.category}: {', '.join(what)}; e.g. {'; '.join(c.failed_examples)}")
    if report.fell_back:
        text.append(
            f"NOT MEASURED: {report.fell_back} of {report.rows} rewards fell back (the judge did not answer "
            "them): check the judge server (judge-vllm health) and run again"
        )
    return "\n".join(text)
